//! `ready`: how long a server takes to become useful, per repetition, from the launch instant;
//! and, against a proxy that loads models on demand, what a switch between models costs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use vernier_journal::JournalWriter;
use vernier_openai::{ChatMessage, ChatRequest, Client, Timeouts};

use crate::common::{self, Interrupt};
use crate::error::LifecycleError;
use crate::observer::ReadyObserver;
use crate::process::{LaunchedServer, StopReport};

/// Version of the ready journal's line format.
pub const READY_JOURNAL_VERSION: u32 = 1;

/// Everything `ready` can be told. `Default` is the command line's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ReadyConfig {
    /// Where the server answers (with or without `/v1`).
    pub base_url: String,
    /// Shell command that starts the server (run with `sh -c` in its own process group).
    pub launch: Option<String>,
    /// Shell command that stops it; default SIGTERM to the group.
    pub stop: Option<String>,
    /// Models to switch between on a proxy that loads on demand (no `launch`).
    pub swap: Vec<String>,
    /// The model to wait for in `/v1/models` and to ask; default the first one listed.
    pub model: Option<String>,
    /// Repetitions.
    pub reps: u32,
    /// Warm requests after the first one, whose median is compared with it.
    pub warm_requests: u32,
    /// `max_tokens` of each measured request.
    pub max_tokens: u32,
    /// The measured requests' prompt.
    pub prompt: String,
    /// Seconds from launch (or from a swap request) before a repetition is given up.
    pub ready_timeout_s: f64,
    /// Seconds between two polls of the port, `/health` and `/v1/models`.
    pub poll_interval_s: f64,
    /// Seconds between SIGTERM (or the stop command) and SIGKILL.
    pub stop_grace_s: f64,
}

impl Default for ReadyConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8080".to_owned(),
            launch: None,
            stop: None,
            swap: Vec::new(),
            model: None,
            reps: 3,
            warm_requests: 3,
            max_tokens: 32,
            prompt: "Write one sentence about the sea.".to_owned(),
            ready_timeout_s: 900.0,
            poll_interval_s: 0.05,
            stop_grace_s: 15.0,
        }
    }
}

impl ReadyConfig {
    /// Checks ranges and combinations; the first problem is the error.
    pub fn check(&self) -> Result<(), LifecycleError> {
        let invalid = |field, reason: &str| {
            Err(LifecycleError::InvalidConfig {
                field,
                reason: reason.to_owned(),
            })
        };
        match (&self.launch, self.swap.len()) {
            (None, 0) => return invalid("--launch or --swap", "give one of them"),
            (Some(_), n) if n > 0 => {
                return invalid(
                    "--launch with --swap",
                    "--swap measures a running proxy; drop --launch",
                );
            }
            (None, 1) => return invalid("--swap", "name two models or more, comma-separated"),
            _ => {}
        }
        if self.stop.is_some() && self.launch.is_none() {
            return invalid(
                "--stop",
                "it stops what --launch started; give --launch too",
            );
        }
        if self.reps == 0 {
            return invalid("--reps", "use 1 or more");
        }
        if self.max_tokens < 2 {
            return invalid("--max-tokens", "a decode rate needs 2 tokens or more");
        }
        for (value, field) in [
            (self.ready_timeout_s, "--ready-timeout"),
            (self.poll_interval_s, "--poll-interval"),
            (self.stop_grace_s, "--stop-grace"),
        ] {
            common::seconds(value, field)?;
        }
        Ok(())
    }
}

/// Seconds from the launch instant to each milestone of one start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Milestones {
    /// The port accepts a TCP connection.
    pub tcp_accepting_s: Option<f64>,
    /// The health path gave its first HTTP answer (any status).
    pub health_first_answer_s: Option<f64>,
    /// That first answer's status (llama.cpp answers 503 while loading the model).
    pub health_first_status: Option<u16>,
    /// The health path answered 200.
    pub health_ok_s: Option<f64>,
    /// `/health`, or `/v1/models` when the server has no `/health`.
    pub health_path: String,
    /// The model was listed in `/v1/models`.
    pub model_listed_s: Option<f64>,
    /// The model waited for (as listed).
    pub model: Option<String>,
    /// The first token of the first streamed completion arrived.
    pub first_token_s: Option<f64>,
}

