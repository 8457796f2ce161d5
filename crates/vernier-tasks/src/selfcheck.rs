//! The self-check: proves every task before a model sees it, and calibrates code time limits.

use std::collections::HashSet;
use std::time::Duration;

use futures::future::join_all;
use vernier_grader::{GradeReason, Grader};

use crate::answer::gcd;
use crate::code_check::{CodeCheck, ExpectedFailure};
use crate::error::{SelfCheckError, SelfCheckFailure};
use crate::kinds::kind;
use crate::math::Problem;
use crate::suite::Suite;
use crate::task::{ArgRule, Category, Checker, Outcome, OutcomeKind, Reply, ReplyToolCall, Task};
use crate::tools::example_arguments;

/// A code task's time limit is this many times its reference's measured wall time in the
/// sandbox (container start included), and never below the task's floor.
pub const TIME_LIMIT_FACTOR: u32 = 10;

/// The least wall time a control that must fail other than by the clock is given (a memory
/// bomb, a network call): it ends by itself well within it, and a loaded machine must not
/// turn that end into a timeout that proves nothing about the sandbox.
pub const CONTROL_WALL_FLOOR: Duration = Duration::from_secs(30);

/// The limit the reference runs under while it is being measured.
const CALIBRATION_LIMIT: Duration = Duration::from_secs(120);

/// What the self-check proved about one task.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskSelfCheck {
    /// The task.
    pub task_id: String,
    /// How many checks ran on it (each one passed).
    pub n_checks: usize,
    /// Code tasks: the reference's wall time in the sandbox.
    pub reference_time: Option<Duration>,
    /// Code tasks: the calibrated time limit.
    pub time_limit: Option<Duration>,
}

/// A passed self-check: what was proved, and the calibrated code time limits.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SelfCheckReport {
    /// One entry per task, in suite order.
    pub tasks: Vec<TaskSelfCheck>,
    /// Digest of the grader image the code checks ran in (when there were any).
    pub image_digest: Option<String>,
}

impl SelfCheckReport {
    /// The calibrated time limit of a code task.
    pub fn limits_for(&self, task_id: &str) -> Option<Duration> {
        self.tasks
            .iter()
            .find(|t| t.task_id == task_id)
            .and_then(|t| t.time_limit)
    }

    /// Writes the calibrated time limits into the suite's code tasks.
    pub fn apply(&self, suite: &mut Suite) {
        for task in &mut suite.tasks {
            if let (Checker::Code(check), Some(limit)) =
                (&mut task.checker, self.limits_for(&task.id))
            {
                check.limits.wall_time = limit;
            }
        }
    }

    /// Total number of checks that ran.
    pub fn n_checks(&self) -> usize {
        self.tasks.iter().map(|t| t.n_checks).sum()
    }
}

/// Runs every check of the catalogue's "self-check" and "grading integrity" rules on every task
/// and returns every failure, each naming its task. A grader is required when the suite has code
/// tasks. On success the report holds the calibrated time limits (apply them with
/// [`SelfCheckReport::apply`]).
pub async fn self_check(
    suite: &Suite,
    grader: Option<&Grader>,
) -> Result<SelfCheckReport, SelfCheckError> {
    let n_code_tasks = suite.count(Category::CODE);
    if n_code_tasks > 0 && grader.is_none() {
        return Err(SelfCheckError::GraderRequired { n_code_tasks });
    }
    let mut failures = Vec::new();
    let mut seen = HashSet::new();
    let mut reports = Vec::with_capacity(suite.tasks.len());
    for task in &suite.tasks {
        let mut probe = Probe {
            task,
            failures: Vec::new(),
            n_checks: 0,
        };
        if !seen.insert(task.id.as_str()) {
            probe.fail("the id is used by another task");
        }
        probe.common();
        if let Some(prove) = kind(task.category).and_then(|kind| kind.prove) {
            let (n_checks, proof_failures) = prove(task);
            probe.n_checks += n_checks;
            for failure in proof_failures {
                probe.fail(failure);
            }
        } else {
            probe.by_checker().await;
        }
        reports.push(TaskSelfCheck {
            task_id: task.id.clone(),
            n_checks: probe.n_checks,
            reference_time: None,
            time_limit: None,
        });
        failures.extend(probe.failures);
    }
    let image_digest = grader
        .filter(|_| n_code_tasks > 0)
        .map(|g| g.image_digest().to_owned());
    if let Some(grader) = grader {
        let code_tasks =
            suite
                .tasks
                .iter()
                .enumerate()
                .filter_map(|(index, task)| match &task.checker {
                    Checker::Code(check) => Some((index, task, check)),
                    _ => None,
                });
        let results = join_all(code_tasks.map(|(index, task, check)| async move {
            (index, sandbox_checks(task, check, grader).await)
        }))
        .await;
        for (index, result) in results {
            let report = &mut reports[index];
            report.n_checks += result.n_checks;
            report.reference_time = result.reference_time;
            report.time_limit = result.time_limit;
            failures.extend(result.failures);
        }
    }
    if failures.is_empty() {
        Ok(SelfCheckReport {
            tasks: reports,
            image_digest,
        })
    } else {
        Err(SelfCheckError::Failed { failures })
    }
}

