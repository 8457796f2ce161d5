//! Studies: one file that reproduces a whole evaluation. Its extra body checked request by
//! request in the server's own log; a bad file refused at its line and column before any
//! request; a part kind defined here, outside the battery, run inside a study; a study cut
//! short and resumed without redoing its finished part; the bundled studies checked and run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use vernier_run::{
    Headline, PartContext, PartFailure, PartFuture, PartKind, PartOutcome, PartPlan, Score,
};
use vernier_test_support::fault_matrix::SimChild;

use crate::{battery, read_json, succeeded, text, versus};

vernier_test_support::simulator_entry_point!();

const SERVE: &str = "study::serve_simulator_when_asked";

/// The repository's root (the bundled studies' paths are read from there).
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository")
}

/// `battery run --study studies/NAME.toml --scaled --quiet` from the repository's root (where
/// the bundled studies' paths are read), against `base_url` (else the bundled simulator),
/// into `out`.
pub(crate) fn run_bundled(name: &str, base_url: Option<&str>, out: &Path) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_battery"));
    command
        .args(["run", "--study"])
        .arg(format!("studies/{name}.toml"))
        .args(["--scaled", "--quiet"]);
    if let Some(base_url) = base_url {
        command.args(["--base-url", base_url]);
    }
    command
        .arg("--out")
        .arg(out)
        .current_dir(repository())
        .output()
        .expect("run battery")
}

/// Every POST the simulator logged: (path, body).
fn logged(log: &Path) -> Vec<(String, serde_json::Value)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            (
                value["path"].as_str().unwrap_or_default().to_owned(),
                value["body"].clone(),
            )
        })
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the study");
    path
}

#[test]
fn the_targets_extra_body_goes_in_every_request_and_a_parts_override_in_its_own() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("requests.jsonl");
    let sim = SimChild::start(SERVE, &format!("--request-log {}", log.display()));
    let study = write(
        dir.path(),
        "study.toml",
        &format!(
            r#"
name = "thinking off, one part on"
[target]
base-url = "{}"
extra-body = {{ chat_template_kwargs = {{ enable_thinking = false }} }}
sampling = {{ temperature = 0.6, top-p = 0.95 }}

[[part]]
kind = "sweep"
prompt-tokens = [64]
output-tokens = [8]
concurrency = [1, 2]
reps = 2

[[part]]
kind = "suite"
name = "thinking-on"
tasks = ["last-digits", "tool-weather"]
budget-math = 64
budget-tools = 64
extra-body = {{ chat_template_kwargs = {{ enable_thinking = true }} }}
"#,
            sim.base_url()
        ),
    );
    let out = dir.path().join("out");
    let run = battery(&[
        "run",
        "--study",
        study.to_str().expect("UTF-8"),
        "--out",
        out.to_str().expect("UTF-8"),
        "--quiet",
    ]);
    let stdout = succeeded(&run);
    let chats: Vec<serde_json::Value> = logged(&log)
        .into_iter()
        .filter(|(path, _)| path == "/v1/chat/completions")
        .map(|(_, body)| body)
        .collect();
    let thinking: Vec<bool> = chats
        .iter()
        .map(|body| {
            body["chat_template_kwargs"]["enable_thinking"]
                .as_bool()
                .unwrap_or_else(|| panic!("a request without the extra body: {body}"))
        })
        .collect();
    // The parts run in turn: the sweep's requests (thinking off), then the suite's (on).
    let first_on = thinking
        .iter()
        .position(|on| *on)
        .expect("the suite's requests");
    assert!(first_on > 0, "the sweep sent requests first");
    assert!(
        thinking[first_on..].iter().all(|on| *on) && thinking[..first_on].iter().all(|on| !on),
        "every sweep request off, every suite request on: {thinking:?}"
    );
    let battery_file = read_json(&out.join("battery.json"));
    let suite_results = read_json(&out.join("thinking-on").join("results.json"));
    let attempts = suite_results["tasks"].as_array().map_or(0, Vec::len);
    assert_eq!(
        thinking.len() - first_on,
        attempts,
        "one request per suite attempt, each with the part's override"
    );
    // Sampling the sweep takes as a flag, the suite as its own: in every request.
    for body in &chats {
        assert_eq!(body["top_p"].as_f64(), Some(0.95), "{body}");
    }
    assert_eq!(battery_file["schema_version"], 2);
    assert_eq!(battery_file["parts"][0]["kind"], "sweep");
    assert_eq!(battery_file["parts"][1]["part"], "thinking-on");
    let totals = battery_file["totals"].as_array().expect("totals");
    let total = totals
        .iter()
        .find(|row| row["dimension"] == "total")
        .expect("a total row");
    assert_eq!(total["scored"].as_u64(), Some(2), "{total}");
    assert!(total["interval"].is_array(), "a Wilson interval: {total}");
    assert!(
        battery_file["wall_seconds"]
            .as_f64()
            .is_some_and(|s| s > 0.0)
    );
    assert!(
        stdout.contains("total") && stdout.contains("95% CI"),
        "the score table with intervals: {stdout}"
    );
    assert!(
        stdout.contains("decode per stream"),
        "the sweep's headline figures: {stdout}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(report.contains("| **total** |"), "{report}");
}

