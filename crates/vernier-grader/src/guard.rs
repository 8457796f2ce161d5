//! Static guards: a small Python tokeniser that finds identifiers outside comments and strings.
//!
//! Guards are a cheap early verdict, not the security boundary (the container is):
//! `getattr(builtins, "ev" + "al")` passes them by design.

use std::collections::BTreeSet;

use unicode_normalization::UnicodeNormalization;

use crate::config::Guard;

/// Returns the first guard the code violates, as the forbidden name: the static check
/// the grader makes before it starts a container.
pub fn violated_guard(code: &str, guards: &[Guard]) -> Option<String> {
    if guards.is_empty() {
        return None;
    }
    let names = identifiers(code);
    guards.iter().find_map(|guard| match guard {
        Guard::ForbiddenName(name) => names.contains(name.as_str()).then(|| name.clone()),
    })
}

/// Every identifier (names, attributes, keywords) in Python source, NFKC-normalised,
/// skipping comments and string literals but reading f-string replacement fields as code.
pub(crate) fn identifiers(code: &str) -> BTreeSet<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = BTreeSet::new();
    let mut position = 0;
    scan_code(&chars, &mut position, None, &mut found);
    found
}

/// Scans code until the end, or until an unbalanced `}` when `closing` is set (inside an
/// f-string replacement field).
fn scan_code(
    chars: &[char],
    position: &mut usize,
    closing: Option<char>,
    found: &mut BTreeSet<String>,
) {
    let mut depth = 0usize;
    while let Some(&c) = chars.get(*position) {
        match c {
            '#' => {
                while chars.get(*position).is_some_and(|c| *c != '\n') {
                    *position += 1;
                }
            }
            '\'' | '"' => scan_string(chars, position, "", found),
            '(' | '[' | '{' => {
                depth += 1;
                *position += 1;
            }
            ')' | ']' | '}' => {
                if depth == 0 && closing == Some(c) {
                    *position += 1;
                    return;
                }
                depth = depth.saturating_sub(1);
                *position += 1;
            }
            c if c.is_ascii_digit() => {
                while chars
                    .get(*position)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                {
                    *position += 1;
                }
            }
            c if c == '_' || c.is_alphabetic() => {
                let start = *position;
                while chars
                    .get(*position)
                    .is_some_and(|c| *c == '_' || c.is_alphanumeric())
                {
                    *position += 1;
                }
                let word: String = chars[start..*position].iter().collect();
                // A string prefix such as rb'...' or f"..." is not an identifier.
                if chars
                    .get(*position)
                    .is_some_and(|q| *q == '\'' || *q == '"')
                    && is_string_prefix(&word)
                {
                    scan_string(chars, position, &word.to_ascii_lowercase(), found);
                } else if word.is_ascii() {
                    found.insert(word);
                } else {
                    found.insert(word.nfkc().collect());
                }
            }
            _ => *position += 1,
        }
    }
}

fn is_string_prefix(word: &str) -> bool {
    word.len() <= 2
        && word
            .chars()
            .all(|c| matches!(c.to_ascii_lowercase(), 'r' | 'b' | 'u' | 'f' | 't'))
}

/// Scans a string literal starting at its opening quote.
fn scan_string(chars: &[char], position: &mut usize, prefix: &str, found: &mut BTreeSet<String>) {
    let quote = chars[*position];
    let triple =
        chars.get(*position + 1) == Some(&quote) && chars.get(*position + 2) == Some(&quote);
    *position += if triple { 3 } else { 1 };
    let formatted = prefix.contains('f') || prefix.contains('t');
    while let Some(&c) = chars.get(*position) {
        if c == '\\' {
            *position += 2;
            continue;
        }
        if c == '\n' && !triple {
            return; // unterminated; Python would refuse it anyway
        }
        if c == quote {
            if !triple {
                *position += 1;
                return;
            }
            if chars.get(*position + 1) == Some(&quote) && chars.get(*position + 2) == Some(&quote)
            {
                *position += 3;
                return;
            }
        }
        if formatted && c == '{' {
            if chars.get(*position + 1) == Some(&'{') {
                *position += 2;
                continue;
            }
            *position += 1;
            scan_code(chars, position, Some('}'), found);
            continue;
        }
        *position += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbid(name: &str) -> Vec<Guard> {
        vec![Guard::ForbiddenName(name.to_owned())]
    }

    #[test]
    fn finds_calls_attributes_and_bare_names() {
        assert_eq!(
            violated_guard("x = eval('1')", &forbid("eval")),
            Some("eval".into())
        );
        assert_eq!(
            violated_guard("import os\nos.system('ls')", &forbid("system")),
            Some("system".into())
        );
        assert_eq!(
            violated_guard("f = exec", &forbid("exec")),
            Some("exec".into())
        );
        assert_eq!(
            violated_guard("__import__('os')", &forbid("__import__")),
            Some("__import__".into())
        );
    }

    #[test]
    fn ignores_comments_strings_and_longer_names() {
        let code = "# eval is bad\ns = 'eval(x)'\nt = \"\"\"exec\n\"\"\"\nevaluate = 1\nmy_eval = 2\nr = rb'eval'\n";
        assert_eq!(violated_guard(code, &forbid("eval")), None);
        assert_eq!(violated_guard(code, &forbid("exec")), None);
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        let code = "s = 'it\\'s eval'\nr = r\"\\\" eval\"\n";
        assert_eq!(violated_guard(code, &forbid("eval")), None);
    }

    #[test]
    fn reads_f_string_fields_as_code() {
        assert_eq!(
            violated_guard("f'{eval(\"1\")}'", &forbid("eval")),
            Some("eval".into())
        );
        assert_eq!(violated_guard("f'{{eval}}'", &forbid("eval")), None);
        assert_eq!(
            violated_guard("F\"\"\"{ {'a': exec}['a'] }\"\"\"", &forbid("exec")),
            Some("exec".into())
        );
    }

    #[test]
    fn normalises_like_python() {
        // Fullwidth letters: Python's parser applies NFKC, so this calls eval.
        assert_eq!(
            violated_guard("ｅｖａｌ('1')", &forbid("eval")),
            Some("eval".into())
        );
    }

    #[test]
    fn prefixes_only_before_quotes() {
        let names = identifiers("rb = 1\nf(x)\nu = b'y'");
        assert!(names.contains("rb") && names.contains("f") && names.contains("u"));
        assert!(!names.contains("y"));
    }

    #[test]
    fn numbers_are_not_names() {
        let names = identifiers("x = 0x1f + 1e5 + 1_000j");
        assert_eq!(names.into_iter().collect::<Vec<_>>(), vec!["x".to_owned()]);
    }
}
