//! A real `llama-server` for the test crates that run one: where to find the server and its
//! model, and a server started on a free loopback port and killed when dropped.
//!
//! The server and model come from `VERNIER_LLAMA_SERVER` and `VERNIER_LLAMA_MODEL`, or else
//! from `scripts/llama-server.sh --check` (the script builds and caches both). Missing, a test
//! fails loudly, unless `VERNIER_SKIP_LLAMA_TESTS=1` skips it on purpose.

use std::process::{Child, Command, Stdio};

use std::time::{Duration, Instant};

use crate::cached;

/// The server binary and model for `test`; `None` when the tests are skipped on purpose.
pub fn locate(test: &str) -> Option<(String, String)> {
    if std::env::var("VERNIER_SKIP_LLAMA_TESTS").as_deref() == Ok("1") {
        #[expect(
            clippy::print_stderr,
            reason = "a skipped test must say so in the test output"
        )]
        {
            eprintln!("skipping {test}: VERNIER_SKIP_LLAMA_TESTS=1");
        }
        return None;
    }
    if let (Ok(server), Ok(model)) = (
        std::env::var("VERNIER_LLAMA_SERVER"),
        std::env::var("VERNIER_LLAMA_MODEL"),
    ) {
        return Some((server, model));
    }
    let printed = cached::check_script("llama-server.sh");
    match cached::value_of(&printed, "VERNIER_LLAMA_SERVER")
        .zip(cached::value_of(&printed, "VERNIER_LLAMA_MODEL"))
    {
        Some(found) => Some(found),
        None => panic!(
            "{test} needs llama-server and its model: run `eval \"$(scripts/llama-server.sh)\"` \
             first (it builds and caches both), or set VERNIER_SKIP_LLAMA_TESTS=1 to skip on purpose"
        ),
    }
}

/// The server started for `test` with `args` (threads, context, slots, …) on a free loopback
/// port, healthy; `None` when the tests are skipped on purpose.
pub fn start_for(test: &str, args: &[&str]) -> Option<Server> {
    let (server, model) = locate(test)?;
    Some(Server::start(&server, &model, args))
}

/// The synthetic multimodal projector for the model (`VERNIER_LLAMA_MMPROJ`, or else from
/// `scripts/llama-server.sh --check`); `None` when the tests are skipped on purpose.
pub fn locate_mmproj(test: &str) -> Option<String> {
    locate(test)?;
    if let Ok(mmproj) = std::env::var("VERNIER_LLAMA_MMPROJ") {
        return Some(mmproj);
    }
    match cached::value_of(
        &cached::check_script("llama-server.sh"),
        "VERNIER_LLAMA_MMPROJ",
    ) {
        Some(found) => Some(found),
        None => panic!(
            "{test} needs the synthetic projector: run `eval \"$(scripts/llama-server.sh)\"` \
             first (it writes it beside the model), or set VERNIER_SKIP_LLAMA_TESTS=1 to skip on purpose"
        ),
    }
}

/// A started `llama-server`, killed when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    /// Its loopback port.
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `server` with `model` on a free loopback port, with `args` after the model, host
    /// and port, and waits (up to 120 s) until `/health` answers 200.
    pub fn start(server: &str, model: &str, args: &[&str]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(server)
            .args([
                "-m",
                model,
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start llama-server");
        let server = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(120);
        while !healthy(port) {
            assert!(
                Instant::now() < deadline,
                "llama-server did not become healthy in 120 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }
}

fn healthy(port: u16) -> bool {
    use std::io::{Read as _, Write as _};
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok_and(|mut stream| {
        let _ = stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.starts_with("HTTP/1.1 200")
    })
}
