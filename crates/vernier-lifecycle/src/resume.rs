//! What a resumed `ready` run may change, and the check that it measures the same server.
//!
//! The flags typed beside `--resume` ([`ResumeFlags`]) become one
//! [`Setting`](vernier_run::Setting) each for [`vernier_run::check_resume`]: a measurement
//! setting that differs from the journal's is refused by name; the operational one
//! (`--base-url`) is used for the session and recorded in the journal's `resumed` line. The
//! server's [`ServerFingerprint`] is recorded the first time a repetition reaches its first
//! token, and a resumed run compares it, once, at the same point ([`ServerCheck`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use vernier_run::{RunError, ServerFingerprint, Setting, SettingKind, check_same_server};

use crate::ready_config::ReadyConfig;

/// What was typed beside `--resume`: the settings the flags make (defaults where a flag was
/// not typed), which flags were typed, and the output folder when `--out` was typed.
/// `ready`'s is `ResumeFlags` (`ResumeFlags<ReadyConfig>`), `soak`'s `SoakResumeFlags`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ResumeFlags<C = ReadyConfig> {
    /// The settings as the flags make them.
    pub config: C,
    /// The flags typed, as on the command line (`--reps`, `--base-url`); only these of
    /// `config` are compared with the journal's run.
    pub typed: BTreeSet<String>,
    /// The output folder typed (a resumed run writes next to its journal, so another folder
    /// is refused).
    pub out: Option<PathBuf>,
}

impl<C> ResumeFlags<C> {
    /// The flags `typed` (as on the command line), with the values `config` holds.
    pub fn new(config: C, typed: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            config,
            typed: typed.into_iter().map(Into::into).collect(),
            out: None,
        }
    }

    /// `--out` was typed, naming `out`.
    #[must_use]
    pub fn out(mut self, out: impl Into<PathBuf>) -> Self {
        self.out = Some(out.into());
        self
    }

    /// `--out`, when typed: refused unless it names the journal's folder.
    pub(crate) fn out_setting(&self, journal_folder: &Path) -> Option<Setting> {
        let out = self.out.as_ref()?;
        let folder = if journal_folder.as_os_str().is_empty() {
            ".".to_owned()
        } else {
            journal_folder.display().to_string()
        };
        let given = if same_folder(out, journal_folder) {
            folder.clone()
        } else {
            out.display().to_string()
        };
        Some(
            Setting::measurement("--out", &folder, Some(given)).explained(format!(
                "a resumed run writes next to its journal, in {folder}"
            )),
        )
    }

    /// Checks the flags against the journal's run by the shared policy (`settings` made for
    /// the journal's folder; `original` is the command line that started it): the journal's
    /// folder, where the run goes on, and the operational settings that changed.
    pub(crate) fn check(
        &self,
        journal: &Path,
        original: &[String],
        settings: impl FnOnce(&Self, &Path) -> Vec<Setting>,
    ) -> Result<(PathBuf, Vec<String>), RunError> {
        let out = journal
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_owned);
        let original = original
            .iter()
            .map(|word| vernier_cli::shell_quote(word))
            .collect::<Vec<_>>()
            .join(" ");
        let changed = vernier_run::check_resume(
            journal,
            Some(original.as_str()).filter(|command| !command.is_empty()),
            &settings(self, &out),
        )?;
        Ok((out, changed))
    }
}

impl ResumeFlags<ReadyConfig> {
    /// Every setting of the journal's run (`recorded`), with the value typed where it was:
    /// `--base-url` is operational, every other one shapes what is measured.
    pub(crate) fn settings(&self, recorded: &ReadyConfig, journal_folder: &Path) -> Vec<Setting> {
        use SettingKind::{Measurement, Operational};
        let given = &self.config;
        let setting = |flag: &str, kind, recorded: String, given: String| {
            Setting::new(
                flag,
                kind,
                recorded,
                self.typed.contains(flag).then_some(given),
            )
        };
        let shown = |value: &Option<String>, none: &str| value.clone().unwrap_or(none.to_owned());
        let mut settings = vec![
            setting(
                "--base-url",
                Operational,
                recorded.base_url.clone(),
                given.base_url.clone(),
            ),
            setting(
                "--launch",
                Measurement,
                shown(&recorded.launch, "none"),
                shown(&given.launch, "none"),
            ),
            setting(
                "--stop",
                Measurement,
                shown(&recorded.stop, "SIGTERM"),
                shown(&given.stop, "SIGTERM"),
            ),
            setting(
                "--swap",
                Measurement,
                recorded.swap.join(","),
                given.swap.join(","),
            ),
            setting(
                "--model",
                Measurement,
                shown(&recorded.model, "the first listed"),
                shown(&given.model, "the first listed"),
            ),
        ];
        for (flag, recorded, given) in [
            ("--reps", recorded.reps, given.reps),
            (
                "--warm-requests",
                recorded.warm_requests,
                given.warm_requests,
            ),
            ("--max-tokens", recorded.max_tokens, given.max_tokens),
        ] {
            settings.push(setting(
                flag,
                Measurement,
                recorded.to_string(),
                given.to_string(),
            ));
        }
        settings.push(setting(
            "--prompt",
            Measurement,
            recorded.prompt.clone(),
            given.prompt.clone(),
        ));
        for (flag, recorded, given) in [
            (
                "--ready-timeout",
                recorded.ready_timeout_s,
                given.ready_timeout_s,
            ),
            (
                "--poll-interval",
                recorded.poll_interval_s,
                given.poll_interval_s,
            ),
            ("--stop-grace", recorded.stop_grace_s, given.stop_grace_s),
        ] {
            settings.push(setting(
                flag,
                Measurement,
                recorded.to_string(),
                given.to_string(),
            ));
        }
        settings.push(setting(
            "--extra-body",
            Measurement,
            serde_json::Value::Object(recorded.extra_body.clone()).to_string(),
            serde_json::Value::Object(given.extra_body.clone()).to_string(),
        ));
        settings.extend(self.out_setting(journal_folder));
        settings
    }

