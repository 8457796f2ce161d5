//! Final answers normalised before they are compared.
//!
//! What is normalised, and nothing else: surrounding whitespace, `$` signs, `**`/`__`, a
//! trailing full stop; `\(`, `\)`, `\[`, `\]`; `\left`/`\right`, `\!`, `\,`, `\;`, `\ ` and `~`;
//! `\dfrac`/`\tfrac` to
//! `\frac`; `\text{}`/`\textbf{}`/`\mathrm{}`/`\mbox{}` to their inner text; degrees (`^\circ`,
//! `^{\circ}`, `°`) and a percent sign (`\%`, `%`); a leading currency `\$`; thousands
//! separators inside a number. A leading `x =` (one variable name and an equals sign) is kept
//! apart: two answers that both name a variable must name the same one (`y = 3` is not
//! `x = 3`), and one that names none agrees with either (`x = 3` is `3`). Then a
//! value that reads as a number (an integer, a decimal, `a/b` or `\frac{a}{b}`, signed) is
//! compared as an exact fraction, so `0.5`, `1/2` and `\frac{1}{2}` are equal and `18.00` is
//! `18`; anything else is compared as text with every space removed.

use crate::answer::{balanced_inner, gcd, parse_fraction};

/// A final answer after normalisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinalValue {
    /// An exact number: numerator and positive denominator, reduced.
    Number(i128, i128),
    /// Text, spaces removed.
    Text(String),
}

impl FinalValue {
    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        matches!(self, Self::Text(text) if text.is_empty())
    }
}

/// Reads a final answer into its normal form (see the module's list of what is normalised).
///
/// ```
/// use vernier_tasks::{FinalValue, normalise_final};
/// assert_eq!(normalise_final("$1,234.00$."), FinalValue::Number(1234, 1));
/// assert_eq!(normalise_final("\\dfrac{3}{6}"), normalise_final("0.5"));
/// assert_eq!(normalise_final("x = \\text{(2, 3)}"), FinalValue::Text("(2,3)".to_owned()));
/// ```
pub fn normalise_final(raw: &str) -> FinalValue {
    normalise_parts(raw).1
}

/// Whether a final answer agrees with the gold: equal normal forms, and the same variable name
/// where both name one.
///
/// ```
/// use vernier_tasks::final_answers_agree;
/// assert!(final_answers_agree("x = 5", "5"));
/// assert!(!final_answers_agree("y = -\\frac{47}{8}", "x = -47/8"));
/// ```
pub fn final_answers_agree(answer: &str, gold: &str) -> bool {
    let (answer_name, answer_value) = normalise_parts(answer);
    let (gold_name, gold_value) = normalise_parts(gold);
    answer_value == gold_value
        && match (answer_name, gold_name) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
}

/// The variable an answer names (`x` of `x = 5`), and its value's normal form.
fn normalise_parts(raw: &str) -> (Option<String>, FinalValue) {
    let stripped = strip(raw);
    let (name, text) = match split_variable(&stripped) {
        Some((name, value)) => (Some(name.to_owned()), strip(value)),
        None => (None, stripped),
    };
    let value = match number(&text) {
        Some((numerator, denominator)) => {
            let divisor = gcd(numerator, denominator).max(1);
            FinalValue::Number(numerator / divisor, denominator / divisor)
        }
        None => FinalValue::Text(text.chars().filter(|c| !c.is_whitespace()).collect()),
    };
    (name, value)
}

fn unwrap_commands(text: &str) -> String {
    let mut text = text.to_owned();
    for command in ["\\text{", "\\textbf{", "\\mathrm{", "\\mbox{", "\\mathbf{"] {
        while let Some(start) = text.find(command) {
            let after = &text[start + command.len()..];
            let Some(inner) = balanced_inner(after) else {
                break;
            };
            let inner = inner.to_owned();
            let end = start + command.len() + inner.len() + 1;
            text.replace_range(start..end, &inner);
        }
    }
    text
}

fn strip(raw: &str) -> String {
    let mut text = unwrap_commands(raw);
    for (from, to) in [
        ("\\(", ""),
        ("\\)", ""),
        ("\\[", ""),
        ("\\]", ""),
        ("\\left", ""),
        ("\\right", ""),
        ("\\!", ""),
        ("\\,", ""),
        ("\\;", ""),
        ("\\ ", ""),
        ("~", ""),
        ("\\dfrac", "\\frac"),
        ("\\tfrac", "\\frac"),
        ("^{\\circ}", ""),
        ("^\\circ", ""),
        ("°", ""),
        ("\\%", ""),
        ("%", ""),
        ("{,}", ","),
    ] {
        text = text.replace(from, to);
    }
    let mut text = text.trim().to_owned();
    loop {
        let next = text
            .trim()
            .trim_matches(['$', '*', '_'])
            .trim()
            .trim_end_matches('.')
            .trim()
            .trim_start_matches("\\$")
            .trim()
            .to_owned();
        if next == text {
            return text;
        }
        text = next;
    }
}

/// `x = 5` → (`x`, `5`): one variable name (a letter, optionally with a subscript) and `=`.
fn split_variable(text: &str) -> Option<(&str, &str)> {
    let (left, right) = text.split_once('=')?;
    let left = left.trim();
    let mut chars = left.chars();
    let single = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    (single && left.len() <= 3 && !right.contains('=')).then(|| (left, right.trim()))
}

/// An exact number: integer (thousands separators allowed), decimal, `a/b`, `\frac{a}{b}`.
fn number(text: &str) -> Option<(i128, i128)> {
    // "1, 234" is a list of two numbers, not one thousand two hundred and thirty-four.
    if text.contains(", ") {
        return None;
    }
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(value) = decimal(&compact) {
        return Some(value);
    }
    if let Some(rest) = compact.strip_prefix("\\frac")
        && !rest.starts_with('{')
    {
        // `\frac12`: two single digits.
        let digits: Vec<char> = rest.chars().collect();
        if digits.len() == 2 && digits.iter().all(char::is_ascii_digit) {
            return Some((
                i128::from(digits[0].to_digit(10)?),
                i128::from(digits[1].to_digit(10)?),
            ));
        }
    }
    parse_fraction(&compact).filter(|(_, denominator)| *denominator != 0)
}

/// `-12.50` → (−25, 2); an integer with thousands separators too.
fn decimal(text: &str) -> Option<(i128, i128)> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let whole = if whole.is_empty() {
        0
    } else {
        crate::answer::parse_integer(whole).filter(|value| *value >= 0)?
    };
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 30 {
        return None;
    }
    let scale = 10_i128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    let part: i128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    let magnitude = whole.checked_mul(scale)?.checked_add(part)?;
    Some((if negative { -magnitude } else { magnitude }, scale))
}
