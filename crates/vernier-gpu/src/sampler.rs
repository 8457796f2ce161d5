//! Choosing a source and sampling it on a thread of its own.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::GpuError;
use crate::identity::{GpuDevice, GpuRecord};
use crate::sample::{DeviceSample, GpuSample};
use crate::source::GpuSource;

/// A source shared by the run and its samplers (one sampler at a time reads it).
pub type SharedSource = Arc<Mutex<Box<dyn GpuSource>>>;

/// What the user asked for and where the server is.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GpuChoice {
    /// `--gpu-metrics-url`: read a DCGM exporter (or the server's Prometheus text) there.
    pub metrics_url: Option<String>,
    /// Why NVML is not tried (the server is elsewhere, the simulator uses no GPU, sampling
    /// was turned off); `None` tries NVML when no URL is given.
    pub skip_nvml: Option<String>,
    /// The interval between samples.
    pub interval: Duration,
    /// `--gpus`: only these GPUs (by the source's index) are the server's; `None`: all.
    pub only: Option<Vec<u32>>,
}

impl GpuChoice {
    /// Read `metrics_url` when given, else NVML unless `skip_nvml` says why not, every
    /// `interval`.
    pub fn new(metrics_url: Option<String>, skip_nvml: Option<String>, interval: Duration) -> Self {
        Self {
            metrics_url,
            skip_nvml,
            interval,
            only: None,
        }
    }
}

impl GpuChoice {
    /// Reads only the GPUs `only` names (the server's, on a machine shared with others);
    /// `None` reads them all.
    #[must_use]
    pub fn only(mut self, only: Option<Vec<u32>>) -> Self {
        self.only = only;
        self
    }

    /// The source a run against `base_url` reads: `metrics_url` when given, else NVML for a
    /// server on this machine; nothing (with the reason) for the bundled simulator, a server
    /// elsewhere, or a zero `interval` (reading turned off).
    pub fn for_server(
        base_url: &str,
        simulator: bool,
        metrics_url: Option<String>,
        interval: Duration,
    ) -> Self {
        let skip = if interval.is_zero() {
            Some("GPU reading turned off (--gpu-sample-ms 0)".to_owned())
        } else if simulator && metrics_url.is_none() {
            Some("the bundled simulator uses no GPU".to_owned())
        } else if !server_is_local(base_url) {
            Some(format!(
                "the server at {base_url} is not on this machine; give --gpu-metrics-url http://HOST:9400/metrics (a DCGM exporter beside it) to read its GPUs"
            ))
        } else {
            None
        };
        let url = if interval.is_zero() {
            None
        } else {
            metrics_url
        };
        Self::new(url, skip, interval)
    }
}