impl Milestones {
    /// Every milestone with its name, in order.
    pub fn named(&self) -> [(&'static str, Option<f64>); 5] {
        [
            ("tcp_accepting_s", self.tcp_accepting_s),
            ("health_first_answer_s", self.health_first_answer_s),
            ("health_ok_s", self.health_ok_s),
            ("model_listed_s", self.model_listed_s),
            ("first_token_s", self.first_token_s),
        ]
    }

    /// Whether every milestone was reached.
    pub fn complete(&self) -> bool {
        self.named().iter().all(|(_, value)| value.is_some())
    }
}

/// One measured request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestFigures {
    /// Time to first token, milliseconds.
    pub ttft_ms: Option<f64>,
    /// Decode rate after the first token.
    pub decode_tokens_per_s: Option<f64>,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// One launch, measured and stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LaunchRep {
    /// 1-based repetition.
    pub rep: u32,
    /// Wall clock at launch.
    pub unix_ms: u64,
    /// The server's log (stdout and stderr).
    pub log: String,
    /// The process group.
    pub pgid: u32,
    /// The milestones reached.
    pub milestones: Milestones,
    /// The first request after ready.
    pub cold: Option<RequestFigures>,
    /// The next `warm_requests`.
    pub warm: Vec<RequestFigures>,
    /// Why the repetition stopped short, if it did.
    pub error: Option<String>,
    /// A signal stopped it.
    pub interrupted: bool,
    /// How the server was stopped.
    pub stop: StopReport,
}

/// One request of a swap sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SwapRequest {
    /// 1-based repetition.
    pub rep: u32,
    /// Position in the repetition's order.
    pub index: u32,
    /// The model asked before (unknown for the first request of a run or a resume).
    pub from: Option<String>,
    /// The model asked now.
    pub to: String,
    /// Wall clock at the request.
    pub unix_ms: u64,
    /// From the request to its first token, seconds.
    pub time_to_first_token_s: Option<f64>,
    /// The request's figures.
    pub figures: RequestFigures,
}

/// One line of the ready journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReadyJournalLine {
    /// First line: what was run.
    Header {
        /// Format version.
        journal_version: u32,
        /// Wall clock.
        started_unix_ms: u64,
        /// The command line.
        command_line: Vec<String>,
        /// The settings.
        config: ReadyConfig,
    },
    /// A resumed run continues here.
    Resumed {
        /// Wall clock.
        unix_ms: u64,
        /// The command line of the resume.
        command_line: Vec<String>,
    },
    /// One launch repetition.
    Launch(Box<LaunchRep>),
    /// One swap request.
    Swap(Box<SwapRequest>),
}

/// How a run starts.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ReadyStart {
    /// A new run writing into `out`.
    New {
        /// The settings.
        config: ReadyConfig,
        /// The output folder (journal, logs, reports).
        out: PathBuf,
    },
    /// Continue the run whose journal this is.
    Resume {
        /// The journal.
        journal: PathBuf,
    },
}

/// What a finished (or interrupted) run leaves behind.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadyOutcome {
    /// The summary, also in the run file.
    pub run: crate::report::ReadyRun,
    /// The journal.
    pub journal: PathBuf,
    /// `run.json`.
    pub run_file: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// A signal stopped the run early.
    pub interrupted: bool,
}

struct Session<'a> {
    config: ReadyConfig,
    out: PathBuf,
    writer: JournalWriter,
    observer: &'a dyn ReadyObserver,
}

