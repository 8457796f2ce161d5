//! What a video task is made of: its spec (family, parameters, clips) and the clips' geometry
//! and sampling, which both drawing and reading back use.

use serde::{Deserialize, Serialize};

use crate::vision::VisionGold;

/// Width of every clip, in pixels.
pub const VIDEO_WIDTH: u32 = 256;

/// Height of every clip, in pixels.
pub const VIDEO_HEIGHT: u32 = 192;

/// Frames per second of every clip.
pub const VIDEO_FPS: u32 = 8;

/// Frames in every clip (6 s).
pub const VIDEO_FRAMES: u32 = 48;

/// Frames per second sent to a server without video input (`--video-as frames`).
pub const FRAMES_PER_SECOND_SAMPLED: u32 = 2;

pub(super) const WALL: u32 = 4;

/// What a video task is drawn from and what it shows: the family, its parameters, the clips
/// (MP4) and their geometry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct VideoSpec {
    /// The family, e.g. `ball-bounces`.
    pub family: String,
    /// The parameters the clips and the gold come from.
    pub parameters: serde_json::Value,
    /// The gold, computed from the parameters.
    pub gold: VisionGold,
    /// Width of every clip.
    pub width: u32,
    /// Height of every clip.
    pub height: u32,
    /// Frames per second.
    pub fps: u32,
    /// Frames in every clip.
    pub n_frames: u32,
    /// The clips as MP4 files (H.264, yuv420p), in the order the prompt names them.
    #[serde(skip)]
    pub videos: Vec<Vec<u8>>,
}

/// The frames a server without video input is sent: every `fps / sampled`-th frame, with its
/// time in seconds.
pub fn sampled_indices(fps: u32, n_frames: u32) -> Vec<(u32, f64)> {
    let step = (fps / FRAMES_PER_SECOND_SAMPLED).max(1);
    (0..n_frames)
        .step_by(step as usize)
        .map(|i| (i, f64::from(i) / f64::from(fps.max(1))))
        .collect()
}
