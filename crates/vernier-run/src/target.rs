//! The server a run measures: the client that talks to it, the model it serves (one rule for
//! every engine), and its identity.

use std::path::Path;

use vernier_openai::{
    Client, ClientBuilder, ModelInfo, ModelStatements, ServerIdentity, ServerKind, Timeouts,
};

use crate::error::RunError;
use crate::identity::ServerFingerprint;

/// How to reach the server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions<'a> {
    /// The server's root or `/v1` URL.
    pub base_url: &'a str,
    /// The environment variable holding the API key (its value is never written anywhere).
    pub api_key_env: Option<&'a str>,
    /// A PEM file of CA certificates trusted beside the built-in roots.
    pub ca_cert: Option<&'a Path>,
    /// The client's timeouts.
    pub timeouts: Timeouts,
    /// The `User-Agent` header (the client's default when `None`).
    pub user_agent: Option<String>,
    /// A proxy for every request (else the environment's `HTTPS_PROXY`/`HTTP_PROXY`).
    pub proxy: Option<&'a str>,
    /// No proxy, whatever the environment says.
    pub no_proxy: bool,
}

impl<'a> ClientOptions<'a> {
    /// Options for `base_url` with no key, no extra CA, no timeouts and the default agent.
    pub fn new(base_url: &'a str) -> Self {
        Self {
            base_url,
            api_key_env: None,
            ca_cert: None,
            timeouts: Timeouts::none(),
            user_agent: None,
            proxy: None,
            no_proxy: false,
        }
    }

    /// The key is read from the environment variable `var`.
    #[must_use]
    pub fn api_key_env(mut self, var: Option<&'a str>) -> Self {
        self.api_key_env = var;
        self
    }

    /// The CA certificates in the PEM file `path` are trusted too.
    #[must_use]
    pub fn ca_cert(mut self, path: Option<&'a Path>) -> Self {
        self.ca_cert = path;
        self
    }

    /// The client's timeouts.
    #[must_use]
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// The `User-Agent` header.
    #[must_use]
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.user_agent = Some(agent.into());
        self
    }
}

/// The variable the key is read from when no `--api-key-env` names one, as the reference
/// clients do.
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";

/// The variable the key comes from: the one named, else [`DEFAULT_API_KEY_ENV`] when it is set
/// and not empty, else none.
pub fn api_key_source(named: Option<&str>) -> Option<&str> {
    named.or_else(|| {
        std::env::var_os(DEFAULT_API_KEY_ENV)
            .filter(|value| !value.is_empty())
            .map(|_| DEFAULT_API_KEY_ENV)
    })
}

/// Builds the client every engine uses: the key from the environment when named (else from
/// `OPENAI_API_KEY` when it is set; never written anywhere), the extra CA
/// certificates when given (`HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` are honoured). A CA file that cannot
/// be read, or one given for a plain `http://` server, is a refused flag (`--ca-cert`), and so
/// is a URL that cannot name a server (`--base-url`).
pub fn build_client(options: &ClientOptions<'_>) -> Result<Client, RunError> {
    let mut builder = ClientBuilder::new(options.base_url).timeouts(options.timeouts);
    if let Some(agent) = &options.user_agent {
        builder = builder.user_agent(agent.clone());
    }
    if let Some(var) = api_key_source(options.api_key_env) {
        builder = builder.api_key_from_env(var);
    }
    if options.no_proxy {
        builder = builder.no_proxy();
    } else if let Some(proxy) = options.proxy {
        builder = builder.proxy(proxy);
    }
    if let Some(path) = options.ca_cert {
        if options.base_url.trim_start().starts_with("http://") {
            return Err(RunError::invalid(
                "--ca-cert",
                format!(
                    "{} is plain http://, where no certificate is checked; drop --ca-cert, or use the server's https:// address",
                    options.base_url
                ),
            ));
        }
        let pem = std::fs::read(path).map_err(|error| {
            RunError::invalid(
                "--ca-cert",
                format!(
                    "cannot read {}: {error}; give a PEM file with the server's CA certificate",
                    path.display()
                ),
            )
        })?;
        builder = builder.ca_cert_pem(path.display().to_string(), pem);
    }
    builder.build().map_err(|source| match source {
        // A URL that cannot name a server is a refused flag, as a malformed value is.
        vernier_openai::ClientError::InvalidUrl { url, reason } => RunError::invalid(
            "--base-url",
            format!("{url} cannot be used: {reason}; give http://HOST:PORT or https://HOST"),
        ),
        // A key variable that is unset or empty is a refused flag too.
        source @ (vernier_openai::ClientError::MissingApiKey { .. }
        | vernier_openai::ClientError::EmptyApiKey { .. }) => {
            RunError::invalid("--api-key-env", vernier_cli::one_line(&source))
        }
        source => RunError::Client {
            what: format!("set up a client for {}", options.base_url),
            source,
        },
    })
}

