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

/// Runs `work` to its end on a new multi-threaded runtime: what a binary's command does from
/// its synchronous `main`.
pub fn block_on<T>(work: impl std::future::Future<Output = T>) -> Result<T, crate::RunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(crate::RunError::Runtime)?;
    Ok(runtime.block_on(work))
}
