//! Reading the answer out of a reply's final content: the strict form first, then named
//! fallbacks, each answer saying which rule produced it.
//!
//! MMLU-Pro's authors read `answer is \(?([A-J])\)?` (the first match), then `.*[aA]nswer:\s*
//! ([A-J])`, then the last capital A–J anywhere, and guess at random when nothing matches
//! (`compute_accuracy.py`). Here the last answer given in any of the three marked forms wins
//! (the strictest where two read the same letter), so a reply that corrects itself is read at
//! its correction; a capital letter must stand alone, and a bare `A` or `I` followed by a word
//! ("A cell", "I think", "I'd") is the article or the pronoun; a reply with no match is
//! `no_answer` rather than a guess, and the report counts how many answers each rule produced.

use std::sync::LazyLock;

use regex::Regex;

/// The rules that read a multiple-choice answer, strictest first.
pub const CHOICE_RULES: [&str; 4] = [
    "answer_is",
    "answer_label",
    "bold_or_boxed",
    "last_line_letter",
];

/// The rules that read a final answer, strictest first.
pub const FINAL_RULES: [&str; 4] = ["boxed", "final_answer_is", "answer_label", "gsm8k_hashes"];

/// An answer read from a reply, and the rule that read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// The answer as read: a letter, or a final answer's text.
    pub answer: String,
    /// One of [`CHOICE_RULES`] or [`FINAL_RULES`].
    pub rule: &'static str,
}

/// The letter of an option index: 0 is `A`.
pub fn choice_letter(index: usize) -> char {
    u8::try_from(index)
        .ok()
        .filter(|index| *index < 26)
        .map_or('?', |index| char::from(b'A' + index))
}

#[expect(
    clippy::expect_used,
    reason = "constant patterns, covered by the tests of this module"
)]
fn pattern(source: &str) -> Regex {
    Regex::new(source).expect("a valid constant pattern")
}

