//! One pass of an agent run: its sessions side by side, each sending its whole conversation
//! turn after turn (pausing between turns), every turn journaled before the session's next
//! request goes out. Session 0 opens the pass alone; the others start once its first turn is
//! answered, so the shared system prompt and tools are in the cache when they arrive (as they
//! are for agents reaching a server that already serves others).

use std::sync::Arc;

use tokio::sync::watch;
use vernier_journal::JournalWriter;
use vernier_openai::{ChatMessage, ChatRequest};
use vernier_stats::SplitMix64;

use super::config::AgentConfig;
use super::conversation::{Conversation, Sizing, Texts};
use super::exchange::{Exchange, Unanswered, Wire};
use super::journal::{AgentLine, Pass, TurnRecord, TurnStatus};
use crate::error::SweepError;
use crate::observer::SweepObserver;

/// What every session of a run shares.
pub(crate) struct Shared {
    pub(crate) wire: Wire,
    pub(crate) config: AgentConfig,
    pub(crate) sizing: Sizing,
    pub(crate) nonce: String,
    /// The server's count of the shared system prompt and tools.
    pub(crate) prefix_tokens: u64,
    /// `Some("none")` when the server parses no tool calls: every turn offers the tools so.
    pub(crate) tool_choice: Option<String>,
    pub(crate) journal: JournalWriter,
    pub(crate) observer: Arc<dyn SweepObserver>,
    /// Set when the run must stop (interrupted, or a refusal): sessions send no further turn
    /// and wake from their pauses.
    pub(crate) stop: watch::Sender<bool>,
    /// Why the server counts as stopped (a turn failed every try and the server no longer
    /// lists its models): the run ends with the command that continues it.
    pub(crate) stopped_by: std::sync::Mutex<Option<String>>,
}

impl Shared {
    /// Whether the run is stopping.
    pub(crate) fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Asks every session to stop after the turn it has in flight.
    pub(crate) fn request_stop(&self) {
        self.stop.send_replace(true);
    }

    /// The server stopped answering: the first reason is kept, and every session stops.
    pub(crate) fn server_stopped(&self, reason: String) {
        if let Ok(mut kept) = self.stopped_by.lock() {
            kept.get_or_insert(reason);
        }
        self.request_stop();
    }

    /// Why the server counts as stopped, once (taken).
    pub(crate) fn take_stopped_by(&self) -> Option<String> {
        self.stopped_by.lock().map_or(None, |mut kept| kept.take())
    }

    /// Sleeps `pause`, or less when the run stops meanwhile.
    async fn pause(&self, pause: std::time::Duration) {
        let mut stop = self.stop.subscribe();
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            _ = stop.wait_for(|stopped| *stopped) => {}
        }
    }
}

/// How session 0's first turn went, which the other sessions wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    /// Not answered yet.
    Closed,
    /// Answered: the shared prefix is in the cache.
    Cached,
    /// Ended without an answer (failed, stopped or the task died): nothing was cached.
    Open,
}

/// Opens the gate when dropped (a session-0 task that ends any way lets the others go).
struct OpenOnDrop(Arc<watch::Sender<Gate>>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.send_if_modified(|gate| {
            let closed = *gate == Gate::Closed;
            if closed {
                *gate = Gate::Open;
            }
            closed
        });
    }
}

/// The texts of one pass: its own nonce, so no pass is served from another's cache.
fn pass_texts(shared: &Shared, pass: Pass, sessions: u32) -> Texts {
    let tag = match pass {
        Pass::Cached => "c",
        Pass::Baseline => "b",
        Pass::Capacity => "s",
    };
    Texts::new(
        shared.config.workload,
        shared.sizing,
        shared.config.seed,
        &format!("{}{tag}{sessions:04}", shared.nonce),
        shared.config.tools,
    )
}

