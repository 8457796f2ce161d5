//! Comparing a result from the container with the expected value, on the Rust side.

use std::fmt::Write as _;

use serde_json::Value;

/// Relative tolerance for numbers that are not both integers.
const RELATIVE_TOLERANCE: f64 = 1e-9;
/// Longest rendering of a value in a mismatch message.
const MAX_RENDERED: usize = 200;

/// `Ok` when `actual` matches `expected`, else a message such as `expected 3, got 4`
/// (with a path such as `at [2].name: ` for nested values).
///
/// Rules: integers compare exactly; an integer and a float, or two floats, compare with
/// relative tolerance 1e-9 (so `1 == 1.0`); booleans are not numbers; strings, `null` and
/// lists compare exactly, lists element by element; objects key by key.
///
/// ```
/// use serde_json::json;
///
/// assert!(vernier_grader::compare(&json!([1, {"a": 0.3}]), &json!([1.0, {"a": 0.1 + 0.2}])).is_ok());
/// assert_eq!(vernier_grader::compare(&json!([true]), &json!([1])), Err("at [0]: expected true, got 1".to_owned()));
/// ```
pub fn compare(expected: &Value, actual: &Value) -> Result<(), String> {
    let mut path = String::new();
    compare_at(expected, actual, &mut path).map_err(|message| {
        if path.is_empty() {
            message
        } else {
            format!("at {path}: {message}")
        }
    })
}

fn compare_at(expected: &Value, actual: &Value, path: &mut String) -> Result<(), String> {
    let mismatch = || {
        Err(format!(
            "expected {}, got {}",
            render(expected),
            render(actual)
        ))
    };
    match (expected, actual) {
        (Value::Null, Value::Null) => Ok(()),
        (Value::Bool(a), Value::Bool(b)) if a == b => Ok(()),
        (Value::String(a), Value::String(b)) if a == b => Ok(()),
        (Value::Number(a), Value::Number(b)) if numbers_equal(a, b) => Ok(()),
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!(
                    "expected a list of {} items, got {} items: {}",
                    a.len(),
                    b.len(),
                    render(actual)
                ));
            }
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                let before = path.len();
                let _ = write!(path, "[{index}]");
                compare_at(x, y, path)?;
                path.truncate(before);
            }
            Ok(())
        }
        (Value::Object(a), Value::Object(b)) => {
            if let Some(key) = a.keys().find(|key| !b.contains_key(*key)) {
                return Err(format!("missing key {key:?} in {}", render(actual)));
            }
            if let Some(key) = b.keys().find(|key| !a.contains_key(*key)) {
                return Err(format!("unexpected key {key:?} in {}", render(actual)));
            }
            for (key, x) in a {
                let before = path.len();
                let _ = write!(path, ".{key}");
                compare_at(x, &b[key], path)?;
                path.truncate(before);
            }
            Ok(())
        }
        _ => mismatch(),
    }
}

fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if let (Some(x), Some(y)) = (as_integer(a), as_integer(b)) {
        return x == y;
    }
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= RELATIVE_TOLERANCE * x.abs().max(y.abs()),
        _ => false,
    }
}

fn as_integer(number: &serde_json::Number) -> Option<i128> {
    number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from))
}

/// Compact JSON, cut to a readable length.
pub(crate) fn render(value: &Value) -> String {
    let text = value.to_string();
    shorten(&text, MAX_RENDERED)
}

pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integers_and_floats() {
        assert!(compare(&json!(1), &json!(1.0)).is_ok());
        assert!(compare(&json!(0.1 + 0.2), &json!(0.3)).is_ok());
        assert!(compare(&json!(1.0), &json!(1.000_001)).is_err());
        assert!(compare(&json!(u64::MAX), &json!(u64::MAX - 1)).is_err());
        assert!(compare(&json!(-3), &json!(-3)).is_ok());
        assert_eq!(
            compare(&json!(3), &json!(4)),
            Err("expected 3, got 4".to_owned())
        );
    }

    #[test]
    fn booleans_are_not_numbers() {
        assert!(compare(&json!(true), &json!(1)).is_err());
        assert!(compare(&json!(0), &json!(false)).is_err());
        assert!(compare(&json!(true), &json!(true)).is_ok());
    }

    #[test]
    fn strings_lists_and_objects() {
        assert!(compare(&json!("a"), &json!("A")).is_err());
        assert!(compare(&json!([1, [2, 3]]), &json!([1.0, [2, 3]])).is_ok());
        assert_eq!(
            compare(&json!([1, [2, 3]]), &json!([1, [2, 4]])),
            Err("at [1][1]: expected 3, got 4".to_owned())
        );
        assert!(compare(&json!([1, 2]), &json!([1, 2, 3])).is_err());
        assert!(
            compare(
                &json!({"a": 1, "b": [true]}),
                &json!({"b": [true], "a": 1.0})
            )
            .is_ok()
        );
        assert_eq!(
            compare(&json!({"a": {"b": 1}}), &json!({"a": {"b": 2}})),
            Err("at .a.b: expected 1, got 2".to_owned())
        );
        assert!(compare(&json!({"a": 1}), &json!({"a": 1, "b": 2})).is_err());
        assert!(compare(&json!(null), &json!(0)).is_err());
        assert!(compare(&json!("1"), &json!(1)).is_err());
        assert!(compare(&json!("a"), &json!(["a"])).is_err());
        assert!(compare(&json!({"a": [1]}), &json!({"a": [1.0]})).is_ok());
    }

    #[test]
    fn long_values_are_shortened_on_a_char_boundary() {
        let long = "é".repeat(300);
        let rendered = render(&json!(long));
        assert!(rendered.len() < 260, "{rendered}");
        assert!(rendered.ends_with("bytes)"));
    }
}
