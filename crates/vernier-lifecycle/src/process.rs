//! A launched server: `sh -c CMD` in its own process group, its output in a log file, and the
//! whole group stopped on every path (a drop guard kills what an orderly stop did not). A reaper
//! beside it kills the group when this process dies without stopping it (kill −9), so no server
//! is left behind to answer a later run's requests.

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::LifecycleError;

/// How a launched server's process group was stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StopReport {
    /// `"stop command"` or `"SIGTERM"`.
    pub how: String,
    /// The group outlived the grace period and was sent SIGKILL.
    pub killed: bool,
    /// Seconds from the stop's start until no process of the group was left.
    pub stop_s: f64,
    /// Whether a process of the group was still there after SIGKILL (should never be).
    pub left_behind: bool,
    /// The launch command's exit status, when it had exited by itself before the stop.
    pub exited_before_stop: Option<String>,
}

/// A server started with `sh -c`, leader of its own process group.
#[derive(Debug)]
pub struct LaunchedServer {
    child: Mutex<Option<std::process::Child>>,
    reaper: Mutex<Option<std::process::Child>>,
    pgid: u32,
    launched_at: Instant,
    log: PathBuf,
    stopped: bool,
}

impl LaunchedServer {
    /// Runs `command` with `sh -c` in a new process group, stdout and stderr appended to `log`.
    pub fn launch(command: &str, log: &Path) -> Result<Self, LifecycleError> {
        let log_error = |source| LifecycleError::Log {
            path: log.to_owned(),
            source,
        };
        let file = File::options()
            .create(true)
            .append(true)
            .open(log)
            .map_err(log_error)?;
        let second = file.try_clone().map_err(log_error)?;
        let launched_at = Instant::now();
        let child = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(second)
            .process_group(0)
            .spawn()
            .map_err(|source| LifecycleError::Launch {
                command: command.to_owned(),
                source,
            })?;
        let pgid = child.id();
        Ok(Self {
            pgid,
            reaper: Mutex::new(spawn_reaper(pgid)),
            child: Mutex::new(Some(child)),
            launched_at,
            log: log.to_owned(),
            stopped: false,
        })
    }

    /// The instant just before the process was spawned: every milestone counts from here.
    pub fn launched_at(&self) -> Instant {
        self.launched_at
    }

    /// The process group id (the shell's pid).
    pub fn pgid(&self) -> u32 {
        self.pgid
    }

