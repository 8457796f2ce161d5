//! Two simulated servers of known speed, verbosity and scripted answers, each measured by a
//! battery through the library; the head-to-head must report what the simulators' own ground
//! truth gives: the decode ratio and seconds per solved task within 2%, the pass rate at every
//! budget, and the crossover budget exactly.

use std::time::Duration;

use vernier_battery::{BatteryConfig, BatteryStart, BatteryTarget, Part, Preset, Side};
use vernier_sim::{GroundTruth, Script, ScriptReply, ScriptRule, Sim, SimConfig, TokensPerEvent};
use vernier_tasks::Checker;

/// Eight bundled math tasks with an integer answer (no Docker engine needed to grade them).
fn math_tasks() -> Vec<vernier_tasks::Task> {
    let suite = vernier_hardsuite::load_suite(&vernier_hardsuite::SuiteSelection::default())
        .expect("the bundled suite");
    let tasks: Vec<_> = suite
        .tasks
        .into_iter()
        .filter(|task| matches!(task.checker, Checker::Integer(_)))
        .take(8)
        .collect();
    assert_eq!(tasks.len(), 8, "the bundled suite has eight integer tasks");
    tasks
}

/// One server: `right[i]` says whether task `i` is answered right, after `reasoning[i]`
/// repetitions of a reasoning sentence (its verbosity); one token per `step`.
fn server(
    tasks: &[vernier_tasks::Task],
    right: &[bool],
    reasoning: &[usize],
    step: Duration,
) -> SimConfig {
    let rules = tasks
        .iter()
        .zip(right.iter().zip(reasoning))
        .map(|(task, (&right, &reasoning))| {
            let Checker::Integer(gold) = task.checker else {
                unreachable!("integer tasks only")
            };
            let prompt = &task
                .messages
                .iter()
                .rev()
                .find(|m| m.role == "user")
                .expect("a user message")
                .content;
            let answer = if right { gold } else { gold + 1 };
            ScriptRule::new(
                format!(r"\A{}\z", regex::escape(prompt)),
                ScriptReply::text(format!("ANSWER: {answer}"))
                    .with_reasoning("Let me check this step again. ".repeat(reasoning)),
            )
        })
        .collect();
    SimConfig::builder()
        .script(Some(Script::new(rules).expect("script")))
        .decode_step(step)
        .tokens_per_event(TokensPerEvent::Fixed(1))
        .fixed_overhead(Duration::from_millis(1))
        .prefill_tokens_per_s(50_000.0)
        .build()
}

fn config(tasks: &[vernier_tasks::Task]) -> BatteryConfig {
    let mut config = BatteryConfig::preset(Preset::Quick);
    config.parts = vec![Part::Sweep, Part::Suite];
    config.prompt_tokens = vec![128];
    config.output_tokens = 48;
    config.batched_concurrency = 1;
    config.reps = 3;
    config.suite_tasks = Some(tasks.iter().map(|t| t.id.clone()).collect());
    config
}

/// The scripted tasks' ground truth by task, in task order: (passed, completion tokens,
/// seconds from arrival to the last token event).
fn task_truth(truth: &[GroundTruth], right: &[bool]) -> Vec<(bool, u32, f64)> {
    right
        .iter()
        .enumerate()
        .map(|(index, &passed)| {
            let record = truth
                .iter()
                .find(|t| t.script_rule == Some(index) && t.completed)
                .expect("each task asked once");
            let last = record.event_offsets_ns.last().copied().unwrap_or(0);
            (passed, record.completion_tokens, last as f64 / 1e9)
        })
        .collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        f64::midpoint(values[n / 2 - 1], values[n / 2])
    }
}

