//! Answer extraction and number parsing for the math tasks.
//!
//! Only the final content of a reply is ever passed here, never the reasoning.

/// The answer a reply gives: the value of its last `ANSWER:` line or of its last `\boxed{...}`,
/// whichever comes later in the content.
///
/// Markdown emphasis, surrounding `$` signs, an inner `\boxed{}` and a trailing full stop are
/// stripped. Returns `None` when the content has neither form (or only empty ones).
///
/// ```
/// use vernier_tasks::extract_answer;
/// assert_eq!(extract_answer("work...\nANSWER: 2,131").as_deref(), Some("2,131"));
/// assert_eq!(extract_answer("so $\\boxed{649}$.").as_deref(), Some("649"));
/// assert_eq!(extract_answer("no answer here"), None);
/// ```
pub fn extract_answer(content: &str) -> Option<String> {
    let line = last_answer_line(content);
    let boxed = last_boxed(content);
    let (_, raw) = match (line, boxed) {
        (Some(l), Some(b)) => {
            if b.0 > l.0 {
                b
            } else {
                l
            }
        }
        (Some(l), None) => l,
        (None, Some(b)) => b,
        (None, None) => return None,
    };
    let cleaned = clean_value(&raw);
    (!cleaned.is_empty()).then_some(cleaned)
}

/// The byte offset and value of the last non-empty `ANSWER:` line.
fn last_answer_line(content: &str) -> Option<(usize, String)> {
    let mut found = None;
    let mut offset = 0;
    for line in content.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start_matches(|c: char| c.is_whitespace() || "*_#>`".contains(c));
        let Some(head) = trimmed.get(..6) else {
            continue;
        };
        if !head.eq_ignore_ascii_case("answer") {
            continue;
        }
        let rest = trimmed[6..].trim_start_matches(['*', '_', ' ']);
        let Some(value) = rest.strip_prefix(':') else {
            continue;
        };
        let value = value.trim();
        if !clean_value(value).is_empty() {
            found = Some((start, value.to_owned()));
        }
    }
    found
}

/// The byte offset and inner text of the last `\boxed{...}` with balanced braces.
pub(crate) fn last_boxed(content: &str) -> Option<(usize, String)> {
    let mut found = None;
    let mut search_from = 0;
    while let Some(relative) = content[search_from..].find("\\boxed{") {
        let start = search_from + relative;
        let inner_start = start + "\\boxed{".len();
        if let Some(inner) = balanced_inner(&content[inner_start..]) {
            found = Some((start, inner.to_owned()));
        }
        search_from = inner_start;
    }
    found
}

