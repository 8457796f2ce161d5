//! The watchdog's decision: what the generation counter said after a failed probe
//! ([`CounterEvidence`]), the [`Verdict`], and the rule that turns one into the other
//! ([`HangRule`], [`CounterRule`]).

use serde::{Deserialize, Serialize};

use crate::probe::ProbeOutcome;

/// What the counter said after a failed probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CounterEvidence {
    /// The rule did not ask for it.
    NotRead,
    /// The server exposes no known counter.
    Absent,
    /// `/metrics` did not answer or lacked the counter.
    Unreadable {
        /// Why.
        error: String,
    },
    /// The counter grew between the two reads: the engine is generating.
    Moving {
        /// First read.
        before: f64,
        /// Second read, `settle_s` later.
        after: f64,
    },
    /// The counter stood still.
    Still {
        /// Both reads.
        value: f64,
    },
}

/// What a rule made of a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// The probe succeeded.
    Healthy,
    /// The probe failed but the engine is generating: every slot is taken.
    Busy,
    /// A failed probe, not yet enough to act.
    Failing,
    /// Enough failed probes with no generation: act (`--on-hung`).
    Hung,
    /// The server is unreachable.
    Down,
}

/// The decision rule: given a probe (and, when it asks for it, the counter), a verdict.
pub trait HangRule: Send + Sync + std::fmt::Debug {
    /// Short name for the journal.
    fn name(&self) -> &'static str;
    /// Whether a failed probe should be followed by two counter reads.
    fn reads_counter(&self) -> bool {
        true
    }
    /// The verdict on one probe.
    fn judge(&mut self, probe: &ProbeOutcome, counter: &CounterEvidence) -> Verdict;
}

/// The watchdog's rule: a failed probe with a moving counter is busy, not a failure;
/// `failures` failed probes in a row with a still (or unreadable) counter are a hang. A hang
/// (or a server down) stays so until a probe succeeds or the counter moves: the verdict does
/// not flap back to "failing" while nothing has changed.
#[derive(Debug, Clone)]
pub struct CounterRule {
    failures: u32,
    failed_in_a_row: u32,
    unreachable_in_a_row: u32,
}

impl CounterRule {
    /// The rule acting after `failures` failed probes with a still counter.
    pub fn new(failures: u32) -> Self {
        Self {
            failures: failures.max(1),
            failed_in_a_row: 0,
            unreachable_in_a_row: 0,
        }
    }
}

impl HangRule for CounterRule {
    fn name(&self) -> &'static str {
        "generation counter read twice"
    }

    fn judge(&mut self, probe: &ProbeOutcome, counter: &CounterEvidence) -> Verdict {
        match probe {
            ProbeOutcome::Ok { .. } => {
                self.failed_in_a_row = 0;
                self.unreachable_in_a_row = 0;
                Verdict::Healthy
            }
            ProbeOutcome::Unreachable { .. } => {
                self.failed_in_a_row = 0;
                self.unreachable_in_a_row = self.unreachable_in_a_row.saturating_add(1);
                if self.unreachable_in_a_row >= self.failures {
                    Verdict::Down
                } else {
                    Verdict::Failing
                }
            }
            // A refusal of the request itself (a key, a model) says nothing of a hang.
            ProbeOutcome::Http { status } if crate::probe::is_configuration_status(*status) => {
                self.failed_in_a_row = 0;
                self.unreachable_in_a_row = 0;
                Verdict::Failing
            }
            _ => {
                self.unreachable_in_a_row = 0;
                if matches!(counter, CounterEvidence::Moving { .. }) {
                    self.failed_in_a_row = 0;
                    return Verdict::Busy;
                }
                self.failed_in_a_row = self.failed_in_a_row.saturating_add(1);
                if self.failed_in_a_row >= self.failures {
                    Verdict::Hung
                } else {
                    Verdict::Failing
                }
            }
        }
    }
}

pub(crate) fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Healthy => "healthy",
        Verdict::Busy => "busy",
        Verdict::Failing => "failing",
        Verdict::Hung => "hung",
        Verdict::Down => "down",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moving_counter_is_busy_and_resets_the_count() {
        let mut rule = CounterRule::new(2);
        let moving = CounterEvidence::Moving {
            before: 1.0,
            after: 5.0,
        };
        let still = CounterEvidence::Still { value: 5.0 };
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Failing);
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &moving), Verdict::Busy);
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Failing);
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Hung);
        // A hang stays a hang while nothing changes (it flapped back to failing before).
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Hung);
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Hung);
        assert_eq!(
            rule.judge(
                &ProbeOutcome::Ok { latency_ms: 1.0 },
                &CounterEvidence::NotRead
            ),
            Verdict::Healthy
        );
    }

    #[test]
    fn without_a_counter_failed_probes_alone_decide() {
        let mut rule = CounterRule::new(3);
        let absent = CounterEvidence::Absent;
        let http = ProbeOutcome::Http { status: 503 };
        assert_eq!(rule.judge(&http, &absent), Verdict::Failing);
        assert_eq!(rule.judge(&http, &absent), Verdict::Failing);
        assert_eq!(rule.judge(&http, &absent), Verdict::Hung);
    }

    #[test]
    fn a_refused_key_or_model_is_never_a_hang() {
        // Before, 401 (a key needed) and 404 (a mistyped model) were judged hung and
        // --on-hung restarted a healthy server.
        let mut rule = CounterRule::new(2);
        let still = CounterEvidence::Still { value: 5.0 };
        for status in [401, 403, 404, 400] {
            for _ in 0..4 {
                assert_eq!(
                    rule.judge(&ProbeOutcome::Http { status }, &still),
                    Verdict::Failing,
                    "{status}"
                );
            }
        }
        // A server error still counts toward a hang.
        let error = ProbeOutcome::Http { status: 503 };
        assert_eq!(rule.judge(&error, &still), Verdict::Failing);
        assert_eq!(rule.judge(&error, &still), Verdict::Hung);
    }

    #[test]
    fn unreachable_is_down_not_hung() {
        let mut rule = CounterRule::new(2);
        let gone = ProbeOutcome::Unreachable {
            error: "refused".to_owned(),
        };
        assert_eq!(
            rule.judge(&gone, &CounterEvidence::NotRead),
            Verdict::Failing
        );
        assert_eq!(rule.judge(&gone, &CounterEvidence::NotRead), Verdict::Down);
        assert_eq!(rule.judge(&gone, &CounterEvidence::NotRead), Verdict::Down);
    }
}
