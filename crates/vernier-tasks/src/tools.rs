//! The tool-calling tasks: the four tools on offer, the call checker and the no-call checker.

use serde_json::{Value, json};

use crate::kind::Kind;
use crate::task::{
    ArgCheck, ArgField, ArgRule, Category, Checker, Outcome, OutcomeKind, Reply, Task, ToolSpec,
};

impl Category {
    /// Tool-calling requests.
    pub const TOOLS: Self = Self::new("tools");
}

/// The tools family: the right call with the right arguments, or no call where none fits.
pub(crate) const KIND: Kind = Kind {
    category: Category::TOOLS,
    description: "tool-calling requests",
    default_budget: 2_000,
    fits: |checker| matches!(checker, Checker::ToolCall { .. } | Checker::NoCall { .. }),
    prove: None,
};

/// The four tools every tool task offers.
pub(crate) fn bundled_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "search_files".to_owned(),
            description: "Search file contents for a regular expression.".to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression to search for."},
                    "path": {"type": "string", "description": "Directory to search under."},
                    "glob": {"type": "string", "description": "Optional file-name glob, e.g. *.rs."}
                },
                "required": ["pattern", "path"]
            }),
        },
        ToolSpec {
            name: "read_file".to_owned(),
            description: "Read a text file.".to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Path of the file."}},
                "required": ["path"]
            }),
        },
        ToolSpec {
            name: "get_weather".to_owned(),
            description: "Current weather for a city.".to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name."},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit."}
                },
                "required": ["city"]
            }),
        },
        ToolSpec {
            name: "calculate".to_owned(),
            description: "Evaluate an arithmetic expression.".to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {"expression": {"type": "string", "description": "The expression, e.g. 2 * (3 + 4)."}},
                "required": ["expression"]
            }),
        },
    ]
}

fn field(name: &str, rule: ArgRule) -> ArgField {
    ArgField {
        name: name.to_owned(),
        rule,
    }
}

/// The four bundled tool tasks, in catalogue order.
pub(crate) fn bundled_tool_tasks(budget_tokens: u32) -> Vec<Task> {
    let exact = |value: &str| ArgRule::Exact(value.to_owned());
    let tasks = [
        (
            "tool-search",
            "Find every TODO comment in the Python files under /src.",
            Checker::ToolCall {
                name: "search_files".to_owned(),
                check: ArgCheck {
                    fields: vec![
                        field("pattern", exact("TODO")),
                        field("path", exact("/src")),
                        field("glob", exact("*.py")),
                    ],
                },
            },
        ),
        (
            "tool-weather",
            "What is the weather in Tokyo right now? I want the temperature in Celsius.",
            Checker::ToolCall {
                name: "get_weather".to_owned(),
                check: ArgCheck {
                    fields: vec![
                        field("city", ArgRule::CaseInsensitive("Tokyo".to_owned())),
                        field("unit", ArgRule::CaseInsensitive("celsius".to_owned())),
                    ],
                },
            },
        ),
        (
            "tool-calc",
            "What is 45 * 73? Use the calculator.",
            Checker::ToolCall {
                name: "calculate".to_owned(),
                check: ArgCheck {
                    fields: vec![field(
                        "expression",
                        ArgRule::Evaluates {
                            value: 45 * 73,
                            example: "45 * 73".to_owned(),
                        },
                    )],
                },
            },
        ),
        (
            "tool-none",
            "What is the capital of Australia? Answer in one sentence.",
            Checker::NoCall {
                must_mention: "Canberra".to_owned(),
            },
        ),
    ];
    tasks
        .into_iter()
        .map(|(id, prompt, checker)| {
            Task::new(id, Category::TOOLS, prompt, budget_tokens, checker)
                .with_tools(bundled_tools())
        })
        .collect()
}

