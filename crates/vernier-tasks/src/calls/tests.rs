use super::*;

#[test]
fn every_task_proves_over_many_seeds_and_is_drawn_alike_per_seed() {
    for seed in 0..300 {
        let suite = calls_suite(seed, 512);
        assert_eq!(suite.tasks.len(), 13);
        for task in &suite.tasks {
            let (n, failures) = prove_calls_task(task);
            assert!(n >= 5, "{}: {n} checks", task.id);
            assert!(failures.is_empty(), "seed {seed} {}: {failures:?}", task.id);
        }
    }
    assert_eq!(calls_suite(5, 512).tasks, calls_suite(5, 512).tasks);
    assert_ne!(calls_suite(5, 512).tasks, calls_suite(6, 512).tasks);
}

#[test]
fn a_generator_whose_request_forgets_an_argument_is_named() {
    let suite = calls_suite(2, 512);
    let mut task = suite
        .tasks
        .iter()
        .find(|task| task.id == "calls-number-1")
        .expect("a number task")
        .clone();
    let spec = task.spec_mut::<CallsSpec>().expect("spec");
    spec.expected[0].arguments["amount"] = serde_json::json!(0.5);
    let spec = spec.clone();
    let rebuilt = Task {
        messages: task.messages.clone(),
        ..calls_task(task.id.clone(), spec, 512)
    };
    let (_, failures) = prove_calls_task(&rebuilt);
    assert!(
        failures.iter().any(|f| f.contains("does not state 0.5")),
        "{failures:?}"
    );
}

#[test]
fn calls_are_graded_as_values_with_defaults_and_extra_calls_apart() {
    // BFCL's AST checker (Patil et al., "The Berkeley Function Calling Leaderboard", 2024)
    // accepts an optional parameter left at its default, compares numbers by value and refuses
    // a wrong type; these cases follow it.
    let tools: Vec<ToolSpec> = ["get_weather", "convert_currency"]
        .iter()
        .filter_map(|name| catalogue::function(name))
        .collect();
    let expected = vec![ExpectedCall {
        name: "convert_currency".to_owned(),
        arguments: json!({"amount": 12.5, "from": "EUR", "to": "USD"}),
    }];
    let grade = |calls: &[(&str, &str)]| {
        let mut reply = Reply::stopped("");
        reply.tool_calls = calls
            .iter()
            .map(|(name, arguments)| ReplyToolCall::new(*name, *arguments))
            .collect();
        check_calls(&expected, &tools, &reply)
    };
    let right = grade(&[(
        "convert_currency",
        r#"{"to":"USD","amount":12.50,"from":"EUR"}"#,
    )]);
    assert_eq!(right.kind, OutcomeKind::Pass, "{right:?}");
    let text_number = grade(&[(
        "convert_currency",
        r#"{"to":"USD","amount":"12.5","from":"EUR"}"#,
    )]);
    assert_eq!(text_number.kind, OutcomeKind::Wrong);
    assert!(
        text_number.detail.contains("schema: /amount"),
        "{}",
        text_number.detail
    );
    let bad_enum = grade(&[(
        "convert_currency",
        r#"{"to":"usd","amount":12.5,"from":"EUR"}"#,
    )]);
    assert!(
        bad_enum.detail.contains("schema: /to"),
        "{}",
        bad_enum.detail
    );
    let extra = grade(&[
        (
            "convert_currency",
            r#"{"to":"USD","amount":12.5,"from":"EUR"}"#,
        ),
        ("get_weather", r#"{"city":"Oslo"}"#),
    ]);
    assert_eq!(extra.kind, OutcomeKind::ExtraCalls);
    assert!(extra.detail.contains("get_weather"), "{}", extra.detail);
    let broken = grade(&[("convert_currency", r#"{"to":"USD","amount":12.5"#)]);
    assert!(broken.detail.contains("not JSON"), "{}", broken.detail);
    // A default sent although not asked for is accepted; another value is not.
    let weather = vec![ExpectedCall {
        name: "get_weather".to_owned(),
        arguments: json!({"city": "Oslo"}),
    }];
    let mut reply = Reply::stopped("");
    reply.tool_calls = vec![ReplyToolCall::new(
        "get_weather",
        r#"{"city":"oslo","unit":"celsius"}"#,
    )];
    assert_eq!(
        check_calls(&weather, &tools, &reply).kind,
        OutcomeKind::Pass
    );
    reply.tool_calls = vec![ReplyToolCall::new(
        "get_weather",
        r#"{"city":"Oslo","unit":"fahrenheit"}"#,
    )];
    let other = check_calls(&weather, &tools, &reply);
    assert!(
        other.detail.contains("unit: not asked for"),
        "{}",
        other.detail
    );
}
