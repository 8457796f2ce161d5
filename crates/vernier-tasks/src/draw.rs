//! What a generated task is drawn from: a [`Draw`] (level and seed) and the [`Instance`] every
//! drawn task records (family, level, seed, parameters, rejected draws). The drawing itself is
//! each family's (`family.rs` for math, `code/` for code).

use serde::{Deserialize, Serialize};
use vernier_stats::SplitMix64;

use crate::error::SuiteError;

/// The lowest difficulty level.
pub const MIN_LEVEL: u8 = 1;
/// The highest difficulty level.
pub const MAX_LEVEL: u8 = 5;

/// Which instance set a suite is drawn from: a difficulty level (1–5) and a seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Draw {
    /// Difficulty level, 1 (easiest) to 5.
    pub level: u8,
    /// The seed every parameter and hidden case is drawn from.
    pub seed: u64,
}

impl Default for Draw {
    fn default() -> Self {
        Self::BUNDLED
    }
}

impl std::fmt::Display for Draw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "level {} seed {}", self.level, self.seed)
    }
}

impl Draw {
    /// Level 2, seed 0: the bundled suite.
    pub const BUNDLED: Self = Self { level: 2, seed: 0 };

    /// A draw; the level must be 1 to 5.
    pub fn new(level: u8, seed: u64) -> Result<Self, SuiteError> {
        if (MIN_LEVEL..=MAX_LEVEL).contains(&level) {
            Ok(Self { level, seed })
        } else {
            Err(SuiteError::InvalidLevel { level })
        }
    }

    /// Whether this is the bundled instance set (level 2, seed 0).
    pub fn is_bundled(self) -> bool {
        self == Self::BUNDLED
    }

    /// The generator of one family's attempt: seed, level, family and attempt mixed.
    pub(crate) fn generator(self, family: u64, attempt: u32) -> SplitMix64 {
        let mut mixer = SplitMix64::new(self.seed);
        let state = mixer.next_u64()
            ^ u64::from(self.level).wrapping_mul(0xA076_1D64_78BD_642F)
            ^ family.wrapping_mul(0xE703_7ED1_A0B4_28DB)
            ^ u64::from(attempt).wrapping_mul(0x8EBC_6AF0_9C88_C6E3);
        SplitMix64::new(state)
    }
}

/// What a task was drawn from: family, level, seed and parameters, and the draws that
/// were rejected before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Instance {
    /// The family (for bundled tasks, the task id).
    pub family: String,
    /// Difficulty level.
    pub level: u8,
    /// Seed.
    pub seed: u64,
    /// The parameters the prompt and the gold answer (or hidden cases) come from.
    pub parameters: serde_json::Value,
    /// Draws rejected as ill-posed, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redraws: Vec<Redraw>,
}

impl Instance {
    /// An instance with no redraws.
    pub fn new(family: impl Into<String>, draw: Draw, parameters: serde_json::Value) -> Self {
        Self {
            family: family.into(),
            level: draw.level,
            seed: draw.seed,
            parameters,
            redraws: Vec::new(),
        }
    }
}

/// One rejected draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Redraw {
    /// The rejected parameters.
    pub parameters: serde_json::Value,
    /// Why they were rejected.
    pub reason: String,
}