/// Runs `ready`, journalling every repetition as it ends; `interrupt`, when it completes,
/// stops the run (a launched server is stopped first) and the reports are still written.
pub async fn run_ready(
    start: ReadyStart,
    command_line: &[String],
    observer: &dyn ReadyObserver,
    interrupt: Option<Interrupt>,
) -> Result<ReadyOutcome, LifecycleError> {
    let (config, out, journal, writer, done) = match start {
        ReadyStart::New { config, out } => {
            config.check()?;
            std::fs::create_dir_all(out.join("logs")).map_err(|source| LifecycleError::Write {
                path: out.clone(),
                source,
            })?;
            let journal = out.join("journal.jsonl");
            if journal.exists() {
                return Err(LifecycleError::JournalExists { path: journal });
            }
            let writer = JournalWriter::create_new(&journal)?;
            writer.append(&ReadyJournalLine::Header {
                journal_version: READY_JOURNAL_VERSION,
                started_unix_ms: common::unix_ms(),
                command_line: command_line.to_vec(),
                config: config.clone(),
            })?;
            (config, out, journal, writer, Vec::new())
        }
        ReadyStart::Resume { journal } => {
            let lines = read_journal(&journal)?;
            let Some(ReadyJournalLine::Header { config, .. }) = lines.first() else {
                return Err(LifecycleError::Resume {
                    path: journal,
                    reason: "its first line is not a ready header".to_owned(),
                });
            };
            let config = config.clone();
            config.check()?;
            let out = journal
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_owned);
            std::fs::create_dir_all(out.join("logs")).map_err(|source| LifecycleError::Write {
                path: out.clone(),
                source,
            })?;
            let writer = JournalWriter::open_append(&journal)?;
            writer.append(&ReadyJournalLine::Resumed {
                unix_ms: common::unix_ms(),
                command_line: command_line.to_vec(),
            })?;
            (config, out, journal, writer, lines)
        }
    };
    let session = Session {
        config,
        out,
        writer,
        observer,
    };
    let mut interrupt = interrupt.unwrap_or_else(|| Box::pin(std::future::pending()));
    let interrupted = if session.config.launch.is_some() {
        session.launches(&done, &mut interrupt).await?
    } else {
        session.swaps(&done, &mut interrupt).await?
    };
    let lines = read_journal(&journal)?;
    let run = crate::report::summarise(&lines, interrupted);
    let (run_file, markdown) = crate::report::write_ready_reports(&run, &session.out)?;
    Ok(ReadyOutcome {
        run,
        journal,
        run_file,
        markdown,
        interrupted,
    })
}

/// Reads a ready journal (a torn last line is ignored, as the writer cuts it off).
pub fn read_journal(path: &Path) -> Result<Vec<ReadyJournalLine>, LifecycleError> {
    Ok(vernier_journal::read::<ReadyJournalLine>(path)?.into_values())
}

