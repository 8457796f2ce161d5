//! `expression-eval`: an arithmetic evaluator without `eval`.

use serde_json::{Value, json};
use vernier_grader::{Case, Guard};
use vernier_stats::SplitMix64;

use super::spec::{CaseDraw, CodeTaskSpec, NegativeControl, harness};
use crate::code_check::ExpectedFailure;

const DESCRIPTION: &str = r#"Write a Python function

    def evaluate(expression: str) -> float:

that evaluates an arithmetic expression and returns its value (an int result is fine
where the value is whole).

Grammar:
- Numbers are non-negative decimal literals: one or more digits, optionally followed
  by a point and one or more digits ("3", "2.5"). Nothing else: no exponents, no
  leading or trailing point.
- Binary operators + - * / with the usual precedence (* and / bind tighter than + and -)
  and left associativity: "8/4/2" is 1 and "7-2-1" is 4.
- Unary minus, which may repeat and may follow a binary operator: "-(2+3)*-2" is 10,
  "2--3" is 5.
- Parentheses (the tests nest them at most 10 deep).
- Spaces and tabs may appear between tokens and are ignored, but they do not join
  tokens: "1 2" is malformed.

Errors:
- Malformed input raises ValueError. Examples: "" (empty), "2+", "(1", "1)", "1 2",
  "2**3", "()", "abc".
- Division by zero raises ZeroDivisionError ("1/0", "5/(2-2)"). Only well-formed
  expressions are tested for this.

You may not use eval, exec, compile or __import__ (not even by another name)."#;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Number(f64),
    Plus,
    Minus,
    Times,
    Divide,
    Open,
    Close,
}

#[derive(Debug)]
enum Node {
    Number(f64),
    Negate(Box<Node>),
    Binary(Token, Box<Node>, Box<Node>),
}

/// Why an expression has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EvaluationError {
    /// Maps to Python's `ValueError`.
    Malformed,
    /// Maps to Python's `ZeroDivisionError`.
    DivisionByZero,
}

