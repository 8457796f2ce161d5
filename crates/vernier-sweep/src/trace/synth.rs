//! Prompt text for trace records. A trace gives lengths and block hashes, never a user's
//! words: every prompt is written here from a fixed list of common English words.
//!
//! A prompt is, line by line:
//!
//! 1. the run nonce, so that two runs never share a cached prefix;
//! 2. one block per hash id, `round(block_tokens × words_per_token)` words drawn by
//!    [`SplitMix64`] from a seed made of the run nonce and the hash id alone, so equal ids in
//!    one run are equal text; the last block is cut short (a prefix of its full text) when the
//!    prompt ends inside it;
//! 3. filler words seeded by the run nonce and the record's index, for the prompt tokens the
//!    hash ids do not cover: text no other record of the run has.
//!
//! Records whose hash ids agree on their first `k` ids therefore share the nonce line and `k`
//! blocks, byte for byte, and part right after (two different blocks open with the same word
//! one time in 200, so the common text may run a word or two further).
//!
//! Lengths: the simulator's tokenizer counts each lowercase word as one token, so there
//! `words_per_token` is 1.0. A real server's tokenizer differs; the engine calibrates
//! `words_per_token` from the server's `prompt_tokens` count before replaying.

use vernier_stats::SplitMix64;

use super::record::TraceRecord;

/// How the prompts of one run are written.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthesis {
    /// Opens every prompt of the run, alone on the first line (its words joined by single
    /// spaces), and seeds every block and filler word: a fresh value per run keeps runs from
    /// sharing cache. One word of letters and digits is one token on the simulator.
    pub run_nonce: String,
    /// Words per prompt token for this text on the server's tokenizer: 1.0 on the simulator,
    /// calibrated from `usage.prompt_tokens` on a real server. A value that is not a positive
    /// finite number is read as 1.0, and values above 16 as 16.
    pub words_per_token: f64,
}

/// The prompt for `record`, the `index`-th of its trace, with `block_tokens` tokens per hash
/// id (the trace's [`block_tokens`](super::Trace::block_tokens)).
///
/// The prompt holds `round(input_tokens × words_per_token)` words counting the nonce line's,
/// unless the hash id blocks alone hold more (the nonce line's words are then extra).
pub fn synthesize(
    record: &TraceRecord,
    index: usize,
    block_tokens: u32,
    synthesis: &Synthesis,
) -> String {
    let words_per_token = usable(synthesis.words_per_token);
    let nonce_words: Vec<&str> = synthesis.run_nonce.split_whitespace().collect();
    let nonce_line = nonce_words.join(" ");
    let target = word_count(record.input_tokens, words_per_token);
    // About six bytes a word; the reservation is capped, the text is not.
    let reserve = target.saturating_mul(6).min(1 << 24);
    let mut text = String::with_capacity(nonce_line.len() + 1 + reserve);
    text.push_str(&nonce_line);
    text.push('\n');

    let block_tokens = u64::from(block_tokens.max(1));
    let input_tokens = u64::from(record.input_tokens);
    let mut hashed_words = 0;
    let mut start = 0_u64;
    for &id in &record.hash_ids {
        let tokens = input_tokens.saturating_sub(start).min(block_tokens);
        if tokens == 0 {
            break;
        }
        start += block_tokens;
        let words = word_count(u32::try_from(tokens).unwrap_or(u32::MAX), words_per_token);
        push_words(&mut text, seed(b'b', &nonce_line, id), words);
        hashed_words += words;
    }
    let filler = target.saturating_sub(nonce_words.len() + hashed_words);
    let index = u64::try_from(index).unwrap_or(u64::MAX);
    push_words(&mut text, seed(b'f', &nonce_line, index), filler);
    text
}

fn usable(words_per_token: f64) -> f64 {
    if words_per_token.is_finite() && words_per_token > 0.0 {
        words_per_token.min(16.0)
    } else {
        1.0
    }
}

#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "tokens × words_per_token is finite, not negative and below 2^36"
)]
fn word_count(tokens: u32, words_per_token: f64) -> usize {
    (f64::from(tokens) * words_per_token).round() as usize
}