/// The model a run measures and the server's list it was found in.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResolvedModel {
    /// The model id to send.
    pub id: String,
    /// `/v1/models` as the server answered (empty when it did not).
    pub listed: Vec<ModelInfo>,
}

/// The one rule for the model a run measures, in every engine:
/// - `wanted` given: when the server lists models and `wanted` is not among them, a new run is
///   a refused flag (`--model`, exit 2: a report titled with a model the server never loaded
///   would lie) and a resumed run (`resumed_journal`) is [`RunError::ServerChanged`]; a server
///   that does not answer `/v1/models` (some hosted APIs) is taken at its word;
/// - `wanted` not given: the first model listed; an empty list is a refused flag (`--model`),
///   and a list that cannot be read is a client error naming `/v1/models`.
pub async fn resolve_model(
    client: &Client,
    wanted: Option<&str>,
    resumed_journal: Option<&Path>,
) -> Result<ResolvedModel, RunError> {
    let models = client.models().await.map_err(|source| RunError::Client {
        what: format!(
            "list models at {}/v1/models (or pass --model)",
            client.base_url()
        ),
        source,
    });
    match (wanted.filter(|wanted| !wanted.is_empty()), models) {
        (Some(wanted), Ok(listed)) => {
            let found = listed.iter().any(|model| model.id == wanted);
            if !found && !listed.is_empty() {
                let served: Vec<&str> = listed.iter().map(|m| m.id.as_str()).collect();
                return Err(match resumed_journal {
                    Some(journal) => RunError::ServerChanged {
                        journal: journal.to_path_buf(),
                        differences: format!(
                            "model: journal {wanted:?}, the server lists {}",
                            served.join(", ")
                        ),
                    },
                    None => RunError::invalid(
                        "--model",
                        format!(
                            "{wanted:?} is not served at {}; the server lists {}: pass one of them, or leave --model out to measure the first",
                            client.base_url(),
                            served.join(", ")
                        ),
                    ),
                });
            }
            Ok(ResolvedModel {
                id: wanted.to_owned(),
                listed,
            })
        }
        (Some(wanted), Err(_)) => Ok(ResolvedModel {
            id: wanted.to_owned(),
            listed: Vec::new(),
        }),
        (None, Ok(listed)) => match listed.first() {
            Some(first) => Ok(ResolvedModel {
                id: first.id.clone(),
                listed: listed.clone(),
            }),
            None => Err(RunError::invalid(
                "--model",
                "the server's /v1/models is empty; name the model with --model",
            )),
        },
        (None, Err(error)) => Err(error),
    }
}

/// `vllm`, `llama_cpp`, `sglang` or `unknown`.
pub const fn kind_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Vllm => "vllm",
        ServerKind::LlamaCpp => "llama_cpp",
        ServerKind::SgLang => "sglang",
        _ => "unknown",
    }
}

/// What changed since the run began: the server asked again at the end of a run, the model
/// still listed and the fingerprint compared with the one recorded at its start. Empty when
/// nothing did (or the server no longer answers its listing, which is not a change).
pub async fn identity_changes(client: &Client, recorded: &ServerFingerprint) -> Vec<String> {
    let mut changes = Vec::new();
    if let Ok(listed) = client.models().await
        && !listed.is_empty()
        && !listed.iter().any(|model| model.id == recorded.model)
    {
        let served: Vec<&str> = listed.iter().map(|m| m.id.as_str()).collect();
        changes.push(format!(
            "model {:?} no longer listed; the server lists {}",
            recorded.model,
            served.join(", ")
        ));
    }
    let now = fingerprint(&recorded.model, &client.server_identity().await);
    changes.extend(recorded.differences_as(&now, "at the start", "at the end"));
    changes
}

/// The fingerprint of `model` served by the server `identity` describes.
pub fn fingerprint(model: &str, identity: &ServerIdentity) -> ServerFingerprint {
    ServerFingerprint::new(
        model,
        kind_name(identity.kind),
        identity.version_json.as_ref().map(ToString::to_string),
    )
}

/// What the server states it loaded for `model` ([`loaded_weights`]), its model statements
/// read from it once here.
pub async fn read_loaded_weights(
    client: &Client,
    model: &ResolvedModel,
    identity: &ServerIdentity,
) -> crate::LoadedWeights {
    let statements = client.model_statements(identity).await;
    loaded_weights(&model.id, &model.listed, identity, &statements)
}

