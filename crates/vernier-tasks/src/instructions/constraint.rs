//! The verifiable instructions an `instructions` task sets, each checked by code as IFEval
//! checks its own: strictly on the reply as written, and loosely on the reply with its first
//! line, its last line or both removed and with `*` emphasis dropped (any variant holding).

use serde::{Deserialize, Serialize};

/// One instruction a program checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Constraint {
    /// Exactly `n` bullet points: lines starting with `- ` or `* `.
    BulletCount {
        /// How many.
        n: usize,
    },
    /// At most `n` words.
    WordsAtMost {
        /// The most.
        n: usize,
    },
    /// At least `n` words.
    WordsAtLeast {
        /// The least.
        n: usize,
    },
    /// The word appears (whole word, ASCII case ignored).
    Include {
        /// The word.
        word: String,
    },
    /// The word does not appear (whole word, ASCII case ignored).
    Exclude {
        /// The word.
        word: String,
    },
    /// The character does not appear.
    NoCharacter {
        /// The character.
        character: char,
    },
    /// Exactly `n` sections, each opened by a line starting with `## `.
    Sections {
        /// How many.
        n: usize,
    },
    /// A title: a line wrapped in double angular brackets, `<<like this>>`.
    Title,
    /// No lowercase letter anywhere.
    AllCapitals,
    /// No uppercase letter anywhere.
    AllLowercase,
    /// The whole reply is one JSON object (a fence of three backticks around it allowed) with exactly these
    /// keys.
    JsonOnly {
        /// Its keys.
        keys: Vec<String>,
    },
    /// A Markdown table whose header row holds exactly these columns, in order, with at least
    /// one row below its separator.
    Table {
        /// The columns.
        columns: Vec<String>,
    },
    /// The reply ends with this exact phrase (surrounding whitespace ignored).
    EndsWith {
        /// The phrase.
        phrase: String,
    },
}

impl Constraint {
    /// Its kind's name, as reports group by it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::BulletCount { .. } => "bullet_count",
            Self::WordsAtMost { .. } => "words_at_most",
            Self::WordsAtLeast { .. } => "words_at_least",
            Self::Include { .. } => "include_word",
            Self::Exclude { .. } => "exclude_word",
            Self::NoCharacter { .. } => "no_character",
            Self::Sections { .. } => "sections",
            Self::Title => "title",
            Self::AllCapitals => "all_capitals",
            Self::AllLowercase => "all_lowercase",
            Self::JsonOnly { .. } => "json_only",
            Self::Table { .. } => "table_columns",
            Self::EndsWith { .. } => "ends_with",
        }
    }

    /// The instruction as the prompt states it.
    pub fn instruction(&self) -> String {
        match self {
            Self::BulletCount { n } => format!(
                "Use exactly {n} bullet points, each a line starting with \"- \"."
            ),
            Self::WordsAtMost { n } => format!("Answer in at most {n} words."),
            Self::WordsAtLeast { n } => format!("Answer in at least {n} words."),
            Self::Include { word } => format!("Include the word \"{word}\"."),
            Self::Exclude { word } => format!("Do not use the word \"{word}\"."),
            Self::NoCharacter { character } => {
                format!("Do not use the character \"{character}\" anywhere.")
            }
            Self::Sections { n } => format!(
                "Divide your answer into exactly {n} sections, each starting with a line \"## \" followed by its heading."
            ),
            Self::Title => {
                "Give your answer a title on a line of its own, wrapped in double angular brackets, such as <<my title>>.".to_owned()
            }
            Self::AllCapitals => "Write your entire answer in capital letters.".to_owned(),
            Self::AllLowercase => {
                "Write your entire answer in lowercase letters; no capital letter is allowed.".to_owned()
            }
            Self::JsonOnly { keys } => format!(
                "Answer with one JSON object and nothing else, with exactly the keys {}.",
                keys.iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            Self::Table { columns } => format!(
                "Present your answer as a Markdown table with exactly these columns, in this order: {}.",
                columns.join(" | ")
            ),
            Self::EndsWith { phrase } => format!(
                "End your answer with the exact phrase \"{phrase}\"; nothing may follow it."
            ),
        }
    }

    /// Whether the reply meets it as written.
    pub fn holds(&self, text: &str) -> bool {
        match self {
            Self::BulletCount { n } => bullets(text) == *n,
            Self::WordsAtMost { n } => words(text) <= *n,
            Self::WordsAtLeast { n } => words(text) >= *n,
            Self::Include { word } => has_word(text, word),
            Self::Exclude { word } => !has_word(text, word),
            Self::NoCharacter { character } => !text.contains(*character),
            Self::Sections { n } => {
                text.lines()
                    .filter(|l| l.trim_start().starts_with("## "))
                    .count()
                    == *n
            }
            Self::Title => text.lines().any(|line| {
                let line = line.trim();
                line.len() > 4
                    && line.starts_with("<<")
                    && line.ends_with(">>")
                    && !line[2..line.len() - 2].trim().is_empty()
            }),
            Self::AllCapitals => !text.chars().any(char::is_lowercase),
            Self::AllLowercase => !text.chars().any(char::is_uppercase),
            Self::JsonOnly { keys } => json_keys(text).is_some_and(|found| {
                let mut want = keys.clone();
                want.sort_unstable();
                found == want
            }),
            Self::Table { columns } => table_holds(text, columns),
            Self::EndsWith { phrase } => text.trim_end().ends_with(phrase.as_str()),
        }
    }

    /// Whether some loose variant of the reply meets it (IFEval's loose accuracy).
    pub fn holds_loosely(&self, text: &str) -> bool {
        loose_variants(text)
            .iter()
            .any(|variant| self.holds(variant))
    }
}

