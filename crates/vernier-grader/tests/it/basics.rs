//! Ordinary grading: passing, failing, exceptions, guards, missing code, engine errors.

use serde_json::json;
use vernier_grader::{
    Case, GradeReason, Grader, GraderConfig, GraderError, Guard, Submission, extract_code,
};

use crate::support::{CALL_F, assert_failed, assert_reason, connect_or_skip};

fn add_cases() -> Vec<Case> {
    vec![
        Case::new("small", json!([1, 2]), json!(3)),
        Case::new("negative", json!([-1, -2]), json!(-3)),
        Case::new("float", json!([0.1, 0.2]), json!(0.3)),
    ]
}

const ADD_HARNESS: &str =
    "def run_case(solution, case_input):\n    return solution.add(*case_input)\n";

#[tokio::test]
async fn a_correct_solution_passes_and_the_harness_is_not_guarded() {
    let harness = connect_or_skip!("correct");
    let reply = "Sure:\n```python\ndef add(a, b):\n    return a + b\n```\n";
    let code = extract_code(reply).expect("code in reply");
    // The harness uses eval; the guard applies to the submission only.
    let hidden = format!("{ADD_HARNESS}\nassert eval('1 + 1') == 2\n");
    let submission = Submission::new(code, hidden, add_cases())
        .with_guards(vec![Guard::ForbiddenName("eval".into())]);
    let grade = harness.grader.grade(&submission).await;
    assert_reason(&grade, &GradeReason::Passed);
    assert_eq!(grade.n_expected, 3);
    assert_eq!(grade.n_passed(), 3);
    assert_eq!(grade.exit_code, Some(0));
    assert!(!grade.oom_killed);
    assert!(
        grade.image_digest.starts_with("sha256:"),
        "{}",
        grade.image_digest
    );
    assert_eq!(grade.image_digest, harness.grader.image_digest());
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_wrong_solution_fails_naming_the_cases() {
    let harness = connect_or_skip!("wrong");
    let code = "def add(a, b):\n    print('adding', a, b)\n    return abs(a) + abs(b)\n";
    let grade = harness
        .grader
        .grade(&Submission::new(code, ADD_HARNESS, add_cases()))
        .await;
    assert_failed(&grade, &["negative"]);
    assert_eq!(grade.reason.detail(), "failed_cases:[negative]");
    assert_eq!(grade.cases[1].detail, "expected -3, got 3");
    assert!(grade.cases[0].passed && grade.cases[2].passed);
    assert!(
        grade.stdout_excerpt.contains("adding -1 -2"),
        "{:?}",
        grade.stdout_excerpt
    );
    assert!(
        !grade.stdout_excerpt.contains("vernier-result"),
        "records are not output: {:?}",
        grade.stdout_excerpt
    );
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn exceptions_are_results_and_types_are_exact() {
    let harness = connect_or_skip!("exceptions");
    let code = r#"
def f(x):
    if x == "neg":
        raise ValueError("negative input")
    if x == "wrong":
        raise TypeError("bad type")
    if x == "tuple":
        return (1, [2, 3])
    if x == "bool":
        return True
    if x == "dict":
        return {"b": 2.0, "a": [None, "é"]}
    if x == "exit":
        import sys
        sys.exit(0)
    return x
"#;
    let cases = vec![
        Case::raises("raises_value_error", json!("neg"), "ValueError"),
        Case::raises("raises_the_wrong_class", json!("wrong"), "ValueError"),
        Case::new("tuple_is_a_list", json!("tuple"), json!([1, [2, 3]])),
        Case::new("bool_is_not_one", json!("bool"), json!(1)),
        Case::new(
            "dict_key_by_key",
            json!("dict"),
            json!({"a": [null, "é"], "b": 2}),
        ),
        Case::new("exit_in_a_case", json!("exit"), json!("exit")),
        Case::new("after_exit", json!("still runs"), json!("still runs")),
    ];
    let grade = harness.grade_f(code, cases).await;
    let failed = vec![
        "raises_the_wrong_class".to_owned(),
        "bool_is_not_one".to_owned(),
        "exit_in_a_case".to_owned(),
    ];
    assert_reason(&grade, &GradeReason::FailedCases(failed));
    assert_eq!(grade.cases[0].detail, "raised ValueError: negative input");
    assert_eq!(grade.cases[1].detail, "raised TypeError: bad type");
    assert_eq!(grade.cases[3].detail, "expected 1, got true");
    assert!(
        grade.cases[5].detail.starts_with("raised SystemExit"),
        "{}",
        grade.cases[5].detail
    );
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn guards_and_missing_code_stop_before_any_container() {
    let harness = connect_or_skip!("guards");
    let guards = vec![
        Guard::ForbiddenName("eval".into()),
        Guard::ForbiddenName("exec".into()),
    ];
    let code = "# exec is mentioned here only\ndef f(x):\n    return eval(x)\n";
    let grade = harness
        .grader
        .grade(
            &Submission::new(code, CALL_F, vec![Case::new("a", json!("1"), json!(1))])
                .with_guards(guards),
        )
        .await;
    assert_eq!(grade.reason, GradeReason::GuardViolation("eval".into()));
    assert_eq!(grade.reason.detail(), "guard:eval");
    assert_eq!(grade.exit_code, None);
    assert_eq!(grade.cases.len(), 1);

    let grade = harness
        .grader
        .grade(&Submission::new(
            "  \n",
            CALL_F,
            vec![Case::new("a", json!(1), json!(1))],
        ))
        .await;
    assert_eq!(grade.reason, GradeReason::NoCode);
    assert_eq!(extract_code("I think the answer is to use a loop."), None);
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_syntax_error_crashes_on_import() {
    let harness = connect_or_skip!("syntax");
    let grade = harness
        .grader
        .grade(&Submission::new(
            "def f(x) return x",
            CALL_F,
            vec![Case::new("a", json!(1), json!(1))],
        ))
        .await;
    match &grade.reason {
        GradeReason::Crashed(why) => assert!(why.contains("SyntaxError"), "{why}"),
        other => panic!("expected a crash, got {other:?}"),
    }
    assert!(!grade.cases[0].passed);
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_broken_harness_is_infra_not_the_models_fault() {
    let harness = connect_or_skip!("broken-harness");
    let grade = harness
        .grader
        .grade(&Submission::new(
            "def f(x):\n    return x\n",
            "def run_case(:",
            vec![Case::new("a", json!(1), json!(1))],
        ))
        .await;
    assert!(
        matches!(&grade.reason, GradeReason::Infra(why) if why.contains("harness")),
        "{:?}",
        grade.reason
    );
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn engine_trouble_names_the_fix() {
    let error = Grader::connect(
        GraderConfig::default().with_docker_host("unix:///nonexistent/docker.sock"),
    )
    .await
    .expect_err("no engine there");
    assert!(
        matches!(
            error,
            GraderError::Ping { .. } | GraderError::Connect { .. }
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("is the Docker daemon running? set DOCKER_HOST"),
        "{error}"
    );

    let harness = connect_or_skip!("missing-image");
    drop(harness);
    let error = Grader::connect(GraderConfig::default().with_image("vernier-no-such-image:never"))
        .await
        .expect_err("no such image");
    assert!(
        matches!(error, GraderError::InspectImage { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("docker/build-grader-image.sh"),
        "{error}"
    );
}

#[tokio::test]
async fn leftovers_past_their_deadline_are_removed_and_live_work_is_not() {
    use std::collections::HashMap;

    use bollard::models::{ContainerCreateBody, VolumeCreateRequest};
    use bollard::query_parameters::{CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder};
    use vernier_grader::GRADER_LABEL;

    use crate::support::RUN_LABEL;

    let harness = connect_or_skip!("leftovers");
    let labels = |deadline: &str| {
        HashMap::from([
            (GRADER_LABEL.to_owned(), "1".to_owned()),
            (
                "org.vernier.grader.deadline".to_owned(),
                deadline.to_owned(),
            ),
            (RUN_LABEL.to_owned(), harness.run_id.clone()),
        ])
    };
    let docker = &harness.docker;
    let stale = format!("vernier-test-stale-{}", std::process::id());
    let live = format!("vernier-test-live-{}", std::process::id());
    for (name, deadline) in [(&stale, "1"), (&live, "99999999999")] {
        let body = ContainerCreateBody {
            image: Some(harness.grader.image_digest().to_owned()),
            cmd: Some(vec!["python3".into(), "-c".into(), "pass".into()]),
            labels: Some(labels(deadline)),
            ..Default::default()
        };
        docker
            .create_container(
                Some(CreateContainerOptionsBuilder::new().name(name).build()),
                body,
            )
            .await
            .expect("create a labelled container");
    }
    docker
        .create_volume(VolumeCreateRequest {
            name: Some(stale.clone()),
            labels: Some(labels("1")),
            ..Default::default()
        })
        .await
        .expect("create a labelled volume");

    let removed = harness
        .grader
        .remove_leftovers()
        .await
        .expect("remove leftovers");
    assert!(removed >= 2, "removed {removed}");
    assert_eq!(
        harness.labelled().await,
        (1, 0),
        "only the live container remains"
    );
    docker
        .remove_container(
            &live,
            Some(RemoveContainerOptionsBuilder::new().force(true).build()),
        )
        .await
        .expect("remove the live container");
    harness.assert_nothing_left().await;
}
