//! Integration tests of the sweep against the in-process simulator over loopback.

mod arguments;
mod calibration;
mod capture;
mod context;
mod hosted;
mod llama;
mod load;
mod resume;
mod safety;
mod support;
mod truth;
mod until_ci;
mod watchdog;
