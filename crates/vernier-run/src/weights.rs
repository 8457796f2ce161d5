//! What the server says it really loaded, beside the name it serves: the seed's FP8 weights
//! served under the BF16 model's name, which nothing in an API answer reveals.
//!
//! Read from what each server states: vLLM's `/v1/models` `root` (the path or repository it
//! loaded; `id` is `--served-model-name`), llama.cpp's `/props` `model_path` and `model_ftype`
//! (the GGUF's `general.file_type`, named), `SGLang`'s `/get_model_info` `model_path`. The
//! precision each names is compared: a served name that names another precision than the
//! weights, or none where the weights name one, is flagged.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The weights a server states it loaded, and whether its served name agrees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoadedWeights {
    /// The name requests use.
    pub served_name: String,
    /// The path or repository the server loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_from: Option<String>,
    /// Which answer stated it (`/v1/models root`, `/props model_path`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_by: Option<String>,
    /// The weights' file type as the server names it (llama.cpp's `model_ftype`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<String>,
    /// Everything else the server stated about the model (`/v1/models`' entry, `SGLang`'s
    /// `/get_model_info`), as answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stated: Vec<(String, Value)>,
    /// The server's own launch settings where it shows them (`SGLang`'s `/get_server_info`,
    /// vLLM's `/server_info` in its development mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_flags: Option<Value>,
    /// Why the served name and the loaded weights disagree, when they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<String>,
}

impl LoadedWeights {
    /// The weights behind `served_name`, loaded from `loaded_from` (stated by `stated_by`) with
    /// the file type `file_type`; the name check is made here.
    pub fn new(
        served_name: impl Into<String>,
        loaded_from: Option<String>,
        stated_by: Option<String>,
        file_type: Option<String>,
    ) -> Self {
        let served_name = served_name.into();
        let mismatch = name_mismatch(&served_name, loaded_from.as_deref(), file_type.as_deref());
        Self {
            served_name,
            loaded_from,
            stated_by,
            file_type,
            stated: Vec::new(),
            launch_flags: None,
            mismatch,
        }
    }

    /// The warning a run gives at its start when the served name and the weights disagree.
    pub fn warning(&self) -> Option<String> {
        self.mismatch
            .as_ref()
            .map(|mismatch| format!("served name and weights disagree: {mismatch}"))
    }

    /// One line for a report: `loaded from /models/x (stated by …), file type Q4_1`.
    pub fn describe(&self) -> String {
        let mut line = match (&self.loaded_from, &self.stated_by) {
            (Some(path), Some(by)) => format!("loaded from `{path}` ({by})"),
            (Some(path), None) => format!("loaded from `{path}`"),
            (None, _) => "the server does not say what it loaded".to_owned(),
        };
        if let Some(file_type) = &self.file_type {
            let _ = write!(line, ", file type {file_type}");
        }
        line
    }
}

/// Whether a launch setting named `key` holds a secret (`api_key`, `admin_api_key`,
/// `hf_token`, `ssl_keyfile_password`, …): its value is never written anywhere.
fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.ends_with("_key")
        || key == "key"
        || key.contains("api_key")
        || key.contains("secret")
        || key.contains("password")
        || key == "token"
        || key.ends_with("auth_token")
        || key.ends_with("access_token")
        || key.ends_with("hf_token")
}

/// `value` with every secret setting's value replaced by `"[redacted]"` (null and empty
/// values are kept: they say the setting is not set).
pub fn redact_secrets(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| {
                    let kept = match &value {
                        Value::Null => true,
                        Value::String(text) => text.is_empty(),
                        _ => false,
                    };
                    if secret_key(&key) && !kept && !value.is_object() {
                        (key, Value::String("[redacted]".to_owned()))
                    } else {
                        (key, redact_secrets(value))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(redact_secrets).collect()),
        other => other,
    }
}

/// Every spelling of a precision or quantisation, by the name it is reported under.
const PRECISIONS: [(&str, &[&str]); 12] = [
    ("FP32", &["fp32", "f32", "float32"]),
    ("FP16", &["fp16", "f16", "float16", "half"]),
    ("BF16", &["bf16", "bfloat16"]),
    (
        "FP8",
        &[
            "fp8",
            "f8",
            "float8",
            "e4m3",
            "e5m2",
            "fp8_e4m3",
            "fp8_dynamic",
        ],
    ),
    ("INT8", &["int8", "w8a8", "8bit", "w8a16"]),
    ("INT4", &["int4", "w4a16", "4bit", "w4a8"]),
    ("AWQ", &["awq"]),
    ("GPTQ", &["gptq"]),
    ("NVFP4", &["nvfp4"]),
    ("MXFP4", &["mxfp4"]),
    ("NF4", &["nf4", "bnb"]),
    ("EXL2", &["exl2"]),
];

