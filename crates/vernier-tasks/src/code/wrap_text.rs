//! `wrap-text`: greedy word wrap that cuts words longer than the width.

use serde_json::json;
use vernier_grader::Case;
use vernier_stats::SplitMix64;

use super::spec::{CaseDraw, CodeTaskSpec, single_control_spec};

const DESCRIPTION: &str = r#"Write a Python function

    def wrap_text(text: str, width: int) -> list[str]:

that wraps text greedily into lines of at most `width` characters:
- Words are the runs of non-whitespace characters (as str.split() with no argument
  finds them); any run of whitespace between words, newlines included, counts as one
  separator, and lines are joined with single spaces and never start or end with one.
- Greedy: each word goes on the current line if it fits (with one space before it
  when the line is not empty); otherwise it starts a new line.
- A word longer than `width` starts a new line (unless the current line is empty) and
  is cut into `width`-sized pieces, each on its own line; the last piece may be
  shorter and stays the current line, so following words may join it.
  wrap_text("abcdefghij x", 4) is ["abcd", "efgh", "ij x"].
- Empty or whitespace-only text gives [].
- width < 1 raises ValueError.
Example: wrap_text("The quick brown fox jumps over the lazy dog", 10) is
["The quick", "brown fox", "jumps over", "the lazy", "dog"]."#;

/// The Rust reference. Lengths count characters (Python's `len` of a `str`); the
/// cases use ASCII whitespace only, which Rust and Python split on alike.
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        let line_length = line.chars().count();
        if word.len() > width {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            while word.len() > width {
                lines.push(word.drain(..width).collect());
            }
            line = word.into_iter().collect();
        } else if line.is_empty() {
            line = word.into_iter().collect();
        } else if line_length + 1 + word.len() <= width {
            line.push(' ');
            line.extend(word);
        } else {
            lines.push(std::mem::replace(&mut line, word.into_iter().collect()));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn random_text(seed: u64, words: usize) -> String {
    const SEPARATORS: [&str; 6] = [" ", " ", " ", "  ", "\t", "\n \n"];
    let mut generator = SplitMix64::new(seed);
    let mut text = String::from("  ");
    for _ in 0..words {
        let length = if generator.chance(1, 25) {
            20 + generator.index(60)
        } else {
            1 + generator.index(9)
        };
        text.extend(
            (0..length).map(|_| char::from(b'a' + u8::try_from(generator.below(26)).unwrap_or(0))),
        );
        text.push_str(SEPARATORS[generator.index(SEPARATORS.len())]);
    }
    text
}

fn case(name: &str, text: &str, width: i64) -> vernier_grader::Case {
    let input = json!({"text": text, "width": width});
    match usize::try_from(width) {
        Ok(width) if width >= 1 => Case::new(name, input, json!(wrap(text, width))),
        _ => Case::raises(name, input, "ValueError"),
    }
}

pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let mut cases = vec![
        case(
            "prompt_example",
            "The quick brown fox jumps over the lazy dog",
            10,
        ),
        case("empty", "", 5),
        case("whitespace_only", "   \t\n ", 5),
        case("collapse_whitespace", "a  b\t\tc\nd", 3),
        case("long_word_alone", "abcdefghij", 4),
        case("long_word_joined_after", "abcdefghij x", 4),
        case("long_word_mid_line", "hi abcdefghij xy", 4),
        case("long_word_exact_multiple", "abcdefgh ij", 4),
        case("exact_fit", "abcd efgh", 4),
        case("fits_on_one_line", "ab cd", 5),
        case("width_one", "a bc", 1),
        case("leading_trailing_space", "  one two  ", 20),
        case("width_zero", "some text", 0),
        case("width_negative", "some text", -3),
    ];
    let words = draw.random_size(3_000);
    cases.push(case(
        &format!("random_{words}_words_width_37"),
        &random_text(draw.seed(0x0077_7261_7001), words),
        37,
    ));
    cases.push(case(
        &format!("random_{words}_words_width_7"),
        &random_text(draw.seed(0x0077_7261_7002), words),
        7,
    ));
    for index in 1..=draw.extra_cases() {
        let width = [13, 23, 3][usize::try_from(index % 3).unwrap_or(0)];
        cases.push(case(
            &format!("random_{words}_words_width_{width}_extra_{index}"),
            &random_text(draw.extra_seed(0x0077_7261_7001, index), words),
            width,
        ));
    }
    single_control_spec!(
        id: "wrap-text",
        folder: "wrap_text",
        control: "never-splits-long-words" => "control_no_split.py",
        cases: cases,
        description: DESCRIPTION,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_from_the_spec() {
        assert_eq!(
            wrap("The quick brown fox jumps over the lazy dog", 10),
            ["The quick", "brown fox", "jumps over", "the lazy", "dog"]
        );
        assert_eq!(wrap("abcdefghij x", 4), ["abcd", "efgh", "ij x"]);
        assert_eq!(
            wrap("hi abcdefghij xy", 4),
            ["hi", "abcd", "efgh", "ij", "xy"]
        );
        assert_eq!(wrap("abcdefgh ij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap(" \t\n ", 3), Vec::<String>::new());
        assert_eq!(wrap("a  b\t\tc\nd", 3), ["a b", "c d"]);
    }

    #[test]
    fn random_text_lines_respect_the_width() {
        let lines = wrap(&random_text(0x0077_7261_7001, 3_000), 37);
        assert!(lines.iter().all(|line| (1..=37).contains(&line.len())));
        assert!(
            lines.iter().filter(|line| line.len() == 37).count() > 20,
            "long words are cut"
        );
    }
}