/// Runs (or continues, from the turns in `done`) one pass of `sessions` sessions; returns its
/// turns, old and new.
pub(crate) async fn run_pass(
    shared: &Arc<Shared>,
    pass: Pass,
    sessions: u32,
    done: &[TurnRecord],
) -> Result<Vec<TurnRecord>, SweepError> {
    let texts = Arc::new(pass_texts(shared, pass, sessions));
    let mine = |session: u32| -> Vec<TurnRecord> {
        let mut turns: Vec<TurnRecord> = done
            .iter()
            .filter(|t| t.pass == pass && t.sessions == sessions && t.session == session)
            .cloned()
            .collect();
        turns.sort_by_key(|t| t.turn);
        turns
    };
    if done
        .iter()
        .all(|t| t.pass != pass || t.sessions != sessions)
    {
        shared.journal.append(&AgentLine::PassStart {
            pass,
            sessions,
            at_unix_ns: shared.wire.clock.unix_ns(std::time::Instant::now()),
        })?;
    }
    let first = mine(0);
    let gate_now = match first.first() {
        Some(turn) if turn.status.answered() => Gate::Cached,
        Some(_) => Gate::Open,
        None => Gate::Closed,
    };
    let (open, gate) = watch::channel(gate_now);
    let open = Arc::new(open);
    let mut set = tokio::task::JoinSet::new();
    for session in 0..sessions {
        let shared = Arc::clone(shared);
        let texts = Arc::clone(&texts);
        let before = mine(session);
        let mut gate = gate.clone();
        let guard = (session == 0).then(|| OpenOnDrop(Arc::clone(&open)));
        let open = Arc::clone(&open);
        set.spawn(async move {
            let prefix_cached = if session > 0 {
                // Waits for session 0's first turn; a closed channel means it ended anyway.
                gate.wait_for(|gate| *gate != Gate::Closed)
                    .await
                    .is_ok_and(|gate| *gate == Gate::Cached)
            } else {
                false
            };
            let result = run_session(
                &shared,
                &texts,
                (pass, sessions, session),
                before,
                (&open, prefix_cached),
            )
            .await;
            if result.is_err() {
                // A refusal stops the run before the gate lets the others send.
                shared.request_stop();
            }
            drop(guard);
            result
        });
    }
    let mut turns = Vec::new();
    let mut first_error = None;
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(Ok(mut session_turns)) => turns.append(&mut session_turns),
            Ok(Err(error)) => {
                shared.request_stop();
                first_error.get_or_insert(error);
            }
            Err(panic) => {
                shared.request_stop();
                first_error.get_or_insert(SweepError::invalid(
                    "sweep agent",
                    format!("a session task failed: {panic}"),
                ));
            }
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }
    turns.sort_by_key(|t| (t.session, t.turn));
    Ok(turns)
}

