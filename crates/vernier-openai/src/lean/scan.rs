//! A reader written for the usual chunk, in one pass over its bytes: the same [`LeanChunk`] a
//! derived deserializer builds, at a fraction of the instructions (the derived one spends most
//! of its time in generic machinery, matching keys and skipping values field by field).
//!
//! It takes only the plain shapes servers send: known keys without escapes, each at most once;
//! strings, `null`, integers where integers belong. On anything else (a duplicate key, a number
//! with a fraction, an object where a string belongs, any doubt) it gives up and the derived
//! deserializer reads the chunk instead, so a chunk it reads is one that deserializer reads
//! alike. Strings with escapes are decoded by `serde_json` itself.

use std::borrow::Cow;

use serde::de::IgnoredAny;

use super::chunk::{
    AString, AnInteger, Count, LeanChoice, LeanChunk, LeanCompletionDetails, LeanDelta,
    LeanPromptDetails, LeanUsage,
};

/// Reads `data` as a [`LeanChunk`], or `None` where it is not one of the plain shapes.
pub(super) fn scan(data: &str) -> Option<LeanChunk<'_>> {
    let mut scanner = Scanner {
        text: data,
        bytes: data.as_bytes(),
        at: 0,
    };
    let chunk = scanner.chunk()?;
    scanner.skip_whitespace();
    (scanner.at == scanner.bytes.len()).then_some(chunk)
}

