//! `ready`: how long a server takes to become useful, per repetition, from the launch instant;
//! and, against a proxy that loads models on demand, what a switch between models costs.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vernier_journal::JournalWriter;
use vernier_openai::{ChatMessage, ChatRequest, Client, Timeouts};
use vernier_run::{
    ClientOptions, Interrupt, RunError, ServerFingerprint, build_client, fingerprint,
    resolve_model, unix_ms,
};

use crate::error::LifecycleError;
use crate::observer::ReadyObserver;
use crate::probe::classify;
use crate::process::LaunchedServer;
use crate::ready_config::ReadyConfig;
use crate::ready_journal::{
    LaunchRep, Milestones, READY_JOURNAL_VERSION, ReadyJournalLine, RequestFigures, SwapRequest,
    completed_launch_reps, completed_swap_reps, read_journal, recorded_server,
};
use crate::resume::{ResumeFlags, ServerCheck};

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
    /// Continue the run whose journal this is, with its settings; the flags typed beside
    /// `--resume` must agree with them, but for the operational ones, which this session uses.
    Resume {
        /// The journal.
        journal: PathBuf,
        /// What was typed beside `--resume`.
        flags: ResumeFlags,
    },
}

impl ReadyStart {
    /// Continue the run of `journal` as it was started (nothing typed beside `--resume`).
    pub fn resume(journal: impl Into<PathBuf>) -> Self {
        Self::Resume {
            journal: journal.into(),
            flags: ResumeFlags::default(),
        }
    }
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
    journal: PathBuf,
    out: PathBuf,
    writer: JournalWriter,
    observer: &'a dyn ReadyObserver,
}

