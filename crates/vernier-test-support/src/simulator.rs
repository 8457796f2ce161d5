//! The simulator in a process of its own, for a `--launch` command or a server a test freezes
//! and kills: the test binary itself, run again with [`SIM_VARIABLE`] set, serves
//! `vernier-sim-server` with the arguments the variable holds. Each test binary that needs it
//! has one `#[test]` that calls [`serve_simulator_when_asked`] (and does nothing otherwise).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// `vernier-sim-server`'s arguments for the process to serve.
pub const SIM_VARIABLE: &str = "VERNIER_TEST_SIM";
/// Milliseconds the process waits before it listens at all (a server's start).
pub const DELAY_VARIABLE: &str = "VERNIER_TEST_SIM_DELAY_MS";
/// Milliseconds it answers every request 503 "Loading model" first, as llama.cpp does while it
/// loads.
pub const LOADING_VARIABLE: &str = "VERNIER_TEST_SIM_LOADING_MS";

/// Serves `vernier-sim-server` with the arguments in [`SIM_VARIABLE`] when it is set (after
/// [`DELAY_VARIABLE`] and [`LOADING_VARIABLE`], when set), exiting 1 with its log lines when
/// the crash fault fires; returns at once otherwise.
pub fn serve_simulator_when_asked() {
    let Ok(spec) = std::env::var(SIM_VARIABLE) else {
        return;
    };
    let words = std::iter::once("vernier-sim-server").chain(spec.split_whitespace());
    let args = <vernier_sim_server::Args as clap::Parser>::parse_from(words);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async move {
        tokio::time::sleep(env_ms(DELAY_VARIABLE)).await;
        let loading = env_ms(LOADING_VARIABLE);
        if !loading.is_zero() {
            answer_loading(SocketAddr::new(args.host, args.port), loading).await;
        }
        // A crash (the simulator's crash fault) ends the process as the binary's does: its
        // log lines on stderr, exit status 1.
        if let Ok(Some(crash)) =
            vernier_sim_server::run(&args, |_| {}, std::future::pending()).await
        {
            #[expect(
                clippy::print_stderr,
                reason = "a crashed server's log lines are what the launcher keeps"
            )]
            for line in crash.log_lines() {
                eprintln!("{line}");
            }
            std::process::exit(1);
        }
    });
}

/// The shell command that serves the simulator with `sim_args` (words of
/// `vernier-sim-server`, which may hold shell expansions such as `$(cat FILE)`), after
/// `delay_ms` of nothing and `loading_ms` of 503s. `test_path` is the path in its binary of
/// the test that calls [`serve_simulator_when_asked`], e.g. `support::serve_simulator_when_asked` (made by [`simulator_entry_point`](crate::simulator_entry_point)).
pub fn launch_command(test_path: &str, sim_args: &str, delay_ms: u64, loading_ms: u64) -> String {
    let exe = std::env::current_exe().expect("the test binary's path");
    format!(
        "{SIM_VARIABLE}=\"{sim_args}\" {DELAY_VARIABLE}={delay_ms} {LOADING_VARIABLE}={loading_ms} \
         exec '{}' --exact {test_path} --nocapture",
        exe.display()
    )
}

fn env_ms(name: &str) -> Duration {
    Duration::from_millis(
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(0),
    )
}

/// Answers every connection to `addr` with 503 "Loading model" for `loading`.
async fn answer_loading(addr: SocketAddr, loading: Duration) {
    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    let until = tokio::time::Instant::now() + loading;
    while let Ok(Ok((mut stream, _))) = tokio::time::timeout_at(until, listener.accept()).await {
        tokio::spawn(async move {
            let mut buffer = [0_u8; 4096];
            let _ = stream.read(&mut buffer).await;
            let body =
                r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#;
            let response = format!(
                "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        });
    }
}

/// The test that serves the simulator when [`launch_command`] runs this test binary again
/// (`serve_simulator_when_asked` in the module the macro is called in); one per test binary.
#[macro_export]
macro_rules! simulator_entry_point {
    () => {
        /// Not a test of its own: serves the simulator when a launch command runs this binary.
        #[test]
        fn serve_simulator_when_asked() {
            $crate::serve_simulator_when_asked();
        }
    };
}
