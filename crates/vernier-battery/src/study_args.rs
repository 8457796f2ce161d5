//! A study part's command-line words: its options read against its kind's own command (each
//! key a long flag, each value written as that flag takes it), with the study's target
//! (server, model, key, extra body, sampling) filled in where the part does not set it.

use serde_json::{Map, Value};
use vernier_run::PartKind;

use crate::study::{PART_KEYS, Study, StudyPart};

/// Why a part's options cannot make a command line: the key at fault (for its place in the
/// file), and what is wrong with the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError {
    /// The key at fault, when one is (`None`: the part as a whole).
    pub key: Option<String>,
    /// What is wrong, and how to fix it.
    pub message: String,
}

/// The kinds a study can hold, by name.
#[derive(Clone, Copy)]
pub struct Kinds<'a>(pub &'a [&'a dyn PartKind]);

impl std::fmt::Debug for Kinds<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl<'a> Kinds<'a> {
    /// The kind named `name`.
    pub fn get(&self, name: &str) -> Option<&'a dyn PartKind> {
        self.0.iter().copied().find(|kind| kind.name() == name)
    }

    /// Every kind's name.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|kind| kind.name()).collect()
    }

    /// The kind of `part`, or the message naming the closest.
    pub fn of(&self, part: &StudyPart) -> Result<&'a dyn PartKind, OptionError> {
        self.get(&part.kind).ok_or_else(|| {
            let names = self.names();
            let closest = vernier_cli::closest(&part.kind, &names)
                .map_or_else(String::new, |close| format!("; did you mean `{close}`?"));
            OptionError {
                key: Some("kind".to_owned()),
                message: format!(
                    "unknown part kind `{}`{closest} (the kinds are {})",
                    part.kind,
                    names.join(", ")
                ),
            }
        })
    }
}

/// The target's settings a part takes as its kind's flags, where its command has them and the
/// part does not set them itself.
fn target_options(study: &Study) -> Vec<(&'static str, Value)> {
    let target = &study.target;
    let mut options = Vec::new();
    let text = |value: &Option<String>| value.clone().map(Value::String);
    for (flag, value) in [
        ("base-url", text(&target.base_url)),
        ("model", text(&target.model)),
        ("api-key-env", text(&target.api_key_env)),
        (
            "ca-cert",
            target
                .ca_cert
                .as_ref()
                .map(|path| Value::String(path.display().to_string())),
        ),
        ("gpu-metrics-url", text(&target.gpu_metrics_url)),
        ("launch", text(&target.launch)),
        ("stop", text(&target.stop)),
    ] {
        if let Some(value) = value {
            options.push((flag, value));
        }
    }
    options
}

/// The long flags of `command`, each with its argument.
fn flags(command: &clap::Command) -> Vec<(String, clap::Arg)> {
    command
        .get_arguments()
        .filter_map(|arg| Some((arg.get_long()?.to_owned(), arg.clone())))
        .collect()
}