/// Checks a reply against "exactly one call of `name` with arguments passing `check`".
pub(crate) fn check_tool_call(name: &str, check: &ArgCheck, reply: &Reply) -> Outcome {
    match reply.tool_calls.as_slice() {
        [] => Outcome::new(OutcomeKind::Wrong, "no_call"),
        [call] => {
            let mut outcome = if call.name == name {
                match serde_json::from_str::<Value>(&call.arguments) {
                    Ok(Value::Object(arguments)) => check_arguments(check, &arguments),
                    _ => Outcome::new(OutcomeKind::Wrong, "malformed_arguments"),
                }
            } else {
                Outcome::new(OutcomeKind::Wrong, format!("wrong_function:{}", call.name))
            };
            outcome.provisional_answer = Some(format!("{}({})", call.name, call.arguments));
            outcome
        }
        calls => Outcome::new(
            OutcomeKind::ExtraCalls,
            format!("extra_calls:{}", calls.len()),
        ),
    }
}

fn check_arguments(check: &ArgCheck, arguments: &serde_json::Map<String, Value>) -> Outcome {
    for ArgField { name, rule } in &check.fields {
        let value = arguments.get(name).and_then(Value::as_str);
        let accepted = match (rule, value) {
            (_, None) => false,
            (ArgRule::Exact(expected), Some(got)) => got == expected,
            (ArgRule::CaseInsensitive(expected), Some(got)) => {
                got.trim().eq_ignore_ascii_case(expected)
            }
            (
                ArgRule::Evaluates {
                    value: expected, ..
                },
                Some(got),
            ) => evaluate(got).is_some_and(|(num, den)| den == 1 && num == *expected),
        };
        if !accepted {
            return Outcome::new(OutcomeKind::Wrong, format!("wrong_argument:{name}"));
        }
    }
    for (key, value) in arguments {
        if !value.is_null() && !check.fields.iter().any(|f| &f.name == key) {
            return Outcome::new(OutcomeKind::Wrong, format!("unexpected_argument:{key}"));
        }
    }
    Outcome::new(OutcomeKind::Pass, "expected_call")
}

/// An argument object that satisfies `check` (used by the self-check).
#[cfg_attr(
    not(feature = "grader"),
    expect(dead_code, reason = "the self-check uses it")
)]
pub(crate) fn example_arguments(check: &ArgCheck) -> Value {
    let mut object = serde_json::Map::new();
    for ArgField { name, rule } in &check.fields {
        let value = match rule {
            ArgRule::Exact(v) | ArgRule::CaseInsensitive(v) => v.clone(),
            ArgRule::Evaluates { example, .. } => example.clone(),
        };
        object.insert(name.clone(), Value::String(value));
    }
    Value::Object(object)
}

/// Checks a reply against "no call, a clean stop, content mentioning `must_mention`".
pub(crate) fn check_no_call(must_mention: &str, reply: &Reply) -> Outcome {
    if let Some(call) = reply.tool_calls.first() {
        return Outcome::new(OutcomeKind::Wrong, format!("unexpected_call:{}", call.name));
    }
    if looks_like_call(&reply.content) {
        return Outcome::new(OutcomeKind::Wrong, "call_like_text");
    }
    if reply.finish_reason.as_deref() != Some("stop") {
        return Outcome::new(
            OutcomeKind::Wrong,
            format!(
                "not_clean_stop:{}",
                reply.finish_reason.as_deref().unwrap_or("none")
            ),
        );
    }
    if reply.content.trim().is_empty() {
        return Outcome::new(OutcomeKind::NoAnswer, "empty_content");
    }
    if reply
        .content
        .to_ascii_lowercase()
        .contains(&must_mention.to_ascii_lowercase())
    {
        Outcome::new(OutcomeKind::Pass, format!("mentions:{must_mention}"))
    } else {
        Outcome::new(OutcomeKind::Wrong, format!("missing:{must_mention}"))
    }
}

/// Text that a server's tool parser failed to turn into a call: `<tool_call>`-style tags, or
/// a JSON object with a `name` and `arguments` (or `parameters`).
pub(crate) fn looks_like_call(content: &str) -> bool {
    let lower = content.to_ascii_lowercase();
    if [
        "<tool_call",
        "<function=",
        "<|tool_call",
        "[tool_calls]",
        "<|python_tag|>",
    ]
    .iter()
    .any(|tag| lower.contains(tag))
    {
        return true;
    }
    for (start, _) in content.match_indices('{') {
        let mut stream = serde_json::Deserializer::from_str(&content[start..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(object))) = stream.next()
            && object.contains_key("name")
            && (object.contains_key("arguments") || object.contains_key("parameters"))
        {
            return true;
        }
    }
    false
}

