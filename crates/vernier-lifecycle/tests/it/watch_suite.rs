//! The watchdog's test suite against `vernier-sim` in the states the seed describes: healthy;
//! busy (every slot held by long generations, the probe queued past its timeout, the counter
//! moving); hung (health answers, generation stopped, the counter still); crashed and back.
//!
//! Each check runs twice: with the watchdog's rule ([`CounterRule`]) and with the seed's old
//! rule, "restart after two failed probes" (`TwoFailedProbes`, here only). The watchdog must
//! pass every check; the old rule must fail exactly the busy ones.

use std::path::{Path, PathBuf};
use std::time::Duration;
use vernier_cli::Failure as _;

use tokio::sync::oneshot;
use tokio::task::JoinSet;
use vernier_lifecycle::{
    CounterEvidence, CounterRule, HangRule, ProbeOutcome, QuietObserver, Verdict, WatchConfig,
    WatchEvent, WatchOutcome, run_watch_with_rule,
};
use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder};
use vernier_sim::{Sim, SimConfig, SimConfigBuilder, SimHandle};

/// The seed's first watchdog: any two failed probes in a row mean "restart".
#[derive(Debug, Default)]
struct TwoFailedProbes {
    failed_in_a_row: u32,
}

impl HangRule for TwoFailedProbes {
    fn name(&self) -> &'static str {
        "restart after two failed probes"
    }

    fn reads_counter(&self) -> bool {
        false
    }

    fn judge(&mut self, probe: &ProbeOutcome, _counter: &CounterEvidence) -> Verdict {
        if probe.is_ok() {
            self.failed_in_a_row = 0;
            return Verdict::Healthy;
        }
        self.failed_in_a_row += 1;
        if self.failed_in_a_row >= 2 {
            self.failed_in_a_row = 0;
            Verdict::Hung
        } else {
            Verdict::Failing
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Healthy,
    BusySlotsHeld,
    BusyManyProbes,
    BusyUnderSlowdown,
    BusyThenIdle,
    HungOnce,
    HungTwice,
    HungRestartOutlastsTheWait,
    CrashAndBack,
}

const CHECKS: [Check; 9] = [
    Check::Healthy,
    Check::BusySlotsHeld,
    Check::BusyManyProbes,
    Check::BusyUnderSlowdown,
    Check::BusyThenIdle,
    Check::HungOnce,
    Check::HungTwice,
    Check::HungRestartOutlastsTheWait,
    Check::CrashAndBack,
];

impl Check {
    fn is_busy(self) -> bool {
        matches!(
            self,
            Self::BusySlotsHeld
                | Self::BusyManyProbes
                | Self::BusyUnderSlowdown
                | Self::BusyThenIdle
        )
    }
}

fn fast() -> SimConfigBuilder {
    SimConfig::builder()
        .fixed_overhead(Duration::from_millis(1))
        // Slow enough to keep the suite light on a shared machine, fast enough that the
        // counter moves several tokens within one settle period.
        .decode_step(Duration::from_millis(50))
}

fn config(base_url: &str, marker: &Path) -> WatchConfig {
    let mut config = WatchConfig::default();
    base_url.clone_into(&mut config.base_url);
    config.interval_s = 0.2;
    config.probe_timeout_s = 1.0;
    config.settle_s = 0.5;
    config.failures = 2;
    config.grace_s = 1.0;
    config.ready_timeout_s = 5.0;
    config.on_hung = Some(format!("echo hung >> '{}'", marker.display()));
    config
}

/// Streams `n` generations of `max_tokens` each, holding their slots until they end.
fn hold_slots(base_url: &str, n: usize, max_tokens: u64) -> JoinSet<()> {
    let mut holders = JoinSet::new();
    for i in 0..n {
        let client = ClientBuilder::new(base_url).build().expect("client");
        holders.spawn(async move {
            let mut request =
                ChatRequest::new("vernier-sim", vec![ChatMessage::user(format!("long {i}"))]);
            request.max_tokens = Some(max_tokens);
            if let Ok(mut stream) = client.chat_stream(&request).await {
                while let Some(Ok(_)) = stream.next_event().await {}
            }
        });
    }
    holders
}

fn marker_lines(marker: &Path) -> usize {
    std::fs::read_to_string(marker).map_or(0, |text| text.lines().count())
}

async fn wait_for_marker(marker: &Path, lines: usize, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while marker_lines(marker) < lines {
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

fn events(outcome: &WatchOutcome) -> Vec<WatchEvent> {
    vernier_journal::read::<WatchEvent>(&outcome.journal)
        .expect("the watch journal reads back")
        .into_values()
}

/// Runs one check with one rule; `Err` says what did not hold.
async fn run_check(check: Check, rule: Box<dyn HangRule>) -> Result<(), String> {
    let folder = tempfile::tempdir().map_err(|e| e.to_string())?;
    let marker = folder.path().join("on-hung.log");
    let sim_config = match check {
        Check::BusySlotsHeld | Check::BusyManyProbes | Check::BusyThenIdle => {
            fast().max_num_seqs(Some(2)).build()
        }
        Check::BusyUnderSlowdown => fast()
            .max_num_seqs(Some(4))
            .decode_step(Duration::from_millis(50))
            .slowdown_per_running_request(3.0)
            .build(),
        _ => fast().build(),
    };
    let sim = Sim::start(sim_config).await.map_err(|e| e.to_string())?;
    let base_url = sim.base_url();
    // Busy checks: every slot is held before the first probe.
    let holders = match check {
        Check::BusySlotsHeld | Check::BusyManyProbes | Check::BusyThenIdle => {
            hold_slots(&base_url, 2, 20_000)
        }
        Check::BusyUnderSlowdown => hold_slots(&base_url, 4, 20_000),
        _ => JoinSet::new(),
    };
    let slots = if check == Check::BusyUnderSlowdown {
        4
    } else {
        2
    };
    if !holders.is_empty() {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while sim.metrics().num_requests_running < slots {
            if tokio::time::Instant::now() > deadline {
                return Err("the long generations did not start".to_owned());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let mut config = config(&base_url, &marker);
    if check == Check::HungRestartOutlastsTheWait {
        // The wait for ready gives up before the restart is over; the grace period must keep
        // the next hung verdict from running --on-hung again.
        config.ready_timeout_s = 0.8;
        config.grace_s = 8.0;
    }
    let (stop, stopped) = oneshot::channel::<()>();
    let out = folder.path().join("watch");
    let director = tokio::spawn(direct(
        check,
        sim,
        holders,
        marker.clone(),
        out.join("watch.jsonl"),
        stop,
    ));
    let outcome = run_watch_with_rule(
        &config,
        rule,
        &out,
        &QuietObserver,
        Some(Box::pin(async move {
            let _ = stopped.await;
        })),
    )
    .await
    .map_err(|e| format!("the watch failed: {e}"))?;
    let director_note = director.await.map_err(|e| e.to_string())?;
    if let Some(note) = &director_note {
        // Show what the watch saw, for a check that could not be driven to its end.
        let text = std::fs::read_to_string(out.join("watch.jsonl")).unwrap_or_default();
        return Err(format!("{note}; the watch journal:\n{text}"));
    }
    judge(
        check,
        &outcome,
        &events(&outcome),
        marker_lines(&marker),
        director_note,
    )
}

/// Puts the simulator through the check's states, then stops the watch.
async fn direct(
    check: Check,
    sim: SimHandle,
    mut holders: JoinSet<()>,
    marker: PathBuf,
    journal: PathBuf,
    stop: oneshot::Sender<()>,
) -> Option<String> {
    // Every step waits for what the watch journalled, not for a fixed time, so a slow,
    // loaded test machine changes how long a check takes, not what it sees.
    let limit = Duration::from_secs(30);
    let mut note = None;
    let mut sim = Some(sim);
    let timeouts = r#""kind":"timeout""#;
    let mut want = |what: &str, holds: bool| {
        if !holds && note.is_none() {
            note = Some(format!("gave up waiting for {what}"));
        }
    };
    match check {
        Check::Healthy => want(
            "5 probes",
            wait_journal(&journal, r#""type":"probe""#, 5, limit).await,
        ),
        Check::BusySlotsHeld | Check::BusyUnderSlowdown => {
            want(
                "3 timed-out probes",
                wait_journal(&journal, timeouts, 3, limit).await,
            );
        }
        Check::BusyManyProbes => {
            want(
                "6 timed-out probes",
                wait_journal(&journal, timeouts, 6, limit).await,
            );
        }
        Check::BusyThenIdle => {
            want(
                "2 timed-out probes",
                wait_journal(&journal, timeouts, 2, limit).await,
            );
            // The long generations end (their clients go away): the slots are free.
            holders.abort_all();
            while holders.join_next().await.is_some() {}
            let ok = r#""kind":"ok""#;
            let before = journal_count(&journal, ok);
            want(
                "3 probes after the slots were freed",
                wait_journal(&journal, ok, before + 3, limit).await,
            );
        }
        Check::HungOnce | Check::HungTwice | Check::HungRestartOutlastsTheWait => {
            let handle = sim.as_ref()?;
            let hangs = if check == Check::HungTwice { 2 } else { 1 };
            want(
                "2 probes",
                wait_journal(&journal, r#""type":"probe""#, 2, limit).await,
            );
            for hang in 1..=hangs {
                handle.set_hung(true);
                if !wait_for_marker(&marker, hang, limit).await {
                    want(&format!("--on-hung for hang {hang}"), false);
                    break;
                }
                if check == Check::HungRestartOutlastsTheWait {
                    // The "restart" outlasts the watchdog's wait for ready: release only once
                    // a hung verdict fell within the grace period.
                    want(
                        "a hung verdict within the grace period",
                        wait_journal(&journal, "within the grace period", 1, limit).await,
                    );
                } else {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                handle.set_hung(false);
                want(
                    "the return",
                    wait_journal(&journal, r#""type":"server_back""#, hang, limit).await,
                );
                // Past the grace period before the next hang.
                tokio::time::sleep(Duration::from_millis(1200)).await;
            }
        }
        Check::CrashAndBack => {
            want(
                "2 probes",
                wait_journal(&journal, r#""type":"probe""#, 2, limit).await,
            );
            let handle = sim.take()?;
            let addr = handle.addr();
            handle.shutdown().await;
            want(
                "the crash",
                wait_journal(&journal, r#""type":"server_down""#, 1, limit).await,
            );
            match Sim::start(fast().bind(addr).build()).await {
                Ok(restarted) => sim = Some(restarted),
                Err(error) => want(&format!("a restart ({error})"), false),
            }
            want(
                "the return",
                wait_journal(&journal, r#""type":"server_back""#, 1, limit).await,
            );
        }
    }
    let _ = stop.send(());
    holders.abort_all();
    drop(sim);
    note
}

fn journal_count(journal: &Path, needle: &str) -> usize {
    std::fs::read_to_string(journal).map_or(0, |text| {
        text.lines().filter(|line| line.contains(needle)).count()
    })
}

/// Waits until `n` journal lines contain `needle`; false when `limit` passed first.
async fn wait_journal(journal: &Path, needle: &str, n: usize, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while journal_count(journal, needle) < n {
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

fn judge(
    check: Check,
    outcome: &WatchOutcome,
    events: &[WatchEvent],
    on_hung_runs: usize,
    director_note: Option<String>,
) -> Result<(), String> {
    if let Some(note) = director_note {
        return Err(note);
    }
    let summary = &outcome.summary;
    let expect = |what: &str, holds: bool| {
        if holds {
            Ok(())
        } else {
            Err(format!("{what}; summary {summary:?}"))
        }
    };
    let verdicts = |name: &str| summary.verdicts.get(name).copied().unwrap_or(0);
    expect(
        "--on-hung runs match the journal",
        on_hung_runs as u64 == summary.on_hung_runs,
    )?;
    match check {
        Check::Healthy => {
            // A loaded test machine may delay one probe past its timeout; most must succeed.
            expect(
                "probes succeed on a healthy server",
                summary.probes >= 2 && summary.failed_probes * 2 < summary.probes,
            )?;
            expect("no --on-hung on a healthy server", on_hung_runs == 0)
        }
        Check::BusySlotsHeld | Check::BusyManyProbes | Check::BusyUnderSlowdown => {
            expect(
                "probes fail while every slot is held",
                summary.failed_probes >= 2,
            )?;
            expect("never --on-hung on a busy server", on_hung_runs == 0)?;
            expect("the busy engine is called busy", verdicts("busy") >= 1)
        }
        Check::BusyThenIdle => {
            expect("never --on-hung on a busy server", on_hung_runs == 0)?;
            let last_probe = events.iter().rev().find_map(|event| match event {
                WatchEvent::Probe { outcome, .. } => Some(outcome.is_ok()),
                _ => None,
            });
            expect(
                "probes succeed once the slots are free",
                last_probe == Some(true),
            )
        }
        Check::HungOnce => {
            expect(
                "--on-hung runs exactly once for one hang",
                on_hung_runs == 1,
            )?;
            expect("the return is reported", summary.backs >= 1)
        }
        Check::HungRestartOutlastsTheWait => {
            expect(
                "--on-hung runs exactly once for one hang",
                on_hung_runs == 1,
            )?;
            let held_back = events.iter().any(|event| {
                matches!(event, WatchEvent::Decision { verdict: Verdict::Hung, action, .. } if action.contains("grace"))
            });
            expect(
                "a hung verdict within the grace period runs nothing",
                held_back,
            )?;
            expect("the return is reported", summary.backs >= 1)
        }
        Check::HungTwice => expect("--on-hung runs once per hang", on_hung_runs == 2),
        Check::CrashAndBack => {
            let down = events
                .iter()
                .position(|e| matches!(e, WatchEvent::ServerDown { .. }));
            let back = events
                .iter()
                .rposition(|e| matches!(e, WatchEvent::ServerBack { .. }));
            expect("the crash is reported", down.is_some())?;
            expect(
                "the return is reported after the crash",
                matches!((down, back), (Some(d), Some(b)) if b > d),
            )
        }
    }
}

async fn run_all(make_rule: fn() -> Box<dyn HangRule>) -> Vec<(Check, Result<(), String>)> {
    let mut set = JoinSet::new();
    for check in CHECKS {
        set.spawn(async move { (check, run_check(check, make_rule()).await) });
    }
    let mut results = Vec::new();
    while let Some(result) = set.join_next().await {
        results.push(result.expect("a check panicked"));
    }
    results.sort_by_key(|(check, _)| CHECKS.iter().position(|c| c == check));
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_passes_every_check() {
    let results = run_all(|| Box::new(CounterRule::new(2))).await;
    let failed: Vec<String> = results
        .iter()
        .filter_map(|(check, result)| result.as_ref().err().map(|e| format!("{check:?}: {e}")))
        .collect();
    assert!(failed.is_empty(), "failed checks:\n{}", failed.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_old_rule_fails_exactly_the_busy_checks() {
    let results = run_all(|| Box::new(TwoFailedProbes::default())).await;
    let failed: Vec<Check> = results
        .iter()
        .filter(|(_, result)| result.is_err())
        .map(|(check, _)| *check)
        .collect();
    let busy: Vec<Check> = CHECKS.into_iter().filter(|c| c.is_busy()).collect();
    assert_eq!(failed, busy, "results: {results:#?}");
    for (check, result) in &results {
        if let Err(error) = result {
            assert!(
                error.starts_with("never --on-hung on a busy server"),
                "{check:?} failed for another reason: {error}"
            );
        }
    }
    assert_eq!(busy.len(), 4);
}

#[tokio::test]
async fn a_server_without_a_counter_is_refused_unless_allowed() {
    // A plain HTTP server whose /metrics has no generation counter.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0_u8; 4096];
                let _ = stream.read(&mut buffer).await;
                let body = "# TYPE up gauge\nup 1\n";
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    let folder = tempfile::tempdir().expect("tempdir");
    let mut config = config(&format!("http://{addr}"), &folder.path().join("m"));
    config.max_probes = Some(1);
    let error = vernier_lifecycle::run_watch(&config, folder.path(), &QuietObserver, None)
        .await
        .expect_err("no counter, no fallback");
    let message = error.to_string();
    assert!(message.contains("--allow-no-counter"), "{message}");
    assert!(
        message.contains("vllm:generation_tokens_total"),
        "{message}"
    );
    config.allow_no_counter = true;
    let outcome = vernier_lifecycle::run_watch(&config, folder.path(), &QuietObserver, None)
        .await
        .expect("allowed");
    let journal = events(&outcome);
    assert!(matches!(
        &journal[0],
        WatchEvent::Start { counter: None, counter_note: Some(note), .. } if note.contains("--allow-no-counter")
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_wants_a_key_is_a_configuration_error_not_a_hang() {
    // Every generation request answered 401, as a server started with an API key answers a
    // client without one. Before, two such probes were "hung" and --on-hung ran.
    let mut sim_config = fast().build();
    sim_config.faults.http_status = Some((401, "{\"error\":\"invalid api key\"}".to_owned()));
    let sim = Sim::start(sim_config).await.expect("simulator");
    let folder = tempfile::tempdir().expect("tempdir");
    let marker = folder.path().join("on-hung.log");
    let mut config = config(&sim.base_url(), &marker);
    config.max_probes = Some(4);
    let error = vernier_lifecycle::run_watch(&config, folder.path(), &QuietObserver, None)
        .await
        .expect_err("refused at the first probe");
    assert_eq!(error.exit_code(), 2, "{error}");
    let message = error.to_string();
    assert!(
        message.contains("--api-key-env") && message.contains("401"),
        "{message}"
    );
    assert!(!marker.exists(), "--on-hung never ran");
    sim.shutdown().await;
}

/// `--max-probes` is a bound on every probe, those sent while waiting for the server to come
/// back after an action included. Before, the wait after `--on-down` kept probing until
/// `--ready-timeout` (about 40 probes here) past a bound of 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_probes_bounds_the_probes_sent_while_waiting_for_the_server_to_come_back() {
    // A port nothing listens on: every probe finds the server down.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let folder = tempfile::tempdir().expect("tempdir");
    let marker = folder.path().join("on-down.log");
    let mut config = config(&format!("http://127.0.0.1:{port}"), &marker);
    config.interval_s = 0.05;
    config.failures = 1;
    config.ready_timeout_s = 2.0;
    config.on_hung = None;
    config.on_down = Some(format!("echo down >> '{}'", marker.display()));
    config.max_probes = Some(3);
    let outcome = vernier_lifecycle::run_watch(&config, folder.path(), &QuietObserver, None)
        .await
        .expect("the watch ends at its bound");
    let probes = events(&outcome)
        .iter()
        .filter(|event| matches!(event, WatchEvent::Probe { .. }))
        .count();
    assert!(marker.exists(), "--on-down ran");
    assert_eq!(probes, 3, "every probe counts against --max-probes");
    assert_eq!(outcome.summary.probes, 3);
}
