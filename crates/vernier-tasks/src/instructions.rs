//! Instruction following: tasks whose every instruction a program checks (IFEval's idea):
//! counts, lengths, words that must or must not appear, a forbidden character, sections, a
//! title, letter case, a JSON-only reply, a Markdown table, a closing phrase. Drawn fresh per
//! seed at four levels (the number of instructions a task sets); each proved before a model
//! sees it: a reply built to meet every instruction passes, and for each instruction a reply
//! built to break that one alone fails on it and on nothing else.

mod constraint;

use serde::{Deserialize, Serialize};
use vernier_stats::SplitMix64;

pub use constraint::Constraint;

use crate::kind::Kind;
use crate::task::{Category, Checker, Outcome, OutcomeKind, Reply, Task};

impl Category {
    /// Verifiable instructions: counts, lengths, words, characters, format.
    pub const INSTRUCTIONS: Self = Self::new("instructions");
}

/// Default completion-token budget of an instruction task.
pub const DEFAULT_INSTRUCTIONS_BUDGET: u32 = 1024;
/// Tasks drawn per level.
pub const INSTRUCTIONS_PER_LEVEL: u32 = 3;
/// The levels: a task of level `L` sets `L` instructions.
pub const INSTRUCTIONS_LEVELS: [u32; 4] = [1, 2, 3, 4];

pub(crate) const KIND: Kind = Kind {
    category: Category::INSTRUCTIONS,
    description: "verifiable instructions (counts, words, format), checked by code",
    default_budget: DEFAULT_INSTRUCTIONS_BUDGET,
    fits: |checker| matches!(checker, Checker::Instructions(_)),
    prove: Some(prove_instructions_task),
};

/// What an instruction task is drawn from: its level, topic and instructions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InstructionsSpec {
    /// The level (the number of instructions).
    pub level: u32,
    /// The topic the note is about.
    pub topic: String,
    /// The instructions, in the prompt's order.
    pub constraints: Vec<Constraint>,
}

/// A topic: its name and things to list.
struct Topic {
    name: &'static str,
    items: [&'static str; 6],
}

const TOPICS: [Topic; 5] = [
    Topic {
        name: "fruit",
        items: ["apple", "pear", "plum", "cherry", "quince", "grape"],
    },
    Topic {
        name: "rivers",
        items: ["Danube", "Rhine", "Loire", "Elbe", "Tagus", "Oder"],
    },
    Topic {
        name: "tools in a workshop",
        items: ["hammer", "chisel", "saw", "plane", "file", "clamp"],
    },
    Topic {
        name: "birds",
        items: ["robin", "wren", "heron", "swift", "finch", "owl"],
    },
    Topic {
        name: "trees",
        items: ["oak", "birch", "maple", "cedar", "alder", "rowan"],
    },
];

/// Words a note is asked to include; none stands in anything else a draft writes.
const INCLUDED: [&str; 5] = ["harvest", "season", "market", "garden", "morning"];
/// Words a note is asked to avoid; none stands in anything a draft writes.
const EXCLUDED: [&str; 4] = ["very", "really", "basically", "stuff"];
/// Characters a note is asked to avoid; none stands in anything a draft writes.
const FORBIDDEN: [char; 4] = [',', ';', '!', '?'];
/// Closing phrases (no forbidden character in any).
const ENDINGS: [&str; 3] = [
    "That is all for now.",
    "Thank you for reading.",
    "Let me know what you think.",
];
/// A filler sentence: ten plain words.
const FILLER: &str = "Each line adds a few plain words to this short note.";
/// Keys a JSON reply is asked for.
const JSON_KEYS: [[&str; 2]; 2] = [["name", "reason"], ["title", "summary"]];
/// Columns a table is asked for.
const COLUMNS: [[&str; 3]; 2] = [["Item", "Colour", "Use"], ["Name", "Place", "Note"]];

/// Everything a reply is built from; a violation changes one field.
#[derive(Debug, Clone, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each flag is one instruction's part of the reply, and a violation flips one"
)]
struct Draft {
    topic: String,
    items: Vec<String>,
    title: bool,
    sections: usize,
    bullets: usize,
    include: Option<String>,
    exclude: Option<String>,
    forbidden: Option<char>,
    fillers: usize,
    case: Option<bool>,
    case_break: bool,
    ending: Option<String>,
    after_ending: bool,
    json: Option<Vec<String>>,
    json_trailer: bool,
    table: Option<Vec<String>>,
    table_short: bool,
}

