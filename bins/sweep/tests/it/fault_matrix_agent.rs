//! The column of `sweep agent` in the fault matrix (`vernier_test_support::fault_matrix`):
//! two sessions of five short turns against the simulator in a process of its own.
//!
//! - server frozen or killed mid-run: a turn fails every try, the server no longer lists its
//!   models, and the run ends with exit 4, "failed to keep measuring", the journal and the
//!   command that continues it;
//! - every request answered 500: the start sizes the texts with counted one-token requests,
//!   which fail every try on a server that still answers, so the run refuses to start (exit 1,
//!   "size the texts", the status) and leaves no folder;
//! - every request answered 401: exit 2 naming `--api-key-env`, no folder;
//! - `agent.json` cannot be written: exit 1 naming it, the journal and the resume command,
//!   which completes the run once the file can be written;
//! - SIGTERM: exit 130 and the resume command, which run as printed completes the run;
//! - kill −9, then `--resume OUT --base-url` of the server on another port: exit 0.
//!
//! Complete means every planned turn (pass, sessions, session, turn) is in the journal, its
//! last line answered, and answered once: none measured twice, none lost.

use std::collections::BTreeMap;
use std::path::Path;

use vernier_test_support::fault_matrix as matrix;

use matrix::Tool;

pub(crate) const SESSIONS: u32 = 2;
pub(crate) const TURNS: u32 = 5;

/// The words of a run against `base_url` into `out`.
pub(crate) fn args(base_url: &str, out: &Path) -> Vec<String> {
    let (sessions, turns) = (SESSIONS.to_string(), TURNS.to_string());
    matrix::words_then(
        &[
            "agent",
            "--base-url",
            base_url,
            "--sessions",
            &sessions,
            "--turns",
            &turns,
            "--system-tokens",
            "64",
            "--tools",
            "0",
            "--user-tokens",
            "16",
            "--max-tokens",
            "24",
            "--think",
            "0.15s",
            "--idle-timeout-s",
            "2",
            "--quiet",
            "--out",
        ],
        out,
    )
}

fn resume(out: &Path, base_url: &str) -> Vec<String> {
    vec![
        "agent".to_owned(),
        "--resume".to_owned(),
        out.display().to_string(),
        "--base-url".to_owned(),
        base_url.to_owned(),
        "--quiet".to_owned(),
    ]
}

/// Every planned turn once: its last line answered, one answered line, nothing else planned.
pub(crate) fn complete(out: &Path, _base_url: &str) {
    let mut places: BTreeMap<(String, u64, u64, u64), Vec<String>> = BTreeMap::new();
    for line in vernier_test_support::journal_lines_of(&out.join("journal.jsonl"), "turn") {
        let number = |field: &str| line[field].as_u64().expect("a number");
        let place = (
            line["pass"].as_str().expect("pass").to_owned(),
            number("sessions"),
            number("session"),
            number("turn"),
        );
        let status = line["status"].as_str().expect("status").to_owned();
        places.entry(place).or_default().push(status);
    }
    let answered = |status: &str| status == "ok" || status == "cut_off";
    for (place, statuses) in &places {
        assert!(
            statuses.last().is_some_and(|last| answered(last)),
            "turn {place:?} ends unanswered: {statuses:?}"
        );
        let times = statuses.iter().filter(|status| answered(status)).count();
        assert_eq!(
            times, 1,
            "turn {place:?} answered {times} times: {statuses:?}"
        );
    }
    let planned: Vec<(String, u64, u64, u64)> = (0..u64::from(SESSIONS))
        .flat_map(|session| {
            (1..=u64::from(TURNS))
                .map(move |turn| ("cached".to_owned(), u64::from(SESSIONS), session, turn))
        })
        .collect();
    assert_eq!(
        places.keys().cloned().collect::<Vec<_>>(),
        planned,
        "turns lost or unplanned"
    );
    assert!(out.join("agent.json").is_file());
}

fn agent() -> Tool<'static> {
    Tool {
        name: "sweep agent",
        exe: env!("CARGO_BIN_EXE_sweep"),
        serve: "fault_matrix_agent::serve_simulator_when_asked",
        args: &args,
        resume: &resume,
        journal: "journal.jsonl",
        started: "\"type\":\"turn\"",
        derived: "agent.json",
        stopped: (4, &["failed to keep measuring", "journal.jsonl"], true),
        errors: (1, &["size the texts", "500"], false),
        refused: (2, &["--api-key-env"]),
        complete: &complete,
        stopped_leaves: None,
        refused_start_leaves_no_folder: true,
    }
}

vernier_test_support::matrix_cells!(agent);

/// The server killed mid-run and started again where it was: the run ends with exit 4 and
/// the command that continues it, and that command, run as printed (the same address), sends
/// the turns left and the failed ones again, so every turn is answered once. (Before, a turn
/// that failed every try was journaled and its session ended there: the run finished with
/// exit 0, no command to continue it, and a resume did not send the failed turns again, so
/// they stayed missing.)
#[test]
fn a_server_killed_and_restarted_on_its_port_is_continued_by_the_printed_command() {
    let serve = "fault_matrix_agent::serve_simulator_when_asked";
    let sim = std::sync::Mutex::new(Some(matrix::SimChild::start(serve, "")));
    let (base_url, port) = sim
        .lock()
        .ok()
        .and_then(|sim| sim.as_ref().map(|sim| (sim.base_url(), sim.port)))
        .expect("the simulator");
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let started = |out: &Path| matrix::journal_has(&out.join("journal.jsonl"), "\"type\":\"turn\"");
    let kill = |_pid: u32| {
        if let Ok(mut sim) = sim.lock() {
            drop(sim.take());
        }
    };
    let output = matrix::run(
        env!("CARGO_BIN_EXE_sweep"),
        &args(&base_url, &out),
        &out,
        &matrix::During::When(&started, &kill),
    );
    let resume = matrix::assert_cell(
        "agent, server killed",
        &output,
        4,
        &["failed to keep measuring", "journal.jsonl"],
        true,
    )
    .expect("a resume command");
    assert!(
        resume
            .windows(2)
            .any(|pair| pair == ["--base-url", base_url.as_str()]),
        "the printed command goes back to the same server: {resume:?}"
    );
    let _restarted = matrix::SimChild::start_on(serve, port, "");
    let resumed = matrix::run(
        env!("CARGO_BIN_EXE_sweep"),
        &resume,
        &out,
        &matrix::During::Nothing,
    );
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        matrix::described(&resumed)
    );
    complete(&out, &base_url);
}
