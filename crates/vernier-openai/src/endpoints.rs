//! Model list, tokenizer, metrics and server identity.

use http::header::SERVER;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::{ChatMessage, Client, ClientError, MetricsSnapshot};

/// One entry of `/v1/models`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelInfo {
    /// The model name to send in requests.
    pub id: String,
    /// Context length, when the server says (vLLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u64>,
    /// Unknown fields (`owned_by`, `meta`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
struct ModelList {
    #[serde(default)]
    data: Vec<ModelInfo>,
}

/// The result of tokenizing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tokenized {
    /// Number of tokens.
    pub count: usize,
    /// The token ids.
    pub tokens: Vec<u32>,
    /// Context length, when the server says (vLLM).
    pub max_model_len: Option<u64>,
}

/// Which server software answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerKind {
    /// vLLM.
    Vllm,
    /// llama.cpp's `llama-server`.
    LlamaCpp,
    /// `SGLang`.
    SgLang,
    /// Anything else.
    #[default]
    Unknown,
}

/// What the server said about itself. Each probe may fail; what answered is kept.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ServerIdentity {
    /// The first `Server` response header seen.
    pub server_header: Option<String>,
    /// `GET /version` (vLLM, `SGLang`).
    pub version_json: Option<Value>,
    /// `GET /props` (llama.cpp).
    pub props_json: Option<Value>,
    /// `GET /get_server_info` (`SGLang`), probed only when `/version` answered.
    pub server_info_json: Option<Value>,
    /// The software, inferred from the above.
    pub kind: ServerKind,
}

/// What a vLLM or `SGLang` server states of the model it loaded, beyond its identity.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ModelStatements {
    /// `GET /get_model_info` (`SGLang`: the model path it loaded).
    pub model_info_json: Option<Value>,
    /// `GET /server_info` (vLLM in its development mode: its whole configuration).
    pub vllm_server_info_json: Option<Value>,
}

fn tokens_of(value: &Value) -> Option<Vec<u32>> {
    value
        .get("tokens")?
        .as_array()?
        .iter()
        .map(|token| {
            // llama.cpp with `with_pieces` sends {"id": .., "piece": ..}.
            let id = token
                .as_u64()
                .or_else(|| token.get("id").and_then(Value::as_u64))?;
            u32::try_from(id).ok()
        })
        .collect()
}

fn tokenized_from(value: &Value) -> Option<Tokenized> {
    let tokens = tokens_of(value)?;
    let count = value
        .get("count")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(tokens.len());
    Some(Tokenized {
        count,
        tokens,
        max_model_len: value.get("max_model_len").and_then(Value::as_u64),
    })
}

impl Client {
    /// `GET /v1/models`.
    pub async fn models(&self) -> Result<Vec<ModelInfo>, ClientError> {
        let (list, _): (ModelList, _) = self.get_json("v1/models").await?;
        Ok(list.data)
    }

    /// Tokenizes `text`: vLLM's `POST /tokenize {model, prompt}` first (its answer has a
    /// `count`), then llama.cpp's `{content}` shape.
    pub async fn tokenize(&self, model: &str, text: &str) -> Result<Tokenized, ClientError> {
        let first = self
            .post_json::<Value>("tokenize", &json!({ "model": model, "prompt": text }))
            .await;
        if let Ok(value) = &first
            && value.get("count").is_some()
            && let Some(tokenized) = tokenized_from(value)
        {
            return Ok(tokenized);
        }
        match self
            .post_json::<Value>("tokenize", &json!({ "content": text }))
            .await
        {
            Ok(value) => tokenized_from(&value).ok_or_else(|| ClientError::Json {
                what: "tokenize response".to_owned(),
                offset: 0,
                snippet: value.to_string().chars().take(80).collect(),
                message: "no \"tokens\" array of ids".to_owned(),
                events_received: 0,
            }),
            // Report the first shape's error when both failed: it names the usual server.
            Err(second) => Err(first.err().unwrap_or(second)),
        }
    }

    /// Tokenizes a conversation as the chat template renders it: vLLM's
    /// `POST /tokenize {model, messages}`, then llama.cpp's `/apply-template` + `/tokenize`.
    pub async fn tokenize_chat(
        &self,
        model: &str,
        messages: &[ChatMessage],
    ) -> Result<Tokenized, ClientError> {
        let first = self
            .post_json::<Value>("tokenize", &json!({ "model": model, "messages": messages }))
            .await;
        if let Ok(value) = &first
            && value.get("count").is_some()
            && let Some(tokenized) = tokenized_from(value)
        {
            return Ok(tokenized);
        }
        let templated = self
            .post_json::<Value>("apply-template", &json!({ "messages": messages }))
            .await;
        let prompt = match templated {
            Ok(value) => value
                .get("prompt")
                .and_then(Value::as_str)
                .map(str::to_owned),
            Err(_) => None,
        };
        match prompt {
            Some(prompt) => {
                let value = self
                    .post_json::<Value>("tokenize", &json!({ "content": prompt }))
                    .await?;
                tokenized_from(&value).ok_or(ClientError::Json {
                    what: "tokenize response".to_owned(),
                    offset: 0,
                    snippet: String::new(),
                    message: "no \"tokens\" array of ids".to_owned(),
                    events_received: 0,
                })
            }
            None => Err(first.err().unwrap_or(ClientError::Http {
                status: 404,
                body:
                    "the server offers neither vLLM's chat tokenize nor llama.cpp's /apply-template"
                        .to_owned(),
                retry_after: None,
            })),
        }
    }