/// Whether two integer or fraction checkers hold the same gold value.
fn same_value(a: &Checker, b: &Checker) -> bool {
    match (a, b) {
        (Checker::Integer(a), Checker::Integer(b)) => a == b,
        (Checker::Fraction { num: a, den: b, .. }, Checker::Fraction { num: c, den: d, .. }) => {
            a == c && b == d
        }
        _ => false,
    }
}

struct Probe<'a> {
    task: &'a Task,
    failures: Vec<SelfCheckFailure>,
    n_checks: usize,
}

impl Probe<'_> {
    async fn by_checker(&mut self) {
        match &self.task.checker {
            Checker::Integer(_) | Checker::Fraction { .. } | Checker::ExactString(_) => {
                self.parameters();
                self.literal().await;
            }
            Checker::IntegerList(_) => {
                self.fail("an integer-list answer belongs to a context task");
            }
            Checker::Word(_) | Checker::WordList(_) => {
                self.fail("a word answer belongs to a vision or video task");
            }
            Checker::Choice { .. } | Checker::FinalAnswer(_) => {
                self.fail("a dataset answer belongs to a dataset task");
            }
            Checker::Instructions(_) => {
                self.fail("instructions belong to an instructions task");
            }
            Checker::Structured { .. } => {
                self.fail("a schema and truth belong to a structured-output task");
            }
            Checker::Calls(_) => {
                self.fail("expected calls belong to a tool-call task");
            }
            Checker::ToolCall { .. } => self.tool_call().await,
            Checker::NoCall { must_mention } => self.no_call(must_mention).await,
            Checker::Code(_) => self.code_offline().await,
        }
    }

    fn fail(&mut self, reason: impl Into<String>) {
        self.failures.push(SelfCheckFailure {
            task_id: self.task.id.clone(),
            reason: reason.into(),
        });
    }

    fn require(&mut self, condition: bool, reason: impl FnOnce() -> String) {
        self.n_checks += 1;
        if !condition {
            self.fail(reason());
        }
    }

    /// Expects `reply` to be graded with `kind`; `what` names the probe.
    async fn expect(&mut self, what: &str, reply: Reply, kind: OutcomeKind) {
        let outcome: Outcome = self.task.check(&reply, None).await;
        self.require(outcome.kind == kind, || {
            format!(
                "checker gave {} ({}) for {what}; expected {kind}",
                outcome.kind, outcome.detail
            )
        });
    }

    fn user_prompt(&self) -> Option<&str> {
        self.task
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.as_str())
    }

    fn common(&mut self) {
        let task = self.task;
        self.require(!task.id.trim().is_empty(), || "the id is empty".to_owned());
        self.require(
            self.user_prompt().is_some_and(|p| !p.trim().is_empty()),
            || "the task has no user message".to_owned(),
        );
        self.require(task.budget_tokens > 0, || {
            "the token budget is 0".to_owned()
        });
        let registered = kind(task.category);
        self.require(registered.is_some(), || {
            format!(
                "no family registers the category `{}`; register it in kinds.rs",
                task.category
            )
        });
        let consistent = registered.is_none_or(|kind| (kind.fits)(&task.checker));
        self.require(consistent, || {
            format!("a {} task cannot use this checker", task.category)
        });
    }

    /// The gold answer and prompt must be the ones computed from the task's parameters.
    fn parameters(&mut self) {
        let task = self.task;
        if let Some(problem) = task.spec::<Problem>() {
            let validation = problem.validate();
            self.require(validation.is_ok(), || {
                validation.clone().err().unwrap_or_default()
            });
            let recomputed = problem.gold();
            let same_gold = same_value(&recomputed, &task.checker);
            self.require(same_gold, || {
                format!(
                    "the gold answer {} differs from {} computed from the task's parameters",
                    gold_text(&task.checker),
                    gold_text(&recomputed)
                )
            });
            let second = problem.cross_check();
            self.require(same_value(&second, &task.checker), || {
                format!(
                    "the gold answer {} differs from {} computed by the family's second, \
                     independent method",
                    gold_text(&task.checker),
                    gold_text(&second)
                )
            });
            self.require(problem.cross_check_unique(), || {
                "the second method finds several starting values sharing the longest sequence"
                    .to_owned()
            });
            if let Some(instance) = &task.instance {
                self.require(instance.parameters == problem.parameters(), || {
                    "the recorded instance parameters are not the task's parameters".to_owned()
                });
            }
            let prompt = problem.prompt();
            self.require(self.user_prompt() == Some(prompt.as_str()), || {
                "the prompt is not the one rendered from the task's parameters".to_owned()
            });
        }
        self.require(
            self.user_prompt().is_some_and(|p| p.contains("ANSWER:")),
            || "the prompt does not ask for an `ANSWER:` line".to_owned(),
        );
    }

    /// The checker accepts the gold answer in two forms and rejects wrong ones.
    async fn literal(&mut self) {
        let task = self.task;
        let (plain, boxed, wrong, extra) = match &task.checker {
            Checker::Integer(gold) => {
                if task.expect_positive {
                    self.require(*gold > 0, || {
                        format!("the gold answer {gold} must be positive (the puzzle has no solution as posed)")
                    });
                }
                (
                    gold.to_string(),
                    grouped(*gold),
                    (gold + 1).to_string(),
                    None,
                )
            }
            Checker::Fraction {
                num,
                den,
                allow_unreduced,
            } => {
                self.require(*den > 0 && gcd(*num, *den) == 1, || {
                    format!(
                        "the gold fraction {num}/{den} is not reduced with a positive denominator"
                    )
                });
                if task.expect_positive {
                    self.require(*num > 0, || {
                        "the gold probability must be positive".to_owned()
                    });
                }
                (
                    format!("{num}/{den}"),
                    format!("\\frac{{{num}}}{{{den}}}"),
                    format!("{}/{den}", num + 1),
                    Some((
                        format!("{}/{}", num * 2, den * 2),
                        unreduced_outcome(*allow_unreduced),
                    )),
                )
            }
            Checker::ExactString(gold) => {
                self.require(!gold.trim().is_empty(), || {
                    "the gold answer is empty".to_owned()
                });
                (gold.clone(), gold.clone(), format!("{gold}x"), None)
            }
            _ => return,
        };
        self.expect(
            &format!("the gold answer as `ANSWER: {plain}`"),
            Reply::stopped(format!("Working it out.\nANSWER: {plain}")),
            OutcomeKind::Pass,
        )
        .await;
        self.expect(
            &format!("the gold answer as `\\boxed{{{boxed}}}`"),
            Reply::stopped(format!("So the result is $\\boxed{{{boxed}}}$.")),
            OutcomeKind::Pass,
        )
        .await;
        self.expect(
            &format!("the wrong answer {wrong}"),
            Reply::stopped(format!("ANSWER: {wrong}")),
            OutcomeKind::Wrong,
        )
        .await;
        if let Some((unreduced, expected)) = extra {
            self.expect(
                &format!("the unreduced form {unreduced}"),
                Reply::stopped(format!("ANSWER: {unreduced}")),
                expected,
            )
            .await;
        }
        self.expect(
            "the gold answer after an earlier wrong one (the last answer counts)",
            Reply::stopped(format!("ANSWER: {wrong}\nOn reflection:\nANSWER: {plain}")),
            OutcomeKind::Pass,
        )
        .await;
        let mut cut = Reply::stopped(format!("ANSWER: {plain}"));
        cut.finish_reason = Some("length".to_owned());
        self.expect(
            "the gold answer with finish_reason length",
            cut,
            OutcomeKind::CutOff,
        )
        .await;
        let mut reasoning_only = Reply::stopped("I am not sure.");
        reasoning_only.reasoning = Some(format!("ANSWER: {plain}"));
        self.expect(
            "a gold answer only in the reasoning",
            reasoning_only,
            OutcomeKind::NoAnswer,
        )
        .await;
    }

    async fn tool_call(&mut self) {
        let task = self.task;
        let Checker::ToolCall { name, check } = &task.checker else {
            return;
        };
        self.require(task.tools.iter().any(|t| &t.name == name), || {
            format!("the expected function {name} is not among the tools offered")
        });
        let arguments = example_arguments(check);
        let call = |function: &str, args: String| Reply {
            tool_calls: vec![ReplyToolCall::new(function, args)],
            finish_reason: Some("tool_calls".to_owned()),
            ..Reply::default()
        };
        self.expect(
            "the expected call",
            call(name, arguments.to_string()),
            OutcomeKind::Pass,
        )
        .await;
        if let Some(first) = check.fields.first() {
            let mut wrong = arguments.clone();
            let bad = match &first.rule {
                ArgRule::Evaluates { example, .. } => format!("({example})+1"),
                ArgRule::Exact(v) | ArgRule::CaseInsensitive(v) => format!("{v}x"),
            };
            wrong[first.name.as_str()] = serde_json::Value::String(bad);
            self.expect(
                &format!("a wrong `{}` argument", first.name),
                call(name, wrong.to_string()),
                OutcomeKind::Wrong,
            )
            .await;
        }
        let other = task
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .find(|n| n != name)
            .unwrap_or("not_a_tool");
        self.expect(
            &format!("a call of the wrong function {other}"),
            call(other, arguments.to_string()),
            OutcomeKind::Wrong,
        )
        .await;
        let mut twice = call(name, arguments.to_string());
        twice
            .tool_calls
            .push(ReplyToolCall::new(name.clone(), arguments.to_string()));
        self.expect("two expected calls", twice, OutcomeKind::ExtraCalls)
            .await;
        self.expect(
            "no call",
            Reply::stopped("I would search for that."),
            OutcomeKind::Wrong,
        )
        .await;
        let text = arguments.to_string();
        self.expect(
            "arguments that are not valid JSON",
            call(name, text[..text.len().saturating_sub(1)].to_owned()),
            OutcomeKind::Wrong,
        )
        .await;
        let mut cut = call(name, arguments.to_string());
        cut.finish_reason = Some("length".to_owned());
        self.expect("a call with finish_reason length", cut, OutcomeKind::CutOff)
            .await;
    }

    async fn no_call(&mut self, must_mention: &str) {
        let answer = format!("The answer is {must_mention}.");
        self.expect(
            "a clean answer naming the word",
            Reply::stopped(answer.clone()),
            OutcomeKind::Pass,
        )
        .await;
        let first_tool = self
            .task
            .tools
            .first()
            .map_or("calculate", |t| t.name.as_str())
            .to_owned();
        let mut called = Reply::stopped(answer.clone());
        called.tool_calls.push(ReplyToolCall::new(first_tool, "{}"));
        self.expect("an answer with a tool call", called, OutcomeKind::Wrong)
            .await;
        self.expect(
            "call-like text in the content",
            Reply::stopped(format!(
                "{answer}\n<tool_call>{{\"name\": \"x\", \"arguments\": {{}}}}</tool_call>"
            )),
            OutcomeKind::Wrong,
        )
        .await;
        self.expect(
            "a JSON call object in the content",
            Reply::stopped(format!("{answer} {{\"name\": \"x\", \"arguments\": {{}}}}")),
            OutcomeKind::Wrong,
        )
        .await;
        self.expect(
            "an answer without the word",
            Reply::stopped("I do not know."),
            OutcomeKind::Wrong,
        )
        .await;
    }

    /// The code checks that need no sandbox.
    async fn code_offline(&mut self) {
        let Checker::Code(check) = &self.task.checker else {
            return;
        };
        self.require(!check.cases.is_empty(), || {
            "the task has no hidden cases".to_owned()
        });
        self.require(!check.time_floor.is_zero(), || {
            "the time floor is zero".to_owned()
        });
        match &check.reference {
            None => self.fail("the task has no reference solution"),
            Some(reference) => {
                let fenced = format!("Here it is.\n```python\n{reference}\n```\n");
                let extracted = vernier_grader::extract_code(&fenced);
                self.require(
                    extracted.as_deref().map(str::trim) == Some(reference.trim()),
                    || {
                        "the reference does not survive code extraction from a fenced block"
                            .to_owned()
                    },
                );
                let mut cut = Reply::stopped(fenced);
                cut.finish_reason = Some("length".to_owned());
                self.expect(
                    "the reference with finish_reason length",
                    cut,
                    OutcomeKind::CutOff,
                )
                .await;
            }
        }
        self.expect(
            "a reply without a code block",
            Reply::stopped("I would use a loop."),
            OutcomeKind::NoAnswer,
        )
        .await;
        let mut reasoning_only = Reply::stopped("Done.");
        reasoning_only.reasoning = check
            .reference
            .as_ref()
            .map(|r| format!("```python\n{r}\n```"));
        self.expect(
            "code only in the reasoning",
            reasoning_only,
            OutcomeKind::NoAnswer,
        )
        .await;
    }
}

