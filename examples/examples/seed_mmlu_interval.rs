//! Recomputes the two statistical claims of a published comparison of a 35B mixture-of-experts
//! model and a 27B dense model, both asked the same 280 MMLU-Pro questions on a DGX Spark:
//!
//! 1. "82.1% against 81.4% … a 95% confidence interval on the difference of [−5.6, +7.0]
//!    points";
//! 2. "Narrowing it to something like two points would need roughly 700 questions per arm".
//!
//! Both models answered the *same* 280 questions, so the matched (paired) analysis is the one
//! that fits the design; the article does not give the discordant counts, so the paired figures
//! are shown over every table consistent with the reported accuracies.
//!
//! Run with `cargo run -p vernier-examples --example seed_mmlu_interval`.
#![expect(clippy::print_stdout, reason = "an example prints its findings")]

use vernier_stats::{
    Interval, StatsError, mcnemar_mid_p, min_detectable_difference, newcombe_independent,
    newcombe_paired, sample_size_for_half_width,
};

const QUESTIONS: u64 = 280;
/// 82.1% of 280 = 229.9 and 81.4% of 280 = 227.9: the only counts that round to the reported
/// percentages are 230 (82.14%) and 228 (81.43%).
const DENSE_RIGHT: u64 = 230;
const MOE_RIGHT: u64 = 228;
const REPORTED: (f64, f64) = (-5.6, 7.0);
const CONFIDENCE: f64 = 0.95;
const WANTED_HALF_WIDTH: f64 = 0.02;
const CLAIMED_PER_ARM: u64 = 700;
/// Bounds printed to one decimal can differ from ours by rounding; allow that much, no more.
const ROUNDING_SLACK_POINTS: f64 = 0.15;

fn verdict(holds: bool) -> &'static str {
    if holds { "HOLDS" } else { "DOES NOT HOLD" }
}

fn wald_difference(x1: u64, x2: u64, n: u64) -> Interval {
    let (p1, p2, n) = (x1 as f64 / n as f64, x2 as f64 / n as f64, n as f64);
    // 1.959963984540054 = Φ⁻¹(0.975), the 95% two-sided critical value.
    let half = 1.959_963_984_540_054 * (p1 * (1.0 - p1) / n + p2 * (1.0 - p2) / n).sqrt();
    Interval::new(p1 - p2 - half, p1 - p2 + half, CONFIDENCE)
}

/// The counts at `n` questions per arm with the observed accuracies, rounded to nearest.
fn counts_at(n: u64) -> (u64, u64) {
    let scale = |right: u64| (right * n + QUESTIONS / 2) / QUESTIONS;
    (scale(DENSE_RIGHT), scale(MOE_RIGHT))
}

fn half_width_points(interval: Interval) -> f64 {
    interval.scaled(100.0).width() / 2.0
}

/// The paired table with `discordant` disagreements whose margins are 230 and 228 of 280.
fn paired_table(discordant: u64) -> (u64, u64, u64, u64) {
    let only_dense = discordant.midpoint(DENSE_RIGHT - MOE_RIGHT);
    let only_moe = discordant - only_dense;
    let both = DENSE_RIGHT - only_dense;
    (
        both,
        only_dense,
        only_moe,
        QUESTIONS - both - only_dense - only_moe,
    )
}

fn main() -> Result<(), StatsError> {
    let difference = (DENSE_RIGHT as f64 - MOE_RIGHT as f64) / QUESTIONS as f64 * 100.0;
    println!("Seed 003: 27B dense {DENSE_RIGHT}/{QUESTIONS} vs 35B MoE {MOE_RIGHT}/{QUESTIONS}");
    println!("difference {difference:+.2} points; reported 95% interval [−5.6, +7.0]\n");

    claim_one()?;
    claim_two()
}

