//! A battery's own report, `OUT/report.md`: each part with its status, seconds, verdict and
//! headline figures and where its report is; the score table (passed over scored per
//! dimension and in total, each with its Wilson interval, never a bare count); the wall time
//! of the whole.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::BatteryError;
use crate::file::{BatteryFile, PartEntry, PartStatus};

/// The file name of a battery's own report.
pub const BATTERY_REPORT: &str = "report.md";

/// A part's status in words.
pub fn status_word(status: PartStatus) -> &'static str {
    match status {
        PartStatus::Pending => "not run",
        PartStatus::Done => "done",
        PartStatus::Interrupted => "interrupted",
        PartStatus::Failed => "failed",
    }
}

/// Seconds as `12 s`, `3 min 4 s` or `1 h 2 min`.
pub fn duration(seconds: f64) -> String {
    let whole = seconds.max(0.0).round();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a non-negative count of seconds, rounded"
    )]
    let whole = whole as u64;
    match whole {
        0..60 => format!("{whole} s"),
        60..3600 => format!("{} min {} s", whole / 60, whole % 60),
        _ => format!("{} h {} min", whole / 3600, whole % 3600 / 60),
    }
}

/// A part's headline figures on one line (`decode …: 41.2 tokens/s [40.1–42.0]; TTFT …`).
pub fn headlines_line(entry: &PartEntry) -> String {
    entry
        .headlines
        .iter()
        .map(vernier_run::Headline::line)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The report's text.
pub fn study_report(file: &BatteryFile) -> String {
    let mut out = String::new();
    let title = file
        .study
        .as_ref()
        .and_then(|study| study.name.clone())
        .unwrap_or_else(|| "battery".to_owned());
    let _ = writeln!(out, "# {title}\n");
    if let Some(description) = file.study.as_ref().and_then(|s| s.description.as_ref()) {
        let _ = writeln!(out, "{description}\n");
    }
    let _ = writeln!(
        out,
        "Server: {} · model: {} · {}\n",
        file.target,
        if file.model.is_empty() {
            "?"
        } else {
            &file.model
        },
        file.validity.line()
    );
    if let Some(study_file) = &file.study_file {
        let _ = writeln!(out, "Study file: `{study_file}`\n");
    }
    let _ = writeln!(out, "## Parts\n");
    let _ = writeln!(
        out,
        "| part | kind | status | time | verdict | headline figures | report |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---|---|---|");
    for entry in &file.parts {
        let verdict = entry.validity.as_ref().map_or_else(
            || entry.detail.clone().unwrap_or_default(),
            |verdict| verdict.verdict.to_string(),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            entry.part,
            entry.kind(),
            status_word(entry.status),
            duration(entry.seconds),
            verdict.replace('|', "\\|"),
            headlines_line(entry).replace('|', "\\|"),
            entry
                .files
                .get("report")
                .map_or_else(String::new, |report| format!("[{report}]({report})"))
        );
    }
    if !file.totals.is_empty() {
        let _ = writeln!(out, "\n## Scores\n");
        let _ = writeln!(
            out,
            "Passed over scored (cut-off answers count as scored and not passed; infra, \
             context-exceeded and unsupported ones do not count), with 95% Wilson intervals.\n"
        );
        let _ = writeln!(
            out,
            "| dimension | passed / scored | rate | 95% CI | parts |"
        );
        let _ = writeln!(out, "|---|---:|---:|---|---|");
        for row in &file.totals {
            let (rate, interval) = if row.scored == 0 {
                ("—".to_owned(), "—".to_owned())
            } else {
                (
                    format!("{:.1}%", row.passed as f64 / row.scored as f64 * 100.0),
                    row.interval.map_or_else(
                        || "—".to_owned(),
                        |(low, high)| format!("{:.1}–{:.1}%", low * 100.0, high * 100.0),
                    ),
                )
            };
            let name = if row.dimension == "total" {
                "**total**".to_owned()
            } else {
                row.dimension.clone()
            };
            let _ = writeln!(
                out,
                "| {name} | {}/{} | {rate} | {interval} | {} |",
                row.passed,
                row.scored,
                row.parts.join(", ")
            );
        }
    }
    let parts_seconds: f64 = file.parts.iter().map(|entry| entry.seconds).sum();
    let _ = writeln!(
        out,
        "\n## Time\n\nWhole: {} (wall clock, every session together); the parts: {}.",
        duration(file.wall_seconds),
        duration(parts_seconds)
    );
    out
}

/// Writes `report.md` into `folder`, whole or not at all.
pub fn write_study_report(file: &BatteryFile, folder: &Path) -> Result<PathBuf, BatteryError> {
    let path = folder.join(BATTERY_REPORT);
    vernier_run::write_atomically(&path, study_report(file).as_bytes())
        .map_err(|source| BatteryError::io("write", &path, source))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration(4.4), "4 s");
        assert_eq!(duration(184.0), "3 min 4 s");
        assert_eq!(duration(3720.0), "1 h 2 min");
    }
}
