//! How two runs differ: their instances (what makes pairing by task id meaningful) and the
//! settings they were made with.

use std::collections::HashMap;

use vernier_tasks::Category;

use crate::report::thousands;
use crate::results::ResultsFile;

/// How the instances of two runs differ: their draws (level, seed), and every task both
/// hold whose recorded parameters differ. Empty when they are the same instances.
pub fn instance_differences(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    let mut differences = Vec::new();
    let show = |draw: Option<vernier_tasks::Draw>| {
        draw.map_or_else(|| "a suite file".to_owned(), |d| d.to_string())
    };
    if a.draw != b.draw {
        differences.push(format!("A {}, B {}", show(a.draw), show(b.draw)));
    }
    let b_tasks: HashMap<&str, _> = b.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let changed: Vec<&str> = a
        .tasks
        .iter()
        .filter_map(|task_a| {
            let task_b = b_tasks.get(task_a.id.as_str())?;
            match (&task_a.instance, &task_b.instance) {
                (Some(x), Some(y)) if x.parameters != y.parameters => Some(task_a.id.as_str()),
                _ => None,
            }
        })
        .collect();
    if !changed.is_empty() {
        differences.push(format!("different parameters in {}", changed.join(", ")));
    }
    let context_seed = |run: &ResultsFile| run.context.as_ref().and_then(|c| c.seed);
    if context_seed(a) != context_seed(b) {
        let show = |seed: Option<u64>| seed.map_or_else(|| "none".to_owned(), |s| s.to_string());
        differences.push(format!(
            "context needles and haystacks drawn from seed {} in A, {} in B",
            show(context_seed(a)),
            show(context_seed(b))
        ));
    }
    differences.extend(crate::dataset_run::dataset_differences(
        a.dataset_record.as_ref(),
        b.dataset_record.as_ref(),
    ));
    differences
}

/// Every difference in how two runs were made besides their instances, one phrase each.
pub fn setting_differences(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    let mut differences = Vec::new();
    let present: std::collections::BTreeSet<Category> = a
        .tasks
        .iter()
        .chain(&b.tasks)
        .map(|task| task.category)
        .collect();
    for category in present {
        let budgets = |run: &ResultsFile| {
            let mut values: Vec<u32> = run
                .tasks
                .iter()
                .filter(|t| t.category == category)
                .flat_map(|t| t.samples.iter().map(|s| s.budget_tokens))
                .collect();
            values.sort_unstable();
            values.dedup();
            values
        };
        let (x, y) = (budgets(a), budgets(b));
        if !x.is_empty() && !y.is_empty() && x != y {
            let show = |v: &[u32]| {
                v.iter()
                    .map(|b| thousands(u64::from(*b)))
                    .collect::<Vec<_>>()
                    .join("/")
            };
            differences.push(format!(
                "{category} budget: A {} tokens, B {} tokens",
                show(&x),
                show(&y)
            ));
        }
    }
    if a.sampling != b.sampling {
        differences.push(format!("sampling: A {:?}, B {:?}", a.sampling, b.sampling));
    }
    if a.extra_body != b.extra_body {
        let show = |v: &Option<serde_json::Value>| {
            v.as_ref()
                .map_or_else(|| "none".to_owned(), ToString::to_string)
        };
        differences.push(format!(
            "extra body: A {}, B {}",
            show(&a.extra_body),
            show(&b.extra_body)
        ));
    }
    if a.samples != b.samples {
        differences.push(format!(
            "samples per task: A {}, B {}",
            a.samples, b.samples
        ));
    }
    let rerun = |run: &ResultsFile| run.after_rerun.as_ref().and_then(|s| s.rerun_budget);
    if rerun(a) != rerun(b) {
        let show =
            |v: Option<u32>| v.map_or_else(|| "none".to_owned(), |b| thousands(u64::from(b)));
        differences.push(format!(
            "re-run budget: A {}, B {}",
            show(rerun(a)),
            show(rerun(b))
        ));
    }
    if a.suite != b.suite {
        differences.push(format!("suite: A {}, B {}", a.suite, b.suite));
    }
    if a.self_checked != b.self_checked {
        differences.push(format!(
            "self-check: A {}, B {}",
            if a.self_checked { "passed" } else { "skipped" },
            if b.self_checked { "passed" } else { "skipped" }
        ));
    }
    differences
}
