//! The server a command talks to, declared once for every binary (`--base-url`, `--model`,
//! `--api-key-env`, `--ca-cert`, `--extra-body`) and for study files: one set of flags, one
//! validation, one error text, the same defaults everywhere. Proxies come from the environment
//! (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), never for a loopback server, in every command
//! alike; each engine keeps its own request deadlines, which are part of what it measures.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::RunError;

/// The one default server address of every command that needs a server and has no simulator
/// to fall back on (`lifecycle`): vLLM's default port, which the bundled `vernier-sim-server`
/// also listens on.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8000";

/// The target flags, flattened into every binary's arguments (feature `cli`) and read from a
/// study file's `[target]` table (unknown keys refused).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct TargetArgs {
    /// Server root or `/v1` URL, e.g. `http://127.0.0.1:8000` (an endpoint such as
    /// `/v1/chat/completions` is trimmed, with a note). Without it, `sweep`, `hardsuite` and
    /// `battery` run the bundled simulator and `lifecycle` uses `http://127.0.0.1:8000`.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "URL", help_heading = "Server")
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Model id; the first one `/v1/models` lists when omitted (a model the server does not
    /// list is refused).
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID", help_heading = "Server"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Environment variable holding the API key [default: `OPENAI_API_KEY`, when set]; the key
    /// is never written to any file or message.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "VAR", help_heading = "Server")
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// A PEM file of CA certificates to trust beside the built-in roots, for an HTTPS server
    /// with a private CA or a self-signed certificate.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "PEM", help_heading = "Server")
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<PathBuf>,
    /// A JSON object merged into every request body, e.g.
    /// `{"chat_template_kwargs":{"enable_thinking":false}}`.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "JSON", help_heading = "Server")
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<ExtraBody>,
}

/// `--extra-body` as given: JSON text on a command line, a table in a study file. Checked (a
/// JSON object) by [`TargetArgs::checked`], so a bad one is refused with the flag's name like
/// every other target setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ExtraBody {
    /// A table (a study file's `extra_body = { ... }`).
    Table(serde_json::Map<String, serde_json::Value>),
    /// Text to parse as a JSON object (the command line's).
    Text(String),
}

impl std::str::FromStr for ExtraBody {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Self::Text(text.to_owned()))
    }
}

impl From<serde_json::Map<String, serde_json::Value>> for ExtraBody {
    fn from(map: serde_json::Map<String, serde_json::Value>) -> Self {
        Self::Table(map)
    }
}

impl ExtraBody {
    /// The object, or why the text is none (a refused `--extra-body`).
    pub fn object(&self) -> Result<serde_json::Map<String, serde_json::Value>, RunError> {
        match self {
            Self::Table(map) => Ok(map.clone()),
            Self::Text(text) => {
                parse_json_object(text).map_err(|why| RunError::invalid("--extra-body", why))
            }
        }
    }
}

/// The target after its one validation: the URL trimmed and checked, the rest as given.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Target {
    /// The server's root or `/v1` URL; `None` when none was given (the simulator, or
    /// [`DEFAULT_BASE_URL`] for commands without one: [`Target::base_url_or_default`]).
    pub base_url: Option<String>,
    /// What the validation changed and the binary should say (an endpoint trimmed off).
    pub notes: Vec<String>,
    /// The model asked for.
    pub model: Option<String>,
    /// The key's variable.
    pub api_key_env: Option<String>,
    /// Extra CA certificates.
    pub ca_cert: Option<PathBuf>,
    /// Merged into every request body.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

impl Target {
    /// The base URL, or [`DEFAULT_BASE_URL`] where none was given.
    pub fn base_url_or_default(&self) -> String {
        self.base_url
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
    }
}

impl TargetArgs {
    /// Targets `base_url` with every other setting at its default.
    pub fn at(base_url: impl Into<String>) -> Self {
        Self {
            base_url: Some(base_url.into()),
            ..Self::default()
        }
    }

