//! An agent run's run file (`agent.json`), Markdown report (`report.md`) and chart of TTFT by
//! turn index (`ttft-by-turn.svg`), written from the journal alone, with the validity verdict.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vernier_run::{Reason, Verdict, VerdictLevel};

use super::config::AgentConfig;
use super::conversation::Sizing;
use super::journal::{AgentLine, Job, Pass, TurnRecord};
use super::summary::{CacheSpeedup, PassSummary, SessionCapacity, Spread, speedup, summarise_pass};
use crate::environment::Environment;
use crate::error::SweepError;
use vernier_plot::{Point, Series};

use crate::report::svg::line_chart;
use crate::report::text::number;

/// An agent run's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AgentRunFile {
    /// `agent`.
    pub kind: String,
    /// How far the figures can be trusted.
    pub verdict: Verdict,
    /// The configuration.
    pub config: AgentConfig,
    /// How the texts were sized.
    pub sizing: Sizing,
    /// The server's count of the shared system prompt and tools.
    pub shared_prefix_tokens: u64,
    /// `"none"` when the server parses no tool calls and the turns offered the tools with
    /// `tool_choice: "none"` (in the prompt, never called); absent when the server chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<String>,
    /// The server, model and machine.
    pub environment: Environment,
    /// The run's nonce.
    pub nonce: String,
    /// When it began, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// Each pass.
    pub passes: Vec<PassSummary>,
    /// What the cache gives: the defeated pass against the allowed one.
    pub cache_speedup: Option<CacheSpeedup>,
    /// The capacity search over sessions.
    pub capacity: Option<SessionCapacity>,
    /// Whether the run was interrupted.
    pub interrupted: bool,
    /// What changed about the server during the run.
    pub server_changes: Vec<String>,
}

/// The files an agent run wrote.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentFiles {
    /// `agent.json`.
    pub run_file: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// `ttft-by-turn.svg`.
    pub chart: PathBuf,
}

/// The verdict of an agent run.
fn verdict_of(
    passes: &[PassSummary],
    interrupted: bool,
    server_changes: &[String],
    simulated: bool,
) -> Verdict {
    let mut reasons = Vec::new();
    if simulated {
        reasons.push(Reason::new(
            "simulated",
            VerdictLevel::Questionable,
            "the bundled simulator answered: the figures describe it, not a server",
        ));
    }
    // Capacity steps probe overload on purpose: their failures are the steps' answer, not a
    // fault of the run.
    let judged = || passes.iter().filter(|p| p.pass != Pass::Capacity);
    let sent: usize = judged()
        .map(|p| p.ok + p.cut_off + p.infra + p.too_long)
        .sum();
    let infra: usize = judged().map(|p| p.infra).sum();
    if infra > 0 {
        let share = infra as f64 / sent.max(1) as f64;
        let level = if share > vernier_run::INFRA_INVALID_SHARE {
            VerdictLevel::Invalid
        } else {
            VerdictLevel::Questionable
        };
        reasons.push(Reason::new(
            "infra",
            level,
            format!("{infra} of {sent} turns failed at the server after every try"),
        ));
    }
    let answered: usize = judged().map(|p| p.ok + p.cut_off).sum();
    let cut_off: usize = judged().map(|p| p.cut_off).sum();
    if answered > 0 && cut_off == answered {
        reasons.push(Reason::new(
            "all_cut_off",
            VerdictLevel::Questionable,
            format!(
                "every one of the {answered} answered turns hit its token budget (--max-tokens): no turn ended as the model meant it to, and no conversation is what it would be"
            ),
        ));
    }
    let too_long: usize = judged().map(|p| p.too_long).sum();
    let retried: usize = judged().map(|p| p.retried).sum();
    if retried > 0 {
        reasons.push(Reason::new(
            "retried",
            VerdictLevel::Questionable,
            format!(
                "{retried} turns were answered only on a later try: the broken try may have warmed the cache their figures show"
            ),
        ));
    }
    if too_long > 0 {
        reasons.push(Reason::new(
            "context_exceeded",
            VerdictLevel::Questionable,
            format!("{too_long} sessions grew beyond the server's context and ended early"),
        ));
    }
    if let Some(cached) = passes.iter().find(|p| p.pass == Pass::Cached)
        && cached.ok + cached.cut_off > 0
        && cached.cache_reported == 0
    {
        reasons.push(Reason::new(
            "no_cache_count",
            VerdictLevel::Questionable,
            "the server reported no cached tokens (neither prompt_tokens_details nor timings.cache_n): the hit ratio is unknown",
        ));
    }
    if let Some(baseline) = passes.iter().find(|p| p.pass == Pass::Baseline)
        && baseline.cached_tokens > 0
    {
        reasons.push(Reason::new(
            "baseline_cache_hit",
            VerdictLevel::Questionable,
            format!(
                "the server served {} tokens from its cache in the pass meant to defeat it (it ignores cache_salt and cache_prompt): the speed-up is understated",
                baseline.cached_tokens
            ),
        ));
    }
    if interrupted {
        reasons.push(Reason::new(
            "interrupted",
            VerdictLevel::Questionable,
            "the run was interrupted: figures cover the turns done",
        ));
    }
    if !server_changes.is_empty() {
        reasons.push(Reason::new(
            "server_changed",
            VerdictLevel::Invalid,
            format!(
                "the server changed during the run: {}",
                server_changes.join("; ")
            ),
        ));
    }
    Verdict::from_reasons(reasons)
}

