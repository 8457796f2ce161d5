//! Integration tests of the sweep: the engine's behaviour through `run_sweep` against the
//! simulator over loopback (and a real `llama-server`), and the reading side's reports from a
//! fixed journal.

mod agent;
mod calibration;
mod capture;
mod charts;
mod context;
mod hosted;
mod llama;
mod load;
mod report;
mod resume;
mod safety;
mod support;
mod truth;
mod until_ci;
mod vllm;
mod watchdog;
