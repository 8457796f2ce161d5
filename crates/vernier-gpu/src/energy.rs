//! What a stretch of samples says: energy, power, memory, and energy per token.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::sample::{GpuSample, throttle_reason_names};

/// Where a window's energy comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EnergySource {
    /// The difference of the GPU's own energy counter between the window's first and last
    /// samples (NVML's `nvmlDeviceGetTotalEnergyConsumption`, DCGM's
    /// `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`).
    EnergyCounter,
    /// Power draw integrated over time by the trapezoid rule between samples.
    IntegratedPower,
    /// Some GPUs by their counter, others by integrated power.
    Mixed,
}

impl EnergySource {
    /// How a report names it.
    pub fn label(self) -> &'static str {
        match self {
            Self::EnergyCounter => "energy counter",
            Self::IntegratedPower => "integrated power",
            Self::Mixed => "energy counter and integrated power",
        }
    }
}

/// A window of samples summed over every GPU read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EnergyWindow {
    /// Samples in the window.
    pub samples: usize,
    /// Wall clock of the first sample (milliseconds since the Unix epoch).
    #[serde(default)]
    pub start_unix_ms: u64,
    /// Wall clock of the last sample.
    #[serde(default)]
    pub end_unix_ms: u64,
    /// From the first sample to the last, in seconds.
    pub duration_s: f64,
    /// Energy over the window in joules, all GPUs together; `None` with fewer than two
    /// samples or no power reading.
    pub energy_j: Option<f64>,
    /// Where `energy_j` comes from.
    pub energy_source: Option<EnergySource>,
    /// `energy_j / duration_s`.
    pub mean_power_w: Option<f64>,
    /// The highest total power draw in one sample.
    pub peak_power_w: Option<f64>,
    /// The highest total memory used in one sample, MiB.
    pub peak_memory_mib: Option<f64>,
    /// Mean utilisation over samples and GPUs, percent.
    pub mean_util_percent: Option<f64>,
    /// The highest temperature seen, °C.
    pub max_temperature_c: Option<f64>,
    /// Clock throttle reasons seen in any sample, by name, with the number of samples.
    pub throttle_reasons: BTreeMap<String, u32>,
    /// True when three or more samples were all alike: the source refreshes less often than
    /// it was read (dcgm-exporter collects every 30 s unless run with `-c 1000`), so the
    /// figures are one reading held, and energy is that power times the window.
    #[serde(default)]
    pub unchanging: bool,
    /// How many times a reading changed from one sample to the next: a source that refreshes
    /// less often than it is read changes rarely, and its energy may belong partly to the
    /// time before the window.
    #[serde(default)]
    pub changes: usize,
}

/// What the GPUs did over a stretch of work (a sweep's cell, a suite): the window, and the
/// energy per output token of the work's completion tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WorkEnergy {
    /// Energy, power, memory, utilisation and throttling over the window, all GPUs together.
    pub window: EnergyWindow,
    /// Joules per output token and output tokens per joule, over the work's completion tokens
    /// (the server's counts); absent without energy or tokens.
    pub per_token: Option<PerToken>,
    /// The requests the windows cover and all the work's requests, when some ran with no GPU
    /// sampled (a session interrupted before its samples were journalled, or resumed without
    /// a GPU source): `per_token` is over the covered ones only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered_requests: Option<(u64, u64)>,
}

impl WorkEnergy {
    /// The windows (one per session of the work; a resumed run has several) combined, with
    /// `output_tokens` generated in them; `None` without a window.
    pub fn of(windows: &[EnergyWindow], output_tokens: u64) -> Option<Self> {
        let window = EnergyWindow::combine(windows)?;
        Some(Self {
            per_token: window.per_token(output_tokens),
            window,
            covered_requests: None,
        })
    }

    /// Notes that the windows cover `covered` of the work's `total` requests (kept only when
    /// some are not covered).
    #[must_use]
    pub fn covering(mut self, covered: u64, total: u64) -> Self {
        self.covered_requests = (covered < total).then_some((covered, total));
        self
    }