fn tokens(expression: &str) -> Result<Vec<Token>, EvaluationError> {
    let bytes = expression.as_bytes();
    let mut tokens = Vec::new();
    let mut position = 0;
    while position < bytes.len() {
        let token = match bytes[position] {
            b' ' | b'\t' => {
                position += 1;
                continue;
            }
            b'+' => Token::Plus,
            b'-' => Token::Minus,
            b'*' => Token::Times,
            b'/' => Token::Divide,
            b'(' => Token::Open,
            b')' => Token::Close,
            b'0'..=b'9' => {
                let start = position;
                while position < bytes.len() && bytes[position].is_ascii_digit() {
                    position += 1;
                }
                if position < bytes.len() && bytes[position] == b'.' {
                    position += 1;
                    let fraction = position;
                    while position < bytes.len() && bytes[position].is_ascii_digit() {
                        position += 1;
                    }
                    if position == fraction {
                        return Err(EvaluationError::Malformed);
                    }
                }
                let literal = expression
                    .get(start..position)
                    .ok_or(EvaluationError::Malformed)?;
                tokens.push(Token::Number(
                    literal.parse().map_err(|_| EvaluationError::Malformed)?,
                ));
                continue;
            }
            _ => return Err(EvaluationError::Malformed),
        };
        tokens.push(token);
        position += 1;
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    position: usize,
}

impl Parser {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.position).copied()
    }

    fn take(&mut self) -> Result<Token, EvaluationError> {
        let token = self.peek().ok_or(EvaluationError::Malformed)?;
        self.position += 1;
        Ok(token)
    }

    fn sum(&mut self) -> Result<Node, EvaluationError> {
        let mut left = self.product()?;
        while let Some(operator @ (Token::Plus | Token::Minus)) = self.peek() {
            self.position += 1;
            left = Node::Binary(operator, Box::new(left), Box::new(self.product()?));
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Node, EvaluationError> {
        let mut left = self.unary()?;
        while let Some(operator @ (Token::Times | Token::Divide)) = self.peek() {
            self.position += 1;
            left = Node::Binary(operator, Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Node, EvaluationError> {
        if self.peek() == Some(Token::Minus) {
            self.position += 1;
            return Ok(Node::Negate(Box::new(self.unary()?)));
        }
        match self.take()? {
            Token::Number(value) => Ok(Node::Number(value)),
            Token::Open => {
                let inner = self.sum()?;
                match self.take()? {
                    Token::Close => Ok(inner),
                    _ => Err(EvaluationError::Malformed),
                }
            }
            _ => Err(EvaluationError::Malformed),
        }
    }
}

fn parse(expression: &str) -> Result<Node, EvaluationError> {
    let mut parser = Parser {
        tokens: tokens(expression)?,
        position: 0,
    };
    let tree = parser.sum()?;
    if parser.peek().is_some() {
        return Err(EvaluationError::Malformed);
    }
    Ok(tree)
}

/// Value of a tree and the largest magnitude met on the way.
fn value(node: &Node) -> Result<(f64, f64), EvaluationError> {
    match node {
        Node::Number(number) => Ok((*number, number.abs())),
        Node::Negate(inner) => {
            let (inner, largest) = value(inner)?;
            Ok((-inner, largest))
        }
        Node::Binary(operator, left, right) => {
            let (left, left_largest) = value(left)?;
            let (right, right_largest) = value(right)?;
            let result = match operator {
                Token::Plus => left + right,
                Token::Minus => left - right,
                Token::Times => left * right,
                _ if right == 0.0 => return Err(EvaluationError::DivisionByZero),
                _ => left / right,
            };
            Ok((result, left_largest.max(right_largest).max(result.abs())))
        }
    }
}

/// The Rust reference: parse the whole expression first (so malformed input is a
/// `Malformed` error even where it also divides by zero), then evaluate in `f64`,
/// which is Python's float.
pub(super) fn evaluate(expression: &str) -> Result<f64, EvaluationError> {
    value(&parse(expression)?).map(|(result, _)| result)
}

/// A random well-formed expression whose every division is by 2, 4 or 8 and whose
/// every product has a one-digit literal on the right, with all intermediate values
/// below 2^20 in magnitude: every result is then a dyadic rational that `f64`
/// holds exactly, so exact (`Fraction`) and float solutions agree to the last bit.
fn random_expression(generator: &mut SplitMix64, depth: u32) -> String {
    fn gap(generator: &mut SplitMix64) -> &'static str {
        [" ", "", "", " ", "\t"][generator.index(5)]
    }
    if depth == 0 || generator.chance(1, 4) {
        let literal = generator.below(30).to_string();
        return if generator.chance(1, 6) {
            format!("-{literal}")
        } else {
            literal
        };
    }
    let left = random_expression(generator, depth - 1);
    let body = match generator.below(4) {
        0 => format!(
            "{left}{}+{}{}",
            gap(generator),
            gap(generator),
            random_expression(generator, depth - 1)
        ),
        1 => format!(
            "{left}{}-{}{}",
            gap(generator),
            gap(generator),
            random_expression(generator, depth - 1)
        ),
        2 => format!(
            "{left}{}*{}{}",
            gap(generator),
            gap(generator),
            generator.below(10)
        ),
        _ => format!(
            "{left}{}/{}{}",
            gap(generator),
            gap(generator),
            [2, 4, 8][generator.index(3)]
        ),
    };
    match generator.below(3) {
        0 => body,
        1 => format!("({body})"),
        _ => format!("-({body})"),
    }
}

fn generated_expression(seed: u64) -> String {
    let mut generator = SplitMix64::new(seed);
    loop {
        let expression = random_expression(&mut generator, 7);
        let Ok(tree) = parse(&expression) else {
            continue;
        };
        if matches!(value(&tree), Ok((_, largest)) if largest < f64::from(1 << 20))
            && expression.len() > 150
        {
            return expression;
        }
    }
}

fn case(name: &str, expression: &str) -> Case {
    let input = Value::String(expression.to_owned());
    match evaluate(expression) {
        Ok(result) => Case::new(name, input, json!(result)),
        Err(EvaluationError::Malformed) => Case::raises(name, input, "ValueError"),
        Err(EvaluationError::DivisionByZero) => Case::raises(name, input, "ZeroDivisionError"),
    }
}

pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let fixed = [
        ("addition", "1+2"),
        ("precedence", "2+3*4"),
        ("parentheses", "(2+3)*4"),
        ("unary_minus", "-(2+3)*-2"),
        ("left_assoc_division", "8/4/2"),
        ("left_assoc_subtraction", "7-2-1"),
        ("left_assoc_long", "2-3-4-5"),
        ("mixed_left_assoc", "100/8/5*2"),
        ("double_minus", "2--3"),
        ("whitespace", "  12 *\t( 3 - 5 ) "),
        ("decimals", "2.5*4 - 0.5"),
        ("one_third", "1/3"),
        ("float_rounding", "0.1+0.2"),
        ("nested", "((((1))))+(-(-(2)))"),
        ("mixed", "1-2*3+4/8"),
        ("empty", ""),
        ("blank", "   "),
        ("dangling_operator", "2+"),
        ("unclosed", "(1"),
        ("unopened", "1)"),
        ("adjacent_numbers", "1 2"),
        ("power", "2**3"),
        ("empty_parentheses", "()"),
        ("letters", "abc"),
        ("two_points", "1.2.3"),
        ("missing_operand", "2*(3+)"),
        ("divide_by_zero", "1/0"),
        ("divide_by_zero_expression", "5/(2-2)"),
        ("divide_by_zero_float", "1/(0.5-0.5)"),
    ];
    let mut cases: Vec<Case> = fixed
        .iter()
        .map(|(name, expression)| case(name, expression))
        .collect();
    let extra = (1..=draw.extra_cases()).map(|index| draw.extra_seed(0x0065_7661_6c03, index));
    for (index, seed) in [0x0065_7661_6c01_u64, 0x0065_7661_6c02, 0x0065_7661_6c03]
        .into_iter()
        .map(|constant| draw.seed(constant))
        .chain(extra)
        .enumerate()
    {
        cases.push(case(
            &format!("generated_{}", index + 1),
            &generated_expression(seed),
        ));
    }
    let forbidden = ["eval", "exec", "compile", "__import__"];
    CodeTaskSpec {
        id: "expression-eval",
        harness: harness!("expression_eval"),
        reference: include_str!("python/expression_eval/reference.py"),
        negative_controls: vec![
            NegativeControl {
                name: "uses-eval",
                code: include_str!("python/expression_eval/control_eval.py"),
                must_fail_with: ExpectedFailure::GuardViolation,
            },
            NegativeControl {
                name: "right-associative",
                code: include_str!("python/expression_eval/control_right_associative.py"),
                must_fail_with: ExpectedFailure::FailedCases,
            },
        ],
        cases,
        guards: forbidden
            .iter()
            .map(|name| Guard::ForbiddenName((*name).to_owned()))
            .collect(),
        ..CodeTaskSpec::described(DESCRIPTION)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_from_the_spec() {
        assert_eq!(evaluate("-(2+3)*-2"), Ok(10.0));
        assert_eq!(evaluate("8/4/2"), Ok(1.0));
        assert_eq!(evaluate("7-2-1"), Ok(4.0));
        assert_eq!(evaluate("2+3*4"), Ok(14.0));
        assert_eq!(evaluate(" ( 1 + 2 ) * 3 "), Ok(9.0));
        assert_eq!(evaluate("2--3"), Ok(5.0));
        assert_eq!(evaluate("0.1+0.2"), Ok(0.1 + 0.2));
        for malformed in [
            "", "2+", "(1", "1 2", "2**3", "()", "1)", "1.", ".5", "1e3", "+",
        ] {
            assert_eq!(
                evaluate(malformed),
                Err(EvaluationError::Malformed),
                "{malformed:?}"
            );
        }
        assert_eq!(evaluate("1/0"), Err(EvaluationError::DivisionByZero));
        assert_eq!(evaluate("5/(2-2)"), Err(EvaluationError::DivisionByZero));
    }

    #[test]
    fn generated_expressions_are_long_exact_and_deterministic() {
        let first = generated_expression(0x0065_7661_6c01);
        assert_eq!(first, generated_expression(0x0065_7661_6c01));
        let result = evaluate(&first).expect("generated expressions are well formed");
        // Dyadic with at most 2^-21 granularity (7 levels of /8 at most).
        let scaled = result * f64::from(1 << 21);
        assert!(
            (scaled - scaled.round()).abs() < f64::EPSILON,
            "{result} is not dyadic"
        );
        assert!(
            first.contains('/') && first.contains('*') && first.contains("-("),
            "{first}"
        );
    }
}
