//! What a long-context task is made of: the plan of a suite, the spec of one task (haystack,
//! length, needles) and its rendering at a length in corpus units.

use serde::{Deserialize, Serialize};

pub(super) const PROSE: &str = include_str!("../../../../fixtures/corpora/prose.txt");

pub(super) const CODE: &str = include_str!("../../../../fixtures/corpora/code.txt");

/// Default target prompt lengths, in the server's tokens (1k to 128k, k = 1,024).
pub const DEFAULT_LENGTHS: [u32; 6] = [1_024, 4_096, 16_384, 32_768, 65_536, 131_072];

/// Default needle depths, in percent of the haystack.
pub const DEFAULT_DEPTHS: [u8; 5] = [0, 25, 50, 75, 100];

/// How far (in points) a needle may sit from its nominal depth: it goes to the nearest sentence
/// or line boundary at or before the nominal place.
pub const DEPTH_TOLERANCE_POINTS: f64 = 5.0;

/// Corpus units per server token assumed before a server has counted anything (English prose
/// under a BPE tokenizer is about 0.75 words per token).
pub const UNITS_PER_TOKEN_GUESS: f64 = 0.75;

/// Which bundled corpus a haystack is cut from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Haystack {
    /// Natural prose (`fixtures/corpora/prose.txt`).
    Prose,
    /// Source code (`fixtures/corpora/code.txt`).
    Code,
}

impl Haystack {
    pub(super) fn text(self) -> &'static str {
        match self {
            Self::Prose => PROSE.trim(),
            Self::Code => CODE.trim(),
        }
    }

    /// The name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prose => "prose",
            Self::Code => "code",
        }
    }
}

/// What a context suite is drawn from: lengths, depths, samples per cell and the seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ContextPlan {
    /// Target total prompt lengths in the server's tokens (chat template included).
    pub lengths: Vec<u32>,
    /// Needle depths in percent of the haystack (0 = first, 100 = last).
    pub depths: Vec<u8>,
    /// Tasks per (length, depth) cell, each with its own needles and haystack slice.
    pub samples_per_cell: u32,
    /// Needles asked at once in the multi-needle task of each length (0: no multi-needle
    /// task); every one must be reported, a partial answer is wrong.
    pub multi_needles: u32,
    /// Distractor needles (other keys, other values) in every prompt.
    pub distractors: u32,
    /// The seed every key, value, corpus and slice is drawn from.
    pub seed: u64,
}

impl Default for ContextPlan {
    fn default() -> Self {
        Self {
            lengths: DEFAULT_LENGTHS.to_vec(),
            depths: DEFAULT_DEPTHS.to_vec(),
            samples_per_cell: 1,
            multi_needles: 3,
            distractors: 4,
            seed: 0,
        }
    }
}

impl ContextPlan {
    /// What is wrong with the plan, naming the setting to change.
    pub fn problem(&self) -> Option<String> {
        if self.lengths.is_empty() {
            return Some("--lengths: give at least one length".to_owned());
        }
        if let Some(short) = self.lengths.iter().find(|length| **length < 256) {
            return Some(format!(
                "--lengths: {short} tokens cannot hold a haystack; use 256 or more"
            ));
        }
        if self.depths.is_empty() {
            return Some("--depths: give at least one depth".to_owned());
        }
        if let Some(deep) = self.depths.iter().find(|depth| **depth > 100) {
            return Some(format!("--depths: {deep}% is past the end; use 0 to 100"));
        }
        if self.samples_per_cell == 0 {
            return Some("--cell-samples: use 1 or more".to_owned());
        }
        if self.multi_needles == 1 || self.multi_needles > 8 {
            return Some(format!(
                "--multi-needles: {} needles; use 0 (none) or 2 to 8",
                self.multi_needles
            ));
        }
        if self.distractors > 16 {
            return Some("--distractors: use 16 or fewer".to_owned());
        }
        None
    }
}

/// The label of a length: `4k` for 4,096, else the number.
pub fn length_label(tokens: u32) -> String {
    if tokens.is_multiple_of(1024) {
        format!("{}k", tokens / 1024)
    } else {
        tokens.to_string()
    }
}

/// One needle: "The special code for `key` is `value`."
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Needle {
    /// A made-up word, capitalised, found nowhere in the corpora.
    pub key: String,
    /// A 7-digit number found nowhere in the corpora.
    pub value: u32,
    /// Nominal place in the haystack, in percent.
    pub depth_pct: u8,
    /// Whether the question asks for it (else a distractor).
    pub asked: bool,
}

impl Needle {
    /// The sentence hidden in the haystack.
    pub fn sentence(&self) -> String {
        format!("The special code for {} is {}.", self.key, self.value)
    }
}