/// One session: rebuilds its conversation from the turns already journaled, then sends the
/// rest. Returns all its turns.
async fn run_session(
    shared: &Shared,
    texts: &Texts,
    (pass, sessions, session): (Pass, u32, u32),
    before: Vec<TurnRecord>,
    (open, prefix_cached): (&watch::Sender<Gate>, bool),
) -> Result<Vec<TurnRecord>, SweepError> {
    let mut conversation = Conversation::new(session, texts);
    let mut last: Option<(u64, u64)> = None;
    // A turn the server failed (every try) is sent again: it and anything after it are not
    // done. The journal keeps the failed line; the summary counts each turn by its last line.
    let mut before = before;
    if let Some(failed) = before.iter().position(|t| t.status == TurnStatus::Infra) {
        before.truncate(failed);
    }
    for turn in &before {
        conversation.open_turn(texts, turn.turn);
        if !turn.status.answered() {
            return Ok(before);
        }
        conversation.answer(&turn.content, &turn.calls);
        last = computed(turn);
    }
    let mut turns = before;
    let next = turns.last().map_or(1, |t| t.turn + 1);
    for turn in next..=shared.config.turns {
        let think = if turn == 1 {
            std::time::Duration::ZERO
        } else {
            let mut rng = SplitMix64::new(
                shared.config.seed
                    ^ 0x7468_696e_6b00_0000
                    ^ (u64::from(session) << 32)
                    ^ u64::from(turn),
            );
            shared.config.think.draw(&mut rng)
        };
        shared.pause(think).await;
        if shared.stopped() {
            break;
        }
        let opening = conversation.open_turn(texts, turn);
        let request = request_of(shared, texts, pass, &conversation.messages);
        let name = format!("{}-n{sessions}-s{session}-t{turn}", pass_tag(pass));
        let sent = shared.wire.send(&request, &name).await;
        let ideal = |prompt: Option<u64>| {
            let held = match last {
                Some((prompt, completion)) => prompt + completion,
                None if (session > 0 && prefix_cached) || turn > 1 => shared.prefix_tokens,
                None => 0,
            };
            prompt.map(|p| held.min(p))
        };
        let place = (pass, sessions, session, turn);
        let record = record_of(shared, place, opening, sent, (think, &ideal)).await?;
        shared
            .journal
            .append(&AgentLine::Turn(Box::new(record.clone())))?;
        shared.journal.sync()?;
        shared.observer.request_measured();
        let go_on = record.status.answered();
        if session == 0 && turn == 1 {
            open.send_replace(if go_on { Gate::Cached } else { Gate::Open });
        }
        if go_on {
            conversation.answer(&record.content, &record.calls);
            last = computed(&record);
        }
        turns.push(record);
        if !go_on {
            break;
        }
    }
    Ok(turns)
}

/// The journal line of one turn: its answer, or why it got none (a refusal no retry fixes
/// ends the run; a failure on a server that no longer answers stops every session).
async fn record_of(
    shared: &Shared,
    place: Place,
    opening: super::conversation::Opening,
    sent: Result<Exchange, Unanswered>,
    (think, ideal): (
        std::time::Duration,
        &(dyn Fn(Option<u64>) -> Option<u64> + Sync),
    ),
) -> Result<TurnRecord, SweepError> {
    let (_, _, session, turn) = place;
    Ok(match sent {
        Ok(exchange) => answered(shared, place, opening, &exchange, think, &ideal),
        Err(Unanswered::Fatal(message)) => {
            return Err(SweepError::ServerRejected { detail: message });
        }
        Err(Unanswered::Infra(message, tries, _)) => {
            if !shared.wire.alive().await {
                shared.server_stopped(format!(
                    "turn {turn} of session {session} got no answer and the server no longer answers: {message}"
                ));
            }
            unanswered(
                place,
                opening,
                TurnStatus::Infra,
                message,
                tries,
                shared.config.tools,
            )
        }
        Err(Unanswered::TooLong(message)) => unanswered(
            place,
            opening,
            TurnStatus::TooLong,
            message,
            1,
            shared.config.tools,
        ),
    })
}

/// What the server computed for a turn that a perfect cache would keep: its prompt and the
/// answer sent back (reasoning, which the harness does not send back, left out).
fn computed(turn: &TurnRecord) -> Option<(u64, u64)> {
    let answer = turn
        .completion_tokens?
        .saturating_sub(turn.reasoning_tokens.unwrap_or(0));
    Some((turn.prompt_tokens?, answer))
}

const fn pass_tag(pass: Pass) -> &'static str {
    match pass {
        Pass::Cached => "cached",
        Pass::Baseline => "baseline",
        Pass::Capacity => "capacity",
    }
}

