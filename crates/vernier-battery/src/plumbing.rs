//! What every part of a battery runs with: the server it measures, the observer, the one
//! interrupt all parts share, and the command that continues the battery.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use vernier_hardsuite::{RunObserver, SilentObserver};
use vernier_sweep::SweepObserver;

use vernier_run::Interrupt;

use crate::file::PartEntry;

/// The server a battery measures.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BatteryTarget {
    /// The server (`None`: each part runs the bundled simulator in-process).
    pub base_url: Option<String>,
    /// The variable holding the API key.
    pub api_key_env: Option<String>,
    /// A CA certificate to trust.
    pub ca_cert: Option<PathBuf>,
    /// A DCGM exporter to read the server's GPUs from (without it: NVML for a server here).
    pub gpu_metrics_url: Option<String>,
    /// Milliseconds between GPU samples (`None`: 500; 0 reads no GPU).
    pub gpu_sample_ms: Option<u64>,
    /// Only these GPUs (by index) serve the server; `None`: every GPU read.
    pub gpus: Option<Vec<u32>>,
}

impl BatteryTarget {
    /// The interval between GPU samples.
    pub(crate) fn gpu_sample_ms(&self) -> u64 {
        self.gpu_sample_ms.unwrap_or(500)
    }
}

impl BatteryTarget {
    /// The server at `base_url`, or the simulator when `None`.
    pub fn new(base_url: Option<String>) -> Self {
        Self {
            base_url,
            ..Self::default()
        }
    }
}

/// Receives a battery's progress; every method has a default that does nothing.
pub trait BatteryObserver: Send + Sync {
    /// The part named `part` starts (`index` from 0 of `total`).
    fn part_started(&self, part: &str, index: usize, total: usize) {
        let _ = (part, index, total);
    }
    /// A part ended, as recorded.
    fn part_finished(&self, entry: &PartEntry) {
        let _ = entry;
    }
    /// What the sweep part reports to.
    fn sweep(&self) -> Arc<dyn SweepObserver> {
        Arc::new(vernier_sweep::QuietObserver)
    }
    /// What the suite parts report to.
    fn suite(&self) -> &dyn RunObserver {
        &SilentObserver
    }
    /// Something the battery does that a person should know (a part run again).
    fn note(&self, line: &str) {
        let _ = line;
    }
}

impl BatteryObserver for QuietBattery {}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct QuietBattery;

/// One interrupt shared by every part: the first signal stops the part in flight and the
/// battery.
pub(crate) struct SharedInterrupt(tokio::sync::watch::Receiver<bool>);

impl SharedInterrupt {
    pub(crate) fn new(interrupt: Interrupt) -> Self {
        let (sender, receiver) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            interrupt.await;
            let _ = sender.send(true);
        });
        Self(receiver)
    }

    pub(crate) fn fired(&self) -> bool {
        *self.0.borrow()
    }

    pub(crate) fn future(&self) -> Interrupt {
        let mut receiver = self.0.clone();
        Box::pin(async move {
            if receiver.wait_for(|fired| *fired).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

/// What every part runs with besides its sizes.
pub(crate) struct Plumbing<'a> {
    pub(crate) target: &'a BatteryTarget,
    pub(crate) command_line: &'a [String],
    pub(crate) observer: &'a dyn BatteryObserver,
    pub(crate) interrupt: &'a SharedInterrupt,
}

impl Plumbing<'_> {
    /// The command that continues the battery whose part writes into `folder`: what the part
    /// says when it stops.
    pub(crate) fn resume_command(&self, folder: &Path) -> String {
        battery_resume_command(self.command_line, folder.parent().unwrap_or(folder))
    }
}

/// The command that continues the battery in `out`: the command line as typed, with
/// `--resume OUT`.
pub(crate) fn battery_resume_command(command_line: &[String], out: &Path) -> String {
    vernier_cli::resume_command(
        vernier_cli::program_name(command_line, "battery"),
        command_line,
        "--resume",
        &out.display().to_string(),
    )
}
