//! Agent sessions and trace replay against the simulator, checked against its ground truth:
//! every turn's cached tokens exactly as the simulator served them, TTFT per turn within the
//! sweep's TTFT accuracy, the speed-up the cache gives within 3% of the simulator's own, the
//! shared prefixes of a Mooncake-format trace reproduced, and a run continued from its journal.

use std::sync::Arc;
use std::time::Duration;

use vernier_sim::{GroundTruth, SimConfig, TokensPerEvent};
use vernier_sweep::agent::{
    AgentConfig, AgentLine, AgentStart, Pass, ReplayConfig, ReplayRecord, ReplayStart, Think,
    TurnRecord, TurnStatus, run_agent, run_replay,
};
use vernier_sweep::{QuietObserver, RunContext, sweep_client};

use crate::support::start_sim;

/// A simulator whose prefill is slow beside its fixed overhead and loopback, so TTFT is
/// mostly the prefill of what the cache did not hold.
fn agent_sim(tool_call_share: f64) -> SimConfig {
    SimConfig::builder()
        .tokens_per_event(TokensPerEvent::Fixed(1))
        .decode_step(Duration::from_millis(2))
        .prefill_tokens_per_s(5000.0)
        .fixed_overhead(Duration::from_millis(40))
        .prefix_cache(true)
        .tool_call_share(tool_call_share)
        .build()
}

fn small_agent() -> AgentConfig {
    AgentConfig {
        sessions: 3,
        turns: 4,
        system_tokens: 800,
        tools: 3,
        user_tokens: 40,
        tool_result_tokens: 80,
        max_tokens: 12,
        think: Think::Fixed { seconds: 0.0 },
        baseline_no_cache: true,
        ..AgentConfig::default()
    }
}

/// Runs `start` quietly against `sim`, with `interrupt`.
async fn agent(
    sim: &vernier_sim::SimHandle,
    start: AgentStart,
    interrupt: Option<vernier_sweep::Interrupt>,
) -> Result<vernier_sweep::agent::AgentOutcome, vernier_sweep::SweepError> {
    let client = sweep_client(&sim.base_url(), None, None).expect("client");
    let context = RunContext::new(vec!["sweep".to_owned(), "agent".to_owned()]);
    run_agent(client, start, context, Arc::new(QuietObserver), interrupt).await
}

/// A new agent run of `config` into `out`.
fn new_run(config: AgentConfig, out: &tempfile::TempDir) -> AgentStart {
    AgentStart::New {
        config: Box::new(config),
        out: out.path().to_owned(),
    }
}

fn lines_of(path: &std::path::Path) -> Vec<AgentLine> {
    vernier_journal::read::<AgentLine>(path)
        .expect("the journal reads")
        .into_values()
}

fn turns_of(lines: &[AgentLine]) -> Vec<TurnRecord> {
    lines
        .iter()
        .filter_map(|line| match line {
            AgentLine::Turn(turn) => Some((**turn).clone()),
            _ => None,
        })
        .collect()
}

