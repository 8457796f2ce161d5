//! The server a run measures: the client that talks to it, the model it serves (one rule for
//! every engine), and its identity.

use std::path::Path;

use vernier_openai::{Client, ClientBuilder, ModelInfo, ServerIdentity, ServerKind, Timeouts};

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

/// Builds the client every engine uses: the key from the environment when named, the extra CA
/// certificates when given (`HTTPS_PROXY` and `NO_PROXY` are honoured). A CA file that cannot
/// be read, or one given for a plain `http://` server, is a refused flag (`--ca-cert`), and so
/// is a URL that cannot name a server (`--base-url`).
pub fn build_client(options: &ClientOptions<'_>) -> Result<Client, RunError> {
    let mut builder = ClientBuilder::new(options.base_url).timeouts(options.timeouts);
    if let Some(agent) = &options.user_agent {
        builder = builder.user_agent(agent.clone());
    }
    if let Some(var) = options.api_key_env {
        builder = builder.api_key_from_env(var);
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
/// - `wanted` given: taken as given; when the server lists models and `wanted` is not among
///   them, a resumed run (`resumed_journal`) is refused as [`RunError::ServerChanged`]; a
///   server that does not answer `/v1/models` (some hosted APIs) is taken at its word;
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
            if let (false, Some(journal), false) = (found, resumed_journal, listed.is_empty()) {
                let served: Vec<&str> = listed.iter().map(|m| m.id.as_str()).collect();
                return Err(RunError::ServerChanged {
                    journal: journal.to_path_buf(),
                    differences: format!(
                        "model: journal {wanted:?}, the server lists {}",
                        served.join(", ")
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

/// The fingerprint of `model` served by the server `identity` describes.
pub fn fingerprint(model: &str, identity: &ServerIdentity) -> ServerFingerprint {
    ServerFingerprint::new(
        model,
        kind_name(identity.kind),
        identity.version_json.as_ref().map(ToString::to_string),
    )
}