/// The request of one turn: the whole conversation, the tools, the budget; in the baseline a
/// `cache_salt` of its own and `cache_prompt: false`, so nothing is served from the cache.
fn request_of(shared: &Shared, texts: &Texts, pass: Pass, messages: &[ChatMessage]) -> ChatRequest {
    let config = &shared.config;
    let mut request = ChatRequest::new(config.model.clone(), messages.to_vec());
    request.max_tokens = Some(u64::from(config.max_tokens));
    request.temperature = Some(config.temperature);
    request.stream = Some(true);
    if !texts.tools.is_empty() {
        request.tools = Some(texts.tools.clone());
        request.tool_choice = shared.tool_choice.clone().map(serde_json::Value::from);
    }
    if pass == Pass::Baseline {
        let salt = format!(
            "{}-{}",
            shared.nonce,
            crate::corpus::NonceSource::new().next()
        );
        request.extra.insert("cache_salt".to_owned(), salt.into());
        request
            .extra
            .insert("cache_prompt".to_owned(), false.into());
    }
    request
}

type Place = (Pass, u32, u32, u32);

fn answered(
    shared: &Shared,
    (pass, sessions, session, turn): Place,
    opening: super::conversation::Opening,
    exchange: &Exchange,
    think: std::time::Duration,
    ideal: &dyn Fn(Option<u64>) -> Option<u64>,
) -> TurnRecord {
    let m = &exchange.measurement;
    let cut_off = m.finish_reason.as_deref() == Some("length");
    // Without the server's cached count the uncached part is unknown.
    let uncached = m
        .prompt_tokens
        .zip(exchange.cached_tokens)
        .map(|(p, cached)| p.saturating_sub(cached));
    TurnRecord {
        pass,
        sessions,
        session,
        turn,
        opening,
        status: if cut_off {
            TurnStatus::CutOff
        } else {
            TurnStatus::Ok
        },
        error: None,
        tries: exchange.tries,
        prompt_tokens: m.prompt_tokens,
        cached_tokens: exchange.cached_tokens,
        cached_source: exchange.cached_source,
        ideal_cached_tokens: ideal(m.prompt_tokens),
        completion_tokens: Some(m.completion_tokens),
        reasoning_tokens: m.reasoning_tokens,
        token_source: serde_json::to_value(m.token_source)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned)),
        finish_reason: m.finish_reason.clone(),
        ttft_ms: m.ttft_ms,
        ttfc_ms: m.time_to_first_content_ms,
        prefill_uncached_tokens_per_s: uncached
            .zip(m.ttft_ms)
            .filter(|(_, ttft)| *ttft > 0.0)
            .map(|(tokens, ttft)| tokens as f64 * 1000.0 / ttft),
        decode_tokens_per_s: m.decode_tokens_per_s,
        itl_median_ms: m.inter_token_latency_ms.map(|l| l.median_ms),
        end_to_end_ms: Some(m.end_to_end_ms),
        tools_offered: shared.config.tools,
        calls: exchange.calls.clone(),
        content: exchange.content.clone(),
        think_ms: think.as_secs_f64() * 1000.0,
        sent_unix_ns: Some(exchange.sent_unix_ns),
        end_unix_ns: Some(exchange.end_unix_ns),
        capture: exchange.capture.clone(),
    }
}

fn unanswered(
    (pass, sessions, session, turn): Place,
    opening: super::conversation::Opening,
    status: TurnStatus,
    message: String,
    tries: u32,
    tools: u32,
) -> TurnRecord {
    TurnRecord {
        pass,
        sessions,
        session,
        turn,
        opening,
        status,
        error: Some(message),
        tries,
        prompt_tokens: None,
        cached_tokens: None,
        cached_source: super::exchange::CachedSource::None,
        ideal_cached_tokens: None,
        completion_tokens: None,
        reasoning_tokens: None,
        token_source: None,
        finish_reason: None,
        ttft_ms: None,
        ttfc_ms: None,
        prefill_uncached_tokens_per_s: None,
        decode_tokens_per_s: None,
        itl_median_ms: None,
        end_to_end_ms: None,
        tools_offered: tools,
        calls: Vec::new(),
        content: String::new(),
        think_ms: 0.0,
        sent_unix_ns: None,
        end_unix_ns: None,
        capture: None,
    }
}
