//! Integration tests of vernier-tasks.

mod checking;
mod families;
mod math_gold;
mod self_check;
mod suite_file;
mod video;

/// The bundled suite, built once per test binary (building it generates every hidden case).
pub(crate) fn bundled_suite() -> &'static vernier_tasks::Suite {
    static SUITE: std::sync::OnceLock<vernier_tasks::Suite> = std::sync::OnceLock::new();
    SUITE.get_or_init(vernier_tasks::Suite::bundled)
}

/// Runs a future to completion on a fresh current-thread runtime.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(future)
}