// A letter stands alone when no letter or digit touches it on either side.
static ANSWER_IS: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"(?i:answer\s+is)\s*:?\s*[*_]*\s*(?i:(?:option|choice)\s*)?\(?\s*([A-J])\s*\)?[*_]*(?:[^A-Za-z0-9]|$)",
    )
});
static ANSWER_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"(?i:answer)[*_]*\s*:\s*[*_]*\s*(?i:(?:option|choice)\s*)?\(?\s*([A-J])\s*\)?[*_]*(?:[^A-Za-z0-9]|$)",
    )
});
static BOLD_OR_BOXED: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"(?:\*\*\s*\(?([A-J])\)?\s*\*\*)|(?:\\boxed\{\s*(?:\\text\{)?\s*\(?([A-J])\)?\s*\}?\s*\})",
    )
});
static LONE_LETTER: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^[\s*_>#`]*\(?([A-J])[).:]?[\s*_`.]*$"));
static FINAL_ANSWER_IS: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"(?i:(?:final\s+)?answer\s+is)\s*:?\s*(.+?)\s*$"));
static ANSWER_LINE: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^[\s*_>#`]*(?i:(?:final\s+)?answer)[*_]*\s*:\s*(.+?)\s*$"));
static HASHES: LazyLock<Regex> = LazyLock::new(|| pattern(r"^\s*####\s*(.+?)\s*$"));

fn last_capture(regex: &Regex, text: &str) -> Option<String> {
    regex.captures_iter(text).last().and_then(|captures| {
        captures
            .iter()
            .skip(1)
            .flatten()
            .next()
            .map(|found| found.as_str().to_owned())
    })
}

/// The last letter `regex` reads in `text` that stands as an answer, and where it starts. A
/// bare `A` or `I` (not in brackets, braces or bold of its own) followed by an apostrophe, or
/// by a space and a lowercase word, is the article or the pronoun, not an answer.
fn last_letter(regex: &Regex, text: &str) -> Option<(usize, String)> {
    regex
        .captures_iter(text)
        .filter_map(|captures| {
            let letter = captures.iter().skip(1).flatten().next()?;
            let before = text[..letter.start()].trim_end().chars().next_back();
            let mut after = text[letter.end()..].chars();
            let next = after.clone().next();
            let marked = matches!(before, Some('(' | '{'))
                || (matches!(before, Some('*' | '_')) && matches!(next, Some('*' | '_')));
            let word = matches!(letter.as_str(), "A" | "I")
                && !marked
                && match after.next() {
                    Some('\'' | '\u{2019}') => true,
                    Some(space) if space.is_whitespace() => {
                        after.next().is_some_and(char::is_lowercase)
                    }
                    _ => false,
                };
            (!word).then(|| (letter.start(), letter.as_str().to_owned()))
        })
        .last()
}

/// The option a reply's final content chooses, and the rule that read it: the last answer
/// given as `answer_is` ("the answer is (C)", "the answer is option C"), `answer_label`
/// ("Answer: C", "**Answer:** (C)") or `bold_or_boxed` ("**C**", `\boxed{C}`), the strictest
/// where two read the same letter; else `last_line_letter` (a last line that is only "C", "(C)"
/// or "C."). Only capital letters A–J are read; `None` when no rule matches.
///
/// ```
/// use vernier_tasks::extract_choice;
/// let read = extract_choice("**Question:** which?\n...so the answer is (C).").expect("read");
/// assert_eq!((read.answer.as_str(), read.rule), ("C", "answer_is"));
/// assert_eq!(extract_choice("A cell is alive."), None);
/// ```
pub fn extract_choice(content: &str) -> Option<Extracted> {
    let rules: [(&'static str, &Regex); 3] = [
        (CHOICE_RULES[0], &ANSWER_IS),
        (CHOICE_RULES[1], &ANSWER_LABEL),
        (CHOICE_RULES[2], &BOLD_OR_BOXED),
    ];
    let mut found: Option<(usize, Extracted)> = None;
    for (rule, regex) in rules {
        if let Some((at, answer)) = last_letter(regex, content)
            && found.as_ref().is_none_or(|(best, _)| at > *best)
        {
            found = Some((at, Extracted { answer, rule }));
        }
    }
    if let Some((_, read)) = found {
        return Some(read);
    }
    let last_line = content.lines().rev().find(|line| !line.trim().is_empty())?;
    last_letter(&LONE_LETTER, last_line).map(|(_, answer)| Extracted {
        answer,
        rule: CHOICE_RULES[3],
    })
}

/// The final answer a reply's content gives, and the rule that read it: `boxed` (the last
/// `\boxed{...}`), `final_answer_is` ("The final answer is 42", to the end of its line),
/// `answer_label` (a last "Answer: 42" line), `gsm8k_hashes` (a "#### 42" line). Decoration
/// (`$`, `**`, a trailing full stop) is left for [`crate::normalise_final`].
///
/// ```
/// use vernier_tasks::extract_final;
/// let read = extract_final("so 6 eggs.\nThe final answer is $\\boxed{18}$.").expect("read");
/// assert_eq!((read.answer.as_str(), read.rule), ("18", "boxed"));
/// assert_eq!(extract_final("#### 1,234").map(|r| r.rule), Some("gsm8k_hashes"));
/// ```
pub fn extract_final(content: &str) -> Option<Extracted> {
    if let Some((_, inner)) = crate::answer::last_boxed(content)
        && !inner.trim().is_empty()
    {
        return Some(Extracted {
            answer: inner.trim().to_owned(),
            rule: FINAL_RULES[0],
        });
    }
    let lines: Vec<&str> = content.lines().collect();
    let rules: [(&'static str, &Regex); 3] = [
        (FINAL_RULES[1], &FINAL_ANSWER_IS),
        (FINAL_RULES[2], &ANSWER_LINE),
        (FINAL_RULES[3], &HASHES),
    ];
    for (rule, regex) in rules {
        let found = lines
            .iter()
            .rev()
            .find_map(|line| last_capture(regex, line))
            .filter(|answer| !crate::dataset::normalise_final(answer).is_empty());
        if let Some(answer) = found {
            return Some(Extracted { answer, rule });
        }
    }
    None
}