/// The text up to the brace that closes an already opened `{`.
pub(crate) fn balanced_inner(text: &str) -> Option<&str> {
    let mut depth = 1_usize;
    for (index, character) in text.char_indices() {
        match character {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[..index]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Strips decoration around a value: emphasis, `$`, `\boxed{}`, `\text{}`, a trailing full stop.
fn clean_value(raw: &str) -> String {
    let mut value = raw.trim();
    loop {
        let mut next = value
            .trim_matches(['*', '`', '$', '_'])
            .trim()
            .trim_end_matches('.')
            .trim();
        for wrapper in ["\\boxed{", "\\text{"] {
            if let Some(rest) = next.strip_prefix(wrapper)
                && let Some(inner) = balanced_inner(rest)
                && inner.len() + 1 == rest.len()
            {
                next = inner.trim();
            }
        }
        if next == value {
            return value.to_owned();
        }
        value = next;
    }
}

/// Parses an integer answer: optional sign, digits, optionally grouped in threes by commas
/// (`2,131`, LaTeX `2{,}131` and `2\,131` too). Returns `None` for anything else.
///
/// ```
/// use vernier_tasks::parse_integer;
/// assert_eq!(parse_integer("2,131"), Some(2131));
/// assert_eq!(parse_integer("-17"), Some(-17));
/// assert_eq!(parse_integer("21,31"), None);
/// assert_eq!(parse_integer("2131.5"), None);
/// ```
pub fn parse_integer(text: &str) -> Option<i128> {
    let text = text.trim().replace("{,}", ",").replace("\\,", ",");
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(&text)),
    };
    if digits.is_empty() {
        return None;
    }
    if digits.contains(',') {
        let mut groups = digits.split(',');
        let first = groups.next()?;
        if first.is_empty() || first.len() > 3 {
            return None;
        }
        if groups.any(|group| group.len() != 3) {
            return None;
        }
    }
    let plain: String = digits.chars().filter(|c| *c != ',').collect();
    if !plain.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude: i128 = plain.parse().ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// Parses a fraction as written, without reducing it: `a/b`, `\frac{a}{b}` (also `\dfrac`,
/// `\tfrac`), or an integer (denominator 1). The sign is carried by the numerator and the
/// denominator is positive; a zero denominator gives `None`.
///
/// ```
/// use vernier_tasks::parse_fraction;
/// assert_eq!(parse_fraction("73/648"), Some((73, 648)));
/// assert_eq!(parse_fraction("\\frac{146}{1296}"), Some((146, 1296)));
/// assert_eq!(parse_fraction("3"), Some((3, 1)));
/// assert_eq!(parse_fraction("1/0"), None);
/// ```
pub fn parse_fraction(text: &str) -> Option<(i128, i128)> {
    let text = text.trim();
    let (numerator, denominator) = if let Some(rest) = ["\\frac{", "\\dfrac{", "\\tfrac{"]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))
    {
        let numerator = balanced_inner(rest)?;
        let after = rest[numerator.len() + 1..].strip_prefix('{')?;
        let denominator = balanced_inner(after)?;
        if numerator.len() + denominator.len() + 3 != rest.len() {
            return None;
        }
        (numerator, denominator)
    } else if let Some(negated) = text.strip_prefix("-\\frac{") {
        let (numerator, denominator) = parse_fraction(&format!("\\frac{{{negated}"))?;
        return Some((-numerator, denominator));
    } else if let Some((numerator, denominator)) = text.split_once('/') {
        (numerator, denominator)
    } else {
        return parse_integer(text).map(|value| (value, 1));
    };
    let numerator = parse_integer(numerator)?;
    let denominator = parse_integer(denominator)?;
    match denominator.signum() {
        0 => None,
        -1 => Some((numerator.checked_neg()?, denominator.checked_neg()?)),
        _ => Some((numerator, denominator)),
    }
}

/// Greatest common divisor of the magnitudes (0 when both are 0).
pub(crate) fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i128::try_from(a).unwrap_or(i128::MAX)
}

/// Reduces a fraction with a positive denominator.
pub(crate) fn reduce(numerator: i128, denominator: i128) -> (i128, i128) {
    let divisor = gcd(numerator, denominator).max(1);
    (numerator / divisor, denominator / divisor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_form_wins() {
        assert_eq!(
            extract_answer("\\boxed{1}\nANSWER: 2").as_deref(),
            Some("2")
        );
        assert_eq!(
            extract_answer("ANSWER: 2\nso \\boxed{3}").as_deref(),
            Some("3")
        );
    }

    #[test]
    fn nested_braces_in_boxed() {
        assert_eq!(
            extract_answer("\\boxed{\\frac{73}{648}}").as_deref(),
            Some("\\frac{73}{648}")
        );
    }

    #[test]
    fn decorations_are_stripped() {
        assert_eq!(extract_answer("**ANSWER:** 863").as_deref(), Some("863"));
        assert_eq!(extract_answer("**ANSWER: 863**").as_deref(), Some("863"));
        assert_eq!(
            extract_answer("Answer: $\\boxed{863}$.").as_deref(),
            Some("863")
        );
    }

    #[test]
    fn empty_answer_lines_are_skipped() {
        assert_eq!(extract_answer("ANSWER: 5\nANSWER:").as_deref(), Some("5"));
        assert_eq!(extract_answer("ANSWER:   "), None);
    }

    #[test]
    fn words_starting_with_answer_are_not_answer_lines() {
        assert_eq!(extract_answer("Answering: 5"), None);
    }

    #[test]
    fn gcd_and_reduce() {
        assert_eq!(gcd(146, 1296), 2);
        assert_eq!(reduce(146, 1296), (73, 648));
        assert_eq!(reduce(0, 5), (0, 1));
    }
}
