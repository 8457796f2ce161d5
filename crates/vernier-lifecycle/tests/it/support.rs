//! A simulator as a separate process for `--launch`: this very test binary, run again by
//! [`sim_launch_command`], serves `vernier-sim-server` after an optional delay and a
//! llama.cpp-like loading phase (503 "Loading model" on every path).

pub(crate) use vernier_test_support::free_port;

/// The shell command that serves the simulator on `port` (the model `VERNIER_LIFECYCLE_SIM_MODEL`
/// names when the command runs, else the simulator's own): nothing for `delay_ms`, then 503s for
/// `loading_ms`, then the simulator.
pub(crate) fn sim_launch_command(port: u16, delay_ms: u64, loading_ms: u64) -> String {
    vernier_test_support::launch_command(
        "support::serve_simulator_when_asked",
        &format!(
            "--port {port} --fixed-overhead-ms 2 --decode-step-ms 2 \
             ${{VERNIER_LIFECYCLE_SIM_MODEL:+--model $VERNIER_LIFECYCLE_SIM_MODEL}}"
        ),
        delay_ms,
        loading_ms,
    )
}

vernier_test_support::simulator_entry_point!();