/// Exact rational value of an arithmetic expression: integers, `+ - * /`, unary minus,
/// parentheses, whitespace. `None` when malformed, on division by zero or on overflow.
pub(crate) fn evaluate(expression: &str) -> Option<(i128, i128)> {
    let tokens: Vec<char> = expression.chars().filter(|c| !c.is_whitespace()).collect();
    let mut parser = Parser {
        tokens: &tokens,
        position: 0,
    };
    let value = parser.sum()?;
    (parser.position == tokens.len()).then_some(value)
}

struct Parser<'a> {
    tokens: &'a [char],
    position: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.tokens.get(self.position).copied()
    }

    fn sum(&mut self) -> Option<(i128, i128)> {
        let mut value = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.position += 1;
            let rhs = self.product()?;
            let rhs = if op == '-' {
                (rhs.0.checked_neg()?, rhs.1)
            } else {
                rhs
            };
            value = normalise(
                value
                    .0
                    .checked_mul(rhs.1)?
                    .checked_add(rhs.0.checked_mul(value.1)?)?,
                value.1.checked_mul(rhs.1)?,
            )?;
        }
        Some(value)
    }

    fn product(&mut self) -> Option<(i128, i128)> {
        let mut value = self.unary()?;
        while let Some(op @ ('*' | '/' | '×' | '÷')) = self.peek() {
            self.position += 1;
            let rhs = self.unary()?;
            value = if matches!(op, '*' | '×') {
                normalise(value.0.checked_mul(rhs.0)?, value.1.checked_mul(rhs.1)?)?
            } else {
                normalise(value.0.checked_mul(rhs.1)?, value.1.checked_mul(rhs.0)?)?
            };
        }
        Some(value)
    }

    fn unary(&mut self) -> Option<(i128, i128)> {
        match self.peek()? {
            '-' => {
                self.position += 1;
                let (num, den) = self.unary()?;
                Some((num.checked_neg()?, den))
            }
            '+' => {
                self.position += 1;
                self.unary()
            }
            '(' => {
                self.position += 1;
                let value = self.sum()?;
                (self.peek()? == ')').then_some(())?;
                self.position += 1;
                Some(value)
            }
            _ => {
                let start = self.position;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.position += 1;
                }
                let digits: String = self.tokens[start..self.position].iter().collect();
                Some((digits.parse().ok()?, 1))
            }
        }
    }
}

fn normalise(num: i128, den: i128) -> Option<(i128, i128)> {
    if den == 0 {
        return None;
    }
    let (num, den) = if den < 0 {
        (num.checked_neg()?, den.checked_neg()?)
    } else {
        (num, den)
    };
    Some(crate::answer::reduce(num, den))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_exactly() {
        assert_eq!(evaluate("45 * 73"), Some((3285, 1)));
        assert_eq!(evaluate("45*73"), Some((3285, 1)));
        assert_eq!(evaluate("-(2+3)*-2"), Some((10, 1)));
        assert_eq!(evaluate("8/4/2"), Some((1, 1)));
        assert_eq!(evaluate("7-2-1"), Some((4, 1)));
        assert_eq!(evaluate("1/3"), Some((1, 3)));
        assert_eq!(evaluate("1/0"), None);
        assert_eq!(evaluate("2+"), None);
        assert_eq!(evaluate("(1"), None);
        assert_eq!(
            evaluate("45 73"),
            Some((4573, 1)),
            "whitespace is insignificant"
        );
    }

    #[test]
    fn call_like_text_is_spotted() {
        assert!(looks_like_call("<tool_call>{\"name\":\"x\"}</tool_call>"));
        assert!(looks_like_call(
            "Sure: {\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\"}}"
        ));
        assert!(!looks_like_call("The capital of Australia is Canberra."));
        assert!(!looks_like_call("A set {1, 2} and {\"name\": \"x\"}"));
    }
}