    /// The one validation of the target flags: the URL trimmed of an endpoint path (with a
    /// note) and checked for a scheme, a host and a usable port; `--ca-cert` only for
    /// `https://`; the key's variable a name; the model not blank. Each
    /// refusal names the flag, what was given and the fix (exit 2).
    pub fn checked(&self) -> Result<Target, RunError> {
        let mut notes = Vec::new();
        let base_url = match self.base_url.as_deref() {
            Some(url) => {
                let (trimmed, note) = trim_base_url(url);
                notes.extend(note);
                check_url("--base-url", &trimmed)?;
                Some(trimmed)
            }
            None => None,
        };
        if let (Some(url), Some(_)) = (&base_url, &self.ca_cert)
            && url.starts_with("http://")
        {
            return Err(RunError::invalid(
                "--ca-cert",
                format!(
                    "{url} is plain http://, where no certificate is checked; drop --ca-cert, or use the server's https:// address"
                ),
            ));
        }
        if let Some(var) = &self.api_key_env
            && (var.is_empty() || var.contains('='))
        {
            return Err(RunError::invalid(
                "--api-key-env",
                format!(
                    "{var:?} is not the name of an environment variable; give the variable's name (e.g. OPENAI_API_KEY), never the key"
                ),
            ));
        }
        if let Some(model) = &self.model
            && model.trim().is_empty()
        {
            return Err(RunError::invalid(
                "--model",
                "an empty model id; give the id /v1/models lists, or leave --model out for the first",
            ));
        }
        Ok(Target {
            base_url,
            notes,
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
            ca_cert: self.ca_cert.clone(),
            extra_body: self.extra_body_object()?,
        })
    }

