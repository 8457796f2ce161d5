//! The fault matrix every tool runs against the simulator (issue: fail loudly): the server
//! frozen (SIGSTOP), killed, answering 500 or 401 to every generation request, a derived file
//! that cannot be written, SIGTERM to the tool, and kill −9 of the tool followed by a resume
//! against the server on another port. Each tool's test file states, cell by cell, the named
//! outcome and the documented exit code it must end with; this module holds the parts they
//! share: the simulator as a separate process (so it can be frozen and killed), running a tool
//! while a fault is applied, and reading the resume command it printed.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::free_port::free_port;
use crate::simulator::SIM_VARIABLE;

/// The simulator in a process of its own.
#[derive(Debug)]
pub struct SimChild {
    child: Child,
    /// Its port.
    pub port: u16,
}

impl SimChild {
    /// Starts the simulator on a free port with `extra` arguments (fast steps unless `extra`
    /// names its own decode step or overhead) and
    /// waits until it accepts connections. `test_path` is the path in its binary of the test
    /// that calls [`crate::serve_simulator_when_asked`], such as
    /// `fault_matrix::serve_simulator_when_asked`.
    pub fn start(test_path: &str, extra: &str) -> Self {
        Self::start_on(test_path, free_port(), extra)
    }

    /// [`SimChild::start`] on `port`: a server restarted where a killed one was.
    pub fn start_on(test_path: &str, port: u16, extra: &str) -> Self {
        let exe = std::env::current_exe().expect("the test binary");
        let mut words = vec![format!("--port {port}")];
        for (flag, fast) in [("--decode-step-ms", "1"), ("--fixed-overhead-ms", "1")] {
            if !extra.contains(flag) {
                words.push(format!("{flag} {fast}"));
            }
        }
        let words = words.join(" ");
        let child = Command::new(exe)
            .args(["--exact", test_path, "--nocapture"])
            .env(SIM_VARIABLE, format!("{words} {extra}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the simulator");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the simulator never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status();
    }

    /// Freezes it (SIGSTOP): connections are taken by the kernel, nothing answers.
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// Kills it (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        self.signal("-CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for SimChild {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What happens to a run while it goes.
#[expect(
    missing_debug_implementations,
    reason = "it holds closures, which have no Debug"
)]
pub enum During<'a> {
    /// Nothing.
    Nothing,
    /// Once `ready(out)` holds, `act` runs (with the tool's process id).
    When(&'a dyn Fn(&Path) -> bool, &'a dyn Fn(u32)),
}

/// Runs `exe` with `words`, applying `during`, and waits (at most three minutes) for it.
pub fn run(exe: &str, words: &[String], out: &Path, during: &During<'_>) -> Output {
    let mut child = Command::new(exe)
        .args(words)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the tool");
    if let During::When(ready, act) = during {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if ready(out) {
                act(child.id());
                break;
            }
            if child.try_wait().ok().flatten().is_some() || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    let Ok(output) = receiver.recv_timeout(Duration::from_secs(180)) else {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        panic!("the tool did not end within three minutes of the fault")
    };
    output.expect("the tool's output")
}

/// Sends `signal` to process `pid`.
pub fn send(signal: &str, pid: u32) {
    let _ = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status();
}

/// `flags` as owned words, then the output folder (the last flag being `--out`).
pub fn words_then(flags: &[&str], out: &Path) -> Vec<String> {
    flags
        .iter()
        .map(|word| (*word).to_owned())
        .chain([out.display().to_string()])
        .collect()
}

/// Whether the journal at `path` holds `marker`.
pub fn journal_has(path: &Path, marker: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.contains(marker))
}

