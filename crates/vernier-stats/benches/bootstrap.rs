//! Cost of `bootstrap_bca` at 10,000 resamples of 1,000 points.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use vernier_stats::bootstrap_bca;

fn skewed_points(n: usize) -> Vec<f64> {
    // A fixed, skewed sample (squares of a low-discrepancy sequence); no generator needed.
    (0..n)
        .map(|i| {
            let u = (i as f64 * 0.618_033_988_749_895).fract();
            u * u * 10.0
        })
        .collect()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn bench_bca(c: &mut Criterion) {
    let data = skewed_points(1_000);
    let mut group = c.benchmark_group("bootstrap_bca");
    group.sample_size(10);
    group.bench_function("mean_1000_points_10000_resamples", |b| {
        b.iter(|| bootstrap_bca(black_box(&data), mean, 10_000, 0.95, 42).expect("bca"));
    });
    group.finish();
}

criterion_group!(benches, bench_bca);
criterion_main!(benches);
