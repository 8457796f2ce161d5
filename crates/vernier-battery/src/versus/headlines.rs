//! The parts a head-to-head has no reader of its own for (agent sessions, replays, soaks,
//! watches, a second sweep, a kind defined outside the battery): each headline figure both
//! sides' part of one name and kind reports, side by side. A side is named ahead only where
//! both figures carry intervals that do not overlap, and never on a ratio within
//! [`TIE_WITHIN`](super::glance::TIE_WITHIN) of 1.

use vernier_cli::figure;
use vernier_run::Headline;

use super::schema::{GlanceRow, Versus};
use crate::file::PartEntry;
use crate::side::Side;

/// Whether the head-to-head reads parts of `kind` from their own files (the suites, ready,
/// swap; the first sweep is told apart below).
fn read_elsewhere(kind: &str) -> bool {
    crate::study::SUITE_KINDS.contains(&kind) || matches!(kind, "ready" | "swap")
}

/// The parts of `side` whose headlines stand in for them: every part but those read
/// elsewhere and the first sweep (the one `Side` reads).
fn headline_parts(side: &Side) -> Vec<&PartEntry> {
    let Some(battery) = &side.battery else {
        return Vec::new();
    };
    let mut first_sweep = true;
    battery
        .parts
        .iter()
        .filter(|entry| {
            let kind = entry.kind();
            if kind == "sweep" && first_sweep && side.sweep.is_some() {
                first_sweep = false;
                return false;
            }
            !read_elsewhere(kind)
        })
        .collect()
}

/// Who is ahead on two headlines: only where both intervals exist and do not overlap, and
/// the ratio is past the tie.
fn ahead(a: &Headline, b: &Headline) -> &'static str {
    let (Some((low_a, high_a)), Some((low_b, high_b))) = (a.interval, b.interval) else {
        return "—";
    };
    if b.value != 0.0 && (a.value / b.value - 1.0).abs() < super::glance::TIE_WITHIN {
        return "—";
    }
    let a_higher = low_a > high_b;
    let b_higher = low_b > high_a;
    match (a_higher, b_higher, a.higher_is_better) {
        (true, false, true) | (false, true, false) => "A",
        (true, false, false) | (false, true, true) => "B",
        _ => "—",
    }
}

/// The rows: one per headline both sides' part reports under one name.
pub(crate) fn headline_rows(versus: &Versus, a: &Side, b: &Side, out: &mut Vec<GlanceRow>) {
    let others = headline_parts(b);
    for part_a in headline_parts(a) {
        let Some(part_b) = others
            .iter()
            .find(|entry| entry.part == part_a.part && entry.kind() == part_a.kind())
        else {
            continue;
        };
        for headline_a in &part_a.headlines {
            let Some(headline_b) = part_b
                .headlines
                .iter()
                .find(|headline| headline.name == headline_a.name)
            else {
                continue;
            };
            let text =
                |headline: &Headline| format!("{} {}", figure(headline.value), headline.unit);
            out.push(GlanceRow {
                dimension: format!("{}: {}", part_a.part, headline_a.name),
                a: text(headline_a),
                b: text(headline_b),
                comparison: if headline_b.value == 0.0 {
                    "—".to_owned()
                } else {
                    super::glance::times(headline_a.value / headline_b.value)
                },
                interval: "—".to_owned(),
                ahead: ahead(headline_a, headline_b).to_owned(),
                confounded_by: super::glance::confound(versus, &part_a.part),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_is_ahead_only_on_separate_intervals_past_the_tie() {
        let fast = Headline::new("decode", 100.0, "tokens/s").interval(98.0, 102.0);
        let slow = Headline::new("decode", 80.0, "tokens/s").interval(78.0, 82.0);
        assert_eq!(ahead(&fast, &slow), "A");
        assert_eq!(ahead(&slow, &fast), "B");
        let near = Headline::new("decode", 97.0, "tokens/s").interval(96.0, 97.5);
        assert_eq!(ahead(&fast, &near), "—", "within 5%: a tie");
        let bare = Headline::new("decode", 80.0, "tokens/s");
        assert_eq!(ahead(&fast, &bare), "—", "no interval, no side");
        let latency = |value: f64| {
            Headline::new("ttft", value, "ms")
                .interval(value - 1.0, value + 1.0)
                .lower_is_better()
        };
        assert_eq!(ahead(&latency(50.0), &latency(80.0)), "A");
    }
}
