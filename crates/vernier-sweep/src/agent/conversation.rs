//! What an agent session says: the shared system prompt and tool list, each session's user
//! messages, and the tool results the harness writes back, all cut from the bundled corpora
//! and sized in the server's tokens; and one session's conversation as it grows.

use serde::{Deserialize, Serialize};
use vernier_openai::{ChatMessage, MessageToolCall, Tool};
use vernier_stats::SplitMix64;

use crate::config::Workload;
use crate::corpus::Corpus;

/// The tools an agent is offered, in order; past the list, `tool_N` with a query.
const TOOLS: [(&str, &str, &str); 8] = [
    (
        "read_file",
        "Read a file of the repository and return its text.",
        "path",
    ),
    (
        "search_code",
        "Search the repository for a pattern and return the matching lines.",
        "query",
    ),
    (
        "run_tests",
        "Run the test suite, or one test, and return its output.",
        "target",
    ),
    (
        "list_directory",
        "List the files and folders under a path.",
        "path",
    ),
    (
        "run_command",
        "Run a shell command in the repository and return its output.",
        "command",
    ),
    (
        "git_diff",
        "Show the changes not yet committed, or those of one path.",
        "path",
    ),
    (
        "fetch_docs",
        "Fetch the documentation of a library function.",
        "topic",
    ),
    (
        "write_file",
        "Replace a file's text with the given text.",
        "path",
    ),
];

/// The tool definitions offered with every turn. The first one's description opens with the
/// workspace `nonce`: a template that renders tools before the system prompt (as some do)
/// then shares nothing with another run or pass either.
pub(crate) fn tools(n: u32, nonce: &str) -> Vec<Tool> {
    (0..n as usize)
        .map(|index| {
            let (name, description, argument) = TOOLS.get(index).map_or_else(
                || {
                    (
                        format!("tool_{index}"),
                        format!("Project tool number {index}: answers a query about the project."),
                        "query",
                    )
                },
                |(name, description, argument)| {
                    ((*name).to_owned(), (*description).to_owned(), *argument)
                },
            );
            let description = if index == 0 {
                format!("Workspace {nonce}: {description}")
            } else {
                description
            };
            Tool::function(
                name,
                description,
                serde_json::json!({
                    "type": "object",
                    "properties": {argument: {"type": "string", "description": format!("The {argument}.")}},
                    "required": [argument],
                }),
            )
        })
        .collect()
}

/// How many corpus units make each kind of text, from the server's tokens per unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Sizing {
    /// The server's tokens per corpus unit, from two counted probes.
    pub tokens_per_unit: f64,
    /// Units of the system prompt's body.
    pub system_units: usize,
    /// Units of each user message's body.
    pub user_units: usize,
    /// Units of each tool result.
    pub tool_result_units: usize,
}

impl Sizing {
    /// Units for `tokens` at `tokens_per_unit`, at least one.
    pub(crate) fn units(tokens: u32, tokens_per_unit: f64) -> usize {
        let units = (f64::from(tokens) / tokens_per_unit.max(0.05)).round();
        // A count of units fits usize: tokens are below 2^32.
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "rounded, positive, below 2^32"
        )]
        let units = units.max(1.0) as usize;
        units
    }
}

/// The texts of one run: its nonce opens the system prompt, so sessions share it with each
/// other and with nothing from another run.
#[derive(Debug)]
pub(crate) struct Texts {
    corpus: Corpus,
    sizing: Sizing,
    seed: u64,
    pub(crate) system: String,
    pub(crate) tools: Vec<Tool>,
}

impl Texts {
    pub(crate) fn new(
        workload: Workload,
        sizing: Sizing,
        seed: u64,
        nonce: &str,
        n_tools: u32,
    ) -> Self {
        let corpus = Corpus::new(workload);
        let system = format!(
            "Run {nonce}. You are a coding agent working in a software repository. Call a tool whenever it helps; keep answers short.\n\n{}",
            corpus.span(0, sizing.system_units)
        );
        Self {
            corpus,
            sizing,
            seed,
            system,
            tools: tools(n_tools, nonce),
        }
    }

    /// Where a text of `session`, `turn` and `part` starts in the corpus (seeded).
    fn offset(&self, session: u32, turn: u32, part: u32) -> usize {
        let mut rng = SplitMix64::new(
            self.seed ^ (u64::from(session) << 40) ^ (u64::from(turn) << 16) ^ u64::from(part),
        );
        let per_pass = self.corpus.units_per_pass().max(1) as u64;
        usize::try_from(rng.next_u64() % per_pass).unwrap_or(0)
    }

