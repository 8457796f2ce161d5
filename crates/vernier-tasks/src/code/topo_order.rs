//! `topo-order`: a topological order with a fixed tie-break.
//!
//! Inputs travel as a list of `[item, [dependencies...]]` pairs and the harness builds
//! the dict from them, so the dict's insertion order is the one chosen here (a JSON
//! object's key order is not something to rely on).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use vernier_grader::Case;
use vernier_stats::SplitMix64;

use super::spec::{CaseDraw, CodeTaskSpec, single_control_spec};

const DESCRIPTION: &str = r#"Write a Python function

    def topo_order(deps: dict[str, list[str]]) -> list[str]:

deps maps an item to the items it depends on (a list without duplicates). Return
every item exactly once, in an order where each item comes after all of its
dependencies. Items that appear only inside the lists are items too. Among the items
whose dependencies are all placed, the smallest in Python's string order (the `<` of
str) always goes next; this makes the answer unique. For example
{"b": ["a"], "a": [], "c": []} gives ["a", "b", "c"], and {"x": ["B"], "a": []} gives
["B", "a", "x"]. An empty dict gives []. If the dependencies contain a cycle
(including an item that depends on itself), raise ValueError. The tests use up to
a few hundred items, within a time limit."#;

type Dependencies = Vec<(String, Vec<String>)>;

/// The Rust reference: Kahn's algorithm with an ordered set of ready items. Rust
/// compares `String`s by their UTF-8 bytes, which orders them by code point, as
/// Python's `str` does. `None` means a cycle.
pub(super) fn order(dependencies: &[(String, Vec<String>)]) -> Option<Vec<String>> {
    let mut waiting: BTreeMap<&str, usize> = BTreeMap::new();
    let mut dependants: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (item, requirements) in dependencies {
        waiting.entry(item).or_insert(0);
        for requirement in requirements {
            waiting.entry(requirement).or_insert(0);
            *waiting.entry(item).or_insert(0) += 1;
            dependants.entry(requirement).or_default().push(item);
        }
    }
    let mut ready: BTreeSet<&str> = waiting
        .iter()
        .filter(|&(_, &count)| count == 0)
        .map(|(&item, _)| item)
        .collect();
    let mut placed = Vec::with_capacity(waiting.len());
    while let Some(item) = ready.pop_first() {
        placed.push(item.to_owned());
        for &dependant in dependants.get(item).map_or(&[][..], Vec::as_slice) {
            let count = waiting.get_mut(dependant)?;
            *count -= 1;
            if *count == 0 {
                ready.insert(dependant);
            }
        }
    }
    (placed.len() == waiting.len()).then_some(placed)
}

fn owned(pairs: &[(&str, &[&str])]) -> Dependencies {
    pairs
        .iter()
        .map(|(item, requirements)| {
            (
                (*item).to_owned(),
                requirements.iter().map(|&r| r.to_owned()).collect(),
            )
        })
        .collect()
}