/// The simulator's record of `turn`: among the requests of its prompt length that arrived
/// within 20 ms of its send (sessions opening together can tie), the one that agrees with it,
/// else the nearest; each record is matched once.
fn truth_of(truth: &mut Vec<GroundTruth>, turn: &TurnRecord) -> GroundTruth {
    let sent = i128::from(turn.sent_unix_ns.expect("sent"));
    let prompt = u32::try_from(turn.prompt_tokens.expect("prompt tokens")).expect("fits");
    let apart = |t: &GroundTruth| (i128::from(t.arrival_unix_ns) - sent).abs();
    let near: Vec<usize> = (0..truth.len())
        .filter(|&i| truth[i].prompt_tokens == prompt && apart(&truth[i]) < 20_000_000)
        .collect();
    let agrees = |t: &GroundTruth| {
        turn.cached_tokens == Some(u64::from(t.cached_tokens))
            && turn.calls.len() == t.tool_calls as usize
    };
    let chosen = near
        .iter()
        .copied()
        .filter(|&i| agrees(&truth[i]))
        .min_by_key(|&i| apart(&truth[i]))
        .or_else(|| near.iter().copied().min_by_key(|&i| apart(&truth[i])))
        .unwrap_or_else(|| panic!("no record of {prompt} prompt tokens near {turn:#?}"));
    truth.remove(chosen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // each turn held to its truth, then the run's figures
async fn agent_turns_match_the_simulators_cache_and_ttft_and_the_speedup_its_truth() {
    let sim = start_sim(agent_sim(0.5)).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = agent(&sim, new_run(small_agent(), &out), None)
        .await
        .expect("the agent run finishes");
    let turns = turns_of(&lines_of(&outcome.journal));
    // Three sessions of four turns, twice (cache allowed, then defeated).
    assert_eq!(turns.len(), 24, "{turns:#?}");
    assert!(turns.iter().all(|t| t.status.answered()), "{turns:#?}");
    let mut truth = sim.ground_truth();
    let mut matched = Vec::new();
    let mut hits_after_first = 0;
    let mut ttft_errors = Vec::new();
    for turn in &turns {
        let record = truth_of(&mut truth, turn);
        // Exactly the simulator's count, which is vLLM's rule (full 16-token blocks).
        assert_eq!(
            turn.cached_tokens,
            Some(u64::from(record.cached_tokens)),
            "session {} turn {} ({:?})",
            turn.session,
            turn.turn,
            turn.pass
        );
        assert_eq!(record.tools_offered, 3);
        assert_eq!(turn.calls.len(), record.tool_calls as usize);
        // TTFT never before the simulator sent its first token (1 ms for the two clocks'
        // reading), and within the sweep's accuracy in the median over the turns, below.
        let true_ttft = record.first_token_event_ns.expect("first token") as f64 / 1e6;
        let ttft = turn.ttft_ms.expect("ttft");
        assert!(
            ttft >= true_ttft - 1.0,
            "TTFT {ttft} ms, first token {true_ttft} ms"
        );
        ttft_errors.push(((ttft - true_ttft) / (0.03 * true_ttft).max(3.0)).abs());
        match turn.pass {
            Pass::Baseline => assert_eq!(
                turn.cached_tokens,
                Some(0),
                "the baseline defeats the cache"
            ),
            _ if turn.turn >= 2 => {
                hits_after_first += 1;
                let ideal = turn.ideal_cached_tokens.expect("ideal");
                let cached = turn.cached_tokens.expect("cached");
                // Full blocks of what was computed before: at most a block and the last
                // generated token short of a perfect cache.
                assert!(
                    cached <= ideal && ideal - cached < 16 + 1,
                    "cached {cached}, ideal {ideal}"
                );
            }
            _ => {}
        }
        matched.push((
            turn.pass,
            record.first_token_event_ns.expect("first") as f64,
        ));
    }
    assert_eq!(hits_after_first, 9);
    // Within 3% or 3 ms in the median over the turns: one turn a busy scheduler held up is
    // the machine's, a shifted median the meter's.
    let median_error = vernier_stats::median(&ttft_errors).expect("errors");
    assert!(
        median_error <= 1.0,
        "TTFT errors over allowance: {ttft_errors:?}"
    );
    // Sessions after the first open on the shared system prompt and tools, already cached.
    for turn in turns
        .iter()
        .filter(|t| t.pass == Pass::Cached && t.turn == 1)
    {
        let cached = turn.cached_tokens.expect("cached");
        if turn.session == 0 {
            assert_eq!(cached, 0);
        } else {
            assert!(cached >= 800, "session {} cached {cached}", turn.session);
        }
    }
    // Tool calls were offered every turn and made on some (the simulator's share is a half),
    // and the turn after a call opened with its results.
    let calls = turns.iter().filter(|t| !t.calls.is_empty()).count();
    assert!(calls > 0 && calls < turns.len(), "{calls} calls");
    // The speed-up against the simulator's own TTFTs, over the same turns.
    let true_mean = |pass: Pass| {
        let values: Vec<f64> = matched
            .iter()
            .filter(|(p, _)| *p == pass)
            .map(|(_, ns)| *ns)
            .collect();
        values.iter().sum::<f64>() / values.len() as f64
    };
    let true_speedup = true_mean(Pass::Baseline) / true_mean(Pass::Cached);
    let speedup = outcome.run.cache_speedup.expect("a speed-up").ttft_mean;
    assert!(
        (speedup / true_speedup - 1.0).abs() < 0.03,
        "speed-up {speedup} against the simulator's {true_speedup}"
    );
    assert!(
        true_speedup > 1.5,
        "the cache must matter here: {true_speedup}"
    );
    // The report and chart exist and say what they rest on.
    let report = std::fs::read_to_string(&outcome.files.markdown).expect("report");
    assert!(
        report.contains("Speed-up from the prefix cache"),
        "{report}"
    );
    assert!(report.contains("verdict: valid"), "{report}");
    let chart = std::fs::read_to_string(&outcome.files.chart).expect("chart");
    assert!(
        chart.contains("cache defeated") && chart.contains("<svg"),
        "chart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_agent_run_resumes_without_sending_a_turn_twice() {
    let sim = start_sim(agent_sim(0.3)).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let config = AgentConfig {
        baseline_no_cache: false,
        turns: 5,
        think: Think::Fixed { seconds: 0.05 },
        ..small_agent()
    };
    // Interrupted after about half the turns.
    let interrupt: vernier_sweep::Interrupt =
        Box::pin(tokio::time::sleep(Duration::from_millis(700)));
    let first = agent(&sim, new_run(config, &out), Some(interrupt))
        .await
        .expect("the first part ends");
    assert!(first.interrupted);
    let before = turns_of(&lines_of(&first.journal)).len();
    assert!(
        before > 0 && before < 15,
        "{before} turns before the interrupt"
    );
    assert_eq!(first.run.verdict.verdict.as_str(), "questionable");
    let sent_before = sim.ground_truth().len();
    let resume = AgentStart::Resume {
        journal: first.journal.clone(),
        typed: vernier_sweep::agent::TypedBeside::default(),
    };
    let second = agent(&sim, resume, None).await.expect("the run resumes");
    let turns = turns_of(&lines_of(&second.journal));
    assert_eq!(turns.len(), 15);
    let mut keys: Vec<(u32, u32)> = turns.iter().map(|t| (t.session, t.turn)).collect();
    keys.dedup();
    assert_eq!(keys.len(), 15, "no turn twice");
    // The resumed part sent exactly the turns left (no probe: the sizing is journaled).
    assert_eq!(sim.ground_truth().len() - sent_before, 15 - before);
    // A resumed session's later turns still hit the cache: its conversation was rebuilt from
    // the journal, byte for byte what the server saw.
    assert!(
        turns
            .iter()
            .filter(|t| t.turn >= 2)
            .all(|t| t.cached_tokens.unwrap_or(0) > 0),
        "{turns:#?}"
    );
    assert!(!second.interrupted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundled_mooncake_trace_replays_at_ten_times_with_its_shared_prefixes() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .prefill_tokens_per_s(200_000.0)
            .fixed_overhead(Duration::from_millis(1))
            .prefix_cache(true)
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let client = sweep_client(&sim.base_url(), None, None).expect("client");
    let outcome = run_replay(
        client,
        ReplayStart::New {
            config: Box::new(ReplayConfig {
                time_scale: 10.0,
                ..ReplayConfig::default()
            }),
            out: out.path().to_owned(),
        },
        RunContext::new(vec!["sweep".to_owned(), "replay".to_owned()]),
        Arc::new(QuietObserver),
        None,
    )
    .await
    .expect("the replay finishes");
    let records: Vec<ReplayRecord> = lines_of(&outcome.journal)
        .into_iter()
        .filter_map(|line| match line {
            AgentLine::Replayed(record) => Some(*record),
            _ => None,
        })
        .collect();
    assert_eq!(records.len(), outcome.run.records);
    assert!(
        records.iter().all(|r| r.status == TurnStatus::Ok),
        "{records:#?}"
    );
    // The simulator counts a lowercase word as one token, so calibration finds one word per
    // token and each prompt is its recorded length, give or take the nonce line and template.
    assert!(
        (outcome.run.words_per_token - 1.0).abs() < 0.01,
        "{}",
        outcome.run.words_per_token
    );
    for record in &records {
        let prompt = record.prompt_tokens.expect("prompt tokens");
        let recorded = u64::from(record.trace_input_tokens);
        assert!(
            prompt.abs_diff(recorded) <= 12,
            "record {}: {prompt} against {recorded}",
            record.index
        );
        // Where the trace's block hashes repeat, the shared blocks are served from the cache:
        // the simulator's full 16-token blocks of the shared text.
        let cached = record.cached_tokens.expect("cached");
        if record.ideal_cached_tokens == 0 {
            assert!(
                cached < 16,
                "record {}: {cached} cached without a shared block",
                record.index
            );
        } else {
            assert!(
                cached.abs_diff(record.ideal_cached_tokens) < 16,
                "record {}: cached {cached}, shared {}",
                record.index,
                record.ideal_cached_tokens
            );
        }
        assert!(record.late_ms.is_some());
    }
    assert!(
        outcome.run.repeat_records > 10,
        "{}",
        outcome.run.repeat_records
    );
    assert_eq!(outcome.run.repeat_hits, outcome.run.repeat_records);
}

/// The capacity search over sessions: a simulator whose decode slows by the requests running
/// beside each other (each step 2 ms, times 1 + 1.5 per other running request) against a
/// target of a median decode of 300 tok/s: one session alone decodes at 500, four at once at
/// most 500 / 5.5 ≈ 91. So one session meets it, four cannot, and the answer lies between;
/// every step at or below the answer met the target and every step above missed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capacity_search_finds_the_most_sessions_meeting_the_target() {
    let sim = start_sim(
        SimConfig::builder()
            .tokens_per_event(TokensPerEvent::Fixed(1))
            .decode_step(Duration::from_millis(2))
            .slowdown_per_running_request(1.5)
            .prefill_tokens_per_s(100_000.0)
            .fixed_overhead(Duration::from_millis(1))
            .prefix_cache(true)
            // Answers that end by themselves: a turn cut off by its budget meets no target.
            .reply_tokens(Some(30))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let config = AgentConfig {
        sessions: 1,
        turns: 3,
        system_tokens: 200,
        tools: 0,
        max_tokens: 40,
        think: Think::Fixed { seconds: 0.0 },
        target: Some(vernier_sweep::Target::parse("decode_p50>=300").expect("target")),
        capacity_up_to: Some(8),
        ..AgentConfig::default()
    };
    let outcome = agent(&sim, new_run(config, &out), None)
        .await
        .expect("the search finishes");
    let capacity = outcome.run.capacity.expect("a capacity");
    let largest = capacity.largest.expect("one session meets the target");
    assert!((1..4).contains(&largest), "{capacity:#?}");
    assert!(!capacity.at_limit);
    for &(sessions, holds, _) in &capacity.steps {
        assert_eq!(holds, sessions <= largest, "{capacity:#?}");
    }
    // The step just above the answer was tried and missed.
    assert!(
        capacity
            .steps
            .iter()
            .any(|&(n, holds, _)| n == largest + 1 && !holds),
        "{capacity:#?}"
    );
    let report = std::fs::read_to_string(&outcome.files.markdown).expect("report");
    assert!(
        report.contains("## Capacity in sessions at `decode_p50>=300`"),
        "{report}"
    );
}
