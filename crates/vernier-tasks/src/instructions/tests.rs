use super::*;

#[test]
fn every_task_at_every_level_proves_itself_over_several_seeds() {
    let mut kinds = std::collections::BTreeSet::new();
    // Five hundred seeds: a bound or a word set against one draw can break another
    // instruction's violation only for some topics and margins.
    for seed in 0..500 {
        let suite = instructions_suite(seed, 512);
        assert_eq!(
            suite.tasks.len(),
            INSTRUCTIONS_LEVELS.len() * INSTRUCTIONS_PER_LEVEL as usize
        );
        for task in &suite.tasks {
            let (checks, failures) = prove_instructions_task(task);
            assert!(
                failures.is_empty(),
                "{}: {failures:?}\n{:?}",
                task.id,
                task.messages
            );
            assert!(checks > 5, "{}", task.id);
            let spec = task.spec::<InstructionsSpec>().expect("spec");
            kinds.extend(spec.constraints.iter().map(Constraint::name));
        }
    }
    // Every kind of instruction is drawn somewhere.
    assert_eq!(kinds.len(), 13, "{kinds:?}");
}

#[test]
fn a_seed_draws_the_same_suite_and_another_seed_another() {
    let prompts = |seed| -> Vec<String> {
        instructions_suite(seed, 512)
            .tasks
            .iter()
            .map(|t| t.messages[0].content.clone())
            .collect()
    };
    assert_eq!(prompts(7), prompts(7));
    assert_ne!(prompts(7), prompts(8));
}

#[test]
fn a_generator_broken_on_purpose_is_named() {
    let suite = instructions_suite(3, 512);
    let task = suite
        .tasks
        .iter()
        .find(|t| {
            t.spec::<InstructionsSpec>().is_some_and(|s| {
                s.constraints
                    .iter()
                    .any(|c| matches!(c, Constraint::BulletCount { .. }))
            })
        })
        .expect("a task with a bullet count over the seed's draws");
    // The prompt asks for one count and the checker counts another: the proof names it.
    let mut broken = task.clone();
    if let Checker::Instructions(constraints) = &mut broken.checker {
        for constraint in constraints.iter_mut() {
            if let Constraint::BulletCount { n } = constraint {
                *n += 1;
            }
        }
    }
    let (_, failures) = prove_instructions_task(&broken);
    assert!(
        failures.iter().any(|f| f.contains("not the spec's")),
        "{failures:?}"
    );
    assert!(
        failures.iter().any(|f| f.contains("bullet_count")),
        "{failures:?}"
    );
    // A prompt that lost an instruction is named by the instruction.
    let mut silent = task.clone();
    silent.messages[0].content = "Write a short note.".to_owned();
    let (_, failures) = prove_instructions_task(&silent);
    assert!(
        failures
            .iter()
            .any(|f| f.contains("does not state bullet_count")),
        "{failures:?}"
    );
}

#[test]
fn the_grade_lists_each_instruction_strictly_and_loosely() {
    let constraints = vec![
        Constraint::BulletCount { n: 2 },
        Constraint::EndsWith {
            phrase: "That is all.".to_owned(),
        },
    ];
    let reply = Reply::stopped("- a\n- b\nThat is all.\nHope it helps.");
    let outcome = check_instructions(&constraints, &reply);
    assert_eq!(outcome.kind, OutcomeKind::Wrong);
    let read = read_instruction_detail(&outcome.detail).expect("read back");
    assert_eq!(
        read,
        [
            ("bullet_count".to_owned(), true, true),
            ("ends_with".to_owned(), false, true)
        ]
    );
    assert!(read_instruction_detail("no_answer_line").is_none());
}