/// What the server states it loaded for `model` (its `/v1/models` entry among `listed`,
/// `identity`'s `/props` and launch settings, and `statements`' `/get_model_info`), with the
/// served-name check.
pub fn loaded_weights(
    model: &str,
    listed: &[ModelInfo],
    identity: &ServerIdentity,
    statements: &ModelStatements,
) -> crate::LoadedWeights {
    let entry = listed.iter().find(|entry| entry.id == model);
    let text = |value: Option<&serde_json::Value>| {
        value
            .and_then(serde_json::Value::as_str)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    let props = identity.props_json.as_ref();
    let model_info = statements.model_info_json.as_ref();
    let (loaded_from, stated_by) = if let Some(root) = text(entry.and_then(|e| e.extra.get("root")))
    {
        (Some(root), Some("/v1/models root".to_owned()))
    } else if let Some(path) = text(props.and_then(|p| p.get("model_path"))) {
        (Some(path), Some("/props model_path".to_owned()))
    } else if let Some(path) = text(model_info.and_then(|m| m.get("model_path"))) {
        (Some(path), Some("/get_model_info model_path".to_owned()))
    } else {
        (None, None)
    };
    let file_type = text(props.and_then(|p| p.get("model_ftype"))).or_else(|| {
        text(
            entry
                .and_then(|e| e.extra.get("meta"))
                .and_then(|meta| meta.get("ftype")),
        )
    });
    let mut weights = crate::LoadedWeights::new(model, loaded_from, stated_by, file_type);
    if let Some(entry) = entry {
        weights.stated.push((
            "/v1/models".to_owned(),
            serde_json::to_value(entry).unwrap_or(serde_json::Value::Null),
        ));
    }
    if let Some(info) = model_info {
        weights
            .stated
            .push(("/get_model_info".to_owned(), info.clone()));
    }
    // Kept without their secrets: SGLang's server arguments hold its `api_key`.
    // llama.cpp shows no flags, but `/props` carries what they set: the slots (`-np`), each
    // slot's context and sampling defaults, the build.
    let llama_settings = props.map(|props| {
        let kept: serde_json::Map<String, serde_json::Value> = [
            "total_slots",
            "default_generation_settings",
            "build_info",
            "model_alias",
            "modalities",
        ]
        .iter()
        .filter_map(|key| Some(((*key).to_owned(), props.get(*key)?.clone())))
        .collect();
        serde_json::Value::Object(kept)
    });
    weights.launch_flags = identity
        .server_info_json
        .clone()
        .or_else(|| statements.vllm_server_info_json.clone())
        .or(llama_settings)
        .map(crate::redact_secrets);
    weights
}

#[cfg(test)]
mod weights_tests {
    use super::*;

    #[test]
    fn a_real_llama_server_states_its_path_and_file_type() {
        // Recorded from llama-server b11434 serving gemma-3-270m-q4_k_m.gguf.
        let props: serde_json::Value = serde_json::from_str(include_str!(
            "../../../fixtures/real-transcripts/llama-server-b11434/props.json"
        ))
        .expect("props");
        let models: serde_json::Value = serde_json::from_str(include_str!(
            "../../../fixtures/real-transcripts/llama-server-b11434/models.json"
        ))
        .expect("models");
        let listed: Vec<ModelInfo> =
            serde_json::from_value(models["data"].clone()).expect("model entries");
        let mut identity = ServerIdentity::default();
        identity.props_json = Some(props);
        let none = ModelStatements::default();
        let weights = loaded_weights("gemma-3-270m-q4_k_m", &listed, &identity, &none);
        assert_eq!(
            weights.loaded_from.as_deref(),
            Some("/work/steering/lab/models/gemma-3-270m-q4_k_m.gguf")
        );
        assert_eq!(weights.stated_by.as_deref(), Some("/props model_path"));
        assert_eq!(weights.file_type.as_deref(), Some("Q4_K - Medium"));
        assert_eq!(weights.mismatch, None);
        // What llama.cpp's flags set, as `/props` shows it: 4 slots (`-np 4`), its build.
        let flags = weights.launch_flags.as_ref().expect("settings from /props");
        assert_eq!(flags["total_slots"], 4);
        assert_eq!(flags["build_info"], "b11434-unknown");
        assert!(flags.get("chat_template").is_none());
        // The same server under `--alias gemma`: the file type alone names Q4_K_M.
        let aliased = loaded_weights("gemma", &listed, &identity, &none);
        assert!(aliased.mismatch.is_some());
    }
}
