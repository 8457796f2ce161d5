//! Answering long-context retrieval prompts by reading them: the needles ("The special code for
//! NAME is NUMBER.") are found in the prompt, the question's names are looked up, and a script
//! may make the simulated model miss at given lengths and depths.

use serde::{Deserialize, Serialize};

/// A scripted model that reads needles out of the prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Recall {
    /// Where it misses: the first rule that matches the prompt's length and the asked needle's
    /// depth makes it answer a distractor's value instead.
    #[serde(default)]
    pub miss: Vec<RecallMiss>,
}

impl Recall {
    /// A reader that misses where these rules say.
    pub fn missing(miss: Vec<RecallMiss>) -> Self {
        Self { miss }
    }
}

/// Prompts of at least `min_prompt_tokens` whose asked needle sits within 5 points of one of
/// `depths` (percent of the document) are answered wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RecallMiss {
    /// The shortest prompt (the simulator's tokens) the rule applies to.
    #[serde(default)]
    pub min_prompt_tokens: u32,
    /// Depths in percent; empty: every depth.
    #[serde(default)]
    pub depths: Vec<u8>,
}

impl RecallMiss {
    /// A miss at these depths from this length on.
    pub fn new(min_prompt_tokens: u32, depths: Vec<u8>) -> Self {
        Self {
            min_prompt_tokens,
            depths,
        }
    }
}

const LEAD: &str = "The special code for ";

/// Every needle: its name, value, and byte offset in `text`.
fn needles(text: &str) -> Vec<(String, String, usize)> {
    let mut found = Vec::new();
    let mut offset = 0;
    while let Some(at) = text[offset..].find(LEAD) {
        let start = offset + at;
        let rest = &text[start + LEAD.len()..];
        offset = start + LEAD.len();
        let Some((name, after)) = rest.split_once(" is ") else {
            break;
        };
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphabetic()) && !digits.is_empty() {
            found.push((name.to_owned(), digits, start));
        }
    }
    found
}

/// The reply to a retrieval prompt of `prompt_tokens` tokens: `ANSWER: <value>` (values joined
/// by commas when several names are asked), or, where a miss rule matches, a distractor's value
/// in the first place. `None` when the prompt holds no needle the question names.
pub(crate) fn recall_answer(text: &str, prompt_tokens: u32, recall: &Recall) -> Option<String> {
    let found = needles(text);
    let (document_start, document_end) = match (text.find("<document>"), text.rfind("</document>"))
    {
        (Some(start), Some(end)) if end > start => (start + "<document>".len(), end),
        _ => (0, text.len()),
    };
    let question = &text[document_end..];
    let mut asked: Vec<(usize, &(String, String, usize))> = found
        .iter()
        .filter_map(|needle| question.find(needle.0.as_str()).map(|at| (at, needle)))
        .collect();
    asked.sort_by_key(|(at, _)| *at);
    if asked.is_empty() {
        return None;
    }
    let span = (document_end - document_start).max(1) as f64;
    let depth_of = |offset: usize| offset.saturating_sub(document_start) as f64 * 100.0 / span;
    let misses = |offset: usize| {
        recall.miss.iter().any(|rule| {
            prompt_tokens >= rule.min_prompt_tokens
                && (rule.depths.is_empty()
                    || rule
                        .depths
                        .iter()
                        .any(|depth| (depth_of(offset) - f64::from(*depth)).abs() <= 5.0))
        })
    };
    let distractor = found
        .iter()
        .find(|needle| !asked.iter().any(|(_, a)| a.0 == needle.0))
        .map(|needle| needle.1.clone());
    let values: Vec<String> = asked
        .iter()
        .map(|(_, (_, value, offset))| {
            if misses(*offset) {
                distractor.clone().unwrap_or_else(|| format!("{value}1"))
            } else {
                value.clone()
            }
        })
        .collect();
    Some(format!(
        "I found it in the document.\nANSWER: {}",
        values.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "Session x. <document>\nThe special code for Abel is 1111111. filler filler \
        filler filler filler filler filler filler The special code for Bora is 2222222. more \
        filler text here and there The special code for Cid is 3333333.\n</document>\n\nQuestion: \
        What are the special codes for Cid and Abel?";

    #[test]
    fn reads_the_asked_needles_in_the_question_order() {
        let answer = recall_answer(PROMPT, 100, &Recall::default()).expect("needles");
        assert!(answer.ends_with("ANSWER: 3333333, 1111111"), "{answer}");
        assert_eq!(
            recall_answer("no needles here", 10, &Recall::default()),
            None
        );
    }

    #[test]
    fn misses_only_where_scripted() {
        // Abel sits at the start of the document (depth 0): a miss at 0% from 50 tokens on.
        let recall = Recall {
            miss: vec![RecallMiss::new(50, vec![0])],
        };
        let short = recall_answer(PROMPT, 49, &recall).expect("needles");
        assert!(short.ends_with("ANSWER: 3333333, 1111111"), "{short}");
        let long = recall_answer(PROMPT, 50, &recall).expect("needles");
        // The distractor Bora's value replaces Abel's; Cid (near 100%) is still right.
        assert!(long.ends_with("ANSWER: 3333333, 2222222"), "{long}");
    }
}
