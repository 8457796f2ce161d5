//! Answer extraction and the checkers' outcomes on crafted replies.

use vernier_tasks::{
    Category, Checker, OutcomeKind, Reply, ReplyToolCall, Task, extract_answer, parse_fraction,
    parse_integer,
};

use crate::block_on;

fn check(task: &Task, reply: &Reply) -> vernier_tasks::Outcome {
    block_on(task.check(reply, None))
}

fn bundled(id: &str) -> Task {
    crate::bundled_suite()
        .task(id)
        .expect("bundled task")
        .clone()
}

#[test]
fn extraction_takes_the_last_answer_of_either_form() {
    assert_eq!(
        extract_answer("ANSWER: 1\nmore\nANSWER: 2").as_deref(),
        Some("2")
    );
    assert_eq!(
        extract_answer("\\boxed{1} then \\boxed{2}").as_deref(),
        Some("2")
    );
    assert_eq!(
        extract_answer("\\boxed{1}\nANSWER: 3").as_deref(),
        Some("3")
    );
    assert_eq!(
        extract_answer("ANSWER: 3\nFinal: \\boxed{4}").as_deref(),
        Some("4")
    );
    assert_eq!(extract_answer("  ANSWER:\t42  ").as_deref(), Some("42"));
    assert_eq!(extract_answer("answer: 7").as_deref(), Some("7"));
    assert_eq!(
        extract_answer("**ANSWER:** 2,131.").as_deref(),
        Some("2,131")
    );
    assert_eq!(
        extract_answer("ANSWER: $\\boxed{\\dfrac{73}{648}}$").as_deref(),
        Some("\\dfrac{73}{648}")
    );
    assert_eq!(extract_answer("The answer is 5"), None);
    assert_eq!(extract_answer("\\boxed{unclosed"), None);
    assert_eq!(extract_answer(""), None);
}

#[test]
fn integers_normalise_commas_only_in_groups_of_three() {
    assert_eq!(parse_integer("2,131"), Some(2131));
    assert_eq!(parse_integer("2{,}131"), Some(2131));
    assert_eq!(parse_integer("1,000,000"), Some(1_000_000));
    assert_eq!(parse_integer("+5"), Some(5));
    assert_eq!(parse_integer("-0"), Some(0));
    assert_eq!(parse_integer("2,13"), None);
    assert_eq!(parse_integer("1,0000"), None);
    assert_eq!(parse_integer("12a"), None);
    assert_eq!(parse_integer("3.0"), None);
    assert_eq!(parse_integer(""), None);
    assert_eq!(parse_integer("-"), None);
}

#[test]
fn fractions_parse_as_written() {
    assert_eq!(parse_fraction("146/1296"), Some((146, 1296)));
    assert_eq!(parse_fraction(" 73 / 648 "), Some((73, 648)));
    assert_eq!(parse_fraction("\\tfrac{1}{2}"), Some((1, 2)));
    assert_eq!(parse_fraction("-\\frac{1}{2}"), Some((-1, 2)));
    assert_eq!(parse_fraction("1/-2"), Some((-1, 2)));
    assert_eq!(parse_fraction("1/2/3"), None);
    assert_eq!(parse_fraction("0.5"), None);
}

#[test]
fn math_outcomes() {
    let task = bundled("domino-tiling");
    let pass = check(&task, &Reply::stopped("ANSWER: 2,131"));
    assert_eq!(pass.kind, OutcomeKind::Pass);
    let wrong = check(&task, &Reply::stopped("ANSWER: 871"));
    assert_eq!(
        (wrong.kind, wrong.detail.as_str()),
        (OutcomeKind::Wrong, "expected 2131 got 871")
    );
    assert_eq!(wrong.provisional_answer.as_deref(), Some("871"));
    let garbage = check(&task, &Reply::stopped("ANSWER: about two thousand"));
    assert_eq!(garbage.kind, OutcomeKind::Wrong);
    let none = check(&task, &Reply::stopped("I think it is 2131."));
    assert_eq!(none.kind, OutcomeKind::NoAnswer);
}

