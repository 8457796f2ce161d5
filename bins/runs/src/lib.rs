//! `runs`: the run store's command line. Every engine registers each run it finishes in the
//! store (`$VERNIER_STORE`: a SQLite file, a `postgres://` URL, or `off`; by default
//! `runs.sqlite` under the user's data folder); this reads it back.
//!
//! ```text
//! runs register FOLDER...            register runs by hand (what an engine does itself)
//! runs reindex ROOT...               rebuild the store from the folders under ROOT
//! runs list [--model M] [--json|--csv]
//! runs show ID
//! runs board [--model M]... [--out DIR]
//! runs history --model M [--out DIR]
//! ```
//!
//! Every reading command reads the store, or, given folders with `--from`, those folders.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use vernier_cli::{ExitKind, Finished};
use vernier_store::{BoardAxes, Location, RunRecord, Store, StoreError};

/// The run store: every finished run of every engine, a board of candidates, history.
#[derive(Debug, Parser)]
#[command(name = "runs", version, about)]
pub struct Cli {
    /// The store: a SQLite file, a postgres:// URL (default: `VERNIER_STORE`, else
    /// runs.sqlite under the user's data folder).
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Register the runs in these folders (an engine registers its own runs when they end).
    Register {
        /// Run folders (or a file in one).
        #[arg(required = true)]
        folders: Vec<PathBuf>,
    },
    /// Rebuild the store from the run folders under these roots; a registered run whose
    /// folder is gone is marked, never removed.
    Reindex {
        /// Folders to search (four levels deep) for runs.
        #[arg(required = true)]
        roots: Vec<PathBuf>,
    },
    /// The runs, oldest first.
    List {
        #[command(flatten)]
        filter: Filter,
        /// Every run as JSON.
        #[arg(long, conflicts_with = "csv")]
        json: bool,
        /// Every run as CSV.
        #[arg(long)]
        csv: bool,
    },
    /// One run: its folder, who it measured, its figures, scores and settings.
    Show {
        /// Its id (or the start of it).
        id: String,
        /// As JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        from: From,
    },
    /// Candidates (one per model) ranked on every dimension they share, with Holm-corrected
    /// pairwise differences and the Pareto front of quality against speed.
    Board {
        #[command(flatten)]
        filter: Filter,
        /// The speed figure of the front (default: the first shared one naming decode).
        #[arg(long, value_name = "FIGURE")]
        speed: Option<String>,
        /// The quality figure of the front (default: `pass rate: total`, else the first pass
        /// rate).
        #[arg(long, value_name = "FIGURE")]
        quality: Option<String>,
        /// Write board.md, board.json and board.html here.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// One target's runs over time, the newest flagged where a figure falls outside what the
    /// earlier runs allow.
    History {
        #[command(flatten)]
        filter: Filter,
        /// Write history.md, history.json and history.html here.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// Where runs are read from when not from the store.
#[derive(Debug, Clone, Default, Args)]
pub struct From {
    /// Read these run folders (or folders of runs) instead of the store.
    #[arg(long, value_name = "FOLDER", num_args = 1..)]
    pub from: Vec<PathBuf>,
}

/// Which runs.
#[derive(Debug, Clone, Default, Args)]
pub struct Filter {
    /// Only this model (repeat for several).
    #[arg(long, value_name = "MODEL")]
    pub model: Vec<String>,
    /// Only this server kind (`vllm`, `llama_cpp`, `sglang`, …).
    #[arg(long, value_name = "KIND")]
    pub server: Option<String>,
    /// Only this run kind (`sweep`, `suite`, `dataset`, `study`, …; repeat for several).
    #[arg(long, value_name = "KIND")]
    pub kind: Vec<String>,
    /// Only runs started on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", value_parser = day)]
    pub since: Option<i64>,
    /// Only runs started before the end of this day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", value_parser = day)]
    pub until: Option<i64>,
    /// Only runs with this verdict (`valid`, `questionable`, `invalid`).
    #[arg(long, value_name = "VERDICT")]
    pub verdict: Option<String>,
    #[command(flatten)]
    pub from: From,
}

/// A day `YYYY-MM-DD` as ms since the Unix epoch at its start (UTC).
fn day(text: &str) -> Result<i64, String> {
    vernier_run::parse_rfc3339_ms(&format!("{}T00:00:00Z", text.trim()))
        .ok()
        .and_then(|ms| i64::try_from(ms).ok())
        .ok_or_else(|| format!("`{text}` is not a day: give YYYY-MM-DD"))
}

impl Filter {
    fn keeps(&self, run: &RunRecord) -> bool {
        (self.model.is_empty() || self.model.contains(&run.model))
            && self
                .server
                .as_ref()
                .is_none_or(|server| &run.server_kind == server)
            && (self.kind.is_empty() || self.kind.contains(&run.kind))
            && self.since.is_none_or(|since| run.started_unix_ms >= since)
            && self
                .until
                .is_none_or(|until| run.started_unix_ms < until + 86_400_000)
            && self
                .verdict
                .as_ref()
                .is_none_or(|verdict| &run.verdict == verdict)
    }
}

/// The store the command names, or the environment's.
fn location(cli_store: Option<&str>) -> Result<Location, StoreError> {
    let location = match cli_store {
        Some(given) => Location::parse(given)?,
        None => Location::from_environment()?,
    };
    location.ok_or_else(|| StoreError::Location {
        given: cli_store.unwrap_or("off").to_owned(),
        detail: "the store is off (or no home folder is known)".to_owned(),
    })
}

/// The runs in `roots`: each folder that is a run, else the runs below it (four levels).
fn runs_under(roots: &[PathBuf]) -> (Vec<RunRecord>, Vec<String>) {
    let mut runs = Vec::new();
    let mut problems = Vec::new();
    for root in roots {
        walk(root, 0, &mut runs, &mut problems);
        if !root.exists() {
            problems.push(format!("{}: no such folder", root.display()));
        }
    }
    (runs, problems)
}

fn walk(folder: &Path, depth: usize, runs: &mut Vec<RunRecord>, problems: &mut Vec<String>) {
    match vernier_store::read_runs(folder) {
        Ok(found) => runs.extend(found),
        Err(StoreError::NotARun { .. }) => {
            if depth >= 4 {
                return;
            }
            let Ok(entries) = std::fs::read_dir(folder) else {
                return;
            };
            let mut children: Vec<PathBuf> = entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect();
            children.sort();
            for child in children {
                walk(&child, depth + 1, runs, problems);
            }
        }
        Err(error) => problems.push(error.to_string()),
    }
}

async fn read(store: Option<&str>, from: &From) -> Result<Vec<RunRecord>, StoreError> {
    if from.from.is_empty() {
        let store = Store::open(&location(store)?).await?;
        let runs = store.runs().await;
        store.close().await;
        return runs;
    }
    let (mut runs, problems) = runs_under(&from.from);
    if runs.is_empty() {
        return Err(StoreError::NotARun {
            path: from.from.first().cloned().unwrap_or_default(),
        })
        .map_err(|error| {
            if problems.is_empty() {
                error
            } else {
                StoreError::Parse {
                    path: from.from.first().cloned().unwrap_or_default(),
                    detail: problems.join("; "),
                }
            }
        });
    }
    runs.sort_by_key(|run| (run.started_unix_ms, run.id.clone()));
    Ok(runs)
}

fn write(out: &Path, name: &str, text: &str) -> Result<PathBuf, StoreError> {
    std::fs::create_dir_all(out).map_err(|source| StoreError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let path = out.join(name);
    std::fs::write(&path, text).map_err(|source| StoreError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// The runs `filter` keeps, from the store or the folders it names.
async fn filtered(store: Option<&str>, filter: &Filter) -> Result<Vec<RunRecord>, StoreError> {
    Ok(read(store, &filter.from)
        .await?
        .into_iter()
        .filter(|run| filter.keeps(run))
        .collect())
}

/// `finished`, with `files` written into `out` (when given) and named in its notes.
fn written<const N: usize>(
    mut finished: Finished,
    out: Option<&Path>,
    files: [(&str, String); N],
) -> Result<Finished, StoreError> {
    if let Some(out) = out {
        for (name, text) in files {
            let path = write(out, name, &text)?;
            finished = finished.note(format!("{name}: {}", path.display()));
        }
    }
    Ok(finished)
}

fn json(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value)
        .map_or_else(|e| format!("{{\"error\": \"{e}\"}}"), |t| t + "\n")
}

/// Runs the command on a runtime of its own.
pub fn execute(cli: Cli) -> Result<Finished, StoreError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| StoreError::Io {
            path: PathBuf::from("(the async runtime)"),
            source,
        })?;
    runtime.block_on(run(cli))
}

/// Runs the command.
#[allow(clippy::too_many_lines)] // one arm per subcommand, each what it prints
pub async fn run(cli: Cli) -> Result<Finished, StoreError> {
    let store_arg = cli.store.as_deref();
    match cli.command {
        Command::Register { folders } => {
            let store = Store::open(&location(store_arg)?).await?;
            let mut text = String::new();
            for folder in &folders {
                for record in vernier_store::read_runs(folder)? {
                    store.register(&record).await?;
                    let _ = writeln!(
                        text,
                        "registered {} ({} of {})",
                        record.id, record.kind, record.model
                    );
                }
            }
            let _ = writeln!(text, "store: {}", store.location().display());
            store.close().await;
            Ok(Finished::printing(text))
        }
        Command::Reindex { roots } => {
            let store = Store::open(&location(store_arg)?).await?;
            let (runs, problems) = runs_under(&roots);
            for run in &runs {
                store.register(run).await?;
            }
            let mut gone = 0;
            for run in store.runs().await? {
                let present = Path::new(&run.folder).is_dir();
                if present != run.folder_present {
                    store.mark_folder(&run.id, present).await?;
                }
                if !present {
                    gone += 1;
                }
            }
            let mut finished = Finished::printing(format!(
                "reindexed {} runs into {}; {gone} registered runs' folders are gone (marked)\n",
                runs.len(),
                store.location().display()
            ));
            store.close().await;
            for problem in problems {
                finished = finished.note(format!("skipped: {problem}"));
            }
            Ok(finished)
        }
        Command::List {
            filter,
            json: as_json,
            csv,
        } => {
            let runs = filtered(store_arg, &filter).await?;
            Ok(Finished::printing(if as_json {
                json(&runs)
            } else if csv {
                vernier_store::render::list_csv(&runs)
            } else {
                vernier_store::render::list_table(&runs)
            }))
        }
        Command::Show {
            id,
            json: as_json,
            from,
        } => {
            let run = if from.from.is_empty() {
                let store = Store::open(&location(store_arg)?).await?;
                let run = store.run(&id).await;
                store.close().await;
                run?
            } else {
                read(None, &from)
                    .await?
                    .into_iter()
                    .find(|run| run.id.starts_with(&id))
                    .ok_or(StoreError::NoSuchRun { id: id.clone() })?
            };
            Ok(Finished::printing(if as_json {
                json(&run)
            } else {
                vernier_store::render::show(&run)
            }))
        }
        Command::Board {
            filter,
            speed,
            quality,
            out,
        } => {
            let runs = filtered(store_arg, &filter).await?;
            let board = vernier_store::board(&runs, &BoardAxes::new(speed, quality))?;
            let markdown = vernier_store::render::board_markdown(&board);
            let mut finished = Finished::printing(markdown.clone());
            if board.candidates.len() < 2 {
                finished = finished
                    .note("a board needs at least two candidates (models); widen the filter")
                    .of_kind(ExitKind::Usage);
            }
            written(
                finished,
                out.as_deref(),
                [
                    ("board.md", markdown),
                    ("board.json", json(&board)),
                    ("board.html", vernier_store::render::board_html(&board)),
                ],
            )
        }
        Command::History { filter, out } => {
            let runs = filtered(store_arg, &filter).await?;
            let mut identities: Vec<(String, String)> =
                runs.iter().map(RunRecord::identity).collect();
            identities.sort();
            identities.dedup();
            if identities.len() != 1 {
                // A run whose file does not name the server's kind (a suite's, a lifecycle
                // run's) is picked by its kind instead.
                let named: Vec<String> = identities
                    .iter()
                    .map(|(model, server)| {
                        if server.is_empty() {
                            let mut kinds: Vec<&str> = runs
                                .iter()
                                .filter(|run| &run.model == model && run.server_kind.is_empty())
                                .map(|run| run.kind.as_str())
                                .collect();
                            kinds.sort_unstable();
                            kinds.dedup();
                            let kinds: Vec<String> =
                                kinds.iter().map(|kind| format!("--kind {kind}")).collect();
                            format!("--model {model} {}", kinds.join(" "))
                        } else {
                            format!("--model {model} --server {server}")
                        }
                    })
                    .collect();
                return Ok(Finished::saying(
                    ExitKind::Usage,
                    if named.is_empty() {
                        "no run matches; `runs list` shows what is registered".to_owned()
                    } else {
                        format!(
                            "history follows one target (model and server kind); the runs hold {}: narrow with one of: {}",
                            identities.len(),
                            named.join("; ")
                        )
                    },
                ));
            }
            let history = vernier_store::history(&runs)?;
            let markdown = vernier_store::render::history_markdown(&history);
            let mut finished = Finished::printing(markdown.clone());
            for figure in history.flagged() {
                finished = finished.note(format!(
                    "flagged: {}: {}",
                    figure.name,
                    figure.flag.as_deref().unwrap_or_default()
                ));
            }
            if history.flagged().next().is_some() && !history.changed.is_empty() {
                finished = finished.note(format!(
                    "changed since the run before: {}",
                    history.changed.join("; ")
                ));
            }
            if let Some(out) = out {
                for (name, text) in [
                    ("history.md", markdown),
                    ("history.json", json(&history)),
                    (
                        "history.html",
                        vernier_store::render::history_html(&history),
                    ),
                ] {
                    let path = write(&out, name, &text)?;
                    finished = finished.note(format!("{name}: {}", path.display()));
                }
            }
            Ok(finished)
        }
    }
}
