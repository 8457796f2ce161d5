//! Grading overhead: wall time per trivial passing submission, one at a time and two at once.
//!
//! Needs a Docker engine and the grader image:
//! `docker/setup-engine.sh && docker/build-grader-image.sh`, then
//! `cargo run --release -p vernier-grader --example overhead [N]` (N submissions per mode, default 30).
#![expect(clippy::print_stdout, reason = "an example reports on stdout")]

use std::time::{Duration, Instant};

use serde_json::json;
use vernier_grader::{Case, Grader, GraderConfig, Submission};

fn submission() -> Submission {
    Submission::new(
        "def add(a, b):\n    return a + b\n",
        "def run_case(solution, case_input):\n    return solution.add(*case_input)\n",
        vec![Case::new("one", json!([1, 2]), json!(3))],
    )
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    // Nearest-rank quantile on a sorted sample.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "small positive index"
    )]
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn report(mode: &str, mut times: Vec<Duration>, total: Duration) {
    times.sort();
    println!(
        "{mode:<12} n={:<3} median {:>6.0} ms  p90 {:>6.0} ms  throughput {:.2} submissions/s",
        times.len(),
        quantile(&times, 0.5).as_secs_f64() * 1e3,
        quantile(&times, 0.9).as_secs_f64() * 1e3,
        times.len() as f64 / total.as_secs_f64(),
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(30);
    let grader = Grader::connect(GraderConfig::default().with_max_in_flight(2)).await?;
    let submission = submission();
    println!("image {}", grader.image_digest());

    // Warm-up: the first container pays for page-cache misses.
    let warm = grader.grade(&submission).await;
    if !warm.reason.is_passed() {
        return Err(format!("the trivial submission did not pass: {:?}", warm.reason).into());
    }

    let mut times = Vec::with_capacity(n);
    let started = Instant::now();
    for _ in 0..n {
        let one = Instant::now();
        let grade = grader.grade(&submission).await;
        times.push(one.elapsed());
        assert!(grade.reason.is_passed(), "{:?}", grade.reason);
    }
    report("sequential", times, started.elapsed());

    // Two workers, each grading one submission after another: every time is the latency
    // of one submission while another runs beside it.
    let started = Instant::now();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let grader = grader.clone();
            let submission = submission.clone();
            tokio::spawn(async move {
                let mut times = Vec::with_capacity(n / 2);
                for _ in 0..n.div_ceil(2) {
                    let one = Instant::now();
                    let grade = grader.grade(&submission).await;
                    times.push(one.elapsed());
                    assert!(grade.reason.is_passed(), "{:?}", grade.reason);
                }
                times
            })
        })
        .collect();
    let mut times = Vec::with_capacity(n);
    for worker in workers {
        times.extend(worker.await?);
    }
    report("2 in flight", times, started.elapsed());
    Ok(())
}
