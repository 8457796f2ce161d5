//! The receive side: which clock stamped the events, the client's lag, reads that completed
//! several events, and whether the first token's instant is exact or only an upper bound.
//! Each stream is built by hand; the expected figures are read off its reads.

use vernier_meter::{EventClock, Final, Meter, Observation};

use crate::{assert_close, clock};

/// One event per read, each read 1 ms after the kernel stamped it: `kernel_rx`, lag 1 ms, no
/// coalesced read, and the first token alone in its read (its instant is exact).
#[test]
fn one_event_per_read_gives_exact_instants() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 8);
    meter.observe(
        &Observation::new(at(5))
            .with_kernel_rx(at(6))
            .with_read_seq(1),
    );
    for (seq, ms) in [(2, 50), (3, 60), (4, 70)] {
        meter.observe(
            &Observation::new(at(ms))
                .with_content_bytes(4)
                .with_kernel_rx(at(ms + 1))
                .with_read_seq(seq),
        );
    }
    let measurement = meter.finish(&Final::new(at(80)).with_usage_completion_tokens(3));
    assert_eq!(measurement.clock, EventClock::KernelRx);
    assert_eq!(measurement.n_coalesced_reads, Some(0));
    assert_eq!(measurement.first_token_read_shared, Some(false));
    let lag = measurement.client_lag_ms.expect("lags with kernel stamps");
    assert_close(lag.median_ms, 1.0, 1e-9);
}

/// The first token's read also completed the second token event (a client reading late):
/// one coalesced read, and the first token's instant is only an upper bound.
#[test]
fn a_first_token_sharing_its_read_is_an_upper_bound() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 8);
    for (seq, ms) in [(1, 60), (1, 60), (2, 70), (3, 80)] {
        meter.observe(
            &Observation::new(at(ms))
                .with_content_bytes(4)
                .with_kernel_rx(at(ms + 3))
                .with_read_seq(seq),
        );
    }
    let measurement = meter.finish(&Final::new(at(90)).with_usage_completion_tokens(4));
    assert_eq!(measurement.n_coalesced_reads, Some(1));
    assert_eq!(measurement.first_token_read_shared, Some(true));
}

/// A one-token answer whose finish chunk came in the same read: the read held a later event,
/// so the first token's instant is an upper bound, though no read held two token events.
#[test]
fn a_later_non_token_event_in_the_read_counts_too() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 8);
    meter.observe(
        &Observation::new(at(5))
            .with_kernel_rx(at(5))
            .with_read_seq(1),
    );
    meter.observe(
        &Observation::new(at(40))
            .with_content_bytes(2)
            .with_kernel_rx(at(42))
            .with_read_seq(2),
    );
    meter.observe(
        &Observation::new(at(40))
            .with_kernel_rx(at(42))
            .with_read_seq(2),
    );
    let measurement = meter.finish(&Final::new(at(41)).with_usage_completion_tokens(1));
    assert_eq!(measurement.n_coalesced_reads, Some(0));
    assert_eq!(measurement.first_token_read_shared, Some(true));
}

/// Unnumbered reads (user-space instants): nothing is claimed either way.
#[test]
fn unnumbered_reads_claim_nothing() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 8);
    for ms in [50, 60] {
        meter.observe(&Observation::new(at(ms)).with_content_bytes(4));
    }
    let measurement = meter.finish(&Final::new(at(70)).with_usage_completion_tokens(2));
    assert_eq!(measurement.clock, EventClock::Userspace);
    assert_eq!(measurement.n_coalesced_reads, None);
    assert_eq!(measurement.first_token_read_shared, None);
    let json = serde_json::to_value(&measurement).expect("serialises");
    assert!(json.get("first_token_read_shared").is_none(), "{json}");
}