impl Draft {
    /// The draft that meets every constraint.
    fn meeting(spec: &InstructionsSpec, items: &[&str]) -> Self {
        let mut draft = Self {
            topic: spec.topic.clone(),
            items: items.iter().map(|s| (*s).to_owned()).collect(),
            ..Self::default()
        };
        for constraint in &spec.constraints {
            match constraint {
                Constraint::BulletCount { n } => draft.bullets = *n,
                Constraint::Include { word } => draft.include = Some(word.clone()),
                Constraint::Sections { n } => draft.sections = *n,
                Constraint::Title => draft.title = true,
                Constraint::AllCapitals => draft.case = Some(true),
                Constraint::AllLowercase => draft.case = Some(false),
                Constraint::JsonOnly { keys } => draft.json = Some(keys.clone()),
                Constraint::Table { columns } => draft.table = Some(columns.clone()),
                Constraint::EndsWith { phrase } => draft.ending = Some(phrase.clone()),
                Constraint::WordsAtMost { .. }
                | Constraint::WordsAtLeast { .. }
                | Constraint::Exclude { .. }
                | Constraint::NoCharacter { .. } => {}
            }
        }
        if let Some(Constraint::WordsAtLeast { n }) = spec
            .constraints
            .iter()
            .find(|c| matches!(c, Constraint::WordsAtLeast { .. }))
        {
            // Enough fillers for the least, with words to spare for the one violation of
            // another instruction that takes some away: the title dropped (its own words).
            let base = word_count(&draft.render());
            let title = if draft.title {
                word_count(&format!("<<A note on {}>>", draft.topic))
            } else {
                0
            };
            draft.fillers = (n + title + 1).saturating_sub(base).div_ceil(10);
        }
        draft
    }

    /// The draft that breaks `constraint` alone.
    fn breaking(mut self, constraint: &Constraint) -> Self {
        match constraint {
            Constraint::BulletCount { .. } => self.bullets += 1,
            Constraint::WordsAtMost { n } => {
                let words = word_count(&self.render());
                self.fillers += (n + 1).saturating_sub(words).div_ceil(10);
            }
            Constraint::WordsAtLeast { .. } => self.fillers = 0,
            Constraint::Include { .. } => self.include = None,
            Constraint::Exclude { word } => self.exclude = Some(word.clone()),
            Constraint::NoCharacter { character } => self.forbidden = Some(*character),
            Constraint::Sections { .. } => self.sections += 1,
            Constraint::Title => self.title = false,
            Constraint::AllCapitals | Constraint::AllLowercase => self.case_break = true,
            Constraint::JsonOnly { .. } => self.json_trailer = true,
            Constraint::Table { .. } => self.table_short = true,
            Constraint::EndsWith { .. } => self.after_ending = true,
        }
        self
    }

    fn item(&self, index: usize) -> String {
        let item = &self.items[index % self.items.len()];
        if index < self.items.len() {
            item.clone()
        } else {
            format!("{item} {}", index / self.items.len() + 1)
        }
    }

    fn cased(&self, text: &str) -> String {
        match self.case {
            Some(true) => text.to_uppercase(),
            Some(false) => text.to_lowercase(),
            None => text.to_owned(),
        }
    }

