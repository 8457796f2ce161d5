//! The vision suite: generated images sent as `image_url` parts, a scripted simulator's plan
//! reproduced task by task, and servers that cannot see giving `unsupported`, never a score.

use std::path::Path;

use hardsuite::CommandOutput;
use vernier_hardsuite::ResultsFile;
use vernier_sim::{MEDIA_TOKENS, MediaInput, Sim, SimConfig};

use crate::{arg, json_lines, run_cli};

/// `hardsuite run --suite SUITE --quiet --out OUT` plus `extra`: the run's results.
pub(crate) async fn run(suite: &str, out: &Path, extra: &[&str]) -> ResultsFile {
    let mut args = vec!["hardsuite", "run", "--suite", suite, "--quiet", "--out"];
    args.push(arg(out));
    args.extend_from_slice(extra);
    match run_cli(&args).await.expect("the run completes") {
        CommandOutput::Run(outcome) => outcome.results,
        _ => panic!("a run gives a run outcome"),
    }
}

#[tokio::test]
async fn the_scripted_plan_is_reproduced_task_by_task_with_every_image_sent() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let results = run("vision", &out, &[]).await;
    let outcomes: Vec<&str> = results
        .tasks
        .iter()
        .map(|t| t.samples[0].outcome.as_str())
        .collect();
    // By place: the first wrong, the second without an answer line, the third cut off in its
    // reasoning, every other one right (22 tasks: 11 families, 2 each).
    assert_eq!(outcomes.len(), 22);
    assert_eq!(&outcomes[..3], ["wrong", "no_answer", "cut_off"]);
    assert!(outcomes[3..].iter().all(|o| *o == "pass"), "{outcomes:?}");
    assert_eq!(
        (results.main.total.n_pass, results.main.total.n_scored),
        (19, 22)
    );
    // The simulator counted every image: a compare-dots task sends two.
    for line in json_lines(&out.join("journal.jsonl"))
        .iter()
        .filter(|line| line["type"] == "attempt")
    {
        let id = line["task_id"].as_str().expect("an id");
        let images = if id.contains("compare-dots") { 2 } else { 1 };
        let prompt_tokens = line["prompt_tokens"].as_u64().expect("prompt tokens");
        assert!(
            prompt_tokens > u64::from(MEDIA_TOKENS) * images,
            "{id}: {prompt_tokens}"
        );
    }
}

/// Against simulated servers that refuse media as each of `refusals` says (its words): every
/// one of the suite's `n_tasks` tasks is `unsupported` after one try, with the server's words,
/// nothing is scored, and the report says so once (`The server cannot take {kind}`).
pub(crate) async fn every_task_is_refused(
    suite: &str,
    n_tasks: u64,
    kind: &str,
    refusals: [(MediaInput, &str); 2],
) {
    for (media, words) in refusals {
        let sim = Sim::start(SimConfig::builder().media(media).build())
            .await
            .expect("the simulator starts");
        let url = sim.base_url();
        let folder = tempfile::tempdir().expect("temporary folder");
        let out = folder.path().join("out");
        let results = run(suite, &out, &["--base-url", &url, "--model", "vernier-sim"]).await;
        sim.shutdown().await;
        assert_eq!(results.main.total.n_scored, 0, "{suite} {media:?}");
        assert_eq!(
            results.main.total.n_unsupported, n_tasks,
            "{suite} {media:?}"
        );
        for task in &results.tasks {
            let sample = &task.samples[0];
            assert_eq!(sample.outcome.as_str(), "unsupported", "{}", task.id);
            // Refused once, not retried as a server failure.
            assert_eq!(sample.n_tries, 1, "{}", task.id);
            let said = sample
                .server_message
                .as_deref()
                .expect("the server's words");
            assert!(said.contains(words), "{said}");
        }
        let report = std::fs::read_to_string(out.join("report.md")).expect("report");
        assert_eq!(
            report
                .matches(&format!("The server cannot take {kind}"))
                .count(),
            1,
            "{report}"
        );
    }
}

#[tokio::test]
async fn a_server_that_cannot_see_gives_unsupported_for_every_task_and_no_score() {
    Box::pin(every_task_is_refused(
        "vision",
        22,
        "images",
        [
            (MediaInput::RefuseLikeVllm, "At most 0 image(s)"),
            (
                MediaInput::RefuseLikeLlamaCpp,
                "image input is not supported",
            ),
        ],
    ))
    .await;
}

#[tokio::test]
async fn the_vision_suite_self_checks_from_its_pixels() {
    let output = run_cli(&["hardsuite", "self-check", "--suite", "vision"])
        .await
        .expect("the self-check passes");
    let CommandOutput::SelfCheck(text) = output else {
        panic!("a self-check report");
    };
    assert!(text.contains("on 22 tasks of suite vision"), "{text}");
    assert!(text.contains("vision-count-squares-0"), "{text}");
}
