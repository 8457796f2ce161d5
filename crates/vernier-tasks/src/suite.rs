//! A suite: a named list of tasks. How suites are made is elsewhere: the bundled one and the
//! probe in `bundled.rs`, a user's file in `suite_file.rs`, the generated ones by their
//! families (`context_suite`, `vision_suite`, ...).

use crate::draw::Draw;
use crate::task::{Category, Task};

/// A named list of tasks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Suite {
    /// Suite name (`hardsuite` for the bundled one).
    pub name: String,
    /// The tasks, in order.
    pub tasks: Vec<Task>,
}

impl Suite {
    /// A suite from its parts.
    pub fn new(name: impl Into<String>, tasks: Vec<Task>) -> Self {
        Self {
            name: name.into(),
            tasks,
        }
    }

    /// The draw every task of the suite comes from, when they all share one.
    pub fn draw(&self) -> Option<Draw> {
        let mut draws = self.tasks.iter().map(|task| {
            task.instance.as_ref().map(|instance| Draw {
                level: instance.level,
                seed: instance.seed,
            })
        });
        let first = draws.next()??;
        draws.all(|d| d == Some(first)).then_some(first)
    }

    /// The task with this id.
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|task| task.id == id)
    }

    /// How many tasks of a category the suite holds.
    pub fn count(&self, category: Category) -> usize {
        self.tasks
            .iter()
            .filter(|task| task.category == category)
            .count()
    }
}
