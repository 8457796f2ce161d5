//! The listener, the connection tasks and the handle that stops them.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::config::SimConfig;
use crate::crash::CrashReport;
use crate::error::SimError;
use crate::ground_truth::GroundTruth;
use crate::metrics::SimMetrics;
use crate::state::State;

/// The simulator. Start one with [`Sim::start`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Sim;

impl Sim {
    /// Checks the configuration, binds, and serves on a spawned task (needs a Tokio runtime).
    pub async fn start(config: SimConfig) -> Result<SimHandle, SimError> {
        let state = Arc::new(State::new(config)?);
        let bind = state.config.bind;
        let listener = TcpListener::bind(bind)
            .await
            .map_err(|source| SimError::Bind { addr: bind, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| SimError::Bind { addr: bind, source })?;
        let (stop_sender, stop_receiver) = oneshot::channel();
        let crash_watch = state
            .config
            .faults
            .crash
            .map(|fault| tokio::spawn(crate::crash_watch::watch(Arc::clone(&state), fault)));
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&state), stop_receiver));
        Ok(SimHandle {
            addr,
            state,
            stop: Some(stop_sender),
            task: Some(task),
            crash_watch,
        })
    }
}

/// A running simulator. Dropping it stops the server like [`SimHandle::shutdown`], without
/// waiting.
#[derive(Debug)]
pub struct SimHandle {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    crash_watch: Option<JoinHandle<()>>,
}

impl SimHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: the server root, without `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request recorded so far, in completion order.
    pub fn ground_truth(&self) -> Vec<GroundTruth> {
        self.state.ground_truth.snapshot()
    }

    /// The counters now.
    pub fn metrics(&self) -> SimMetrics {
        self.state.counters.snapshot()
    }

    /// Hangs the engine (`true`): no request makes progress (no token is sent and the
    /// generation counter stands still) while `/health`, `/metrics` and `/v1/models` keep
    /// answering, like an engine whose scheduler is stuck. `false` lets every waiting request
    /// carry on where it stopped.
    pub fn set_hung(&self, hung: bool) {
        self.state.set_hung(hung);
    }

    /// Whether the engine is hung (see [`SimHandle::set_hung`]).
    pub fn is_hung(&self) -> bool {
        self.state.is_hung()
    }

    /// Waits until the crash fault ([`SimConfig::faults`](crate::SimConfig::faults)`.crash`)
    /// fires: by then the server has stopped listening and dropped every connection. Never
    /// returns without a crash fault.
    pub async fn crashed(&self) -> CrashReport {
        let mut signal = self.state.crash_receiver();
        loop {
            if let Some(report) = self.state.crash_report() {
                return report;
            }
            if signal.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// The crash, if the crash fault fired.
    pub fn crash_report(&self) -> Option<CrashReport> {
        self.state.crash_report()
    }

    /// Stops accepting and drops every open connection mid-stream, like a killed server;
    /// returns once the port is released.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        if let Some(watch) = self.crash_watch.take() {
            watch.abort();
        }
        if let Some(task) = self.task.take() {
            // Aborting the accept task drops its listener and its set of connection tasks,
            // which aborts them all.
            task.abort();
        }
    }
}

async fn accept_loop(listener: TcpListener, state: Arc<State>, mut stop: oneshot::Receiver<()>) {
    let mut connections = JoinSet::new();
    let mut crash = state.crash_receiver();
    loop {
        tokio::select! {
            _ = &mut stop => break,
            // A crash: the port closes and every connection is cut, as when the process dies.
            Ok(()) = crash.changed() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let Ok((stream, _peer)) = accepted else { continue };
                // Each event must leave at once: no Nagle delay.
                let _ = stream.set_nodelay(true);
                let state = Arc::clone(&state);
                connections.spawn(async move {
                    let service = service_fn(move |request| {
                        let state = Arc::clone(&state);
                        async move { Ok::<_, Infallible>(crate::routes::handle(state, request).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
    drop(listener);
    connections.shutdown().await;
}
