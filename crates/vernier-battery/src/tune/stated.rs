//! What each configuration changes, as its server states it: every `--flag value` of its
//! launch command looked up in the settings the server showed (vLLM's and `SGLang`'s server
//! information, llama.cpp's `/props`, the simulator's `/server_info`), so a flag the server
//! ignored or overrode is named.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One flag of a launch command against the server's statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StatedFlag {
    /// The flag as typed (`--max-num-seqs`).
    pub flag: String,
    /// Its value as typed.
    pub asked: String,
    /// The setting the server states for it (`simulator_config.max_num_seqs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    /// The value the server states (every round's, where they differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated: Option<String>,
    /// `as asked`, `differs`, or `not stated`.
    pub verdict: String,
}

/// Flags whose setting goes by another name: llama.cpp's slots are `total_slots`, its
/// context `n_ctx`.
const ALIASES: [(&str, &str); 6] = [
    ("np", "total_slots"),
    ("parallel", "total_slots"),
    ("c", "n_ctx"),
    ("ctx-size", "n_ctx"),
    ("max-running-requests", "max_running_requests"),
    ("tp", "tensor_parallel_size"),
];

/// A command's words as the shell splits them (single and double quotes, backslashes); the
/// values of leading environment assignments (`VAR='--flag 1'`, as a wrapper takes its
/// flags) are split again, so their flags are read too.
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                started = true;
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (Some(_) | None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    let mut out = Vec::new();
    let mut leading = true;
    for word in words {
        let assignment = word.split_once('=').filter(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        });
        match assignment {
            Some((_, value)) if leading => out.extend(words_of_value(value)),
            _ => {
                leading = false;
                out.push(word);
            }
        }
    }
    out
}

fn words_of_value(value: &str) -> Vec<String> {
    value.split_whitespace().map(str::to_owned).collect()
}

/// The `--flag value` pairs of a command (a `--flag=value` split; a flag followed by another
/// flag, or by nothing, is a switch and is left out).
fn flag_values(command: &str) -> Vec<(String, String)> {
    let words = words(command);
    let mut pairs = Vec::new();
    let mut index = 0;
    while index < words.len() {
        let word = &words[index];
        if word.starts_with('-') && word.len() > 1 && word.parse::<f64>().is_err() {
            if let Some((flag, value)) = word.split_once('=') {
                pairs.push((flag.to_owned(), value.to_owned()));
            } else if let Some(value) = words.get(index + 1)
                && (!value.starts_with('-') || value.parse::<f64>().is_ok())
            {
                pairs.push((word.clone(), value.clone()));
                index += 1;
            }
        }
        index += 1;
    }
    pairs
}

/// Every `path = value` leaf of the settings.
fn leaves(prefix: &str, value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                leaves(&path, inner, out);
            }
        }
        other => out.push((prefix.to_owned(), other.clone())),
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether the typed value and the stated one say the same (numbers as numbers).
fn same(asked: &str, stated: &Value) -> bool {
    match stated {
        Value::Number(n) => asked
            .parse::<f64>()
            .ok()
            .zip(n.as_f64())
            .is_some_and(|(a, b)| (a - b).abs() <= 1e-9 * a.abs().max(1.0)),
        Value::Bool(b) => matches!(
            (asked.to_ascii_lowercase().as_str(), b),
            ("true" | "1" | "on", true) | ("false" | "0" | "off", false)
        ),
        other => text(other) == asked,
    }
}

