//! Command-line plumbing shared by Vernier's binaries (`sweep`, `hardsuite`,
//! `vernier-sim-server`) and the engines behind them.
//!
//! - [`ExitKind`] and [`Failure`]: the one table from a failure's kind to its exit code, which
//!   every engine's error maps through; [`exit_code`] names the codes.
//! - [`Finished`] and [`finish`]: what a command ends with, printed and mapped to its exit code
//!   the same way by every binary.
//! - [`cause_chain`] and [`one_line`]: an error and its causes, printed once.
//! - [`write_stdout`]: write a result to stdout, where a closed pipe (`| head`) is success.
//! - [`shell_quote`] and [`resume_command`]: the exact command that continues a run.
//! - [`ProgressMode`] and [`Heartbeat`]: progress where stderr is no terminal, a line at least
//!   every [`PROGRESS_EVERY`] saying where the run is.
//!
//! This crate depends on nothing and prints nothing by itself; [`report_error`] writes to the
//! standard error stream only when a binary calls it, and a [`Heartbeat`] only when a binary
//! starts one.
//!
//! ```
//! use vernier_cli::{exit_code, resume_command};
//!
//! let line: Vec<String> = ["sweep", "--reps", "3"].iter().map(|s| (*s).to_owned()).collect();
//! let command = resume_command("sweep", &line, "--resume", "out dir/journal.jsonl");
//! assert_eq!(command, "sweep --reps 3 --resume 'out dir/journal.jsonl'");
//! assert_eq!(exit_code::USAGE, 2);
//! ```
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

mod exit_table;
mod finished;
mod heartbeat;
mod output;

pub use exit_table::{ExitKind, Failure, exit_code};
pub use finished::{Finished, finish};
pub use heartbeat::{
    Beat, Heartbeat, PROGRESS_EVERY, PROGRESS_EVERY_VARIABLE, ProgressMode, clock, progress_every,
};
pub use output::{cause_chain, note, one_line, report_error, write_stdout};

/// An [`ExitCode`] from one of [`exit_code`]'s constants.
pub fn exit(code: u8) -> ExitCode {
    ExitCode::from(code)
}

/// The candidate closest to `word` by edit distance, when it is close enough to be a typo
/// (two edits, or a third of the word's letters when it is longer).
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut previous = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let substituted = previous + usize::from(ca != *cb);
                previous = row[j + 1];
                row[j + 1] = substituted.min(row[j] + 1).min(row[j + 1] + 1);
            }
        }
        row[b.len()]
    };
    candidates
        .iter()
        .map(|candidate| (distance(word, candidate), *candidate))
        .filter(|(d, _)| *d <= (word.chars().count() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

/// A token count as the command lines take it: `4096`, or `4k` for 4 × 1024.
pub fn parse_tokens(text: &str) -> Result<u32, String> {
    let text = text.trim();
    let (digits, scale) = match text.strip_suffix(['k', 'K']) {
        Some(digits) => (digits, 1024),
        None => (text, 1),
    };
    digits
        .parse::<u32>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("{text:?} is not a token count; write it as 4096 or 4k"))
}

/// A measured figure with decimals only where they matter: `1143`, `85.2`, `3.41`; `—` for a
/// value that is not finite.
pub fn figure(value: f64) -> String {
    if !value.is_finite() {
        "—".to_owned()
    } else if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// `1234567` as `1,234,567`.
///
/// ```
/// assert_eq!(vernier_cli::thousands(3_753_598), "3,753,598");
/// assert_eq!(vernier_cli::thousands(999), "999");
/// ```
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `n` and its noun, singular for one: `1 repetition`, `3 repetitions`, `0 tries`.
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `word` as a POSIX shell reads it: unchanged when it is made of safe characters only,
/// otherwise in single quotes.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:@%+".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The command that continues a run: `program` (as the user ran it this time, e.g. `sweep` or
/// `target/release/sweep`), the original arguments (`command_line` without its program, and
/// without any earlier `resume_flag VALUE` or `resume_flag=VALUE`), then `resume_flag JOURNAL`.
pub fn resume_command(
    program: &str,
    command_line: &[String],
    resume_flag: &str,
    journal: &str,
) -> String {
    let mut words = vec![shell_quote(program)];
    let mut skip_next = false;
    let with_value = format!("{resume_flag}=");
    for argument in command_line.iter().skip(1) {
        if skip_next {
            skip_next = false;
            continue;
        }
        if argument == resume_flag {
            skip_next = true;
            continue;
        }
        if argument.starts_with(&with_value) {
            continue;
        }
        words.push(shell_quote(argument));
    }
    words.push(resume_flag.to_owned());
    words.push(shell_quote(journal));
    words.join(" ")
}

/// The program as the user ran it: the first word of `command_line`, or `fallback`.
pub fn program_name<'a>(command_line: &'a [String], fallback: &'a str) -> &'a str {
    command_line
        .first()
        .filter(|word| !word.is_empty())
        .map_or(fallback, String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_word_and_nonsense_finds_none() {
        let suites = ["hardsuite", "context", "vision", "video", "probe"];
        assert_eq!(closest("contxt", &suites), Some("context"));
        assert_eq!(closest("vidoe", &suites), Some("video"));
        assert_eq!(closest("prbe", &suites), Some("probe"));
        assert_eq!(closest("quantum", &suites), None);
    }

    #[test]
    fn token_counts_take_a_k_for_1024() {
        assert_eq!(parse_tokens("4k"), Ok(4096));
        assert_eq!(parse_tokens("111"), Ok(111));
        assert_eq!(parse_tokens(" 8K "), Ok(8192));
        assert!(parse_tokens("4kb").is_err());
        assert!(parse_tokens("5000000k").is_err());
    }

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1, "repetition", "repetitions"), "1 repetition");
        assert_eq!(counted(3, "repetition", "repetitions"), "3 repetitions");
        assert_eq!(counted(0, "try", "tries"), "0 tries");
    }

    #[derive(Debug)]
    struct Chained(&'static str, Option<Box<Chained>>);

    impl std::fmt::Display for Chained {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Chained {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn causes_are_printed_once_each() {
        let error = Chained(
            "read the journal",
            Some(Box::new(Chained(
                "open x: no such file",
                Some(Box::new(Chained("no such file", None))),
            ))),
        );
        assert_eq!(
            cause_chain(&error),
            "read the journal: open x: no such file"
        );
        let multi = Chained("a\nb", Some(Box::new(Chained("c", None))));
        assert_eq!(one_line(&multi), "a b: c");
    }

    #[test]
    fn resume_command_replaces_an_old_resume_and_quotes() {
        let line: Vec<String> = [
            "/x/sweep",
            "--extra-body",
            "{\"a\": 1}",
            "--resume",
            "old.jsonl",
            "--resume=older.jsonl",
            "--reps",
            "3",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let command = resume_command(
            "target/release/sweep",
            &line,
            "--resume",
            "out dir/journal.jsonl",
        );
        assert_eq!(
            command,
            "target/release/sweep --extra-body '{\"a\": 1}' --reps 3 --resume 'out dir/journal.jsonl'"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn exit_codes_are_distinct() {
        let mut codes: Vec<u8> = exit_code::ALL.iter().map(|(code, _)| *code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), exit_code::ALL.len());
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