/// Everything one context request is drawn from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextSpec {
    /// Target total prompt tokens, in the server's count.
    pub target_tokens: u32,
    /// The cell's depth; `None` for a multi-needle task (its needles sit at several depths).
    pub depth_pct: Option<u8>,
    /// The corpus the haystack is cut from.
    pub haystack: Haystack,
    /// The corpus unit the haystack starts at (it cycles past the end).
    pub start_unit: usize,
    /// The needles, asked ones first in the order the question names them.
    pub needles: Vec<Needle>,
}

impl ContextSpec {
    /// The values the question asks for, in its order.
    pub fn gold(&self) -> Vec<u32> {
        self.needles
            .iter()
            .filter(|needle| needle.asked)
            .map(|needle| needle.value)
            .collect()
    }

    /// A first guess of the haystack length (corpus units) that hits the target.
    pub fn guess_units(&self) -> usize {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "positive, far below usize::MAX"
        )]
        let units = (f64::from(self.target_tokens) * UNITS_PER_TOKEN_GUESS).round() as usize;
        units.saturating_sub(120).max(16)
    }

    fn question(&self) -> String {
        let asked: Vec<&str> = self
            .needles
            .iter()
            .filter(|needle| needle.asked)
            .map(|needle| needle.key.as_str())
            .collect();
        if let [key] = asked.as_slice() {
            return format!(
                "Question: What is the special code for {key}? Answer with the number exactly as \
                 the document gives it. End your reply with a line of the form `ANSWER: <number>`."
            );
        }
        let names = match asked.split_last() {
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let slots: Vec<&str> = asked.iter().map(|_| "<number>").collect();
        format!(
            "Question: What are the special codes for {names}? Give all {} numbers exactly as the \
             document gives them, in this order, separated by commas. End your reply with a line \
             of the form `ANSWER: {}`.",
            asked.len(),
            slots.join(", ")
        )
    }

    /// The prompt with `n_units` corpus units of haystack, opening with `nonce`.
    pub fn render(&self, nonce: &str, n_units: usize) -> Rendered {
        let corpus = Corpus::of(self.haystack);
        let mut starts = Vec::with_capacity(n_units + 1);
        let mut chars = 0usize;
        for unit_index in 0..n_units {
            starts.push(chars);
            let unit = corpus.unit(self.start_unit + unit_index);
            let unit = if unit_index == 0 {
                unit.trim_start()
            } else {
                unit
            };
            chars += unit.chars().count();
        }
        starts.push(chars);
        let mut places: Vec<(usize, usize)> = self
            .needles
            .iter()
            .enumerate()
            .map(|(index, needle)| {
                (
                    snapped(&corpus, self.start_unit, &starts, needle.depth_pct),
                    index,
                )
            })
            .collect();
        places.sort_unstable();
        let mut document = String::with_capacity(n_units * 7 + 64 * self.needles.len());
        let mut haystack_chars = 0usize;
        let mut at_chars = vec![0usize; self.needles.len()];
        let mut next_place = 0;
        for unit_index in 0..=n_units {
            while let Some(&(place, needle_index)) = places.get(next_place) {
                if place != unit_index {
                    break;
                }
                at_chars[needle_index] = haystack_chars;
                if !document.is_empty() {
                    document.push(' ');
                }
                document.push_str(&self.needles[needle_index].sentence());
                next_place += 1;
            }
            if unit_index == n_units {
                break;
            }
            let unit = corpus.unit(self.start_unit + unit_index);
            let unit = if unit_index == 0 {
                unit.trim_start()
            } else {
                unit
            };
            haystack_chars += unit.chars().count();
            if document.is_empty() {
                document.push_str(unit.trim_start());
            } else {
                document.push_str(unit);
            }
        }
        let depths = at_chars
            .iter()
            .map(|chars| {
                if haystack_chars == 0 {
                    0.0
                } else {
                    *chars as f64 * 100.0 / haystack_chars as f64
                }
            })
            .collect();
        let prompt = format!(
            "Session {nonce}. Below is a long document. Hidden in it are a few sentences of the \
             form \"The special code for NAME is NUMBER.\" Read it all, then answer the question \
             after it.\n\n<document>\n{document}\n</document>\n\n{}",
            self.question()
        );
        Rendered { prompt, depths }
    }

    /// Every way `prompt` (rendered from this spec) fails to hold exactly the needles the gold
    /// says, once each, at their depths; `depths` are the rendered ones. Empty: proved.
    pub fn verify(&self, rendered: &Rendered) -> Vec<String> {
        let mut failures = Vec::new();
        let prompt = rendered.prompt.as_str();
        let found = find_needles(prompt);
        if found.len() != self.needles.len() {
            failures.push(format!(
                "the prompt holds {} needle sentences; the task has {}",
                found.len(),
                self.needles.len()
            ));
        }
        for needle in &self.needles {
            let matching = found
                .iter()
                .filter(|(key, value)| *key == needle.key && *value == needle.value)
                .count();
            if matching != 1 {
                failures.push(format!(
                    "the needle {:?} appears {matching} times; it must appear once",
                    needle.sentence()
                ));
            }
            let value = needle.value.to_string();
            let value_count = prompt.matches(&value).count();
            if value_count != 1 {
                failures.push(format!(
                    "the value {value} appears {value_count} times in the prompt; only its needle may hold it"
                ));
            }
            let key_count = prompt.matches(&needle.key).count();
            let expected = 1 + usize::from(needle.asked);
            if key_count != expected {
                failures.push(format!(
                    "the key {} appears {key_count} times; expected {expected} (its needle{})",
                    needle.key,
                    if needle.asked {
                        " and the question"
                    } else {
                        ""
                    }
                ));
            }
        }
        for (needle, depth) in self.needles.iter().zip(&rendered.depths) {
            if (depth - f64::from(needle.depth_pct)).abs() > DEPTH_TOLERANCE_POINTS {
                failures.push(format!(
                    "the needle for {} sits at {depth:.1}% of the haystack; it should be within {DEPTH_TOLERANCE_POINTS} points of {}%",
                    needle.key, needle.depth_pct
                ));
            }
        }
        let question = prompt.rsplit("</document>").next().unwrap_or_default();
        for needle in self.needles.iter().filter(|needle| needle.asked) {
            if !question.contains(&needle.key) {
                failures.push(format!(
                    "the question does not name the asked key {}",
                    needle.key
                ));
            }
        }
        if !question.contains("ANSWER:") {
            failures.push("the question does not ask for an `ANSWER:` line".to_owned());
        }
        failures
    }
}

