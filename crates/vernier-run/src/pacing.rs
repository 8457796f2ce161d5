//! Run policy for rate-limited endpoints: the wait after a "not now" (`429`/`503`), a run's
//! budget of such waits, request pacing and concurrency that gives way. The server's own words
//! (`Retry-After` and the like) are read by `vernier-openai`; what to do about them is decided
//! here, once for every engine.

use std::time::Duration;

use vernier_openai::ClientError;
use vernier_stats::SplitMix64;

/// Why a client waited before trying again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitCause {
    /// The server said how long (`Retry-After` and the like).
    ServerAsked,
    /// The server said nothing: exponential backoff with jitter.
    Backoff,
}

impl WaitCause {
    /// `server_asked` or `backoff`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ServerAsked => "server_asked",
            Self::Backoff => "backoff",
        }
    }
}

/// How long to wait after the `n`-th rate-limited answer in a row (0-based): what the server
/// asked for when it said, else `base · 2ⁿ` capped at `cap`, with "equal jitter" (half of it
/// fixed, half drawn uniformly from `unit` in [0, 1)) so that many clients do not come back at
/// once.
pub fn rate_limit_wait(
    error: &ClientError,
    n: u32,
    base: Duration,
    cap: Duration,
    unit: f64,
) -> Option<(Duration, WaitCause)> {
    let ClientError::Http {
        status: 429 | 503,
        retry_after,
        ..
    } = error
    else {
        return None;
    };
    Some(wait_for(*retry_after, n, base, cap, unit))
}

/// A run's allowance of rate-limit waits, shared by all its streams, with the draws of its
/// backoff's jitter: the wait after the `n`-th rate-limited answer in a row is [`wait_for`]'s
/// (0.5 s doubling to 60 s when the server does not say), taken from what is left.
#[derive(Debug)]
pub struct WaitBudget {
    left: std::sync::Mutex<Duration>,
    draws: std::sync::Mutex<SplitMix64>,
}

impl WaitBudget {
    /// First backoff wait when the server does not say how long.
    pub const BASE: Duration = Duration::from_millis(500);
    /// Longest backoff wait when the server does not say how long.
    pub const CAP: Duration = Duration::from_secs(60);

    /// `total` of waiting for the whole run; `seed` starts the jitter's draws.
    pub fn new(total: Duration, seed: u64) -> Self {
        Self {
            left: std::sync::Mutex::new(total),
            draws: std::sync::Mutex::new(SplitMix64::new(seed)),
        }
    }

    /// The wait after the `n`-th rate-limited answer in a row when the server asked for
    /// `asked` (or said nothing), taken from the budget; `None` when what is left cannot cover
    /// it.
    pub fn take(&self, asked: Option<Duration>, n: u32) -> Option<(Duration, WaitCause)> {
        let unit = self.draws.lock().ok()?.next_f64();
        let (wait, cause) = wait_for(asked, n, Self::BASE, Self::CAP, unit);
        let mut left = self.left.lock().ok()?;
        if wait > *left {
            return None;
        }
        *left -= wait;
        Some((wait, cause))
    }
}

/// The wait after the `n`-th rate-limited answer in a row when the server asked for `asked`
/// (or said nothing): see [`rate_limit_wait`].
pub fn wait_for(
    asked: Option<Duration>,
    n: u32,
    base: Duration,
    cap: Duration,
    unit: f64,
) -> (Duration, WaitCause) {
    if let Some(asked) = asked {
        return (asked, WaitCause::ServerAsked);
    }
    let exponential = base
        .saturating_mul(2_u32.saturating_pow(n.min(20)))
        .min(cap);
    let half = exponential / 2;
    (
        half + half.mul_f64(unit.clamp(0.0, 1.0)),
        WaitCause::Backoff,
    )
}

/// Spaces requests so that at most `max_rps` start per second (none without a cap), for
/// endpoints with a request-rate limit. Shared by every task of a run.
#[derive(Debug)]
pub struct RequestPacer {
    gap: Option<Duration>,
    next: std::sync::Mutex<Option<std::time::Instant>>,
}

impl RequestPacer {
    /// A pacer for at most `max_rps` requests per second; `None` paces nothing.
    pub fn new(max_rps: Option<f64>) -> Self {
        Self {
            gap: max_rps
                .filter(|rps| rps.is_finite() && *rps > 0.0)
                .and_then(|rps| Duration::try_from_secs_f64(1.0 / rps).ok()),
            next: std::sync::Mutex::new(None),
        }
    }

    /// Waits for this request's turn: one gap after the previous request's turn.
    pub async fn wait_turn(&self) {
        let Some(gap) = self.gap else {
            return;
        };
        let turn = {
            let Ok(mut next) = self.next.lock() else {
                return;
            };
            let now = std::time::Instant::now();
            let turn = next.map_or(now, |at| at.max(now));
            *next = Some(turn + gap);
            turn
        };
        tokio::time::sleep_until(turn.into()).await;
    }
}

/// Concurrency that gives way to a rate limit: it starts at `max`, drops by one (down to one)
/// each time the server answers `429`/`503`, and grows back by one after as many successes in
/// a row as requests are allowed at once.
#[derive(Debug)]
pub struct AdaptiveConcurrency {
    permits: std::sync::Arc<tokio::sync::Semaphore>,
    max: usize,
    state: std::sync::Mutex<AdaptiveState>,
}

#[derive(Debug)]
struct AdaptiveState {
    current: usize,
    owed: usize,
    successes: usize,
}