    /// `--extra-body` as an object (empty when not given), or its refusal.
    pub fn extra_body_object(
        &self,
    ) -> Result<serde_json::Map<String, serde_json::Value>, RunError> {
        self.extra_body
            .as_ref()
            .map(ExtraBody::object)
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// The flags that name this target on a command line (to repeat it in a printed resume
    /// command): `--base-url` and `--api-key-env` when given.
    pub fn flags(&self) -> Vec<String> {
        let mut words = Vec::new();
        if let Some(url) = &self.base_url {
            words.extend(["--base-url".to_owned(), url.clone()]);
        }
        if let Some(var) = &self.api_key_env {
            words.extend(["--api-key-env".to_owned(), var.clone()]);
        }
        words
    }
}

/// A base URL as users paste it, trimmed to the server's root or `/v1`: an endpoint path
/// (`/chat/completions`, `/completions`, `/models`) and trailing slashes come off. Returns the
/// URL to use and, when it changed, a note saying so for the binary to print.
pub fn trim_base_url(url: &str) -> (String, Option<String>) {
    let mut trimmed = url.trim().trim_end_matches('/');
    for endpoint in ["/chat/completions", "/completions", "/models"] {
        if let Some(root) = trimmed.strip_suffix(endpoint) {
            trimmed = root.trim_end_matches('/');
            break;
        }
    }
    if trimmed.len() + 1 < url.trim().len() {
        let note = format!(
            "note: --base-url {url} names an endpoint; using {trimmed} (the requests add their own paths)"
        );
        (trimmed.to_owned(), Some(note))
    } else {
        (trimmed.to_owned(), None)
    }
}

/// A URL a flag gives: `http://` or `https://`, a host, and a port from 1 to 65535 when one is
/// written.
fn check_url(flag: &str, url: &str) -> Result<(), RunError> {
    let refuse = |why: &str| {
        RunError::invalid(
            flag,
            format!("{url:?} {why}; give http://HOST:PORT or https://HOST"),
        )
    };
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| refuse("does not start with http:// or https://"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if host_port.is_empty() {
        return Err(refuse("names no host"));
    }
    // An IPv6 literal is bracketed; a port follows the last colon outside the brackets.
    let after_host = host_port
        .rfind(']')
        .map_or(host_port, |end| &host_port[end + 1..]);
    if let Some((host, port)) = after_host.rsplit_once(':') {
        if host.is_empty() && !host_port.starts_with('[') {
            return Err(refuse("names no host"));
        }
        match port.parse::<u32>() {
            Ok(1..=65_535) => {}
            _ => {
                return Err(refuse(&format!(
                    "has port {port:?}, which is not 1 to 65535"
                )));
            }
        }
    }
    Ok(())
}

/// A JSON object given as text (`--extra-body`), or a message naming what it is instead.
pub fn parse_json_object(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(
            "it must be a JSON object, e.g. '{\"chat_template_kwargs\":{\"enable_thinking\":false}}'"
                .to_owned(),
        ),
        Err(error) => Err(format!(
            "it is not JSON ({error}); give an object, e.g. '{{\"top_k\": 1}}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_cli::Failure as _;

    #[test]
    fn an_endpoint_is_trimmed_with_a_note_and_a_root_is_kept() {
        let target = TargetArgs::at("http://127.0.0.1:8000/v1/chat/completions")
            .checked()
            .expect("valid");
        assert_eq!(target.base_url.as_deref(), Some("http://127.0.0.1:8000/v1"));
        assert_eq!(target.notes.len(), 1);
        let root = TargetArgs::at("http://127.0.0.1:8000/")
            .checked()
            .expect("valid");
        assert_eq!(root.base_url.as_deref(), Some("http://127.0.0.1:8000"));
        assert!(root.notes.is_empty());
    }

    #[test]
    fn unusable_values_are_refused_by_flag_with_the_fix() {
        for (args, flag) in [
            (TargetArgs::at("127.0.0.1:8000"), "--base-url"),
            (TargetArgs::at("http://127.0.0.1:99999"), "--base-url"),
            (TargetArgs::at("http://127.0.0.1:0"), "--base-url"),
            (TargetArgs::at("http://:8000"), "--base-url"),
            (
                TargetArgs {
                    ca_cert: Some("ca.pem".into()),
                    ..TargetArgs::at("http://127.0.0.1:8000")
                },
                "--ca-cert",
            ),
            (
                TargetArgs {
                    api_key_env: Some("sk-abc=1".to_owned()),
                    ..TargetArgs::default()
                },
                "--api-key-env",
            ),
            (
                TargetArgs {
                    model: Some(" ".to_owned()),
                    ..TargetArgs::default()
                },
                "--model",
            ),
        ] {
            let error = args.checked().expect_err(flag);
            assert_eq!(error.exit_code(), 2, "{error}");
            assert!(
                error.to_string().starts_with(&format!("use {flag}: ")),
                "{error}"
            );
        }
    }

    #[test]
    fn extra_body_text_must_be_a_json_object() {
        for (text, why) in [("[1]", "must be a JSON object"), ("{not", "it is not JSON")] {
            let args = TargetArgs {
                extra_body: Some(text.parse().expect("any text")),
                ..TargetArgs::default()
            };
            let error = args.checked().expect_err(text);
            assert!(
                error.to_string().starts_with("use --extra-body: "),
                "{error}"
            );
            assert!(error.to_string().contains(why), "{error}");
        }
        let args = TargetArgs {
            extra_body: Some(r#"{"top_k": 1}"#.parse().expect("any text")),
            ..TargetArgs::default()
        };
        assert_eq!(args.checked().expect("an object").extra_body["top_k"], 1);
    }

    #[test]
    fn ipv6_hosts_and_default_ports_pass() {
        for url in [
            "http://[::1]:8000",
            "https://api.example.com",
            "http://[::1]",
        ] {
            TargetArgs::at(url).checked().expect(url);
        }
    }

    #[test]
    fn a_study_file_target_refuses_unknown_keys() {
        let error = toml_like(r#"{"base_url": "http://h:1", "modle": "m"}"#);
        assert!(error.contains("unknown field `modle`"), "{error}");
    }

    fn toml_like(json: &str) -> String {
        serde_json::from_str::<TargetArgs>(json)
            .expect_err("refused")
            .to_string()
    }
}