/// A rendered prompt and where its needles landed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Rendered {
    /// The user message.
    pub prompt: String,
    /// Each needle's actual depth (haystack characters before it over all of them, percent),
    /// in the order of [`ContextSpec::needles`].
    pub depths: Vec<f64>,
}

pub(super) fn units_of(text: &str) -> Vec<(usize, usize)> {
    // A unit is a run of non-whitespace with the whitespace before it.
    let mut units = Vec::new();
    let mut start = 0;
    let mut in_word = false;
    for (index, ch) in text.char_indices() {
        if ch.is_whitespace() {
            if in_word {
                units.push((start, index));
                start = index;
                in_word = false;
            }
        } else {
            in_word = true;
        }
    }
    if in_word {
        units.push((start, text.len()));
    }
    units
}

pub(super) struct Corpus {
    text: &'static str,
    pub(super) units: Vec<(usize, usize)>,
}

impl Corpus {
    pub(super) fn of(haystack: Haystack) -> Self {
        let text = haystack.text();
        Self {
            text,
            units: units_of(text),
        }
    }

    fn unit(&self, index: usize) -> &'static str {
        let (start, end) = self.units[index % self.units.len()];
        &self.text[start..end]
    }

    /// Whether a needle may go before unit `index` of the haystack: after a sentence end, or
    /// where a new line starts.
    fn is_boundary(&self, start_unit: usize, index: usize) -> bool {
        if index == 0 {
            return true;
        }
        let previous = self.unit(start_unit + index - 1);
        let next = self.unit(start_unit + index);
        previous.ends_with(['.', '!', '?', ';', '}']) || next.starts_with(['\n', '\r'])
    }
}

/// The unit a needle at `depth_pct` goes before: the one where that share of the haystack's
/// characters is reached (`starts[i]` is the characters before unit `i`), moved back to the
/// nearest sentence or line boundary less than [`DEPTH_TOLERANCE_POINTS`] before it.
pub(super) fn snapped(
    corpus: &Corpus,
    start_unit: usize,
    starts: &[usize],
    depth_pct: u8,
) -> usize {
    let n_units = starts.len() - 1;
    let total = starts[n_units] as f64;
    if depth_pct >= 100 {
        return n_units;
    }
    let wanted = f64::from(depth_pct) / 100.0 * total;
    let nominal = starts
        .partition_point(|chars| (*chars as f64) < wanted)
        .min(n_units);
    let floor = wanted - (DEPTH_TOLERANCE_POINTS - 1.0) / 100.0 * total;
    (0..=nominal)
        .rev()
        .take_while(|index| starts[*index] as f64 >= floor)
        .find(|index| corpus.is_boundary(start_unit, *index))
        .unwrap_or(nominal)
}

/// The `(key, value)` of every needle sentence in `text`.
pub fn find_needles(text: &str) -> Vec<(String, u32)> {
    const LEAD: &str = "The special code for ";
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(LEAD) {
        rest = &rest[at + LEAD.len()..];
        let Some((key, after)) = rest.split_once(" is ") else {
            break;
        };
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        let well_formed = !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphabetic())
            && !digits.is_empty()
            && after[digits.len()..].starts_with('.');
        if well_formed && let Ok(value) = digits.parse() {
            found.push((key.to_owned(), value));
        }
    }
    found
}
