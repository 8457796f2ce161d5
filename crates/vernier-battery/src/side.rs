//! One side of a head-to-head, read from disk: a battery's folder, or a single sweep or suite
//! run. Speed comes from the sweep's journal (every measured request, for the intervals);
//! quality from each suite's `results.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vernier_hardsuite::ResultsFile;
use vernier_run::Verdict;
use vernier_sweep::{CellKey, RepPhase, RunFile, Status, SweepJournalLine};

use crate::config::Part;
use crate::error::BatteryError;
use crate::file::{BATTERY_FILE, BatteryFile};

/// One measured request of the sweep, as the comparison uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RequestFigures {
    /// Token-accurate decode rate (the server's count).
    pub decode_tokens_per_s: Option<f64>,
    /// Request sent → first token-bearing event.
    pub ttft_ms: Option<f64>,
    /// Prompt tokens / TTFT.
    pub prefill_tokens_per_s: Option<f64>,
}

/// The sweep of one side: its run file and every measured request by cell.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SweepSide {
    /// The run file derived from the journal.
    pub run: RunFile,
    /// Measured requests by cell, in journal order.
    pub requests: BTreeMap<CellKey, Vec<RequestFigures>>,
}

/// Time to ready from the battery's `ready` part (`lifecycle ready`'s `run.json`): medians
/// over the launches that reached each milestone, seconds from launch.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ReadySide {
    /// Launch → the health path answered 200.
    pub health_ok_s: Option<f64>,
    /// Launch → the first token of the first request.
    pub first_token_s: Option<f64>,
    /// Launches that reached the first token.
    pub n: usize,
}

/// A `lifecycle ready` run file as JSON (its crate needs a runtime; the reading side reads the
/// fields it compares), `None` when the file is not one.
fn ready_run(path: &Path) -> Result<Option<serde_json::Value>, BatteryError> {
    let run: serde_json::Value = crate::file::read_json(path)?;
    Ok(run.get("milestones").is_some().then_some(run))
}

impl ReadySide {
    /// Reads a `ready` run file; `None` when it holds no milestone.
    fn read(path: &Path) -> Result<Option<Self>, BatteryError> {
        Ok(ready_run(path)?.and_then(|run| Self::of(&run)))
    }

    fn of(run: &serde_json::Value) -> Option<Self> {
        let milestones = &run["milestones"];
        let median = |name: &str| milestones[name]["median"].as_f64();
        let first_token_s = median("first_token_s");
        first_token_s.map(|first| Self {
            health_ok_s: median("health_ok_s"),
            first_token_s: Some(first),
            n: milestones["first_token_s"]["n"]
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0),
        })
    }
}

/// One direction of a model swap from a study's `swap` part (`lifecycle ready --swap`'s
/// `run.json`): the median time from asking for the other model to its first token.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SwapSide {
    /// The model loaded before (`?` for the first request).
    pub from: String,
    /// The model asked for.
    pub to: String,
    /// Median seconds to the first token.
    pub median_s: f64,
    /// Switches measured.
    pub n: u64,
}

impl SwapSide {
    /// The directions a swap run file states, the first request (from `?`) left out.
    fn read(path: &Path) -> Result<Vec<Self>, BatteryError> {
        let Some(run) = ready_run(path)? else {
            return Ok(Vec::new());
        };
        Ok(run["swaps"]
            .as_array()
            .map(|swaps| {
                swaps
                    .iter()
                    .filter_map(|swap| {
                        let from = swap["from"].as_str()?;
                        let time = &swap["time_to_first_token_s"];
                        (from != "?").then(|| Self {
                            from: from.to_owned(),
                            to: swap["to"].as_str().unwrap_or_default().to_owned(),
                            median_s: time["median"].as_f64().unwrap_or(f64::NAN),
                            n: time["n"].as_u64().unwrap_or(0),
                        })
                    })
                    .filter(|swap| swap.median_s.is_finite())
                    .collect()
            })
            .unwrap_or_default())
    }
}

/// One side of a head-to-head.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Side {
    /// A short name for tables: the folder's name.
    pub label: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// The model measured.
    pub model: String,
    /// The server (`simulator` for the bundled one).
    pub target: String,
    /// The side's verdict (the battery's, or its one run's).
    pub validity: Verdict,
    /// The battery's index, when the side is a battery.
    pub battery: Option<BatteryFile>,
    /// The sweep, when there is one.
    pub sweep: Option<SweepSide>,
    /// The suites by part name (`suite`, `probe`, `context`, a study's own names), in run
    /// order.
    pub suites: Vec<(String, ResultsFile)>,
    /// Time to ready, when the battery launched the server.
    pub ready: Option<ReadySide>,
    /// Swap cost per direction, when a study's `swap` part ran.
    pub swaps: Vec<SwapSide>,
}

