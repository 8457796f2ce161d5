//! `csv-split`: one RFC 4180 line to its fields.

use serde_json::{Value, json};
use vernier_grader::Case;
use vernier_stats::SplitMix64;

use super::spec::{CaseDraw, CodeTaskSpec, single_control_spec};

const DESCRIPTION: &str = r#"Write a Python function

    def split_csv_line(line: str) -> list[str]:

that splits one line of CSV (RFC 4180 rules, comma separator, no newline in the line)
into its fields:
- Fields are separated by commas. Empty fields are kept: "a,,b" is ["a", "", "b"],
  "," is ["", ""], ",," is ["", "", ""], and "" is [""].
- A field that starts with a double quote is quoted: it runs to the matching closing
  quote and may contain commas; inside it, two double quotes ("") stand for one.
  '"a,b",c' is ["a,b", "c"]; '"say ""hi"""' is ['say "hi"']; '""' is [""].
- A field that does not start with a double quote is taken literally up to the next
  comma (spaces included; a double quote inside it is an ordinary character).
- An unterminated quoted field ('"abc' or 'a,"b') raises ValueError, and so does any
  character other than a comma right after a closing quote ('"a"b' or '"a" ,b')."#;

/// The Rust reference; `None` means the line is malformed.
pub(super) fn split(line: &str) -> Option<Vec<String>> {
    let characters: Vec<char> = line.chars().collect();
    let mut fields = Vec::new();
    let mut position = 0;
    loop {
        if characters.get(position) == Some(&'"') {
            position += 1;
            let mut field = String::new();
            loop {
                match (characters.get(position), characters.get(position + 1)) {
                    (None, _) => return None,
                    (Some('"'), Some('"')) => {
                        field.push('"');
                        position += 2;
                    }
                    (Some('"'), _) => {
                        position += 1;
                        break;
                    }
                    (Some(&character), _) => {
                        field.push(character);
                        position += 1;
                    }
                }
            }
            fields.push(field);
            match characters.get(position) {
                None | Some(',') => {}
                Some(_) => return None,
            }
        } else {
            let end = characters[position..]
                .iter()
                .position(|&c| c == ',')
                .map_or(characters.len(), |offset| position + offset);
            fields.push(characters[position..end].iter().collect());
            position = end;
        }
        if position >= characters.len() {
            return Some(fields);
        }
        position += 1;
    }
}

/// Writes fields as a line: quoted when they hold a comma or a quote, and sometimes
/// quoted anyway.
fn encode(fields: &[String], generator: &mut SplitMix64) -> String {
    fields
        .iter()
        .map(|field| {
            if field.contains([',', '"']) || generator.chance(1, 4) {
                format!("\"{}\"", field.replace('"', "\"\""))
            } else {
                field.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn random_line(seed: u64, count: usize) -> String {
    const ALPHABET: [char; 12] = ['a', 'b', 'Z', '0', ' ', ',', '"', '\'', ';', 'é', '-', '.'];
    let mut generator = SplitMix64::new(seed);
    let fields: Vec<String> = (0..count)
        .map(|_| {
            let length = generator.index(9);
            (0..length)
                .map(|_| ALPHABET[generator.index(ALPHABET.len())])
                .collect()
        })
        .collect();
    encode(&fields, &mut generator)
}

fn case(name: &str, line: &str) -> vernier_grader::Case {
    let input = Value::String(line.to_owned());
    match split(line) {
        Some(fields) => Case::new(name, input, json!(fields)),
        None => Case::raises(name, input, "ValueError"),
    }
}

pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let fixed = [
        ("plain", "a,b,c"),
        ("empty_line", ""),
        ("one_comma", ","),
        ("two_commas", ",,"),
        ("empty_middle", "a,,b"),
        ("trailing_comma", "x,"),
        ("quoted_comma", "\"a,b\",c"),
        ("escaped_quotes", "\"say \"\"hi\"\"\",x"),
        ("quoted_empty", "\"\""),
        ("two_quoted_empty", "\"\",\"\""),
        ("only_a_quote_inside", "\"\"\"\",a"),
        ("spaces_kept", " a , b "),
        ("quote_inside_unquoted", "ab\"c,d"),
        ("quoted_last", "1,2,\"three, four\""),
        ("unterminated", "\"abc"),
        ("unterminated_later", "a,\"b"),
        ("unterminated_after_escape", "\"abc\"\""),
        ("text_after_quote", "\"a\"b,c"),
        ("space_after_quote", "\"a\" ,b"),
    ];
    let mut cases: Vec<_> = fixed.iter().map(|(name, line)| case(name, line)).collect();
    let size = draw.random_size(400);
    cases.push(case(
        &format!("random_{size}_fields"),
        &random_line(draw.seed(0x6373_7601), size),
    ));
    for index in 1..=draw.extra_cases() {
        cases.push(case(
            &format!("random_{size}_fields_extra_{index}"),
            &random_line(draw.extra_seed(0x6373_7601, index), size),
        ));
    }
    single_control_spec!(
        id: "csv-split",
        folder: "csv_split",
        control: "split-on-commas" => "control_split.py",
        cases: cases,
        description: DESCRIPTION,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(fields: &[&str]) -> Vec<String> {
        fields.iter().map(|&field| field.to_owned()).collect()
    }

    #[test]
    fn examples_from_the_spec() {
        assert_eq!(split("\"a,b\",c"), Some(strings(&["a,b", "c"])));
        assert_eq!(split("\"say \"\"hi\"\"\""), Some(strings(&["say \"hi\""])));
        assert_eq!(split(",,"), Some(strings(&["", "", ""])));
        assert_eq!(split(""), Some(strings(&[""])));
        assert_eq!(split("\"\""), Some(strings(&[""])));
        assert_eq!(split("ab\"c,d"), Some(strings(&["ab\"c", "d"])));
        for malformed in ["\"abc", "a,\"b", "\"a\"b", "\"a\" ,b", "\"abc\"\""] {
            assert_eq!(split(malformed), None, "{malformed:?}");
        }
    }

    #[test]
    fn encoding_then_splitting_gives_the_fields_back() {
        for seed in 0..50 {
            let mut generator = SplitMix64::new(seed);
            let fields: Vec<String> = (0..=generator.index(20))
                .map(|_| ["", "a", ",", "\"", "x,\"y\"", " "][generator.index(6)].to_owned())
                .collect();
            let line = encode(&fields, &mut generator);
            assert_eq!(split(&line), Some(fields), "{line:?}");
        }
    }
}
