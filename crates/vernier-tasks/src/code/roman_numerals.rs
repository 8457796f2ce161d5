//! `roman-numerals`: canonical Roman numerals both ways, 1..3999.

use std::collections::HashMap;

use serde_json::{Value, json};
use vernier_grader::Case;

use super::spec::{CaseDraw, CodeTaskSpec, single_control_spec};

const DESCRIPTION: &str = r#"Write two Python functions

    def to_roman(n: int) -> str:
    def from_roman(s: str) -> int:

for the integers 1 to 3999 in canonical (standard modern) Roman numerals: symbols
I=1, V=5, X=10, L=50, C=100, D=500, M=1000, written from the largest value down, with
the six subtractive pairs IV=4, IX=9, XL=40, XC=90, CD=400, CM=900 and no other
subtraction, and no symbol repeated more than three times in a row. Examples:
to_roman(1994) is "MCMXCIV", from_roman("MMXXVI") is 2026.

- to_roman raises ValueError for n outside 1..3999.
- from_roman accepts exactly the strings to_roman produces (uppercase, canonical) and
  raises ValueError for anything else: "IIII", "IC", "VX", "MMMM", "" (empty),
  lowercase "iv", and any other character.
- from_roman(to_roman(n)) == n for every n in 1..3999.
The tests call each function for every n in 1..3999, within a time limit."#;

const SYMBOLS: [(u32, &str); 13] = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
];

/// The Rust reference for `to_roman`; `None` outside 1..3999.
pub(super) fn to_roman(mut n: u32) -> Option<String> {
    if !(1..=3999).contains(&n) {
        return None;
    }
    let mut numeral = String::new();
    for (value, symbol) in SYMBOLS {
        while n >= value {
            numeral.push_str(symbol);
            n -= value;
        }
    }
    Some(numeral)
}

/// The Rust reference for `from_roman`: canonical means "what `to_roman` writes",
/// so the table of all 3999 numerals decides.
pub(super) fn from_roman(numeral: &str) -> Option<u32> {
    canonical_table().get(numeral).copied()
}

fn canonical_table() -> HashMap<String, u32> {
    (1..=3999)
        .filter_map(|n| to_roman(n).map(|numeral| (numeral, n)))
        .collect()
}

fn to_roman_case(name: &str, n: i64) -> vernier_grader::Case {
    let input = json!({"function": "to_roman", "argument": n});
    match u32::try_from(n).ok().and_then(to_roman) {
        Some(numeral) => Case::new(name, input, Value::String(numeral)),
        None => Case::raises(name, input, "ValueError"),
    }
}

fn from_roman_case(name: &str, numeral: &str) -> vernier_grader::Case {
    let input = json!({"function": "from_roman", "argument": numeral});
    match from_roman(numeral) {
        Some(n) => Case::new(name, input, Value::from(n)),
        None => Case::raises(name, input, "ValueError"),
    }
}

/// One drawn string for `from_roman`: a canonical numeral of a random number, broken half of
/// the time (two neighbours swapped, a symbol doubled or dropped, lowercased, a foreign symbol
/// added). The reference table decides whether it is still canonical.
fn drawn_numeral(random: &mut vernier_stats::SplitMix64) -> String {
    let n = u32::try_from(random.range(1, 3999)).unwrap_or(1);
    let mut chars: Vec<char> = to_roman(n).unwrap_or_default().chars().collect();
    if chars.is_empty() || random.chance(1, 2) {
        return chars.into_iter().collect();
    }
    let at = random.index(chars.len());
    match random.index(5) {
        0 if chars.len() > 1 => {
            let next = (at + 1) % chars.len();
            chars.swap(at, next);
        }
        1 => chars.insert(at, chars[at]),
        2 => {
            chars.remove(at);
        }
        3 => chars[at] = chars[at].to_ascii_lowercase(),
        _ => chars.insert(at, 'Q'),
    }
    chars.into_iter().collect()
}

/// Every n in 1..3999 both ways (the whole input space of `to_roman`), the fixed edge cases,
/// and for a drawn instance random numerals for `from_roman`, half of them broken, from the
/// run's seed.
pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let all: Vec<u32> = (1..=3999).collect();
    let numerals: Vec<String> = all.iter().filter_map(|&n| to_roman(n)).collect();
    let mut cases = vec![
        to_roman_case("to_1994", 1994),
        to_roman_case("to_3999", 3999),
        to_roman_case("to_4", 4),
        to_roman_case("to_zero", 0),
        to_roman_case("to_4000", 4000),
        to_roman_case("to_negative", -7),
        from_roman_case("from_mmxxvi", "MMXXVI"),
        from_roman_case("from_mcmxciv", "MCMXCIV"),
        Case::new(
            "to_roman_all",
            json!({"function": "to_roman", "arguments": all}),
            json!(numerals),
        ),
        Case::new(
            "from_roman_all",
            json!({"function": "from_roman", "arguments": numerals}),
            json!(all),
        ),
        Case::new(
            "round_trip_all",
            json!({"function": "round_trip", "arguments": all}),
            json!(all),
        ),
    ];
    let non_canonical = [
        ("four_ones", "IIII"),
        ("ninety_nine_subtractive", "IC"),
        ("five_from_ten", "VX"),
        ("four_thousand", "MMMM"),
        ("empty", ""),
        ("lowercase", "iv"),
        ("mixed_case", "Mc"),
        ("repeated_five", "VV"),
        ("forty_five_subtractive", "VL"),
        ("double_subtraction", "IIX"),
        ("ten_then_nine", "XIIII"),
        ("nine_hundred_twice", "CMCM"),
        ("other_characters", "ABC"),
        ("space", "X I"),
    ];
    for (name, numeral) in non_canonical {
        cases.push(from_roman_case(&format!("from_{name}"), numeral));
    }
    let mut random = draw.generator(0x0072_6f6d_616e);
    for index in 0..draw.drawn_cases(40) {
        cases.push(from_roman_case(
            &format!("from_drawn_{index}"),
            &drawn_numeral(&mut random),
        ));
    }
    single_control_spec!(
        id: "roman-numerals",
        folder: "roman_numerals",
        control: "accepts-non-canonical" => "control_lenient.py",
        cases: cases,
        description: DESCRIPTION,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_from_the_spec() {
        assert_eq!(to_roman(1994).as_deref(), Some("MCMXCIV"));
        assert_eq!(to_roman(3999).as_deref(), Some("MMMCMXCIX"));
        assert_eq!(to_roman(0), None);
        assert_eq!(to_roman(4000), None);
        assert_eq!(from_roman("MMXXVI"), Some(2026));
        for bad in ["IIII", "IC", "VX", "MMMM", "", "iv", "IIX", "VV"] {
            assert_eq!(from_roman(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn every_number_round_trips() {
        let table = canonical_table();
        assert_eq!(table.len(), 3999);
        for n in 1..=3999 {
            let numeral = to_roman(n).expect("in range");
            assert_eq!(table.get(&numeral), Some(&n));
        }
    }
}
