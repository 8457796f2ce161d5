//! Integration tests: the watchdog suite, `ready` and its resume policy against `vernier-sim`
//! over loopback, and
//! `ready --launch` on a real `llama-server` (found through `scripts/llama-server.sh`; a
//! missing build fails loudly unless `VERNIER_SKIP_LLAMA_TESTS=1`).

mod llama;
mod ready;
mod resume;
mod soak;
mod support;
mod vllm;
mod watch_suite;