    fn render(&self) -> String {
        let mut lines = if let Some(keys) = &self.json {
            vec![self.render_json(keys)]
        } else if let Some(columns) = &self.table {
            self.render_table(columns)
        } else {
            self.render_prose()
        };
        if let Some(word) = &self.exclude {
            lines.push(self.cased(&format!("It is {word} good.")));
        }
        // A JSON reply carries the character inside a value (it must stay JSON alone).
        if let (Some(character), None) = (self.forbidden, &self.json) {
            lines.push(self.cased(&format!("Note this{character} it matters.")));
        }
        for _ in 0..self.fillers {
            lines.push(self.cased(FILLER));
        }
        if self.case_break {
            lines.push(match self.case {
                Some(true) => "mixed case line".to_owned(),
                _ => "Mixed Case Line".to_owned(),
            });
        }
        if let Some(ending) = &self.ending {
            lines.push(ending.clone());
        }
        if self.after_ending {
            lines.push(self.cased("Nothing more follows."));
        }
        if self.json_trailer {
            lines.push("That is the answer.".to_owned());
        }
        lines.join("\n")
    }

    fn opening(&self) -> String {
        let word = self.include.as_deref().unwrap_or("omitted");
        format!(
            "Here is a short note about {} with the word {word}.",
            self.topic
        )
    }

    fn render_prose(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.title {
            lines.push(self.cased(&format!("<<A note on {}>>", self.topic)));
            lines.push(String::new());
        }
        let parts = self.sections.max(1);
        let mut next = 0;
        for part in 0..parts {
            if self.sections > 0 {
                lines.push(self.cased(&format!("## Part {}", part + 1)));
            }
            lines.push(self.cased(&if part == 0 {
                self.opening()
            } else {
                "More follows here.".to_owned()
            }));
            let share = self.bullets / parts + usize::from(part < self.bullets % parts);
            for _ in 0..share {
                lines.push(self.cased(&format!("- {}", self.item(next))));
                next += 1;
            }
        }
        lines
    }

    fn render_json(&self, keys: &[String]) -> String {
        let word = self.include.as_deref().unwrap_or("omitted");
        let mut object = serde_json::Map::new();
        for (index, key) in keys.iter().enumerate() {
            let value = if index == 0 {
                self.item(0)
            } else {
                let mark = self.forbidden.map(String::from).unwrap_or_default();
                format!("chosen for the word {word}{mark}")
            };
            object.insert(key.clone(), serde_json::Value::String(value));
        }
        serde_json::Value::Object(object).to_string()
    }

    fn render_table(&self, columns: &[String]) -> Vec<String> {
        let shown = if self.table_short {
            &columns[..columns.len() - 1]
        } else {
            columns
        };
        let word = self.include.as_deref().unwrap_or("omitted");
        let mut lines = vec![
            format!("| {} |", shown.join(" | ")),
            format!("|{}", "---|".repeat(shown.len())),
        ];
        for row in 0..2 {
            let mut cells = vec![self.item(row)];
            cells.push(if row == 0 {
                word.to_owned()
            } else {
                "plain".to_owned()
            });
            cells.extend((2..shown.len()).map(|_| "good".to_owned()));
            lines.push(format!("| {} |", cells[..shown.len()].join(" | ")));
        }
        lines
    }
}

fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .count()
}

/// The constraint kinds a prose note can carry together.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Bullets,
    Length,
    Include,
    Exclude,
    Character,
    Sections,
    Title,
    Case,
    Ending,
}

const PROSE_SLOTS: [Slot; 9] = [
    Slot::Bullets,
    Slot::Length,
    Slot::Include,
    Slot::Exclude,
    Slot::Character,
    Slot::Sections,
    Slot::Title,
    Slot::Case,
    Slot::Ending,
];

/// The shape a task is drawn in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Prose,
    Json,
    Table,
}