impl Side {
    /// The suite of the part named `name`.
    pub fn suite(&self, name: &str) -> Option<&ResultsFile> {
        self.suites
            .iter()
            .find(|(part, _)| part == name)
            .map(|(_, results)| results)
    }

    /// Reads a battery folder (or its `battery.json`), a sweep run folder (its `journal.jsonl`)
    /// or a suite run folder (its `results.json`).
    pub fn load(path: &Path) -> Result<Self, BatteryError> {
        let folder = if path.is_file() {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            path.to_path_buf()
        };
        let label = folder.file_name().map_or_else(
            || folder.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
        if folder.join(BATTERY_FILE).is_file() {
            return Self::battery(&folder, label);
        }
        if folder.join("results.json").is_file() {
            let results = ResultsFile::load(&folder)?;
            return Self::of_suite(label, folder, results);
        }
        if folder.join("run.json").is_file()
            && let Some(run) = ready_run(&folder.join("run.json"))?
        {
            return Ok(Self::of_ready(label, folder, &run));
        }
        if folder.join("journal.jsonl").is_file() {
            if let Ok(sweep) = read_sweep(&folder) {
                return Ok(Self::of_sweep(label, folder, sweep));
            }
            let results = ResultsFile::load(&folder)?;
            return Self::of_suite(label, folder, results);
        }
        Err(BatteryError::NotARun {
            path: path.to_path_buf(),
        })
    }

    fn battery(folder: &Path, label: String) -> Result<Self, BatteryError> {
        let battery = BatteryFile::load(folder)?;
        let mut sweep = None;
        let mut suites = Vec::new();
        let mut ready = None;
        let mut swaps = Vec::new();
        for entry in &battery.parts {
            let part_folder = folder.join(&entry.folder);
            if entry.kind() == "swap" {
                let run = part_folder.join("run.json");
                if run.is_file() {
                    swaps = SwapSide::read(&run)?;
                }
                continue;
            }
            if entry.kind() == "ready" {
                let run = part_folder.join("run.json");
                if run.is_file() {
                    ready = ReadySide::read(&run)?;
                }
                continue;
            }
            // Quality under load keeps its two passes in folders of their own; its headlines
            // stand for it in a head-to-head.
            let journal = if entry.kind() == "under-load" {
                part_folder.join("loaded").join("journal.jsonl")
            } else {
                part_folder.join("journal.jsonl")
            };
            if !journal.is_file() {
                if entry.status == crate::file::PartStatus::Done {
                    // Recorded done, but its files are gone: comparing without it would say
                    // only the other side measured it.
                    return Err(BatteryError::Parse {
                        path: journal,
                        detail: format!(
                            "the battery records its {} part done, but the part's journal is gone; run it again with `battery run --resume {}`",
                            entry.part,
                            folder.display()
                        ),
                    });
                }
                continue;
            }
            match entry.kind() {
                "sweep" if sweep.is_none() => sweep = Some(read_sweep(&part_folder)?),
                kind if crate::study::SUITE_KINDS.contains(&kind) => {
                    suites.push((entry.part.clone(), ResultsFile::load(&part_folder)?));
                }
                // Agent sessions, replays, soaks and watches: in the battery's own
                // report, not (yet) compared side by side.
                _ => {}
            }
        }
        Ok(Self {
            label,
            path: folder.to_path_buf(),
            model: battery.model.clone(),
            target: battery.target.clone(),
            validity: battery.validity.clone(),
            battery: Some(battery),
            sweep,
            suites,
            ready,
            swaps,
        })
    }

    fn of_suite(label: String, path: PathBuf, results: ResultsFile) -> Result<Self, BatteryError> {
        let part = suite_part(&results, &path)?;
        Ok(Self {
            label,
            path,
            model: results.model.clone(),
            target: if results.simulated {
                "simulator".to_owned()
            } else {
                results.base_url.clone()
            },
            validity: results.validity.clone(),
            battery: None,
            sweep: None,
            suites: vec![(part.name().to_owned(), results)],
            ready: None,
            swaps: Vec::new(),
        })
    }

    /// A lone `lifecycle ready` run: time to ready, and a verdict from its repetitions.
    fn of_ready(label: String, path: PathBuf, run: &serde_json::Value) -> Self {
        use vernier_run::{Reason, VerdictLevel};
        let failed = run["failed_reps"].as_u64().unwrap_or(0);
        let complete = run["complete_reps"].as_u64().unwrap_or(0);
        let mut reasons = Vec::new();
        if failed > 0 {
            reasons.push(Reason::new(
                "ready_failed",
                VerdictLevel::Questionable,
                format!(
                    "{failed} of {} launches did not reach every milestone",
                    failed + complete
                ),
            ));
        }
        if run["interrupted"].as_bool() == Some(true) {
            reasons.push(Reason::new(
                "incomplete",
                VerdictLevel::Questionable,
                "interrupted before every repetition ran (--resume continues)",
            ));
        }
        let config = &run["config"];
        Self {
            label,
            path,
            model: config["model"].as_str().unwrap_or_default().to_owned(),
            target: config["base_url"].as_str().unwrap_or_default().to_owned(),
            validity: Verdict::from_reasons(reasons),
            battery: None,
            sweep: None,
            suites: Vec::new(),
            ready: ReadySide::of(run),
            swaps: Vec::new(),
        }
    }

    fn of_sweep(label: String, path: PathBuf, sweep: SweepSide) -> Self {
        let server = &sweep.run.environment.server;
        Self {
            label,
            path,
            model: sweep.run.environment.model.id.clone(),
            target: if server.simulator {
                "simulator".to_owned()
            } else {
                server.base_url.clone()
            },
            validity: sweep.run.validity.clone(),
            battery: None,
            sweep: Some(sweep),
            suites: Vec::new(),
            ready: None,
            swaps: Vec::new(),
        }
    }
}

/// The part a lone suite run stands for: the probe, long context, or the hard suite (bundled,
/// drawn at a level, or a user's suite file); a vision, video or dataset run stands for none
/// and is refused by name rather than filed as the hard suite.
fn suite_part(results: &ResultsFile, path: &Path) -> Result<Part, BatteryError> {
    let not_a_part = || BatteryError::NotAPart {
        path: path.to_path_buf(),
        suite: results.suite.clone(),
    };
    if results.dataset_record.is_some() {
        return Err(not_a_part());
    }
    match results.suite.as_str() {
        "probe" => Ok(Part::Probe),
        "context" => Ok(Part::Context),
        "vision" | "video" => Err(not_a_part()),
        _ if results.context.is_some() => Ok(Part::Context),
        _ => Ok(Part::Suite),
    }
}

/// A sweep read from its folder's journal: the run file and every measured request.
fn read_sweep(folder: &Path) -> Result<SweepSide, BatteryError> {
    let path = folder.join("journal.jsonl");
    let journal = vernier_sweep::read_sweep_journal(&path)?;
    let run = vernier_sweep::summarise(&journal).ok_or_else(|| BatteryError::Parse {
        path: path.clone(),
        detail: "the sweep journal has no header".to_owned(),
    })?;
    let mut requests: BTreeMap<CellKey, Vec<RequestFigures>> = BTreeMap::new();
    for line in &journal.lines {
        let SweepJournalLine::Attempt(attempt) = line else {
            continue;
        };
        if attempt.phase != RepPhase::Measured || attempt.status != Status::Ok {
            continue;
        }
        let Some(measurement) = &attempt.measurement else {
            continue;
        };
        requests
            .entry(attempt.cell)
            .or_default()
            .push(RequestFigures {
                decode_tokens_per_s: measurement.decode_tokens_per_s,
                ttft_ms: measurement.ttft_ms,
                prefill_tokens_per_s: measurement.prefill_tokens_per_s,
            });
    }
    Ok(SweepSide { run, requests })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hard suite's own fixture journal (two math tasks, two code, one tool, one context-free
    /// mix), read as its results.
    fn results() -> ResultsFile {
        let journal = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../vernier-hardsuite/tests/it/fixtures/journal.jsonl");
        ResultsFile::load(&journal).expect("the fixture journal")
    }

    #[test]
    fn a_lone_suite_run_is_filed_as_the_part_it_stands_for_or_refused() {
        let path = Path::new("run");
        let mut run = results();
        assert_eq!(suite_part(&run, path).expect("the hard suite"), Part::Suite);
        run.suite = "my-suite".to_owned();
        assert_eq!(suite_part(&run, path).expect("a suite file"), Part::Suite);
        run.suite = "probe".to_owned();
        assert_eq!(suite_part(&run, path).expect("the probe"), Part::Probe);
        run.suite = "context".to_owned();
        assert_eq!(suite_part(&run, path).expect("context"), Part::Context);
        for other in ["vision", "video"] {
            run.suite = other.to_owned();
            let error = suite_part(&run, path).expect_err(other);
            assert!(matches!(error, BatteryError::NotAPart { .. }), "{error}");
            assert!(error.to_string().contains("hardsuite compare"), "{error}");
        }
    }

    #[test]
    fn a_folder_that_holds_no_run_is_refused_by_name() {
        let folder = tempfile::tempdir().expect("a folder");
        let error = Side::load(folder.path()).expect_err("nothing there");
        assert!(matches!(error, BatteryError::NotARun { .. }), "{error}");
        assert_eq!(vernier_cli::Failure::exit_code(&error), 2);
    }
}