/// A bad study exits 2 naming file, line, column and the fix, and sends nothing.
#[test]
fn a_bad_study_is_refused_at_its_line_and_column_before_any_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("requests.jsonl");
    let sim = SimChild::start(SERVE, &format!("--request-log {}", log.display()));
    // After the target's two lines: `[[part]]` on line 3, `kind` on line 4.
    let cases = [
        (
            "unknown key",
            "[[part]]\nkind = \"sweep\"\npromt-tokens = [64]\n",
            ":5:1:",
            "prompt-tokens",
        ),
        (
            "wrong type",
            "[[part]]\nkind = \"sweep\"\nreps = \"five\"\n",
            ":5:",
            "reps",
        ),
        (
            "zero repetitions",
            "[[part]]\nkind = \"sweep\"\nprompt-tokens = [64]\nreps = 0\n",
            ":6:",
            "reps",
        ),
        (
            "unknown kind",
            "[[part]]\nkind = \"sweeps\"\n",
            ":4:",
            "sweep",
        ),
    ];
    for (case, parts, place, named) in cases {
        let toml = format!("[target]\nbase-url = \"{}\"\n{parts}", sim.base_url());
        let study = write(dir.path(), "bad.toml", &toml);
        let out = dir.path().join(case.replace(' ', "-"));
        let run = battery(&[
            "run",
            "--study",
            study.to_str().expect("UTF-8"),
            "--out",
            out.to_str().expect("UTF-8"),
        ]);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{case}: {stderr}");
        assert!(
            stderr.contains(&format!("bad.toml{place}")),
            "{case}: names bad.toml{place}: {stderr}"
        );
        assert!(stderr.contains(named), "{case}: names {named}: {stderr}");
        assert!(!out.exists(), "{case}: nothing written");
    }
    // A part whose code tasks need the grader, where no Docker engine answers.
    let study = write(
        dir.path(),
        "docker.toml",
        &format!(
            "[target]\nbase-url = \"{}\"\n[[part]]\nkind = \"suite\"\ntasks = [\"merge-intervals\"]\n",
            sim.base_url()
        ),
    );
    let run = Command::new(env!("CARGO_BIN_EXE_battery"))
        .args(["check", study.to_str().expect("UTF-8")])
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .expect("run battery check");
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    // A part-wide problem is placed at the part's `[[part]]` line.
    assert!(stderr.contains("docker.toml:3:1"), "{stderr}");
    assert!(stderr.to_lowercase().contains("docker"), "{stderr}");
    let chats = logged(&log)
        .into_iter()
        .filter(|(path, _)| path.contains("completions"))
        .count();
    assert_eq!(chats, 0, "no model request before the refusal");
}

/// A part kind defined outside the battery: it writes a file and scores one dimension.
struct Tally;