/// Whether `base_url` names this machine (loopback, `localhost` or this host's name), where
/// NVML sees the server's GPUs.
pub fn server_is_local(base_url: &str) -> bool {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if host.starts_with('[') {
        host.split(']')
            .next()
            .unwrap_or_default()
            .trim_start_matches('[')
    } else {
        host.split(':').next().unwrap_or_default()
    };
    if host.eq_ignore_ascii_case("localhost") || host == "0.0.0.0" {
        return true;
    }
    if let Ok(address) = host.parse::<std::net::IpAddr>() {
        return address.is_loopback() || address.is_unspecified();
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .is_ok_and(|name| name.trim().eq_ignore_ascii_case(host))
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(feature = "nvml")]
fn nvml_source() -> Result<Box<dyn GpuSource>, GpuError> {
    Ok(Box::new(crate::nvml::NvmlSource::open()?))
}

#[cfg(not(feature = "nvml"))]
fn nvml_source() -> Result<Box<dyn GpuSource>, GpuError> {
    Err(GpuError::Nvml(
        "this build has no NVML reader (built without the `nvml` feature)".to_owned(),
    ))
}

/// Opens the source `choice` names and reads every GPU's identity once. Never an error: with
/// nothing read, the record says why and there is no source to sample.
pub fn open_source(choice: &GpuChoice) -> (Option<SharedSource>, GpuRecord) {
    let opened: Result<Box<dyn GpuSource>, GpuError> = match (&choice.metrics_url, &choice.skip_nvml) {
        (Some(url), _) => crate::DcgmSource::new(url).map(|source| Box::new(source) as Box<dyn GpuSource>),
        (None, Some(why)) => return (None, GpuRecord::none(why.clone())),
        (None, None) => nvml_source().map_err(|error| {
            GpuError::Nvml(format!(
                "{}; for a server on another machine give --gpu-metrics-url http://HOST:9400/metrics",
                error.to_string().trim_start_matches("NVML: ")
            ))
        }),
    };
    let mut source = match opened {
        Ok(source) => source,
        Err(error) => return (None, GpuRecord::none(error.to_string())),
    };
    let mut selected_by = None;
    if let Some(only) = &choice.only {
        let all = match source.identity() {
            Ok(devices) => devices.len(),
            Err(error) => return (None, GpuRecord::none(error.to_string())),
        };
        let names: Vec<String> = only.iter().map(ToString::to_string).collect();
        selected_by = Some(format!("--gpus {} (of {all} read)", names.join(",")));
        source = Box::new(Only {
            inner: source,
            only: only.clone(),
        });
    }
    match source.identity() {
        Ok(devices) if !devices.is_empty() => {
            let mut record = GpuRecord::read(source.name(), devices);
            record.selected_by = selected_by;
            record.sample_interval_ms =
                Some(u64::try_from(choice.interval.as_millis()).unwrap_or(u64::MAX));
            (Some(Arc::new(Mutex::new(source))), record)
        }
        Ok(_) => (
            None,
            GpuRecord::none(match selected_by {
                Some(selected) => format!("{} lists none of {selected}", source.name()),
                None => format!("{} lists no GPU", source.name()),
            }),
        ),
        Err(error) => (None, GpuRecord::none(error.to_string())),
    }
}

/// A source cut to the GPUs the server uses.
#[derive(Debug)]
struct Only {
    inner: Box<dyn GpuSource>,
    only: Vec<u32>,
}

impl GpuSource for Only {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn identity(&mut self) -> Result<Vec<GpuDevice>, GpuError> {
        let mut devices = self.inner.identity()?;
        devices.retain(|device| self.only.contains(&device.index));
        Ok(devices)
    }

    fn sample(&mut self) -> Result<Vec<DeviceSample>, GpuError> {
        let mut devices = self.inner.sample()?;
        devices.retain(|device| self.only.contains(&device.index));
        Ok(devices)
    }
}

fn take_sample(source: &SharedSource, samples: &Arc<Mutex<Vec<GpuSample>>>) {
    let devices = source
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .sample();
    // A failed reading is left out; the window's figures say how many samples they rest on.
    if let Ok(devices) = devices {
        samples
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(GpuSample::new(unix_ms(), devices));
    }
}

/// Samples a source every interval on its own thread until [`GpuSampler::finish`]: a reading
/// at the start, one per interval, and one at the finish, so the window spans the work.
#[derive(Debug)]
pub struct GpuSampler {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<()>>,
    source: SharedSource,
    samples: Arc<Mutex<Vec<GpuSample>>>,
}

impl GpuSampler {
    /// Starts sampling `source` every `interval` (at least 10 ms); every reading, the first
    /// included, is taken on the sampler's thread, so starting never blocks.
    pub fn start(source: SharedSource, interval: Duration) -> Self {
        let interval = interval.max(Duration::from_millis(10));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = {
            let (source, samples) = (Arc::clone(&source), Arc::clone(&samples));
            std::thread::Builder::new()
                .name("vernier-gpu-sampler".to_owned())
                .spawn(move || {
                    take_sample(&source, &samples);
                    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                        take_sample(&source, &samples);
                    }
                })
                .ok()
        };
        Self {
            stop,
            thread,
            source,
            samples,
        }
    }

    /// Stops sampling (a blocking join of at most one reading), takes the last reading and
    /// returns them all in order.
    pub fn finish(mut self) -> Vec<GpuSample> {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        take_sample(&self.source, &self.samples);
        std::mem::take(&mut *self.samples.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU whose energy counter rises 1 J per reading.
    #[derive(Debug, Default)]
    struct Counting {
        readings: u64,
    }

    impl GpuSource for Counting {
        fn name(&self) -> String {
            "counting".to_owned()
        }
        fn identity(&mut self) -> Result<Vec<GpuDevice>, GpuError> {
            Ok(vec![GpuDevice::new(0, "counting GPU")])
        }
        fn sample(&mut self) -> Result<Vec<DeviceSample>, GpuError> {
            self.readings += 1;
            let mut sample = DeviceSample::new(0);
            sample.energy_mj = Some(self.readings as f64 * 1000.0);
            Ok(vec![sample])
        }
    }

    #[test]
    fn a_sampler_reads_at_start_each_interval_and_finish() {
        let source: SharedSource = Arc::new(Mutex::new(Box::new(Counting::default())));
        let sampler = GpuSampler::start(Arc::clone(&source), Duration::from_millis(10));
        std::thread::sleep(Duration::from_millis(60));
        let taken = sampler.finish();
        // At least the first and the last; the thread's readings in between.
        assert!(taken.len() >= 3, "{} samples", taken.len());
        let counters: Vec<f64> = taken
            .iter()
            .filter_map(|sample| sample.devices[0].energy_mj)
            .collect();
        assert!(
            counters
                .windows(2)
                .all(|pair| (pair[1] - pair[0] - 1000.0).abs() < 1e-9)
        );
        assert!(
            taken
                .windows(2)
                .all(|pair| pair[1].unix_ms >= pair[0].unix_ms)
        );
    }

    #[test]
    fn nvml_is_tried_only_for_a_server_on_this_machine() {
        for local in [
            "http://127.0.0.1:8000/v1",
            "http://localhost:8080",
            "http://[::1]:9000",
            "http://user@127.0.0.2:1",
        ] {
            assert!(server_is_local(local), "{local}");
        }
        for remote in [
            "http://10.1.2.3:8000",
            "https://api.example.invalid/v1",
            "http://[2001:db8::1]:80",
        ] {
            assert!(!server_is_local(remote), "{remote}");
        }
        let second = Duration::from_secs(1);
        let remote = GpuChoice::for_server("http://10.1.2.3:8000", false, None, second);
        assert!(
            remote
                .skip_nvml
                .as_deref()
                .is_some_and(|why| why.contains("--gpu-metrics-url"))
        );
        let simulated = GpuChoice::for_server("http://127.0.0.1:1", true, None, second);
        assert_eq!(
            simulated.skip_nvml.as_deref(),
            Some("the bundled simulator uses no GPU")
        );
        let off = GpuChoice::for_server(
            "http://127.0.0.1:1",
            false,
            Some("http://x:9400".to_owned()),
            Duration::ZERO,
        );
        assert_eq!(off.metrics_url, None);
        let exporter = GpuChoice::for_server(
            "http://10.1.2.3:8000",
            false,
            Some("http://x:9400/metrics".to_owned()),
            second,
        );
        assert_eq!(
            exporter.metrics_url.as_deref(),
            Some("http://x:9400/metrics")
        );
    }

    #[test]
    fn nothing_read_is_one_reason_never_an_error() {
        let skipped = open_source(&GpuChoice::new(
            None,
            Some("the simulator uses no GPU".to_owned()),
            Duration::from_millis(500),
        ));
        assert!(skipped.0.is_none());
        assert_eq!(
            skipped.1.not_read.as_deref(),
            Some("the simulator uses no GPU")
        );
        let refused = open_source(&GpuChoice::new(
            Some("https://x/metrics".to_owned()),
            None,
            Duration::from_millis(500),
        ));
        assert!(refused.0.is_none());
        assert!(
            refused.1.summary_line().contains("only plain http://"),
            "{}",
            refused.1.summary_line()
        );
    }
}
