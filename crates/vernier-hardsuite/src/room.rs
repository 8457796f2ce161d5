//! The KV cache the requests in flight share. llama-server's slots read and write one cache
//! by default: two long prompts that each fit its context alone fail together, mid-stream,
//! after their prefill ("Context size has been exceeded."). Where the server says how large
//! that cache is, tries are let in only while their prompts and answer budgets fit it
//! together; where a server fails a try for shared capacity anyway, the attempt's next try runs
//! with nothing else in flight.

use tokio::sync::{Semaphore, SemaphorePermit};
use vernier_tasks::Task;

/// Permits when the capacity is unknown: every try takes one, and a try that must run alone
/// takes them all (far more than any concurrency).
const UNKNOWN_TOTAL: u32 = 1 << 24;

/// Characters per token assumed for a prompt that is not sized in the server's tokens: fewer
/// than any tokenizer's average over English prose or code, so the estimate errs high.
const CHARS_PER_TOKEN: usize = 3;

/// The room of one run.
#[derive(Debug)]
pub(crate) struct Room {
    permits: Semaphore,
    total: u32,
    /// The shared capacity in tokens, when the server says it.
    capacity: Option<u32>,
}

/// A try's hold on the room, given back when dropped.
#[derive(Debug)]
pub(crate) struct Held<'a> {
    _permit: Option<SemaphorePermit<'a>>,
    room: &'a Room,
}

impl Held<'_> {
    /// What is in flight when asked (this try included), in words.
    pub(crate) fn in_flight(&self) -> String {
        let free = self.room.permits.available_permits();
        if let Some(capacity) = self.room.capacity {
            let held = (capacity as usize).saturating_sub(free);
            format!("{held} of the {capacity} shared tokens held")
        } else {
            let taken = (self.room.total as usize).saturating_sub(free);
            format!("{taken} requests in flight")
        }
    }
}

impl Room {
    /// A room of `capacity` shared tokens, or of unknown size.
    pub(crate) fn new(capacity: Option<u64>) -> Self {
        let capacity = capacity.map(|tokens| {
            u32::try_from(tokens)
                .unwrap_or(UNKNOWN_TOTAL)
                .min(UNKNOWN_TOTAL)
        });
        let total = capacity.unwrap_or(UNKNOWN_TOTAL);
        Self {
            permits: Semaphore::new(total as usize),
            total,
            capacity,
        }
    }

    /// Waits until a try of `weight` tokens fits beside those in flight, or, `alone`, until
    /// nothing else is in flight. Tries are let in in the order they asked.
    pub(crate) async fn take(&self, weight: u64, alone: bool) -> Held<'_> {
        let wanted = if alone {
            self.total
        } else if self.capacity.is_some() {
            // A try larger than the whole cache still runs, alone (the server then says
            // whether it fits).
            u32::try_from(weight)
                .unwrap_or(u32::MAX)
                .clamp(1, self.total)
        } else {
            1
        };
        Held {
            // The semaphore is never closed, so the acquire cannot fail; a failure would only
            // mean running without the plan.
            _permit: self.permits.acquire_many(wanted).await.ok(),
            room: self,
        }
    }
}

/// What one try of `task` may hold of the cache at most: its prompt (a long-context task's
/// target length, else its text at [`CHARS_PER_TOKEN`]) plus its answer budget.
pub(crate) fn weight(task: &Task, budget_tokens: u32) -> u64 {
    let prompt = task.spec::<vernier_tasks::ContextSpec>().map_or_else(
        || {
            let chars: usize = task.messages.iter().map(|m| m.content.len()).sum();
            (chars / CHARS_PER_TOKEN) as u64
        },
        |spec| u64::from(spec.target_tokens),
    );
    prompt + u64::from(budget_tokens)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn tries_that_together_outgrow_the_cache_take_turns() {
        let room = Room::new(Some(8192));
        let first = room.take(5000, false).await;
        // A second 5,000-token try waits for the first; a 3,000-token one fits beside it.
        assert!(
            tokio::time::timeout(Duration::from_millis(50), room.take(5000, false))
                .await
                .is_err()
        );
        let beside = tokio::time::timeout(Duration::from_millis(50), room.take(3000, false))
            .await
            .expect("fits beside");
        assert_eq!(first.in_flight(), "8000 of the 8192 shared tokens held");
        drop((first, beside));
        // A try larger than the cache runs alone rather than never.
        let huge = tokio::time::timeout(Duration::from_millis(50), room.take(20_000, false))
            .await
            .expect("runs alone");
        drop(huge);
    }

    #[tokio::test]
    async fn a_try_alone_waits_for_every_other_and_keeps_them_out() {
        let room = Room::new(None);
        let (a, b) = (room.take(100, false).await, room.take(100, false).await);
        assert_eq!(a.in_flight(), "2 requests in flight");
        let alone = room.take(100, true);
        tokio::pin!(alone);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut alone)
                .await
                .is_err()
        );
        drop((a, b));
        let alone = tokio::time::timeout(Duration::from_millis(50), alone)
            .await
            .expect("nothing else in flight");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), room.take(1, false))
                .await
                .is_err(),
            "nothing runs beside a try alone"
        );
        drop(alone);
    }
}
