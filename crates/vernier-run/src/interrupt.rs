//! How a run is interrupted: a future that completes when the run should stop. What was
//! measured is still written, and the binary prints the resume command and exits 130.

use std::future::Future;
use std::pin::Pin;

/// A future that, when it completes, interrupts the run.
pub type Interrupt = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM (what `timeout`, `docker stop` and
/// systemd send).
pub fn signals() -> Interrupt {
    Box::pin(async {
        #[cfg(unix)]
        {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = async {
                    match term.as_mut() {
                        Some(term) => { term.recv().await; }
                        None => std::future::pending::<()>().await,
                    }
                } => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    })
}

/// Never completes: a run that is not interrupted.
pub fn never() -> Interrupt {
    Box::pin(std::future::pending())
}