/// Claim 1: the interval on the difference at 280 questions.
fn claim_one() -> Result<(), StatsError> {
    println!("Claim 1: the 95% interval on the difference is [−5.6, +7.0] points");
    let newcombe = newcombe_independent(DENSE_RIGHT, QUESTIONS, MOE_RIGHT, QUESTIONS, CONFIDENCE)?;
    let wald = wald_difference(DENSE_RIGHT, MOE_RIGHT, QUESTIONS);
    for (name, interval) in [("Newcombe (method 10)", newcombe), ("Wald", wald)] {
        let points = interval.scaled(100.0);
        let close = (points.low - REPORTED.0).abs() <= ROUNDING_SLACK_POINTS
            && (points.high - REPORTED.1).abs() <= ROUNDING_SLACK_POINTS;
        println!(
            "  unpaired {name:<21} {points:.2}  → {} (each bound within {ROUNDING_SLACK_POINTS} points)",
            verdict(close)
        );
    }

    // Claim 1, paired: the discordant count is unknown; it must be even here (230 − 228 = 2 =
    // only_dense − only_moe) and lies between 2 and 2·(280 − 230) + 2 = 102.
    println!("  paired (same 280 questions), by number of questions the models disagree on:");
    let reported_width = REPORTED.1 - REPORTED.0;
    let mut closest = (u64::MAX, f64::MAX);
    let mut all_contain_zero = newcombe.contains(0.0) && wald.contains(0.0);
    let max_discordant = 2 * (QUESTIONS - DENSE_RIGHT) + (DENSE_RIGHT - MOE_RIGHT);
    for discordant in (2..=max_discordant).step_by(2) {
        let (both, only_dense, only_moe, neither) = paired_table(discordant);
        let interval = newcombe_paired(both, only_dense, only_moe, neither, CONFIDENCE)?;
        all_contain_zero &= interval.contains(0.0);
        let gap = (interval.scaled(100.0).width() - reported_width).abs();
        if gap < closest.1 {
            closest = (discordant, gap);
        }
        if [2, 10, 20, 30, 40, 60, 84, 102].contains(&discordant) {
            println!(
                "    {discordant:>3} disagreements ({only_dense:>2} vs {only_moe:>2}): {:.1}, ±{:.1} points, mid-p McNemar {:.2}",
                interval.scaled(100.0),
                half_width_points(interval),
                mcnemar_mid_p(only_dense, only_moe)?,
            );
        }
    }
    let (p_dense, p_moe) = (
        DENSE_RIGHT as f64 / QUESTIONS as f64,
        MOE_RIGHT as f64 / QUESTIONS as f64,
    );
    let independent_disagreement = p_dense * (1.0 - p_moe) + p_moe * (1.0 - p_dense);
    println!(
        "  As a paired interval the reported one holds only at about {} disagreements ({:.0}% of",
        closest.0,
        closest.0 as f64 / QUESTIONS as f64 * 100.0
    );
    println!(
        "  questions), close to what models with unrelated errors give ({:.0}); models that agree more",
        independent_disagreement * QUESTIONS as f64
    );
    println!("  often have a narrower paired interval than the one reported.");
    println!(
        "  Conclusion \"statistically indistinguishable\": {}\n",
        if all_contain_zero {
            "HOLDS (every interval above contains 0)"
        } else {
            "DOES NOT HOLD for some paired tables (an interval excludes 0)"
        }
    );

    Ok(())
}

/// Claim 2: the questions needed for ±2 points, and what 280 can resolve.
fn claim_two() -> Result<(), StatsError> {
    let (p_dense, p_moe) = (
        DENSE_RIGHT as f64 / QUESTIONS as f64,
        MOE_RIGHT as f64 / QUESTIONS as f64,
    );
    let independent_disagreement = p_dense * (1.0 - p_moe) + p_moe * (1.0 - p_dense);
    println!(
        "Claim 2: about {CLAIMED_PER_ARM} questions per arm narrow the interval to about ±2 points"
    );
    let pooled = (DENSE_RIGHT + MOE_RIGHT) as f64 / (2 * QUESTIONS) as f64;
    let (dense_at_claim, moe_at_claim) = counts_at(CLAIMED_PER_ARM);
    let at_claim = newcombe_independent(
        dense_at_claim,
        CLAIMED_PER_ARM,
        moe_at_claim,
        CLAIMED_PER_ARM,
        CONFIDENCE,
    )?;
    let needed = sample_size_for_half_width(pooled, WANTED_HALF_WIDTH, CONFIDENCE, None)?;
    let (dense_at_needed, moe_at_needed) = counts_at(needed);
    let at_needed =
        newcombe_independent(dense_at_needed, needed, moe_at_needed, needed, CONFIDENCE)?;
    println!(
        "  unpaired: at {CLAIMED_PER_ARM} per arm the Newcombe interval is ±{:.1} points → {}",
        half_width_points(at_claim),
        verdict(half_width_points(at_claim) <= 2.0 + ROUNDING_SLACK_POINTS)
    );
    println!(
        "  unpaired: ±2 points needs {needed} questions per arm (Newcombe at that n: ±{:.2})",
        half_width_points(at_needed)
    );
    println!(
        "  paired: the questions needed depend on the share ψ of questions the models disagree on:"
    );
    for psi in [0.05, 0.10, 0.15, 0.20, independent_disagreement] {
        let n = sample_size_for_half_width(pooled, WANTED_HALF_WIDTH, CONFIDENCE, Some(psi))?;
        println!(
            "    ψ = {psi:.3}: {n:>5} questions → {}",
            if n <= CLAIMED_PER_ARM {
                "700 suffice"
            } else {
                "700 are too few"
            }
        );
    }
    // The largest disagreement share ψ (in steps of 0.1 point) at which the planner's
    // paired n is still at most 700: the planner sizes Newcombe's paired interval itself.
    let mut largest_psi = 0.0;
    for step in 1..=200_u32 {
        let psi = f64::from(step) / 1000.0;
        match sample_size_for_half_width(pooled, WANTED_HALF_WIDTH, CONFIDENCE, Some(psi)) {
            Ok(n) if n <= CLAIMED_PER_ARM => largest_psi = psi,
            _ => break,
        }
    }
    println!(
        "  Paired: HOLDS ONLY IF the models disagree on at most {:.1}% of questions ({:.0} of 280);",
        largest_psi * 100.0,
        largest_psi * QUESTIONS as f64
    );
    println!("  the run's disagreement count is not reported, so the claim cannot be confirmed.");
    println!("\nWhat 280 questions can resolve (95% confidence, 80% power):");
    let unpaired = min_detectable_difference(QUESTIONS, pooled, CONFIDENCE, 0.8, None)?;
    println!(
        "  unpaired: a true difference of {:.1} points",
        unpaired * 100.0
    );
    for rho in [0.5, 0.8] {
        let paired = min_detectable_difference(QUESTIONS, pooled, CONFIDENCE, 0.8, Some(rho))?;
        println!(
            "  paired, outcome correlation {rho}: {:.1} points",
            paired * 100.0
        );
    }
    Ok(())
}
