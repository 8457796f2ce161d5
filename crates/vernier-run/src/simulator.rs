//! The in-process simulator, on its own runtime thread so its work does not queue on the
//! engine's scheduler (the ruler and the thing measured should not share a run queue).

use std::thread::JoinHandle;

use vernier_sim::{Sim, SimConfig};

use crate::error::RunError;

/// A simulator serving on a dedicated thread, with a runtime of its own, until dropped or
/// shut down.
#[derive(Debug)]
pub struct InProcessSimulator {
    base_url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl InProcessSimulator {
    /// Starts the simulator with `config` and waits until it answers.
    pub async fn start(config: SimConfig) -> Result<Self, RunError> {
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<Result<String, RunError>>();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("vernier-sim".to_owned())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = ready_tx.send(Err(RunError::SimulatorThread(error)));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match Sim::start(config).await {
                        Ok(handle) => {
                            let _ = ready_tx.send(Ok(handle.base_url()));
                            let _ = stopped.await;
                            handle.shutdown().await;
                        }
                        Err(error) => {
                            let _ = ready_tx.send(Err(RunError::Simulator(error)));
                        }
                    }
                });
            });
        let thread = thread.map_err(RunError::SimulatorThread)?;
        let base_url = match ready_rx.await {
            Ok(Ok(url)) => url,
            Ok(Err(error)) => return Err(error),
            Err(_) => {
                return Err(RunError::SimulatorThread(std::io::Error::other(
                    "the thread ended before the simulator was ready",
                )));
            }
        };
        Ok(Self {
            base_url,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Where the simulator answers.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Stops the simulator and waits for its thread.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

impl Drop for InProcessSimulator {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
