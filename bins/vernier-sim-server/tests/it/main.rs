//! The binary's exit codes, from outside: a usage error, a runtime failure and success.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_vernier-sim-server");

#[test]
fn a_refused_value_exits_with_the_usage_code() {
    let output = Command::new(BIN)
        .args(["--port", "0", "--decode-step-ms=-1"])
        .output()
        .expect("run the simulator server");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("decode_step"), "{stderr}");
}

#[test]
fn a_port_in_use_exits_with_the_failure_code() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let port = taken.local_addr().expect("its address").port().to_string();
    let output = Command::new(BIN)
        .args(["--port", &port])
        .output()
        .expect("run the simulator server");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bind the simulator"), "{stderr}");
}

#[test]
fn it_prints_its_url_serves_and_exits_cleanly_on_ctrl_c() {
    let mut child = Command::new(BIN)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the simulator server");
    let stdout = child.stdout.take().expect("its stdout");
    let mut url = String::new();
    BufReader::new(stdout)
        .read_line(&mut url)
        .expect("read the base URL");
    let url = url.trim();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    let address = url.trim_start_matches("http://").trim_end_matches("/v1");
    let stream = std::net::TcpStream::connect(address);
    assert!(stream.is_ok(), "the server accepts at {address}");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("send SIGINT");
    assert!(status.success());
    let exited = child.wait().expect("the server exits");
    assert_eq!(exited.code(), Some(0));
}
