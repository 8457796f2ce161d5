//! The measured streams' own runtimes: one single-threaded tokio runtime per core, each on its
//! own thread, with the streams spread over them. A stream's connection driver and the task that
//! reads its events then live on one thread, so an event costs no wake-up across threads (on a
//! multi-threaded runtime each one took about four futex calls); only the start and the end of
//! a request cross between the run's runtime and a stream runtime.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// The most stream runtimes, whatever the core count.
const MAX_RUNTIMES: usize = 8;

/// Runtimes for measured streams.
#[derive(Debug)]
pub(crate) struct StreamRuntimes {
    handles: Vec<Handle>,
    next: AtomicUsize,
    stops: Vec<oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl StreamRuntimes {
    /// One runtime per core (at most eight); `None` when no thread or runtime can be started
    /// (the streams then run on the caller's runtime).
    pub(crate) fn per_core() -> Option<Self> {
        let n = std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .clamp(1, MAX_RUNTIMES);
        Self::new(n)
    }

    pub(crate) fn new(n: usize) -> Option<Self> {
        let mut pool = Self {
            handles: Vec::with_capacity(n),
            next: AtomicUsize::new(0),
            stops: Vec::with_capacity(n),
            threads: Vec::with_capacity(n),
        };
        for index in 0..n {
            let (handle_tx, handle_rx) = std::sync::mpsc::channel();
            let (stop_tx, stop_rx) = oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name(format!("vernier-streams-{index}"))
                .spawn(move || {
                    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                        .enable_io()
                        .enable_time()
                        .build()
                    else {
                        return;
                    };
                    if handle_tx.send(runtime.handle().clone()).is_err() {
                        return;
                    }
                    // Runs every stream spawned here until the pool is dropped.
                    runtime.block_on(async {
                        let _ = stop_rx.await;
                    });
                })
                .ok()?;
            let handle = handle_rx.recv().ok()?;
            pool.handles.push(handle);
            pool.stops.push(stop_tx);
            pool.threads.push(thread);
        }
        (!pool.handles.is_empty()).then_some(pool)
    }

    /// The pool's runtimes, for tasks that must run beside the streams (the scheduler probe).
    pub(crate) fn handles(&self) -> &[Handle] {
        &self.handles
    }

    /// Runtimes in the pool.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.handles.len()
    }

    /// Runs `future` on the next runtime in turn and waits for it there; `None` when the
    /// runtime went away before it finished.
    pub(crate) async fn run<F>(&self, future: F) -> Option<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len();
        self.handles[index].spawn(future).await.ok()
    }
}

impl Drop for StreamRuntimes {
    fn drop(&mut self) {
        for stop in self.stops.drain(..) {
            let _ = stop.send(());
        }
        // The last owner may be a task on one of these runtimes (a stream still running when an
        // interrupt ends the run): a thread cannot join itself, so that one is left to end by
        // itself once its runtime stops.
        let current = std::thread::current().id();
        for thread in self.threads.drain(..) {
            if thread.thread().id() != current {
                let _ = thread.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_run_on_the_pools_threads_in_turn() {
        let pool = StreamRuntimes::new(2).expect("two runtimes");
        assert_eq!(pool.len(), 2);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let names = runtime.block_on(async {
            let mut names = Vec::new();
            for _ in 0..4 {
                let name = pool
                    .run(async {
                        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                        std::thread::current().name().map(str::to_owned)
                    })
                    .await
                    .expect("finished");
                names.push(name.unwrap_or_default());
            }
            names
        });
        assert_eq!(
            names,
            [
                "vernier-streams-0",
                "vernier-streams-1",
                "vernier-streams-0",
                "vernier-streams-1"
            ]
        );
        drop(pool);
    }

    #[test]
    fn the_scheduler_probe_runs_on_every_stream_runtime() {
        // An interval's first tick is at once, and the sparse probe's next is a second later:
        // in a few milliseconds each probe ticks exactly once, so two runtimes give two ticks.
        let pool = StreamRuntimes::new(2).expect("two runtimes");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let probed = runtime.block_on(async {
            let probe = crate::probe::SchedulerProbe::start(crate::probe::SPARSE, pool.handles());
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            probe.finish().await
        });
        assert_eq!(probed.timer_overshoot.count(), 2, "{probed:?}");
        assert_eq!(probed.scheduler_delay.count(), 2, "{probed:?}");
    }

    #[test]
    fn the_last_owner_may_drop_the_runtimes_from_one_of_their_threads() {
        // What an interrupted run does: a stream task still holding the run is the last owner,
        // and it ends on a stream runtime. Joining its own thread used to panic there ("failed
        // to join thread: Resource deadlock avoided").
        let pool = std::sync::Arc::new(StreamRuntimes::new(2).expect("two runtimes"));
        let first = pool.handles()[0].clone();
        let last_owner = std::sync::Arc::clone(&pool);
        drop(pool);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let dropped = runtime.block_on(first.spawn(async move {
            drop(last_owner);
            std::thread::current().name().map(str::to_owned)
        }));
        assert_eq!(
            dropped.expect("the task did not panic").as_deref(),
            Some("vernier-streams-0")
        );
    }
}
