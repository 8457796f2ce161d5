//! One timer for a run of changing deadlines: a stream waits for its next event under a
//! deadline that moves on with every event, and re-arming a timer per event would cost a timer
//! insertion and removal each time.

use std::pin::Pin;

use tokio::time::{Instant, Sleep};

/// A timer armed once and moved only when it must: when the deadline asked for comes before
/// its own, or when it fires before the deadline asked for. Waiting for a later deadline than
/// last time costs no timer operation at all.
#[derive(Debug, Default)]
pub struct LazyTimer {
    timer: Option<Pin<Box<Sleep>>>,
}

impl LazyTimer {
    /// A timer not yet armed (it is armed at the first wait).
    pub fn new() -> Self {
        Self::default()
    }

    /// Completes at `due`.
    pub async fn until(&mut self, due: Instant) {
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        loop {
            if timer.deadline() > due {
                timer.as_mut().reset(due);
            }
            timer.as_mut().await;
            if Instant::now() >= due {
                return;
            }
            timer.as_mut().reset(due);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn never_completes_before_the_deadline_asked_for_later_or_earlier() {
        let mut timer = LazyTimer::new();
        let start = Instant::now();
        let first = start + Duration::from_millis(10);
        timer.until(first).await;
        assert!(Instant::now() >= first);
        // A later deadline: the fired timer is moved on, not left to complete at once.
        let later = start + Duration::from_millis(30);
        timer.until(later).await;
        assert!(Instant::now() >= later);
        // The timer armed for a far deadline (the wait cancelled), then a nearer one: it is
        // moved back, so the wait ends at the nearer deadline, long before the far one.
        let far = Instant::now() + Duration::from_secs(3_600);
        assert!(
            tokio::time::timeout(Duration::from_millis(5), timer.until(far))
                .await
                .is_err()
        );
        let near = Instant::now() + Duration::from_millis(10);
        timer.until(near).await;
        assert!(Instant::now() >= near && Instant::now() < far);
    }
}