impl PartKind for Tally {
    fn name(&self) -> &'static str {
        "tally"
    }

    fn about(&self) -> &'static str {
        "counts to N, passing the even numbers"
    }

    fn command(&self) -> clap::Command {
        clap::Command::new("tally").arg(
            clap::Arg::new("count")
                .long("count")
                .required(true)
                .value_parser(clap::value_parser!(u64).range(1..)),
        )
    }

    fn plan<'a>(&'a self, _options: &'a [String]) -> PartFuture<'a, Result<PartPlan, String>> {
        Box::pin(async { Ok(PartPlan::default()) })
    }

    fn run<'a>(
        &'a self,
        options: Vec<String>,
        context: &'a PartContext,
    ) -> PartFuture<'a, Result<PartOutcome, PartFailure>> {
        Box::pin(async move {
            let matches = self
                .command()
                .no_binary_name(true)
                .try_get_matches_from(options)
                .map_err(|error| PartFailure::usage(error.to_string()))?;
            let count = *matches.get_one::<u64>("count").expect("required");
            std::fs::create_dir_all(&context.folder)
                .map_err(|error| PartFailure::usage(error.to_string()))?;
            let journal = context.folder.join("journal.jsonl");
            std::fs::write(&journal, format!("{{\"count\":{count}}}\n"))
                .map_err(|error| PartFailure::usage(error.to_string()))?;
            Ok(PartOutcome {
                files: vec![("journal".to_owned(), journal)],
                model: "tally".to_owned(),
                headlines: vec![Headline::new("counted", count as f64, "numbers")],
                scores: vec![Score::new("parity", count / 2, count)],
                ..PartOutcome::default()
            })
        })
    }
}

static TALLY: Tally = Tally;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_kind_defined_outside_the_battery_runs_in_a_study() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kinds: Vec<&dyn PartKind> = battery::study_cli::KINDS
        .iter()
        .copied()
        .chain(std::iter::once(&TALLY as &dyn PartKind))
        .collect();
    let kinds = vernier_battery::Kinds(&kinds);
    let (study, _) = vernier_battery::parse_study(
        "[[part]]\nkind = \"tally\"\ncount = 10\n[[part]]\nkind = \"tally\"\nname = \"more\"\ncount = 4\n",
        Path::new("tally.toml"),
    )
    .expect("a study of tallies");
    assert!(
        vernier_battery::check_study(&study, &kinds)
            .await
            .is_empty()
    );
    let (bad, _) = vernier_battery::parse_study(
        "[[part]]\nkind = \"tally\"\ncont = 10\n",
        Path::new("bad.toml"),
    )
    .expect("a study");
    let problems = vernier_battery::check_study(&bad, &kinds).await;
    assert!(
        problems
            .first()
            .is_some_and(|problem| problem.message.contains("did you mean `count`")),
        "{problems:?}"
    );
    let out = dir.path().join("out");
    let runner = vernier_battery::StudyRunner::new(kinds, vec!["battery".to_owned()]);
    let outcome = vernier_battery::run_study(
        vernier_battery::StudyStart::New {
            study: Box::new(study),
            file: None,
            out: out.clone(),
        },
        &runner,
        &vernier_battery::QuietBattery,
        vernier_run::never(),
    )
    .await
    .expect("the study runs");
    assert_eq!(outcome.exit_code(), 0);
    let file = read_json(&out.join("battery.json"));
    assert_eq!(file["parts"][0]["kind"], "tally");
    assert_eq!(file["parts"][1]["status"], "done");
    let total = file["totals"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["dimension"] == "total"))
        .expect("a total");
    // 5 of 10 and 2 of 4.
    assert_eq!(
        (total["passed"].as_u64(), total["scored"].as_u64()),
        (Some(7), Some(14))
    );
    // Wilson's 95% interval for 7 of 14: 0.2680 to 0.7320 (R: prop.test(7, 14,
    // correct = FALSE)$conf.int).
    let interval = total["interval"].as_array().expect("an interval");
    vernier_test_support::assert_close(interval[0].as_f64().expect("low"), 0.2680, 1e-3);
    vernier_test_support::assert_close(interval[1].as_f64().expect("high"), 0.7320, 1e-3);
    assert!(out.join("more").join("journal.jsonl").is_file());
}

