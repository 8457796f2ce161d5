use super::*;
use crate::task::{OutcomeKind, Reply};

fn plan() -> ContextPlan {
    ContextPlan {
        lengths: vec![1_024, 4_096],
        depths: vec![0, 50, 100],
        seed: 7,
        ..ContextPlan::default()
    }
}

#[test]
fn every_task_of_a_plan_is_proved_at_several_lengths() {
    let suite = context_suite(&plan(), 500);
    assert_eq!(suite.tasks.len(), 2 * (3 + 1));
    for task in &suite.tasks {
        let spec = task.spec::<ContextSpec>().expect("a context task");
        for n_units in [200, spec.guess_units(), 5_000, 40_000] {
            let rendered = spec.render("abcdef0123456789", n_units);
            let failures = spec.verify(&rendered);
            assert!(
                failures.is_empty(),
                "{} at {n_units}: {failures:?}",
                task.id
            );
        }
    }
}

#[test]
fn a_needle_left_out_or_doubled_fails_the_proof() {
    let suite = context_suite(&plan(), 500);
    let spec = suite.tasks[1]
        .spec::<ContextSpec>()
        .cloned()
        .expect("context task");
    let mut rendered = spec.render("n", 2_000);
    let sentence = spec.needles[0].sentence();
    rendered.prompt = rendered.prompt.replacen(&sentence, "", 1);
    assert!(!spec.verify(&rendered).is_empty());
    let mut doubled = spec.render("n", 2_000);
    doubled.prompt =
        doubled
            .prompt
            .replacen("<document>\n", &format!("<document>\n{sentence} "), 1);
    let failures = spec.verify(&doubled);
    assert!(
        failures.iter().any(|f| f.contains("appears 2 times")),
        "{failures:?}"
    );
    // A needle recorded at another depth than where it sits.
    let mut moved = spec.clone();
    moved.needles[0].depth_pct = 90;
    let failures = moved.verify(&spec.render("n", 2_000));
    assert!(
        failures.iter().any(|f| f.contains("sits at")),
        "{failures:?}"
    );
}

#[test]
fn depths_land_where_asked() {
    let suite = context_suite(&plan(), 500);
    for task in suite.tasks.iter().filter(|t| t.id.contains("-d")) {
        let spec = task.spec::<ContextSpec>().expect("context");
        let rendered = spec.render("n", 3_000);
        let nominal = f64::from(spec.depth_pct.expect("single needle"));
        assert!((rendered.depths[0] - nominal).abs() <= DEPTH_TOLERANCE_POINTS);
    }
}

#[test]
fn checkers_take_the_gold_and_refuse_near_misses() {
    let suite = context_suite(&plan(), 500);
    let single = suite.task("context-4k-d50-s0").expect("task");
    let spec = single.spec::<ContextSpec>().expect("context");
    let gold = spec.gold()[0];
    let pass = single
        .check_answer(&Reply::stopped(format!("It says so.\nANSWER: {gold}")))
        .expect("literal");
    assert_eq!(pass.kind, OutcomeKind::Pass);
    let off_by_digit = gold ^ 1;
    let wrong = single
        .check_answer(&Reply::stopped(format!("ANSWER: {off_by_digit}")))
        .expect("literal");
    assert_eq!(wrong.kind, OutcomeKind::Wrong);
    let multi = suite.task("context-4k-multi-s0").expect("multi task");
    let values = multi.spec::<ContextSpec>().expect("context").gold();
    assert_eq!(values.len(), 3);
    let all: Vec<String> = values.iter().map(u32::to_string).collect();
    let reply = |text: String| Reply::stopped(format!("ANSWER: {text}"));
    let check = |text: String| multi.check_answer(&reply(text)).expect("literal").kind;
    assert_eq!(check(all.join(", ")), OutcomeKind::Pass);
    assert_eq!(check(all[..2].join(", ")), OutcomeKind::Wrong);
    let mut swapped = all.clone();
    swapped.swap(0, 1);
    assert_eq!(check(swapped.join(", ")), OutcomeKind::Wrong);
}

#[test]
fn the_same_plan_draws_the_same_tasks_and_another_seed_others() {
    let a = context_suite(&plan(), 500);
    let b = context_suite(&plan(), 500);
    assert_eq!(a, b);
    let mut other = plan();
    other.seed = 8;
    let c = context_suite(&other, 500);
    assert_eq!(
        context_task_ids(&plan()),
        a.tasks.iter().map(|t| t.id.clone()).collect::<Vec<_>>()
    );
    assert_eq!(
        a.tasks.iter().map(|t| &t.id).collect::<Vec<_>>(),
        c.tasks.iter().map(|t| &t.id).collect::<Vec<_>>()
    );
    assert_ne!(
        a.tasks[0].spec::<ContextSpec>(),
        c.tasks[0].spec::<ContextSpec>()
    );
}

#[test]
fn the_self_check_proves_every_task_and_catches_a_broken_one() {
    let suite = context_suite(&plan(), 500);
    for task in &suite.tasks {
        let (n_checks, failures) = prove_context_task(task);
        assert!(failures.is_empty(), "{}: {failures:?}", task.id);
        assert!(n_checks >= 8, "{}: {n_checks}", task.id);
    }
    // A task whose prompt lost a needle (a broken generator) fails, naming the reason.
    let mut broken = suite.tasks[0].clone();
    let spec = broken.spec::<ContextSpec>().cloned().expect("spec");
    broken.messages[0].content =
        broken.messages[0]
            .content
            .replacen(&spec.needles[0].sentence(), "", 1);
    let (_, failures) = prove_context_task(&broken);
    assert!(
        failures.iter().any(|f| f.contains("not the one rendered")),
        "{failures:?}"
    );
    // A gold that is a distractor's value.
    let mut wrong_gold = suite.tasks[0].clone();
    wrong_gold.checker = Checker::Integer(i128::from(spec.needles[1].value));
    let (_, failures) = prove_context_task(&wrong_gold);
    assert!(
        failures.iter().any(|f| f.contains("checker's gold")),
        "{failures:?}"
    );
}

#[test]
fn plans_name_their_problem() {
    let mut bad = plan();
    bad.depths = vec![120];
    assert!(bad.problem().expect("bad depth").starts_with("--depths"));
    bad = plan();
    bad.multi_needles = 1;
    assert!(
        bad.problem()
            .expect("bad multi")
            .starts_with("--multi-needles")
    );
    assert_eq!(plan().problem(), None);
    assert_eq!(length_label(4_096), "4k");
    assert_eq!(length_label(6_000), "6000");
}

#[test]
fn needles_are_found_only_in_their_own_form() {
    let text = "x The special code for Zorvan is 1234567. The special code for 9 is 1. \
                The special code for Bel is 12a.";
    assert_eq!(find_needles(text), vec![("Zorvan".to_owned(), 1_234_567)]);
    assert_eq!(
        parse_integer_list("1234567, 7654321 and 1"),
        Some(vec![1_234_567, 7_654_321, 1])
    );
    assert_eq!(parse_integer_list("12, x"), None);
}