/// A GGUF quantisation type (`q4_k_m`, `q8_0`, `iq2_xxs`), upper-cased.
fn gguf_type(token: &str) -> Option<String> {
    let body = token
        .strip_prefix("iq")
        .or_else(|| token.strip_prefix('q'))?;
    let bits = body.chars().next()?;
    (bits.is_ascii_digit() && body.len() >= 2 && body[1..].starts_with('_'))
        .then(|| token.to_ascii_uppercase())
}

/// The precisions `text` names, by their reported names. AWQ and GPTQ weights are 4-bit
/// integers, so they name INT4 too.
pub fn precisions_named(text: &str) -> BTreeSet<String> {
    let lower = text.to_ascii_lowercase();
    let mut named = BTreeSet::new();
    // Words split at `_` too ("llama3_8b_fp8"); a GGUF type keeps its underscores ("Q4_K_M").
    for token in lower.split(|c: char| !c.is_ascii_alphanumeric()) {
        for (name, spellings) in PRECISIONS {
            if spellings.contains(&token) {
                named.insert(name.to_owned());
            }
        }
    }
    for token in lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let mut parts: Vec<&str> = token.split('_').collect();
        // "instruct_q4_k_m" ends in a GGUF type: try each tail.
        while !parts.is_empty() {
            if let Some(quant) = gguf_type(&parts.join("_")) {
                named.insert(quant);
                break;
            }
            parts.remove(0);
        }
    }
    if named.contains("AWQ") || named.contains("GPTQ") {
        named.insert("INT4".to_owned());
    }
    named
}