/// The reply, without its first line, its last line, both; each also without `*`.
fn loose_variants(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let join = |part: &[&str]| part.join("\n");
    let mut variants = vec![text.to_owned()];
    if lines.len() > 1 {
        variants.push(join(&lines[1..]));
        variants.push(join(&lines[..lines.len() - 1]));
    }
    if lines.len() > 2 {
        variants.push(join(&lines[1..lines.len() - 1]));
    }
    let starless: Vec<String> = variants.iter().map(|v| v.replace('*', "")).collect();
    variants.extend(starless);
    variants
}

/// Lines that are bullet points.
fn bullets(text: &str) -> usize {
    text.lines()
        .filter(|line| {
            let line = line.trim_start();
            (line.starts_with("- ") || line.starts_with("* ")) && !line.starts_with("**")
        })
        .count()
}

/// Words: whitespace-separated runs holding a letter or digit.
fn words(text: &str) -> usize {
    text.split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .count()
}

/// Whether `word` stands in `text` as a whole word, ASCII case ignored.
fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|token| token.eq_ignore_ascii_case(word))
}

/// The sorted keys of the one JSON object the reply is (a fence of three backticks allowed
/// around it); `None` when it is not one object, or names a key twice (a parser keeps only
/// the last of two, so "exactly these keys" would be fooled).
fn json_keys(text: &str) -> Option<Vec<String>> {
    let mut body = text.trim();
    if let Some(inner) = body.strip_prefix("```") {
        let inner = inner.strip_prefix("json").unwrap_or(inner);
        body = inner.strip_suffix("```")?.trim();
    }
    let Keys(mut keys) = serde_json::from_str(body).ok()?;
    keys.sort_unstable();
    let before = keys.len();
    keys.dedup();
    (keys.len() == before).then_some(keys)
}

/// A JSON object's keys in order, duplicates kept; the values are read and dropped.
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Keys;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The cells of a Markdown table row (`| a | b |` → `a`, `b`).
fn cells(line: &str) -> Vec<String> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let line = line.strip_suffix('|').unwrap_or(line);
    line.split('|').map(|cell| cell.trim().to_owned()).collect()
}