    /// The user message opening `turn` (from 1) of `session`.
    pub(crate) fn user(&self, session: u32, turn: u32) -> String {
        format!(
            "Session {session}, request {turn}: {}\n\nWhat should change next?",
            self.corpus
                .span(self.offset(session, turn, 0), self.sizing.user_units)
        )
    }

    /// The result of tool call `call` made in `turn` of `session`.
    pub(crate) fn tool_result(&self, session: u32, turn: u32, call: u32) -> String {
        self.corpus.span(
            self.offset(session, turn, call + 1),
            self.sizing.tool_result_units,
        )
    }
}

/// One tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallMade {
    /// The call's id (one is made up when the server sent none).
    pub id: String,
    /// The function named.
    pub name: String,
    /// Its arguments, as sent.
    pub arguments: String,
}

/// One session's conversation so far.
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    pub(crate) session: u32,
    pub(crate) messages: Vec<ChatMessage>,
    /// The last answer's tool calls, whose results open the next turn.
    pending: Vec<CallMade>,
}

/// What opens a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Opening {
    /// A new user message.
    User,
    /// The results of the last answer's tool calls.
    ToolResults,
}

impl Conversation {
    pub(crate) fn new(session: u32, texts: &Texts) -> Self {
        Self {
            session,
            messages: vec![ChatMessage::system(texts.system.clone())],
            pending: Vec::new(),
        }
    }

    /// Appends what opens `turn`: the pending tool results, or a new user message.
    pub(crate) fn open_turn(&mut self, texts: &Texts, turn: u32) -> Opening {
        if self.pending.is_empty() {
            self.messages
                .push(ChatMessage::user(texts.user(self.session, turn)));
            return Opening::User;
        }
        for (index, call) in std::mem::take(&mut self.pending).into_iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            self.messages.push(ChatMessage::tool(
                call.id,
                texts.tool_result(self.session, turn, index),
            ));
        }
        Opening::ToolResults
    }

    /// Appends the model's answer (its text and tool calls) as the assistant's message.
    pub(crate) fn answer(&mut self, content: &str, calls: &[CallMade]) {
        let mut message = ChatMessage::assistant(content);
        if !calls.is_empty() {
            if content.is_empty() {
                message.content = None;
            }
            message.tool_calls = Some(
                calls
                    .iter()
                    .map(|call| MessageToolCall::function(&call.id, &call.name, &call.arguments))
                    .collect(),
            );
        }
        self.messages.push(message);
        self.pending = calls.to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts() -> Texts {
        let sizing = Sizing {
            tokens_per_unit: 1.0,
            system_units: 50,
            user_units: 10,
            tool_result_units: 20,
        };
        Texts::new(Workload::Prose, sizing, 3, "abc", 2)
    }

    #[test]
    fn a_session_grows_by_user_messages_and_tool_results() {
        let texts = texts();
        let mut conversation = Conversation::new(1, &texts);
        assert_eq!(conversation.open_turn(&texts, 1), Opening::User);
        conversation.answer(
            "",
            &[CallMade {
                id: "call-1".to_owned(),
                name: "read_file".to_owned(),
                arguments: "{}".to_owned(),
            }],
        );
        assert_eq!(conversation.open_turn(&texts, 2), Opening::ToolResults);
        conversation.answer("done", &[]);
        assert_eq!(conversation.open_turn(&texts, 3), Opening::User);
        let roles: Vec<&str> = conversation
            .messages
            .iter()
            .map(|m| m.role.as_str())
            .collect();
        assert_eq!(
            roles,
            ["system", "user", "assistant", "tool", "assistant", "user"]
        );
        assert_eq!(conversation.messages[2].content, None);
        assert_eq!(
            conversation.messages[3].tool_call_id.as_deref(),
            Some("call-1")
        );
        // Two sessions share the system prompt and nothing after it.
        let other = Conversation::new(2, &texts);
        assert_eq!(other.messages[0], conversation.messages[0]);
        assert_ne!(texts.user(1, 1), texts.user(2, 1));
        assert!(texts.system.starts_with("Run abc."));
        assert_eq!(tools(9, "abc").len(), 9);
        assert_eq!(tools(9, "abc")[8].function.name, "tool_8");
        assert!(
            texts.tools[0]
                .function
                .description
                .as_deref()
                .is_some_and(|d| d.starts_with("Workspace abc: "))
        );
    }
}
