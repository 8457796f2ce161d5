//! The video suite and the probe: clips sent as `video_url` parts or, with `--video-as
//! frames`, as timed `image_url` frames; a scripted simulator's plan reproduced task by task;
//! servers that cannot take videos giving `unsupported`, never a score.

use std::path::Path;

use hardsuite::CommandOutput;
use vernier_sim::{MEDIA_TOKENS, MediaInput};

use crate::vision::run;
use crate::{arg, json_lines, run_cli};

/// Per journal line: the task id and the media tokens the simulator counted.
fn media_tokens(out: &Path) -> Vec<(String, u64)> {
    json_lines(&out.join("journal.jsonl"))
        .iter()
        .filter(|line| line["type"] == "attempt")
        .map(|line| {
            (
                line["task_id"].as_str().expect("an id").to_owned(),
                line["media_tokens"].as_u64().expect("media tokens"),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_scripted_plan_is_reproduced_with_clips_sent_as_videos_or_as_frames() {
    let folder = tempfile::tempdir().expect("temporary folder");
    for (video_as, parts_per_clip) in [("video", 1), ("frames", 12)] {
        let out = folder.path().join(video_as);
        let results = run("video", &out, &["--video-as", video_as]).await;
        let outcomes: Vec<&str> = results
            .tasks
            .iter()
            .map(|t| t.samples[0].outcome.as_str())
            .collect();
        // By place: the first wrong, the second without an answer line, the third cut off in
        // its reasoning, every other one right (10 tasks: 5 families, 2 each).
        assert_eq!(outcomes.len(), 10, "{video_as}");
        assert_eq!(
            &outcomes[..3],
            ["wrong", "no_answer", "cut_off"],
            "{video_as}"
        );
        assert!(
            outcomes[3..].iter().all(|o| *o == "pass"),
            "{video_as}: {outcomes:?}"
        );
        assert_eq!(
            (results.main.total.n_pass, results.main.total.n_scored),
            (7, 10)
        );
        // The simulator counted one part per clip, or one per sampled frame (6 s at 2 per
        // second), and reported them apart in prompt_tokens_details.
        for (id, tokens) in media_tokens(&out) {
            let clips = if id.contains("compare-speed") { 2 } else { 1 };
            assert_eq!(
                tokens,
                u64::from(MEDIA_TOKENS) * clips * parts_per_clip,
                "{video_as} {id}"
            );
        }
        let header = &json_lines(&out.join("journal.jsonl"))[0];
        assert_eq!(header["video_seed"], 0);
        if video_as == "frames" {
            assert_eq!(header["video_as"], "frames");
        } else {
            assert!(header.get("video_as").is_none(), "{header}");
        }
        let report = std::fs::read_to_string(out.join("report.md")).expect("report");
        assert!(report.contains("video: median prompt tokens"), "{report}");
    }
}

#[tokio::test]
async fn a_server_that_cannot_take_videos_gives_unsupported_for_every_task_and_no_score() {
    Box::pin(crate::vision::every_task_is_refused(
        "video",
        10,
        "videos",
        [
            (MediaInput::RefuseLikeVllm, "At most 0 video(s)"),
            (
                MediaInput::RefuseLikeLlamaCpp,
                "video input is not supported",
            ),
        ],
    ))
    .await;
}

#[tokio::test]
async fn the_probe_runs_vision_video_short_context_and_tool_tasks_together() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let results = run("probe", &out, &["--seed", "3"]).await;
    let count = |category: &str| {
        results
            .tasks
            .iter()
            .filter(|t| t.category.as_str() == category)
            .count()
    };
    assert_eq!(
        (
            count("vision"),
            count("video"),
            count("context"),
            count("tools")
        ),
        (22, 10, 8, 4)
    );
    // The scripted plan of each part: vision and video 3 misses each, the second tool task
    // calls twice, every context task right (short prompts).
    assert_eq!(
        (results.main.total.n_pass, results.main.total.n_scored),
        (37, 44)
    );
    // The context tasks were sized in the server's tokens, at 1k and 4k.
    for line in json_lines(&out.join("journal.jsonl"))
        .iter()
        .filter(|line| line["type"] == "attempt")
    {
        if let Some(target) = line["context"]["target_tokens"].as_u64() {
            assert!(target == 1024 || target == 4096, "{line}");
            let prompt = line["prompt_tokens"].as_u64().expect("prompt tokens");
            assert!(prompt.abs_diff(target) * 50 <= target, "{line}");
        }
    }
    assert_eq!(json_lines(&out.join("journal.jsonl"))[0]["probe_seed"], 3);
    // The probe's heat map has every depth it placed needles at (before: `"depths": []` and a
    // 162 px wide image that clipped its own title), checked as rendered.
    let context = results.context.as_ref().expect("a context view");
    assert_eq!(context.depths, vernier_tasks::PROBE_CONTEXT_DEPTHS.to_vec());
    let svg = std::fs::read_to_string(out.join("context-heatmap.svg")).expect("the heat map");
    let labels = crate::charts::rendered_text(&svg);
    for depth in vernier_tasks::PROBE_CONTEXT_DEPTHS {
        assert!(
            labels.iter().any(|(text, _)| *text == format!("{depth}%")),
            "no column for depth {depth}%: {labels:?}"
        );
    }
    assert!(
        labels
            .iter()
            .any(|(text, _)| text.starts_with("Needles found")),
        "{labels:?}"
    );
    // The run it comes from, as in the sweep's charts: model, server, date.
    assert!(
        labels.iter().any(|(text, _)| text
            .starts_with("vernier-sim on the bundled simulator (scripted answers), 20")),
        "{labels:?}"
    );
}

#[tokio::test]
async fn the_video_suite_self_checks_from_its_decoded_frames() {
    let output = run_cli(&["hardsuite", "self-check", "--suite", "video"])
        .await
        .expect("the self-check passes");
    let CommandOutput::SelfCheck(text) = output else {
        panic!("a self-check report");
    };
    assert!(text.contains("on 10 tasks of suite video"), "{text}");
    assert!(text.contains("video-ball-bounces-0"), "{text}");
}

#[tokio::test]
async fn video_as_without_video_tasks_is_refused_naming_the_flag() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--suite",
        "vision",
        "--video-as",
        "frames",
        "--out",
        arg(&out),
    ])
    .await
    .expect_err("refused");
    let text = error.to_string();
    assert!(text.contains("--video-as"), "{text}");
    assert!(text.contains("--suite video"), "{text}");
}

#[tokio::test]
async fn the_listing_shows_each_media_task_s_family_parameters_and_gold() {
    let output = run_cli(&["hardsuite", "tasks", "--suite", "video", "--json"])
        .await
        .expect("the listing");
    let CommandOutput::Tasks(text) = output else {
        panic!("a task listing");
    };
    let tasks: Vec<serde_json::Value> = serde_json::from_str(&text).expect("JSON");
    assert_eq!(tasks.len(), 10);
    let bounces = &tasks[0];
    assert_eq!(bounces["family"], "ball-bounces", "{bounces}");
    // The gold is the number of wall hits the parameters record.
    let hits = ["hits_x", "hits_y"]
        .iter()
        .map(|axis| bounces["parameters"][axis].as_array().expect("hits").len())
        .sum::<usize>();
    assert_eq!(bounces["gold"], hits.to_string(), "{bounces}");
    let order = tasks
        .iter()
        .find(|t| t["family"] == "colour-order")
        .expect("a colour-order task");
    let named: Vec<&str> = order["parameters"]["order"]
        .as_array()
        .expect("the order")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert_eq!(order["gold"], named.join(", "), "{order}");
}
