//! Architecture invariant: vernier-stats does no I/O, so no async runtime, HTTP stack or
//! Docker client may enter its dependency tree.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

const FORBIDDEN: [&str; 5] = ["tokio", "hyper", "hyper-util", "bollard", "mio"];

#[test]
fn no_io_crates_in_the_dependency_tree() {
    let lock_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    let text = std::fs::read_to_string(&lock_path).expect("read the workspace Cargo.lock");
    let lock: toml::Table = text.parse().expect("parse Cargo.lock");
    let packages = lock["package"]
        .as_array()
        .expect("Cargo.lock has [[package]] entries");

    // Name → names it depends on, merged over every version of that name (an over-estimate,
    // so passing is conclusive). Cargo.lock lists dev-dependencies too.
    let mut edges: HashMap<&str, Vec<&str>> = HashMap::new();
    for package in packages {
        let name = package["name"].as_str().expect("package name");
        let entry = edges.entry(name).or_default();
        if let Some(dependencies) = package.get("dependencies").and_then(|d| d.as_array()) {
            for dependency in dependencies.iter().filter_map(|d| d.as_str()) {
                entry.push(dependency.split(' ').next().unwrap_or(dependency));
            }
        }
    }

    let mut reached = BTreeSet::new();
    let mut pending = vec!["vernier-stats"];
    while let Some(name) = pending.pop() {
        if reached.insert(name) {
            pending.extend(edges.get(name).into_iter().flatten().copied());
        }
    }
    assert!(
        reached.contains("statrs"),
        "the walk did not reach statrs: {reached:?}"
    );
    let found: Vec<_> = FORBIDDEN
        .iter()
        .filter(|name| reached.contains(*name))
        .collect();
    assert!(found.is_empty(), "vernier-stats reaches {found:?}");
}