fn draw_constraint(slot: Slot, rng: &mut SplitMix64, case: &mut Option<bool>) -> Constraint {
    match slot {
        Slot::Bullets => Constraint::BulletCount {
            n: usize::try_from(rng.range(1, 5)).unwrap_or(3),
        },
        // The bound is set once the rest of the draft is known.
        Slot::Length => {
            if rng.chance(1, 2) {
                Constraint::WordsAtMost { n: 0 }
            } else {
                Constraint::WordsAtLeast { n: 0 }
            }
        }
        Slot::Include => Constraint::Include {
            word: (*rng.pick(&INCLUDED)).to_owned(),
        },
        Slot::Exclude => Constraint::Exclude {
            word: (*rng.pick(&EXCLUDED)).to_owned(),
        },
        Slot::Character => Constraint::NoCharacter {
            character: *rng.pick(&FORBIDDEN),
        },
        Slot::Sections => Constraint::Sections {
            n: usize::try_from(rng.range(2, 3)).unwrap_or(2),
        },
        Slot::Title => Constraint::Title,
        Slot::Case => {
            let upper = rng.chance(1, 2);
            *case = Some(upper);
            if upper {
                Constraint::AllCapitals
            } else {
                Constraint::AllLowercase
            }
        }
        Slot::Ending => Constraint::EndsWith {
            phrase: (*rng.pick(&ENDINGS)).to_owned(),
        },
    }
}

/// One task's instructions at `level`, drawn from `rng`: a prose note (most), a JSON-only
/// reply or a table, with as many instructions as the level.
fn draw_spec(level: u32, rng: &mut SplitMix64) -> (InstructionsSpec, Vec<&'static str>) {
    let topic = rng.pick(&TOPICS);
    let level_n = usize::try_from(level).unwrap_or(1).max(1);
    let shape = match rng.below(5) {
        0 if level_n <= 3 => Shape::Json,
        1 => Shape::Table,
        _ => Shape::Prose,
    };
    let mut case = None;
    let mut constraints = Vec::new();
    match shape {
        Shape::Json => {
            let keys = rng.pick(&JSON_KEYS);
            constraints.push(Constraint::JsonOnly {
                keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            });
            let mut extra = [Slot::Include, Slot::Character];
            rng.shuffle(&mut extra);
            for slot in extra.iter().take(level_n - 1) {
                constraints.push(draw_constraint(*slot, rng, &mut case));
            }
        }
        Shape::Table => {
            let columns = rng.pick(&COLUMNS);
            constraints.push(Constraint::Table {
                columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            });
            let mut extra = [Slot::Include, Slot::Character, Slot::Ending];
            rng.shuffle(&mut extra);
            for slot in extra.iter().take(level_n - 1) {
                constraints.push(draw_constraint(*slot, rng, &mut case));
            }
        }
        Shape::Prose => {
            let mut slots = PROSE_SLOTS;
            rng.shuffle(&mut slots);
            for slot in slots.iter().take(level_n) {
                constraints.push(draw_constraint(*slot, rng, &mut case));
            }
        }
    }
    // A JSON reply's keys and values contain no forbidden character but ','; a table's cells
    // hold none but '|': draw the character again where it would clash.
    for constraint in &mut constraints {
        if let Constraint::NoCharacter { character } = constraint
            && shape == Shape::Json
            && *character == ','
        {
            *character = ';';
        }
        if let (Constraint::EndsWith { phrase }, Some(upper)) = (&mut *constraint, case) {
            *phrase = if upper {
                phrase.to_uppercase()
            } else {
                phrase.to_lowercase()
            };
        }
    }
    let mut spec = InstructionsSpec {
        level,
        topic: topic.name.to_owned(),
        constraints,
    };
    // A length bound set against the note the other instructions make: at most that many
    // words and 8 to 15 more, or at least 10 to 25 more than the note without fillers.
    let base = word_count(&Draft::meeting(&spec, &topic.items).render());
    let margin = usize::try_from(rng.range(8, 15)).unwrap_or(8);
    let more = usize::try_from(rng.range(10, 25)).unwrap_or(10);
    for constraint in &mut spec.constraints {
        match constraint {
            Constraint::WordsAtMost { n } => *n = base + margin,
            Constraint::WordsAtLeast { n } => *n = base + more,
            _ => {}
        }
    }
    (spec, topic.items.to_vec())
}

fn items_of(topic: &str) -> Vec<&'static str> {
    TOPICS
        .iter()
        .find(|t| t.name == topic)
        .map_or_else(|| vec!["item"], |t| t.items.to_vec())
}

