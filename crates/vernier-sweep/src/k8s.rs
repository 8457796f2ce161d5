//! The Kubernetes Indexed Job that runs a sweep's shards (`sweep shard-job`): one pod per
//! shard, the completion index as the shard's number, the agreed start instant and the
//! configuration in the Job's spec, and every shard's run folder on one shared volume, ready
//! for `sweep merge`.

use crate::error::SweepError;
use crate::shard::MAX_SHARDS;

/// What the Job is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShardJob {
    /// The Job's name (a DNS label: lowercase letters, digits and `-`).
    pub name: String,
    /// The namespace, when not the current one.
    pub namespace: Option<String>,
    /// The container image holding `sweep` as its entry point (`deploy/k8s/build-image.sh`).
    pub image: String,
    /// How many shards (pods).
    pub shards: u32,
    /// The agreed start, ms since the Unix epoch.
    pub start_at_unix_ms: u64,
    /// The persistent volume claim the shards write their run folders to (`/results`).
    pub claim: String,
    /// The sweep's own flags, the same for every shard (`--base-url`, `--rate`, …).
    pub sweep_args: Vec<String>,
    /// CPU each shard asks for, in cores (its request and limit).
    pub cpu: String,
    /// Memory each shard asks for (its request and limit).
    pub memory: String,
}

impl ShardJob {
    /// A Job of `shards` pods named `name` running `image` against the claim `claim`.
    pub fn new(name: &str, image: &str, shards: u32, start_at_unix_ms: u64, claim: &str) -> Self {
        Self {
            name: name.to_owned(),
            namespace: None,
            image: image.to_owned(),
            shards,
            start_at_unix_ms,
            claim: claim.to_owned(),
            sweep_args: Vec::new(),
            cpu: "1".to_owned(),
            memory: "512Mi".to_owned(),
        }
    }
}

/// Flags the Job sets itself, refused among the sweep's own.
const SET_BY_THE_JOB: [&str; 5] = ["--shard", "--start-at", "--out", "--resume", "--overwrite"];

fn is_dns_label(text: &str, longest: usize) -> bool {
    !text.is_empty()
        && text.len() <= longest
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}

/// A YAML scalar that reads back as exactly `text` (a JSON string is a YAML double-quoted
/// scalar).
fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// Checks what the Job is made from; the error names the flag and the fix.
fn check(job: &ShardJob) -> Result<(), SweepError> {
    // The pods' names add a suffix to the Job's: keep room for it.
    if !is_dns_label(&job.name, 50) {
        return Err(SweepError::invalid(
            "--name",
            format!(
                "{:?} is not a Job name: give lowercase letters, digits and '-', at most 50, e.g. vernier-sweep",
                job.name
            ),
        ));
    }
    if let Some(namespace) = &job.namespace
        && !is_dns_label(namespace, 63)
    {
        return Err(SweepError::invalid(
            "--namespace",
            format!("{namespace:?} is not a namespace: give lowercase letters, digits and '-'"),
        ));
    }
    if job.image.trim().is_empty() || job.image.contains(char::is_whitespace) {
        return Err(SweepError::invalid(
            "--image",
            "give the image that holds sweep, e.g. vernier-sweep:0.1.0 (deploy/k8s/build-image.sh builds it)",
        ));
    }
    if !(1..=MAX_SHARDS).contains(&job.shards) {
        return Err(SweepError::invalid(
            "--shards",
            format!("give 1 to {MAX_SHARDS} shards"),
        ));
    }
    if !is_dns_label(&job.claim, 253) {
        return Err(SweepError::invalid(
            "--claim",
            format!("{:?} is not a persistent volume claim's name", job.claim),
        ));
    }
    if let Some(flag) = job.sweep_args.iter().find(|arg| {
        SET_BY_THE_JOB
            .iter()
            .any(|set| arg.as_str() == *set || arg.starts_with(&format!("{set}=")))
    }) {
        return Err(SweepError::invalid(
            flag.clone(),
            "the Job sets it for each shard (--shard from the completion index, --start-at from --start-at, --out under /results); leave it out",
        ));
    }
    if !job
        .sweep_args
        .iter()
        .any(|arg| arg.starts_with("--base-url"))
    {
        return Err(SweepError::invalid(
            "--base-url",
            "the shards must share one server: give its --base-url after --",
        ));
    }
    Ok(())
}