    /// What makes these figures doubtful, one sentence each: readings that never changed or
    /// changed too rarely (a source refreshing less often than it was read), GPUs idle while
    /// the work generated tokens (not the server's?), requests no GPU sample covered.
    pub fn warnings(&self) -> Vec<String> {
        let window = &self.window;
        let mut warnings = Vec::new();
        if window.unchanging {
            warnings.push(format!(
                "all {} GPU readings were alike: the source refreshes less often than it was read (dcgm-exporter collects every 30 s unless started with `-c 1000`); its energy is one power reading times the window",
                window.samples
            ));
        } else if window.samples >= 4 && window.changes < 2 {
            warnings.push(format!(
                "the GPU readings changed {} time(s) over {} samples: the source refreshes less often than it was read, so part of this energy may belong to the time before the window (dcgm-exporter: start it with `-c 1000`)",
                window.changes, window.samples
            ));
        }
        if let (Some(util), Some(per)) = (window.mean_util_percent, self.per_token)
            && util < 1.0
        {
            warnings.push(format!(
                "the GPUs read were idle (mean utilisation {util:.1}%) while the work generated {} tokens: they may not be the server's (a server reached through a tunnel is not on this machine: give --gpu-metrics-url, or --gpus for the server's own)",
                per.output_tokens
            ));
        }
        if let Some((covered, total)) = self.covered_requests {
            warnings.push(format!(
                "the GPU samples cover {covered} of {total} requests (the rest ran in a session without GPU readings); the energy per token is over those {covered}"
            ));
        }
        warnings
    }

    /// One line: `812 J over 9.6 s (mean 84 W, peak 120 W, peak memory 3.2 GiB), 0.41 J per
    /// output token (1 980 tokens), from the energy counter`.
    pub fn describe(&self) -> String {
        let window = &self.window;
        let figure = |value: Option<f64>, decimals: usize, unit: &str| {
            value.map_or_else(|| "—".to_owned(), |v| format!("{v:.decimals$}{unit}"))
        };
        let mut line = format!(
            "{} over {:.1} s (mean {}, peak {}, peak memory {})",
            figure(window.energy_j, 0, " J"),
            window.duration_s,
            figure(window.mean_power_w, 0, " W"),
            figure(window.peak_power_w, 0, " W"),
            figure(window.peak_memory_mib.map(|mib| mib / 1024.0), 1, " GiB"),
        );
        if let Some(per) = self.per_token {
            let _ = write!(
                line,
                ", {:.3} J per output token ({} tokens, {:.2} tokens per joule)",
                per.joules_per_output_token, per.output_tokens, per.output_tokens_per_joule
            );
        }
        if let Some(source) = window.energy_source {
            let _ = write!(line, ", from the {}", source.label());
        }
        line
    }
}

/// Energy per token over a window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PerToken {
    /// Output tokens generated in the window (the server's count).
    pub output_tokens: u64,
    /// Joules per output token.
    pub joules_per_output_token: f64,
    /// Output tokens per joule.
    pub output_tokens_per_joule: f64,
}

fn max_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    values.fold(None, |best, value| {
        Some(best.map_or(value, |best: f64| best.max(value)))
    })
}

/// Seconds between two samples' wall clocks.
fn seconds_between(earlier: u64, later: u64) -> f64 {
    later.saturating_sub(earlier) as f64 / 1000.0
}

/// One GPU's energy over `samples`: its counter's rise when it has one in the first and last
/// samples and it never fell, else its power integrated by the trapezoid rule.
fn device_energy(samples: &[GpuSample], index: u32) -> Option<(f64, EnergySource)> {
    let readings: Vec<(u64, Option<f64>, Option<f64>)> = samples
        .iter()
        .filter_map(|sample| {
            let device = sample.devices.iter().find(|device| device.index == index)?;
            Some((sample.unix_ms, device.energy_mj, device.power_w))
        })
        .collect();
    let counters: Vec<f64> = readings.iter().filter_map(|reading| reading.1).collect();
    // A counter that never moved while the GPU drew power is a stale reading (an exporter
    // that refreshes less often than it is read), not zero joules.
    let drew_power = readings
        .iter()
        .any(|reading| reading.2.is_some_and(|w| w > 0.0));
    let rose = counters.last() > counters.first();
    if counters.len() == readings.len()
        && counters.len() >= 2
        && counters.windows(2).all(|pair| pair[1] >= pair[0])
        && (rose || !drew_power)
    {
        let rise_mj = counters[counters.len() - 1] - counters[0];
        return Some((rise_mj / 1000.0, EnergySource::EnergyCounter));
    }
    let powered: Vec<(u64, f64)> = readings
        .iter()
        .filter_map(|&(at, _, power)| Some((at, power?)))
        .collect();
    if powered.len() < 2 {
        return None;
    }
    let joules = powered
        .windows(2)
        .map(|pair| f64::midpoint(pair[0].1, pair[1].1) * seconds_between(pair[0].0, pair[1].0))
        .sum();
    Some((joules, EnergySource::IntegratedPower))
}

