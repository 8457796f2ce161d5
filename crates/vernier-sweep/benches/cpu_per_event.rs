//! What the ruler costs the machine it measures: CPU time (this process's `getrusage`, user +
//! system) per streamed event, for `curl -N` (the kernel's floor for reading a stream), the
//! `measure` path (`Client::measure_chat` on a single-threaded runtime) and the sweep's stream
//! path (`run_sweep`, streams on the per-core stream runtimes) at 1, 64 and 256 streams, and at
//! one stream without the per-event token ids and usage the sweep asks for by default. Beside
//! them, a bare tokio reader (the request written by hand, the response read into a buffer and
//! dropped) shows the floor of any client on tokio's readiness loop. At one stream every path
//! runs seven times in turn, each round starting one path further on (so that no path always
//! runs first, or always after the same other), and each figure is the median, with the range:
//! one run swings by a third or more on a shared machine. curl reads each stream twice, plain
//! and with the sweep's per-event token ids and usage, so that every path is set against curl
//! on the same events. With
//! `VERNIER_BENCH_LLAMA_BENCHY` and `VERNIER_BENCH_TOKENIZER` set (`eval "$(scripts/llama-benchy.sh)"`),
//! llama-benchy reads the same stream too, its prompts cut from the bundled prose corpus served
//! on loopback.
//!
//! The simulator runs in a child process (this benchmark run again with
//! `VERNIER_BENCH_SIM=serve`), so none of its CPU is counted. Start-up is subtracted: each
//! figure is (CPU of a long run − CPU of the same run with few tokens) / (its events − theirs),
//! the marginal cost of one more event.
//!
//! A second table runs the sweep at 1, 16 and 64 streams while two CPU-burning processes
//! compete for the cores, and compares it request by request with the simulator's ground truth
//! (matched by the request's nonce): the decode median against the simulator's, and the instant
//! the first token arrived (the kernel's receive time) against the instant the simulator sent
//! it, both on the wall clock, with the requests whose first token shared its socket read
//! counted apart (their first-token instant is only an upper bound). Run it with
//! `cargo bench -p vernier-sweep --bench cpu_per_event`; `-- --test` runs a tiny version once
//! (CI does), whose figures mean nothing.

#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark prints its table"
)]

use std::io::{BufRead as _, Write as _};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder, StreamOptions};
use vernier_sweep::{QuietObserver, RunContext, SweepConfig, SweepStart, Workload, run_sweep};

/// Process CPU time so far (`who`: this process, or its waited-for children), seconds.
fn cpu_seconds(who: nix::sys::resource::UsageWho) -> f64 {
    let Ok(usage) = nix::sys::resource::getrusage(who) else {
        return f64::NAN;
    };
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
    seconds(usage.user_time()) + seconds(usage.system_time())
}

fn self_cpu() -> f64 {
    cpu_seconds(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

fn children_cpu() -> f64 {
    cpu_seconds(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
}

/// The child: a simulator with one token per event every `VERNIER_BENCH_STEP_US`, printing its
/// URL and serving until its standard input closes.
fn serve() {
    let step_us: u64 = std::env::var("VERNIER_BENCH_STEP_US")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_500);
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async move {
        let config = vernier_sim::SimConfig::builder()
            .decode_step(Duration::from_micros(step_us))
            .tokens_per_event(vernier_sim::TokensPerEvent::Fixed(1))
            .max_model_len(1_000_000)
            .ground_truth_path(std::env::var_os("VERNIER_BENCH_TRUTH").map(Into::into))
            .build();
        let Ok(sim) = vernier_sim::Sim::start(config).await else {
            return;
        };
        println!("{}", sim.base_url());
        println!("{}", exporter());
        let _ = std::io::stdout().flush();
        let _ = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
                line.clear();
            }
        })
        .await;
        sim.shutdown().await;
    });
}

use vernier_test_support::dcgm_exporter;

