//! History of one simulator: five runs, then a sixth with its decode step lengthened by a
//! ninth (decode 100 → 90 tokens/s, 10% slower) is flagged on decode and the changed setting
//! named; a sixth with nothing changed is flagged on nothing.

use vernier_test_support::fault_matrix::SimChild;

use crate::{SERVE, runs, succeeded, sweep_once};

#[test]
fn a_sixth_run_ten_percent_slower_is_flagged_with_the_changed_setting_and_an_unchanged_one_is_not()
{
    let dir = tempfile::tempdir().expect("temp dir");
    let mut earlier = Vec::new();
    {
        let sim = SimChild::start(SERVE, "--model history-sim --decode-step-ms 10");
        for run in 0..5 {
            let out = dir.path().join(format!("run-{run}"));
            sweep_once(&sim.base_url(), &out);
            earlier.push(out.display().to_string());
        }
    }
    let sixth = |name: &str, step: &str| {
        let sim = SimChild::start(
            SERVE,
            &format!("--model history-sim --decode-step-ms {step}"),
        );
        let out = dir.path().join(name);
        sweep_once(&sim.base_url(), &out);
        out.display().to_string()
    };
    let unchanged = sixth("unchanged", "10");
    let slowed = sixth("slowed", "11.111111");

    for (name, newest, flagged) in [("same", &unchanged, false), ("slower", &slowed, true)] {
        let store = dir
            .path()
            .join(format!("{name}.sqlite"))
            .display()
            .to_string();
        let mut args = vec!["register"];
        args.extend(earlier.iter().map(String::as_str));
        args.push(newest);
        succeeded(&runs(&store, &args));
        let out = dir.path().join(format!("{name}-history"));
        let output = runs(
            &store,
            &[
                "history",
                "--model",
                "history-sim",
                "--out",
                &out.display().to_string(),
            ],
        );
        let stdout = succeeded(&output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stdout.contains("6 runs"), "{stdout}");
        if flagged {
            assert!(
                stderr.contains("flagged: decode per stream at 1 in flight"),
                "{stderr}\n{stdout}"
            );
            assert!(stderr.contains("worse"), "{stderr}");
            assert!(
                stderr.contains("server.simulator_config.decode_step_ms: 10.0 → 11.111"),
                "the changed setting named: {stderr}"
            );
        } else {
            assert!(!stderr.contains("flagged:"), "{stderr}\n{stdout}");
        }
    }
}