impl EnergyWindow {
    /// The window `samples` span (in the order taken); `None` when there is no sample.
    pub fn from_samples(samples: &[GpuSample]) -> Option<Self> {
        let (first, last) = (samples.first()?, samples.last()?);
        let duration_s = seconds_between(first.unix_ms, last.unix_ms);
        let mut indices: Vec<u32> = samples
            .iter()
            .flat_map(|sample| sample.devices.iter().map(|device| device.index))
            .collect();
        indices.sort_unstable();
        indices.dedup();
        let per_device: Vec<(f64, EnergySource)> = indices
            .iter()
            .filter_map(|&index| device_energy(samples, index))
            .collect();
        let (energy_j, energy_source) = if per_device.len() == indices.len() && !indices.is_empty()
        {
            let joules: f64 = per_device.iter().map(|(joules, _)| joules).sum();
            let source = if per_device
                .iter()
                .all(|(_, s)| *s == EnergySource::EnergyCounter)
            {
                EnergySource::EnergyCounter
            } else if per_device
                .iter()
                .all(|(_, s)| *s == EnergySource::IntegratedPower)
            {
                EnergySource::IntegratedPower
            } else {
                EnergySource::Mixed
            };
            (Some(joules), Some(source))
        } else {
            (None, None)
        };
        let total = |field: fn(&crate::DeviceSample) -> Option<f64>| {
            max_of(samples.iter().filter_map(|sample| {
                let values: Vec<f64> = sample.devices.iter().filter_map(field).collect();
                (!values.is_empty()).then(|| values.iter().sum())
            }))
        };
        let utils: Vec<f64> = samples
            .iter()
            .flat_map(|sample| sample.devices.iter().filter_map(|d| d.util_percent))
            .collect();
        let mut throttle_reasons = BTreeMap::new();
        for sample in samples {
            let mask = sample
                .devices
                .iter()
                .filter_map(|device| device.throttle_reasons)
                .fold(0, |mask, bits| mask | bits);
            for name in throttle_reason_names(mask) {
                *throttle_reasons.entry(name).or_insert(0) += 1;
            }
        }
        let changes = samples
            .windows(2)
            .filter(|pair| pair[0].devices != pair[1].devices)
            .count();
        Some(Self {
            unchanging: samples.len() >= 3 && changes == 0,
            changes,
            start_unix_ms: first.unix_ms,
            end_unix_ms: last.unix_ms,
            samples: samples.len(),
            duration_s,
            energy_j,
            energy_source,
            mean_power_w: energy_j
                .filter(|_| duration_s > 0.0)
                .map(|joules| joules / duration_s),
            peak_power_w: total(|device| device.power_w),
            peak_memory_mib: total(|device| device.memory_used_mib),
            mean_util_percent: (!utils.is_empty())
                .then(|| utils.iter().sum::<f64>() / utils.len() as f64),
            max_temperature_c: max_of(
                samples
                    .iter()
                    .flat_map(|sample| sample.devices.iter().filter_map(|d| d.temperature_c)),
            ),
            throttle_reasons,
        })
    }

