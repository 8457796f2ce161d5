//! What a run records about the server, the client machine and the tool.

use std::collections::BTreeMap;
#[cfg(feature = "engine")]
use std::process::Command;

use serde::{Deserialize, Serialize};

/// Everything recorded about where a run happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Environment {
    /// The server measured.
    pub server: ServerInfo,
    /// The model measured.
    pub model: ServedModel,
    /// `/metrics` at the start (sums over label sets), empty when the server has none.
    pub metrics_at_start: BTreeMap<String, f64>,
    /// The machine running the sweep.
    pub client: ClientMachine,
    /// This tool.
    pub tool: ToolInfo,
    /// Output of `--gpu-info-cmd`, when given.
    pub gpu_info: Option<GpuInfo>,
    /// The server's GPUs as NVML or `--gpu-metrics-url` described them, or why none was read
    /// (absent in journals written before GPUs were read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<vernier_gpu::GpuRecord>,
}

/// Server identity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The URL measured (the simulator's loopback URL when simulated).
    pub base_url: String,
    /// True when the figures come from the in-process simulator.
    pub simulator: bool,
    /// `vllm`, `llama_cpp`, `sglang` or `unknown`.
    pub kind: String,
    /// The `Server` response header.
    pub server_header: Option<String>,
    /// `/version` as returned.
    pub version: Option<serde_json::Value>,
    /// `/props` as returned (llama.cpp).
    pub props: Option<serde_json::Value>,
    /// The KV cache the server states in `/metrics` (vLLM's `vllm:cache_config_info`: size
    /// in tokens, data type, block size, prefix caching).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache: Option<KvCacheStated>,
}

/// The model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServedModel {
    /// Model id as the server names it.
    pub id: String,
    /// Maximum context, when the server says.
    pub max_model_len: Option<u64>,
    /// What the server states it loaded, and whether the served name agrees (absent in
    /// journals written before it was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<vernier_run::LoadedWeights>,
}

/// The client machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientMachine {
    /// `PRETTY_NAME` from `/etc/os-release`, else the OS family.
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
    /// CPU model name from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Logical cores.
    pub logical_cores: usize,
    /// `uname -a`, when available.
    pub uname: Option<String>,
}

/// This tool's identity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolInfo {
    /// `sweep`.
    pub name: String,
    /// Crate version.
    pub version: String,
    /// `git rev-parse HEAD` at build time, or `unknown`.
    pub git_revision: String,
}

/// Captured output of the GPU information command.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GpuInfo {
    /// The command as given.
    pub command: String,
    /// Exit status, `None` when it did not run.
    pub exit_code: Option<i32>,
    /// Standard output (capped at 64 KiB).
    pub stdout: String,
    /// Standard error or why it could not run (capped at 64 KiB).
    pub stderr: String,
}

/// The tool's identity.
#[cfg(feature = "engine")]
pub(crate) fn tool_info() -> ToolInfo {
    ToolInfo {
        name: "sweep".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        git_revision: option_env!("VERNIER_GIT_REVISION")
            .unwrap_or("unknown")
            .to_owned(),
    }
}

/// Reads the client machine's description from `/etc/os-release`, `/proc` and `uname`.
#[cfg(feature = "engine")]
pub(crate) fn client_machine() -> ClientMachine {
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("PRETTY_NAME="))
                .map(|value| value.trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown".to_owned(), |text| text.trim().to_owned());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            matches!(key.trim(), "model name" | "Model" | "cpu model")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let from_cpuinfo = cpuinfo
        .lines()
        .filter(|line| line.starts_with("processor"))
        .count();
    let logical_cores = if from_cpuinfo > 0 {
        from_cpuinfo
    } else {
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    };
    let uname = Command::new("uname")
        .arg("-a")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned());
    ClientMachine {
        os,
        kernel,
        arch: std::env::consts::ARCH.to_owned(),
        cpu_model,
        logical_cores,
        uname,
    }
}

#[cfg(feature = "engine")]
const CAPTURE_LIMIT: usize = 64 * 1024;

#[cfg(feature = "engine")]
fn capped(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= CAPTURE_LIMIT {
        return text.into_owned();
    }
    let mut end = CAPTURE_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[cut at {CAPTURE_LIMIT} bytes]", &text[..end])
}

/// Runs `command` with `sh -c` and keeps its output.
#[cfg(feature = "engine")]
pub(crate) fn gpu_info(command: &str) -> GpuInfo {
    match Command::new("sh").arg("-c").arg(command).output() {
        Ok(output) => GpuInfo {
            command: command.to_owned(),
            exit_code: output.status.code(),
            stdout: capped(&output.stdout),
            stderr: capped(&output.stderr),
        },
        Err(error) => GpuInfo {
            command: command.to_owned(),
            exit_code: None,
            stdout: String::new(),
            stderr: format!("could not run sh -c: {error}"),
        },
    }
}

#[cfg(all(test, feature = "engine"))]
mod tests {
    use super::*;

    #[test]
    fn client_machine_names_cores_and_kernel() {
        let machine = client_machine();
        assert!(machine.logical_cores >= 1);
        assert!(!machine.kernel.is_empty());
        assert!(!machine.os.is_empty());
    }

    #[test]
    fn gpu_info_captures_output_and_status() {
        let info = gpu_info("echo GPU-0 && exit 3");
        assert_eq!(info.stdout.trim(), "GPU-0");
        assert_eq!(info.exit_code, Some(3));
    }

    #[test]
    fn long_output_is_capped() {
        let text = "é".repeat(CAPTURE_LIMIT);
        let out = capped(text.as_bytes());
        assert!(out.len() < CAPTURE_LIMIT + 64);
        assert!(out.ends_with("bytes]"));
    }
}

/// The KV cache a server states in its `/metrics` (vLLM's `vllm:cache_config_info`), as the
/// run file records it (the reading side needs no HTTP client to read it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct KvCacheStated {
    /// Tokens the cache holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Its data type (`auto` follows the model's, `fp8` is an FP8 cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// Tokens per block: prefix-cache hits come in whole blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    /// Whether prefix caching is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_caching: Option<bool>,
    /// Where it was read: `vllm:cache_config_info`.
    pub source: String,
}
