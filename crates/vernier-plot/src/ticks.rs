//! Numbers on axes: round ticks (a step of 1, 2, 2.5 or 5 times a power of ten, every label of
//! an axis with the same decimals), fixed-decimal formatting, and how an axis shows its values.

/// Round ticks over a range: `low`, `low + step`, … `high`, each a multiple of `step`, printed
/// with `decimals` decimals.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Ticks {
    /// The distance between two ticks: 1, 2, 2.5 or 5 times a power of ten.
    pub step: f64,
    /// The first tick, at or below the lowest value.
    pub low: f64,
    /// The last tick, at or above the highest value.
    pub high: f64,
    /// The decimals every label of the axis is printed with.
    pub decimals: usize,
}

/// What an axis of nothing shows: 0 to 1.
const EMPTY: Ticks = Ticks {
    step: 0.2,
    low: 0.0,
    high: 1.0,
    decimals: 1,
};

impl Ticks {
    /// Ticks from 0 up to at least `max` (0 to 1 when `max` is not above 0).
    pub fn from_zero(max: f64) -> Self {
        if max <= 0.0 || !max.is_finite() {
            return EMPTY;
        }
        Self::covering(0.0, max)
    }

    /// Ticks covering `low..=high`, about five steps.
    pub fn covering(low: f64, high: f64) -> Self {
        if !low.is_finite() || !high.is_finite() {
            return EMPTY;
        }
        let (low, high) = if high < low { (high, low) } else { (low, high) };
        if high - low <= 0.0 {
            return if low == 0.0 {
                EMPTY
            } else {
                Self::covering(low.min(0.0), high.max(0.0))
            };
        }
        let raw = (high - low) / 5.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .into_iter()
            .map(|n| n * magnitude)
            .find(|step| *step >= raw * (1.0 - 1e-9))
            .unwrap_or(10.0 * magnitude);
        let first = (low / step + 1e-9).floor() * step;
        let last = ((high / step - 1e-9).ceil() * step).max(first + step);
        let decimals = (0..=8_usize)
            .find(|d| {
                let scaled = step * 10f64.powi(i32::try_from(*d).unwrap_or(8));
                (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
            })
            .unwrap_or(8);
        Self {
            step,
            low: first,
            high: last,
            decimals,
        }
    }

    /// Every tick, lowest first.
    pub fn values(&self) -> Vec<f64> {
        let count = ((self.high - self.low) / self.step).round();
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a handful of ticks, counted from a positive span"
        )]
        let count = count.max(0.0) as usize;
        (0..=count)
            .map(|index| self.low + self.step * index as f64)
            .collect()
    }

    /// A tick's label: the value with the axis's decimals.
    pub fn label(&self, value: f64) -> String {
        number(value, self.decimals)
    }
}

/// `value` with exactly `decimals` decimals (never `-0`).
pub fn number(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.starts_with('-') && text[1..].chars().all(|c| c == '0' || c == '.') {
        text[1..].to_owned()
    } else {
        text
    }
}

/// A value asked for as its label: whole numbers plainly, others with up to two decimals.
pub fn value_label(value: f64) -> String {
    if (value - value.round()).abs() < 1e-9 {
        number(value, 0)
    } else {
        let text = number(value, 2);
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// How an axis shows its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Format {
    /// The values as they are.
    #[default]
    Plain,
    /// Shares (0 to 1) as percentages: ticks at round percentages, `%` after each.
    Percent,
    /// Ratios, `×` after each.
    Times,
}

impl Format {
    /// The number an axis shows for `value`.
    pub(crate) fn shown(self, value: f64) -> f64 {
        match self {
            Self::Percent => value * 100.0,
            Self::Plain | Self::Times => value,
        }
    }

    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Self::Plain => "",
            Self::Percent => "%",
            Self::Times => "×",
        }
    }

    /// `value` for a point's tooltip.
    pub(crate) fn tooltip(self, value: f64) -> String {
        match self {
            Self::Percent => format!("{}%", number(value * 100.0, 1)),
            Self::Plain => number(value, 2),
            Self::Times => format!("{}×", number(value, 2)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triple(t: Ticks) -> (f64, f64, usize) {
        (t.step, t.high, t.decimals)
    }

    #[test]
    fn ticks_are_round_and_share_their_decimals() {
        // The sweep's old axis split 25000 in quarters (6250, 18750) and printed 0.00 beside
        // 5000.
        assert_eq!(triple(Ticks::from_zero(23_000.0)), (5000.0, 25_000.0, 0));
        assert_eq!(triple(Ticks::from_zero(2.3)), (0.5, 2.5, 1));
        assert_eq!(triple(Ticks::from_zero(93.0)), (20.0, 100.0, 0));
        assert_eq!(triple(Ticks::from_zero(1.1)), (0.25, 1.25, 2));
        assert_eq!(triple(Ticks::from_zero(100.0)), (20.0, 100.0, 0));
        let empty = Ticks::from_zero(0.0);
        assert!((empty.high - 1.0).abs() < 1e-12 && empty.low == 0.0);
        assert_eq!(Ticks::from_zero(f64::NAN), empty);
        let t = Ticks::from_zero(1.1);
        assert_eq!(
            t.values().iter().map(|v| t.label(*v)).collect::<Vec<_>>(),
            ["0.00", "0.25", "0.50", "0.75", "1.00", "1.25"]
        );
    }

    #[test]
    fn every_step_is_one_two_two_and_a_half_or_five_times_a_power_of_ten() {
        for max in [
            0.003, 0.07, 0.9, 3.0, 17.0, 42.0, 380.0, 999.0, 12_345.0, 7e7,
        ] {
            let t = Ticks::from_zero(max);
            let mantissa = t.step / 10f64.powf(t.step.log10().floor());
            assert!(
                [1.0, 2.0, 2.5, 5.0]
                    .iter()
                    .any(|m| (m - mantissa).abs() < 1e-9),
                "{max}: step {}",
                t.step
            );
            assert!(t.high >= max && t.values().len() <= 7, "{max}: {t:?}");
        }
    }

    #[test]
    fn a_range_off_zero_is_covered() {
        let t = Ticks::covering(-3.0, 7.0);
        assert_eq!((t.step, t.low, t.high), (2.0, -4.0, 8.0));
        assert_eq!(t.label(-4.0), "-4");
        let one = Ticks::covering(5.0, 5.0);
        assert!(one.low <= 0.0 && one.high >= 5.0, "{one:?}");
    }

    #[test]
    fn numbers_have_fixed_decimals() {
        assert_eq!(number(1.0 / 3.0, 3), "0.333");
        assert_eq!(number(-0.0001, 2), "0.00");
        assert_eq!(number(-1.5, 1), "-1.5");
        assert_eq!(value_label(1024.0), "1024");
        assert_eq!(value_label(2.5), "2.5");
        assert_eq!(value_label(1.0 / 3.0), "0.33");
    }

    #[test]
    fn formats_scale_and_suffix() {
        assert!((Format::Percent.shown(0.25) - 25.0).abs() < 1e-12);
        assert_eq!(Format::Percent.tooltip(0.444_44), "44.4%");
        assert_eq!(Format::Times.tooltip(1.234), "1.23×");
        assert_eq!(Format::Plain.tooltip(12.0), "12.00");
    }
}
