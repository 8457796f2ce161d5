//! Code datasets (HumanEval, MBPP): the reply's last fenced Python block, graded in the sandbox
//! by the dataset's own tests.
//!
//! Unlike the bundled code tasks, whose expected values never enter the container, a code
//! dataset's tests are `assert` statements and run inside the sandbox beside the submission:
//! the harness carries them. The sandbox's limits apply; no name guards are set (canonical
//! solutions use `eval`, `exec` and the like).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use vernier_grader::Case;

use crate::code_check::{CodeCheck, CodeControl, ExpectedFailure};

/// The time limit of a code dataset question before the self-check calibrates it.
const TIME_FLOOR: Duration = Duration::from_secs(5);

/// A question answered by a program and graded by the dataset's own tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProgramTests {
    /// The function the tests call (HumanEval's `entry_point`: its `check(candidate)` gets
    /// it); `None` where the asserts name it themselves (MBPP).
    pub entry_point: Option<String>,
    /// The test sources, one case each: HumanEval's one `check` definition, MBPP's asserts.
    pub tests: Vec<String>,
    /// Code run before each test (MBPP's `test_imports` and `test_setup_code`).
    pub setup: String,
    /// The dataset's canonical program, which the self-check requires to pass.
    pub reference: String,
    /// Code put before the submission when it is graded: the dataset's prompt up to the
    /// function asked for (HumanEval's imports and the helpers it defines, e.g. `encode_cyclic`
    /// beside `decode_cyclic`), which a reply may leave out; the reply's own definitions come
    /// after and win.
    pub preamble: String,
}

impl ProgramTests {
    /// What a prompt defines before `def ENTRY_POINT(`: its imports and helper functions; its
    /// top-level `import` and `from` lines when the entry point is not found.
    pub fn preamble_of(prompt: &str, entry_point: &str) -> String {
        match prompt.find(&format!("def {entry_point}(")) {
            Some(at) => prompt[..at].to_owned(),
            None => Self::imports_of(prompt),
        }
    }

    /// The imports of a prompt: its top-level `import` and `from` lines.
    pub fn imports_of(prompt: &str) -> String {
        prompt
            .lines()
            .filter(|line| line.starts_with("import ") || line.starts_with("from "))
            .fold(String::new(), |mut imports, line| {
                imports.push_str(line);
                imports.push('\n');
                imports
            })
    }

    /// The name of the first function the reference defines.
    fn first_function(&self) -> Option<&str> {
        self.reference.lines().find_map(|line| {
            let rest = line.strip_prefix("def ")?;
            let name = rest.split('(').next()?.trim();
            (!name.is_empty()).then_some(name)
        })
    }
}

/// A Python literal of a string (a JSON string is one).
fn literal(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// The harness: each case runs one test source in a namespace holding the submission's
/// globals, after the setup; HumanEval's `check` is then called on the entry point.
fn harness(tests: &ProgramTests) -> String {
    let entry = tests
        .entry_point
        .as_deref()
        .map_or_else(|| "None".to_owned(), literal);
    let sources: Vec<String> = tests.tests.iter().map(|test| literal(test)).collect();
    format!(
        "ENTRY_POINT = {entry}\nSETUP = {setup}\nTESTS = [{sources}]\n\n\
         def run_case(solution, case_input):\n    \
             namespace = dict(vars(solution))\n    \
             exec(SETUP, namespace)\n    \
             exec(TESTS[case_input], namespace)\n    \
             if ENTRY_POINT is not None:\n        \
                 namespace[\"check\"](namespace[ENTRY_POINT])\n    \
             return \"passed\"\n",
        setup = literal(&tests.setup),
        sources = sources.join(", "),
    )
}

/// The code check of a program question: its tests as cases, its reference, and a control
/// that defines the function but returns `None`, which must fail (the tests bite).
pub(crate) fn program_check(tests: &ProgramTests) -> CodeCheck {
    let cases = (0..tests.tests.len())
        .map(|index| {
            Case::new(
                format!("test {}", index + 1),
                serde_json::json!(index),
                serde_json::json!("passed"),
            )
        })
        .collect();
    let mut check = CodeCheck::new(harness(tests), cases, TIME_FLOOR);
    check.reference = Some(tests.reference.clone());
    check.preamble.clone_from(&tests.preamble);
    if let Some(name) = tests
        .entry_point
        .as_deref()
        .or_else(|| tests.first_function())
    {
        check.controls.push(CodeControl {
            name: "returns-none".to_owned(),
            code: format!("def {name}(*args, **kwargs):\n    return None\n"),
            must_fail_with: ExpectedFailure::AnyFailure,
            integrity: false,
        });
    }
    check
}

/// The prompt of a program question.
/// An MBPP task (`mbpp`) lists its tests under the task; HumanEval completes a signature.
pub(crate) fn program_prompt(mbpp: bool, text: &str, tests: &ProgramTests) -> String {
    if mbpp {
        format!(
            "You are an expert Python programmer, and here is your task: {} Your code should \
             pass these tests:\n\n{}\n\nThink it through, then reply with the complete code in \
             one final ```python block.",
            text.trim(),
            tests.tests.join("\n")
        )
    } else {
        format!(
            "Complete the following Python function. Think it through, then reply with the \
             complete function, its imports included, in one final ```python block.\n\n\
             ```python\n{text}```"
        )
    }
}