/// A DCGM exporter's text (`fixtures/gpu`) served on loopback from the simulator's process, so
/// that its CPU is not counted: the GPU source the sampling rows read. Returns its URL.
fn exporter() -> String {
    dcgm_exporter::start().url
}

struct Simulator {
    child: std::process::Child,
    base_url: String,
    /// The exporter beside it.
    gpu_url: String,
}

impl Simulator {
    fn start(step: Duration) -> Self {
        Self::start_with(step, None)
    }

    fn start_with(step: Duration, truth: Option<&std::path::Path>) -> Self {
        let exe = std::env::current_exe().expect("the benchmark's own path");
        let mut command = Command::new(exe);
        if let Some(truth) = truth {
            command.env("VERNIER_BENCH_TRUTH", truth);
        }
        let mut child = command
            .env("VERNIER_BENCH_SIM", "serve")
            .env("VERNIER_BENCH_STEP_US", step.as_micros().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the simulator process");
        let mut reader = std::io::BufReader::new(child.stdout.take().expect("its stdout"));
        let (mut line, mut gpu) = (String::new(), String::new());
        reader.read_line(&mut line).expect("its URL");
        reader.read_line(&mut gpu).expect("its exporter's URL");
        Self {
            child,
            base_url: line.trim().to_owned(),
            gpu_url: gpu.trim().to_owned(),
        }
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// A request for `tokens` tokens; `rich`: with the per-event token ids and usage the sweep
/// asks for by default, so that the server sends the sweep's own events (about 370 bytes each
/// against 190).
fn body(tokens: u64, rich: bool) -> String {
    let mut body = serde_json::json!({
        "model": "vernier-sim",
        "messages": [{"role": "user", "content": "Write about rivers and the sea."}],
        "max_tokens": tokens,
        "ignore_eos": true,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if rich {
        body["stream_options"]["continuous_usage_stats"] = true.into();
        body["return_token_ids"] = true.into();
    }
    body.to_string()
}

/// Events of one stream of `tokens` tokens at one token per event: the role chunk, the
/// tokens, the usage chunk and `[DONE]`.
fn events(tokens: u64, streams: u64) -> f64 {
    ((tokens + 3) * streams) as f64
}

/// `curl -N` reading `streams` streams at once (`rich`: the sweep's events, see [`body`]); CPU
/// of the children, seconds.
fn curl(base_url: &str, tokens: u64, streams: u64, rich: bool) -> Option<f64> {
    let before = children_cpu();
    let children: Vec<std::process::Child> = (0..streams)
        .map(|_| {
            Command::new("curl")
                .args([
                    "-N",
                    "-s",
                    "-o",
                    "/dev/null",
                    "-H",
                    "Content-Type: application/json",
                ])
                .args(["-d", &body(tokens, rich)])
                .arg(format!("{base_url}/v1/chat/completions"))
                .spawn()
                .ok()
        })
        .collect::<Option<_>>()?;
    for mut child in children {
        child.wait().ok()?;
    }
    Some(children_cpu() - before)
}

/// Serves `fixtures/corpora/prose.txt` to every GET on a loopback port (llama-benchy fetches
/// its "book" by URL); gives the URL.
fn serve_book() -> Option<String> {
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/corpora/prose.txt"
    ))
    .ok()?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).ok()?;
    let url = format!("http://{}/prose.txt", listener.local_addr().ok()?);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0_u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                text.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&text);
        }
    });
    Some(url)
}