/// The offset of the first quote, backslash or control character in `bytes`, eight bytes at
/// a time: a mask sets the high bit of each byte that is one of them (the lowest set bit is
/// always a true match: the borrows that can flag a byte wrongly only run upward from one).
fn special_byte(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
    let mut words = bytes.chunks_exact(8);
    let mut offset = 0;
    for word in &mut words {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(word).ok()?);
        let mask = below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1)
            | below(word, 0x20);
        if mask != 0 {
            return Some(offset + (mask.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)
        .map(|at| offset + at)
}

/// The keys of each object, in the order servers usually send them.
const CHUNK_KEYS: &[&[u8]] = &[
    b"id",
    b"object",
    b"created",
    b"model",
    b"system_fingerprint",
    b"choices",
    b"usage",
    b"service_tier",
    b"obfuscation",
];
const CHOICE_KEYS: &[&[u8]] = &[
    b"index",
    b"delta",
    b"logprobs",
    b"finish_reason",
    b"token_ids",
    b"stop_reason",
    b"matched_stop",
];
const DELTA_KEYS: &[&[u8]] = &[
    b"role",
    b"content",
    b"reasoning_content",
    b"reasoning",
    b"tool_calls",
];
const USAGE_KEYS: &[&[u8]] = &[
    b"prompt_tokens",
    b"total_tokens",
    b"completion_tokens",
    b"prompt_tokens_details",
    b"completion_tokens_details",
];

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

/// Keys seen so far in one object, one bit each: a key seen twice gives up (the derived
/// deserializer refuses duplicate fields).
#[derive(Default)]
struct Seen(u16);

impl Seen {
    fn first(&mut self, bit: u16) -> Option<()> {
        let mask = 1 << bit;
        if self.0 & mask != 0 {
            return None;
        }
        self.0 |= mask;
        Some(())
    }
}

impl<'a> Scanner<'a> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn word(&mut self, word: &[u8]) -> bool {
        self.skip_whitespace();
        let found = self.bytes[self.at..].starts_with(word);
        if found {
            self.at += word.len();
        }
        found
    }

    /// A key, as the one of `keys` it is. Every key the chunk knows is plain ASCII, so a key
    /// is one of them when its bytes are followed by the closing quote; any other key (one
    /// with an escape, even one whose escapes spell a known key) is none of them, and the
    /// chunk goes to the derived deserializer. Servers send the keys of an object in one
    /// order, so the search starts after the key found last.
    fn key(&mut self, keys: &[&'static [u8]], next: &mut usize) -> Option<&'static [u8]> {
        self.eat(b'"')?;
        let rest = &self.bytes[self.at..];
        for turn in 0..keys.len() {
            let index = (*next + turn) % keys.len();
            let key = keys[index];
            if rest.len() > key.len() && rest[key.len()] == b'"' && rest.starts_with(key) {
                self.at += key.len() + 1;
                *next = index + 1;
                return Some(key);
            }
        }
        None
    }

    /// An object of `keys`: `field` reads the value of each key.
    fn object(
        &mut self,
        keys: &[&'static [u8]],
        mut field: impl FnMut(&mut Self, &'static [u8]) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        let mut next = 0;
        loop {
            let key = self.key(keys, &mut next)?;
            self.eat(b':')?;
            field(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array: `item` reads each element.
    fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string, borrowed where it has no escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.at;
        let end = start + special_byte(&self.bytes[start..])?;
        match self.bytes[end] {
            b'"' => {
                self.at = end + 1;
                return Some(Cow::Borrowed(&self.text[start..end]));
            }
            b'\\' => {}
            // A control character is not allowed inside a JSON string.
            _ => return None,
        }
        let mut close = end;
        loop {
            match *self.bytes.get(close)? {
                b'\\' => close += 2,
                b'"' => break,
                _ => close += 1,
            }
        }
        // Both ends are quotes (ASCII), so the slice falls on character boundaries.
        let decoded: String = serde_json::from_str(&self.text[start - 1..=close]).ok()?;
        self.at = close + 1;
        Some(Cow::Owned(decoded))
    }

    /// `null`, or a string, into `slot`.
    fn optional_string(&mut self, slot: &mut Option<Cow<'a, str>>) -> Option<()> {
        *slot = if self.word(b"null") {
            None
        } else {
            Some(self.string()?)
        };
        Some(())
    }

    /// An integer that fits a `u64`: digits only, no leading zero, no fraction or exponent.
    fn integer(&mut self) -> Option<u64> {
        /// The most digits whose value always fits a `u64` (10^19 − 1 < 2^64).
        const SAFE_DIGITS: usize = 19;
        self.skip_whitespace();
        let rest = &self.bytes[self.at..];
        // One pass: up to SAFE_DIGITS digits need no overflow check; more take the checked way.
        let mut value: u64 = 0;
        let mut digits = 0;
        for &byte in rest {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            if digits == SAFE_DIGITS {
                return self.long_integer();
            }
            value = value * 10 + u64::from(digit);
            digits += 1;
        }
        if digits == 0 || (digits > 1 && rest[0] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = rest.get(digits) {
            return None;
        }
        self.at += digits;
        Some(value)
    }

    /// An integer of more than 19 digits: a `u64` when it fits (no leading zero: it has
    /// more than one digit, and its first is not zero as its first nineteen were read).
    fn long_integer(&mut self) -> Option<u64> {
        let rest = &self.bytes[self.at..];
        let digits = rest
            .iter()
            .position(|byte| !byte.is_ascii_digit())
            .unwrap_or(rest.len());
        if rest[0] == b'0' || matches!(rest.get(digits), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let value = rest[..digits].iter().try_fold(0_u64, |value, byte| {
            value.checked_mul(10)?.checked_add(u64::from(byte - b'0'))
        })?;
        self.at += digits;
        Some(value)
    }

    /// `null`, or an integer, into `slot`.
    fn optional_integer(&mut self, slot: &mut Option<u64>) -> Option<()> {
        *slot = if self.word(b"null") {
            None
        } else {
            Some(self.integer()?)
        };
        Some(())
    }

    /// A value the chunk does not keep, of the plain kinds: a string, `null`, a boolean or an
    /// integer.
    fn ignored(&mut self) -> Option<IgnoredAny> {
        match self.peek()? {
            b'"' => self.string().map(|_| IgnoredAny),
            b'0'..=b'9' => self.integer().map(|_| IgnoredAny),
            _ if self.word(b"null") || self.word(b"true") || self.word(b"false") => {
                Some(IgnoredAny)
            }
            _ => None,
        }
    }

    fn chunk(&mut self) -> Option<LeanChunk<'a>> {
        let mut chunk = LeanChunk {
            _id: AString,
            object: Cow::default(),
            _created: AnInteger,
            model: Cow::default(),
            _system_fingerprint: IgnoredAny,
            _service_tier: IgnoredAny,
            _obfuscation: IgnoredAny,
            choices: Vec::new(),
            usage: None,
        };
        let mut seen = Seen::default();
        self.object(CHUNK_KEYS, |this, key| match key {
            b"id" => {
                seen.first(0)?;
                this.string().map(|_| ())
            }
            b"object" => {
                seen.first(1)?;
                chunk.object = this.string()?;
                Some(())
            }
            b"created" => {
                seen.first(2)?;
                this.integer().map(|_| ())
            }
            b"model" => {
                seen.first(3)?;
                chunk.model = this.string()?;
                Some(())
            }
            b"system_fingerprint" => {
                seen.first(4)?;
                this.ignored().map(|_| ())
            }
            b"service_tier" => {
                seen.first(5)?;
                this.ignored().map(|_| ())
            }
            b"obfuscation" => {
                seen.first(6)?;
                this.ignored().map(|_| ())
            }
            b"choices" => {
                seen.first(7)?;
                this.array(|this| {
                    let choice = this.choice()?;
                    chunk.choices.push(choice);
                    Some(())
                })
            }
            b"usage" => {
                seen.first(8)?;
                chunk.usage = if this.word(b"null") {
                    None
                } else {
                    Some(this.usage()?)
                };
                Some(())
            }
            _ => None,
        })?;
        Some(chunk)
    }

    fn choice(&mut self) -> Option<LeanChoice<'a>> {
        let mut choice = LeanChoice {
            index: 0,
            delta: LeanDelta::default(),
            finish_reason: None,
            _logprobs: None,
            token_ids: None,
            _stop_reason: IgnoredAny,
            _matched_stop: IgnoredAny,
        };
        let mut seen = Seen::default();
        self.object(CHOICE_KEYS, |this, key| match key {
            b"index" => {
                seen.first(0)?;
                choice.index = u32::try_from(this.integer()?).ok()?;
                Some(())
            }
            b"delta" => {
                seen.first(1)?;
                choice.delta = this.delta()?;
                Some(())
            }
            b"finish_reason" => {
                seen.first(2)?;
                this.optional_string(&mut choice.finish_reason)
            }
            // Log-probabilities are read by the whole chunk: only `null` here.
            b"logprobs" => {
                seen.first(3)?;
                this.word(b"null").then_some(())
            }
            b"token_ids" => {
                seen.first(4)?;
                choice.token_ids = if this.word(b"null") {
                    None
                } else {
                    let mut n = 0;
                    this.array(|this| {
                        u32::try_from(this.integer()?).ok()?;
                        n += 1;
                        Some(())
                    })?;
                    Some(Count(n))
                };
                Some(())
            }
            b"stop_reason" => {
                seen.first(5)?;
                this.ignored().map(|_| ())
            }
            b"matched_stop" => {
                seen.first(6)?;
                this.ignored().map(|_| ())
            }
            _ => None,
        })?;
        Some(choice)
    }

    fn delta(&mut self) -> Option<LeanDelta<'a>> {
        let mut delta = LeanDelta::default();
        let mut seen = Seen::default();
        self.object(DELTA_KEYS, |this, key| {
            let slot = match key {
                b"role" => {
                    seen.first(0)?;
                    &mut delta.role
                }
                b"content" => {
                    seen.first(1)?;
                    &mut delta.content
                }
                b"reasoning_content" => {
                    seen.first(2)?;
                    &mut delta.reasoning_content
                }
                b"reasoning" => {
                    seen.first(3)?;
                    &mut delta.reasoning
                }
                // Only an empty list or `null`: a fragment is read by the whole chunk.
                b"tool_calls" => {
                    seen.first(4)?;
                    if !this.word(b"null") {
                        this.array(|_| None)?;
                    }
                    return Some(());
                }
                _ => return None,
            };
            this.optional_string(slot)
        })?;
        Some(delta)
    }

    fn usage(&mut self) -> Option<LeanUsage> {
        let mut usage = LeanUsage {
            prompt_tokens: 0,
            completion_tokens: 0,
            total_tokens: 0,
            prompt_tokens_details: None,
            completion_tokens_details: None,
        };
        let mut seen = Seen::default();
        self.object(USAGE_KEYS, |this, key| match key {
            b"prompt_tokens" => {
                seen.first(0)?;
                usage.prompt_tokens = this.integer()?;
                Some(())
            }
            b"completion_tokens" => {
                seen.first(1)?;
                usage.completion_tokens = this.integer()?;
                Some(())
            }
            b"total_tokens" => {
                seen.first(2)?;
                usage.total_tokens = this.integer()?;
                Some(())
            }
            b"prompt_tokens_details" => {
                seen.first(3)?;
                usage.prompt_tokens_details = if this.word(b"null") {
                    None
                } else {
                    let mut cached_tokens = None;
                    let mut seen = Seen::default();
                    this.object(&[b"cached_tokens"], |this, key| match key {
                        b"cached_tokens" => {
                            seen.first(0)?;
                            this.optional_integer(&mut cached_tokens)
                        }
                        _ => None,
                    })?;
                    Some(LeanPromptDetails { cached_tokens })
                };
                Some(())
            }
            b"completion_tokens_details" => {
                seen.first(4)?;
                usage.completion_tokens_details = if this.word(b"null") {
                    None
                } else {
                    let mut reasoning_tokens = None;
                    let mut seen = Seen::default();
                    this.object(&[b"reasoning_tokens"], |this, key| match key {
                        b"reasoning_tokens" => {
                            seen.first(0)?;
                            this.optional_integer(&mut reasoning_tokens)
                        }
                        _ => None,
                    })?;
                    Some(LeanCompletionDetails { reasoning_tokens })
                };
                Some(())
            }
            _ => None,
        })?;
        Some(usage)
    }
}

#[cfg(test)]
mod tests {
    use super::scan;
    use crate::lean::LeanChunk;

    /// Chunks as servers send them: llama-server b11434 and llama-cpp-python 0.3.36 (from
    /// `fixtures/real-transcripts`), the simulator's vLLM shape with token ids and per-event
    /// usage, `SGLang`'s `matched_stop` with vLLM's empty tool-call list, a reasoning delta, a
    /// finish chunk and a final usage chunk.
    const SHAPES: [&str; 8] = [
        r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" hello"}}],"created":1795972504,"id":"chatcmpl-x58W","model":"gemma-3-270m-q4_k_m","system_fingerprint":"b11434-unknown","object":"chat.completion.chunk"}"#,
        r#"{"id": "chatcmpl-eba8", "model": "gemma-3-270m-q4_k_m", "created": 1795973269, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Say"}, "logprobs": null, "finish_reason": null}]}"#,
        r#"{"id":"chatcmpl-e3dd","object":"chat.completion.chunk","created":1796187449,"model":"vernier-sim","choices":[{"index":0,"delta":{"content":" wa\u00efter\n"},"logprobs":null,"finish_reason":null,"token_ids":[160,7]}],"usage":{"prompt_tokens":8,"total_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"a","tool_calls":[]},"matched_stop":null,"stop_reason":null}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think","content":null}}],"service_tier":"default","obfuscation":"xY"}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"length","stop_reason":128001}]}"#,
        r#"{"id":"c","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":200,"total_tokens":212,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":null}}}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"\"quoted\" \\ back \ud83d\ude00"}}]}"#,
    ];

    /// The scanner against the derived deserializer (the reference): where the scanner reads
    /// a chunk, the two readings are equal.
    fn agrees(data: &str) -> bool {
        match scan(data) {
            Some(scanned) => {
                assert_eq!(Some(&scanned), LeanChunk::derived(data).as_ref(), "{data}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn the_usual_shapes_are_scanned_and_read_as_the_derived_deserializer_reads_them() {
        for data in SHAPES {
            assert!(agrees(data), "not scanned: {data}");
        }
        // Escapes are decoded: " waïter\n" is nine bytes, the emoji four.
        let vllm = scan(SHAPES[2]).expect("scanned");
        assert_eq!(vllm.content_len(), 9);
        assert_eq!(vllm.token_id_count(), Some(2));
        let quoted = scan(SHAPES[7]).expect("scanned");
        assert_eq!(
            quoted.choices[0].delta.content.as_deref(),
            Some("\"quoted\" \\ back \u{1f600}")
        );
    }

    #[test]
    fn every_recorded_chunk_is_scanned_as_the_derived_deserializer_reads_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/real-transcripts");
        let (mut chunks, mut scanned) = (0, 0);
        for server in std::fs::read_dir(&root).expect("the recordings") {
            let server = server.expect("a recording folder").path();
            let Ok(files) = std::fs::read_dir(&server) else {
                continue;
            };
            for file in files {
                let path = file.expect("a recording").path();
                if path.extension().is_none_or(|ext| ext != "sse") {
                    continue;
                }
                let bytes = std::fs::read(&path).expect("readable");
                let mut decoder = crate::SseDecoder::default();
                let mut events = Vec::new();
                decoder.decode(&bytes, &mut events).expect("decodes");
                decoder.finish(&mut events).expect("finishes");
                for event in events.iter().filter(|event| !event.is_done()) {
                    chunks += 1;
                    scanned += usize::from(agrees(&event.data));
                }
            }
        }
        // Most recorded chunks are plain text deltas; the rest (timings, logprobs, tool
        // calls, errors) are left to the other readings.
        assert!(chunks > 50, "{chunks} chunks");
        assert!(scanned * 2 > chunks, "{scanned} of {chunks} scanned");
    }

    #[test]
    fn no_change_to_a_chunk_makes_the_scanner_read_it_otherwise_than_the_derived_deserializer() {
        // Every shape, changed at every character: one deleted, or a piece inserted that JSON
        // allows there or not (whitespace, separators, escapes, numbers out of range or with
        // fractions, other literals, control characters, a duplicate or unknown key).
        let pieces = [
            " ",
            "\n",
            "\t",
            "\r",
            ",",
            ":",
            "\"",
            "\\",
            "\\n",
            "\\u00e9",
            "\\ud83d",
            "0",
            "-1",
            "1.5",
            "1e2",
            "null",
            "true",
            "[]",
            "{}",
            "\u{1}",
            "é",
            "\"x\":1,",
            "\"index\":1,",
            "\"content\":\"a\",",
            "99999999999999999999",
            "18446744073709551615",
            "1844674407370955161",
            "4294967296",
        ];
        let (mut cases, mut scanned) = (0_usize, 0_usize);
        for data in SHAPES {
            for (at, character) in data.char_indices() {
                let deleted = format!("{}{}", &data[..at], &data[at + character.len_utf8()..]);
                cases += 1;
                scanned += usize::from(agrees(&deleted));
                for piece in pieces {
                    let inserted = format!("{}{piece}{}", &data[..at], &data[at..]);
                    cases += 1;
                    scanned += usize::from(agrees(&inserted));
                }
            }
        }
        // Whitespace between tokens and digits inside numbers keep many changed chunks
        // readable: the check above ran on them.
        assert!(
            scanned > 1_000,
            "{scanned} of {cases} changed chunks scanned"
        );
    }
}
