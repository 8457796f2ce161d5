//! The simulator's deterministic tokenizer and text generator.
//!
//! A token is a match of the regex `\w+|[^\w\s]` (a run of word characters, or one
//! punctuation character); whitespace is not a token. A token's id is the 64-bit FNV-1a hash
//! of its text modulo 50,000. A chat prompt costs `tokens(content) + 4` per message plus 3, as
//! a chat template would add role markers and a generation prompt.
//!
//! Tools and tool calls are rendered as content, so that rule holds for them too:
//!
//! - When a request offers tools, they come first, as one pseudo-message with role `tools`
//!   whose content is, per tool, its name, its description and the compact JSON of its
//!   parameters ([`sim_tools_content`]). No tools, no such message.
//! - An assistant message's content is its text followed by each tool call's name and
//!   argument string, in order ([`sim_assistant_content`]); an assistant message with
//!   `content: null` is just its tool calls.
//! - A `tool` message is `<|start|> tool <|sep|> result <|end|>`; its `tool_call_id` and
//!   `name` are not rendered.
//!
//! So the tokens of a conversation are a strict prefix of those of the same conversation with
//! the assistant's reply and more messages appended (each message renders on its own, and the
//! prompt's closing `<|start|> assistant <|sep|>` is how the reply's message opens), which is
//! what lets a multi-turn conversation hit the prefix cache. A reply's tokens as generated are
//! the tokens it has when sent back as an assistant message: content, then for a tool call its
//! name's tokens and its arguments' tokens.

use std::sync::LazyLock;

use regex::Regex;

use vernier_stats::SplitMix64;

/// Vocabulary size: every token id is below this.
pub const VOCAB_SIZE: u32 = 50_000;

static PIECE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\w+|[^\w\s]").expect("the token pattern is valid"));

/// The token id of one piece of text: FNV-1a (64-bit) of its UTF-8 bytes, modulo 50,000.
pub fn token_id(piece: &str) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in piece.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    u32::try_from(hash % u64::from(VOCAB_SIZE)).unwrap_or(0)
}

/// Token ids of `text` (see the module docs for the rule).
pub fn sim_tokenize(text: &str) -> Vec<u32> {
    PIECE
        .find_iter(text)
        .map(|m| token_id(m.as_str()))
        .collect()
}

/// Token ids of a chat conversation given as `(role, content)` pairs, with the template
/// overhead: each message is `<|start|> role <|sep|> content <|end|>` (content + 4 tokens),
/// and the prompt ends with `<|start|> assistant <|sep|>` (3 tokens). Offered tools go first
/// as `("tools", sim_tools_content(tools))`, and an assistant message's content is
/// [`sim_assistant_content`] of its text and tool calls (see the module docs).
pub fn sim_chat_tokenize<'a>(messages: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<u32> {
    let start = token_id("<|start|>");
    let separator = token_id("<|sep|>");
    let end = token_id("<|end|>");
    let mut tokens = Vec::new();
    for (role, content) in messages {
        tokens.push(start);
        tokens.push(token_id(role));
        tokens.push(separator);
        tokens.extend(sim_tokenize(content));
        tokens.push(end);
    }
    tokens.extend([start, token_id("assistant"), separator]);
    tokens
}

/// The content of the leading `tools` pseudo-message for these `OpenAI` tool objects: per
/// tool, a line of its name, its description and the compact JSON of its parameters (each
/// left out when absent). Reads `function.name` etc., or the same keys at the top level for
/// tools written without the `function` wrapper.
///
/// Render it as the first message, `("tools", content)`, of [`sim_chat_tokenize`] when the
/// request offers any tool.
pub fn sim_tools_content(tools: &[serde_json::Value]) -> String {
    tools
        .iter()
        .map(|tool| {
            let function = tool.get("function").unwrap_or(tool);
            let mut parts: Vec<String> = Vec::new();
            for key in ["name", "description"] {
                if let Some(text) = function.get(key).and_then(serde_json::Value::as_str) {
                    parts.push(text.to_owned());
                }
            }
            if let Some(parameters) = function.get("parameters") {
                parts.push(parameters.to_string());
            }
            parts.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The content an assistant message is rendered with: its text, then each tool call's
/// `(name, arguments)`, separated by whitespace, so its tokens are the text's tokens followed
/// by each name's and each argument string's tokens.
pub fn sim_assistant_content<'a>(
    content: &str,
    tool_calls: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let mut rendered = content.to_owned();
    for (name, arguments) in tool_calls {
        for part in [name, arguments] {
            if !rendered.is_empty() {
                rendered.push('\n');
            }
            rendered.push_str(part);
        }
    }
    rendered
}

/// A few words from the built-in word list (for generated tool-call arguments).
pub(crate) fn generate_words(rng: &mut SplitMix64, n: usize) -> Vec<&'static str> {
    (0..n)
        .map(|_| WORDS[rng.below_mod(WORD_COUNT) as usize])
        .collect()
}

/// One generated or scripted token: its text (with any leading whitespace) and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) text: String,
    pub(crate) id: u32,
}