/// llama-benchy reading one stream of `tokens` tokens (`--exact-tg`, no warm-up, no latency
/// probe, no coherence check); CPU of the child, seconds. `None` when it is not set up.
fn llama_benchy(base_url: &str, book: &str, tokens: u64) -> Option<f64> {
    let exe = std::env::var_os("VERNIER_BENCH_LLAMA_BENCHY")?;
    let tokenizer = std::env::var_os("VERNIER_BENCH_TOKENIZER")?;
    let before = children_cpu();
    let status = Command::new(exe)
        .args([
            "--base-url",
            &format!("{base_url}/v1"),
            "--model",
            "vernier-sim",
        ])
        .arg("--tokenizer")
        .arg(tokenizer)
        .args([
            "--book-url",
            book,
            "--pp",
            "64",
            "--tg",
            &tokens.to_string(),
        ])
        .args([
            "--runs",
            "1",
            "--no-warmup",
            "--skip-coherence",
            "--exact-tg",
        ])
        .args(["--latency-mode", "none"])
        .env("HF_HUB_OFFLINE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| children_cpu() - before)
}

/// A bare tokio reader: the request written by hand on a single-threaded runtime, the
/// response read into one buffer until the server closes, nothing parsed and nothing timed.
/// The floor of any client built on tokio's readiness loop; CPU, seconds.
fn bare_tokio(base_url: &str, tokens: u64) -> f64 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let authority = base_url.trim_start_matches("http://").to_owned();
    let body = body(tokens, false);
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let before = self_cpu();
    runtime.block_on(async {
        let mut stream = tokio::net::TcpStream::connect(authority.as_str())
            .await
            .expect("connect to the simulator");
        stream.set_nodelay(true).expect("no Nagle");
        stream
            .write_all(request.as_bytes())
            .await
            .expect("send the request");
        let mut buffer = vec![0_u8; 64 * 1024];
        while stream.read(&mut buffer).await.expect("read the stream") > 0 {}
    });
    self_cpu() - before
}

/// The `measure` path: one metered stream on a single-threaded runtime; CPU, seconds.
fn measure(base_url: &str, tokens: u64) -> f64 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let client = ClientBuilder::new(&format!("{base_url}/v1"))
        .build()
        .expect("a client");
    let mut request = ChatRequest::new(
        "vernier-sim",
        vec![ChatMessage::user("Write about rivers and the sea.")],
    );
    request.max_tokens = Some(tokens);
    request.stream_options = Some(StreamOptions::usage(false));
    let request = request.with_extra("ignore_eos", true);
    let before = self_cpu();
    runtime.block_on(async {
        let (metered, error) = client.measure_chat(&request).await.expect("a stream");
        assert!(error.is_none(), "{error:?}");
        std::hint::black_box(metered.measurement);
    });
    self_cpu() - before
}

/// The sweep's stream path: one cell of `streams` streams, `reps` repetitions, no warm-up; CPU of
/// the whole run (set-up included, subtracted by the caller), seconds.
/// `lean`: without per-event token ids and per-chunk usage, the events `measure` asks for.
fn sweep(
    base_url: &str,
    tokens: u64,
    streams: u32,
    reps: u32,
    lean: bool,
    gpu_url: Option<&str>,
    out: &std::path::Path,
) -> f64 {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut config = SweepConfig::default();
    "vernier-sim".clone_into(&mut config.model);
    config.workloads = vec![Workload::Prose];
    config.prompt_tokens = vec![64];
    config.output_tokens = vec![u32::try_from(tokens).unwrap_or(u32::MAX)];
    config.concurrency = vec![streams];
    config.reps = reps;
    config.warmup = 0;
    if lean {
        config.token_ids = false;
        config.continuous_usage = false;
    }
    let _ = std::fs::remove_dir_all(out);
    let start = SweepStart::New {
        config: Box::new(config),
        out: out.to_owned(),
    };
    let client = vernier_sweep::sweep_client(base_url, None, None).expect("a client");
    let before = self_cpu();
    let outcome = runtime.block_on(run_sweep(
        client,
        start,
        // GPU sampling off, or 10 times a second from the exporter (the sweep's default is 2).
        RunContext::default()
            .gpu_metrics_url(gpu_url.map(str::to_owned))
            .gpu_sample_interval(if gpu_url.is_some() {
                Duration::from_millis(100)
            } else {
                Duration::ZERO
            }),
        Arc::new(QuietObserver),
        None,
    ));
    let cpu = self_cpu() - before;
    outcome.expect("the sweep runs");
    cpu
}

