//! Fields a server may refuse, what a run loses without each, and the set a run has dropped.
//! A refused field is detected once (a `400` naming it, read by
//! `vernier_openai::refused_field`), dropped for the rest of the run, and named in the report
//! beside the guarantee it carried.

use std::collections::BTreeSet;
use std::sync::Mutex;

/// Each optional field the engines send that a server may refuse, and the guarantee lost
/// without it.
pub const REFUSABLE: [(&str, &str); 7] = [
    (
        "cache_salt",
        "prefix cache salted per request (the opening nonce still defeats the cache)",
    ),
    (
        "cache_prompt",
        "llama.cpp's cache_prompt: false (the opening nonce still defeats the cache)",
    ),
    ("ignore_eos", "output length not forced"),
    ("min_tokens", "output length not forced"),
    (
        "return_token_ids",
        "no per-chunk token ids: tokens come from the next best source",
    ),
    (
        "continuous_usage_stats",
        "no per-chunk usage: tokens come from the next best source",
    ),
    (
        "max_tokens",
        "none: the output cap is sent as max_completion_tokens instead",
    ),
];

/// The guarantee lost when `field` is dropped (`unknown` for a field not in [`REFUSABLE`]).
pub fn guarantee_lost(field: &str) -> &'static str {
    REFUSABLE
        .iter()
        .find(|(name, _)| *name == field)
        .map_or("unknown", |(_, lost)| lost)
}

/// The name of a refusable field as the table holds it (for fields read back from a journal).
pub fn refusable(name: &str) -> Option<&'static str> {
    REFUSABLE
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(known, _)| *known)
}

/// The fields a server has refused during a run, shared by all its requests.
#[derive(Debug, Default)]
pub struct RefusedFields {
    fields: Mutex<BTreeSet<&'static str>>,
}

impl RefusedFields {
    /// Starting with `fields` (those a resumed run's journal records).
    pub fn new(fields: BTreeSet<&'static str>) -> Self {
        Self {
            fields: Mutex::new(fields),
        }
    }

    /// Records that the server refuses `field`; `true` when it was not refused before.
    pub fn refuse(&self, field: &'static str) -> bool {
        self.fields
            .lock()
            .is_ok_and(|mut fields| fields.insert(field))
    }

    /// Whether `field` was refused.
    pub fn contains(&self, field: &str) -> bool {
        self.fields
            .lock()
            .is_ok_and(|fields| fields.contains(field))
    }

    /// The fields refused so far.
    pub fn snapshot(&self) -> BTreeSet<&'static str> {
        self.fields
            .lock()
            .map(|fields| fields.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_refused_once_and_named_with_what_is_lost() {
        let refused = RefusedFields::default();
        assert!(refused.refuse("cache_salt"));
        assert!(!refused.refuse("cache_salt"), "already refused");
        assert!(refused.contains("cache_salt") && !refused.contains("ignore_eos"));
        assert_eq!(refused.snapshot(), BTreeSet::from(["cache_salt"]));
        assert_eq!(guarantee_lost("ignore_eos"), "output length not forced");
        assert_eq!(guarantee_lost("temperature"), "unknown");
        assert_eq!(refusable("min_tokens"), Some("min_tokens"));
        assert_eq!(refusable("stop"), None);
        // Every refusable field is one the protocol reader recognises.
        for (field, _) in REFUSABLE {
            assert!(vernier_openai_knows(field), "{field}");
        }
    }

    fn vernier_openai_knows(field: &str) -> bool {
        #[cfg(feature = "engine")]
        {
            vernier_openai::REFUSABLE_FIELDS.contains(&field)
        }
        #[cfg(not(feature = "engine"))]
        {
            !field.is_empty()
        }
    }
}
