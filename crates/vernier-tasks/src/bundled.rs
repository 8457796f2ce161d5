//! The bundled suite (28 tasks drawn at a level and seed) and the probe.

use crate::budgets::Budgets;
#[cfg(feature = "grader")]
use crate::code::{CaseDraw, code_task_specs, integrity_controls};
#[cfg(feature = "grader")]
use crate::code_check::{CodeCheck, CodeControl};
use crate::draw::{Draw, Instance};
use crate::family::draw_problems;
use crate::suite::Suite;
#[cfg(feature = "grader")]
use crate::task::Checker;
use crate::task::{Category, Task};
use crate::tools::bundled_tool_tasks;

/// Target prompt lengths of the probe's context tasks, in the server's tokens.
pub const PROBE_CONTEXT_LENGTHS: [u32; 2] = [1_024, 4_096];

/// Needle depths of the probe's context tasks, in percent.
pub const PROBE_CONTEXT_DEPTHS: [u8; 3] = [0, 50, 100];

impl Suite {
    /// The bundled suite with the default budgets: 14 math, 10 code and 4 tool tasks, with
    /// every gold answer computed now from the parameters rendered into its prompt.
    pub fn bundled() -> Self {
        Self::bundled_with(&Budgets::default())
    }

    /// The bundled suite with these budgets.
    pub fn bundled_with(budgets: &Budgets) -> Self {
        Self::drawn(Draw::BUNDLED, budgets)
    }

    /// The bundled suite's families drawn at `draw`'s level and seed: every math parameter
    /// and every generated hidden case comes from the pair, and each task records its
    /// [`Instance`]. `Draw::BUNDLED` (level 2, seed 0) is exactly [`Suite::bundled_with`].
    pub fn drawn(draw: Draw, budgets: &Budgets) -> Self {
        let mut tasks: Vec<Task> = draw_problems(draw)
            .into_iter()
            .map(|(id, problem, redraws)| {
                let mut instance = Instance::new(id, draw, problem.parameters());
                instance.redraws = redraws;
                let mut task =
                    Task::from_problem(id, problem, budgets.for_category(Category::MATH));
                task.instance = Some(instance);
                task
            })
            .collect();
        #[cfg(feature = "grader")]
        push_code_tasks(&mut tasks, budgets, draw);
        for mut task in bundled_tool_tasks(budgets.for_category(Category::TOOLS)) {
            task.instance = Some(Instance::new(
                task.id.clone(),
                draw,
                serde_json::Value::Object(serde_json::Map::new()),
            ));
            tasks.push(task);
        }
        Self::new("hardsuite", tasks)
    }

    /// The probe drawn from `seed`, in the spirit of a quick look at what a server can do: the
    /// vision and video suites, the context suite at [`PROBE_CONTEXT_LENGTHS`] and
    /// [`PROBE_CONTEXT_DEPTHS`] (one multi-needle task per length), and the bundled tool tasks.
    pub fn probe(seed: u64, budgets: &Budgets) -> Self {
        let plan = crate::context::ContextPlan {
            lengths: PROBE_CONTEXT_LENGTHS.to_vec(),
            depths: PROBE_CONTEXT_DEPTHS.to_vec(),
            seed,
            ..crate::context::ContextPlan::default()
        };
        let mut tasks =
            crate::vision::vision_suite(seed, budgets.for_category(Category::VISION)).tasks;
        tasks.extend(crate::video::video_suite(seed, budgets.for_category(Category::VIDEO)).tasks);
        tasks.extend(
            crate::context::context_suite(&plan, budgets.for_category(Category::CONTEXT)).tasks,
        );
        tasks.extend(bundled_tool_tasks(budgets.for_category(Category::TOOLS)));
        Self::new("probe", tasks)
    }
}

/// The bundled code tasks, with their controls, at the code budget.
#[cfg(feature = "grader")]
fn push_code_tasks(tasks: &mut Vec<Task>, budgets: &Budgets, draw: Draw) {
    let integrity: Vec<CodeControl> = integrity_controls()
        .into_iter()
        .map(|control| CodeControl {
            name: control.name.to_owned(),
            code: control.code.to_owned(),
            must_fail_with: control.must_fail_with,
            integrity: true,
        })
        .collect();
    for spec in code_task_specs(draw) {
        let parameters = CaseDraw { draw }.parameters(&spec.cases);
        let mut check = CodeCheck::new(spec.harness, spec.cases, spec.time_floor);
        check.guards = spec.guards;
        check.reference = Some(spec.reference.to_owned());
        check.controls = spec
            .negative_controls
            .into_iter()
            .map(|control| CodeControl {
                name: control.name.to_owned(),
                code: control.code.to_owned(),
                must_fail_with: control.must_fail_with,
                integrity: false,
            })
            .collect();
        if spec.id == "merge-intervals" {
            check.controls.extend(integrity.iter().cloned());
        }
        let mut task = Task::new(
            spec.id,
            Category::CODE,
            spec.prompt,
            budgets.for_category(Category::CODE),
            Checker::Code(check),
        );
        task.instance = Some(Instance::new(spec.id, draw, parameters));
        tasks.push(task);
    }
}