    /// Windows taken apart (a cell measured over a resume) as one: energies, durations and
    /// samples summed, peaks the highest; `None` when there is none. Energy is known only when
    /// every window knows it.
    pub fn combine(windows: &[Self]) -> Option<Self> {
        let first = windows.first()?;
        let mut total = first.clone();
        for window in &windows[1..] {
            let samples = total.samples + window.samples;
            total.mean_util_percent = match (total.mean_util_percent, window.mean_util_percent) {
                (Some(a), Some(b)) if samples > 0 => {
                    Some((a * total.samples as f64 + b * window.samples as f64) / samples as f64)
                }
                (a, b) => a.or(b),
            };
            total.samples = samples;
            total.unchanging &= window.unchanging;
            total.changes += window.changes;
            total.start_unix_ms = total.start_unix_ms.min(window.start_unix_ms);
            total.end_unix_ms = total.end_unix_ms.max(window.end_unix_ms);
            total.duration_s += window.duration_s;
            total.energy_j = total.energy_j.zip(window.energy_j).map(|(a, b)| a + b);
            total.energy_source = match (total.energy_source, window.energy_source) {
                (Some(a), Some(b)) if a == b => Some(a),
                (Some(_), Some(_)) => Some(EnergySource::Mixed),
                _ => None,
            };
            let higher = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            total.peak_power_w = higher(total.peak_power_w, window.peak_power_w);
            total.peak_memory_mib = higher(total.peak_memory_mib, window.peak_memory_mib);
            total.max_temperature_c = higher(total.max_temperature_c, window.max_temperature_c);
            for (name, count) in &window.throttle_reasons {
                *total.throttle_reasons.entry(name.clone()).or_insert(0) += count;
            }
        }
        total.mean_power_w = total
            .energy_j
            .filter(|_| total.duration_s > 0.0)
            .map(|joules| joules / total.duration_s);
        Some(total)
    }

