//! A simulator as a separate process for `--launch`: this very test binary, run again with
//! `VERNIER_LIFECYCLE_SIM_AT` set, serves `vernier-sim` there after an optional delay and a
//! llama.cpp-like loading phase (503 "Loading model" on every path).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vernier_sim::{Sim, SimConfig};

#[path = "../../../../tests/support/free_port.rs"]
mod ports;
pub(crate) use ports::free_port;

/// The shell command that serves the simulator on `port`: nothing for `delay_ms`, then 503s
/// for `loading_ms`, then the simulator.
pub(crate) fn sim_launch_command(port: u16, delay_ms: u64, loading_ms: u64) -> String {
    let exe = std::env::current_exe().expect("the test binary's path");
    format!(
        "VERNIER_LIFECYCLE_SIM_AT=127.0.0.1:{port} VERNIER_LIFECYCLE_SIM_DELAY_MS={delay_ms} \
         VERNIER_LIFECYCLE_SIM_LOADING_MS={loading_ms} exec '{}' --exact support::serve_sim_when_asked --nocapture",
        exe.display()
    )
}

fn env_ms(name: &str) -> Duration {
    Duration::from_millis(
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    )
}

/// Not a test of its own: does nothing unless `VERNIER_LIFECYCLE_SIM_AT` is set.
#[test]
fn serve_sim_when_asked() {
    let Ok(at) = std::env::var("VERNIER_LIFECYCLE_SIM_AT") else {
        return;
    };
    let addr: SocketAddr = at.parse().expect("VERNIER_LIFECYCLE_SIM_AT is host:port");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async move {
        tokio::time::sleep(env_ms("VERNIER_LIFECYCLE_SIM_DELAY_MS")).await;
        let loading = env_ms("VERNIER_LIFECYCLE_SIM_LOADING_MS");
        if !loading.is_zero() {
            let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
            let until = tokio::time::Instant::now() + loading;
            while let Ok(Ok((mut stream, _))) =
                tokio::time::timeout_at(until, listener.accept()).await
            {
                tokio::spawn(async move {
                    let mut buffer = [0_u8; 4096];
                    let _ = stream.read(&mut buffer).await;
                    let body = r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#;
                    let response = format!(
                        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                });
            }
        }
        let mut builder = SimConfig::builder();
        if let Ok(model) = std::env::var("VERNIER_LIFECYCLE_SIM_MODEL") {
            builder = builder.model(model.trim());
        }
        let config = builder
            .bind(addr)
            .fixed_overhead(Duration::from_millis(2))
            .decode_step(Duration::from_millis(2))
            .build();
        let _sim = Sim::start(config).await.expect("start the simulator");
        std::future::pending::<()>().await;
    });
}