/// The run file of the journal `lines`.
pub(crate) fn agent_run_file(
    lines: &[AgentLine],
    capacity: Option<SessionCapacity>,
) -> Result<AgentRunFile, SweepError> {
    let Some(AgentLine::Start(start)) = lines.first() else {
        return Err(SweepError::invalid("the journal", "it has no start line"));
    };
    let Job::Agent {
        config,
        sizing,
        shared_prefix_tokens,
        tool_choice,
    } = &start.job
    else {
        return Err(SweepError::invalid(
            "the journal",
            "it is a replay's, not an agent run's",
        ));
    };
    // Each turn by its last line: one a resume sent again counts once.
    let last_lines = super::journal::turns_of(lines);
    let turns: Vec<&TurnRecord> = last_lines.iter().collect();
    let (interrupted, server_changes) = super::journal::end_of(lines);
    let mut keys: Vec<(Pass, u32)> = turns.iter().map(|t| (t.pass, t.sessions)).collect();
    keys.sort_unstable();
    keys.dedup();
    let passes: Vec<PassSummary> = keys
        .iter()
        .map(|&(pass, sessions)| {
            let these: Vec<&TurnRecord> = turns
                .iter()
                .copied()
                .filter(|t| t.pass == pass && t.sessions == sessions)
                .collect();
            let planned = sessions as usize * config.turns as usize;
            summarise_pass((pass, sessions, planned), &these, config.target.as_ref())
        })
        .collect();
    let cached = passes.iter().find(|p| p.pass == Pass::Cached);
    let baseline = passes.iter().find(|p| p.pass == Pass::Baseline);
    let of_pass = |pass: Pass| -> Vec<&TurnRecord> {
        turns.iter().copied().filter(|t| t.pass == pass).collect()
    };
    let cache_speedup = cached
        .zip(baseline)
        .and_then(|_| speedup(&of_pass(Pass::Cached), &of_pass(Pass::Baseline)));
    Ok(AgentRunFile {
        kind: "agent".to_owned(),
        verdict: verdict_of(
            &passes,
            interrupted,
            &server_changes,
            start.environment.server.simulator,
        ),
        config: (**config).clone(),
        sizing: *sizing,
        shared_prefix_tokens: *shared_prefix_tokens,
        tool_choice: tool_choice.clone(),
        environment: (*start.environment).clone(),
        nonce: start.nonce.clone(),
        started_unix_ms: start.started_unix_ms,
        passes,
        cache_speedup,
        capacity,
        interrupted,
        server_changes,
    })
}

/// Writes `agent.json`, `report.md` and `ttft-by-turn.svg` into `out`.
pub(crate) fn write_agent_reports(
    out: &Path,
    lines: &[AgentLine],
    capacity: Option<SessionCapacity>,
) -> Result<(AgentRunFile, AgentFiles), SweepError> {
    let run = agent_run_file(lines, capacity)?;
    let files = AgentFiles {
        run_file: out.join("agent.json"),
        markdown: out.join("report.md"),
        chart: out.join("ttft-by-turn.svg"),
    };
    crate::report::write_json(files.run_file.clone(), &run)?;
    crate::report::write(files.markdown.clone(), &markdown(&run))?;
    crate::report::write(files.chart.clone(), &ttft_chart(&run))?;
    Ok((run, files))
}