fn table_holds(text: &str, columns: &[String]) -> bool {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let Some(header) = lines.iter().position(|line| line.starts_with('|')) else {
        return false;
    };
    let separator_ok = lines.get(header + 1).is_some_and(|line| {
        line.starts_with('|')
            && cells(line)
                .iter()
                .all(|cell| !cell.is_empty() && cell.chars().all(|c| c == '-' || c == ':'))
    });
    let has_row = lines
        .get(header + 2)
        .is_some_and(|line| line.starts_with('|') && cells(line).len() == columns.len());
    let header_cells = cells(lines[header]);
    separator_ok
        && has_row
        && header_cells.len() == columns.len()
        && header_cells
            .iter()
            .zip(columns)
            .all(|(cell, column)| cell.eq_ignore_ascii_case(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_check_reads_the_reply_as_ifeval_describes() {
        let reply =
            "<<Fruit>>\n\n## Kinds\n- Apple\n- Pear\n\n## Uses\nSome are sweet. That is all.";
        assert!(Constraint::BulletCount { n: 2 }.holds(reply));
        assert!(!Constraint::BulletCount { n: 3 }.holds(reply));
        assert!(Constraint::Sections { n: 2 }.holds(reply));
        assert!(Constraint::Title.holds(reply));
        assert!(!Constraint::Title.holds("<<>>\ntext"));
        // Eleven words: `##` and `-` hold no letter; `<<Fruit>>` and `sweet.` do.
        assert!(Constraint::WordsAtMost { n: 11 }.holds(reply));
        assert!(!Constraint::WordsAtMost { n: 10 }.holds(reply));
        assert!(Constraint::WordsAtLeast { n: 11 }.holds(reply));
        assert!(
            Constraint::Include {
                word: "apple".into()
            }
            .holds(reply)
        );
        assert!(!Constraint::Include { word: "app".into() }.holds(reply));
        assert!(Constraint::NoCharacter { character: ',' }.holds(reply));
        assert!(
            Constraint::EndsWith {
                phrase: "That is all.".into()
            }
            .holds(reply)
        );
        assert!(!Constraint::AllCapitals.holds(reply));
        assert!(Constraint::AllCapitals.holds("YES, 42 TIMES."));
        let json = "```json\n{\"name\": \"pear\", \"reason\": \"soft\"}\n```";
        let keys = vec!["reason".to_owned(), "name".to_owned()];
        assert!(Constraint::JsonOnly { keys: keys.clone() }.holds(json));
        assert!(
            !Constraint::JsonOnly { keys: keys.clone() }
                .holds("Sure: {\"name\": 1, \"reason\": 2}")
        );
        assert!(!Constraint::JsonOnly { keys: keys.clone() }.holds("{\"name\": 1}"));
        // A key twice: a parser keeps the last, the check refuses it.
        assert!(
            !Constraint::JsonOnly { keys: keys.clone() }
                .holds("{\"name\": 1, \"name\": 2, \"reason\": 3}")
        );
        assert!(!Constraint::JsonOnly { keys }.holds("[1, 2]"));
        let table = "| Item | Use |\n|---|:-:|\n| pear | eat |";
        let columns = vec!["Item".to_owned(), "Use".to_owned()];
        assert!(
            Constraint::Table {
                columns: columns.clone()
            }
            .holds(table)
        );
        assert!(!Constraint::Table { columns }.holds("| Item | Use |\n| pear | eat |"));
        // Loose: a closing line, or emphasis, is forgiven; strict is not.
        let ends = Constraint::EndsWith {
            phrase: "That is all.".into(),
        };
        assert!(!ends.holds("That is all.\nHope this helps!"));
        assert!(ends.holds_loosely("That is all.\nHope this helps!"));
        let title = Constraint::Title;
        assert!(title.holds_loosely("**<<Fruit>>**\ntext"));
        assert!(!title.holds("**<<Fruit>>**\ntext"));
    }
}
