//! Long-context retrieval: needles whose answer only the context holds, in haystacks cut from
//! the bundled prose and code corpora, sized in the server's own tokens at run time.
//!
//! A [`ContextSpec`] is everything one request is drawn from: the target prompt length in the
//! server's tokens, the needle depth, the corpus and the slice of it, and the needles (keys are
//! made-up words, values 7-digit numbers, both drawn per task from the plan's seed and checked
//! to occur nowhere in the corpus). [`ContextSpec::render`] writes the prompt for a given
//! haystack length in corpus units (a word or punctuation mark with the whitespace before it);
//! the runner finds the length that hits the target in the server's tokens. A unique opening
//! nonce comes first, so no two requests share a prefix. [`ContextSpec::verify`] proves a
//! rendered prompt holds exactly the needles the gold says, once each, at the recorded depth.

mod spec;
mod spec_draws;
#[cfg(test)]
mod tests;

use crate::answer::parse_integer;
use crate::kind::Kind;
use crate::suite::Suite;
use crate::task::{Category, Checker, Message, Task};
pub use spec::{
    ContextPlan, ContextSpec, DEFAULT_DEPTHS, DEFAULT_LENGTHS, DEPTH_TOLERANCE_POINTS, Haystack,
    Needle, Rendered, UNITS_PER_TOKEN_GUESS, find_needles, length_label,
};
use spec_draws::cell_seed;

impl Category {
    /// Long-context retrieval: needles in haystacks sized in the server's tokens.
    pub const CONTEXT: Self = Self::new("context");
}

/// The long-context family: needles whose answer only the haystack holds, proved from the
/// rendered text.
pub(crate) const KIND: Kind = Kind {
    category: Category::CONTEXT,
    description: "needles in haystacks sized in the server's tokens",
    default_budget: DEFAULT_CONTEXT_BUDGET,
    fits: |checker| matches!(checker, Checker::Integer(_) | Checker::IntegerList(_)),
    prove: Some(prove_context_task),
};

/// Default completion budget of a context task: room for a short answer, or some reasoning.
pub const DEFAULT_CONTEXT_BUDGET: u32 = 2_000;