/// Each flag of `command` against the settings every round's server stated.
pub fn stated_flags(command: &str, settings: &[Value]) -> Vec<StatedFlag> {
    let mut stated_leaves: Vec<Vec<(String, Value)>> = Vec::new();
    for setting in settings {
        let mut out = Vec::new();
        leaves("", setting, &mut out);
        stated_leaves.push(out);
    }
    flag_values(command)
        .into_iter()
        .filter(|(flag, _)| {
            !matches!(
                flag.trim_start_matches('-'),
                "port" | "host" | "model" | "m"
            )
        })
        .map(|(flag, asked)| {
            let bare = flag.trim_start_matches('-');
            let key = ALIASES
                .iter()
                .find(|(alias, _)| *alias == bare)
                .map_or_else(|| bare.replace('-', "_"), |(_, key)| (*key).to_owned());
            let found: Vec<(String, Value)> = stated_leaves
                .iter()
                .filter_map(|leaves| {
                    leaves
                        .iter()
                        .find(|(path, _)| path == &key || path.ends_with(&format!(".{key}")))
                        .cloned()
                })
                .collect();
            let Some((setting, _)) = found.first().cloned() else {
                return StatedFlag {
                    flag,
                    asked,
                    setting: None,
                    stated: None,
                    verdict: if settings.is_empty() {
                        "not stated (the server shows no settings)".to_owned()
                    } else {
                        "not stated by the server".to_owned()
                    },
                };
            };
            let mut values: Vec<String> = found.iter().map(|(_, v)| text(v)).collect();
            values.dedup();
            let verdict = if found.iter().all(|(_, value)| same(&asked, value)) {
                "as asked"
            } else {
                "differs: the server ignored or overrode it"
            };
            StatedFlag {
                flag,
                asked,
                setting: Some(setting),
                stated: Some(values.join(" / ")),
                verdict: verdict.to_owned(),
            }
        })
        .collect()
}

/// Settings the servers state differently across the configurations: `setting: a=1, b=4`.
pub fn differing(configs: &[(&str, &[StatedFlag])]) -> Vec<String> {
    let mut settings: Vec<String> = configs
        .iter()
        .flat_map(|(_, stated)| stated.iter().filter_map(|s| s.setting.clone()))
        .collect();
    settings.sort();
    settings.dedup();
    settings
        .into_iter()
        .filter_map(|setting| {
            let values: Vec<(String, String)> = configs
                .iter()
                .filter_map(|(name, stated)| {
                    let stated = stated
                        .iter()
                        .find(|s| s.setting.as_deref() == Some(&setting))?;
                    Some(((*name).to_owned(), stated.stated.clone()?))
                })
                .collect();
            let first = values.first()?.1.clone();
            values.iter().any(|(_, v)| *v != first).then(|| {
                format!(
                    "{setting}: {}",
                    values
                        .iter()
                        .map(|(name, value)| format!("{name}={value}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_read_against_what_the_server_states() {
        let settings = serde_json::json!({
            "simulator_config": {"max_num_seqs": 4, "decode_step_ms": 5.0},
            "total_slots": 2
        });
        let flags = stated_flags(
            "CUDA_VISIBLE_DEVICES=0 SIM='--max-num-seqs 4' sim --port 8000 --decode-step-ms=7 -np \"2\" --no-cache --threads 3 --name 'a b'",
            &[settings],
        );
        let by_flag = |flag: &str| {
            flags
                .iter()
                .find(|f| f.flag == flag)
                .unwrap_or_else(|| panic!("{flag} in {flags:?}"))
        };
        assert_eq!(by_flag("--max-num-seqs").verdict, "as asked");
        assert_eq!(
            by_flag("--max-num-seqs").setting.as_deref(),
            Some("simulator_config.max_num_seqs")
        );
        assert!(by_flag("--decode-step-ms").verdict.starts_with("differs"));
        assert_eq!(by_flag("--decode-step-ms").stated.as_deref(), Some("5.0"));
        assert_eq!(by_flag("-np").verdict, "as asked");
        assert_eq!(by_flag("--threads").verdict, "not stated by the server");
        assert!(
            flags
                .iter()
                .all(|f| f.flag != "--port" && f.flag != "--no-cache")
        );
        assert_eq!(by_flag("--name").asked, "a b");
        assert!(flags.iter().all(|f| f.flag != "0"));
    }
}
