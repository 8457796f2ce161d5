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

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "the server, the run, then each task's evidence in turn"
)]
fn against_a_real_llama_server_every_reply_is_on_file_and_no_answer_means_no_answer_line() {
    if skip_docker_tests() {
        return;
    }
    let Some((server, model)) = llama() else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let _server = Server(
        Command::new(&server)
            .args([
                "-m",
                &model,
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .args([
                "-t",
                "2",
                "-c",
                "4096",
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