/// The self-check of one context task: its prompt is the one its spec renders, holds exactly
/// its needles at their depths (at the first-guess length and at four times it), and its
/// checker takes the gold and refuses a value one digit off, a distractor's value, a partial
/// or reordered list, a cut-off and an answer only in the reasoning. Gives the number of checks
/// and every failure.
pub fn prove_context_task(task: &Task) -> (usize, Vec<String>) {
    use crate::task::{OutcomeKind, Reply};
    let mut proof = crate::proof::Proof::default();
    let Some(spec) = task.spec::<ContextSpec>() else {
        proof.require(false, "a context task without its spec".to_owned());
        return proof.finish();
    };
    let guess = spec.guess_units();
    let offline = spec.render("0000000000000000", guess);
    let message = task.messages.iter().rev().find(|m| m.role == "user");
    proof.require(
        message.is_some_and(|m| m.content == offline.prompt),
        "the prompt is not the one rendered from the task's spec".to_owned(),
    );
    for n_units in [guess, guess * 4] {
        let rendered = spec.render("0123456789abcdef", n_units);
        proof.require_none(
            spec.verify(&rendered)
                .into_iter()
                .map(|failure| format!("at {n_units} units: {failure}")),
        );
    }
    let gold: Vec<i128> = spec.gold().into_iter().map(i128::from).collect();
    let same_gold = match (&task.checker, gold.as_slice()) {
        (Checker::Integer(value), [single]) => value == single,
        (Checker::IntegerList(values), many) => many.len() >= 2 && values == many,
        _ => false,
    };
    proof.require(
        same_gold,
        "the checker's gold is not the asked needles' values".to_owned(),
    );
    let join = |values: &[i128]| {
        values
            .iter()
            .map(i128::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut probe = |what: &str, reply: Reply, kind: OutcomeKind| {
        proof.grades(task, what, &reply, kind);
    };
    let answer = |text: String| Reply::stopped(format!("The document says so.\nANSWER: {text}"));
    probe("the gold answer", answer(join(&gold)), OutcomeKind::Pass);
    let mut one_off = gold.clone();
    if let Some(first) = one_off.first_mut() {
        // The last digit changed: 7 digits still, one of them off.
        *first = *first - *first % 10 + (*first % 10 + 1) % 10;
    }
    probe(
        "a value one digit off",
        answer(join(&one_off)),
        OutcomeKind::Wrong,
    );
    if let Some(distractor) = spec.needles.iter().find(|needle| !needle.asked) {
        let mut taken = gold.clone();
        taken[0] = i128::from(distractor.value);
        probe(
            "a distractor's value",
            answer(join(&taken)),
            OutcomeKind::Wrong,
        );
    }
    if gold.len() >= 2 {
        probe(
            "all values but the last",
            answer(join(&gold[..gold.len() - 1])),
            OutcomeKind::Wrong,
        );
        let mut swapped = gold.clone();
        swapped.swap(0, 1);
        probe(
            "the values out of order",
            answer(join(&swapped)),
            OutcomeKind::Wrong,
        );
    }
    proof.refuses_cut_off_and_reasoning(task, &join(&gold));
    proof.finish()
}

/// The task of one spec: its id, the prompt rendered at the first-guess length (the runner
/// renders it again at the length the server's count calls for) and its checker.
pub fn context_task(id: impl Into<String>, spec: ContextSpec, budget_tokens: u32) -> Task {
    let rendered = spec.render("0000000000000000", spec.guess_units());
    let gold = spec.gold();
    let checker = match gold.as_slice() {
        [single] => Checker::Integer(i128::from(*single)),
        values => Checker::IntegerList(values.iter().map(|v| i128::from(*v)).collect()),
    };
    let mut task = Task::new(
        id,
        Category::CONTEXT,
        rendered.prompt,
        budget_tokens,
        checker,
    );
    task.messages = vec![Message::user(task.messages[0].content.clone())];
    task.with_spec(spec)
}

/// The context suite of a plan: for every length, one single-needle task per depth and cell
/// sample, then (with `multi_needles` ≥ 2) one multi-needle task per cell sample. Ids read
/// `context-4k-d50-s0` and `context-4k-multi-s0`; the same plan gives the same tasks, so two
/// runs pair cell by cell.
pub fn context_suite(plan: &ContextPlan, budget_tokens: u32) -> Suite {
    let tasks = context_cells(plan)
        .into_iter()
        .map(|(id, length, depth, sample)| {
            let seed = cell_seed(plan.seed, length, depth, sample);
            context_task(
                id,
                spec_draws::spec(seed, length, depth, plan),
                budget_tokens,
            )
        })
        .collect();
    Suite::new("context", tasks)
}

/// The ids [`context_suite`] gives a plan's tasks, in its order, drawing and rendering nothing.
pub fn context_task_ids(plan: &ContextPlan) -> Vec<String> {
    context_cells(plan).into_iter().map(|(id, ..)| id).collect()
}

/// Every task of a plan: id, length, depth (`None`: multi-needle) and cell sample.
fn context_cells(plan: &ContextPlan) -> Vec<(String, u32, Option<u8>, u32)> {
    let mut lengths = plan.lengths.clone();
    lengths.sort_unstable();
    lengths.dedup();
    let mut depths = plan.depths.clone();
    depths.sort_unstable();
    depths.dedup();
    let mut cells = Vec::new();
    for &length in &lengths {
        let label = length_label(length);
        for &depth in &depths {
            for sample in 0..plan.samples_per_cell {
                cells.push((
                    format!("context-{label}-d{depth}-s{sample}"),
                    length,
                    Some(depth),
                    sample,
                ));
            }
        }
        if plan.multi_needles >= 2 {
            for sample in 0..plan.samples_per_cell {
                cells.push((
                    format!("context-{label}-multi-s{sample}"),
                    length,
                    None,
                    sample,
                ));
            }
        }
    }
    cells
}

/// Parses a list answer (`1234567, 7654321`): integers separated by commas, semicolons,
/// whitespace or "and". `None` when any piece is not an integer.
pub(crate) fn parse_integer_list(text: &str) -> Option<Vec<i128>> {
    let pieces: Vec<&str> = text
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|piece| !piece.is_empty() && !piece.eq_ignore_ascii_case("and"))
        .collect();
    if pieces.is_empty() {
        return None;
    }
    pieces.iter().map(|piece| parse_integer(piece)).collect()
}