struct SandboxResult {
    failures: Vec<SelfCheckFailure>,
    n_checks: usize,
    reference_time: Option<Duration>,
    time_limit: Option<Duration>,
}

/// Runs the reference (measuring its time) and every control in the sandbox.
async fn sandbox_checks(task: &Task, check: &CodeCheck, grader: &Grader) -> SandboxResult {
    let mut result = SandboxResult {
        failures: Vec::new(),
        n_checks: 0,
        reference_time: None,
        time_limit: None,
    };
    let fail = |result: &mut SandboxResult, reason: String| {
        result.failures.push(SelfCheckFailure {
            task_id: task.id.clone(),
            reason,
        });
    };
    let Some(reference) = &check.reference else {
        return result;
    };
    let mut calibrating = check.clone();
    calibrating.limits.wall_time = CALIBRATION_LIMIT.max(check.time_floor);
    let grade = grader
        .grade(&calibrating.submission(reference.clone()))
        .await;
    result.n_checks += 1;
    if !grade.reason.is_passed() {
        let cases: Vec<String> = grade
            .cases
            .iter()
            .filter(|c| !c.passed)
            .take(5)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        fail(
            &mut result,
            format!(
                "the reference solution does not pass its hidden tests: {} [{}]{}",
                grade.reason.detail(),
                cases.join("; "),
                excerpt(&grade.stderr_excerpt)
            ),
        );
        return result;
    }
    let limit = check.time_floor.max(grade.wall_time * TIME_LIMIT_FACTOR);
    result.reference_time = Some(grade.wall_time);
    result.time_limit = Some(limit);
    let mut calibrated = check.clone();
    calibrated.limits.wall_time = limit;
    let calibrated = &calibrated;
    let control_grades = join_all(check.controls.iter().map(|control| async move {
        // A control that must fail other than by the clock ends by itself (the memory limit,
        // a refused connection, a failed case) long before its floor; on a loaded machine the
        // answers' calibrated limit could turn that end into a timeout.
        let mut own = calibrated.clone();
        if !matches!(
            control.must_fail_with,
            ExpectedFailure::Timeout | ExpectedFailure::AnyFailure
        ) {
            own.limits.wall_time = own.limits.wall_time.max(CONTROL_WALL_FLOOR);
        }
        (
            control,
            grader.grade(&own.submission(control.code.clone())).await,
        )
    }))
    .await;
    for (control, grade) in control_grades {
        result.n_checks += 1;
        let kind = if control.integrity {
            "integrity control"
        } else {
            "negative control"
        };
        if let GradeReason::Infra(why) = &grade.reason {
            fail(
                &mut result,
                format!("{kind} {} could not be graded (infra: {why})", control.name),
            );
        } else if grade.reason.is_passed() {
            fail(
                &mut result,
                format!(
                    "{kind} {} passed the hidden tests; they must catch it",
                    control.name
                ),
            );
        } else if !control.must_fail_with.matches(&grade.reason) {
            fail(
                &mut result,
                format!(
                    "{kind} {} failed with {} instead of {:?}",
                    control.name,
                    grade.reason.detail(),
                    control.must_fail_with
                ),
            );
        }
    }
    result
}