/// The exit code and stderr of `output`, for assertion messages.
pub fn described(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The words of the resume command the tool printed after "continue with: " (shell quotes
/// undone: the tests' paths hold no quote or space).
pub fn resume_words(output: &Output) -> Option<Vec<String>> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().find_map(|line| {
        line.split_once("continue with: ")
            .map(|(_, command)| command)
    })?;
    Some(
        line.split_whitespace()
            .skip(1)
            .map(|word| word.trim_matches('\'').to_owned())
            .collect(),
    )
}

/// Asserts one cell: the exit code, each of `says` in stderr, and a resume command when
/// `resumable`; returns the resume command's words (without the program).
pub fn assert_cell(
    cell: &str,
    output: &Output,
    code: i32,
    says: &[&str],
    resumable: bool,
) -> Option<Vec<String>> {
    let text = described(output);
    assert_eq!(output.status.code(), Some(code), "{cell}: {text}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_no_debug_text(cell, &stderr);
    for said in says {
        assert!(
            stderr.contains(said),
            "{cell}: stderr lacks {said:?}: {text}"
        );
    }
    let resume = resume_words(output);
    assert_eq!(
        resume.is_some(),
        resumable,
        "{cell}: a resume command {} expected: {text}",
        if resumable { "was" } else { "was not" }
    );
    resume
}

/// Rust's Debug text of an `Option`, a `Result` or an engine's enum: never in a message meant
/// for people.
const DEBUG_WRAPPERS: [&str; 7] = [
    "Some(", "None)", "Fatal(", "TooLong(", "Infra(", "Ok(", "Err(",
];

/// Asserts that `stderr` holds no Rust Debug wrapper: `Some(`, `None)`, `Fatal(`, `TooLong(`,
/// `Infra(`, `Ok(`, `Err(`.
pub fn assert_no_debug_text(cell: &str, stderr: &str) {
    for wrapper in DEBUG_WRAPPERS {
        assert!(
            !stderr.contains(wrapper),
            "{cell}: stderr shows Rust's Debug text {wrapper:?}: {stderr}"
        );
    }
}

/// Makes `out/NAME` a folder, so the file of that name cannot be written.
pub fn block_file(out: &Path, name: &str) {
    std::fs::create_dir_all(out.join(name).join("blocked")).expect("block the file");
}

/// Removes the block.
pub fn unblock_file(out: &Path, name: &str) {
    std::fs::remove_dir_all(out.join(name)).expect("unblock the file");
}

/// One tool's column of the matrix.
#[expect(
    missing_debug_implementations,
    reason = "it holds closures, which have no Debug"
)]
pub struct Tool<'a> {
    /// Cell names start with it.
    pub name: &'a str,
    /// The binary.
    pub exe: &'a str,
    /// The serving test's path in the test binary.
    pub serve: &'a str,
    /// The words of a run against `base_url` into `out`.
    pub args: &'a dyn Fn(&str, &Path) -> Vec<String>,
    /// The words that resume the run in `out` against `base_url`.
    pub resume: &'a dyn Fn(&Path, &str) -> Vec<String>,
    /// The journal the run writes, relative to its folder (`journal.jsonl`; a battery's parts
    /// keep journals of their own, such as `sweep/journal.jsonl`).
    pub journal: &'a str,
    /// A journal line that shows the measurement is under way.
    pub started: &'a str,
    /// A derived file (written from the journal at the end).
    pub derived: &'a str,
    /// How a server that stopped answering (frozen, killed) ends the run: the exit code, what
    /// stderr says, whether a resume command is printed.
    pub stopped: (i32, &'a [&'a str], bool),
    /// The same for a server that answers 500 to every generation request.
    pub errors: (i32, &'a [&'a str], bool),
    /// The exit code and what stderr says when every request is answered 401 (a usage error:
    /// no resume command).
    pub refused: (i32, &'a [&'a str]),
    /// Checks a finished run in `out` (its server, still answering, at the URL given):
    /// everything measured once, nothing lost or counted twice.
    pub complete: &'a dyn Fn(&Path, &str),
    /// A journal line a frozen or killed server must leave (a soak's death record).
    pub stopped_leaves: Option<&'a str>,
    /// A run refused at its start (every request answered 500 or 401) leaves no output
    /// folder: its start sizes texts with counted requests before anything is measured.
    pub refused_start_leaves_no_folder: bool,
}

