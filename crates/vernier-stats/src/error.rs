//! The one error type of the crate.

/// Why a statistic could not be computed.
///
/// Every message reads after "failed to …", names the input at fault and says how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// The input slice had no values.
    #[error("compute {what}: the input is empty; pass at least one value")]
    EmptyInput {
        /// The statistic being computed.
        what: &'static str,
    },
    /// The input held a NaN or an infinity.
    #[error(
        "compute {what}: value at index {index} is {value}; remove NaN and infinite values first"
    )]
    NonFinite {
        /// The statistic being computed.
        what: &'static str,
        /// Position of the offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// The statistic needs more values than were given.
    #[error("compute {what}: {got} values given but at least {needed} are needed")]
    TooFewValues {
        /// The statistic being computed.
        what: &'static str,
        /// The least number of values that works.
        needed: usize,
        /// The number of values given.
        got: usize,
    },
    /// The confidence level was not strictly between 0 and 1.
    #[error("compute {what}: confidence {confidence} is outside (0, 1); pass a level such as 0.95")]
    InvalidConfidence {
        /// The statistic being computed.
        what: &'static str,
        /// The confidence level given.
        confidence: f64,
    },
    /// A numeric argument was outside its domain.
    #[error("compute {what}: {name} = {value} is outside {range}; pass a value in that range")]
    OutOfRange {
        /// The statistic being computed.
        what: &'static str,
        /// The argument's name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The accepted range, in words.
        range: &'static str,
    },
    /// A count of trials or items was zero.
    #[error("compute {what}: {name} is 0; pass at least one trial")]
    ZeroTrials {
        /// The statistic being computed.
        what: &'static str,
        /// The argument's name.
        name: &'static str,
    },
    /// More successes than trials.
    #[error("compute {what}: {successes} successes exceed {trials} trials; check the counts")]
    SuccessesExceedTrials {
        /// The statistic being computed.
        what: &'static str,
        /// Successes given.
        successes: u64,
        /// Trials given.
        trials: u64,
    },
    /// A bootstrap was asked for zero resamples.
    #[error("compute {what}: resamples is 0; pass a count such as 10000")]
    ZeroResamples {
        /// The statistic being computed.
        what: &'static str,
    },
    /// Paired samples of different lengths.
    #[error(
        "compute {what}: the samples have {len_a} and {len_b} values; paired samples need equal lengths"
    )]
    LengthMismatch {
        /// The statistic being computed.
        what: &'static str,
        /// Length of the first sample.
        len_a: usize,
        /// Length of the second sample.
        len_b: usize,
    },
    /// The caller's statistic returned NaN or an infinity.
    #[error(
        "compute {what}: the statistic returned {value}; make it return a finite number for every non-empty input"
    )]
    NonFiniteStatistic {
        /// The statistic being computed.
        what: &'static str,
        /// The value it returned.
        value: f64,
    },
    /// The BCa bias correction is infinite.
    #[error(
        "compute {what}: every bootstrap value lies on one side of the estimate, so the bias correction is infinite; use bootstrap_percentile for this statistic"
    )]
    DegenerateBootstrap {
        /// The statistic being computed.
        what: &'static str,
    },
    /// One task of a clustered sample had no samples.
    #[error("compute {what}: task {index} has no samples; drop it or give it at least one")]
    EmptyTask {
        /// The statistic being computed.
        what: &'static str,
        /// Position of the empty task.
        index: usize,
    },
    /// More events than an exact Poisson method is checked for (or a total that overflows).
    #[error(
        "compute {what}: {name} = {events} is above the {limit} events this exact method is checked for; compare counts this large with a normal approximation to the log rate"
    )]
    TooManyEvents {
        /// The statistic being computed.
        what: &'static str,
        /// The argument's name.
        name: &'static str,
        /// The count given (`u64::MAX` when a sum overflows).
        events: u64,
        /// The largest count accepted.
        limit: u64,
    },
    /// A planned sample size is too large to represent.
    #[error(
        "compute {what}: the required size {value} does not fit in 64 bits; ask for a wider interval"
    )]
    TooLarge {
        /// The statistic being computed.
        what: &'static str,
        /// The size computed.
        value: f64,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = StatsError> = std::result::Result<T, E>;
