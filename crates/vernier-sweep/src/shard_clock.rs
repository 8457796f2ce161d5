//! A shard's clock and start: its offset from the server's clock (from the server's `Date`
//! headers), the wait for the agreed instant (`--start-at`), and the grid every shard's
//! measured repetitions start on, so that the shards' schedules line up on the wall clock.

use std::time::{Duration, Instant, UNIX_EPOCH};

use vernier_openai::Client;

use crate::error::SweepError;
use crate::journal::SweepJournalLine;
use crate::parts::Sweep;
use crate::shard::{ClockOffset, ShardStart};
use crate::shard_grid::{instant_of_unix_ns, now_unix_ns};

/// How long the clock probe looks for the server's next second at most.
const PROBE_SPAN: Duration = Duration::from_millis(2500);
/// The pause between two clock probes.
const PROBE_PAUSE: Duration = Duration::from_millis(4);

/// How a shard starts: the agreed instant, the lateness allowed and the grid's gap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StartPlan {
    pub(crate) start_at_unix_ms: Option<u64>,
    pub(crate) tolerance: Duration,
    pub(crate) gap: Duration,
    /// A resumed run: an instant already past (the one its resume command repeats) is
    /// dropped, and the shard starts at once.
    pub(crate) resumed: bool,
}

impl StartPlan {
    /// The start the run's context asks for.
    pub(crate) fn of(context: &crate::context::RunContext, resumed: bool) -> Self {
        Self {
            start_at_unix_ms: context.start_at_unix_ms,
            tolerance: context.start_tolerance,
            gap: context.shard_gap,
            resumed,
        }
    }
}

/// The second a `Date` header names, as seconds since the Unix epoch.
fn date_seconds(headers: &http::HeaderMap) -> Option<u64> {
    let text = headers.get(http::header::DATE)?.to_str().ok()?;
    let at = httpdate::parse_http_date(text).ok()?;
    at.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs())
}

/// One probe: when it was sent and answered (our clock, ns) and the second the server named.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Probe {
    pub(crate) sent_ns: u64,
    pub(crate) answered_ns: u64,
    pub(crate) server_second: u64,
}

/// The offset from the first turn of the server's second between consecutive probes: the
/// server read its clock between `sent` and `answered` of each, so its second began after the
/// earlier probe was sent and before the later one was answered.
pub(crate) fn offset_from_edge(probes: &[Probe]) -> Option<ClockOffset> {
    let edge = probes
        .windows(2)
        .find(|pair| pair[1].server_second == pair[0].server_second + 1)?;
    let (low, high) = (edge[0].sent_ns as f64, edge[1].answered_ns as f64);
    let ours_ms = f64::midpoint(low, high) / 1e6;
    let server_ms = edge[1].server_second as f64 * 1000.0;
    Some(ClockOffset {
        method: "date_header_second_edge".to_owned(),
        offset_ms: server_ms - ours_ms,
        uncertainty_ms: (high - low) / 2e6,
        n_probes: u32::try_from(probes.len()).unwrap_or(u32::MAX),
    })
}

/// This machine's clock against the server's, or why it cannot be read.
async fn clock_offset(client: &Client) -> Result<ClockOffset, String> {
    let started = Instant::now();
    let mut probes = Vec::new();
    while started.elapsed() < PROBE_SPAN {
        let sent_ns = now_unix_ns();
        let answer = client.get_raw("health").await;
        let answered_ns = now_unix_ns();
        let headers = match answer {
            Ok((_, headers, _)) => headers,
            Err(error) => {
                return Err(format!(
                    "the clock probe failed: {}",
                    vernier_cli::one_line(&error)
                ));
            }
        };
        let Some(server_second) = date_seconds(&headers) else {
            return Err("the server sends no Date header".to_owned());
        };
        probes.push(Probe {
            sent_ns,
            answered_ns,
            server_second,
        });
        if let Some(offset) = offset_from_edge(&probes) {
            return Ok(offset);
        }
        tokio::time::sleep(PROBE_PAUSE).await;
    }
    Err(format!(
        "the server's Date header did not turn to its next second within {} s",
        PROBE_SPAN.as_secs_f64()
    ))
}

