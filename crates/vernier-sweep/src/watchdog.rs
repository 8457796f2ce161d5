//! The watchdog: a silent stream is told from a busy server by the server's generation
//! counter, read twice, and from a hung one by a one-token probe. Every call it makes has a
//! deadline, so a frozen server cannot freeze the run.

use std::pin::pin;
use std::time::Duration;

use vernier_openai::{ChatMessage, ChatRequest, Client};

use crate::observer::SweepObserver;
use crate::parts::{Target, Watchdog};
use crate::request::Failure;

/// The longest a `/metrics` scrape may take: a server that cannot answer it in this time is
/// not counted as moving.
pub(crate) const SCRAPE_DEADLINE: Duration = Duration::from_secs(10);

/// Reads the generated-tokens counter `name` twice, `gap` apart: `Some(true)` when it moved,
/// `None` when `/metrics` did not answer within [`SCRAPE_DEADLINE`] or lost the counter.
async fn generation_moving(client: &Client, name: &str, gap: Duration) -> Option<bool> {
    let read = || async {
        tokio::time::timeout(SCRAPE_DEADLINE, client.metrics())
            .await
            .ok()?
            .ok()?
            .sum(name)
    };
    let first = read().await?;
    tokio::time::sleep(gap).await;
    let second = read().await?;
    Some(second > first)
}

/// Whether the server answers a one-token request within the idle timeout (at least 2 s): a
/// silent stream on a server that answers is stuck, not the server.
async fn probe_answered(client: &Client, model: &str, idle_timeout: Duration) -> bool {
    let mut probe = ChatRequest::new(model.to_owned(), vec![ChatMessage::user("Say OK.")]);
    probe.max_tokens = Some(1);
    let limit = idle_timeout.max(Duration::from_secs(2));
    matches!(
        tokio::time::timeout(limit, client.chat(&probe)).await,
        Ok(Ok(_))
    )
}

/// Awaits `future`, checking the server whenever `idle_timeout` passes without it finishing:
/// a server whose generation counter moves is busy (keep waiting, up to the cap); one whose
/// counter stands still is hung. The future keeps being polled during the check, so event
/// arrival times stay exact.
pub(crate) async fn watched<F: Future>(
    target: &Target,
    model: &str,
    watchdog: Watchdog,
    observer: &dyn SweepObserver,
    watch: &mut vernier_openai::LazyTimer,
    future: F,
) -> Result<F::Output, Failure> {
    let mut future = pin!(future);
    let mut waited = Duration::ZERO;
    let client = &target.client;
    let idle = watchdog.idle_timeout;
    let counter = target.generation_counter;
    let gap = idle.min(Duration::from_secs(3));
    loop {
        // One timer per stream, moved on lazily: a wait costs no timer of its own.
        let due = tokio::time::Instant::now() + idle;
        tokio::select! {
            biased;
            output = &mut future => return Ok(output),
            () = watch.until(due) => {}
        }
        let check = pin!(async move {
            match counter {
                Some(name) => generation_moving(client, name, gap).await,
                None => None,
            }
        });
        tokio::select! {
            biased;
            output = &mut future => return Ok(output),
            verdict = check => {
                waited += if counter.is_some() { idle + gap } else { idle };
                match verdict {
                    Some(true) if waited < watchdog.busy_wait_cap => {
                        observer.note(&format!(
                            "no event for {:.0} s but the server's generation counter moves: busy, still waiting",
                            waited.as_secs_f64()
                        ));
                    }
                    Some(true) => {
                        return Err(Failure::Retryable(format!(
                            "no event for {:.0} s while the server was busy elsewhere (cap {:.0} s, --busy-wait-cap-s)",
                            waited.as_secs_f64(),
                            watchdog.busy_wait_cap.as_secs_f64()
                        )));
                    }
                    Some(false) if probe_answered(client, model, idle).await => {
                        return Err(Failure::Retryable(format!(
                            "no event for {:.0} s and the server's generation counter did not move, but the server answered a one-token probe: this stream is stuck, not the server; it is abandoned and retried",
                            waited.as_secs_f64()
                        )));
                    }
                    Some(false) => {
                        return Err(Failure::Hung(format!(
                            "no event for {:.0} s, the server's generation counter did not move and a one-token probe went unanswered: the server looks hung",
                            waited.as_secs_f64()
                        )));
                    }
                    None => {
                        return Err(match counter {
                            Some(name) => Failure::Hung(format!(
                                "no event for {:.0} s and /metrics no longer answers with {name}",
                                waited.as_secs_f64()
                            )),
                            None => Failure::Retryable(format!(
                                "no event for {:.0} s; {}",
                                waited.as_secs_f64(),
                                watchdog_blind(target.has_metrics)
                            )),
                        });
                    }
                }
            }
        }
    }
}

/// The warning when the busy check cannot run; `has_metrics` is false when `/metrics` itself
/// did not answer.
pub(crate) fn busy_check_unavailable(has_metrics: bool) -> String {
    let source = if has_metrics {
        "/metrics has none of"
    } else {
        "the server has no /metrics (llama.cpp serves it only with --metrics), so none of"
    };
    format!(
        "busy check unavailable: {source} {}; pass --allow-busy to silence",
        vernier_openai::load_metric_names()
    )
}

/// Why the watchdog cannot tell a hung server from a busy one.
pub(crate) fn watchdog_blind(has_metrics: bool) -> String {
    let source = if has_metrics {
        "/metrics has none of"
    } else {
        "the server has no /metrics, so none of"
    };
    format!(
        "the watchdog cannot tell hung from busy: {source} {}; a stream silent for --idle-timeout-s is abandoned and retried",
        vernier_openai::generation_metric_names()
    )
}
