//! What a vision task is made of: its gold and its spec (family, parameters, images).

use serde::{Deserialize, Serialize};

use crate::canvas::TextBox;

/// The gold of a vision task: an integer, or a word compared without regard to case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VisionGold {
    /// An integer.
    Integer(i128),
    /// A word from the closed list the prompt gives (or a made-up word to read).
    Word(String),
    /// Words from the closed list, all of them, in order (a video's background colours).
    Words(Vec<String>),
}

/// What a vision task is drawn from and what it shows: the family, its parameters, the
/// images (PNG) and, for text families, the box the text covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct VisionSpec {
    /// The family, e.g. `count-squares`.
    pub family: String,
    /// The parameters the images and the gold come from.
    pub parameters: serde_json::Value,
    /// The gold, computed from the parameters.
    pub gold: VisionGold,
    /// The images as PNG files, in the order the prompt names them.
    #[serde(skip)]
    pub images: Vec<Vec<u8>>,
    /// The box the rendered text covers (text families).
    pub text: Option<TextBox>,
}