/// A study interrupted in its second part resumes there: the first part's journal is not
/// touched again.
#[test]
fn a_study_cut_short_resumes_without_redoing_a_finished_part() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Each request of the second part streams 1,500 tokens at 1 ms a step.
    let sim = SimChild::start(SERVE, "");
    let study = write(
        dir.path(),
        "study.toml",
        &format!(
            "[target]\nbase-url = \"{}\"\n[[part]]\nkind = \"sweep\"\nname = \"first\"\nprompt-tokens = [64]\noutput-tokens = [8]\nreps = 2\n[[part]]\nkind = \"sweep\"\nname = \"second\"\nprompt-tokens = [64, 128]\noutput-tokens = [1500]\nreps = 6\n",
            sim.base_url()
        ),
    );
    let out = dir.path().join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_battery"))
        .args([
            "run",
            "--study",
            study.to_str().expect("UTF-8"),
            "--out",
            out.to_str().expect("UTF-8"),
            "--quiet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start battery");
    let second = out.join("second").join("journal.jsonl");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&second).is_ok_and(|text| text.contains("\"type\":\"rep_done\""))
    {
        assert!(Instant::now() < deadline, "the second part never measured");
        std::thread::sleep(Duration::from_millis(50));
    }
    vernier_test_support::fault_matrix::send("-INT", child.id());
    let stopped = child.wait_with_output().expect("battery ends");
    assert_eq!(stopped.status.code(), Some(130));
    // The command it prints continues the study, followed as printed.
    let printed = vernier_test_support::fault_matrix::resume_words(&stopped)
        .unwrap_or_else(|| panic!("a resume command: {}", text(&stopped.stderr)));
    assert_eq!(
        printed,
        ["run", "--quiet", "--resume", out.to_str().expect("UTF-8")],
        "{}",
        text(&stopped.stderr)
    );
    let first = out.join("first").join("journal.jsonl");
    let before = std::fs::read_to_string(&first).expect("the first part's journal");
    let file = read_json(&out.join("battery.json"));
    assert_eq!(file["parts"][0]["status"], "done");
    assert_eq!(file["parts"][1]["status"], "interrupted");
    let printed: Vec<&str> = printed.iter().map(String::as_str).collect();
    let resumed = battery(&printed);
    succeeded(&resumed);
    assert_eq!(
        std::fs::read_to_string(&first).expect("the first part's journal"),
        before,
        "the finished part is not run again"
    );
    let file = read_json(&out.join("battery.json"));
    assert_eq!(file["parts"][1]["status"], "done");
    assert_eq!(
        file["validity"]["verdict"].as_str().map(str::is_empty),
        Some(false)
    );
}

/// Each bundled study is read and checked by every part's own command line.
#[test]
fn the_bundled_studies_check_as_written_and_scaled() {
    let root = repository();
    for name in ["seed-000", "seed-003", "seed-004"] {
        let path = root.join("studies").join(format!("{name}.toml"));
        for scaled in [false, true] {
            let mut args = vec![
                "check".to_owned(),
                path.display().to_string(),
                "--base-url".to_owned(),
                "http://127.0.0.1:9".to_owned(),
            ];
            if scaled {
                args.push("--scaled".to_owned());
            }
            let run = Command::new(env!("CARGO_BIN_EXE_battery"))
                .args(&args)
                .current_dir(&root)
                .output()
                .expect("run battery check");
            assert_eq!(
                run.status.code(),
                Some(0),
                "{name} (scaled: {scaled}): {}{}",
                text(&run.stdout),
                text(&run.stderr)
            );
        }
    }
}

/// The bundled seed-000 study, scaled, end to end against the simulator with one command.
#[test]
fn the_seed_000_study_runs_scaled_against_the_simulator() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("seed-000");
    let run = run_bundled("seed-000", None, &out);
    let stdout = text(&run.stdout);
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "{stdout}{}",
        text(&run.stderr)
    );
    let file = read_json(&out.join("battery.json"));
    let parts = file["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 7);
    assert!(
        parts.iter().all(|part| part["status"] != "pending"),
        "every part ran: {file}"
    );
    assert!(stdout.contains("verdict"), "{stdout}");
    assert!(stdout.contains("time:"), "{stdout}");
}