/// A random acyclic graph: names whose string order differs from their numeric
/// order, edges from earlier to later items of a random permutation, entries in a
/// shuffled order, and some items present only as dependencies. With
/// `add_cycle`, two edges close a cycle.
fn random_dependencies(seed: u64, count: usize, add_cycle: bool) -> Dependencies {
    const PREFIXES: [&str; 6] = ["lib", "Lib", "app", "test", "_build", "z"];
    let mut generator = SplitMix64::new(seed);
    let mut names: Vec<String> = (0..count)
        .map(|index| {
            format!(
                "{}{}",
                PREFIXES[generator.index(PREFIXES.len())],
                index * 7 % (count + 3)
            )
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    generator.shuffle(&mut names);
    let mut requirements: Vec<Vec<String>> = vec![Vec::new(); names.len()];
    for (later, requirements_of_later) in requirements.iter_mut().enumerate().skip(1) {
        let mut chosen = BTreeSet::new();
        for _ in 0..generator.below(4) {
            chosen.insert(generator.index(later));
        }
        *requirements_of_later = chosen
            .into_iter()
            .map(|earlier| names[earlier].clone())
            .collect();
    }
    if add_cycle {
        // The first and the last item of the permutation now depend on each other;
        // many other items depend on the first.
        let last = names.len() - 1;
        if !requirements[last].contains(&names[0]) {
            requirements[last].push(names[0].clone());
        }
        let closing = names[last].clone();
        requirements[0].push(closing);
    }
    let mut entries: Dependencies = names
        .into_iter()
        .zip(requirements)
        .filter(|(_, requirements)| !requirements.is_empty() || generator.chance(2, 3))
        .collect();
    generator.shuffle(&mut entries);
    entries
}

fn to_json(dependencies: &[(String, Vec<String>)]) -> Value {
    Value::Array(
        dependencies
            .iter()
            .map(|(item, requirements)| json!([item, requirements]))
            .collect(),
    )
}

fn case(name: &str, dependencies: &[(String, Vec<String>)]) -> vernier_grader::Case {
    let input = to_json(dependencies);
    match order(dependencies) {
        Some(placed) => Case::new(name, input, json!(placed)),
        None => Case::raises(name, input, "ValueError"),
    }
}

pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let mut cases = vec![
        case("empty", &[]),
        case(
            "prompt_example",
            &owned(&[("b", &["a"]), ("a", &[]), ("c", &[])]),
        ),
        case("uppercase_first", &owned(&[("x", &["B"]), ("a", &[])])),
        case(
            "independent_reverse_order",
            &owned(&[("c", &[]), ("b", &[]), ("a", &[])]),
        ),
        case(
            "only_in_lists",
            &owned(&[("main", &["util", "core"]), ("util", &["core"])]),
        ),
        case(
            "tie_break_after_release",
            &owned(&[("b", &["a"]), ("a", &[]), ("c", &[]), ("aa", &["c"])]),
        ),
        case(
            "numbers_as_strings",
            &owned(&[("10", &[]), ("9", &[]), ("100", &["9"])]),
        ),
        case("self_cycle", &owned(&[("a", &["a"])])),
        case(
            "two_cycle",
            &owned(&[("a", &["b"]), ("b", &["a"]), ("c", &[])]),
        ),
        case(
            "cycle_behind_a_chain",
            &owned(&[
                ("start", &[]),
                ("x", &["start", "z"]),
                ("y", &["x"]),
                ("z", &["y"]),
            ]),
        ),
    ];
    let size = draw.random_size(400);
    cases.push(case(
        &format!("random_{size}"),
        &random_dependencies(draw.seed(0x0074_6f70_6f01), size, false),
    ));
    cases.push(case(
        &format!("random_cycle_{size}"),
        &random_dependencies(draw.seed(0x0074_6f70_6f02), size, true),
    ));
    for index in 1..=draw.extra_cases() {
        cases.push(case(
            &format!("random_{size}_extra_{index}"),
            &random_dependencies(
                draw.extra_seed(0x0074_6f70_6f01, index),
                size,
                index % 2 == 0,
            ),
        ));
    }
    single_control_spec!(
        id: "topo-order",
        folder: "topo_order",
        control: "ignores-tie-break" => "control_no_tie_break.py",
        cases: cases,
        description: DESCRIPTION,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_from_the_prompt() {
        assert_eq!(
            order(&owned(&[("b", &["a"]), ("a", &[]), ("c", &[])])).expect("acyclic"),
            ["a", "b", "c"]
        );
        assert_eq!(
            order(&owned(&[("x", &["B"]), ("a", &[])])).expect("acyclic"),
            ["B", "a", "x"]
        );
        assert_eq!(
            order(&owned(&[
                ("b", &["a"]),
                ("a", &[]),
                ("c", &[]),
                ("aa", &["c"])
            ]))
            .expect("acyclic"),
            ["a", "b", "c", "aa"]
        );
        assert_eq!(order(&owned(&[("a", &["a"])])), None);
        assert_eq!(
            order(&owned(&[("a", &["b"]), ("b", &["a"]), ("c", &[])])),
            None
        );
    }

    #[test]
    fn random_graphs_are_valid_and_the_cyclic_one_is_cyclic() {
        let dependencies = random_dependencies(0x0074_6f70_6f01, 400, false);
        let placed = order(&dependencies).expect("acyclic by construction");
        let position: BTreeMap<&str, usize> = placed
            .iter()
            .enumerate()
            .map(|(index, item)| (item.as_str(), index))
            .collect();
        for (item, requirements) in &dependencies {
            for requirement in requirements {
                assert!(position[requirement.as_str()] < position[item.as_str()]);
            }
        }
        let only_in_lists = position.len() - dependencies.len();
        assert!(
            only_in_lists > 10,
            "only {only_in_lists} items appear only in lists"
        );
        assert_eq!(
            order(&random_dependencies(0x0074_6f70_6f02, 400, true)),
            None
        );
    }
}