/// A process that burns one core until its standard input closes.
struct Burner(std::process::Child);

impl Burner {
    fn start() -> Self {
        let exe = std::env::current_exe().expect("the benchmark's own path");
        Self(
            Command::new(exe)
                .env("VERNIER_BENCH_SIM", "burn")
                .stdin(Stdio::piped())
                .spawn()
                .expect("start a CPU burner"),
        )
    }
}

impl Drop for Burner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn burn() {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = Arc::clone(&stop);
    std::thread::spawn(move || {
        let mut line = String::new();
        while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
            line.clear();
        }
        watcher.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let mut x = 0u64;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn quantile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "an index into the slice"
    )]
    let index = ((values.len() as f64 - 1.0) * q).round() as usize;
    values.get(index).copied().unwrap_or(f64::NAN)
}

/// The sweep at `streams` streams under two CPU burners, against the simulator's ground truth:
/// What [`accuracy_under_load`] found.
struct Accuracy {
    /// Requests matched with the simulator's record.
    matched: usize,
    /// Decode median, ours / truth − 1, percent.
    decode_off_percent: f64,
    /// First-token arrival (the kernel's receive time) − the simulator's send, ms: median,
    /// p99 and the worst, over every matched request.
    gaps: (f64, f64, f64),
    /// Requests whose first token came in a read that also held a later event (their
    /// first-token instant is only an upper bound), and the worst gap among the others.
    n_shared: usize,
    worst_alone: f64,
}

/// The value of largest magnitude, NaN when there is none.
fn worst(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(f64::NAN, |worst, gap| {
        if gap.abs() > worst.abs() || worst.is_nan() {
            gap
        } else {
            worst
        }
    })
}

