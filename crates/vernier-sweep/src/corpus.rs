//! The bundled prompt corpora and prompt construction.
//!
//! A prompt is `Session NONCE: ` + the first `n` units of a corpus (cycling when `n` exceeds
//! it) + a one-line instruction. (Tests of cache-hit flagging may put the nonce last instead,
//! `Session NONCE.` after the instruction, where it leaves the prefix shared.) A unit is a word or one punctuation mark with the whitespace
//! before it, so a prompt always ends on a natural boundary.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::config::Workload;

const PROSE: &str = include_str!("../../../fixtures/corpora/prose.txt");
const CODE: &str = include_str!("../../../fixtures/corpora/code.txt");

/// Where the nonce goes in a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoncePlacement {
    /// First, so no two prompts share a prefix: what defeats a prefix cache.
    Opening,
    /// Last, after the instruction: a control for tests; a prefix cache still hits.
    Closing,
}

impl NoncePlacement {
    pub(crate) const fn from_suffix(suffix: bool) -> Self {
        if suffix { Self::Closing } else { Self::Opening }
    }
}

/// The units of one corpus.
#[derive(Debug)]
pub(crate) struct Corpus {
    text: &'static str,
    /// Byte ranges of each unit in `text`.
    units: Vec<(usize, usize)>,
    workload: Workload,
}

impl Corpus {
    pub(crate) fn new(workload: Workload) -> Self {
        let text = match workload {
            Workload::Prose => PROSE.trim(),
            Workload::Code => CODE.trim(),
        };
        Self {
            text,
            units: split_units(text),
            workload,
        }
    }

    #[cfg(test)]
    /// Units in one pass over the corpus.
    pub(crate) fn n_units(&self) -> usize {
        self.units.len()
    }

    /// The first `n_units` units, cycling through the corpus with a blank line between passes.
    pub(crate) fn body(&self, n_units: usize) -> String {
        let mut out = String::with_capacity(n_units * 6);
        let per_pass = self.units.len().max(1);
        for index in 0..n_units {
            let position = index % per_pass;
            let (start, end) = self.units[position];
            if position == 0 && index > 0 {
                out.push_str("\n\n");
            }
            out.push_str(&self.text[start..end]);
        }
        out
    }

    /// `n_units` units starting at unit `start` (modulo the corpus), cycling like `body`
    /// does; the first unit's leading whitespace is dropped.
    pub(crate) fn span(&self, start: usize, n_units: usize) -> String {
        let per_pass = self.units.len().max(1);
        let mut out = String::with_capacity(n_units * 6);
        for index in 0..n_units {
            let position = (start + index) % per_pass;
            let (from, end) = self.units[position];
            if position == 0 && index > 0 {
                out.push_str("\n\n");
            }
            out.push_str(&self.text[from..end]);
        }
        out.trim_start().to_owned()
    }

    /// Units in one pass over the corpus.
    pub(crate) fn units_per_pass(&self) -> usize {
        self.units.len()
    }

    /// A whole prompt: nonce first (so no two prompts share a prefix), then the body; or,
    /// with [`NoncePlacement::Closing`], the nonce after the instruction.
    pub(crate) fn prompt(
        &self,
        nonce: Option<&str>,
        placement: NoncePlacement,
        n_units: usize,
    ) -> String {
        let instruction = match self.workload {
            Workload::Prose => "\n\nContinue the text above in the same style.",
            Workload::Code => "\n\nContinue the code above in the same style.",
        };
        let body = self.body(n_units);
        match (nonce, placement) {
            (Some(nonce), NoncePlacement::Opening) => {
                format!("Session {nonce}: {body}{instruction}")
            }
            (Some(nonce), NoncePlacement::Closing) => {
                format!("{body}{instruction} Session {nonce}.")
            }
            (None, _) => format!("{body}{instruction}"),
        }
    }
}

fn split_units(text: &str) -> Vec<(usize, usize)> {
    let mut units = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some(&(index, ch)) = chars.peek() {
        if ch.is_whitespace() {
            chars.next();
            continue;
        }
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        chars.next();
        let mut end = index + ch.len_utf8();
        if is_word(ch) {
            while let Some(&(next_index, next)) = chars.peek() {
                if !is_word(next) {
                    break;
                }
                end = next_index + next.len_utf8();
                chars.next();
            }
        }
        units.push((start, end));
        start = end;
    }
    units
}

/// SHA-256 (hex) over the bundled corpora, in a fixed order: it names the prompt set.
pub(crate) fn prompt_set_sha256() -> String {
    let mut hasher = Sha256::new();
    for (name, text) in [("prose.txt", PROSE), ("code.txt", CODE)] {
        hasher.update(name.as_bytes());
        hasher.update((text.len() as u64).to_le_bytes());
        hasher.update(text.as_bytes());
    }
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Unique nonces: a per-process random-ish prefix and a counter, 16 hex digits.
#[derive(Debug)]
pub(crate) struct NonceSource {
    prefix: u32,
    counter: AtomicU64,
}

impl NonceSource {
    pub(crate) fn new() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut hasher = Sha256::new();
        hasher.update(nanos.to_le_bytes());
        hasher.update(std::process::id().to_le_bytes());
        let digest = hasher.finalize();
        let prefix = u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]]);
        Self {
            prefix,
            counter: AtomicU64::new(0),
        }
    }

    pub(crate) fn next(&self) -> String {
        let count = self.counter.fetch_add(1, Ordering::Relaxed);
        format!("{:08x}{:08x}", self.prefix, count & 0xffff_ffff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_rebuild_the_corpus_exactly() {
        for workload in [Workload::Prose, Workload::Code] {
            let corpus = Corpus::new(workload);
            assert_eq!(corpus.body(corpus.n_units()), corpus.text);
        }
    }

    #[test]
    fn long_bodies_cycle_with_a_blank_line() {
        let corpus = Corpus::new(Workload::Prose);
        let n = corpus.n_units();
        let body = corpus.body(n + 3);
        assert!(body.starts_with("The Keeper of the Tide Clock"));
        assert!(
            body.ends_with("\n\nThe Keeper of"),
            "{}",
            &body[body.len() - 40..]
        );
    }

    #[test]
    fn corpora_are_large_natural_texts() {
        assert!(Corpus::new(Workload::Prose).n_units() > 2500);
        assert!(Corpus::new(Workload::Code).n_units() > 2000);
        // The simulator classifies prose and code by these marks; prose must have none.
        assert!(!PROSE.contains('{') && !PROSE.contains(';'));
        assert!(CODE.contains("def ") && CODE.contains("fn "));
    }

    #[test]
    fn the_nonce_opens_the_prompt_and_nonces_differ() {
        let source = NonceSource::new();
        let (a, b) = (source.next(), source.next());
        assert_ne!(a, b);
        assert_eq!(a.len(), 16);
        let corpus = Corpus::new(Workload::Code);
        let prompt = corpus.prompt(Some(&a), NoncePlacement::Opening, 10);
        assert!(prompt.starts_with(&format!("Session {a}: # inventory.py")));
        assert!(prompt.ends_with("Continue the code above in the same style."));
        let closing = corpus.prompt(Some(&b), NoncePlacement::Closing, 10);
        assert!(closing.starts_with("# inventory.py"), "{closing}");
        assert!(
            closing.ends_with(&format!(
                "Continue the code above in the same style. Session {b}."
            )),
            "{closing}"
        );
    }

    #[test]
    fn prompt_set_hash_is_stable_hex() {
        let hash = prompt_set_sha256();
        assert_eq!(hash.len(), 64);
        assert_eq!(hash, prompt_set_sha256());
    }
}