/// Splits `text` into one piece per token; each piece keeps the whitespace before it, and
/// trailing whitespace joins the last piece, so the pieces concatenate back to `text`.
pub(crate) fn pieces(text: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut last_end = 0;
    for m in PIECE.find_iter(text) {
        out.push(Piece {
            text: text[last_end..m.end()].to_owned(),
            id: token_id(m.as_str()),
        });
        last_end = m.end();
    }
    if let Some(last) = out.last_mut() {
        last.text.push_str(&text[last_end..]);
    }
    out
}

/// Whether a prompt looks like code (it then gets code text and code acceptance rates).
pub(crate) fn looks_like_code(text: &str) -> bool {
    ["def ", "fn ", "{", ";\n", "#include", "=>"]
        .iter()
        .any(|marker| text.contains(marker))
}

const WORDS: &[&str] = &[
    "the",
    "river",
    "morning",
    "light",
    "across",
    "valley",
    "quiet",
    "stone",
    "bridge",
    "over",
    "water",
    "children",
    "walked",
    "slowly",
    "toward",
    "market",
    "where",
    "bread",
    "was",
    "warm",
    "and",
    "people",
    "spoke",
    "about",
    "weather",
    "harvest",
    "coming",
    "season",
    "old",
    "library",
    "held",
    "letters",
    "from",
    "travellers",
    "who",
    "had",
    "crossed",
    "mountains",
    "in",
    "winter",
    "every",
    "evening",
    "lamps",
    "were",
    "lit",
    "along",
    "narrow",
    "streets",
    "near",
    "harbour",
    "ships",
    "arrived",
    "with",
    "spices",
    "cloth",
    "news",
    "distant",
    "cities",
    "a",
    "teacher",
    "explained",
    "how",
    "bees",
    "build",
    "their",
    "hives",
    "garden",
    "grew",
    "tomatoes",
    "beans",
    "under",
    "careful",
    "hands",
    "of",
    "neighbours",
    "café",
    "naïve",
    "façade",
    "résumé",
    "über",
    "déjà",
    "piñata",
    "storm",
    "passed",
    "before",
    "noon",
    "leaving",
    "clean",
    "air",
    "bright",
    "fields",
    "clock",
    "tower",
    "rang",
    "twelve",
    "times",
    "is",
    "it",
    "that",
    "they",
    "this",
];

#[expect(
    clippy::cast_possible_truncation,
    reason = "the word list has about a hundred entries"
)]
const WORD_COUNT: u32 = WORDS.len() as u32;

const CODE: &str = "def total_price(items, tax_rate):
    subtotal = 0
    for item in items:
        if item.quantity > 0:
            subtotal += item.price * item.quantity
    tax = subtotal * tax_rate
    return round(subtotal + tax, 2)

fn parse_line(line: &str) -> Option<(String, u32)> {
    let mut parts = line.split(',');
    let name = parts.next()?.trim().to_string();
    let count = parts.next()?.trim().parse().ok()?;
    Some((name, count))
}
";

/// Exactly `n` prose tokens drawn from a built-in word list.
pub(crate) fn generate_prose(rng: &mut SplitMix64, n: usize) -> Vec<Piece> {
    let mut out = Vec::with_capacity(n);
    let mut words_in_sentence = 0_u32;
    let mut sentence_length = 8 + rng.below_mod(8);
    while out.len() < n {
        if words_in_sentence >= sentence_length {
            out.push(piece_of(".", ""));
            words_in_sentence = 0;
            sentence_length = 8 + rng.below_mod(8);
            continue;
        }
        if words_in_sentence > 2 && rng.below_mod(12) == 0 {
            out.push(piece_of(",", ""));
        }
        if out.len() >= n {
            break;
        }
        let word = WORDS[rng.below_mod(WORD_COUNT) as usize];
        let text = if words_in_sentence == 0 {
            capitalise(word)
        } else {
            word.to_owned()
        };
        let prefix = if out.is_empty() { "" } else { " " };
        out.push(piece_of(&text, prefix));
        words_in_sentence += 1;
    }
    out.truncate(n);
    out
}

/// Exactly `n` code-like tokens, repeating a built-in snippet.
pub(crate) fn generate_code(n: usize) -> Vec<Piece> {
    static SNIPPET: LazyLock<Vec<Piece>> = LazyLock::new(|| pieces(CODE.trim_end()));
    let mut out = Vec::with_capacity(n);
    let mut first_round = true;
    while out.len() < n {
        for (index, piece) in SNIPPET.iter().enumerate() {
            if out.len() >= n {
                break;
            }
            if index == 0 && !first_round {
                out.push(Piece {
                    text: format!("\n\n{}", piece.text),
                    id: piece.id,
                });
            } else {
                out.push(piece.clone());
            }
        }
        first_round = false;
    }
    out
}