    /// The settings this session runs with: the journal's, with the operational ones typed.
    pub(crate) fn session_config(&self, recorded: &ReadyConfig) -> ReadyConfig {
        let mut config = recorded.clone();
        if self.typed.contains("--base-url") {
            config.base_url.clone_from(&self.config.base_url);
        }
        if self.typed.contains("--api-key-env") {
            config.api_key_env.clone_from(&self.config.api_key_env);
        }
        if self.typed.contains("--ca-cert") {
            config.ca_cert.clone_from(&self.config.ca_cert);
        }
        config
    }
}

/// Whether two folders are the same one (`""` is the current folder).
fn same_folder(a: &Path, b: &Path) -> bool {
    let folder = |path: &Path| {
        let path = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
    };
    folder(a) == folder(b)
}

/// The server's identity over a run: recorded the first time a repetition reaches its first
/// token; in a resumed run, compared there (once) with the journal's.
#[derive(Debug)]
pub(crate) struct ServerCheck {
    journal: PathBuf,
    /// The journal's fingerprint, until this session has compared it.
    to_compare: Option<ServerFingerprint>,
    /// Whether the journal holds a fingerprint.
    recorded: bool,
}

impl ServerCheck {
    /// The check of a run whose journal is `journal` and records `recorded` (if anything).
    pub(crate) fn new(journal: &Path, recorded: Option<ServerFingerprint>) -> Self {
        Self {
            journal: journal.to_owned(),
            recorded: recorded.is_some(),
            to_compare: recorded,
        }
    }

    /// Whether the server's fingerprint is wanted (to record or to compare).
    pub(crate) fn wanted(&self) -> bool {
        self.to_compare.is_some() || !self.recorded
    }

    /// The journal's fingerprint, while this session has not compared it.
    pub(crate) fn to_compare(&self) -> Option<&ServerFingerprint> {
        self.to_compare.as_ref()
    }

    /// Compares `now` with the journal's fingerprint (refused as
    /// [`RunError::ServerChanged`]), and gives it back when the journal has none yet, to be
    /// recorded.
    pub(crate) fn check(
        &mut self,
        now: ServerFingerprint,
    ) -> Result<Option<ServerFingerprint>, RunError> {
        if let Some(recorded) = self.to_compare.take() {
            check_same_server(&self.journal, &recorded, &now)?;
        }
        if self.recorded {
            return Ok(None);
        }
        self.recorded = true;
        Ok(Some(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch_config() -> ReadyConfig {
        ReadyConfig {
            launch: Some("llama-server --port 8080".to_owned()),
            ..ReadyConfig::default()
        }
    }

    #[test]
    fn only_typed_flags_are_compared_and_only_the_address_is_operational() {
        let recorded = launch_config();
        let mut given = ReadyConfig {
            reps: 5,
            max_tokens: 64,
            base_url: "http://127.0.0.1:9090".to_owned(),
            ..ReadyConfig::default()
        };
        given.warm_requests = 9;
        let flags = ResumeFlags::new(given, ["--reps", "--base-url", "--max-tokens"]);
        let settings = flags.settings(&recorded, Path::new("out"));
        let differing: Vec<(&str, SettingKind)> = settings
            .iter()
            .filter(|setting| setting.differs())
            .map(|setting| (setting.flag.as_str(), setting.kind))
            .collect();
        // --warm-requests differs too, but was not typed; --launch was not typed either.
        assert_eq!(
            differing,
            vec![
                ("--base-url", SettingKind::Operational),
                ("--reps", SettingKind::Measurement),
                ("--max-tokens", SettingKind::Measurement),
            ]
        );
        let session = flags.session_config(&recorded);
        assert_eq!(session.base_url, "http://127.0.0.1:9090");
        assert_eq!(session.reps, recorded.reps);
    }

    #[test]
    fn another_output_folder_is_refused_and_the_journal_s_is_not() {
        let folder = tempfile::tempdir().expect("tempdir");
        let recorded = launch_config();
        let same = ResumeFlags::<ReadyConfig>::default().out(folder.path().join("."));
        assert!(
            !same
                .settings(&recorded, folder.path())
                .iter()
                .any(Setting::differs)
        );
        let other = ResumeFlags::<ReadyConfig>::default().out(folder.path().join("elsewhere"));
        let settings = other.settings(&recorded, folder.path());
        let out = settings
            .iter()
            .find(|setting| setting.flag == "--out")
            .expect("--out");
        assert!(out.differs());
        assert!(
            out.describe()
                .contains("a resumed run writes next to its journal"),
            "{}",
            out.describe()
        );
    }

    #[test]
    fn a_fingerprint_is_recorded_once_and_compared_once() {
        let journal = Path::new("out/journal.jsonl");
        let a = ServerFingerprint::new("a", "vllm", None);
        let mut new_run = ServerCheck::new(journal, None);
        assert!(new_run.wanted());
        assert_eq!(new_run.check(a.clone()).expect("recorded"), Some(a.clone()));
        assert!(!new_run.wanted());
        let mut resumed = ServerCheck::new(journal, Some(a.clone()));
        assert!(resumed.wanted());
        assert_eq!(resumed.check(a.clone()).expect("the same server"), None);
        assert!(!resumed.wanted());
        let mut changed = ServerCheck::new(journal, Some(a));
        let error = changed
            .check(ServerFingerprint::new("b", "vllm", None))
            .expect_err("another model");
        assert!(matches!(error, RunError::ServerChanged { .. }), "{error}");
    }
}
