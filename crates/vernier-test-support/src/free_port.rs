//! A loopback port for a server a test starts in another process.
//!
//! The port is chosen below the kernel's ephemeral range (`ip_local_port_range`), where no
//! `bind` to port 0 and no outgoing connection can take it between this check and the server's
//! own `bind`: tests running at once bind port 0 all the time, and a port handed out from that
//! range was now and then taken by another test's listener first.

use std::net::TcpListener;

/// The lowest port the kernel hands out by itself (32768 where it cannot be read).
fn ephemeral_low() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A port that was free a moment ago, outside the ephemeral range when there is room below it.
pub fn free_port() -> u16 {
    const LOWEST: u16 = 10_000;
    let high = ephemeral_low();
    if high > LOWEST {
        let span = u64::from(high - LOWEST);
        // Tests run as processes of their own at once: start each search elsewhere.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::from(d.subsec_nanos()));
        let start = (u64::from(std::process::id()) * 7_919 + nanos) % span;
        for step in 0..span {
            let port = LOWEST + u16::try_from((start + step * 7_883) % span).unwrap_or(0);
            if TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local address").port()
}
