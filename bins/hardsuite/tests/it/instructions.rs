//! The instruction suite: a scripted simulator's plan reproduced task by task (every
//! instruction met, one broken, cut off, empty), the IFEval-style breakdown counted against
//! the plan, and a real `llama-server` answering every task with none lost to the
//! infrastructure.

use std::collections::BTreeMap;

use vernier_hardsuite::{ScriptedKind, instructions_breakdown, scripted_plan};
use vernier_tasks::{Checker, InstructionsSpec, OutcomeKind, instructions_suite};

use crate::vision::run;

#[tokio::test]
async fn the_scripted_plan_is_reproduced_task_by_task_and_the_breakdown_counts_it() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let results = run("instructions", &out, &["--seed", "4"]).await;
    let suite = instructions_suite(4, vernier_tasks::DEFAULT_INSTRUCTIONS_BUDGET);
    let plan = scripted_plan(&suite);
    assert_eq!(results.tasks.len(), suite.tasks.len());
    // What the plan says each kind of instruction must show: broken (strictly) once for each
    // task whose scripted reply breaks an instruction of that kind, met otherwise; only the
    // replies graded (not cut off, not empty) count.
    let mut expected: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let (mut prompts, mut prompts_met) = (0_u64, 0_u64);
    for ((task, planned), result) in suite.tasks.iter().zip(&plan).zip(&results.tasks) {
        assert_eq!(task.id, result.id);
        let sample = &result.samples[0];
        assert_eq!(
            sample.outcome,
            planned.kind.expected_outcome(),
            "{}: {}",
            task.id,
            sample.detail
        );
        let spec = task.spec::<InstructionsSpec>().expect("spec");
        let Checker::Instructions(constraints) = &task.checker else {
            panic!("{} has another checker", task.id);
        };
        assert_eq!(constraints, &spec.constraints);
        if matches!(sample.outcome, OutcomeKind::CutOff | OutcomeKind::NoAnswer) {
            continue;
        }
        let read = vernier_tasks::read_instruction_detail(&sample.detail).expect("the verdicts");
        let broken = match planned.kind {
            ScriptedKind::BreakInstruction(index) => Some(index),
            _ => None,
        };
        prompts += 1;
        prompts_met += u64::from(broken.is_none());
        for (index, (constraint, (name, strict, _))) in
            spec.constraints.iter().zip(&read).enumerate()
        {
            assert_eq!(constraint.name(), name);
            assert_eq!(*strict, broken != Some(index), "{}: {name}", task.id);
            let counts = expected.entry(constraint.name()).or_default();
            counts.0 += 1;
            counts.1 += u64::from(broken != Some(index));
        }
    }
    assert!(
        plan.iter()
            .any(|p| matches!(p.kind, ScriptedKind::BreakInstruction(_))),
        "the plan breaks some instruction"
    );
    let breakdown = instructions_breakdown(&results).expect("a breakdown");
    assert_eq!(
        (breakdown.prompts.n, breakdown.prompts.strict),
        (prompts, prompts_met)
    );
    let counted: BTreeMap<&str, (u64, u64)> = breakdown
        .by_kind
        .iter()
        .map(|(name, counts)| (name.as_str(), (counts.n, counts.strict)))
        .collect();
    assert_eq!(counted, expected);
    let report = std::fs::read_to_string(out.join("report.md")).expect("the report");
    assert!(
        report.contains(&format!(
            "| prompts, every instruction met | {prompts_met}/{prompts} "
        )),
        "{report}"
    );
}

#[test]
fn every_instruction_task_is_sent_answered_and_scored_by_a_real_llama_server() {
    let test = "every_instruction_task_is_sent_answered_and_scored_by_a_real_llama_server";
    let Some(server) = crate::structured::smollm2_with_jinja(test) else {
        return;
    };
    // Every task's outcome a model's (pass, wrong, cut off, empty), none infra, all scored.
    crate::structured::run_against_llama("instructions", server.port, 12, "160");
}
