//! Agent-shaped load: concurrent multi-turn sessions sharing a system prompt and tools, tool
//! calls answered by the harness, the prefix cache allowed and measured against a perfect one
//! (and, when asked, defeated for a baseline), session goodput and capacity; and the replay of
//! recorded traffic traces with synthesised prompts. Both write a journal of their own
//! (`journal.jsonl`, one line per turn or record) and derive their run file and report from it.

mod config;
mod conversation;
mod exchange;
mod journal;
mod replay;
mod replay_report;
mod report;
mod run;
mod sessions;
mod summary;

mod headlines;

pub use config::{AgentConfig, AgentLoad, MAX_SESSIONS, MAX_TOOLS, MAX_TURNS, ReplayConfig, Think};
pub use conversation::{CallMade, Opening, Sizing};
pub use exchange::CachedSource;
pub use headlines::{agent_headlines, replay_headlines};
pub use journal::{
    AGENT_JOURNAL_VERSION, AgentLine, Job, Pass, ReplayRecord, StartLine, TurnRecord, TurnStatus,
    recorded_server,
};
pub use replay::{ReplayOutcome, ReplayStart, load_trace, run_replay};
pub use replay_report::{LATE_P99_MS, ReplayRunFile};
pub use report::{AgentFiles, AgentRunFile};
pub use run::{AgentOutcome, AgentStart, run_agent};
pub use summary::{CacheSpeedup, Goodput, PassSummary, SessionCapacity, Spread, TurnFigures};
pub use vernier_run::TypedBeside;