fn completed_launch_reps(lines: &[ReadyJournalLine]) -> u32 {
    lines
        .iter()
        .filter_map(|line| match line {
            ReadyJournalLine::Launch(rep) if !rep.interrupted => Some(rep.rep),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

fn completed_swap_reps(lines: &[ReadyJournalLine], models: usize) -> u32 {
    let mut rep = 0;
    loop {
        let next = rep + 1;
        let n = lines
            .iter()
            .filter(|line| matches!(line, ReadyJournalLine::Swap(s) if s.rep == next))
            .count();
        if n < models {
            return rep;
        }
        rep = next;
    }
}

impl Session<'_> {
    fn client(&self, request_timeout: Duration) -> Result<Client, LifecycleError> {
        let timeouts = Timeouts::new()
            .connect(Some(Duration::from_secs(5)))
            .first_byte(Some(request_timeout))
            .idle(Some(Duration::from_secs(120)));
        common::client(&self.config.base_url, timeouts)
    }

    fn request(&self, model: &str) -> ChatRequest {
        let mut request =
            ChatRequest::new(model, vec![ChatMessage::user(self.config.prompt.clone())]);
        request.max_tokens = Some(u64::from(self.config.max_tokens));
        request
    }

    async fn launches(
        &self,
        done: &[ReadyJournalLine],
        interrupt: &mut Interrupt,
    ) -> Result<bool, LifecycleError> {
        let Some(command) = self.config.launch.clone() else {
            return Ok(false);
        };
        let first = completed_launch_reps(done) + 1;
        if first > 1 {
            self.observer.note(&format!(
                "resuming at repetition {first} of {}",
                self.config.reps
            ));
        }
        let grace = common::seconds(self.config.stop_grace_s, "--stop-grace")?;
        for rep in first..=self.config.reps {
            let log = self.out.join("logs").join(format!("rep-{rep}.log"));
            self.observer
                .note(&format!("repetition {rep}/{}: launching", self.config.reps));
            let server = LaunchedServer::launch(&command, &log)?;
            let unix_ms = common::unix_ms();
            let pgid = server.pgid();
            let mut milestones = Milestones::default();
            let mut cold = None;
            let mut warm = Vec::new();
            let measured = tokio::select! {
                result = self.measure_launch(&server, &mut milestones, &mut cold, &mut warm) => Some(result),
                () = interrupt.as_mut() => None,
            };
            let stop = server.stop(self.config.stop.as_deref(), grace).await;
            let interrupted = measured.is_none();
            let error = match measured {
                Some(Err(error)) => Some(error),
                None => Some("interrupted".to_owned()),
                Some(Ok(())) => None,
            };
            self.observer.note(&format!(
                "repetition {rep}: {}; stopped by {} in {:.2} s",
                error.as_deref().unwrap_or("every milestone reached"),
                stop.how,
                stop.stop_s
            ));
            self.writer
                .append(&ReadyJournalLine::Launch(Box::new(LaunchRep {
                    rep,
                    unix_ms,
                    log: log.display().to_string(),
                    pgid,
                    milestones,
                    cold,
                    warm,
                    error,
                    interrupted,
                    stop,
                })))?;
            self.writer.sync()?;
            if interrupted {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn measure_launch(
        &self,
        server: &LaunchedServer,
        milestones: &mut Milestones,
        cold: &mut Option<RequestFigures>,
        warm: &mut Vec<RequestFigures>,
    ) -> Result<(), String> {
        let launched = server.launched_at();
        let limit = Duration::from_secs_f64(self.config.ready_timeout_s);
        let poll = Duration::from_secs_f64(self.config.poll_interval_s);
        let since = |instant: Instant| instant.duration_since(launched).as_secs_f64();
        let check = |what: &str| -> Result<(), String> {
            if let Some(status) = server.exit_status() {
                return Err(format!(
                    "the server exited ({status}) before {what}; see {}",
                    server.log().display()
                ));
            }
            if launched.elapsed() > limit {
                return Err(format!(
                    "no {what} within {} s of the launch; see {}",
                    self.config.ready_timeout_s,
                    server.log().display()
                ));
            }
            Ok(())
        };
        let address = host_port(&self.config.base_url)
            .ok_or_else(|| format!("cannot read a host and port in {}", self.config.base_url))?;
        milestones.tcp_accepting_s = Some(since(wait_for_port(&address, poll, &check).await?));
        self.observer.note(&format!(
            "  port accepting after {:.2} s",
            milestones.tcp_accepting_s.unwrap_or_default()
        ));
        let client = self.client(limit).map_err(|error| error.to_string())?;
        "/health".clone_into(&mut milestones.health_path);
        loop {
            check("/health answered 200")?;
            if let Ok((status, _, _)) = client.get_raw(&milestones.health_path).await {
                let now = Instant::now();
                let status = status.as_u16();
                if milestones.health_first_answer_s.is_none() {
                    milestones.health_first_answer_s = Some(since(now));
                    milestones.health_first_status = Some(status);
                }
                if status == 404 && milestones.health_path == "/health" {
                    "/v1/models".clone_into(&mut milestones.health_path);
                    continue;
                }
                if status == 200 {
                    milestones.health_ok_s = Some(since(now));
                    break;
                }
            }
            tokio::time::sleep(poll).await;
        }
        self.observer.note(&format!(
            "  {} answered {:?} first, 200 after {:.2} s",
            milestones.health_path,
            milestones.health_first_status,
            milestones.health_ok_s.unwrap_or_default()
        ));
        let model = loop {
            check("the model was listed in /v1/models")?;
            if let Ok(models) = client.models().await {
                let found = match &self.config.model {
                    Some(wanted) => models.iter().find(|m| &m.id == wanted),
                    None => models.first(),
                };
                if let Some(found) = found {
                    milestones.model_listed_s = Some(since(Instant::now()));
                    milestones.model = Some(found.id.clone());
                    break found.id.clone();
                }
            }
            tokio::time::sleep(poll).await;
        };
        check("the first token")?;
        let request = self.request(&model);
        let sent = Instant::now();
        let figures = measure(&client, &request).await;
        if let Some(ttft) = figures.ttft_ms {
            milestones.first_token_s =
                Some(sent.duration_since(launched).as_secs_f64() + ttft / 1000.0);
        }
        let failed = figures.error.clone();
        *cold = Some(figures);
        if let Some(error) = failed {
            return Err(format!("the first request failed: {error}"));
        }
        self.observer.note(&format!(
            "  first token after {:.2} s",
            milestones.first_token_s.unwrap_or_default()
        ));
        for _ in 0..self.config.warm_requests {
            warm.push(measure(&client, &request).await);
        }
        Ok(())
    }

    async fn swaps(
        &self,
        done: &[ReadyJournalLine],
        interrupt: &mut Interrupt,
    ) -> Result<bool, LifecycleError> {
        let models = &self.config.swap;
        let first = completed_swap_reps(done, models.len()) + 1;
        let limit = common::seconds(self.config.ready_timeout_s, "--ready-timeout")?;
        let client = self.client(limit)?;
        let mut previous: Option<String> = None;
        for rep in first..=self.config.reps {
            let mut order = models.clone();
            if rep % 2 == 0 {
                order.reverse();
            }
            for (index, model) in (0_u32..).zip(order) {
                self.observer.note(&format!(
                    "repetition {rep}/{}: {} -> {model}",
                    self.config.reps,
                    previous.as_deref().unwrap_or("?")
                ));
                let request = self.request(&model);
                let unix_ms = common::unix_ms();
                let figures = tokio::select! {
                    figures = measure(&client, &request) => figures,
                    () = interrupt.as_mut() => return Ok(true),
                };
                let line = SwapRequest {
                    rep,
                    index,
                    from: previous.replace(model.clone()),
                    to: model,
                    unix_ms,
                    time_to_first_token_s: figures.ttft_ms.map(|ms| ms / 1000.0),
                    figures,
                };
                self.writer
                    .append(&ReadyJournalLine::Swap(Box::new(line)))?;
            }
        }
        Ok(false)
    }
}

async fn measure(client: &Client, request: &ChatRequest) -> RequestFigures {
    match client.measure_chat(request).await {
        Ok((metered, stream_error)) => {
            let measurement = metered.measurement;
            RequestFigures {
                ttft_ms: measurement.ttft_ms,
                decode_tokens_per_s: measurement.decode_tokens_per_s,
                completion_tokens: measurement.completion_tokens,
                error: stream_error.map(|error| error.to_string()),
            }
        }
        Err(error) => RequestFigures {
            error: Some(common::classify(&error).short()),
            ..RequestFigures::default()
        },
    }
}

/// Polls until `address` accepts a TCP connection; returns when it did.
async fn wait_for_port(
    address: &str,
    poll: Duration,
    check: &dyn Fn(&str) -> Result<(), String>,
) -> Result<Instant, String> {
    loop {
        check("the port accepted a connection")?;
        let attempt = tokio::time::timeout(
            poll.max(Duration::from_millis(200)),
            tokio::net::TcpStream::connect(address),
        )
        .await;
        if let Ok(Ok(_stream)) = attempt {
            return Ok(Instant::now());
        }
        tokio::time::sleep(poll).await;
    }
}

/// `host:port` of a base URL such as `http://127.0.0.1:8080/v1`.
fn host_port(base_url: &str) -> Option<String> {
    let (scheme, rest) = base_url.split_once("://")?;
    let authority = rest.split('/').next()?;
    if authority.is_empty() {
        return None;
    }
    if authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        && !authority.ends_with(']')
    {
        return Some(authority.to_owned());
    }
    let port = if scheme == "https" { 443 } else { 80 };
    Some(format!("{authority}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_come_from_the_base_url() {
        assert_eq!(
            host_port("http://127.0.0.1:8080/v1").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(
            host_port("http://localhost").as_deref(),
            Some("localhost:80")
        );
        assert_eq!(
            host_port("https://example.invalid/").as_deref(),
            Some("example.invalid:443")
        );
        assert_eq!(host_port("127.0.0.1:8080"), None);
    }

    #[test]
    fn settings_must_say_what_to_measure() {
        assert!(ReadyConfig::default().check().is_err());
        let launch = ReadyConfig {
            launch: Some("true".to_owned()),
            ..ReadyConfig::default()
        };
        assert!(launch.check().is_ok());
        let both = ReadyConfig {
            swap: vec!["a".to_owned(), "b".to_owned()],
            ..launch.clone()
        };
        assert!(both.check().is_err());
        let one_model = ReadyConfig {
            swap: vec!["a".to_owned()],
            ..ReadyConfig::default()
        };
        assert!(one_model.check().is_err());
        let no_reps = ReadyConfig { reps: 0, ..launch };
        assert!(no_reps.check().is_err());
    }
}