fn subtitle(run: &AgentRunFile) -> String {
    let env = &run.environment;
    let server = if env.server.simulator {
        "the bundled simulator (simulated figures)".to_owned()
    } else {
        format!(
            "{}{}",
            env.server.kind,
            crate::report::text::server_version(env)
        )
    };
    format!(
        "{} on {server}, {}",
        env.model.id,
        vernier_run::utc_minute(run.started_unix_ms)
    )
}

/// TTFT median by turn index, one line per pass, with the 10th to 90th percentile as bars.
fn ttft_chart(run: &AgentRunFile) -> String {
    let title = format!(
        "Time to first token by turn (median, bars p10 to p90): {} sessions of {} turns",
        run.config.sessions, run.config.turns
    );
    let subtitle = subtitle(run);
    let series = run
        .passes
        .iter()
        .filter(|p| p.pass != Pass::Capacity)
        .map(|p| {
            Series::new(
                p.pass.name(),
                p.by_turn
                    .iter()
                    .filter_map(|t| {
                        t.ttft_ms.map(|s| {
                            Point::at(f64::from(t.turn), s.median).with_interval(s.p10, s.p90)
                        })
                    })
                    .collect(),
            )
        });
    line_chart(&title, &subtitle, "turn", "TTFT, ms")
        .series(series)
        .to_svg()
}

fn spread(s: Option<Spread>, decimals: usize) -> String {
    s.map_or_else(
        || "—".to_owned(),
        |s| {
            format!(
                "{} ({}–{})",
                number(Some(s.median), decimals),
                number(Some(s.p10), decimals),
                number(Some(s.p90), decimals)
            )
        },
    )
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

/// The Markdown report.
pub(crate) fn markdown(run: &AgentRunFile) -> String {
    let mut md = String::new();
    let config = &run.config;
    let _ = writeln!(md, "# Agent sessions: {}\n", subtitle(run));
    let _ = writeln!(md, "**{}**\n", run.verdict.line());
    if run.environment.server.simulator {
        md.push_str("These figures describe the bundled simulator, not a server.\n\n");
    }
    let _ = writeln!(
        md,
        "{} sessions of {} turns; a shared system prompt of about {} tokens ({} counted with the tools) and {} tools; \
         user messages of about {} tokens, tool results of about {}; answers of at most {} tokens; {} between turns. \
         Each turn sends the whole conversation so far. Cached tokens are the server's own count \
         (`prompt_tokens_details.cached_tokens`, else llama.cpp's `timings.cache_n`); a perfect cache would hold what the \
         server computed for the session before (the last prompt and answer), or for a first turn the shared system \
         prompt and tools. Session 0 opens each pass; the others start when its first turn is answered.\n",
        config.sessions,
        config.turns,
        config.system_tokens,
        run.shared_prefix_tokens,
        config.tools,
        config.user_tokens,
        config.tool_result_tokens,
        config.max_tokens,
        config.think.label(),
    );
    if run.tool_choice.as_deref() == Some("none") && config.tools > 0 {
        md.push_str(
            "The server parses no tool calls (vLLM started without `--enable-auto-tool-choice` and a \
             `--tool-call-parser`): the tools were offered with `tool_choice: \"none\"`, so they are in every \
             prompt and its cached prefix as usual, but no answer was read as a tool call.\n\n",
        );
    }
    if let Some(speedup) = run.cache_speedup {
        let prompt = |pass: Pass| {
            run.passes
                .iter()
                .find(|p| p.pass == pass)
                .map_or(0, |p| p.prompt_tokens)
        };
        let _ = writeln!(
            md,
            "**Speed-up from the prefix cache:** mean TTFT {:.2}× (median {:.2}×) over {} turns both passes answered, session time {}; \
             prompt tokens sent {} with the cache allowed, {} with it defeated (each pass's conversations are the model's own).\n",
            speedup.ttft_mean,
            speedup.ttft_median,
            speedup.pairs,
            speedup
                .session_time
                .map_or_else(|| "—".to_owned(), |s| format!("{s:.2}×")),
            prompt(Pass::Cached),
            prompt(Pass::Baseline)
        );
    }
    md.push_str("| pass | sessions | turns ok | cut off | infra | too long | hit ratio (cached / ideal) | cached share of prompt | TTFT ms median (p10–p90) | prefill of uncached tok/s | decode tok/s | session s | turns/min | tool calls / turns offered |\n");
    md.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for p in &run.passes {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} |",
            p.pass.name(),
            p.sessions,
            p.ok,
            p.cut_off,
            p.infra,
            p.too_long,
            percent(p.hit_ratio),
            percent(p.cached_share),
            spread(p.ttft_ms, 1),
            spread(p.prefill_uncached_tokens_per_s, 0),
            spread(p.decode_tokens_per_s, 1),
            spread(p.session_s, 2),
            number(p.turns_per_minute, 1),
            p.tool_call_turns,
            p.tool_turns
        );
    }
    by_turn(&mut md, run);
    capacity_section(&mut md, run);
    let machine = &run.environment.client;
    let _ = writeln!(
        md,
        "\nServer {} ({}), model {}; client {} on {} ({} cores). Journal: `journal.jsonl`; chart: `ttft-by-turn.svg`.",
        run.environment.server.base_url,
        run.environment.server.kind,
        run.environment.model.id,
        machine.os,
        machine.cpu_model,
        machine.logical_cores
    );
    md
}