/// The last two parts of a path (`/models/fp16/Qwen3-8B-FP8` → `fp16/Qwen3-8B-FP8`): folders
/// further up name where weights are kept, not what they are.
fn last_parts(path: &str) -> String {
    let parts: Vec<&str> = path.trim_end_matches('/').rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// Precisions a served name that names none is taken to mean: the model's own (full-width
/// weights, or gpt-oss's native MXFP4).
const UNNAMED_MEANS: [&str; 4] = ["BF16", "FP16", "FP32", "MXFP4"];

/// llama.cpp's file-type name (`Q4_K - Medium`, `all F32`, `IQ2_XXS - 2.0625 bpw`) as the
/// precision names [`precisions_named`] gives.
pub fn file_type_precisions(file_type: &str) -> BTreeSet<String> {
    let lower = file_type.to_ascii_lowercase();
    let normalised = lower
        .replace(" - medium", "_m")
        .replace(" - small", "_s")
        .replace(" - large", "_l")
        .replace("all f32", "f32");
    let head = normalised.split(" - ").next().unwrap_or_default();
    precisions_named(head)
}

/// Why `served_name` disagrees with weights loaded from `loaded_from` of type `file_type`:
/// both name precisions and share none, or the weights name one and the served name none.
pub fn name_mismatch(
    served_name: &str,
    loaded_from: Option<&str>,
    file_type: Option<&str>,
) -> Option<String> {
    let mut loaded = loaded_from
        .map(|path| precisions_named(&last_parts(path)))
        .unwrap_or_default();
    if let Some(file_type) = file_type {
        loaded.extend(file_type_precisions(file_type));
    }
    if loaded.is_empty() {
        return None;
    }
    let served = precisions_named(served_name);
    if !served.is_disjoint(&loaded) {
        return None;
    }
    if served.is_empty()
        && loaded
            .iter()
            .all(|name| UNNAMED_MEANS.contains(&name.as_str()))
    {
        return None;
    }
    let loaded_names = loaded.into_iter().collect::<Vec<_>>().join("/");
    let source = match (loaded_from, file_type) {
        (Some(path), Some(file_type)) => format!("`{path}` ({file_type})"),
        (Some(path), None) => format!("`{path}`"),
        (None, Some(file_type)) => format!("file type {file_type}"),
        (None, None) => String::new(),
    };
    Some(if served.is_empty() {
        format!(
            "the server serves `{served_name}`, a name that says no precision, but loaded {loaded_names} weights from {source}: the figures are for {loaded_names}"
        )
    } else {
        format!(
            "the server serves `{served_name}`, which names {}, but loaded {loaded_names} weights from {source}: the figures are for {loaded_names}",
            served.into_iter().collect::<Vec<_>>().join("/")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn secrets_in_launch_settings_are_never_kept() {
        let flags = serde_json::json!({
            "api_key": "zq1", "admin_api_key": "zq2", "hf_token": "zq3", "max_total_tokens": 8192,
            "tokenizer_path": "/m", "ssl_keyfile": null, "nested": {"ssl_keyfile_password": "zq4"},
            "list": [{"secret": "zq5"}], "served_model_name": "q"
        });
        let kept = redact_secrets(flags);
        for secret in ["zq1", "zq2", "zq3", "zq4", "zq5"] {
            assert!(!kept.to_string().contains(secret), "{secret} in {kept}");
        }
        assert_eq!(kept["max_total_tokens"], 8192);
        assert_eq!(kept["tokenizer_path"], "/m");
        assert_eq!(kept["ssl_keyfile"], Value::Null);
        assert_eq!(kept["api_key"], "[redacted]");
    }

    #[test]
    fn precisions_are_read_from_names_and_paths() {
        assert_eq!(precisions_named("/models/Qwen3-8B-FP8"), set(&["FP8"]));
        assert_eq!(
            precisions_named("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic"),
            set(&["FP8"])
        );
        assert_eq!(
            precisions_named("Qwen/Qwen3-30B-A3B-GPTQ-Int4"),
            set(&["GPTQ", "INT4"])
        );
        assert_eq!(
            precisions_named("SmolLM2-135M-Instruct.Q4_1.gguf"),
            set(&["Q4_1"])
        );
        assert_eq!(precisions_named("gemma-3-270m-q4_k_m"), set(&["Q4_K_M"]));
        assert_eq!(precisions_named("Qwen/Qwen3-8B"), set(&[]));
        // "8b" and "a3b" are sizes, not precisions.
        assert_eq!(precisions_named("qwen3-30b-a3b"), set(&[]));
        assert_eq!(precisions_named("Mixtral-8x7B-Instruct"), set(&[]));
        assert_eq!(precisions_named("/models/llama3_8b_fp8"), set(&["FP8"]));
        assert_eq!(
            precisions_named("Llama-3.1-8B-Instruct_Q4_K_M.gguf"),
            set(&["Q4_K_M"])
        );
        assert_eq!(
            precisions_named("Llama-3.1-8B-Instruct-AWQ"),
            set(&["AWQ", "INT4"])
        );
    }

    #[test]
    fn llama_cpp_file_types_read_as_the_names_do() {
        // llama.cpp's llama_model_ftype_name: "Q4_K - Medium", "all F32", "IQ2_XXS - 2.0625 bpw".
        assert_eq!(file_type_precisions("Q4_K - Medium"), set(&["Q4_K_M"]));
        assert_eq!(file_type_precisions("Q4_1"), set(&["Q4_1"]));
        assert_eq!(file_type_precisions("all F32"), set(&["FP32"]));
        assert_eq!(file_type_precisions("BF16"), set(&["BF16"]));
        assert_eq!(
            file_type_precisions("IQ2_XXS - 2.0625 bpw"),
            set(&["IQ2_XXS"])
        );
    }

    #[test]
    fn a_name_that_hides_or_contradicts_the_weights_is_flagged() {
        // The seed: FP8 weights served under the BF16 model's name.
        let hidden =
            name_mismatch("Qwen/Qwen3-8B", Some("/models/Qwen3-8B-FP8"), None).expect("flagged");
        assert!(
            hidden.contains("says no precision") && hidden.contains("FP8"),
            "{hidden}"
        );
        let contradicted =
            name_mismatch("qwen3-8b-bf16", Some("/models/Qwen3-8B-FP8"), None).expect("flagged");
        assert!(
            contradicted.contains("names BF16") && contradicted.contains("loaded FP8"),
            "{contradicted}"
        );
        // Agreeing names and paths that say nothing are not flagged.
        assert_eq!(
            name_mismatch(
                "gemma-3-270m-q4_k_m",
                Some("/m/gemma-3-270m-q4_k_m.gguf"),
                Some("Q4_K - Medium")
            ),
            None
        );
        assert_eq!(
            name_mismatch("Qwen/Qwen3-8B", Some("Qwen/Qwen3-8B"), None),
            None
        );
        assert_eq!(name_mismatch("my-alias", None, None), None);
        // A name without precision over the model's own BF16 or gpt-oss's native MXFP4.
        assert_eq!(name_mismatch("Qwen3-8B", None, Some("BF16")), None);
        assert_eq!(
            name_mismatch("gpt-oss-20b", Some("/m/gpt-oss-20b-mxfp4"), None),
            None
        );
        // AWQ is 4-bit integer; the folder the weights sit in names no precision.
        assert_eq!(
            name_mismatch("qwen3-8b-int4", Some("Qwen/Qwen3-8B-AWQ"), None),
            None
        );
        assert_eq!(
            name_mismatch("Qwen3-8B", Some("/models/fp16/Qwen3-8B"), None),
            None
        );
        // A llama-server alias over a Q4_1 file: the file type alone is enough to flag.
        assert!(name_mismatch("smollm", None, Some("Q4_1")).is_some());
    }
}
