//! The crash fault's watcher: looks at the streams' depths every few milliseconds and, while
//! the condition holds, fires at the fault's rate.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vernier_stats::SplitMix64;

use crate::crash::CrashFault;
use crate::state::State;

/// How often the crash condition is looked at.
const TICK: Duration = Duration::from_millis(5);

/// Watches the depths until the fault fires; then records the report and wakes the listener.
pub(crate) async fn watch(state: Arc<State>, fault: CrashFault) {
    // Drawn afresh at every start (the clock mixed into the seed), as a real fault is: a
    // relaunched server does not die at the same instant as the last one.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    let mut rng = SplitMix64::new(state.config.seed ^ 0x00c0_ffee ^ u64::from(nanos) << 20);
    let mut last = Instant::now();
    loop {
        tokio::time::sleep(TICK).await;
        let now = Instant::now();
        let dt = now.duration_since(last).as_secs_f64();
        last = now;
        let deep = state.with_depths(|depths| {
            depths
                .values()
                .filter(|stream| stream.tokens >= fault.min_depth_tokens)
                .count()
        });
        if deep < fault.min_streams {
            continue;
        }
        let chance = 1.0 - (-fault.rate_per_s * dt).exp();
        // 53 random bits as a uniform draw in [0, 1).
        let draw = (rng.next_u64() >> 11) as f64 / (1_u64 << 53) as f64;
        if draw < chance {
            state.crash(fault);
            return;
        }
    }
}
