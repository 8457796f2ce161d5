//! Sizing a prompt in the server's own tokens: the length (in whatever units the caller cuts
//! its text in) whose count is closest to a target.
//!
//! The caller counts: `/tokenize` with the chat messages (`vernier_openai::Client::tokenize_chat`), or
//! a `max_tokens: 1` request reading `usage.prompt_tokens`. The search counts the fixed part
//! (zero units) and a first guess, then interpolates between the nearest counts below and above
//! the target, with bisection every other step as a fallback, so long prompts need few counts.

use std::future::Future;

/// The length found and what the server counted for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fitted {
    /// Units of text.
    pub n_units: usize,
    /// The server's count for them.
    pub tokens: u64,
    /// Counts asked for.
    pub n_counts: u32,
}

/// Why no length could be fitted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FitError<E> {
    /// The prompt without any unit already has `fixed` tokens, at or above the target.
    FixedPartTooLong {
        /// Tokens of the fixed part.
        fixed: u64,
    },
    /// A count failed.
    Count(E),
}

/// The most counts one fit asks for.
pub const MAX_COUNTS: u32 = 40;

/// Finds the number of units whose count is closest to `target`; `first_guess` is where the
/// search looks after the fixed part (a whole pass over a corpus, or the length that fitted
/// last time). `count(n)` gives the server's count of the prompt with `n` units.
pub async fn fit_units<E, F, Fut>(
    target: u64,
    first_guess: usize,
    mut count: F,
) -> Result<Fitted, FitError<E>>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<u64, E>>,
{
    let mut n_counts = 0u32;
    let fixed = count(0).await.map_err(FitError::Count)?;
    n_counts += 1;
    if fixed >= target {
        return Err(FitError::FixedPartTooLong { fixed });
    }
    let first_guess = first_guess.max(1);
    let first = count(first_guess).await.map_err(FitError::Count)?;
    n_counts += 1;
    let slope = (first.saturating_sub(fixed) as f64 / first_guess as f64).max(1e-3);
    // Bracket: `low` counts below target, `high` (when known) above.
    let (mut low, mut low_count) = (0usize, fixed);
    let mut high: Option<(usize, u64)> = None;
    if first == target {
        return Ok(Fitted {
            n_units: first_guess,
            tokens: first,
            n_counts,
        });
    }
    if first > target {
        high = Some((first_guess, first));
    } else {
        low = first_guess;
        low_count = first;
    }
    let mut guess = low + units_for(target - low_count, slope);
    let mut bisect_next = false;
    while n_counts < MAX_COUNTS {
        if let Some((high_units, _)) = high {
            if high_units - low <= 1 {
                break;
            }
            if guess <= low || guess >= high_units {
                guess = low + (high_units - low) / 2;
            }
        }
        let counted = count(guess).await.map_err(FitError::Count)?;
        n_counts += 1;
        if counted == target {
            return Ok(Fitted {
                n_units: guess,
                tokens: counted,
                n_counts,
            });
        }
        if counted < target {
            low = guess;
            low_count = counted;
        } else {
            high = Some((guess, counted));
        }
        guess = match high {
            Some((high_units, high_count)) if !bisect_next => {
                // Interpolate inside the bracket.
                let local = (high_count - low_count) as f64 / (high_units - low) as f64;
                bisect_next = true;
                low + units_for(target - low_count, local.max(1e-3))
            }
            Some((high_units, _)) => {
                bisect_next = false;
                low + (high_units - low) / 2
            }
            None => low + units_for(target - low_count, slope).max(1),
        };
    }
    let best = match high {
        Some((high_units, high_count)) if high_count - target < target - low_count => {
            (high_units, high_count)
        }
        _ => (low, low_count),
    };
    Ok(Fitted {
        n_units: best.0,
        tokens: best.1,
        n_counts,
    })
}

fn units_for(tokens: u64, tokens_per_unit: f64) -> usize {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "positive and far below usize::MAX"
    )]
    let units = (tokens as f64 / tokens_per_unit).round() as usize;
    units.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(future)
    }

    #[test]
    fn finds_the_exact_length_of_a_linear_count_in_few_counts() {
        // 37 fixed tokens and 1.3 tokens per unit, rounded down: 1,000 units are 1,337.
        let fitted = block_on(fit_units(1_337, 5_000, |n| async move {
            Ok::<u64, ()>(37 + (n as u64 * 13) / 10)
        }))
        .expect("fits");
        assert_eq!((fitted.n_units, fitted.tokens), (1_000, 1_337));
        assert!(fitted.n_counts <= 6, "{fitted:?}");
    }

    #[test]
    fn a_step_count_ends_at_the_nearest_side_and_errors_are_passed_on() {
        // Two tokens per unit: the odd target is between two lengths; the lower is as near.
        let fitted = block_on(fit_units(101, 10, |n| async move {
            Ok::<u64, ()>(n as u64 * 2)
        }))
        .expect("fits");
        assert_eq!(fitted.tokens.abs_diff(101), 1);
        let too_long = block_on(fit_units(10, 10, |_| async { Ok::<u64, ()>(12) }));
        assert_eq!(too_long, Err(FitError::FixedPartTooLong { fixed: 12 }));
        let failed = block_on(fit_units(10, 10, |_| async { Err::<u64, &str>("down") }));
        assert_eq!(failed, Err(FitError::Count("down")));
    }
}