/// The reply a scripted server gives: one meeting every instruction (`breaking` `None`), or
/// one breaking the instruction at that index alone.
pub fn instructions_reply(spec: &InstructionsSpec, breaking: Option<usize>) -> String {
    let draft = Draft::meeting(spec, &items_of(&spec.topic));
    match breaking.and_then(|index| spec.constraints.get(index)) {
        Some(constraint) => draft.breaking(constraint).render(),
        None => draft.render(),
    }
}

/// The prompt of a spec.
fn prompt_of(id: &str, spec: &InstructionsSpec) -> String {
    let ask = if spec
        .constraints
        .iter()
        .any(|c| matches!(c, Constraint::JsonOnly { .. }))
    {
        format!(
            "Name one of the {} you know and say why you chose it.",
            spec.topic
        )
    } else if spec
        .constraints
        .iter()
        .any(|c| matches!(c, Constraint::Table { .. }))
    {
        format!("Describe two {} in a small table.", spec.topic)
    } else {
        format!("Write a short note about {}.", spec.topic)
    };
    let rules: Vec<String> = spec
        .constraints
        .iter()
        .map(Constraint::instruction)
        .collect();
    format!("Request {id}. {ask} {}", rules.join(" "))
}

/// An instruction task from its spec.
pub fn instructions_task(
    id: impl Into<String>,
    spec: InstructionsSpec,
    budget_tokens: u32,
) -> Task {
    let id = id.into();
    let task = Task::new(
        id.clone(),
        Category::INSTRUCTIONS,
        prompt_of(&id, &spec),
        budget_tokens,
        Checker::Instructions(spec.constraints.clone()),
    );
    task.with_spec(spec)
}

/// The suite of `seed`: [`INSTRUCTIONS_PER_LEVEL`] tasks at each level, ids
/// `instructions-l{level}-{n}`.
pub fn instructions_suite(seed: u64, budget_tokens: u32) -> crate::suite::Suite {
    let mut tasks = Vec::new();
    for level in INSTRUCTIONS_LEVELS {
        for sample in 0..INSTRUCTIONS_PER_LEVEL {
            let mut mixer = SplitMix64::new(seed ^ 0x1F5E_ED5E_ED00_0000);
            for _ in 0..=(level * 16 + sample) {
                mixer.next_u64();
            }
            let mut rng = SplitMix64::new(mixer.next_u64());
            let (spec, _) = draw_spec(level, &mut rng);
            tasks.push(instructions_task(
                format!("instructions-l{level}-{}", sample + 1),
                spec,
                budget_tokens,
            ));
        }
    }
    crate::suite::Suite::new("instructions", tasks)
}

/// Each instruction of `constraints` against the reply: strictly and loosely.
pub fn instruction_results(
    constraints: &[Constraint],
    content: &str,
) -> Vec<(&'static str, bool, bool)> {
    constraints
        .iter()
        .map(|c| (c.name(), c.holds(content), c.holds_loosely(content)))
        .collect()
}

/// The grade of a reply to an instruction task: `cut_off` when the budget stopped it,
/// `no_answer` when it is empty, `pass` when every instruction holds as written, else
/// `wrong`; the detail lists each instruction strictly and loosely (`strict bullet_count:ok
/// include_word:no | loose bullet_count:ok include_word:ok`).
pub(crate) fn check_instructions(constraints: &[Constraint], reply: &Reply) -> Outcome {
    if reply.finish_reason.as_deref() == Some("length") {
        return Outcome::cut_off(None);
    }
    if reply.content.trim().is_empty() {
        return Outcome::new(OutcomeKind::NoAnswer, "empty reply");
    }
    let results = instruction_results(constraints, &reply.content);
    let word = |ok: bool| if ok { "ok" } else { "no" };
    let strict: Vec<String> = results
        .iter()
        .map(|(name, strict, _)| format!("{name}:{}", word(*strict)))
        .collect();
    let loose: Vec<String> = results
        .iter()
        .map(|(name, _, loose)| format!("{name}:{}", word(*loose)))
        .collect();
    let kind = if results.iter().all(|(_, strict, _)| *strict) {
        OutcomeKind::Pass
    } else {
        OutcomeKind::Wrong
    };
    Outcome::new(
        kind,
        format!("strict {} | loose {}", strict.join(" "), loose.join(" ")),
    )
}