/// Each pass's figures by turn index, and its goodput.
fn by_turn(md: &mut String, run: &AgentRunFile) {
    for p in run.passes.iter().filter(|p| p.pass != Pass::Capacity) {
        let _ = writeln!(md, "\n## By turn, {}\n", p.pass.name());
        md.push_str("| turn | answered | prompt tokens | cached | ideal | TTFT ms median (p10–p90) | prefill of uncached tok/s | decode tok/s |\n|---|---|---|---|---|---|---|---|\n");
        for t in &p.by_turn {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                t.turn,
                t.answered,
                number(t.prompt_tokens, 0),
                number(t.cached_tokens, 0),
                number(t.ideal_cached_tokens, 0),
                spread(t.ttft_ms, 1),
                number(t.prefill_uncached_tokens_per_s, 0),
                number(t.decode_tokens_per_s, 1)
            );
        }
        if let Some(goodput) = &p.goodput {
            let parts: Vec<String> = goodput
                .parts
                .iter()
                .map(|(text, value, holds)| {
                    format!(
                        "{text}: {} ({})",
                        // The largest float stands for failed or unsent turns.
                        match value {
                            Some(v) if *v >= f64::MAX => "failed turns".to_owned(),
                            _ => number(*value, 1),
                        },
                        if *holds { "holds" } else { "missed" }
                    )
                })
                .collect();
            let _ = writeln!(
                md,
                "\n**Goodput:** {} of {} turns ({:.1}%) meet the target; {}.",
                goodput.met,
                goodput.of,
                goodput.share * 100.0,
                parts.join("; ")
            );
        }
    }
}

/// The capacity search's answer and steps.
fn capacity_section(md: &mut String, run: &AgentRunFile) {
    if let Some(capacity) = &run.capacity {
        let _ = writeln!(md, "\n## Capacity in sessions at `{}`\n", capacity.target);
        let steps: Vec<String> = capacity
            .steps
            .iter()
            .map(|(n, holds, share)| {
                format!(
                    "{n}: {} ({:.0}% of turns)",
                    if *holds { "met" } else { "missed" },
                    share * 100.0
                )
            })
            .collect();
        let _ = writeln!(
            md,
            "{}. Steps: {}.",
            match (capacity.largest, capacity.at_limit && capacity.complete) {
                (Some(n), true) =>
                    format!("At least {n} sessions (the most tried) meet the target"),
                (Some(n), false) => format!("**{n} sessions** is the most that meets the target"),
                (None, _) => "Not even one session meets the target".to_owned(),
            },
            steps.join(", ")
        );
        if !capacity.complete {
            md.push_str("\nThe search was interrupted: its answer rests on the steps done, and the next step was not tried.\n");
        }
    }
}