impl AdaptiveConcurrency {
    /// Up to `max` requests at once (at least one).
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        Self {
            permits: std::sync::Arc::new(tokio::sync::Semaphore::new(max)),
            max,
            state: std::sync::Mutex::new(AdaptiveState {
                current: max,
                owed: 0,
                successes: 0,
            }),
        }
    }

    /// Waits for a slot; the request holds it until the permit is dropped.
    pub async fn acquire(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        std::sync::Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .ok()
    }

    /// The requests allowed at once now.
    pub fn current(&self) -> usize {
        self.state.lock().map_or(self.max, |state| state.current)
    }

    /// The server answered "not now": one request fewer at once (never fewer than one).
    pub fn on_rate_limited(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        state.successes = 0;
        if state.current > 1 {
            state.current -= 1;
            // Take a permit out of circulation now if one is free, else when one comes back.
            match std::sync::Arc::clone(&self.permits).try_acquire_owned() {
                Ok(permit) => permit.forget(),
                Err(_) => state.owed += 1,
            }
        }
    }

    /// A request went through: after `current` in a row, one more at once (up to `max`).
    pub fn on_success(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        while state.owed > 0 {
            match std::sync::Arc::clone(&self.permits).try_acquire_owned() {
                Ok(permit) => {
                    permit.forget();
                    state.owed -= 1;
                }
                Err(_) => break,
            }
        }
        state.successes += 1;
        if state.successes >= state.current && state.current < self.max {
            state.successes = 0;
            state.current += 1;
            if state.owed > 0 {
                state.owed -= 1;
            } else {
                self.permits.add_permits(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_budget_takes_what_is_asked_until_it_cannot_cover_a_wait() {
        let budget = WaitBudget::new(Duration::from_millis(2500), 7);
        let asked = Some(Duration::from_secs(1));
        assert_eq!(
            budget.take(asked, 0),
            Some((Duration::from_secs(1), WaitCause::ServerAsked))
        );
        assert_eq!(
            budget.take(asked, 5),
            Some((Duration::from_secs(1), WaitCause::ServerAsked))
        );
        // 0.5 s left: a backoff wait after the first answer is 0.25 to 0.5 s (equal jitter on
        // 0.5 s), and a second asked second no longer fits.
        let (backoff, cause) = budget.take(None, 0).expect("fits in what is left");
        assert_eq!(cause, WaitCause::Backoff);
        assert!(
            (Duration::from_millis(250)..=Duration::from_millis(500)).contains(&backoff),
            "{backoff:?}"
        );
        assert_eq!(budget.take(asked, 0), None);
    }

    #[test]
    fn waits_follow_the_server_or_back_off_with_jitter_up_to_the_cap() {
        let limited = |retry_after| ClientError::Http {
            status: 429,
            body: String::new(),
            retry_after,
        };
        let base = Duration::from_millis(500);
        let cap = Duration::from_secs(30);
        assert_eq!(
            rate_limit_wait(&limited(Some(Duration::from_secs(20))), 3, base, cap, 0.5),
            Some((Duration::from_secs(20), WaitCause::ServerAsked))
        );
        // n = 2: 500 ms · 4 = 2 s, half fixed, half jittered.
        let (wait, cause) = rate_limit_wait(&limited(None), 2, base, cap, 0.0).expect("a wait");
        assert_eq!((wait, cause), (Duration::from_secs(1), WaitCause::Backoff));
        let (wait, _) = rate_limit_wait(&limited(None), 2, base, cap, 0.999_999).expect("a wait");
        assert!(wait < Duration::from_secs(2) && wait > Duration::from_millis(1999));
        let (wait, _) = rate_limit_wait(&limited(None), 40, base, cap, 1.0).expect("a wait");
        assert_eq!(wait, cap);
        let failure = ClientError::Http {
            status: 500,
            body: String::new(),
            retry_after: None,
        };
        assert_eq!(rate_limit_wait(&failure, 0, base, cap, 0.0), None);
        assert!(!vernier_openai::is_rate_limited(&failure));
    }
}

#[cfg(test)]
mod adaptive_tests {
    use super::*;

    #[tokio::test]
    async fn concurrency_gives_way_to_rate_limits_and_grows_back() {
        let limit = AdaptiveConcurrency::new(3);
        assert_eq!(limit.current(), 3);
        limit.on_rate_limited();
        limit.on_rate_limited();
        limit.on_rate_limited();
        assert_eq!(limit.current(), 1, "never below one");
        // Only one slot can be held now.
        let held = limit.acquire().await.expect("a slot");
        assert!(
            std::sync::Arc::clone(&limit.permits)
                .try_acquire_owned()
                .is_err()
        );
        drop(held);
        limit.on_success();
        assert_eq!(limit.current(), 2, "one success at one-at-a-time grows it");
        limit.on_success();
        limit.on_success();
        assert_eq!(limit.current(), 3);
        limit.on_success();
        assert_eq!(limit.current(), 3, "never above the maximum");
    }

    #[tokio::test]
    async fn the_pacer_spaces_turns_by_the_gap() {
        let pacer = RequestPacer::new(Some(100.0));
        let start = std::time::Instant::now();
        for _ in 0..5 {
            pacer.wait_turn().await;
        }
        // Five turns at 100 per second: the fifth comes 4 gaps of 10 ms after the first (a
        // sleep never ends early, so this lower bound holds on any machine).
        assert!(start.elapsed() >= Duration::from_millis(40));
        let unpaced = RequestPacer::new(None);
        unpaced.wait_turn().await;
    }
}