/// `part`'s command-line words for `kind` (without the program name), with the study's
/// target where the part does not set it.
pub fn part_words(
    kind: &dyn PartKind,
    study: &Study,
    part: &StudyPart,
) -> Result<Vec<String>, OptionError> {
    let command = kind.command();
    let known = flags(&command);
    let has = |flag: &str| known.iter().any(|(long, _)| long == flag);
    let mut options: Vec<(String, Value)> = Vec::new();
    // The target's server, launch and the like, where the kind takes them.
    for (flag, value) in target_options(study) {
        if has(flag) && part.option(flag).is_none() {
            // A launched server is launched by the study for every part but `ready` (which
            // times launches of its own) and a soak (which relaunches after a death).
            if matches!(flag, "launch" | "stop") && !matches!(kind.name(), "ready" | "soak") {
                continue;
            }
            options.push((flag.to_owned(), value));
        }
    }
    // The extra body: the part's own replaces the target's; sampling a flag does not take
    // goes into it as a request field.
    let mut extra: Map<String, Value> = match part.option("extra-body") {
        Some(Value::Object(fields)) => fields.clone(),
        Some(other) => {
            return Err(OptionError {
                key: Some("extra-body".to_owned()),
                message: format!(
                    "`extra-body` is a table of request fields, not {other}; e.g. extra-body = {{ chat_template_kwargs = {{ enable_thinking = false }} }}"
                ),
            });
        }
        None => study.target.extra_body.clone(),
    };
    let mut sampling = study.target.sampling.clone();
    sampling.extend(part.sampling.clone());
    for (key, value) in sampling {
        if has(&key) {
            if part.option(&key).is_none() {
                options.push((key, value));
            }
        } else {
            extra.insert(key.replace('-', "_"), value);
        }
    }
    if !extra.is_empty() && has("extra-body") {
        options.push(("extra-body".to_owned(), Value::Object(extra)));
    } else if !extra.is_empty() {
        return Err(OptionError {
            key: None,
            message: format!(
                "a {} part sends no model requests of its own, so it takes no extra body or sampling",
                kind.name()
            ),
        });
    }
    options.extend(
        part.options
            .iter()
            .filter(|(key, _)| key != "extra-body")
            .cloned(),
    );
    let mut words = Vec::new();
    for (key, value) in &options {
        let Some((_, arg)) = known.iter().find(|(long, _)| long == key) else {
            let mut names: Vec<&str> = known.iter().map(|(long, _)| long.as_str()).collect();
            names.extend(PART_KEYS);
            let closest = vernier_cli::closest(key, &names)
                .map_or_else(String::new, |close| format!("; did you mean `{close}`?"));
            return Err(OptionError {
                key: Some(key.clone()),
                message: format!(
                    "`{key}` is no option of a {} part{closest} (its options are the flags of `{}`: {})",
                    kind.name(),
                    command.get_name(),
                    known
                        .iter()
                        .filter(|(_, arg)| !arg.is_hide_set())
                        .map(|(long, _)| long.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        };
        words.extend(flag_words(key, arg, value).map_err(|message| OptionError {
            key: Some(key.clone()),
            message,
        })?);
    }
    Ok(words)
}

/// A value as its flag takes it: a switch present or absent, a list joined by the flag's
/// delimiter or the flag repeated, a table as JSON.
fn flag_words(key: &str, arg: &clap::Arg, value: &Value) -> Result<Vec<String>, String> {
    let flag = format!("--{key}");
    let switch = matches!(
        arg.get_action(),
        clap::ArgAction::SetTrue | clap::ArgAction::SetFalse
    );
    if switch {
        return match value {
            Value::Bool(true) => Ok(vec![flag]),
            Value::Bool(false) => Ok(Vec::new()),
            other => Err(format!(
                "`{key}` is a switch: write {key} = true (or leave it out), not {other}"
            )),
        };
    }
    let scalar = |value: &Value| -> Result<String, String> {
        match value {
            Value::String(text) => Ok(text.clone()),
            Value::Number(number) => Ok(number.to_string()),
            Value::Bool(b) => Ok(b.to_string()),
            Value::Object(_) => Ok(value.to_string()),
            Value::Array(_) => Err(format!(
                "`{key}` takes one value per item, not a list in a list"
            )),
            Value::Null => Err(format!("`{key}` has no value")),
        }
    };
    match value {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(format!(
                    "`{key}` is an empty list: give at least one value, or leave it out"
                ));
            }
            let values: Vec<String> = items.iter().map(scalar).collect::<Result<_, _>>()?;
            if let Some(delimiter) = arg.get_value_delimiter() {
                Ok(vec![flag, values.join(&delimiter.to_string())])
            } else if matches!(arg.get_action(), clap::ArgAction::Append) {
                Ok(values
                    .into_iter()
                    .flat_map(|value| [flag.clone(), value])
                    .collect())
            } else {
                Err(format!("`{key}` takes one value, not a list"))
            }
        }
        other => Ok(vec![flag, scalar(other)?]),
    }
}

/// Whether `message` (clap's, or an engine's) is about `key` (it names `--key`).
pub fn names_key(message: &str, key: &str) -> bool {
    let flag = format!("--{key}");
    message.match_indices(&flag).any(|(at, _)| {
        message[at + flag.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '-'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind whose command has a switch, a delimited list, a repeated flag and an extra
    /// body, as the engines' commands have.
    struct Toy;

    impl PartKind for Toy {
        fn name(&self) -> &'static str {
            "toy"
        }
        fn about(&self) -> &'static str {
            "a toy"
        }
        fn command(&self) -> clap::Command {
            clap::Command::new("toy")
                .arg(clap::Arg::new("base_url").long("base-url"))
                .arg(clap::Arg::new("extra_body").long("extra-body"))
                .arg(clap::Arg::new("temperature").long("temperature"))
                .arg(
                    clap::Arg::new("lengths")
                        .long("lengths")
                        .value_delimiter(','),
                )
                .arg(
                    clap::Arg::new("config")
                        .long("config")
                        .action(clap::ArgAction::Append),
                )
                .arg(
                    clap::Arg::new("quick")
                        .long("quick")
                        .action(clap::ArgAction::SetTrue),
                )
        }
        fn plan<'a>(
            &'a self,
            _: &'a [String],
        ) -> vernier_run::PartFuture<'a, Result<vernier_run::PartPlan, String>> {
            Box::pin(async { Ok(vernier_run::PartPlan::default()) })
        }
        fn run<'a>(
            &'a self,
            _: Vec<String>,
            _: &'a vernier_run::PartContext,
        ) -> vernier_run::PartFuture<'a, Result<vernier_run::PartOutcome, vernier_run::PartFailure>>
        {
            Box::pin(async { Ok(vernier_run::PartOutcome::default()) })
        }
    }

    fn study(text: &str) -> Study {
        crate::study::parse_study(text, std::path::Path::new("s.toml"))
            .expect("reads")
            .0
    }

    #[test]
    fn options_become_the_flags_words_with_the_target_filled_in() {
        let study = study(
            r#"
[target]
base-url = "http://h:1"
extra-body = { chat_template_kwargs = { enable_thinking = false } }
sampling = { temperature = 0.6, top-p = 0.9 }
[[part]]
kind = "toy"
lengths = [1024, 4096]
config = ["a=x", "b=y"]
quick = true
"#,
        );
        let words = part_words(&Toy, &study, &study.parts[0]).expect("words");
        assert_eq!(
            words,
            [
                "--base-url",
                "http://h:1",
                "--temperature",
                "0.6",
                "--extra-body",
                r#"{"chat_template_kwargs":{"enable_thinking":false},"top_p":0.9}"#,
                "--config",
                "a=x",
                "--config",
                "b=y",
                "--lengths",
                "1024,4096",
                "--quick"
            ]
        );
        assert!(vernier_run::check_options(&Toy, &words).is_ok());
    }

    #[test]
    fn a_part_overrides_the_targets_extra_body_and_sampling() {
        let study = study(
            r#"
[target]
extra-body = { chat_template_kwargs = { enable_thinking = false } }
sampling = { temperature = 0.6 }
[[part]]
kind = "toy"
extra-body = { chat_template_kwargs = { enable_thinking = true } }
temperature = 0.0
"#,
        );
        let words = part_words(&Toy, &study, &study.parts[0]).expect("words");
        assert_eq!(
            words,
            [
                "--extra-body",
                r#"{"chat_template_kwargs":{"enable_thinking":true}}"#,
                "--temperature",
                "0.0"
            ]
        );
    }

    #[test]
    fn a_wrong_key_or_value_is_named_with_the_fix() {
        let study = study("[[part]]\nkind = \"toy\"\nlenghts = [1]\n");
        let error = part_words(&Toy, &study, &study.parts[0]).expect_err("refused");
        assert_eq!(error.key.as_deref(), Some("lenghts"));
        assert!(
            error.message.contains("did you mean `lengths`"),
            "{}",
            error.message
        );
        let study = self::study("[[part]]\nkind = \"toy\"\nquick = 3\n");
        let error = part_words(&Toy, &study, &study.parts[0]).expect_err("refused");
        assert!(error.message.contains("switch"), "{}", error.message);
        let study = self::study("[[part]]\nkind = \"toy\"\nbase-url = [\"a\", \"b\"]\n");
        let error = part_words(&Toy, &study, &study.parts[0]).expect_err("refused");
        assert!(error.message.contains("one value"), "{}", error.message);
        assert!(names_key(
            "error: invalid value '0' for '--reps <REPS>'",
            "reps"
        ));
        assert!(!names_key("error: invalid value for '--reps-max'", "reps"));
    }
}