/// Versus of two studies pairs part by part, names every option that differs (the extra body
/// included), and refuses studies of different parts unless told `--unpaired`.
#[test]
fn versus_of_two_studies_pairs_by_part_and_names_the_extra_body() {
    let dir = tempfile::tempdir().expect("temp dir");
    let study = |thinking: bool, tools: bool| {
        let mut text = format!(
            "[target]\nextra-body = {{ chat_template_kwargs = {{ enable_thinking = {thinking} }} }}\n[[part]]\nkind = \"sweep\"\nname = \"speed\"\nprompt-tokens = [64]\noutput-tokens = [8]\nreps = 2\n[[part]]\nkind = \"suite\"\nname = \"math\"\ntasks = [\"last-digits\"]\nbudget-math = 64\n"
        );
        if tools {
            text.push_str(
                "[[part]]\nkind = \"suite\"\nname = \"tools\"\ntasks = [\"tool-weather\"]\n",
            );
        }
        text
    };
    let run = |name: &str, text: &str| {
        let path = write(dir.path(), &format!("{name}.toml"), text);
        let out = dir.path().join(name);
        succeeded(&battery(&[
            "run",
            "--study",
            path.to_str().expect("UTF-8"),
            "--out",
            out.to_str().expect("UTF-8"),
            "--quiet",
        ]));
        out
    };
    let a = run("a", &study(false, true));
    let b = run("b", &study(true, false));
    let refused = crate::versus(&a, &b, &dir.path().join("v"));
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("part tools: only A runs it"), "{stderr}");
    assert!(stderr.contains("--unpaired"), "{stderr}");
    let out = dir.path().join("v");
    succeeded(&battery(&[
        "versus",
        a.to_str().expect("UTF-8"),
        b.to_str().expect("UTF-8"),
        "--out",
        out.to_str().expect("UTF-8"),
        "--unpaired",
    ]));
    let versus = read_json(&out.join("versus.json"));
    let settings: Vec<String> = versus["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .map(|setting| setting["what"].as_str().unwrap_or_default().to_owned())
        .collect();
    for part in ["speed", "math"] {
        assert!(
            settings
                .iter()
                .any(|what| what.starts_with(&format!("{part}: extra-body:"))
                    && what.contains("false")
                    && what.contains("true")),
            "{part}'s extra body named: {settings:?}"
        );
    }
    let suites: Vec<&str> = versus["suites"]
        .as_array()
        .expect("suites")
        .iter()
        .filter_map(|suite| suite["part"].as_str())
        .collect();
    assert_eq!(suites, vec!["math"], "paired by part name");
    let not_compared = versus["not_compared"].to_string();
    assert!(
        not_compared.contains("tools: only A ran it"),
        "{not_compared}"
    );
}

/// The bundled seed-003 and seed-004 studies, scaled, end to end with one command each
/// against the simulator served as a process (their swap, watch and soak parts need a server
/// of their own; the swap's two models are two names the simulator serves).
#[test]
fn the_seed_003_and_004_studies_run_scaled_against_a_served_simulator() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, sim_args) in [
        ("seed-003", "--model model-a --alias model-b"),
        ("seed-004", ""),
    ] {
        let sim = SimChild::start(SERVE, sim_args);
        let out = dir.path().join(name);
        let run = run_bundled(name, Some(&sim.base_url()), &out);
        let stdout = text(&run.stdout);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{name}: {stdout}{}",
            text(&run.stderr)
        );
        let file = read_json(&out.join("battery.json"));
        let parts = file["parts"].as_array().expect("parts");
        assert!(
            parts.iter().all(|part| part["status"] == "done"),
            "{name}: every part done: {file}"
        );
        assert!(stdout.contains("verdict"), "{name}: {stdout}");
        assert!(
            std::fs::read_to_string(out.join("report.md"))
                .is_ok_and(|report| report.contains("## Time")),
            "{name}: the report states the time"
        );
    }
}

