//! The hard suite against a real `llama-server` (SmolLM2-135M-Instruct, built and cached by
//! `scripts/llama-server.sh`), with small budgets: every task's raw reply is on file and shown,
//! and a `no_answer` reply really holds no answer line. Missing, the server fails the test
//! loudly unless `VERNIER_SKIP_LLAMA_TESTS=1`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{json_lines, skip_docker_tests};

fn llama() -> Option<(String, String)> {
    if std::env::var("VERNIER_SKIP_LLAMA_TESTS").as_deref() == Ok("1") {
        return None;
    }
    let from_env = std::env::var("VERNIER_LLAMA_SERVER")
        .ok()
        .zip(std::env::var("VERNIER_LLAMA_MODEL").ok());
    if from_env.is_some() {
        return from_env;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llama-server.sh");
    let output = Command::new("bash")
        .arg(script)
        .arg("--check")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key).map(str::to_owned))
    };
    let found = value("VERNIER_LLAMA_SERVER=").zip(value("VERNIER_LLAMA_MODEL="));
    assert!(
        found.is_some(),
        "this test needs llama-server: run `eval \"$(scripts/llama-server.sh)\"` first, or set VERNIER_SKIP_LLAMA_TESTS=1"
    );
    found
}

/// Whether `content` has an answer line as the task asks for it: a line that, past any
/// whitespace and Markdown marks, starts with `ANSWER:` (in any case) and has a value after
/// it, or a `\boxed{…}` with something inside.
fn has_answer_line(content: &str) -> bool {
    let answer_line = content.lines().any(|line| {
        let trimmed = line.trim_start_matches(|c: char| c.is_whitespace() || "*_#>`".contains(c));
        let lower = trimmed.to_ascii_lowercase();
        lower.strip_prefix("answer").is_some_and(|rest| {
            rest.trim_start_matches(['*', '_', ' '])
                .strip_prefix(':')
                .is_some_and(|value| {
                    !value
                        .trim_matches(|c: char| c.is_whitespace() || "*_`$.".contains(c))
                        .is_empty()
                })
        })
    });
    let boxed = content.split("\\boxed{").skip(1).any(|after| {
        after
            .split('}')
            .next()
            .is_some_and(|inner| !inner.trim().is_empty())
    });
    answer_line || boxed
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn healthy(port: u16) -> bool {
    use std::io::{Read as _, Write as _};
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok_and(|mut stream| {
        let _ = stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.starts_with("HTTP/1.1 200")
    })
}

/// Starts `llama-server` on a free loopback port with a context of `context` tokens (one slot,
/// two threads) and waits until it is healthy.
fn start(server: &str, model: &str, context: u32) -> (Server, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = Server(
        Command::new(server)
            .args([
                "-m",
                model,
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .args([
                "-t",
                "2",
                "-c",
                &context.to_string(),
                "-np",
                "1",
                "--jinja",
                "--no-warmup",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start llama-server"),
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    while !healthy(port) {
        assert!(
            Instant::now() < deadline,
            "llama-server did not become healthy"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (child, port)
}

/// A started server with this context, unless the tests are skipped on purpose.
fn llama_on(context: u32) -> Option<(Server, u16)> {
    if skip_docker_tests() {
        return None;
    }
    let (server, model) = llama()?;
    Some(start(&server, &model, context))
}

#[test]
fn long_context_on_a_real_llama_server_hits_its_lengths_and_keeps_refusals_apart() {
    let Some((_server, port)) = llama_on(8192) else {
        return;
    };
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(["run", "--suite", "context", "--quiet"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}")])
        .args([
            "--lengths",
            "1k,4k,16k",
            "--depths",
            "0,100",
            "--multi-needles",
            "0",
        ])
        .args(["--budget-context", "48", "--out"])
        .arg(&out)
        .output()
        .expect("run hardsuite");
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let journal = json_lines(&out.join("journal.jsonl"));
    let header = &journal[0];
    assert_eq!(header["context_limit"]["tokens"], 8192, "{header}");
    assert_eq!(header["context_limit"]["source"], "n_ctx");
    let attempts: Vec<&serde_json::Value> = journal
        .iter()
        .filter(|line| line["type"] == "attempt")
        .collect();
    assert_eq!(attempts.len(), 6, "one try per task: {attempts:?}");
    for attempt in attempts {
        let context = &attempt["context"];
        let target = context["target_tokens"].as_f64().expect("a target");
        if target > 8192.0 {
            // Above the server's context: its own refusal, kept, and never a model failure.
            assert_eq!(attempt["outcome"], "context_exceeded", "{attempt}");
            let message = attempt["server_message"]
                .as_str()
                .expect("the server's words");
            assert!(message.contains("context"), "{message}");
            continue;
        }
        assert_ne!(attempt["outcome"], "infra", "{attempt}");
        assert_eq!(context["count_method"], "tokenize_chat");
        let prompt_tokens = attempt["prompt_tokens"]
            .as_f64()
            .expect("usage.prompt_tokens");
        assert!(
            (prompt_tokens - target).abs() <= 0.02 * target,
            "{prompt_tokens} tokens for a target of {target}"
        );
        // cache_prompt: false and a fresh nonce: nothing came from the server's cache.
        assert!(
            attempt["cached_tokens"].as_u64().unwrap_or(0) == 0,
            "{attempt}"
        );
    }
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(
        report.contains("- 16k: 2 request(s); the server said:"),
        "{report}"
    );
}

#[test]
fn a_real_llama_server_without_a_projector_gives_unsupported_for_every_image_and_video_task() {
    let Some((_server, port)) = llama_on(2048) else {
        return;
    };
    let folder = tempfile::tempdir().expect("temporary folder");
    for (suite, extra, n_tasks, words) in [
        ("vision", None, 22, "image input is not supported"),
        ("video", None, 10, "video input is not supported"),
        // Sent as frames, the clips are images to the server.
        ("video", Some("frames"), 10, "image input is not supported"),
    ] {
        let out = folder
            .path()
            .join(format!("{suite}-{}", extra.unwrap_or("clips")));
        let mut command = Command::new(env!("CARGO_BIN_EXE_hardsuite"));
        command
            .args(["run", "--suite", suite, "--quiet"])
            .args(["--base-url", &format!("http://127.0.0.1:{port}"), "--out"])
            .arg(&out);
        if let Some(video_as) = extra {
            command.args(["--video-as", video_as]);
        }
        let run = command.output().expect("run hardsuite");
        assert_eq!(
            run.status.code(),
            Some(0),
            "{suite}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let attempts: Vec<serde_json::Value> = json_lines(&out.join("journal.jsonl"))
            .into_iter()
            .filter(|line| line["type"] == "attempt")
            .collect();
        assert_eq!(attempts.len(), n_tasks, "{suite}: one try per task");
        for attempt in &attempts {
            assert_eq!(attempt["outcome"], "unsupported", "{suite}: {attempt}");
            let said = attempt["server_message"]
                .as_str()
                .expect("the server's words");
            assert!(said.contains(words), "{suite}: {said}");
        }
    }
}

#[test]
fn against_a_real_llama_server_every_reply_is_on_file_and_no_answer_means_no_answer_line() {
    let Some((_server, port)) = llama_on(4096) else {
        return;
    };
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args([
            "run",
            "--base-url",
            &format!("http://127.0.0.1:{port}"),
            "--quiet",
        ])
        .args([
            "--budget-math",
            "160",
            "--budget-code",
            "200",
            "--budget-tools",
            "96",
            "--out",
        ])
        .arg(&out)
        .output()
        .expect("run hardsuite");
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).expect("results.json"),
    )
    .expect("JSON");
    let replies = json_lines(&out.join("replies.jsonl"));
    let tasks = results["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 28);
    let mut no_answers = 0;
    for task in tasks {
        let id = task["id"].as_str().expect("an id");
        let outcome = task["samples"][0]["outcome"].as_str().expect("an outcome");
        if outcome == "infra" {
            continue;
        }
        let shown = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
            .arg("show")
            .arg(&out)
            .arg(id)
            .output()
            .expect("hardsuite show");
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(
            text.contains("--- content ---") && !text.contains("no reply on file"),
            "{id}: {text}"
        );
        if outcome == "no_answer" {
            no_answers += 1;
            let content = replies
                .iter()
                .rfind(|r| r["task_id"] == id)
                .and_then(|r| r["content"].as_str())
                .expect("the reply")
                .to_owned();
            assert!(!has_answer_line(&content), "{id}: {content}");
        }
    }
    #[expect(
        clippy::print_stderr,
        reason = "what the small model did belongs in the test output"
    )]
    {
        eprintln!("{no_answers} no_answer of 28 against SmolLM2-135M");
    }
}
