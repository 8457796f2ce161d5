//! The at-a-glance rows of `battery versus` as an aligned terminal table.

use vernier_battery::GlanceRow;

/// The header of each column.
const HEADER: [&str; 6] = ["dimension", "A", "B", "A vs B", "95% interval", "ahead"];

/// Which columns are right-aligned (the figures); the others are left-aligned.
const RIGHT: [bool; 6] = [false, true, true, true, false, false];

/// The marker of a row that a setting difference confounds.
const CONFOUNDED: &str = "⚠";

/// `text` padded with spaces to `width` characters (chars, not bytes: `—`, `×` and `⚠` are
/// one each).
fn pad(text: &str, width: usize, right: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(text.chars().count()));
    if right {
        format!("{fill}{text}")
    } else {
        format!("{text}{fill}")
    }
}

/// A row's dimension as the table shows it: a confounded row's ends in `⚠`.
fn dimension_cell(dimension: &str, confounded: bool) -> String {
    if confounded {
        format!("{dimension} {CONFOUNDED}")
    } else {
        dimension.to_owned()
    }
}

/// The at-a-glance rows as a table: a header, a rule, then one line per row, every column as
/// wide as its widest cell. A confounded row's dimension ends in `⚠`.
pub(crate) fn glance_table(rows: &[GlanceRow]) -> String {
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|row| {
            [
                dimension_cell(&row.dimension, row.confounded_by.is_some()),
                row.a.clone(),
                row.b.clone(),
                row.comparison.clone(),
                row.interval.clone(),
                row.ahead.clone(),
            ]
        })
        .collect();
    table(&cells)
}

/// The header, a rule and `cells`, each column padded to its widest cell (in chars).
fn table(cells: &[[String; 6]]) -> String {
    let mut widths = HEADER.map(|title| title.chars().count());
    for line in cells {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let render = |line: [&str; 6]| {
        let padded: Vec<String> = line
            .iter()
            .zip(widths)
            .zip(RIGHT)
            .map(|((cell, width), right)| pad(cell, width, right))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = render(HEADER);
    let rule = widths.map(|width| "─".repeat(width));
    out.push_str(&render(rule.each_ref().map(String::as_str)));
    for line in cells {
        out.push_str(&render(line.each_ref().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's cells as `glance_table` makes them.
    fn cells(dimension: &str, confounded: bool) -> [String; 6] {
        [
            dimension_cell(dimension, confounded),
            "41.2".to_owned(),
            "40.9".to_owned(),
            "1.01×".to_owned(),
            "[0.97×, 1.05×]".to_owned(),
            "—".to_owned(),
        ]
    }

    /// Where `needle` starts on `line`, in chars.
    fn char_column(line: &str, needle: &str) -> usize {
        let byte = line.find(needle).expect("the cell");
        line[..byte].chars().count()
    }

    #[test]
    fn the_table_has_a_header_and_keeps_columns_aligned_past_a_long_label() {
        let long =
            "seconds per solved task (per stream, at the batched concurrency), suite-batched";
        let rows = [
            cells("verdict", false),
            cells(long, true),
            cells("TTFT ms, short prompt (128 tok)", false),
        ];
        let table = table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2 + rows.len(), "{table}");
        for title in HEADER {
            assert!(lines[0].contains(title), "{table}");
        }
        assert!(lines[0].starts_with("dimension"), "{table}");
        assert!(lines[1].chars().all(|c| c == '─' || c == ' '), "{table}");
        // Every body line's interval and ahead columns start at the same char as the header's.
        let interval_at = char_column(lines[0], "95% interval");
        let ahead_at = char_column(lines[0], "ahead");
        for line in &lines[2..] {
            assert_eq!(char_column(line, "[0.97×"), interval_at, "{table}");
            assert_eq!(char_column(line, "—"), ahead_at, "{table}");
            // The right-aligned comparison ends where the header's "A vs B" ends.
            assert_eq!(
                char_column(line, "1.01×") + "1.01×".chars().count(),
                char_column(lines[0], "A vs B") + "A vs B".chars().count(),
                "{table}"
            );
        }
        assert!(lines[3].starts_with(&format!("{long} ⚠")), "{table}");
        assert!(
            !lines[2].contains('⚠') && !lines[4].contains('⚠'),
            "{table}"
        );
    }

    #[test]
    fn no_rows_is_the_header_alone() {
        let table = table(&[]);
        assert_eq!(table.lines().count(), 2, "{table}");
        assert_eq!(
            table.lines().next(),
            Some("dimension  A  B  A vs B  95% interval  ahead")
        );
    }
}