fn accuracy_under_load(streams: u32, tokens: u64, out: &std::path::Path) -> Accuracy {
    let truth_path = out.with_extension("truth.jsonl");
    let _ = std::fs::remove_file(&truth_path);
    let sim = Simulator::start_with(Duration::from_millis(5), Some(&truth_path));
    let burners = [Burner::start(), Burner::start()];
    sweep(
        &sim.base_url,
        tokens,
        streams,
        (8 / streams).max(2),
        false,
        None,
        out,
    );
    drop(burners);
    drop(sim);
    let truth: Vec<serde_json::Value> = std::fs::read_to_string(&truth_path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let journal = std::fs::read_to_string(out.join("journal.jsonl")).unwrap_or_default();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut first_token_gaps: Vec<(f64, bool)> = Vec::new();
    for line in journal.lines() {
        let Ok(attempt) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if attempt["type"] != "attempt" || attempt["phase"] != "measured" {
            continue;
        }
        let Some(nonce) = attempt["nonce"].as_str() else {
            continue;
        };
        let Some(record) = truth
            .iter()
            .find(|t| t["cache_salt"].as_str() == Some(nonce))
        else {
            continue;
        };
        if let (Some(a), Some(b)) = (
            attempt["measurement"]["decode_tokens_per_s"].as_f64(),
            record["true_decode_tokens_per_s"].as_f64(),
        ) {
            ours.push(a);
            theirs.push(b);
        }
        if let (Some(received), Some(arrival), Some(offset)) = (
            attempt["timeline"]["first_token_unix_ns"].as_f64(),
            record["arrival_unix_ns"].as_f64(),
            record["first_token_event_ns"].as_f64(),
        ) {
            let shared = attempt["measurement"]["first_token_read_shared"] == true;
            first_token_gaps.push(((received - arrival - offset) / 1e6, shared));
        }
    }
    let mut gaps: Vec<f64> = first_token_gaps.iter().map(|(gap, _)| *gap).collect();
    Accuracy {
        matched: ours.len(),
        decode_off_percent: (median(&mut ours) / median(&mut theirs) - 1.0) * 100.0,
        gaps: (
            median(&mut gaps),
            quantile(&mut gaps, 0.99),
            worst(gaps.iter().copied()),
        ),
        n_shared: first_token_gaps
            .iter()
            .filter(|(_, shared)| *shared)
            .count(),
        worst_alone: worst(
            first_token_gaps
                .iter()
                .filter(|(_, shared)| !shared)
                .map(|(gap, _)| *gap),
        ),
    }
}

/// (CPU seconds, events) of a run.
type Run = (f64, f64);

/// Prints a table row from a long and a short run; gives µs per event.
type Row = dyn Fn(&str, u64, Run, Run) -> f64;

/// The sweep at 64 and 256 streams, 100 events per second each: µs per event of each.
fn many_streams(scale: u64, short_tokens: u64, out: &std::path::Path, row: &Row) -> Vec<f64> {
    let sim = Simulator::start(Duration::from_millis(10));
    let mut many = Vec::new();
    for (streams, tokens) in [(64_u32, 400 / scale), (256, 100 / scale.min(10))] {
        let long = (
            sweep(&sim.base_url, tokens, streams, 1, false, None, out),
            events(tokens, u64::from(streams)),
        );
        let short = (
            sweep(&sim.base_url, short_tokens, streams, 1, false, None, out),
            events(short_tokens, u64::from(streams)),
        );
        many.push(row("sweep stream path", u64::from(streams), long, short));
    }
    drop(sim);
    many
}

/// The second table: the sweep under two CPU burners against the ground truth.
fn print_accuracy(quick: bool, out: &std::path::Path) {
    println!();
    println!("The sweep under two CPU-burning processes, against the simulator's ground truth");
    println!(
        "{:>8} {:>9} {:>18} {:>44} {:>30}",
        "streams",
        "requests",
        "decode median off",
        "first token received − sent",
        "first token in a shared read"
    );
    for streams in [1_u32, 16, 64] {
        let tokens = if quick { 20 } else { 200 };
        let a = accuracy_under_load(streams, tokens, out);
        let (gap_median, gap_p99, gap_worst) = a.gaps;
        println!(
            "{streams:>8} {:>9} {:>17.3}% {:>44} {:>30}",
            a.matched,
            a.decode_off_percent,
            format!("median {gap_median:.3} ms, p99 {gap_p99:.3}, worst {gap_worst:.3}"),
            format!("{}; worst of the rest {:.3} ms", a.n_shared, a.worst_alone)
        );
    }
    println!(
        "(a first token that shared its socket read with a later event has only an upper bound: the kernel stamps a read with its last segment's arrival; the sweep reports such requests)"
    );
}

fn per_event_us(long: (f64, f64), short: (f64, f64)) -> f64 {
    (long.0 - short.0) / (long.1 - short.1) * 1e6
}

/// A µs-per-event figure as printed: "n/a" for one that is not positive (the start-up's noise
/// outweighed the difference between the long and the short run, as in the tiny `--test` run)
/// or not a number (a run failed). A negative CPU cost is never a measurement.
fn us_text(us: f64) -> String {
    if us.is_finite() && us > 0.0 {
        format!("{us:.1}")
    } else {
        "n/a".to_owned()
    }
}

/// A path of the one-stream table: its name, and a run of it reading one stream of `tokens`
/// tokens giving its CPU in seconds (`None` when it failed).
type OneStreamPath<'a> = (&'static str, Box<dyn Fn(u64) -> Option<f64> + 'a>);

/// Every path's µs per event in each round (start-up subtracted: a long run minus a short
/// one; NaN where a run failed), the paths taking turns within a round and each round
/// starting one path further on; prints the median and range of each. Gives each path's name
/// and its figure per round.
fn one_stream(
    paths: &[OneStreamPath<'_>],
    (long_tokens, short_tokens): (u64, u64),
    rounds: usize,
) -> Vec<(&'static str, Vec<f64>)> {
    let mut figures: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    for round in 0..rounds {
        // Each round starts one path further on, so that over as many rounds as paths every
        // path takes every place in the order once: whatever the place costs (the first run
        // after another path's, say) falls on all of them alike.
        for i in (0..paths.len()).map(|i| (i + round) % paths.len()) {
            let run = &paths[i].1;
            figures[i].push(match (run(long_tokens), run(short_tokens)) {
                (Some(long), Some(short)) => per_event_us(
                    (long, events(long_tokens, 1)),
                    (short, events(short_tokens, 1)),
                ),
                _ => f64::NAN,
            });
        }
    }
    println!(
        "{:<24} {:>8} {:>10} {:>7} {:>12} {:>18}",
        "path", "streams", "events", "rounds", "µs per event", "range"
    );
    for ((name, _), figures) in paths.iter().zip(&figures) {
        let (n, us, low, high) = spread(figures);
        println!(
            "{name:<24} {:>8} {:>10.0} {n:>7} {:>12} {:>18}",
            1,
            events(long_tokens, 1) - events(short_tokens, 1),
            us_text(us),
            format!("{}–{}", us_text(low), us_text(high))
        );
    }
    paths.iter().map(|(name, _)| *name).zip(figures).collect()
}

/// Of the finite values: how many, the median, the least and the greatest.
fn spread(values: &[f64]) -> (usize, f64, f64, f64) {
    let mut finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    // `median` sorts them, so the ends are the least and the greatest.
    let us = median(&mut finite);
    (
        finite.len(),
        us,
        finite.first().copied().unwrap_or(f64::NAN),
        finite.last().copied().unwrap_or(f64::NAN),
    )
}

/// The goals' ratios, each as the median of the rounds' own ratios (the two paths ran
/// minutes apart at most, so a machine that drifts moves both) and its range: llama-benchy
/// against the sweep, the sweep and `measure` against curl, and against the bare tokio reader.
fn print_ratios(one: &[(&'static str, Vec<f64>)]) {
    let of = |name: &str| {
        one.iter()
            .find(|(path, _)| *path == name)
            .map(|(_, rounds)| rounds.as_slice())
    };
    let ratio = |a: &str, b: &str| -> Option<String> {
        let (a, b) = (of(a)?, of(b)?);
        // A round where either figure is not positive has no ratio (see `us_text`).
        let ratios: Vec<f64> = a
            .iter()
            .zip(b)
            .map(|(a, b)| {
                if *a > 0.0 && *b > 0.0 {
                    a / b
                } else {
                    f64::NAN
                }
            })
            .collect();
        let (n, median, low, high) = spread(&ratios);
        (n > 0).then(|| format!("{median:.2}x ({low:.2}–{high:.2} over {n} rounds)"))
    };
    if let (Some(sweep), Some(measure)) = (
        ratio("llama-benchy", "sweep stream path"),
        ratio("llama-benchy", "measure"),
    ) {
        println!(
            "llama-benchy against the sweep at 1 stream: {sweep} the sweep's CPU per event (goal: at least 2x); against measure {measure}"
        );
    }
    // Each path against curl reading the same events: the sweep's default events (token ids
    // and usage on every one) against curl asking for them too, the lean ones against plain curl.
    if let (Some(sweep), Some(measure), Some(lean)) = (
        ratio("sweep stream path", "curl -N, sweep's events"),
        ratio("measure", "curl -N"),
        ratio("sweep, lean events", "curl -N"),
    ) {
        println!(
            "against curl -N on the same events (goal for the sweep: at most 1.5x): sweep {sweep}; measure {measure}, sweep with lean events (no per-event token ids or usage) {lean}"
        );
    }
    if let Some(sampled) = ratio("sweep, GPU sampled 10/s", "sweep stream path") {
        println!(
            "the sweep with its GPUs sampled 10 times a second against sampling off (goal: 1.00x, within the rounds' spread): {sampled}"
        );
    }
    if let (Some(measure), Some(sweep), Some(lean)) = (
        ratio("measure", "bare tokio read"),
        ratio("sweep stream path", "bare tokio read"),
        ratio("sweep, lean events", "bare tokio read"),
    ) {
        println!(
            "against the bare tokio read: measure {measure}, sweep {sweep}, sweep with lean events (no per-event token ids or usage) {lean}"
        );
    }
}

fn main() {
    match std::env::var("VERNIER_BENCH_SIM").as_deref() {
        Ok("serve") => return serve(),
        Ok("burn") => return burn(),
        _ => {}
    }
    let quick = std::env::args().any(|a| a == "--test");
    let scale = if quick { 20 } else { 1 };
    let out = std::env::temp_dir().join(format!("vernier-cpu-bench-{}", std::process::id()));
    println!(
        "CPU per streamed event (user + system, start-up subtracted){}",
        if quick {
            ": --test, a tiny run whose figures mean nothing"
        } else {
            ""
        }
    );
    let row = |name: &str, streams: u64, long: (f64, f64), short: (f64, f64)| {
        let us = per_event_us(long, short);
        println!(
            "{name:<24} {streams:>8} {:>10.0} {:>10.1} {:>12}",
            long.1 - short.1,
            (long.0 - short.0) * 1e3,
            us_text(us)
        );
        us
    };
    // One stream at 400 events per second, every path in turn, `rounds` times over: a single
    // run of a path swings by a third or more on a shared machine, so each figure is the
    // median of the rounds, with the range beside it.
    let sim = Simulator::start(Duration::from_micros(2_500));
    let tokens = (4_000 / scale, 8);
    let rounds = if quick { 1 } else { 7 };
    let book = serve_book();
    let url = sim.base_url.as_str();
    let mut paths: Vec<OneStreamPath<'_>> = Vec::new();
    if curl(url, tokens.1, 1, false).is_some() {
        paths.push(("curl -N", Box::new(|t| curl(url, t, 1, false))));
        paths.push((
            "curl -N, sweep's events",
            Box::new(|t| curl(url, t, 1, true)),
        ));
    } else {
        println!("curl -N: not installed, or it failed; no floor to compare with");
    }
    paths.push(("bare tokio read", Box::new(|t| Some(bare_tokio(url, t)))));
    match book.as_deref() {
        Some(book) if llama_benchy(url, book, tokens.1).is_some() => {
            paths.push((
                "llama-benchy",
                Box::new(move |t| llama_benchy(url, book, t)),
            ));
        }
        _ => println!(
            "llama-benchy: not set up (eval \"$(scripts/llama-benchy.sh)\" sets VERNIER_BENCH_LLAMA_BENCHY and VERNIER_BENCH_TOKENIZER), or it failed"
        ),
    }
    paths.push(("measure", Box::new(|t| Some(measure(url, t)))));
    paths.push((
        "sweep stream path",
        Box::new(|t| Some(sweep(url, t, 1, 1, false, None, &out))),
    ));
    paths.push((
        "sweep, lean events",
        Box::new(|t| Some(sweep(url, t, 1, 1, true, None, &out))),
    ));
    let gpu_url = sim.gpu_url.as_str();
    paths.push((
        "sweep, GPU sampled 10/s",
        Box::new(|t| Some(sweep(url, t, 1, 1, false, Some(gpu_url), &out))),
    ));
    let one = one_stream(&paths, tokens, rounds);
    drop(paths);
    drop(sim);
    println!();
    println!("Many streams at once, 100 events per second each, one run each");
    println!(
        "{:<24} {:>8} {:>10} {:>10} {:>12}",
        "path", "streams", "events", "CPU ms", "µs per event"
    );
    let many = many_streams(scale, tokens.1, &out, &row);
    print_accuracy(quick, &out);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_file(out.with_extension("truth.jsonl"));
    print_ratios(&one);
    eprintln!(
        "sweep at 64 and 256 streams: {} and {} µs per event",
        us_text(many[0]),
        us_text(many[1])
    );
}