/// Reads the detail an instruction task's grade carries: each instruction's name with its strict and
/// loose verdict; `None` for another detail.
pub fn read_instruction_detail(detail: &str) -> Option<Vec<(String, bool, bool)>> {
    let (strict, loose) = detail.strip_prefix("strict ")?.split_once(" | loose ")?;
    let parse = |part: &str| -> Option<Vec<(String, bool)>> {
        part.split_whitespace()
            .map(|item| {
                let (name, verdict) = item.split_once(':')?;
                Some((name.to_owned(), verdict == "ok"))
            })
            .collect()
    };
    let strict = parse(strict)?;
    let loose = parse(loose)?;
    (strict.len() == loose.len()).then(|| {
        strict
            .into_iter()
            .zip(loose)
            .map(|((name, s), (_, l))| (name, s, l))
            .collect()
    })
}

/// The self-check of one instruction task: its checker is its spec's, its prompt states every
/// instruction; a reply built to meet them all passes; for each instruction a reply built to
/// break it alone fails on it and holds on every other; a cut-off is `cut_off` and an empty
/// reply `no_answer`. Gives the number of checks and every failure.
pub fn prove_instructions_task(task: &Task) -> (usize, Vec<String>) {
    let mut proof = crate::proof::Proof::default();
    let Some(spec) = task.spec::<InstructionsSpec>() else {
        proof.require(false, "an instruction task without its spec");
        return proof.finish();
    };
    let Checker::Instructions(constraints) = &task.checker else {
        proof.require(false, "an instruction task without an instructions checker");
        return proof.finish();
    };
    proof.require(
        *constraints == spec.constraints,
        "the checker's instructions are not the spec's",
    );
    proof.require(
        usize::try_from(spec.level).ok() == Some(spec.constraints.len()),
        format!(
            "level {} sets {} instructions",
            spec.level,
            spec.constraints.len()
        ),
    );
    let prompt: String = task
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    for constraint in &spec.constraints {
        proof.require(
            prompt.contains(&constraint.instruction()),
            format!("the prompt does not state {}", constraint.name()),
        );
    }
    let meeting = instructions_reply(spec, None);
    for constraint in constraints {
        proof.require(
            constraint.holds(&meeting),
            format!(
                "{}: the reply built to meet every instruction breaks it",
                constraint.name()
            ),
        );
    }
    proof.grades(
        task,
        "the reply meeting every instruction",
        &Reply::stopped(meeting.clone()),
        OutcomeKind::Pass,
    );
    for (index, broken) in spec.constraints.iter().enumerate() {
        let reply = instructions_reply(spec, Some(index));
        for (other, constraint) in constraints.iter().enumerate() {
            let holds = constraint.holds(&reply);
            if other == index {
                proof.require(
                    !holds,
                    format!("{}: the reply built to break it meets it", broken.name()),
                );
            } else {
                proof.require(
                    holds,
                    format!(
                        "{}: the reply built to break {} alone breaks it too",
                        constraint.name(),
                        broken.name()
                    ),
                );
            }
        }
        proof.grades(
            task,
            &format!("the reply breaking {}", broken.name()),
            &Reply::stopped(reply),
            OutcomeKind::Wrong,
        );
    }
    let mut cut = Reply::stopped(meeting);
    cut.finish_reason = Some("length".to_owned());
    proof.grades(task, "the meeting reply cut off", &cut, OutcomeKind::CutOff);
    proof.grades(
        task,
        "an empty reply",
        &Reply::stopped(""),
        OutcomeKind::NoAnswer,
    );
    proof.finish()
}

#[cfg(test)]
mod tests;
