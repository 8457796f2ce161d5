//! JSON values compared as values, for the structured-output and tool-call graders: numbers as
//! numbers (`3` equals `3.0`, never `"3"`), strings trimmed with ASCII case ignored, objects
//! without regard to key order, arrays as multisets; and the JSON Schema check both graders
//! run first.

use serde_json::Value;

/// The first place where `got` differs from `expected`, in words naming its path
/// (`contact.phone: expected "555 0142", got "555 0143"`); `None` when they are the same.
pub(crate) fn first_difference(path: &str, expected: &Value, got: &Value) -> Option<String> {
    let here = if path.is_empty() { "the value" } else { path };
    match (expected, got) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64()?, b.as_f64()?);
            let close = (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
            (!close).then(|| format!("{here}: expected {a}, got {b}"))
        }
        (Value::String(a), Value::String(b)) => (!a.trim().eq_ignore_ascii_case(b.trim()))
            .then(|| format!("{here}: expected {a:?}, got {b:?}")),
        (Value::Bool(a), Value::Bool(b)) => {
            (a != b).then(|| format!("{here}: expected {a}, got {b}"))
        }
        (Value::Null, Value::Null) => None,
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let inner = join(path, key);
                match b.get(key) {
                    Some(other) => {
                        if let Some(difference) = first_difference(&inner, value, other) {
                            return Some(difference);
                        }
                    }
                    None => return Some(format!("{inner}: missing")),
                }
            }
            b.keys()
                .find(|key| !a.contains_key(*key))
                .map(|key| format!("{}: not asked for", join(path, key)))
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!(
                    "{here}: expected {} items, got {}",
                    a.len(),
                    b.len()
                ));
            }
            let mut unused: Vec<&Value> = b.iter().collect();
            for item in a {
                match unused
                    .iter()
                    .position(|other| first_difference("", item, other).is_none())
                {
                    Some(index) => {
                        unused.swap_remove(index);
                    }
                    None => return Some(format!("{here}: no item equal to {item}")),
                }
            }
            None
        }
        _ => Some(format!(
            "{here}: expected {} {expected}, got {} {got}",
            type_name(expected),
            type_name(got)
        )),
    }
}

/// Whether `text` states the number written `number` on its own: not inside a longer number
/// (`13` is not stated by `113`, `13.5` or `2.13`).
pub(crate) fn states_number(text: &str, number: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(number).any(|(at, _)| {
        let end = at + number.len();
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(end).copied();
        let after_next = bytes.get(end + 1).copied();
        let digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
        let joined_before =
            digit(before) || (before == Some(b'.') && at >= 2 && digit(Some(bytes[at - 2])));
        let joined_after = digit(after) || (after == Some(b'.') && digit(after_next));
        !joined_before && !joined_after
    })
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// A JSON value's type as JSON Schema names it.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `instance` is valid under `schema` (JSON Schema, the draft the schema names, 2020-12
/// when it names none): `Ok(())`, or the first violation with its place
/// (`/pieces: "12" is not of type "integer"`). A schema that does not compile is an error too.
pub(crate) fn schema_violation(schema: &Value, instance: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|error| format!("the schema does not compile: {error}"))?;
    match validator.iter_errors(instance).next() {
        None => Ok(()),
        Some(error) => {
            let place = error.instance_path().to_string();
            let place = if place.is_empty() {
                "/".to_owned()
            } else {
                place
            };
            Err(format!("{place}: {error}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_as_numbers_and_never_as_strings() {
        assert_eq!(first_difference("", &json!(3), &json!(3.0)), None);
        assert!(
            first_difference("n", &json!(3), &json!("3"))
                .is_some_and(|d| d.contains("expected integer 3, got string"))
        );
        assert!(first_difference("n", &json!(12.75), &json!(12.7)).is_some());
    }

    #[test]
    fn objects_ignore_key_order_and_arrays_are_multisets() {
        let a = json!({"a": 1, "b": [{"s": "x", "q": 2}, {"s": "y", "q": 1}]});
        let b = json!({"b": [{"q": 1, "s": "Y "}, {"q": 2, "s": "x"}], "a": 1});
        assert_eq!(first_difference("", &a, &b), None);
        let missing = json!({"a": 1});
        assert_eq!(
            first_difference("", &a, &missing).as_deref(),
            Some("b: missing")
        );
        let extra = json!({"a": 1, "b": [{"s": "x", "q": 2}, {"s": "y", "q": 1}], "c": 0});
        assert_eq!(
            first_difference("", &a, &extra).as_deref(),
            Some("c: not asked for")
        );
    }

    #[test]
    fn a_number_is_stated_only_on_its_own() {
        assert!(states_number("with 13 pieces.", "13"));
        assert!(states_number("weighs 12.5 kg", "12.5"));
        assert!(!states_number("+45 113 2234", "13"));
        assert!(!states_number("13.5 kg", "13"));
        assert!(!states_number("2.13 kg", "13"));
    }

    #[test]
    fn a_schema_names_the_place_it_is_broken() {
        // JSON Schema 2020-12, section 6.1.1 ("type"): 12 as a string is not an integer.
        let schema = json!({"type": "object", "properties": {"pieces": {"type": "integer"}}});
        assert_eq!(schema_violation(&schema, &json!({"pieces": 12})), Ok(()));
        let broken =
            schema_violation(&schema, &json!({"pieces": "12"})).expect_err("a string is refused");
        assert!(broken.starts_with("/pieces:"), "{broken}");
        assert!(schema_violation(&json!({"type": 7}), &json!(1)).is_err());
    }
}