    /// Joules per output token and its inverse for `output_tokens` generated in the window;
    /// `None` without energy or tokens.
    pub fn per_token(&self, output_tokens: u64) -> Option<PerToken> {
        let joules = self.energy_j.filter(|joules| *joules > 0.0)?;
        if output_tokens == 0 {
            return None;
        }
        let tokens = output_tokens as f64;
        Some(PerToken {
            output_tokens,
            joules_per_output_token: joules / tokens,
            output_tokens_per_joule: tokens / joules,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DeviceSample;

    fn device(index: u32, power: f64, energy: Option<f64>, memory: f64) -> DeviceSample {
        let mut sample = DeviceSample::new(index);
        sample.power_w = Some(power);
        sample.energy_mj = energy;
        sample.memory_used_mib = Some(memory);
        sample
    }

    #[test]
    fn the_counter_wins_and_is_summed_over_gpus() {
        // Two GPUs over 2 s: counters rise 600 000 mJ and 400 000 mJ → 1000 J, 500 W mean.
        let samples = vec![
            GpuSample::new(
                1_000,
                vec![
                    device(0, 290.0, Some(5_000_000.0), 100.0),
                    device(1, 190.0, Some(7_000_000.0), 50.0),
                ],
            ),
            GpuSample::new(
                2_000,
                vec![
                    device(0, 310.0, Some(5_300_000.0), 300.0),
                    device(1, 210.0, Some(7_200_000.0), 60.0),
                ],
            ),
            GpuSample::new(
                3_000,
                vec![
                    device(0, 300.0, Some(5_600_000.0), 200.0),
                    device(1, 200.0, Some(7_400_000.0), 70.0),
                ],
            ),
        ];
        let window = EnergyWindow::from_samples(&samples).expect("a window");
        assert_eq!(window.energy_source, Some(EnergySource::EnergyCounter));
        assert!((window.energy_j.expect("energy") - 1_000.0).abs() < 1e-9);
        assert!((window.mean_power_w.expect("mean") - 500.0).abs() < 1e-9);
        // Peak total power: 310 + 210 at t = 2 s; peak memory 300 + 60.
        assert_eq!(window.peak_power_w, Some(520.0));
        assert_eq!(window.peak_memory_mib, Some(360.0));
        let per = window.per_token(2_000).expect("per token");
        assert!((per.joules_per_output_token - 0.5).abs() < 1e-12);
        assert!((per.output_tokens_per_joule - 2.0).abs() < 1e-12);
    }

    #[test]
    fn without_a_counter_power_is_integrated() {
        // Trapezoid: (100 + 200) / 2 × 1 s + (200 + 200) / 2 × 0.5 s = 150 + 100 = 250 J.
        let samples = vec![
            GpuSample::new(0, vec![device(0, 100.0, None, 1.0)]),
            GpuSample::new(1_000, vec![device(0, 200.0, None, 1.0)]),
            GpuSample::new(1_500, vec![device(0, 200.0, None, 1.0)]),
        ];
        let window = EnergyWindow::from_samples(&samples).expect("a window");
        assert_eq!(window.energy_source, Some(EnergySource::IntegratedPower));
        assert!((window.energy_j.expect("energy") - 250.0).abs() < 1e-9);
        assert!((window.mean_power_w.expect("mean") - 250.0 / 1.5).abs() < 1e-9);
    }

    #[test]
    fn a_counter_that_falls_is_not_trusted() {
        // A reset (driver reload) between samples: fall back to power, 2 × 50 W × 1 s = 100 J.
        let samples = vec![
            GpuSample::new(0, vec![device(0, 50.0, Some(9_000.0), 1.0)]),
            GpuSample::new(1_000, vec![device(0, 50.0, Some(10.0), 1.0)]),
            GpuSample::new(2_000, vec![device(0, 50.0, Some(50_010.0), 1.0)]),
        ];
        let window = EnergyWindow::from_samples(&samples).expect("a window");
        assert_eq!(window.energy_source, Some(EnergySource::IntegratedPower));
        assert!((window.energy_j.expect("energy") - 100.0).abs() < 1e-9);
    }

    #[test]
    fn windows_apart_add_up() {
        let a = EnergyWindow::from_samples(&[
            GpuSample::new(0, vec![device(0, 100.0, Some(0.0), 10.0)]),
            GpuSample::new(1_000, vec![device(0, 100.0, Some(100_000.0), 20.0)]),
        ])
        .expect("first");
        let b = EnergyWindow::from_samples(&[
            GpuSample::new(60_000, vec![device(0, 300.0, Some(900_000.0), 5.0)]),
            GpuSample::new(63_000, vec![device(0, 300.0, Some(1_800_000.0), 5.0)]),
        ])
        .expect("second");
        // 100 J over 1 s and 900 J over 3 s: 1000 J over 4 s (the minute between is not in it).
        let both = EnergyWindow::combine(&[a, b]).expect("combined");
        assert_eq!(both.samples, 4);
        assert!((both.energy_j.expect("energy") - 1_000.0).abs() < 1e-9);
        assert!((both.mean_power_w.expect("mean") - 250.0).abs() < 1e-9);
        assert_eq!(both.peak_memory_mib, Some(20.0));
        assert_eq!(both.peak_power_w, Some(300.0));
        assert_eq!(EnergyWindow::combine(&[]), None);
    }

    #[test]
    fn a_counter_that_never_moves_under_power_is_stale() {
        // The exporter held one reading: 400 W for 2 s is 800 J, not the counter's 0 J.
        let held = device(0, 400.0, Some(5_000.0), 1.0);
        let samples = vec![
            GpuSample::new(0, vec![held.clone()]),
            GpuSample::new(1_000, vec![held.clone()]),
            GpuSample::new(2_000, vec![held]),
        ];
        let window = EnergyWindow::from_samples(&samples).expect("a window");
        assert_eq!(window.energy_source, Some(EnergySource::IntegratedPower));
        assert!((window.energy_j.expect("energy") - 800.0).abs() < 1e-9);
        assert!(window.unchanging);
        // An idle GPU drawing nothing keeps its counter: zero is then the truth.
        let idle = device(0, 0.0, Some(5_000.0), 1.0);
        let window = EnergyWindow::from_samples(&[
            GpuSample::new(0, vec![idle.clone()]),
            GpuSample::new(1_000, vec![idle]),
        ])
        .expect("a window");
        assert_eq!(window.energy_source, Some(EnergySource::EnergyCounter));
        assert_eq!(window.energy_j, Some(0.0));
        assert!(!window.unchanging);
    }

    #[test]
    fn one_sample_gives_peaks_but_no_energy() {
        let window =
            EnergyWindow::from_samples(&[GpuSample::new(0, vec![device(0, 80.0, None, 9.0)])])
                .expect("a window");
        assert_eq!(window.energy_j, None);
        assert_eq!(window.peak_power_w, Some(80.0));
        assert_eq!(window.per_token(100), None);
        assert_eq!(EnergyWindow::from_samples(&[]), None);
    }
}
