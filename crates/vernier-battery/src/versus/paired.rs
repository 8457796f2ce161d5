//! What two suite runs are compared over: the tasks both hold.

use vernier_hardsuite::ResultsFile;

/// The two runs cut to the tasks both hold: cost and curves compare the same tasks.
pub(crate) fn common_tasks(a: &ResultsFile, b: &ResultsFile) -> (ResultsFile, ResultsFile) {
    let ids_a: std::collections::BTreeSet<&str> = a.tasks.iter().map(|t| t.id.as_str()).collect();
    let ids_b: std::collections::BTreeSet<&str> = b.tasks.iter().map(|t| t.id.as_str()).collect();
    let keep = |results: &ResultsFile| {
        let mut kept = results.clone();
        kept.tasks
            .retain(|task| ids_a.contains(task.id.as_str()) && ids_b.contains(task.id.as_str()));
        kept
    };
    (keep(a), keep(b))
}