#[test]
fn cut_off_wins_even_with_an_answer_line() {
    let task = bundled("last-digits");
    let mut reply = Reply::stopped("ANSWER: 649");
    reply.finish_reason = Some("length".to_owned());
    let outcome = check(&task, &reply);
    assert_eq!(outcome.kind, OutcomeKind::CutOff);
    assert_eq!(outcome.provisional_answer.as_deref(), Some("649"));
    reply.content = "Let me verify again".to_owned();
    let outcome = check(&task, &reply);
    assert_eq!(
        (outcome.kind, outcome.provisional_answer),
        (OutcomeKind::CutOff, None)
    );
}

#[test]
fn reasoning_is_never_graded() {
    let task = bundled("last-digits");
    let mut reply = Reply::stopped("Done.");
    reply.reasoning = Some("ANSWER: 649".to_owned());
    assert_eq!(check(&task, &reply).kind, OutcomeKind::NoAnswer);
    let mut reply = Reply::stopped("ANSWER: 649");
    reply.reasoning = Some("ANSWER: 111".to_owned());
    assert_eq!(check(&task, &reply).kind, OutcomeKind::Pass);
}

#[test]
fn fractions_must_be_reduced() {
    let task = bundled("dice-probability");
    assert_eq!(
        check(&task, &Reply::stopped("ANSWER: 73/648")).kind,
        OutcomeKind::Pass
    );
    assert_eq!(
        check(&task, &Reply::stopped("\\boxed{\\frac{73}{648}}")).kind,
        OutcomeKind::Pass
    );
    let unreduced = check(&task, &Reply::stopped("ANSWER: 146/1296"));
    assert_eq!(
        (unreduced.kind, unreduced.detail.as_str()),
        (OutcomeKind::Wrong, "unreduced 146/1296")
    );
    assert_eq!(
        check(&task, &Reply::stopped("ANSWER: 1/648")).kind,
        OutcomeKind::Wrong
    );
}

#[test]
fn the_bundled_fraction_task_requires_a_reduced_answer() {
    assert!(matches!(
        bundled("dice-probability").checker,
        Checker::Fraction {
            allow_unreduced: false,
            ..
        }
    ));
}

#[test]
fn unreduced_fractions_pass_where_the_task_allows_them() {
    let fraction = |allow_unreduced| {
        Task::new(
            "two-dice-seven",
            Category::MATH,
            "P(sum is 7)? ANSWER: p/q",
            100,
            Checker::Fraction {
                num: 1,
                den: 6,
                allow_unreduced,
            },
        )
    };
    let lenient = fraction(true);
    for (answer, detail) in [
        ("ANSWER: 1/6", "1/6"),
        ("ANSWER: 6/36", "6/36"),
        ("\\boxed{\\frac{6}{36}}", "6/36"),
        ("ANSWER: -6/-36", "6/36"),
    ] {
        let outcome = check(&lenient, &Reply::stopped(answer));
        assert_eq!(
            (outcome.kind, outcome.detail.as_str()),
            (OutcomeKind::Pass, detail),
            "{answer}"
        );
    }
    // Still compared by value: a wrong value is wrong in any form.
    let wrong = check(&lenient, &Reply::stopped("ANSWER: 7/36"));
    assert_eq!(
        (wrong.kind, wrong.detail.as_str()),
        (OutcomeKind::Wrong, "expected 1/6 got 7/36")
    );
    assert_eq!(
        check(&lenient, &Reply::stopped("ANSWER: 2/6")).kind,
        OutcomeKind::Wrong
    );
    // The same task without the flag rejects the unreduced form.
    let strict = check(&fraction(false), &Reply::stopped("ANSWER: 6/36"));
    assert_eq!(
        (strict.kind, strict.detail.as_str()),
        (OutcomeKind::Wrong, "unreduced 6/36")
    );
}

#[test]
fn exact_strings() {
    let task = Task::new(
        "word",
        Category::MATH,
        "Say two. ANSWER: <word>",
        100,
        Checker::ExactString("two".to_owned()),
    );
    assert_eq!(
        check(&task, &Reply::stopped("ANSWER: **two**")).kind,
        OutcomeKind::Pass
    );
    assert_eq!(
        check(&task, &Reply::stopped("ANSWER: Two")).kind,
        OutcomeKind::Wrong
    );
}

