//! What a set-up script in `scripts/` says it has cached: `scripts/NAME --check` prints
//! `KEY=VALUE` lines for what is there and installs nothing. The support that finds a cached
//! tool (llama-server, vLLM, kubernetes-validate) reads it.

use std::path::Path;
use std::process::Command;

/// The lines `scripts/name --check` printed (empty when it found nothing or could not run).
pub fn check_script(name: &str) -> String {
    let script = repository().join("scripts").join(name);
    Command::new("bash")
        .arg(&script)
        .arg("--check")
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .unwrap_or_default()
}

/// The repository's root (this crate lives in `crates/vernier-test-support`).
pub fn repository() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The value of `key` in what [`check_script`] printed.
pub fn value_of(printed: &str, key: &str) -> Option<String> {
    printed.lines().find_map(|line| {
        line.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('='))
            .map(str::to_owned)
    })
}