/// Starts this shard: reads its clock against the server's, waits for the agreed instant,
/// journals the start and sets the repetitions' grid; too late to the instant, it journals
/// the start and fails.
pub(crate) async fn start_shard(sweep: &Sweep, mut plan: StartPlan) -> Result<(), SweepError> {
    let Some(shard) = sweep.plan.config.shard else {
        return Ok(());
    };
    let record = &sweep.record;
    if plan.resumed
        && let Some(at) = plan
            .start_at_unix_ms
            .filter(|at| *at < vernier_run::unix_ms())
    {
        record.observer.warn(&format!(
            "shard {shard}: the start {} has passed; this resumed shard starts now, out of step with the others (give every resumed shard a new --start-at to keep them together)",
            vernier_run::rfc3339_ms(at)
        ));
        plan.start_at_unix_ms = None;
    }
    let (clock, clock_note) = match clock_offset(&sweep.target.client).await {
        Ok(offset) => {
            record.observer.note(&format!(
                "shard {shard}: the server's clock is {:+.1} ms from this machine's (±{:.1} ms, from its Date header)",
                offset.offset_ms, offset.uncertainty_ms
            ));
            (Some(offset), None)
        }
        Err(why) => (None, Some(why)),
    };
    if let Some(at) = plan.start_at_unix_ms {
        let wait = Duration::from_millis(at.saturating_sub(vernier_run::unix_ms()));
        if !wait.is_zero() {
            record.observer.status(&format!(
                "shard {shard}: waiting {:.1} s for {}",
                wait.as_secs_f64(),
                vernier_run::rfc3339_ms(at)
            ));
            tokio::time::sleep_until(instant_of_unix_ns(at.saturating_mul(1_000_000)).into()).await;
        }
    }
    let began_ns = now_unix_ns();
    let late_ms = plan
        .start_at_unix_ms
        .map_or(0.0, |at| (began_ns as f64 / 1e6 - at as f64).max(0.0));
    let tolerance_ms = plan.tolerance.as_secs_f64() * 1000.0;
    record
        .journal
        .append(&SweepJournalLine::ShardStart(Box::new(ShardStart {
            shard,
            start_at_unix_ms: plan.start_at_unix_ms,
            began_unix_ms: began_ns / 1_000_000,
            late_ms,
            tolerance_ms,
            gap_s: plan.gap.as_secs_f64(),
            clock,
            clock_note,
        })))?;
    record.journal.sync()?;
    if late_ms > tolerance_ms {
        return Err(SweepError::invalid(
            "--start-at",
            format!(
                "shard {shard} reached {} {late_ms:.0} ms late (the tolerance is {tolerance_ms:.0} ms): its set-up took longer than the lead it was given; give every shard a later instant, or a larger --start-tolerance",
                plan.start_at_unix_ms
                    .map_or_else(String::new, vernier_run::rfc3339_ms)
            ),
        ));
    }
    // The grid starts one gap after the agreed instant (or, without one, after this shard
    // began), so that the first cell's warm-ups are over before its first repetition.
    let base_ns = plan
        .start_at_unix_ms
        .map_or(began_ns, |at| at.saturating_mul(1_000_000))
        .saturating_add(u64::try_from(plan.gap.as_nanos()).unwrap_or(u64::MAX));
    sweep.grid.start_at(base_ns);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(sent_ms: u64, answered_ms: u64, server_second: u64) -> Probe {
        Probe {
            sent_ns: sent_ms * 1_000_000,
            answered_ns: answered_ms * 1_000_000,
            server_second,
        }
    }

    #[test]
    fn the_offset_is_read_at_the_servers_second_edge() {
        // Our clock 250 ms behind the server's: the server's second 101 begins at our
        // 100 750 ms, between the probe sent at 100 744 and the one answered at 100 756.
        let probes = [
            probe(100_730, 100_736, 100),
            probe(100_744, 100_748, 100),
            probe(100_752, 100_756, 101),
        ];
        let offset = offset_from_edge(&probes).expect("an edge");
        assert!((offset.offset_ms - 250.0).abs() < 1e-6, "{offset:?}");
        assert!((offset.uncertainty_ms - 6.0).abs() < 1e-6);
        assert_eq!(offset.n_probes, 3);
        assert!(offset_from_edge(&probes[..2]).is_none(), "no edge yet");
    }

    #[test]
    fn the_date_header_is_read_as_uvicorn_writes_it_and_its_absence_is_seen() {
        // The header of a recorded uvicorn answer (llama-cpp-python 0.3.36,
        // shared/fixtures/real-transcripts/.../chat-stream-usage.headers); the second from
        // GNU date: `date -u -d 'Sun, 29 Nov 2026 17:27:49 GMT' +%s`.
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::DATE,
            http::HeaderValue::from_static("Sun, 29 Nov 2026 17:27:49 GMT"),
        );
        assert_eq!(date_seconds(&headers), Some(1_795_973_269));
        // llama-server b11434's answers carry no Date header (the recordings' headers).
        assert_eq!(date_seconds(&http::HeaderMap::new()), None);
    }
}