/// The flags are shorthand for a study: `--save-study` writes it, and the study runs the same
/// work (the same sweep cells, the same suite tasks).
#[test]
fn a_battery_of_flags_saved_as_a_study_runs_the_same_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let saved = dir.path().join("quick.toml");
    let (flags, study) = (dir.path().join("flags"), dir.path().join("study"));
    succeeded(&battery(&[
        "run",
        "--preset",
        "quick",
        "--prompt-tokens",
        "64",
        "--reps",
        "2",
        "--quiet",
        "--save-study",
        saved.to_str().expect("UTF-8"),
        "--out",
        flags.to_str().expect("UTF-8"),
    ]));
    succeeded(&battery(&[
        "run",
        "--study",
        saved.to_str().expect("UTF-8"),
        "--quiet",
        "--out",
        study.to_str().expect("UTF-8"),
    ]));
    let cells = |folder: &Path| -> Vec<String> {
        let run = read_json(&folder.join("sweep").join("run.json"));
        run["cells"]
            .as_array()
            .expect("cells")
            .iter()
            .map(|cell| {
                format!(
                    "{} {} {} {} {}",
                    cell["workload"],
                    cell["prompt_tokens_target"],
                    cell["output_tokens"],
                    cell["concurrency"],
                    cell["n_reps"]
                )
            })
            .collect()
    };
    assert_eq!(cells(&flags), cells(&study));
    let tasks = |folder: &Path| -> Vec<String> {
        let results = read_json(&folder.join("suite").join("results.json"));
        results["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .filter_map(|task| task["id"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(tasks(&flags), tasks(&study));
    assert!(!tasks(&flags).is_empty());
}

/// Versus of two runs of the bundled seed-003 study gives the seed's table: decode by
/// workload, the prefill ratio by length and where it flattens, single against batched, the
/// swap cost, and MMLU-Pro's paired difference with its interval.
#[test]
fn versus_of_two_seed_003_runs_gives_the_seeds_table() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut outs = Vec::new();
    for name in ["a", "b"] {
        let sim = SimChild::start(SERVE, "--model model-a --alias model-b");
        let out = dir.path().join(name);
        succeeded(&run_bundled("seed-003", Some(&sim.base_url()), &out));
        outs.push(out);
    }
    let out = dir.path().join("v");
    let run = crate::versus(&outs[0], &outs[1], &out);
    let stdout = succeeded(&run);
    let versus = read_json(&out.join("versus.json"));
    let dimensions: Vec<&str> = versus["glance"]
        .as_array()
        .expect("glance")
        .iter()
        .filter_map(|row| row["dimension"].as_str())
        .collect();
    for wanted in [
        "decode tok/s, prose, one stream",
        "decode tok/s, code, one stream",
        "decode tok/s per stream at 2 streams",
        "swap model-a → model-b",
        "swap model-b → model-a",
        "pass rate, mmlu-pro: all",
    ] {
        assert!(
            dimensions.iter().any(|d| d.starts_with(wanted)),
            "{wanted} in {dimensions:?}"
        );
    }
    assert!(
        versus["prefill"]
            .as_array()
            .is_some_and(|trends| !trends.is_empty()),
        "the prefill ratio by length: {}",
        versus["prefill"]
    );
    assert!(
        versus["batching"]
            .as_array()
            .is_some_and(|rows| !rows.is_empty()),
        "single against batched"
    );
    let mmlu = versus["suites"]
        .as_array()
        .and_then(|suites| suites.iter().find(|suite| suite["part"] == "mmlu-pro"))
        .expect("MMLU-Pro paired");
    assert!(mmlu["quality"][0]["interval"].is_object(), "{mmlu}");
    let markdown = std::fs::read_to_string(out.join("versus.md")).expect("versus.md");
    assert!(markdown.contains("items for ±2 pts"), "{markdown}");
    assert!(stdout.contains("swap model-a → model-b"), "{stdout}");
}

