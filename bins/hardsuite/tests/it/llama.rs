//! The hard suite against a real `llama-server` (SmolLM2-135M-Instruct, built and cached by
//! `scripts/llama-server.sh`), with small budgets: every task's raw reply is on file and shown,
//! and a `no_answer` reply really holds no answer line. Missing, the server fails the test
//! loudly unless `VERNIER_SKIP_LLAMA_TESTS=1`.

use std::process::Command;

use crate::{json_lines, skip_docker_tests};

pub(crate) use vernier_test_support::llama_server;

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

/// A started server with this context, unless the tests are skipped on purpose.
/// Starts `llama-server` on a free loopback port with a context of `context` tokens (one slot,
/// two threads) and waits until it is healthy.
pub(crate) fn llama_on(test: &str, context: u32) -> Option<(llama_server::Server, u16)> {
    if skip_docker_tests() {
        return None;
    }
    let context = context.to_string();
    let server = llama_server::start_for(
        test,
        &[
            "-t",
            "2",
            "-c",
            &context,
            "-np",
            "1",
            "--jinja",
            "--no-warmup",
        ],
    )?;
    let port = server.port;
    Some((server, port))
}

#[test]
fn long_context_on_a_real_llama_server_hits_its_lengths_and_keeps_refusals_apart() {
    let Some((_server, port)) = llama_on(
        "long_context_on_a_real_llama_server_hits_its_lengths_and_keeps_refusals_apart",
        8192,
    ) else {
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
fn two_prompts_that_fit_alone_but_not_together_take_turns_on_a_real_llama_server() {
    if skip_docker_tests() {
        return;
    }
    let test = "two_prompts_that_fit_alone_but_not_together_take_turns_on_a_real_llama_server";
    // Automatic slots (llama-server's default): four slots reading and writing one cache of
    // 2,048 cells. Two 1,280-token prompts with 48-token budgets fit it alone and overflow it
    // together: sent at once, both fail after their prefill ("Context size has been
    // exceeded.", llama.cpp b11434 tools/server/server-context.cpp).
    let Some(server) =
        llama_server::start_for(test, &["-t", "2", "-c", "2048", "--jinja", "--no-warmup"])
    else {
        return;
    };
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(["run", "--suite", "context", "--concurrency", "2"])
        .args(["--base-url", &format!("http://127.0.0.1:{}", server.port)])
        .args([
            "--lengths",
            "1280",
            "--depths",
            "0,100",
            "--multi-needles",
            "0",
        ])
        .args(["--budget-context", "48", "--out"])
        .arg(&out)
        .output()
        .expect("run hardsuite");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(
        stderr
            .contains("kept within 2048 tokens, the context each of the server's 4 slots reports"),
        "{stderr}"
    );
    let journal = json_lines(&out.join("journal.jsonl"));
    assert_eq!(
        journal[0]["shared_capacity"]["tokens"], 2048,
        "{}",
        journal[0]
    );
    let attempts: Vec<&serde_json::Value> = journal
        .iter()
        .filter(|line| line["type"] == "attempt")
        .collect();
    // Planned, not repaired: one try per task, none failed, one held back for the other.
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    for attempt in &attempts {
        assert_ne!(attempt["outcome"], "infra", "{attempt}");
        assert!(attempt["alone"].is_null(), "{attempt}");
    }
    let waited = attempts
        .iter()
        .filter(|attempt| attempt["room_wait_ms"].as_f64().is_some())
        .count();
    assert_eq!(waited, 1, "{attempts:?}");
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("1 try waited"), "{report}");
}

/// Image tokens the synthetic projector gives one image: `scripts/mmproj.py` takes 64x64
/// images in 16x16 patches, (64 / 16)^2, one token per patch.
const TOKENS_PER_IMAGE: u64 = 16;

/// The journal's attempts of a run of `suite` against the server at `port` (which must
/// finish, exit 0).
fn media_run(
    port: u16,
    out: &std::path::Path,
    suite: &str,
    extra: &[&str],
) -> Vec<serde_json::Value> {
    let run = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args([
            "run",
            "--suite",
            suite,
            "--quiet",
            "--budget-vision",
            "8",
            "--budget-video",
            "8",
        ])
        .args(["--base-url", &format!("http://127.0.0.1:{port}"), "--out"])
        .arg(out)
        .args(extra)
        .output()
        .expect("run hardsuite");
    assert_eq!(
        run.status.code(),
        Some(0),
        "{suite}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    json_lines(&out.join("journal.jsonl"))
        .into_iter()
        .filter(|line| line["type"] == "attempt")
        .collect()
}

/// The server's count of `task`'s text alone, in the chat template (`/tokenize` with the
/// messages).
fn text_tokens(port: u16, task: &vernier_tasks::Task) -> u64 {
    let client = vernier_openai::ClientBuilder::new(&format!("http://127.0.0.1:{port}"))
        .build()
        .expect("client");
    let messages: Vec<vernier_openai::ChatMessage> = task
        .messages
        .iter()
        .map(|m| vernier_openai::ChatMessage::new(m.role.clone(), m.content.clone()))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime
        .block_on(client.tokenize_chat("m", &messages))
        .expect("the server counts the text")
        .count as u64
}

#[test]
fn a_real_llama_server_with_a_projector_takes_every_image_and_video_task_and_counts_its_media() {
    let test = "a_real_llama_server_with_a_projector_takes_every_image_and_video_task_and_counts_its_media";
    let Some(mmproj) = llama_server::locate_mmproj(test) else {
        return;
    };
    let Some(server) = llama_server::start_for(
        test,
        &[
            "-t",
            "2",
            "-c",
            "4096",
            "-np",
            "1",
            "--jinja",
            "--no-warmup",
            "--mmproj",
            &mmproj,
        ],
    ) else {
        return;
    };
    let port = server.port;
    // The server says it sees images and videos.
    let props = Command::new("curl")
        .args(["-sf", &format!("http://127.0.0.1:{port}/props")])
        .output()
        .expect("curl /props");
    let props: serde_json::Value = serde_json::from_slice(&props.stdout).expect("JSON /props");
    assert_eq!(
        props["modalities"]["vision"], true,
        "{}",
        props["modalities"]
    );
    assert_eq!(
        props["modalities"]["video"], true,
        "{}",
        props["modalities"]
    );
    let folder = tempfile::tempdir().expect("temporary folder");

    check_vision(port, &folder.path().join("vision"));
    check_video(port, &folder.path().join("video-clips"), &[]);
    check_video(
        port,
        &folder.path().join("video-frames"),
        &["--video-as", "frames"],
    );
    drop(server);
}

#[test]
fn a_real_llama_server_without_a_projector_gives_unsupported_for_every_image_and_video_task() {
    let Some((_server, port)) = llama_on(
        "a_real_llama_server_without_a_projector_gives_unsupported_for_every_image_and_video_task",
        2048,
    ) else {
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
    let Some((_server, port)) = llama_on(
        "against_a_real_llama_server_every_reply_is_on_file_and_no_answer_means_no_answer_line",
        4096,
    ) else {
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

/// The vision suite against the server with a projector, into `out`.
fn check_vision(port: u16, out: &std::path::Path) {
    // Vision: every request accepted and scored (never infra or unsupported), each image
    // counted: the prompt is the text's own count plus TOKENS_PER_IMAGE per image and one
    // overhead (the media markers' template text) the same for every task, so a task with
    // three images is three images dearer, not one.
    let attempts = media_run(port, out, "vision", &[]);
    let header = &json_lines(&out.join("journal.jsonl"))[0];
    let seed = header["vision_seed"].as_u64().expect("the vision seed");
    let suite = vernier_tasks::vision_suite(seed, 8);
    assert_eq!(attempts.len(), suite.tasks.len(), "one try per task");
    let mut overheads = std::collections::BTreeSet::new();
    let mut most_images = 0;
    for attempt in &attempts {
        let outcome = attempt["outcome"].as_str().expect("an outcome");
        assert!(
            ["pass", "wrong", "no_answer", "cut_off"].contains(&outcome),
            "{attempt}"
        );
        let id = attempt["task_id"].as_str().expect("an id");
        let task = suite.tasks.iter().find(|t| t.id == id).expect("the task");
        let images = task
            .spec::<vernier_tasks::VisionSpec>()
            .expect("a vision task")
            .images
            .len() as u64;
        most_images = most_images.max(images);
        let prompt = attempt["prompt_tokens"]
            .as_u64()
            .expect("usage.prompt_tokens");
        let text_only = text_tokens(port, task);
        assert!(
            prompt >= text_only + TOKENS_PER_IMAGE * images,
            "{id}: {prompt} for {text_only} + {images} images"
        );
        overheads.insert(prompt - text_only - TOKENS_PER_IMAGE * images);
    }
    assert!(most_images >= 2, "the suite has multi-image tasks");
    assert_eq!(
        overheads.len(),
        1,
        "one overhead for every task: {overheads:?}"
    );
}

/// The video suite against the server with a projector, into `out`, its clips sent as
/// llama.cpp's `video_url` (its own ffmpeg decoding) or, with `--video-as frames`, as captioned
/// frames: every request accepted and scored, its media counted (at least one frame's worth),
/// and `show` prints a media task's evidence as for any other.
fn check_video(port: u16, out: &std::path::Path, extra: &[&str]) {
    let name = extra.last().copied().unwrap_or("clips");
    let attempts = media_run(port, out, "video", extra);
    let header = &json_lines(&out.join("journal.jsonl"))[0];
    let seed = header["video_seed"].as_u64().expect("the video seed");
    let suite = vernier_tasks::video_suite(seed, 8);
    assert_eq!(
        attempts.len(),
        suite.tasks.len(),
        "{name}: one try per task"
    );
    for attempt in &attempts {
        let outcome = attempt["outcome"].as_str().expect("an outcome");
        assert!(
            ["pass", "wrong", "no_answer", "cut_off"].contains(&outcome),
            "{name}: {attempt}"
        );
        let id = attempt["task_id"].as_str().expect("an id");
        let task = suite.tasks.iter().find(|t| t.id == id).expect("the task");
        let prompt = attempt["prompt_tokens"]
            .as_u64()
            .expect("usage.prompt_tokens");
        let text_only = text_tokens(port, task);
        assert!(
            prompt >= text_only + TOKENS_PER_IMAGE,
            "{name} {id}: {prompt} for {text_only}"
        );
    }
    // `show` prints a media task's evidence as for any other.
    let first = attempts[0]["task_id"].as_str().expect("an id");
    let show = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .arg("show")
        .arg(out)
        .arg(first)
        .output()
        .expect("run hardsuite show");
    let shown = String::from_utf8_lossy(&show.stdout);
    assert_eq!(show.status.code(), Some(0), "{shown}");
    assert!(shown.contains(first), "{shown}");
}