/// The Job's manifest as YAML.
pub fn render_shard_job(job: &ShardJob) -> Result<String, SweepError> {
    check(job)?;
    let n = job.shards;
    let start = vernier_run::rfc3339_ms(job.start_at_unix_ms);
    let mut args = vec![
        "--shard".to_owned(),
        format!("$(JOB_COMPLETION_INDEX)/{n}"),
        "--start-at".to_owned(),
        start.clone(),
        "--out".to_owned(),
        "/results/shard-$(JOB_COMPLETION_INDEX)".to_owned(),
        "--quiet".to_owned(),
    ];
    args.extend(job.sweep_args.iter().cloned());
    let args = args.iter().fold(String::new(), |mut out, arg| {
        out.push_str("            - ");
        out.push_str(&quoted(arg));
        out.push('\n');
        out
    });
    let namespace = job
        .namespace
        .as_deref()
        .map_or_else(String::new, |ns| format!("  namespace: {}\n", quoted(ns)));
    let (name, image, claim) = (quoted(&job.name), quoted(&job.image), quoted(&job.claim));
    let (cpu, memory) = (quoted(&job.cpu), quoted(&job.memory));
    Ok(format!(
        "# {n} shards of one sweep, started together at {start}.\n\
         # Each pod runs shard $(JOB_COMPLETION_INDEX) of {n} into /results/shard-INDEX on the\n\
         # claim {claim}; when the Job completes, merge them: sweep merge OUT SHARD_DIR...\n\
         apiVersion: batch/v1\n\
         kind: Job\n\
         metadata:\n\
         \x20 name: {name}\n\
         {namespace}\
         \x20 labels:\n\
         \x20   app.kubernetes.io/name: vernier-sweep\n\
         \x20   app.kubernetes.io/instance: {name}\n\
         spec:\n\
         \x20 completionMode: Indexed\n\
         \x20 completions: {n}\n\
         \x20 parallelism: {n}\n\
         \x20 # A shard is not run again: a second try would miss the agreed start.\n\
         \x20 backoffLimitPerIndex: 0\n\
         \x20 maxFailedIndexes: {n}\n\
         \x20 template:\n\
         \x20   metadata:\n\
         \x20     labels:\n\
         \x20       app.kubernetes.io/name: vernier-sweep\n\
         \x20       app.kubernetes.io/instance: {name}\n\
         \x20   spec:\n\
         \x20     restartPolicy: Never\n\
         \x20     # The image runs as nobody; the volume is made writable for its group.\n\
         \x20     securityContext:\n\
         \x20       runAsNonRoot: true\n\
         \x20       runAsUser: 65534\n\
         \x20       runAsGroup: 65534\n\
         \x20       fsGroup: 65534\n\
         \x20     # One shard per node where the cluster has nodes to spare.\n\
         \x20     topologySpreadConstraints:\n\
         \x20       - maxSkew: 1\n\
         \x20         topologyKey: kubernetes.io/hostname\n\
         \x20         whenUnsatisfiable: ScheduleAnyway\n\
         \x20         labelSelector:\n\
         \x20           matchLabels:\n\
         \x20             app.kubernetes.io/instance: {name}\n\
         \x20     containers:\n\
         \x20       - name: sweep\n\
         \x20         image: {image}\n\
         \x20         args:\n\
         {args}\
         \x20         resources:\n\
         \x20           requests:\n\
         \x20             cpu: {cpu}\n\
         \x20             memory: {memory}\n\
         \x20           limits:\n\
         \x20             cpu: {cpu}\n\
         \x20             memory: {memory}\n\
         \x20         volumeMounts:\n\
         \x20           - name: results\n\
         \x20             mountPath: /results\n\
         \x20     volumes:\n\
         \x20       - name: results\n\
         \x20         persistentVolumeClaim:\n\
         \x20           claimName: {claim}\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> ShardJob {
        let mut job = ShardJob::new(
            "load-test",
            "vernier-sweep:0.1.0",
            4,
            1_796_253_381_000,
            "sweep-results",
        );
        job.sweep_args = vec!["--base-url".to_owned(), "http://vllm:8000".to_owned()];
        job
    }

    #[test]
    fn the_job_carries_the_shard_start_and_folder_of_each_pod() {
        let yaml = render_shard_job(&job()).expect("renders");
        assert!(yaml.contains("  completionMode: Indexed\n  completions: 4\n  parallelism: 4\n"));
        assert!(yaml.contains("- \"$(JOB_COMPLETION_INDEX)/4\"\n"));
        assert!(yaml.contains("- \"2026-12-02T23:16:21.000Z\"\n"));
        assert!(yaml.contains("- \"/results/shard-$(JOB_COMPLETION_INDEX)\"\n"));
        assert!(yaml.contains("- \"http://vllm:8000\"\n"));
        assert!(yaml.contains("claimName: \"sweep-results\"\n"));
    }

    #[test]
    fn flags_the_job_sets_and_bad_names_are_refused() {
        let refused = |job: &ShardJob| match render_shard_job(job) {
            Err(SweepError::Run(vernier_run::RunError::InvalidArgument { what, .. })) => what,
            other => panic!("not refused: {other:?}"),
        };
        let mut bad = job();
        bad.sweep_args.push("--out=/tmp/x".to_owned());
        assert_eq!(refused(&bad), "--out=/tmp/x");
        let mut bad = job();
        bad.name = "Load_Test".to_owned();
        assert_eq!(refused(&bad), "--name");
        let mut bad = job();
        bad.sweep_args.clear();
        assert_eq!(refused(&bad), "--base-url");
        let mut bad = job();
        bad.shards = 0;
        assert_eq!(refused(&bad), "--shards");
    }
}