/// The pass rate at budget `b` from the ground truth.
fn rate_at(truth: &[(bool, u32, f64)], budget: u32) -> f64 {
    truth
        .iter()
        .filter(|(passed, tokens, _)| *passed && *tokens <= budget)
        .count() as f64
        / truth.len() as f64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::too_many_lines,
    reason = "two batteries, then each figure against the ground truth"
)]
async fn versus_of_two_simulated_servers_matches_their_ground_truth() {
    let tasks = math_tasks();
    // A: fast (4 ms a token) and terse, but solves five of eight. B: slow (10 ms) and
    // verbose, solves all eight.
    let right_a = [true, true, true, true, true, false, false, false];
    let reasoning_a: Vec<usize> = (0..8).map(|i| 4 + 2 * i).collect();
    let right_b = [true; 8];
    let reasoning_b: Vec<usize> = (0..8).map(|i| 10 + 3 * i).collect();
    let sim_a = Sim::start(server(
        &tasks,
        &right_a,
        &reasoning_a,
        Duration::from_millis(4),
    ))
    .await
    .expect("simulator A");
    let sim_b = Sim::start(server(
        &tasks,
        &right_b,
        &reasoning_b,
        Duration::from_millis(10),
    ))
    .await
    .expect("simulator B");
    let dir = tempfile::tempdir().expect("temporary folder");
    for (sim, name) in [(&sim_a, "a"), (&sim_b, "b")] {
        let outcome = vernier_battery::run_battery(
            BatteryStart::New {
                config: Box::new(config(&tasks)),
                out: dir.path().join(name),
            },
            &BatteryTarget::new(Some(sim.base_url())),
            vec!["battery".to_owned()],
            &vernier_battery::QuietBattery,
            vernier_run::never(),
        )
        .await
        .expect("the battery runs");
        assert_eq!(outcome.exit_code(), 0, "{:#?}", outcome.file.parts);
    }
    let truth_a = sim_a.ground_truth();
    let truth_b = sim_b.ground_truth();
    sim_a.shutdown().await;
    sim_b.shutdown().await;

    let a = Side::load(&dir.path().join("a")).expect("battery A");
    let b = Side::load(&dir.path().join("b")).expect("battery B");
    let versus = vernier_battery::versus(&a, &b).expect("comparable");

    // Decode: the ratio of the median true decode rates of the sweep's requests.
    let true_decode = |truth: &[GroundTruth]| {
        median(
            truth
                .iter()
                .filter(|t| t.script_rule.is_none() && t.stream && t.completion_tokens == 48)
                .filter_map(|t| t.true_decode_tokens_per_s)
                .collect(),
        )
    };
    let expected_ratio = true_decode(&truth_a) / true_decode(&truth_b);
    let decode = versus
        .speed
        .iter()
        .find(|row| row.metric == vernier_battery::Metric::Decode && row.concurrency == 1)
        .expect("a decode row");
    assert!(
        (decode.ratio / expected_ratio - 1.0).abs() < 0.02,
        "decode ratio {} against the ground truth's {expected_ratio}",
        decode.ratio
    );
    assert!((expected_ratio - 2.5).abs() < 0.1, "{expected_ratio}");

    // Seconds per solved task: every scored task's own time over the tasks solved.
    let tasks_a = task_truth(&truth_a, &right_a);
    let tasks_b = task_truth(&truth_b, &right_b);
    let per_solved = |truth: &[(bool, u32, f64)]| {
        truth.iter().map(|(_, _, seconds)| seconds).sum::<f64>()
            / truth.iter().filter(|(passed, ..)| *passed).count() as f64
    };
    let suite = versus
        .suites
        .iter()
        .find(|suite| suite.part == Part::Suite.name())
        .expect("the suite compared");
    for (measured, truth) in [
        (suite.cost_a.seconds_per_solved, &tasks_a),
        (suite.cost_b.seconds_per_solved, &tasks_b),
    ] {
        let measured = measured.expect("seconds per solved task");
        let expected = per_solved(truth);
        assert!(
            (measured / expected - 1.0).abs() < 0.02,
            "seconds per solved task {measured} against the ground truth's {expected}"
        );
    }
    let tokens_per_solved = |truth: &[(bool, u32, f64)]| {
        truth
            .iter()
            .map(|(_, tokens, _)| f64::from(*tokens))
            .sum::<f64>()
            / truth.iter().filter(|(passed, ..)| *passed).count() as f64
    };
    assert_eq!(
        suite.cost_a.tokens_per_solved,
        Some(tokens_per_solved(&tasks_a))
    );

    // The pass rate at every budget up to the largest cost, and the crossover exactly.
    let most = tasks_b
        .iter()
        .map(|(_, tokens, _)| *tokens)
        .max()
        .unwrap_or(0);
    let mut leader = None;
    let mut expected_crossover = None;
    for budget in 0..=most {
        let (rate_a, rate_b) = (rate_at(&tasks_a, budget), rate_at(&tasks_b, budget));
        let curve_a = suite
            .tokens
            .0
            .at(f64::from(budget))
            .expect("within the budget");
        let curve_b = suite
            .tokens
            .1
            .at(f64::from(budget))
            .expect("within the budget");
        assert!(
            (curve_a - rate_a).abs() < 1e-12,
            "A at {budget}: {curve_a} vs {rate_a}"
        );
        assert!(
            (curve_b - rate_b).abs() < 1e-12,
            "B at {budget}: {curve_b} vs {rate_b}"
        );
        // A side leads only where its 95% Wilson interval lies wholly above the other's
        // (the rule `crossovers` states); overlapping intervals are a tie.
        let interval = |truth: &[(bool, u32, f64)]| {
            let passed = truth
                .iter()
                .filter(|(passed, tokens, _)| *passed && *tokens <= budget)
                .count();
            vernier_stats::wilson(passed as u64, truth.len() as u64, 0.95).expect("an interval")
        };
        let (wilson_a, wilson_b) = (interval(&tasks_a), interval(&tasks_b));
        let now = if wilson_a.low > wilson_b.high {
            Some('A')
        } else if wilson_b.low > wilson_a.high {
            Some('B')
        } else {
            None
        };
        if let (Some(before), Some(after)) = (leader, now)
            && before != after
            && expected_crossover.is_none()
        {
            expected_crossover = Some(budget);
        }
        if now.is_some() {
            leader = now;
        }
    }
    match expected_crossover {
        // The scripts' curves cross on their point estimates, but within noise at this many
        // tasks: no crossover may be named.
        None => assert!(
            suite.token_crossovers.is_empty(),
            "{:?}",
            suite.token_crossovers
        ),
        Some(expected_crossover) => {
            assert_eq!(
                suite.token_crossovers.len(),
                1,
                "{:?}",
                suite.token_crossovers
            );
            assert!(
                suite.token_crossovers[0]
                    .at
                    .total_cmp(&f64::from(expected_crossover))
                    .is_eq(),
                "crossover at {} against the ground truth's {expected_crossover}",
                suite.token_crossovers[0].at
            );
            assert_eq!(suite.token_crossovers[0].before, vernier_battery::Leader::A);
            assert_eq!(suite.token_crossovers[0].after, vernier_battery::Leader::B);
        }
    }
    // All three formats; the Markdown names the crossover and the decode ratio.
    let files =
        vernier_battery::write_versus(&versus, &dir.path().join("versus")).expect("written");
    let markdown = std::fs::read_to_string(&files.markdown).expect("versus.md");
    if let Some(expected_crossover) = expected_crossover {
        assert!(
            markdown.contains("B from it on")
                && markdown.contains(&format!("{expected_crossover} tokens")),
            "{markdown}"
        );
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files.json).expect("versus.json"))
            .expect("JSON");
    assert_eq!(json["schema_version"], 1);
    assert!(
        std::fs::read_to_string(&files.html)
            .expect("html")
            .contains("<svg")
    );
}
