//! The attack suite: each hostile submission is contained and classified.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::json;
use vernier_grader::{Case, GradeReason, Limits, Submission};

use crate::support::{
    CALL_F, assert_detail_contains, assert_failed, assert_reason, connect_or_skip,
};

fn one_case(expected: serde_json::Value) -> Vec<Case> {
    vec![Case::new("only", json!(null), expected)]
}

fn short(wall_time_s: u64) -> Limits {
    Limits::default().with_wall_time(Duration::from_secs(wall_time_s))
}

#[tokio::test]
async fn network_connections_fail() {
    let harness = connect_or_skip!("network");
    let code = r#"
import socket
def f(_):
    socket.create_connection(("1.1.1.1", 53), timeout=3).close()
    return "connected"
"#;
    let grade = harness.grade_f(code, one_case(json!("connected"))).await;
    assert_failed(&grade, &["only"]);
    assert_detail_contains(&grade, 0, "OSError");
    assert_detail_contains(&grade, 0, "unreachable");
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_fork_bomb_is_contained_by_the_pids_limit() {
    let harness = connect_or_skip!("fork-bomb");
    // First measure the limit: fork sleeping children until fork fails.
    let counting = r"
import os, time
def f(_):
    children = []
    try:
        while len(children) < 1000:
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError:
        pass
    for pid in children:
        os.kill(pid, 9)
    return len(children)
";
    let grade = harness
        .grade_f_within(counting, one_case(json!(-1)), short(20))
        .await;
    let detail = &grade.cases[0].detail;
    let forked: i64 = detail
        .rsplit("got ")
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{grade:#?}"));
    assert!(
        (1..64).contains(&forked),
        "forked {forked} children under a limit of 64"
    );

    // Then the classic bomb: it ends by the wall-clock kill or by failing its case.
    let bomb = "import os\ndef f(_):\n    while True:\n        os.fork()\n";
    let grade = harness
        .grade_f_within(bomb, one_case(json!(1)), short(4))
        .await;
    assert!(
        matches!(
            grade.reason,
            GradeReason::Timeout | GradeReason::FailedCases(_) | GradeReason::Crashed(_)
        ),
        "{grade:#?}"
    );
    assert!(
        grade.wall_time < Duration::from_secs(30),
        "{:?}",
        grade.wall_time
    );
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_memory_bomb_is_out_of_memory() {
    let harness = connect_or_skip!("memory-bomb");
    let code =
        "def f(_):\n    blocks = []\n    while True:\n        blocks.append(b'x' * (16 << 20))\n";
    let limits = short(20).with_memory_bytes(128 << 20);
    let grade = harness
        .grade_f_within(code, one_case(json!(1)), limits)
        .await;
    assert_reason(&grade, &GradeReason::OutOfMemory);
    assert!(grade.oom_killed);
    assert_detail_contains(&grade, 0, "out of memory");
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_case_killed_for_memory_ends_the_run_and_other_kills_fail_their_case() {
    let harness = connect_or_skip!("case-kills");
    let code = r"
import ctypes, os
def f(x):
    if x == 'bomb':
        blocks = []
        while True:
            blocks.append(b'x' * (16 << 20))
    if x == 'self-kill':
        os.kill(os.getpid(), 9)
    if x == 'segfault':
        ctypes.string_at(0)
    return x
";
    let cases = || {
        vec![
            Case::new("first", json!(1), json!(1)),
            Case::new("self_kill", json!("self-kill"), json!(1)),
            Case::new("segfault", json!("segfault"), json!(1)),
            Case::new("after", json!(2), json!(2)),
            Case::new("bomb", json!("bomb"), json!(1)),
            Case::new("never", json!(3), json!(3)),
        ]
    };
    let limits = short(20).with_memory_bytes(128 << 20);
    let grade = harness.grade_f_within(code, cases(), limits).await;
    assert_reason(&grade, &GradeReason::OutOfMemory);
    assert!(grade.oom_killed);
    let details: Vec<(&str, bool, &str)> = grade
        .cases
        .iter()
        .map(|case| (case.name.as_str(), case.passed, case.detail.as_str()))
        .collect();
    assert_eq!(
        details,
        [
            ("first", true, "ok"),
            ("self_kill", false, "killed by signal 9 (SIGKILL)"),
            ("segfault", false, "killed by signal 11 (SIGSEGV)"),
            ("after", true, "ok"),
            ("bomb", false, "killed by signal 9 (SIGKILL): out of memory"),
            ("never", false, "not run: an earlier case ran out of memory"),
        ],
        "{grade:#?}"
    );

    // Without the memory bomb, a kill or a crash fails its own case only.
    let mut without_bomb = cases();
    without_bomb.truncate(4);
    let grade = harness.grade_f_within(code, without_bomb, limits).await;
    assert_failed(&grade, &["self_kill", "segfault"]);
    assert!(!grade.oom_killed);
    assert_eq!(grade.exit_code, Some(0));
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn an_infinite_loop_times_out() {
    let harness = connect_or_skip!("infinite-loop");
    let code = "def f(_):\n    while True:\n        pass\n";
    let grade = harness
        .grade_f_within(code, one_case(json!(1)), short(2))
        .await;
    assert_reason(&grade, &GradeReason::Timeout);
    assert!(grade.wall_time >= Duration::from_secs(2));
    assert!(!grade.cases[0].passed);
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn writes_succeed_only_in_tmp() {
    let harness = connect_or_skip!("writes");
    let code = r#"
import os
def attempt(action):
    try:
        action()
        return True
    except OSError:
        return False
def write(path):
    with open(path, "w") as handle:
        handle.write("x")
def f(_):
    return {
        "tmp": attempt(lambda: write("/tmp/ok")),
        "root": attempt(lambda: write("/evil")),
        "etc": attempt(lambda: write("/etc/passwd")),
        "usr": attempt(lambda: write("/usr/lib/python3.11/os.py")),
        "work_new": attempt(lambda: write("/work/new.py")),
        "work_overwrite": attempt(lambda: write("/work/solution.py")),
        "work_chmod": attempt(lambda: os.chmod("/work/solution.py", 0o777)),
        "work_remove": attempt(lambda: os.remove("/work/harness.py")),
        "dev_shm": attempt(lambda: write("/dev/shm/x")),
    }
"#;
    let expected = json!({
        "tmp": true, "root": false, "etc": false, "usr": false, "work_new": false,
        "work_overwrite": false, "work_chmod": false, "work_remove": false, "dev_shm": false,
    });
    let grade = harness.grade_f(code, one_case(expected)).await;
    assert_reason(&grade, &GradeReason::Passed);
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn expected_values_are_nowhere_in_the_container() {
    let harness = connect_or_skip!("read-expected");
    let marker = "expected-marker-5f0c2a9e71d4";
    // The submission searches every readable file, its environment and its arguments.
    let code = r#"
import os
MARK = b"expected-" + b"marker-5f0c2a9e71d4"
def f(_):
    hits = []
    for path in ["/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ", "/proc/1/cmdline"]:
        try:
            if MARK in open(path, "rb").read():
                hits.append(path)
        except OSError:
            pass
    for top, dirs, files in os.walk("/"):
        if top.startswith(("/proc", "/sys", "/dev")):
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(top, name)
            try:
                with open(path, "rb") as handle:
                    if MARK in handle.read(64 << 20):
                        hits.append(path)
            except OSError:
                pass
    return MARK.decode() if hits else "not found"
"#;
    let grade = harness.grade_f(code, one_case(json!(marker))).await;
    assert_failed(&grade, &["only"]);
    assert_eq!(
        grade.cases[0].detail,
        format!("expected \"{marker}\", got \"not found\"")
    );
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn exiting_before_the_cases_leaves_them_failed() {
    let harness = connect_or_skip!("early-exit");
    let cases = || {
        vec![
            Case::new("a", json!(1), json!(1)),
            Case::new("b", json!(2), json!(2)),
        ]
    };
    let code = "import sys\nsys.exit(0)\ndef f(x):\n    return x\n";
    let grade = harness.grade_f(code, cases()).await;
    assert!(
        matches!(&grade.reason, GradeReason::Crashed(why) if why.contains("SystemExit")),
        "{grade:#?}"
    );
    assert_eq!(grade.n_passed(), 0);

    let code = "import os\nos._exit(0)\ndef f(x):\n    return x\n";
    let grade = harness.grade_f(code, cases()).await;
    assert_failed(&grade, &["a", "b"]);
    assert_eq!(grade.exit_code, Some(0));
    assert!(
        grade
            .cases
            .iter()
            .all(|case| case.detail == "exited with status 0 before returning"),
        "{grade:#?}"
    );

    // Exiting after the first case's result leaves the second missing.
    let code = "import os\ndef f(x):\n    if x == 2:\n        os._exit(0)\n    return x\n";
    let grade = harness.grade_f(code, cases()).await;
    assert_failed(&grade, &["b"]);
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn forged_result_lines_do_nothing() {
    let harness = connect_or_skip!("forged");
    let code = r#"
import os, sys
def f(x):
    try:
        stolen = sys.stdin.read()
    except Exception:
        stolen = ""
    for nonce in ["", stolen.strip(), "0" * 32, "nonce"]:
        for index in range(3):
            line = "\n\x1evernier-result %s %d {\"value\": %d}\n" % (nonce, index, index * 10)
            sys.stdout.write(line)
            sys.stderr.write(line)
            os.write(1, line.encode())
    sys.stdout.flush()
    return -1
"#;
    let cases = vec![
        Case::new("a", json!(0), json!(0)),
        Case::new("b", json!(1), json!(10)),
        Case::new("c", json!(2), json!(20)),
    ];
    let grade = harness.grade_f(code, cases).await;
    assert_failed(&grade, &["a", "b", "c"]);
    assert!(
        grade
            .cases
            .iter()
            .all(|case| case.detail.ends_with("got -1")),
        "{grade:#?}"
    );
    assert!(
        grade.stdout_excerpt.contains("vernier-result"),
        "forged lines stay plain output"
    );
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_case_process_that_knows_the_nonce_still_cannot_forge() {
    let harness = connect_or_skip!("forged-with-nonce");
    // Case 1 digs every possible nonce out of its own memory (a copy of the runner's,
    // which holds the real one), tries to
    // reach the runner's stdout, memory and registers, and writes records claiming
    // every case on every stream it has; it reports what worked.
    let code = r#"
import ctypes, os, re, signal, sys
HEX = re.compile(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")
def nonces():
    found = set()
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if "r" not in fields[1] or end - start > (64 << 20):
                continue
            try:
                mem.seek(start)
                found.update(HEX.findall(mem.read(end - start)))
            except (OSError, ValueError, OverflowError):
                pass
    return found
def opened(path, mode):
    try:
        open(path, mode).close()
        return True
    except OSError:
        return False
def f(x):
    if x != 1:
        return -1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(4, 1, 0, 0, 0)  # dumpable again, so that it may read its own memory
    found = nonces()
    streams = [1, 2]
    for path in ["/proc/1/fd/1", "/proc/%d/fd/1" % os.getppid()]:
        try:
            streams.append(os.open(path, os.O_WRONLY))
        except OSError:
            pass
    for nonce in sorted(found)[:3000]:
        for index in range(3):
            line = "\n\x1evernier-result %s %d {\"value\":%d}\n" % (nonce.decode(), index, index * 10)
            for fd in streams:
                os.write(fd, line.encode())
    os.kill(1, signal.SIGINT)
    return {
        "candidates_found": len(found) > 0,
        "runner_stdout": len(streams) > 2,
        "runner_memory": opened("/proc/1/mem", "rb"),
        "runner_traced": libc.ptrace(16, 1, 0, 0) == 0,
    }
"#;
    let report = json!({
        "candidates_found": true, "runner_stdout": false, "runner_memory": false,
        "runner_traced": false,
    });
    let cases = vec![
        Case::new("a", json!(0), json!(0)),
        Case::new("attack", json!(1), report),
        Case::new("c", json!(2), json!(20)),
    ];
    let grade = harness.grade_f(code, cases).await;
    assert_failed(&grade, &["a", "c"]);
    assert_eq!(grade.cases[0].detail, "expected 0, got -1");
    assert_eq!(grade.cases[2].detail, "expected 20, got -1");
    assert!(
        grade.stdout_excerpt.contains("\u{241e}vernier-result"),
        "forged lines reach stdout as plain output: {:?}",
        grade.stdout_excerpt
    );
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn an_object_equal_to_everything_fails() {
    let harness = connect_or_skip!("always-equal");
    let code = r#"
class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = object.__hash__
class SneakyInt(int):
    def __eq__(self, other):
        return True
def f(x):
    return Anything() if x == "object" else SneakyInt(5)
"#;
    let cases = vec![
        Case::new("object", json!("object"), json!(3)),
        Case::new("int_subclass", json!("int"), json!(3)),
    ];
    let grade = harness.grade_f(code, cases).await;
    assert_failed(&grade, &["object", "int_subclass"]);
    assert_detail_contains(&grade, 0, "could not be serialised");
    assert_eq!(grade.cases[1].detail, "expected 3, got 5");
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_stdout_flood_is_bounded_and_results_survive() {
    let harness = connect_or_skip!("flood");
    let code = r#"
import sys
def f(x):
    chunk = "y" * 65536 + "\n"
    for _ in range(320):
        sys.stdout.write(chunk)
    sys.stderr.write("e" * (5 << 20))
    return x
"#;
    let echo = vec![Case::new("echo", json!(7), json!(7))];
    let grade = harness.grade_f_within(code, echo, short(60)).await;
    assert_eq!(
        grade.reason,
        GradeReason::Passed,
        "{:?} {:?}",
        grade.reason,
        grade.cases
    );
    assert!(grade.output_truncated);
    assert_eq!(grade.stdout_excerpt.len(), 1 << 20);
    assert_eq!(grade.stderr_excerpt.len(), 1 << 20);
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn a_sleeping_child_left_behind_does_not_hold_the_container() {
    let harness = connect_or_skip!("sleeping-child");
    let code = r#"
import os, subprocess, sys, threading, time
def f(x):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    if os.fork() == 0:
        time.sleep(600)
        os._exit(0)
    threading.Thread(target=time.sleep, args=(600,)).start()
    return x
"#;
    let echo = vec![Case::new("echo", json!(1), json!(1))];
    let grade = harness.grade_f_within(code, echo, short(30)).await;
    assert_reason(&grade, &GradeReason::Passed);
    assert!(
        grade.wall_time < Duration::from_secs(30),
        "{:?}",
        grade.wall_time
    );
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn fifty_kilobytes_of_source_work() {
    let harness = connect_or_skip!("big-source");
    let mut code = String::from("# A long but honest solution.\n");
    let mut index = 0;
    while code.len() < 50_000 {
        let _ = write!(
            code,
            "def helper_{index}(x):\n    \"\"\"Adds {index}.\"\"\"\n    return x + {index}\n\n"
        );
        index += 1;
    }
    code.push_str("def f(x):\n    return helper_7(x)\n");
    assert!(code.len() >= 50_000);
    let grade = harness
        .grade_f(code, vec![Case::new("a", json!(1), json!(8))])
        .await;
    assert_reason(&grade, &GradeReason::Passed);
    harness.assert_nothing_left().await;
}

#[tokio::test]
async fn deep_recursion_fails_the_case_without_raising_the_limit() {
    let harness = connect_or_skip!("recursion");
    let code =
        "import sys\ndef f(n):\n    return sys.getrecursionlimit() if n == 0 else 1 + f(n - 1)\n";
    let cases = vec![
        Case::new("limit", json!(0), json!(1000)),
        Case::new("deep", json!(100_000), json!(101_000)),
    ];
    let grade = harness.grade_f(code, cases).await;
    assert_failed(&grade, &["deep"]);
    assert_detail_contains(&grade, 1, "RecursionError");
    harness.assert_nothing_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_grade_still_removes_its_container() {
    let harness = connect_or_skip!("cancelled");
    let code = "def f(_):\n    while True:\n        pass\n";
    let submission = Submission::new(code, CALL_F, one_case(json!(1))).with_limits(short(60));
    let cancelled =
        tokio::time::timeout(Duration::from_secs(3), harness.grader.grade(&submission)).await;
    assert!(cancelled.is_err(), "the grade should still be running");
    harness
        .assert_nothing_left_within(Duration::from_secs(30))
        .await;
}

#[tokio::test]
async fn the_sandbox_is_unprivileged_and_offline() {
    let harness = connect_or_skip!("identity");
    let code = r#"
import os, socket
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return line.split()[1]
def mount_options(target):
    for line in open("/proc/self/mounts"):
        fields = line.split()
        if fields[1] == target:
            return sorted(set(fields[3].split(",")) & {"ro", "rw", "noexec", "nosuid", "nodev"})
def f(_):
    work = os.stat("/work")
    return {
        "root_mount": mount_options("/"),
        "tmp_mount": mount_options("/tmp"),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "cap_eff": status("CapEff"),
        "cap_bnd": status("CapBnd"),
        "no_new_privs": status("NoNewPrivs"),
        "interfaces": sorted(name for _, name in socket.if_nameindex()),
        "work_owner": work.st_uid,
        "work_writable": os.access("/work", os.W_OK),
        "solution_mode": oct(os.stat("/work/solution.py").st_mode & 0o777),
        "work_files": sorted(os.listdir("/work")),
        "docker_socket": os.path.exists("/var/run/docker.sock") or os.path.exists("/run/docker.sock"),
        "shm": os.path.exists("/dev/shm"),
    }
"#;
    let expected = json!({
        "root_mount": ["ro"],
        "tmp_mount": ["nodev", "noexec", "nosuid", "rw"],
        "uid": 65534, "gid": 65534,
        "cap_eff": "0000000000000000", "cap_bnd": "0000000000000000",
        "no_new_privs": "1",
        "interfaces": ["lo"],
        "work_owner": 0, "work_writable": false, "solution_mode": "0o444",
        "work_files": ["harness.py", "inputs.json", "runner.py", "solution.py"],
        "docker_socket": false,
        "shm": false,
    });
    let grade = harness.grade_f(code, one_case(expected)).await;
    assert_reason(&grade, &GradeReason::Passed);
    harness.assert_nothing_left().await;
}