/// Runs `ready`, journalling every repetition as it ends; `interrupt`, when it completes,
/// stops the run (a launched server is stopped first) and the reports are still written.
///
/// A resumed run refuses flags that would change what the journal's run measures
/// ([`RunError::ConfigMismatch`]), and a server that is not the one the journal measured
/// ([`RunError::ServerChanged`], found when its first repetition reaches its first token, or
/// before the first swap).
pub async fn run_ready(
    start: ReadyStart,
    command_line: &[String],
    observer: &dyn ReadyObserver,
    interrupt: Option<Interrupt>,
) -> Result<ReadyOutcome, LifecycleError> {
    let (config, out, journal, writer, done) = match start {
        ReadyStart::New { config, out } => {
            config.check()?;
            crate::report::make_run_folders(&out)?;
            let journal = out.join("journal.jsonl");
            if journal.exists() {
                return Err(RunError::JournalExists { out, journal }.into());
            }
            let writer = JournalWriter::create_new(&journal)?;
            writer.append(&ReadyJournalLine::Header {
                journal_version: READY_JOURNAL_VERSION,
                started_unix_ms: unix_ms(),
                command_line: command_line.to_vec(),
                config: config.clone(),
            })?;
            (config, out, journal, writer, Vec::new())
        }
        ReadyStart::Resume { journal, flags } => {
            let lines = read_journal(&journal)?;
            let Some(ReadyJournalLine::Header {
                config: recorded,
                command_line: original,
                ..
            }) = lines.first()
            else {
                return Err(LifecycleError::Resume {
                    path: journal,
                    reason: "its first line is not a ready header".to_owned(),
                });
            };
            let (out, changed_settings) = flags.check(&journal, original, |flags, out| {
                flags.settings(recorded, out)
            })?;
            let config = flags.session_config(recorded);
            config.check()?;
            crate::report::make_run_folders(&out)?;
            let writer = JournalWriter::open_append(&journal)?;
            writer.append(&ReadyJournalLine::Resumed {
                unix_ms: unix_ms(),
                command_line: command_line.to_vec(),
                changed_settings,
            })?;
            (config, out, journal, writer, lines)
        }
    };
    let session = Session {
        config,
        journal: journal.clone(),
        out,
        writer,
        observer,
    };
    let mut interrupt = interrupt.unwrap_or_else(vernier_run::never);
    let mut server = ServerCheck::new(&journal, recorded_server(&done));
    let interrupted = if session.config.launch.is_some() {
        session.launches(&done, &mut server, &mut interrupt).await?
    } else {
        session.swaps(&done, &mut server, &mut interrupt).await?
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

/// What one launch repetition measured.
#[derive(Debug, Default)]
struct LaunchFigures {
    milestones: Milestones,
    cold: Option<RequestFigures>,
    warm: Vec<RequestFigures>,
    server: Option<ServerFingerprint>,
}

/// Why a launch repetition stopped short.
#[derive(Debug)]
enum RepStop {
    /// The repetition failed (the run goes on).
    Failed(String),
    /// The server is not the journal's (the run stops).
    Refused(RunError),
}

impl From<String> for RepStop {
    fn from(error: String) -> Self {
        Self::Failed(error)
    }
}

impl Session<'_> {
    fn client(&self, request_timeout: Duration) -> Result<Client, LifecycleError> {
        let timeouts = Timeouts::new()
            .connect(Some(Duration::from_secs(5)))
            .first_byte(Some(request_timeout))
            .idle(Some(Duration::from_secs(120)));
        Ok(build_client(
            &ClientOptions::new(&self.config.base_url)
                .api_key_env(self.config.api_key_env.as_deref())
                .ca_cert(self.config.ca_cert.as_deref())
                .timeouts(timeouts)
                .user_agent(crate::user_agent::USER_AGENT),
        )?)
    }

    fn request(&self, model: &str) -> ChatRequest {
        let mut request =
            ChatRequest::new(model, vec![ChatMessage::user(self.config.prompt.clone())]);
        request.max_tokens = Some(u64::from(self.config.max_tokens));
        request.extra.extend(self.config.extra_body.clone());
        request
    }

    async fn launches(
        &self,
        done: &[ReadyJournalLine],
        server_check: &mut ServerCheck,
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
        let grace = vernier_run::seconds("--stop-grace", self.config.stop_grace_s, true)?;
        for rep in first..=self.config.reps {
            let log = self.out.join("logs").join(format!("rep-{rep}.log"));
            check_port_free(&self.config.base_url)?;
            self.observer
                .note(&format!("repetition {rep}/{}: launching", self.config.reps));
            let server = LaunchedServer::launch(&command, &log)?;
            let unix_ms = unix_ms();
            let pgid = server.pgid();
            let mut figures = LaunchFigures::default();
            let mut follower = crate::engine_log::LogFollower::new(&log);
            let launched = server.launched_at();
            let follow_poll = Duration::from_secs_f64(self.config.poll_interval_s.min(0.1));
            let follow = async {
                loop {
                    follower.poll(launched.elapsed().as_secs_f64());
                    tokio::time::sleep(follow_poll).await;
                }
            };
            let measured = tokio::select! {
                result = self.measure_launch(&server, &mut figures, server_check) => Some(result),
                () = follow => None,
                () = interrupt.as_mut() => None,
            };
            follower.poll(launched.elapsed().as_secs_f64());
            let engine_start = follower.start;
            let stop = server.stop(self.config.stop.as_deref(), grace).await;
            let interrupted = measured.is_none();
            let error = match measured {
                Some(Err(RepStop::Refused(error))) => {
                    self.observer.note(&format!(
                        "repetition {rep}: another server than the journal's; stopped by {} in {:.2} s",
                        stop.how, stop.stop_s
                    ));
                    return Err(error.into());
                }
                Some(Err(RepStop::Failed(error))) => Some(error),
                None => Some("interrupted".to_owned()),
                Some(Ok(())) => None,
            };
            let LaunchFigures {
                milestones,
                cold,
                warm,
                server,
            } = figures;
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
                    server,
                    engine_start,
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
        figures: &mut LaunchFigures,
        server_check: &mut ServerCheck,
    ) -> Result<(), RepStop> {
        let milestones = &mut figures.milestones;
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
                    "gave up waiting until {what}: {} s since the launch; see {}",
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
        let client = self
            .client(limit)
            .map_err(|error| vernier_cli::one_line(&error))?;
        wait_for_health(&client, milestones, poll, &since, &check).await?;
        self.observer.note(&format!(
            "  {} answered {} first, 200 after {:.2} s",
            milestones.health_path,
            milestones
                .health_first_status
                .map_or_else(|| "nothing".to_owned(), |status| status.to_string()),
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
        let cold = measure(&client, &request).await;
        if let Some(ttft) = cold.ttft_ms {
            milestones.first_token_s =
                Some(sent.duration_since(launched).as_secs_f64() + ttft / 1000.0);
        }
        let failed = cold.error.clone();
        figures.cold = Some(cold);
        if let Some(error) = failed {
            return Err(RepStop::Failed(format!(
                "the first request failed: {error}"
            )));
        }
        self.observer.note(&format!(
            "  first token after {:.2} s",
            figures.milestones.first_token_s.unwrap_or_default()
        ));
        if server_check.wanted() {
            let now = fingerprint(&model, &client.server_identity().await);
            figures.server = server_check.check(now).map_err(RepStop::Refused)?;
        }
        for _ in 0..self.config.warm_requests {
            figures.warm.push(measure(&client, &request).await);
        }
        Ok(())
    }

    async fn swaps(
        &self,
        done: &[ReadyJournalLine],
        server_check: &mut ServerCheck,
        interrupt: &mut Interrupt,
    ) -> Result<bool, LifecycleError> {
        let models = &self.config.swap;
        let first = completed_swap_reps(done, models.len()) + 1;
        let limit = vernier_run::seconds("--ready-timeout", self.config.ready_timeout_s, true)?;
        let client = self.client(limit)?;
        if let Some(recorded) = server_check.to_compare() {
            // Before the first swap: the proxy still lists the model, and is the same software.
            let model = recorded.model.clone();
            let check = async {
                resolve_model(&client, Some(&model), Some(&self.journal)).await?;
                server_check.check(fingerprint(&model, &client.server_identity().await))
            };
            tokio::select! {
                checked = check => { checked?; }
                () = interrupt.as_mut() => return Ok(true),
            }
        }
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
                let unix_ms = unix_ms();
                let figures = tokio::select! {
                    figures = measure(&client, &request) => figures,
                    () = interrupt.as_mut() => return Ok(true),
                };
                let mut line = SwapRequest {
                    rep,
                    index,
                    from: previous.replace(model.clone()),
                    to: model,
                    unix_ms,
                    time_to_first_token_s: figures.ttft_ms.map(|ms| ms / 1000.0),
                    figures,
                    server: None,
                };
                let mut interrupted = false;
                if line.figures.ttft_ms.is_some()
                    && line.figures.error.is_none()
                    && server_check.wanted()
                {
                    tokio::select! {
                        identity = client.server_identity() => {
                            line.server = server_check.check(fingerprint(&line.to, &identity))?;
                        }
                        () = interrupt.as_mut() => interrupted = true,
                    }
                }
                self.writer
                    .append(&ReadyJournalLine::Swap(Box::new(line)))?;
                if interrupted {
                    return Ok(true);
                }
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
            error: Some(classify(&error).short()),
            ..RequestFigures::default()
        },
    }
}

/// Polls the health path until it answers 200, noting its first answer; a server without
/// `/health` (404) is polled on `/v1/models` instead.
async fn wait_for_health(
    client: &Client,
    milestones: &mut Milestones,
    poll: Duration,
    since: &dyn Fn(Instant) -> f64,
    check: &dyn Fn(&str) -> Result<(), String>,
) -> Result<(), String> {
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
                return Ok(());
            }
        }
        tokio::time::sleep(poll).await;
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

/// The `host:port` of `base_url` when something already accepts connections there: a launch
/// onto it would measure that server, not the one launched (each address tried for 500 ms).
pub fn port_answering(base_url: &str) -> Option<String> {
    let host_port = host_port(base_url)?;
    let taken =
        std::net::ToSocketAddrs::to_socket_addrs(host_port.as_str()).is_ok_and(|addresses| {
            addresses.into_iter().any(|address| {
                std::net::TcpStream::connect_timeout(&address, Duration::from_millis(500)).is_ok()
            })
        });
    taken.then_some(host_port)
}

/// Refuses a launch onto a port something already answers on, naming it and the fix.
pub fn check_port_free(base_url: &str) -> Result<(), RunError> {
    match port_answering(base_url) {
        Some(host_port) => Err(RunError::invalid(
            "--launch",
            format!(
                "something already answers at {host_port}, where the launched server should: stop it first (it would be measured instead), or give the launch command another port and --base-url that port"
            ),
        )),
        None => Ok(()),
    }
}

/// `host:port` of a base URL such as `http://127.0.0.1:8080/v1` (the scheme's port when none
/// is written); `None` for a URL without an authority.
pub fn host_port(base_url: &str) -> Option<String> {
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
}