impl Tool<'_> {
    fn cell(&self, fault: &str) -> String {
        format!("{} × {fault}", self.name)
    }

    fn started_in(&self) -> impl Fn(&Path) -> bool + '_ {
        move |out| journal_has(&out.join(self.journal), self.started)
    }

    /// The server freezes mid-run.
    pub fn frozen(&self) {
        let sim = SimChild::start(self.serve, "");
        let folder = tempfile::tempdir().expect("tempdir");
        let out = folder.path().join("out");
        let freeze = |_pid: u32| sim.freeze();
        let started = self.started_in();
        let output = run(
            self.exe,
            &(self.args)(&sim.base_url(), &out),
            &out,
            &During::When(&started, &freeze),
        );
        let (code, says, resumable) = self.stopped;
        assert_cell(&self.cell("server frozen"), &output, code, says, resumable);
        self.left(&out);
    }

    fn left(&self, out: &Path) {
        if let Some(marker) = self.stopped_leaves {
            assert!(
                journal_has(&out.join(self.journal), marker),
                "{}: no {marker} in the journal",
                self.name
            );
        }
    }

    /// The server is killed mid-run.
    pub fn killed(&self) {
        let sim = std::sync::Mutex::new(SimChild::start(self.serve, ""));
        let base_url = sim.lock().map(|s| s.base_url()).expect("sim");
        let folder = tempfile::tempdir().expect("tempdir");
        let out = folder.path().join("out");
        let kill = |_pid: u32| {
            if let Ok(mut sim) = sim.lock() {
                sim.kill();
            }
        };
        let started = self.started_in();
        let output = run(
            self.exe,
            &(self.args)(&base_url, &out),
            &out,
            &During::When(&started, &kill),
        );
        let (code, says, resumable) = self.stopped;
        assert_cell(&self.cell("server killed"), &output, code, says, resumable);
        self.left(&out);
    }

    /// Every generation request is answered 500.
    pub fn answering_500(&self) {
        let (code, says, resumable) = self.errors;
        self.answering(500, code, says, resumable);
    }

    /// Every generation request is answered 401.
    pub fn answering_401(&self) {
        let (code, says) = self.refused;
        self.answering(401, code, says, false);
    }

    /// Every generation request is answered `status`.
    fn answering(&self, status: u16, code: i32, says: &[&str], resumable: bool) {
        let sim = SimChild::start(self.serve, &format!("--http-status {status}"));
        let folder = tempfile::tempdir().expect("tempdir");
        let out = folder.path().join("out");
        let output = run(
            self.exe,
            &(self.args)(&sim.base_url(), &out),
            &out,
            &During::Nothing,
        );
        let cell = self.cell(&format!("every request answered {status}"));
        assert_cell(&cell, &output, code, says, resumable);
        if self.refused_start_leaves_no_folder {
            assert!(
                !out.exists(),
                "{cell}: a run refused at its start left {}",
                out.display()
            );
        }
    }

    /// A derived file cannot be written (as on a full disk): the run says what is safe and how
    /// to continue; the continuation, once the file can be written, completes the run with
    /// nothing measured twice.
    pub fn unwritable(&self) {
        let sim = SimChild::start(self.serve, "");
        let folder = tempfile::tempdir().expect("tempdir");
        let out = folder.path().join("out");
        block_file(&out, self.derived);
        let output = run(
            self.exe,
            &(self.args)(&sim.base_url(), &out),
            &out,
            &During::Nothing,
        );
        let resume = assert_cell(
            &self.cell(&format!("{} cannot be written", self.derived)),
            &output,
            1,
            &[self.derived, "journal.jsonl"],
            true,
        )
        .expect("a resume command");
        unblock_file(&out, self.derived);
        let resumed = run(self.exe, &resume, &out, &During::Nothing);
        assert_eq!(resumed.status.code(), Some(0), "{}", described(&resumed));
        assert!(out.join(self.derived).is_file());
        (self.complete)(&out, &sim.base_url());
    }

    /// SIGTERM to the tool mid-run: it ends like Ctrl-C, and its resume command completes it.
    pub fn sigterm(&self) {
        let sim = SimChild::start(self.serve, "");
        let folder = tempfile::tempdir().expect("tempdir");
        let out = folder.path().join("out");
        let term = |pid: u32| send("-TERM", pid);
        let started = self.started_in();
        let output = run(
            self.exe,
            &(self.args)(&sim.base_url(), &out),
            &out,
            &During::When(&started, &term),
        );
        let resume =
            assert_cell(&self.cell("SIGTERM"), &output, 130, &[], true).expect("a resume command");
        let resumed = run(self.exe, &resume, &out, &During::Nothing);
        assert_eq!(resumed.status.code(), Some(0), "{}", described(&resumed));
        (self.complete)(&out, &sim.base_url());
    }

    /// kill −9 of the tool mid-run, then a resume against the server on another port.
    pub fn killed_client_resumed_elsewhere(&self) {
        let first = SimChild::start(self.serve, "");
        let folder = tempfile::tempdir().expect("tempdir");
        let out = folder.path().join("out");
        let kill = |pid: u32| {
            // A little more than the first line, so something is measured and something is not.
            std::thread::sleep(Duration::from_millis(300));
            send("-KILL", pid);
        };
        let started = self.started_in();
        let output = run(
            self.exe,
            &(self.args)(&first.base_url(), &out),
            &out,
            &During::When(&started, &kill),
        );
        assert_eq!(output.status.code(), None, "{}", described(&output));
        drop(first);
        let second = SimChild::start(self.serve, "");
        let resumed = run(
            self.exe,
            &(self.resume)(&out, &second.base_url()),
            &out,
            &During::Nothing,
        );
        assert_eq!(
            resumed.status.code(),
            Some(0),
            "{}: {}",
            self.cell("kill -9, resumed on another port"),
            described(&resumed)
        );
        (self.complete)(&out, &second.base_url());
    }
}

/// The matrix's cells of one tool as tests (`$tool()` makes its [`Tool`]), and the test that
/// serves the simulator (`MODULE::serve_simulator_when_asked` in the tool's test binary, MODULE
/// being the module the macro is called in, such as `fault_matrix` or `fault_matrix_agent`: one
/// column per module, its [`Tool::serve`] naming that path).
#[macro_export]
macro_rules! matrix_cells {
    ($tool:ident) => {
        $crate::simulator_entry_point!();

        #[test]
        fn server_frozen() {
            $tool().frozen();
        }

        #[test]
        fn server_killed() {
            $tool().killed();
        }

        #[test]
        fn every_request_answered_500() {
            $tool().answering_500();
        }

        #[test]
        fn every_request_answered_401() {
            $tool().answering_401();
        }

        #[test]
        fn a_derived_file_cannot_be_written() {
            $tool().unwritable();
        }

        #[test]
        fn sigterm() {
            $tool().sigterm();
        }

        #[test]
        fn kill_9_then_resume_on_another_port() {
            $tool().killed_client_resumed_elsewhere();
        }
    };
}