    /// Where the server's output goes.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The shell's exit status, once it has exited (it is reaped then).
    pub fn exit_status(&self) -> Option<String> {
        let mut guard = self.child.lock().ok()?;
        let child = guard.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            _ => None,
        }
    }

    /// The shell's exit, once it has exited: the status as the system writes it, and the
    /// signal that ended it (directly, or through the shell's `128 + N` status).
    pub fn exit(&self) -> Option<(String, Option<i32>)> {
        use std::os::unix::process::ExitStatusExt as _;
        let mut guard = self.child.lock().ok()?;
        let child = guard.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => {
                let signal = status.signal().or_else(|| {
                    status
                        .code()
                        .filter(|code| (129..=192).contains(code))
                        .map(|code| code - 128)
                });
                Some((status.to_string(), signal))
            }
            _ => None,
        }
    }

    /// Stops the group: `stop_command` when given (run with `sh -c`), else SIGTERM to the
    /// group; SIGKILL to whatever is left after `grace`. Waits until no process of the group
    /// is left (or a further second after SIGKILL).
    pub async fn stop(mut self, stop_command: Option<&str>, grace: Duration) -> StopReport {
        let exited_before_stop = self.exit_status();
        let started = Instant::now();
        let how = if let Some(command) = stop_command {
            // A stop command that never returns (a stuck daemon) gets the grace, then the
            // group is signalled as without one.
            let status = tokio::process::Command::new("sh")
                .arg("-c")
                .arg(command)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .status();
            if tokio::time::timeout(grace, status).await.is_err() {
                signal_group(self.pgid, "TERM");
                "stop command (timed out; then SIGTERM)"
            } else {
                "stop command"
            }
        } else {
            signal_group(self.pgid, "TERM");
            "SIGTERM"
        };
        let mut killed = false;
        if !self.wait_gone(grace).await {
            signal_group(self.pgid, "KILL");
            killed = true;
            self.wait_gone(Duration::from_secs(1)).await;
        }
        let left_behind = group_alive(self.pgid);
        self.stopped = true;
        StopReport {
            how: how.to_owned(),
            killed,
            stop_s: started.elapsed().as_secs_f64(),
            left_behind,
            exited_before_stop,
        }
    }

    /// Reaps the shell and waits until the group is empty; false when `limit` passed first.
    async fn wait_gone(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let _ = self.exit_status();
            if !group_alive(self.pgid) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for LaunchedServer {
    fn drop(&mut self) {
        self.stop_group_now();
        // The group is gone: the reaper has nothing left to watch over.
        if let Ok(mut guard) = self.reaper.lock()
            && let Some(reaper) = guard.as_mut()
        {
            let _ = reaper.kill();
            let _ = reaper.wait();
        }
    }
}

/// The reaper: `sh` in its own process group (its `kill` builtin takes `-PGID` without `--`),
/// polling every half second that this process is alive (and not a zombie; `kill -0` where
/// there is no `/proc`) and that the server's group still has a process; when this process is
/// gone first, it sends the group SIGTERM, then SIGKILL two seconds later (a `docker run`
/// client forwards TERM to its container, never KILL). No unsafe code: `PR_SET_PDEATHSIG` would need a `pre_exec` hook, and it would reach
/// the shell only, not the server the shell started.
fn spawn_reaper(pgid: u32) -> Option<std::process::Child> {
    const SCRIPT: &str = r#"parent=$1; group=$2
alive() {
  if [ -d /proc/self ]; then
    [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]
  else
    kill -0 "$1" 2>/dev/null
  fi
}
while alive "$parent" && kill -0 "-$group" 2>/dev/null; do sleep 0.5; done
if ! alive "$parent"; then
  kill -TERM "-$group" 2>/dev/null && sleep 2 && kill -KILL "-$group" 2>/dev/null
fi"#;
    std::process::Command::new("sh")
        .arg("-c")
        .arg(SCRIPT)
        .arg("vernier-reaper")
        .arg(std::process::id().to_string())
        .arg(pgid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
}

impl LaunchedServer {
    /// The drop guard's stop: SIGTERM, then SIGKILL after two seconds, unless already stopped.
    fn stop_group_now(&mut self) {
        if self.stopped {
            return;
        }
        // Not stopped in order (a panic, a dropped future): terminate, then kill, blocking
        // briefly, so that no server outlives its run.
        signal_group(self.pgid, "TERM");
        let deadline = Instant::now() + Duration::from_secs(2);
        while group_alive(self.pgid) && Instant::now() < deadline {
            let _ = self.exit_status();
            std::thread::sleep(Duration::from_millis(20));
        }
        if group_alive(self.pgid) {
            signal_group(self.pgid, "KILL");
        }
        if let Ok(mut guard) = self.child.lock()
            && let Some(child) = guard.as_mut()
        {
            let _ = child.wait();
        }
    }
}

/// `kill -SIGNAL -- -PGID` (the workspace denies unsafe code, so no direct `killpg`).
fn signal_group(pgid: u32, signal: &str) {
    let _ = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(format!("-{pgid}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Whether any process other than a zombie is in process group `pgid` (read from `/proc`).
pub fn group_alive(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return signal_zero(pgid);
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(process) = file_name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{process}/stat")) else {
            continue;
        };
        // Fields after the command name (which is in parentheses and may hold spaces):
        // state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let _ppid = fields.next();
        let pgrp = fields.next().and_then(|p| p.parse::<u32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            return true;
        }
    }
    false
}

fn signal_zero(pgid: u32) -> bool {
    std::process::Command::new("kill")
        .arg("-0")
        .arg("--")
        .arg(format!("-{pgid}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sigterm_stops_the_whole_group() {
        let folder = tempfile::tempdir().expect("tempdir");
        let log = folder.path().join("server.log");
        // A shell with a child that ignores nothing: both must go.
        let server =
            LaunchedServer::launch("sleep 30 & sleep 30; echo never", &log).expect("launch");
        let pgid = server.pgid();
        assert!(group_alive(pgid));
        let report = server.stop(None, Duration::from_secs(5)).await;
        assert!(!report.killed, "{report:?}");
        assert!(!report.left_behind);
        assert!(!group_alive(pgid));
    }

    #[tokio::test]
    async fn a_group_that_ignores_sigterm_is_killed_after_the_grace() {
        let folder = tempfile::tempdir().expect("tempdir");
        let log = folder.path().join("server.log");
        let server = LaunchedServer::launch("trap '' TERM; sleep 30", &log).expect("launch");
        let pgid = server.pgid();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let report = server.stop(None, Duration::from_millis(300)).await;
        assert!(report.killed, "{report:?}");
        assert!(!group_alive(pgid));
    }

    #[tokio::test]
    async fn dropping_the_handle_kills_the_group() {
        let folder = tempfile::tempdir().expect("tempdir");
        let log = folder.path().join("server.log");
        let server = LaunchedServer::launch("sleep 30", &log).expect("launch");
        let pgid = server.pgid();
        drop(server);
        assert!(!group_alive(pgid));
    }

    #[tokio::test]
    async fn output_goes_to_the_log() {
        let folder = tempfile::tempdir().expect("tempdir");
        let log = folder.path().join("server.log");
        let server = LaunchedServer::launch("echo hello; echo oops >&2", &log).expect("launch");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(server.exit_status().is_some());
        let report = server.stop(None, Duration::from_secs(1)).await;
        assert!(report.exited_before_stop.is_some());
        let text = std::fs::read_to_string(&log).expect("log");
        assert!(text.contains("hello") && text.contains("oops"), "{text}");
    }
}
