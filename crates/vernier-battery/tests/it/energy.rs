//! The head-to-head's GPU energy row: two sweeps whose GPUs are read from DCGM exporters on
//! loopback; the row carries each side's joules per output token as its run file has it.

use std::time::Duration;

use vernier_battery::{BatteryConfig, BatteryStart, BatteryTarget, Part, Preset, Side};
use vernier_sim::{Sim, SimConfig, TokensPerEvent};

use vernier_test_support::dcgm_exporter;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_head_to_head_compares_energy_per_output_token() {
    let dir = tempfile::tempdir().expect("temporary folder");
    for (name, step_ms) in [("a", 2), ("b", 6)] {
        let exporter = dcgm_exporter::start();
        let sim = Sim::start(
            SimConfig::builder()
                .decode_step(Duration::from_millis(step_ms))
                .tokens_per_event(TokensPerEvent::Fixed(1))
                .build(),
        )
        .await
        .expect("simulator");
        let mut config = BatteryConfig::preset(Preset::Quick);
        config.parts = vec![Part::Sweep];
        config.prompt_tokens = vec![64];
        config.output_tokens = 32;
        config.batched_concurrency = 1;
        config.reps = 2;
        let mut target = BatteryTarget::new(Some(sim.base_url()));
        target.gpu_metrics_url = Some(exporter.url.clone());
        target.gpu_sample_ms = Some(10);
        let outcome = vernier_battery::run_battery(
            BatteryStart::New {
                config: Box::new(config),
                out: dir.path().join(name),
            },
            &target,
            vec!["battery".to_owned()],
            &vernier_battery::QuietBattery,
            vernier_run::never(),
        )
        .await
        .expect("the battery runs");
        sim.shutdown().await;
        assert_eq!(outcome.exit_code(), 0, "{:#?}", outcome.file.parts);
    }
    let a = Side::load(&dir.path().join("a")).expect("side A");
    let b = Side::load(&dir.path().join("b")).expect("side B");
    let versus = vernier_battery::versus(&a, &b).expect("comparable");
    let row = versus
        .glance
        .iter()
        .find(|row| row.dimension.starts_with("GPU energy, J per output token"))
        .expect("an energy row");
    let per_token = |side: &Side| {
        let run = &side.sweep.as_ref().expect("a sweep").run;
        let cell = run
            .cells
            .iter()
            .filter(|cell| cell.gpu.as_ref().is_some_and(|gpu| gpu.per_token.is_some()))
            .max_by_key(|cell| (cell.concurrency, cell.prompt_tokens_target))
            .expect("a cell with energy");
        cell.gpu
            .as_ref()
            .and_then(|gpu| gpu.per_token)
            .expect("per token")
            .joules_per_output_token
    };
    let (x, y) = (per_token(&a), per_token(&b));
    assert_eq!(row.a, format!("{x:.3}"));
    assert_eq!(row.b, format!("{y:.3}"));
    assert!(row.dimension.contains(" c"), "{}", row.dimension);
}