fn excerpt(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        return String::new();
    }
    let tail: String = trimmed
        .chars()
        .rev()
        .take(300)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("; stderr: {tail}")
}

/// What a fraction checker must give for an unreduced form of the gold answer.
fn unreduced_outcome(allow_unreduced: bool) -> OutcomeKind {
    if allow_unreduced {
        OutcomeKind::Pass
    } else {
        OutcomeKind::Wrong
    }
}

fn gold_text(checker: &Checker) -> String {
    match checker {
        Checker::Integer(value) => value.to_string(),
        Checker::Fraction { num, den, .. } => format!("{num}/{den}"),
        Checker::ExactString(value) => format!("{value:?}"),
        _ => "(not a literal)".to_owned(),
    }
}

/// `2131` → `2,131` (the second surface form of an integer).
fn grouped(value: i128) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::new();
    if value < 0 {
        out.push('-');
    }
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(future)
    }

    #[test]
    fn code_checks_that_need_no_sandbox_pass_on_the_bundled_code_tasks() {
        let suite = Suite::bundled();
        for task in suite.tasks.iter().filter(|t| t.category == Category::CODE) {
            let mut probe = Probe {
                task,
                failures: Vec::new(),
                n_checks: 0,
            };
            probe.common();
            block_on(probe.code_offline());
            assert!(probe.failures.is_empty(), "{:?}", probe.failures);
            assert!(probe.n_checks >= 6, "{}", task.id);
        }
    }

    #[test]
    fn integers_group_in_threes() {
        assert_eq!(grouped(2131), "2,131");
        assert_eq!(grouped(-1_000_000), "-1,000,000");
        assert_eq!(grouped(999), "999");
    }
}