fn call(name: &str, arguments: &str) -> ReplyToolCall {
    ReplyToolCall::new(name, arguments)
}

fn calls(tool_calls: Vec<ReplyToolCall>) -> Reply {
    Reply {
        tool_calls,
        finish_reason: Some("tool_calls".to_owned()),
        ..Reply::default()
    }
}

#[test]
fn tool_search_needs_exactly_the_expected_call() {
    let task = bundled("tool-search");
    let right = r#"{"pattern": "TODO", "path": "/src", "glob": "*.py"}"#;
    assert_eq!(
        check(&task, &calls(vec![call("search_files", right)])).kind,
        OutcomeKind::Pass
    );
    let outcome = check(
        &task,
        &calls(vec![call(
            "search_files",
            r#"{"pattern": "TODO", "path": "/src"}"#,
        )]),
    );
    assert_eq!(
        (outcome.kind, outcome.detail.as_str()),
        (OutcomeKind::Wrong, "wrong_argument:glob")
    );
    let outcome = check(
        &task,
        &calls(vec![call("read_file", r#"{"path": "/src"}"#)]),
    );
    assert_eq!(
        (outcome.kind, outcome.detail.as_str()),
        (OutcomeKind::Wrong, "wrong_function:read_file")
    );
    let outcome = check(
        &task,
        &calls(vec![
            call("search_files", right),
            call("search_files", right),
        ]),
    );
    assert_eq!(
        (outcome.kind, outcome.detail.as_str()),
        (OutcomeKind::ExtraCalls, "extra_calls:2")
    );
    let outcome = check(
        &task,
        &calls(vec![call(
            "search_files",
            r#"{"pattern": "TODO", "path": "/src""#,
        )]),
    );
    assert_eq!(
        (outcome.kind, outcome.detail.as_str()),
        (OutcomeKind::Wrong, "malformed_arguments")
    );
    let outcome = check(&task, &calls(vec![call("search_files", r#"["TODO"]"#)]));
    assert_eq!(outcome.detail, "malformed_arguments");
    let outcome = check(
        &task,
        &Reply::stopped("<tool_call>{\"name\": \"search_files\"}</tool_call>"),
    );
    assert_eq!(
        (outcome.kind, outcome.detail.as_str()),
        (OutcomeKind::Wrong, "no_call")
    );
    let extra = r#"{"pattern": "TODO", "path": "/src", "glob": "*.py", "recursive": true}"#;
    let outcome = check(&task, &calls(vec![call("search_files", extra)]));
    assert_eq!(outcome.detail, "unexpected_argument:recursive");
    let with_null = r#"{"pattern": "TODO", "path": "/src", "glob": "*.py", "max": null}"#;
    assert_eq!(
        check(&task, &calls(vec![call("search_files", with_null)])).kind,
        OutcomeKind::Pass
    );
}

#[test]
fn tool_weather_is_case_insensitive() {
    let task = bundled("tool-weather");
    let outcome = check(
        &task,
        &calls(vec![call(
            "get_weather",
            r#"{"city": "tokyo", "unit": "Celsius"}"#,
        )]),
    );
    assert_eq!(outcome.kind, OutcomeKind::Pass);
    let outcome = check(
        &task,
        &calls(vec![call(
            "get_weather",
            r#"{"city": "Tokyo", "unit": "fahrenheit"}"#,
        )]),
    );
    assert_eq!(outcome.detail, "wrong_argument:unit");
    let outcome = check(
        &task,
        &calls(vec![call(
            "get_weather",
            r#"{"city": "Kyoto", "unit": "celsius"}"#,
        )]),
    );
    assert_eq!(outcome.detail, "wrong_argument:city");
}

#[test]
fn tool_calc_accepts_any_expression_worth_3285() {
    let task = bundled("tool-calc");
    for expression in ["45 * 73", "45*73", " 73*45 ", "(45)*(73)", "3285", "6570/2"] {
        let arguments = serde_json::json!({ "expression": expression }).to_string();
        let outcome = check(&task, &calls(vec![call("calculate", &arguments)]));
        assert_eq!(outcome.kind, OutcomeKind::Pass, "{expression}");
    }
    for expression in ["45 * 74", "45 +", "45 ** 73", "x"] {
        let arguments = serde_json::json!({ "expression": expression }).to_string();
        let outcome = check(&task, &calls(vec![call("calculate", &arguments)]));
        assert_eq!(outcome.detail, "wrong_argument:expression", "{expression}");
    }
}

#[test]
fn tool_none_needs_a_clean_stop_without_call_like_text() {
    let task = bundled("tool-none");
    let answer = "The capital of Australia is Canberra.";
    assert_eq!(
        check(&task, &Reply::stopped(answer)).kind,
        OutcomeKind::Pass
    );
    let mut called = Reply::stopped(answer);
    called.tool_calls.push(call("search_files", "{}"));
    let outcome = check(&task, &called);
    assert_eq!(
        (outcome.kind, outcome.detail.as_str()),
        (OutcomeKind::Wrong, "unexpected_call:search_files")
    );
    let outcome = check(
        &task,
        &Reply::stopped("<tool_call>\n{\"name\": \"get_weather\"}\n</tool_call>"),
    );
    assert_eq!(outcome.detail, "call_like_text");
    let outcome = check(
        &task,
        &Reply::stopped(
            "Canberra. {\"name\": \"calculate\", \"arguments\": {\"expression\": \"1\"}}",
        ),
    );
    assert_eq!(outcome.detail, "call_like_text");
    assert_eq!(
        check(&task, &Reply::stopped("It is Sydney.")).detail,
        "missing:Canberra"
    );
    let mut not_clean = Reply::stopped(answer);
    not_clean.finish_reason = Some("tool_calls".to_owned());
    assert_eq!(check(&task, &not_clean).kind, OutcomeKind::Wrong);
    let mut cut = Reply::stopped(answer);
    cut.finish_reason = Some("length".to_owned());
    assert_eq!(check(&task, &cut).kind, OutcomeKind::CutOff);
    let mut reasoning = Reply::stopped("Canberra.");
    reasoning.reasoning = Some("<tool_call>maybe</tool_call>".to_owned());
    assert_eq!(
        check(&task, &reasoning).kind,
        OutcomeKind::Pass,
        "reasoning is not graded"
    );
}

#[test]
fn code_tasks_without_a_grader_are_infra_and_without_code_no_answer() {
    let suite = crate::bundled_suite();
    let task = suite
        .tasks
        .iter()
        .find(|t| t.category == Category::CODE)
        .expect("the coding tasks are bundled");
    let outcome = check(
        task,
        &Reply::stopped("```python\ndef f():\n    return 1\n```"),
    );
    assert_eq!(
        (outcome.kind, outcome.detail.as_str()),
        (OutcomeKind::Infra, "infra:no_grader")
    );
    assert_eq!(
        check(task, &Reply::stopped("I would write a loop.")).kind,
        OutcomeKind::NoAnswer
    );
}

#[test]
fn outcomes_serialise_in_snake_case() {
    let outcome = vernier_tasks::Outcome::new(OutcomeKind::CutOff, "length");
    let json = serde_json::to_value(&outcome).expect("serialise");
    assert_eq!(json["kind"], "cut_off");
    assert_eq!(
        serde_json::to_value(OutcomeKind::ExtraCalls).expect("serialise"),
        "extra_calls"
    );
    assert_eq!(
        serde_json::to_value(OutcomeKind::NoAnswer).expect("serialise"),
        "no_answer"
    );
}

#[test]
fn tools_are_offered_in_openai_form() {
    let task = bundled("tool-search");
    let names: Vec<String> = task
        .tools
        .iter()
        .map(|tool| {
            tool.to_openai_json()["function"]["name"]
                .as_str()
                .expect("name")
                .to_owned()
        })
        .collect();
    assert_eq!(
        names,
        ["search_files", "read_file", "get_weather", "calculate"]
    );
    assert_eq!(task.tools[0].to_openai_json()["type"], "function");
}