/// Appends `count` words drawn from `seed`'s stream, separated by spaces, then a line break;
/// nothing when `count` is 0. Fewer words from the same seed are a prefix of more.
fn push_words(text: &mut String, seed: u64, count: usize) {
    if count == 0 {
        return;
    }
    let mut draws = SplitMix64::new(seed);
    for position in 0..count {
        if position > 0 {
            text.push(' ');
        }
        text.push_str(WORDS[draws.index(WORDS.len())]);
    }
    text.push('\n');
}

/// FNV-1a (64-bit) of a domain byte (`b` block, `f` filler), the nonce line, a 0xff byte
/// (never in UTF-8, so nothing can shift across it) and `id` little-endian.
fn seed(domain: u8, nonce_line: &str, id: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = std::iter::once(domain)
        .chain(nonce_line.bytes())
        .chain(std::iter::once(0xff))
        .chain(id.to_le_bytes());
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// 200 common, short, lowercase English words: one token each on the simulator, and on most
/// real tokenizers (with the space before them).
const WORDS: [&str; 200] = [
    "the", "of", "and", "to", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are",
    "as", "with", "his", "they", "at", "be", "this", "have", "from", "or", "one", "had", "by",
    "word", "but", "not", "what", "all", "were", "we", "when", "your", "can", "said", "there",
    "use", "an", "each", "which", "she", "do", "how", "their", "if", "will", "up", "other",
    "about", "out", "many", "then", "them", "these", "so", "some", "her", "would", "make", "like",
    "him", "into", "time", "has", "look", "two", "more", "write", "go", "see", "number", "no",
    "way", "could", "people", "my", "than", "first", "water", "been", "call", "who", "oil", "its",
    "now", "find", "long", "down", "day", "did", "get", "come", "made", "may", "part", "over",
    "new", "sound", "take", "only", "little", "work", "know", "place", "year", "live", "me",
    "back", "give", "most", "very", "after", "thing", "our", "just", "name", "good", "man",
    "think", "say", "great", "where", "help", "much", "before", "line", "right", "too", "mean",
    "old", "any", "same", "tell", "boy", "follow", "came", "want", "show", "also", "around",
    "form", "three", "small", "set", "put", "end", "does", "well", "large", "must", "big", "even",
    "such", "turn", "here", "why", "ask", "went", "men", "read", "need", "land", "home", "us",
    "move", "try", "kind", "hand", "again", "change", "off", "play", "spell", "air", "away",
    "animal", "house", "point", "page", "letter", "mother", "answer", "found", "study", "still",
    "learn", "should", "world", "high", "every", "near", "add", "food", "own", "below", "plant",
    "last",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn record(input_tokens: u32, hash_ids: &[u64]) -> TraceRecord {
        TraceRecord {
            offset_ms: 0.0,
            session: None,
            input_tokens,
            output_tokens: 8,
            hash_ids: hash_ids.to_vec(),
        }
    }

    fn run(nonce: &str) -> Synthesis {
        Synthesis {
            run_nonce: nonce.to_owned(),
            words_per_token: 1.0,
        }
    }

    fn word_total(text: &str) -> usize {
        text.split_whitespace().count()
    }

    /// The length of the common byte prefix of two texts.
    fn common_prefix(a: &str, b: &str) -> usize {
        a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
    }

    #[test]
    fn the_word_list_is_200_distinct_short_lowercase_words() {
        let distinct: std::collections::HashSet<_> = WORDS.iter().collect();
        assert_eq!(distinct.len(), 200);
        assert!(
            WORDS
                .iter()
                .all(|w| (1..=6).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase()))
        );
    }

    #[test]
    fn shared_leading_hash_ids_share_exactly_those_blocks() {
        let synthesis = run("r7f3a");
        let block = 64;
        // Both share ids 10 and 11, then differ; all blocks are full.
        let a = synthesize(&record(3 * 64, &[10, 11, 12]), 0, block, &synthesis);
        let b = synthesize(&record(3 * 64 + 40, &[10, 11, 99]), 1, block, &synthesis);
        let mut prefix = "r7f3a\n".to_owned();
        push_words(&mut prefix, seed(b'b', "r7f3a", 10), 64);
        push_words(&mut prefix, seed(b'b', "r7f3a", 11), 64);
        assert!(a.starts_with(&prefix) && b.starts_with(&prefix));
        assert_eq!(
            common_prefix(&a, &b),
            prefix.len(),
            "they differ right after block 11"
        );
        assert_eq!(a.lines().count(), 4);
        // The same record again is the same text; another run shares nothing past the nonce.
        assert_eq!(
            a,
            synthesize(&record(3 * 64, &[10, 11, 12]), 0, block, &synthesis)
        );
        let other = synthesize(&record(3 * 64, &[10, 11, 12]), 0, block, &run("q0b9c"));
        assert_eq!(common_prefix(&a, &other), 0);
    }

    #[test]
    fn a_shared_first_block_alone_is_shared_then_the_prompts_part() {
        let synthesis = run("n1");
        let a = synthesize(&record(100, &[0, 1]), 0, 64, &synthesis);
        let b = synthesize(&record(100, &[0, 2]), 1, 64, &synthesis);
        let mut prefix = "n1\n".to_owned();
        push_words(&mut prefix, seed(b'b', "n1", 0), 64);
        assert_eq!(common_prefix(&a, &b), prefix.len());
        assert!(a.starts_with(&prefix));
    }

    #[test]
    fn records_without_hash_ids_share_only_the_nonce_line() {
        let synthesis = run("abc123");
        let a = synthesize(&record(50, &[]), 0, 512, &synthesis);
        let b = synthesize(&record(50, &[]), 1, 512, &synthesis);
        assert_eq!(common_prefix(&a, &b), "abc123\n".len());
        assert_eq!(a.lines().next(), Some("abc123"));
    }

    #[test]
    fn a_partial_last_block_is_a_prefix_of_the_full_block() {
        let synthesis = run("n2");
        // 100 tokens in blocks of 64: block 7 is full, block 8 holds 36 tokens.
        let short = synthesize(&record(100, &[7, 8]), 0, 64, &synthesis);
        let long = synthesize(&record(128, &[7, 8]), 1, 64, &synthesis);
        let lines: Vec<&str> = short.lines().collect();
        assert_eq!(
            lines.iter().map(|l| word_total(l)).collect::<Vec<_>>(),
            vec![1, 64, 36]
        );
        let full: Vec<&str> = long.lines().collect();
        assert!(full[2].starts_with(lines[2]) && full[2].len() > lines[2].len());
    }

    #[test]
    fn word_counts_follow_the_input_length() {
        let cases: [(u32, &[u64], f64); 6] = [
            (900, &[1, 2], 1.0),
            (900, &[], 1.0),
            (1_537, &[0, 1, 2, 3], 1.0),
            (1_000, &[0], 0.75),
            (37, &[], 1.3),
            (600, &[5, 6], 0.5),
        ];
        for (input, ids, words_per_token) in cases {
            let synthesis = Synthesis {
                run_nonce: "vernier-7e2".to_owned(),
                words_per_token,
            };
            let text = synthesize(&record(input, ids), 3, 512, &synthesis);
            let target = (f64::from(input) * words_per_token).round();
            let words = word_total(&text) as f64;
            assert!(
                (words - target).abs() <= 2.0,
                "{input} {ids:?} {words_per_token}: {words} vs {target}"
            );
        }
    }

    #[test]
    fn odd_words_per_token_values_fall_back() {
        let read = |value: f64| usable(value).to_bits();
        assert_eq!(read(f64::NAN), 1.0_f64.to_bits());
        assert_eq!(read(-2.0), 1.0_f64.to_bits());
        assert_eq!(read(0.0), 1.0_f64.to_bits());
        assert_eq!(read(f64::INFINITY), 1.0_f64.to_bits());
        assert_eq!(read(100.0), 16.0_f64.to_bits());
        assert_eq!(read(0.8), 0.8_f64.to_bits());
    }
}