fn piece_of(token: &str, prefix: &str) -> Piece {
    Piece {
        text: format!("{prefix}{token}"),
        id: token_id(token),
    }
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizes_words_and_punctuation() {
        assert_eq!(sim_tokenize("Hello, world!").len(), 4);
        assert_eq!(sim_tokenize("  café au lait  ").len(), 3);
        assert_eq!(sim_tokenize("fn main() {}").len(), 6);
        assert!(sim_tokenize("").is_empty());
        assert_eq!(sim_tokenize("same same"), vec![token_id("same"); 2]);
        assert!(sim_tokenize("a b c ; ~").iter().all(|id| *id < VOCAB_SIZE));
    }

    #[test]
    fn fnv1a_matches_reference_values() {
        // FNV-1a 64 reference values from the FNV specification's test suite:
        // "" -> 0xcbf29ce484222325, "a" -> 0xaf63dc4c8601ec8c.
        assert_eq!(
            token_id(""),
            u32::try_from(0xcbf2_9ce4_8422_2325_u64 % 50_000).expect("small")
        );
        assert_eq!(
            token_id("a"),
            u32::try_from(0xaf63_dc4c_8601_ec8c_u64 % 50_000).expect("small")
        );
    }

    #[test]
    fn chat_template_overhead_is_four_per_message_plus_three() {
        let tokens = sim_chat_tokenize([("system", "Be brief."), ("user", "Hi there")]);
        assert_eq!(tokens.len(), (3 + 4) + (2 + 4) + 3);
    }

    #[test]
    fn tools_and_tool_calls_keep_the_overhead_rule_and_the_prefix() {
        let tools = [serde_json::json!({"type": "function", "function": {
            "name": "web_search",
            "description": "Search the web.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        }})];
        let tools_content = sim_tools_content(&tools);
        // Compact JSON, as serde_json writes it.
        let parameters = tools[0]["function"]["parameters"].to_string();
        assert!(!parameters.contains(' '), "{parameters}");
        assert_eq!(
            sim_tokenize(&tools_content),
            sim_tokenize(&format!("web_search Search the web. {parameters}"))
        );
        let call = sim_assistant_content("", [("web_search", r#"{"query":"bread"}"#)]);
        let turn_1 = [("tools", tools_content.as_str()), ("user", "Find bread.")];
        let turn_2 = [
            ("tools", tools_content.as_str()),
            ("user", "Find bread."),
            ("assistant", call.as_str()),
            ("tool", "At the market."),
        ];
        let first = sim_chat_tokenize(turn_1);
        let second = sim_chat_tokenize(turn_2);
        let content: usize = turn_2.iter().map(|(_, c)| sim_tokenize(c).len()).sum();
        assert_eq!(second.len(), content + 4 * turn_2.len() + 3);
        // Turn 1's prompt, then the call as generated: name tokens, then argument tokens.
        let generated = [
            sim_tokenize("web_search"),
            sim_tokenize(r#"{"query":"bread"}"#),
        ];
        assert!(second.starts_with(&[first, generated.concat()].concat()));
    }

    #[test]
    fn pieces_round_trip_and_count() {
        let text = "  Hello, wörld!\n  fn x() {}  ";
        let split = pieces(text);
        assert_eq!(split.len(), sim_tokenize(text).len());
        assert_eq!(
            split.iter().map(|p| p.text.as_str()).collect::<String>(),
            text
        );
    }

    #[test]
    fn generated_text_has_exactly_the_asked_token_count() {
        let mut rng = SplitMix64::new(7);
        for n in [0, 1, 2, 17, 256, 1000] {
            let prose = generate_prose(&mut rng, n);
            assert_eq!(prose.len(), n);
            let text: String = prose.iter().map(|p| p.text.as_str()).collect();
            assert_eq!(sim_tokenize(&text).len(), n, "prose {n}: {text}");
            let ids: Vec<u32> = prose.iter().map(|p| p.id).collect();
            assert_eq!(sim_tokenize(&text), ids);
            let code = generate_code(n);
            let text: String = code.iter().map(|p| p.text.as_str()).collect();
            assert_eq!(sim_tokenize(&text).len(), n, "code {n}");
        }
    }

    #[test]
    fn code_detection() {
        assert!(looks_like_code("def f(x):\n  return x"));
        assert!(looks_like_code("int main() { return 0; }"));
        assert!(!looks_like_code("Tell me about rivers."));
    }
}