/// A bundled study cut short in its third part resumes there: the parts it finished are not
/// run again, and the study ends with a verdict.
#[test]
fn the_seed_003_study_cut_short_resumes_without_redoing_its_finished_parts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = repository();
    // Each answer opens with 400 reasoning tokens at 1 ms a step: the dataset part takes
    // seconds, time to interrupt it.
    let sim = SimChild::start(
        SERVE,
        "--model model-a --alias model-b --reasoning-tokens 400",
    );
    let out = dir.path().join("seed-003");
    let mut child = Command::new(env!("CARGO_BIN_EXE_battery"))
        .args([
            "run",
            "--study",
            "studies/seed-003.toml",
            "--scaled",
            "--quiet",
        ])
        .args(["--base-url", &sim.base_url(), "--out"])
        .arg(&out)
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start battery");
    let dataset = out.join("mmlu-pro").join("journal.jsonl");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !std::fs::read_to_string(&dataset).is_ok_and(|text| text.lines().count() >= 3) {
        assert!(Instant::now() < deadline, "the dataset part never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    vernier_test_support::fault_matrix::send("-INT", child.id());
    let status = child.wait().expect("battery ends");
    assert_eq!(status.code(), Some(130));
    let file = read_json(&out.join("battery.json"));
    let statuses: Vec<&str> = file["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .filter_map(|part| part["status"].as_str())
        .collect();
    assert_eq!(statuses, ["done", "done", "interrupted"]);
    let journals = ["speed", "swap"].map(|part| out.join(part).join("journal.jsonl"));
    let before: Vec<String> = journals
        .iter()
        .map(|journal| std::fs::read_to_string(journal).expect("a finished part's journal"))
        .collect();
    let resumed = Command::new(env!("CARGO_BIN_EXE_battery"))
        .args(["run", "--quiet", "--resume"])
        .arg(&out)
        .current_dir(&root)
        .output()
        .expect("resume battery");
    let stdout = succeeded(&resumed);
    for (journal, before) in journals.iter().zip(&before) {
        assert_eq!(
            &std::fs::read_to_string(journal).expect("the journal"),
            before,
            "{} is not run again",
            journal.display()
        );
    }
    let file = read_json(&out.join("battery.json"));
    assert_eq!(file["parts"][2]["status"], "done");
    assert!(stdout.contains("verdict"), "{stdout}");
}

/// Versus of two studies shows the headline figures of the parts it has no reader of its own
/// for (agent sessions, a second sweep) side by side, part by part.
#[test]
fn versus_of_two_studies_shows_every_parts_headlines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = "[[part]]\nkind = \"sweep\"\nname = \"one-stream\"\nprompt-tokens = [64]\noutput-tokens = [8]\nreps = 2\n[[part]]\nkind = \"sweep\"\nname = \"two-streams\"\nprompt-tokens = [64]\noutput-tokens = [8]\nconcurrency = [2]\nreps = 2\n[[part]]\nkind = \"agent\"\nsessions = 2\nturns = 2\nmax-tokens = 16\n";
    let path = write(dir.path(), "study.toml", text);
    let mut outs = Vec::new();
    for name in ["a", "b"] {
        let out = dir.path().join(name);
        succeeded(&battery(&[
            "run",
            "--study",
            path.to_str().expect("UTF-8"),
            "--quiet",
            "--out",
            out.to_str().expect("UTF-8"),
        ]));
        outs.push(out);
    }
    let out = dir.path().join("v");
    succeeded(&crate::versus(&outs[0], &outs[1], &out));
    let versus = read_json(&out.join("versus.json"));
    let dimensions: Vec<&str> = versus["glance"]
        .as_array()
        .expect("glance")
        .iter()
        .filter_map(|row| row["dimension"].as_str())
        .collect();
    for part in ["two-streams: ", "agent: "] {
        assert!(
            dimensions.iter().any(|d| d.starts_with(part)),
            "{part} in {dimensions:?}"
        );
    }
    assert!(
        !dimensions.iter().any(|d| d.starts_with("one-stream: ")),
        "the first sweep is read from its journal, not its headlines: {dimensions:?}"
    );
}

/// Quality under load as a study's part: both passes in the part's folder, the drop with its
/// interval as the part's figures, and a row of `battery versus` between two such studies.
#[test]
fn an_under_load_part_reports_the_drop_and_versus_shows_it_as_a_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sim = SimChild::start(SERVE, "");
    let study = write(
        dir.path(),
        "study.toml",
        &format!(
            "[target]\nbase-url = \"{}\"\n[[part]]\nkind = \"under-load\"\nname = \"load\"\nin-flight = 3\ntasks = [\"last-digits\", \"crt\", \"tool-weather\"]\nbudget-math = 32\nbudget-tools = 32\n",
            sim.base_url()
        ),
    );
    let outs: Vec<PathBuf> = ["a", "b"]
        .iter()
        .map(|name| dir.path().join(name))
        .collect();
    for out in &outs {
        succeeded(&battery(&[
            "run",
            "--study",
            study.to_str().expect("UTF-8"),
            "--out",
            out.to_str().expect("UTF-8"),
            "--quiet",
        ]));
        let part = out.join("load");
        for pass in ["alone", "loaded"] {
            let results = read_json(&part.join(pass).join("results.json"));
            // 3 tasks for 3 in flight: one sample each, every one scored.
            assert_eq!(results["main"]["total"]["n_scored"], 3, "{pass}: {results}");
        }
        let quality = read_json(&part.join("load-quality.json"));
        assert_eq!(quality["in_flight"], 3);
        assert_eq!(quality["rows"][0]["name"], "total");
        let battery_file = read_json(&out.join("battery.json"));
        let headlines = battery_file["parts"][0]["headlines"].to_string();
        assert!(
            headlines.contains("quality drop at 3 in flight"),
            "{headlines}"
        );
    }
    let compared = versus(&outs[0], &outs[1], &dir.path().join("v"));
    let stdout = succeeded(&compared);
    let table = std::fs::read_to_string(dir.path().join("v").join("versus.md")).expect("versus.md");
    assert!(
        table.contains("quality drop at 3 in flight"),
        "{stdout}\n{table}"
    );
}
