//! `parse-duration`: durations like `"1h30m15s"` to seconds.

use serde_json::Value;
use vernier_grader::Case;

use super::spec::{CaseDraw, CodeTaskSpec, single_control_spec};

const DESCRIPTION: &str = r#"Write a Python function

    def parse_duration(text: str) -> int:

that converts a duration to a number of seconds. A duration is one or more parts,
each a number followed by a unit, with nothing else (no spaces, signs, decimal points
or other characters):
- a number is one or more ASCII digits;
- the units are d (86400 seconds), h (3600), m (60) and s (1), lowercase;
- units appear in decreasing order (d before h before m before s), each at most
  once; any of them may be left out;
- there is no upper bound on a part: "90m" is 5400 and "36h" is 129600.
Examples: "2d4h" is 180000, "1h30m15s" is 5415, "45s" is 45, "0s" is 0.

Anything else raises ValueError, for example "" (empty), "10" (no unit), "1m1h"
(wrong order), "1h1h" (repeated unit), "-5s", "1.5h", "h" (no number), "1 h" and
"1H"."#;

/// The Rust reference; `None` means the text is malformed.
pub(super) fn parse(text: &str) -> Option<u64> {
    const UNITS: [(u8, u64); 4] = [(b'd', 86_400), (b'h', 3_600), (b'm', 60), (b's', 1)];
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    let mut next_unit = 0;
    let mut position = 0;
    while position < bytes.len() {
        let start = position;
        while position < bytes.len() && bytes[position].is_ascii_digit() {
            position += 1;
        }
        if position == start {
            return None;
        }
        let number: u64 = text.get(start..position)?.parse().ok()?;
        let unit = *bytes.get(position)?;
        let rank = UNITS.iter().position(|&(symbol, _)| symbol == unit)?;
        if rank < next_unit {
            return None;
        }
        next_unit = rank + 1;
        total = total.checked_add(number.checked_mul(UNITS[rank].1)?)?;
        position += 1;
    }
    Some(total)
}

fn case(name: &str, text: &str) -> vernier_grader::Case {
    let input = Value::String(text.to_owned());
    match parse(text) {
        Some(seconds) => Case::new(name, input, Value::from(seconds)),
        None => Case::raises(name, input, "ValueError"),
    }
}

/// One drawn duration: well formed (a random subset of the units, in order, with numbers of up
/// to six digits) or broken in one of the ways the task names (units out of order, a repeated
/// unit, a space, an uppercase unit, a missing unit, a sign). The reference decides which.
fn drawn_text(random: &mut vernier_stats::SplitMix64) -> String {
    const UNITS: [char; 4] = ['d', 'h', 'm', 's'];
    let mut parts: Vec<(String, char)> = Vec::new();
    for unit in UNITS {
        if random.chance(1, 2) {
            let digits = 1 + random.index(6);
            let number = random.below(10_u64.pow(u32::try_from(digits).unwrap_or(6)));
            parts.push((number.to_string(), unit));
        }
    }
    if parts.is_empty() {
        parts.push((random.below(1000).to_string(), 's'));
    }
    let join = |parts: &[(String, char)]| {
        let mut text = String::new();
        for (number, unit) in parts {
            text.push_str(number);
            text.push(*unit);
        }
        text
    };
    let mut text = join(&parts);
    match random.index(8) {
        0 if parts.len() > 1 => {
            let last = parts.len() - 1;
            parts.swap(0, last);
            text = join(&parts);
        }
        1 => {
            text.push_str(&random.below(100).to_string());
            text.push(parts[0].1);
        }
        2 => text = text.replacen(parts[0].1, &format!(" {}", parts[0].1), 1),
        3 => text = text.to_uppercase(),
        4 => text.push_str(&random.below(100).to_string()),
        5 => text.insert(0, '-'),
        _ => {}
    }
    text
}

/// The fixed edge cases, and for a drawn instance random durations from the run's seed (the
/// reference gives each its answer or its `ValueError`).
pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let fixed = [
        ("days_hours", "2d4h"),
        ("hours_minutes_seconds", "1h30m15s"),
        ("seconds_only", "45s"),
        ("minutes_over_an_hour", "90m"),
        ("zero", "0s"),
        ("hours_over_a_day", "36h"),
        ("days_and_seconds", "1d1s"),
        ("all_units", "3d2h1m7s"),
        ("large_number", "100000s"),
        ("zero_parts", "0d0h0m0s"),
        ("empty", ""),
        ("no_unit", "10"),
        ("wrong_order", "1m1h"),
        ("wrong_order_seconds_first", "5s2d"),
        ("repeated_unit", "1h1h"),
        ("negative", "-5s"),
        ("decimal", "1.5h"),
        ("unit_only", "h"),
        ("space", "1 h"),
        ("uppercase", "1H"),
        ("trailing_number", "1h30"),
        ("unknown_unit", "3w"),
        ("number_after_unit", "s1"),
    ];
    let mut cases: Vec<Case> = fixed.iter().map(|(name, text)| case(name, text)).collect();
    let mut random = draw.generator(0x0064_7572_6174_696f);
    for index in 0..draw.drawn_cases(40) {
        cases.push(case(&format!("drawn_{index}"), &drawn_text(&mut random)));
    }
    single_control_spec!(
        id: "parse-duration",
        folder: "parse_duration",
        control: "units-in-any-order" => "control_any_order.py",
        cases: cases,
        description: DESCRIPTION,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::Draw;

    #[test]
    fn drawn_instances_add_random_durations_and_the_bundled_suite_stays_as_it_was() {
        let bundled = spec(CaseDraw {
            draw: Draw::BUNDLED,
        });
        assert!(bundled.cases.iter().all(|c| !c.name.starts_with("drawn_")));
        let drawn = spec(CaseDraw {
            draw: Draw { level: 3, seed: 5 },
        });
        let texts: Vec<String> = drawn
            .cases
            .iter()
            .filter(|c| c.name.starts_with("drawn_"))
            .filter_map(|c| c.input.as_str().map(str::to_owned))
            .collect();
        // Level 3 draws 150% of 40.
        assert_eq!(texts.len(), 60);
        let valid = texts.iter().filter(|t| parse(t).is_some()).count();
        assert!(
            valid > 10 && valid < 55,
            "{valid} of 60 well formed: {texts:?}"
        );
        // Another seed, other strings.
        let other = spec(CaseDraw {
            draw: Draw { level: 3, seed: 6 },
        });
        assert_ne!(
            texts,
            other
                .cases
                .iter()
                .filter(|c| c.name.starts_with("drawn_"))
                .filter_map(|c| c.input.as_str().map(str::to_owned))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn examples_from_the_spec() {
        assert_eq!(parse("2d4h"), Some(2 * 86_400 + 4 * 3_600));
        assert_eq!(parse("1h30m15s"), Some(5_415));
        assert_eq!(parse("45s"), Some(45));
        assert_eq!(parse("90m"), Some(5_400));
        assert_eq!(parse("0s"), Some(0));
        for malformed in [
            "", "10", "1m1h", "1h1h", "-5s", "1.5h", "h", "1 h", "1H", "1h30", "s1",
        ] {
            assert_eq!(parse(malformed), None, "{malformed:?}");
        }
    }
}