    /// Whether the server counts a chat prompt as its template renders it
    /// ([`tokenize_chat`](Self::tokenize_chat) answers with a count), tried on one short
    /// message: prompts can then be sized in its own tokens before they are sent.
    pub async fn counts_chat_tokens(&self, model: &str) -> bool {
        matches!(
            self.tokenize_chat(model, &[ChatMessage::user("Hello there.")]).await,
            Ok(tokenized) if tokenized.count > 0
        )
    }

    /// `GET /metrics`, parsed.
    pub async fn metrics(&self) -> Result<MetricsSnapshot, ClientError> {
        let (status, _, body) = self.get_raw("metrics").await?;
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            return Err(ClientError::Http {
                status: status.as_u16(),
                body: text.chars().take(64 * 1024).collect(),
                retry_after: None,
            });
        }
        MetricsSnapshot::parse(&text)
    }

    /// Probes `/version`, `/props` and (for a `/version` server) `/get_server_info`, keeps what
    /// answered, and infers the software.
    pub async fn server_identity(&self) -> ServerIdentity {
        let mut server_header = None;
        let mut probe = async |path: &str| -> Option<Value> {
            let (status, headers, body) = self.get_raw(path).await.ok()?;
            if server_header.is_none() {
                server_header = headers
                    .get(SERVER)
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned);
            }
            if !status.is_success() {
                return None;
            }
            serde_json::from_slice::<Value>(&body)
                .ok()
                .filter(Value::is_object)
        };
        let version_json = probe("version").await;
        let props_json = probe("props").await;
        let server_info_json = if version_json.is_some() {
            probe("get_server_info").await
        } else {
            None
        };
        let kind = infer_kind(
            server_header.as_deref(),
            version_json.as_ref(),
            props_json.as_ref(),
            server_info_json.as_ref(),
        );
        ServerIdentity {
            server_header,
            version_json,
            props_json,
            server_info_json,
            kind,
        }
    }

    /// Probes `/get_model_info` and `/server_info` for a server whose identity answered
    /// `/version` (vLLM, `SGLang`), and nothing for any other: what it states of the weights it
    /// loaded beyond its identity, read once where a run records them (not with every identity
    /// check).
    pub async fn model_statements(&self, identity: &ServerIdentity) -> ModelStatements {
        if identity.version_json.is_none() {
            return ModelStatements::default();
        }
        let probe = async |path: &str| -> Option<Value> {
            let (status, _, body) = self.get_raw(path).await.ok()?;
            status
                .is_success()
                .then(|| serde_json::from_slice::<Value>(&body).ok())
                .flatten()
                .filter(Value::is_object)
        };
        ModelStatements {
            model_info_json: probe("get_model_info").await,
            vllm_server_info_json: probe("server_info").await,
        }
    }
}

fn infer_kind(
    server: Option<&str>,
    version: Option<&Value>,
    props: Option<&Value>,
    server_info: Option<&Value>,
) -> ServerKind {
    let server = server.unwrap_or_default().to_ascii_lowercase();
    if server.contains("llama.cpp")
        || props.is_some_and(|props| {
            props.get("build_info").is_some() || props.get("total_slots").is_some()
        })
    {
        return ServerKind::LlamaCpp;
    }
    if server_info.is_some() {
        return ServerKind::SgLang;
    }
    if version.is_some_and(|version| version.get("version").is_some()) {
        return ServerKind::Vllm;
    }
    ServerKind::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_inference() {
        let props = json!({"build_info": "b1", "total_slots": 4});
        assert_eq!(
            infer_kind(Some("llama.cpp"), None, None, None),
            ServerKind::LlamaCpp
        );
        assert_eq!(
            infer_kind(None, None, Some(&props), None),
            ServerKind::LlamaCpp
        );
        let version = json!({"version": "0.11.0"});
        assert_eq!(
            infer_kind(Some("uvicorn"), Some(&version), None, None),
            ServerKind::Vllm
        );
        assert_eq!(
            infer_kind(Some("uvicorn"), Some(&version), None, Some(&json!({}))),
            ServerKind::SgLang
        );
        assert_eq!(infer_kind(None, None, None, None), ServerKind::Unknown);
    }

    #[test]
    fn tokenize_shapes() {
        let vllm = tokenized_from(&json!({"count": 3, "tokens": [1, 2, 3], "max_model_len": 4096}))
            .expect("vllm");
        assert_eq!((vllm.count, vllm.max_model_len), (3, Some(4096)));
        let llama =
            tokenized_from(&json!({"tokens": [{"id": 5, "piece": "a"}, 6]})).expect("llama");
        assert_eq!((llama.count, llama.tokens), (2, vec![5, 6]));
        assert!(tokenized_from(&json!({"detail": "x"})).is_none());
    }
}
