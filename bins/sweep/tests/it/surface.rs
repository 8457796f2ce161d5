//! What a new user touches first, through the real binary: the README's first command runs
//! twice in a row, `--overwrite` replaces only the run's own files, help is grouped and has
//! examples, token counts take `k`, and a model the server does not serve is refused.

use crate::support::{stderr, sweep_in as sweep};

/// A small run of the bundled simulator (no `--base-url`), with a `1k` prompt length.
const SMALL: [&str; 7] = [
    "--prompt-tokens",
    "64,1k",
    "--output-tokens",
    "8",
    "--reps",
    "1",
    "--quiet",
];

#[test]
fn the_first_command_runs_twice_into_two_dated_folders() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let first = sweep(dir.path(), &SMALL);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    // A second later, the same command: before, it failed on the first run's journal.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = sweep(dir.path(), &SMALL);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let mut runs: Vec<String> = std::fs::read_dir(dir.path().join("sweep-out"))
        .expect("sweep-out")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for run in &runs {
        // Named by the UTC start, e.g. 2026-12-03T09-30-00.
        assert_eq!(run.len(), 19, "{run}");
        assert_eq!(&run[10..11], "T", "{run}");
        let run_file: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("sweep-out").join(run).join("run.json"))
                .expect("run.json"),
        )
        .expect("JSON");
        // The 1k prompt length is 1024 tokens.
        let targets: Vec<u64> = run_file["cells"]
            .as_array()
            .expect("cells")
            .iter()
            .filter_map(|c| c["prompt_tokens_target"].as_u64())
            .collect();
        assert!(targets.contains(&1024), "{targets:?}");
        assert!(
            run_file["started_unix_ms"]
                .as_u64()
                .is_some_and(|ms| ms > 0)
        );
        let report =
            std::fs::read_to_string(dir.path().join("sweep-out").join(run).join("report.md"))
                .expect("report.md");
        assert!(report.contains("- Started: 20"), "{report}");
    }
}

#[test]
fn overwrite_replaces_the_run_and_leaves_other_files_alone() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = dir.path().join("out");
    let mut args: Vec<&str> = SMALL.to_vec();
    args.extend(["--out", "out"]);
    let first = sweep(dir.path(), &args);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    std::fs::write(out.join("notes.txt"), "mine").expect("a file of the user's");
    let refused = sweep(dir.path(), &args);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--resume"),
        "{}",
        stderr(&refused)
    );
    args.push("--overwrite");
    let replaced = sweep(dir.path(), &args);
    assert_eq!(replaced.status.code(), Some(0), "{}", stderr(&replaced));
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).expect("still there"),
        "mine"
    );
    let journal = std::fs::read_to_string(out.join("journal.jsonl")).expect("journal");
    let headers = journal
        .lines()
        .filter(|l| l.contains("\"type\":\"header\""))
        .count();
    assert_eq!(headers, 1, "one run in the journal, not two: {journal}");
}

#[test]
fn help_groups_the_flags_and_shows_examples() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let help = sweep(dir.path(), &["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    for heading in [
        "Server:",
        "Workload:",
        "Load:",
        "Output:",
        "Hosted endpoints:",
        "Examples:",
    ] {
        assert!(text.lines().any(|l| l == heading), "no {heading} in {text}");
    }
    assert!(text.contains("sweep --base-url http://"), "{text}");
    assert!(text.contains("111, 364, 5378 and 10714"), "{text}");
}

#[test]
fn json_prints_the_run_file_for_pipes() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut args: Vec<&str> = SMALL.to_vec();
    args.extend(["--json", "--out", "out"]);
    let output = sweep(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let printed: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("stdout is the run file as JSON");
    let written: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/run.json")).expect("run.json"),
    )
    .expect("JSON");
    assert_eq!(printed, written);
}

#[test]
fn a_malformed_size_exits_2_naming_the_flag() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let output = sweep(dir.path(), &["--prompt-tokens", "1kb"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--prompt-tokens"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.path().join("sweep-out").exists(), "nothing written");
}

#[test]
fn a_model_the_server_does_not_serve_is_refused_before_anything_is_measured() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut args: Vec<&str> = SMALL.to_vec();
    args.extend(["--model", "gpt-4o", "--out", "out"]);
    let output = sweep(dir.path(), &args);
    // Before, the run went ahead and titled its report "gpt-4o".
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(
        text.contains("--model") && text.contains("gpt-4o"),
        "{text}"
    );
    assert!(
        text.contains("vernier-sim"),
        "names what the server lists: {text}"
    );
    assert!(!dir.path().join("out").join("run.json").exists());
}

#[test]
fn dry_run_prints_the_plan_and_an_estimate_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let output = sweep(
        dir.path(),
        &[
            "--dry-run",
            "--prompt-tokens",
            "128,1k",
            "--output-tokens",
            "32",
            "--concurrency",
            "1,4",
            "--workload",
            "prose",
            "--reps",
            "2",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    // 1 workload × 2 lengths × 2 loads; (1 warm-up + 2) × (1 + 4) streams per length.
    assert!(text.contains("plan: 4 cells"), "{text}");
    assert!(
        text.contains("30 streamed requests, 960 tokens to generate"),
        "{text}"
    );
    assert!(text.contains("two probes measured"), "{text}");
    assert!(!dir.path().join("sweep-out").exists(), "nothing written");
}

#[test]
fn completions_are_printed_for_each_shell() {
    let dir = tempfile::tempdir().expect("temporary folder");
    for (shell, marker) in [
        ("bash", "_sweep()"),
        ("zsh", "#compdef sweep"),
        ("fish", "complete -c sweep"),
    ] {
        let output = sweep(dir.path(), &["completions", shell]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{shell}: {}",
            stderr(&output)
        );
        let script = String::from_utf8_lossy(&output.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(
            script.contains("prompt-tokens"),
            "{shell} completes the flags"
        );
    }
}
