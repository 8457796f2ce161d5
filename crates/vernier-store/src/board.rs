//! A board of candidates: each model's newest figures and scores side by side, ranked on every
//! dimension they share, each pair's difference with a Holm-corrected test, and the Pareto
//! front of quality against speed.

use serde::Serialize;
use vernier_plot::Better;

use crate::error::StoreError;
use crate::record::RunRecord;

/// The family-wise error rate of a dimension's pairwise tests.
pub const ALPHA: f64 = 0.05;

/// One candidate: a model, with the runs that measured it.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Candidate {
    /// The model.
    pub name: String,
    /// The runs its figures come from (newest first where one figure has several).
    pub runs: Vec<String>,
    /// Any run's verdict other than valid, `run id: verdict`.
    pub verdicts: Vec<String>,
}

/// One candidate's value on a dimension.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Entry {
    /// The candidate's name.
    pub candidate: String,
    /// Its value.
    pub value: f64,
    /// Its 95% interval, where stated.
    pub interval: Option<(f64, f64)>,
    /// The run it comes from.
    pub run: String,
    /// Its place, 1 for the best.
    pub rank: usize,
}

/// The difference between two candidates on a dimension.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Pair {
    /// The better of the two by value.
    pub ahead: String,
    /// The other.
    pub behind: String,
    /// `ahead − behind`, in the dimension's unit.
    pub difference: f64,
    /// The difference's interval at the Bonferroni level 1 − α/m (m pairs on the dimension),
    /// which covers Holm's first step; `None` where a side states no interval.
    pub interval: Option<(f64, f64)>,
    /// The test's two-sided p-value.
    pub p: Option<f64>,
    /// Holm's adjusted p-value across the dimension's pairs.
    pub p_holm: Option<f64>,
    /// Whether the two differ at family-wise α (adjusted p below [`ALPHA`]).
    pub distinguishable: bool,
    /// The sentence a reader gets.
    pub says: String,
}

/// One dimension the candidates share.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Dimension {
    /// Its name (a headline figure's, or `pass rate: DIMENSION`).
    pub name: String,
    /// Its unit.
    pub unit: String,
    /// Whether more is better.
    pub higher_is_better: bool,
    /// Each candidate that has it, best first.
    pub entries: Vec<Entry>,
    /// Every pair, in rank order.
    pub pairs: Vec<Pair>,
    /// The settings whose values differ between the runs behind the entries (the model's
    /// own name aside): the row may be theirs as much as the models'.
    pub confounded_by: Vec<String>,
}

/// The Pareto front of quality against speed.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Front {
    /// The speed dimension (x).
    pub speed: String,
    /// The quality dimension (y).
    pub quality: String,
    /// The candidates no other beats on both at once.
    pub on_front: Vec<String>,
    /// The candidates with both figures.
    pub points: Vec<(String, f64, f64)>,
}

/// The board.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Board {
    /// The candidates, in the order first seen.
    pub candidates: Vec<Candidate>,
    /// Every dimension at least two candidates share.
    pub dimensions: Vec<Dimension>,
    /// Quality against speed, where both are shared.
    pub front: Option<Front>,
    /// Settings whose values differ between candidates, `name: A=…, B=…` (a row so marked
    /// may be confounded by them).
    pub differing_settings: Vec<String>,
}

/// What the board compares on its front.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BoardAxes {
    /// The speed dimension's name (default: the first shared one naming `decode`).
    pub speed: Option<String>,
    /// The quality dimension's name (default: `pass rate: total`, else the first pass rate).
    pub quality: Option<String>,
}

impl BoardAxes {
    /// Axes by name.
    pub fn new(speed: Option<String>, quality: Option<String>) -> Self {
        Self { speed, quality }
    }
}

struct Cell {
    value: f64,
    interval: Option<(f64, f64)>,
    run: String,
    /// Passed and scored, for a pass rate.
    counts: Option<(u64, u64)>,
}

struct Column {
    name: String,
    unit: String,
    higher_is_better: bool,
    values: Vec<Option<Cell>>,
}

/// The board of `runs`, one candidate per model; for each figure or score, a candidate's
/// newest run that has it.
pub fn board(runs: &[RunRecord], axes: &BoardAxes) -> Result<Board, StoreError> {
    let mut newest_first: Vec<&RunRecord> = runs.iter().collect();
    newest_first.sort_by_key(|run| std::cmp::Reverse(run.started_unix_ms));
    let mut names: Vec<String> = Vec::new();
    for run in runs {
        if !names.contains(&run.model) {
            names.push(run.model.clone());
        }
    }
    let mut columns: Vec<Column> = Vec::new();
    let mut used: Vec<Vec<String>> = vec![Vec::new(); names.len()];
    for (at, name) in names.iter().enumerate() {
        for run in newest_first.iter().filter(|run| &run.model == name) {
            for figure in &run.figures {
                let value = Cell {
                    value: figure.value,
                    interval: figure.interval,
                    run: run.id.clone(),
                    counts: None,
                };
                place(
                    &mut columns,
                    names.len(),
                    at,
                    &figure.name,
                    &figure.unit,
                    figure.higher_is_better,
                    value,
                    &mut used[at],
                );
            }
            for score in run.scores.iter().filter(|score| score.scored > 0) {
                let rate = score.passed as f64 / score.scored as f64;
                let interval = vernier_stats::wilson(score.passed, score.scored, 0.95)?;
                let value = Cell {
                    value: rate * 100.0,
                    interval: Some((interval.low * 100.0, interval.high * 100.0)),
                    run: run.id.clone(),
                    counts: Some((score.passed, score.scored)),
                };
                let name = format!("pass rate: {}", score.dimension);
                place(
                    &mut columns,
                    names.len(),
                    at,
                    &name,
                    "%",
                    true,
                    value,
                    &mut used[at],
                );
            }
        }
    }
    let candidates = names
        .iter()
        .zip(&used)
        .map(|(name, runs_used)| Candidate {
            name: name.clone(),
            runs: runs_used.clone(),
            verdicts: runs
                .iter()
                .filter(|run| runs_used.contains(&run.id) && run.verdict != "valid")
                .map(|run| format!("{}: {}", run.id, run.verdict))
                .collect(),
        })
        .collect();
    let mut dimensions = Vec::new();
    for column in &columns {
        if column.values.iter().flatten().count() < 2 {
            continue;
        }
        let mut row = dimension(column, &names)?;
        let ids: Vec<&str> = row.entries.iter().map(|entry| entry.run.as_str()).collect();
        row.confounded_by = confounders(runs, &ids);
        dimensions.push(row);
    }
    let front = front(&dimensions, axes);
    let differing_settings = differing(runs, &names, &used);
    Ok(Board {
        candidates,
        dimensions,
        front,
        differing_settings,
    })
}

#[allow(clippy::too_many_arguments)]
fn place(
    columns: &mut Vec<Column>,
    n: usize,
    at: usize,
    name: &str,
    unit: &str,
    higher_is_better: bool,
    value: Cell,
    used: &mut Vec<String>,
) {
    let index = columns
        .iter()
        .position(|column| column.name == name)
        .unwrap_or_else(|| {
            columns.push(Column {
                name: name.to_owned(),
                unit: unit.to_owned(),
                higher_is_better,
                values: (0..n).map(|_| None).collect(),
            });
            columns.len() - 1
        });
    let slot = &mut columns[index].values[at];
    if slot.is_none() {
        if !used.contains(&value.run) {
            used.push(value.run.clone());
        }
        *slot = Some(value);
    }
}

// One pass over the pairs: the test, the interval and the sentence of each side by side.
#[allow(clippy::too_many_lines)]
fn dimension(column: &Column, names: &[String]) -> Result<Dimension, StoreError> {
    let mut present: Vec<(usize, &Cell)> = column
        .values
        .iter()
        .enumerate()
        .filter_map(|(at, value)| value.as_ref().map(|value| (at, value)))
        .collect();
    present.sort_by(|(_, a), (_, b)| {
        if column.higher_is_better {
            b.value.total_cmp(&a.value)
        } else {
            a.value.total_cmp(&b.value)
        }
    });
    let entries: Vec<Entry> = present
        .iter()
        .enumerate()
        .map(|(rank, (at, value))| Entry {
            candidate: names[*at].clone(),
            value: value.value,
            interval: value.interval,
            run: value.run.clone(),
            rank: rank + 1,
        })
        .collect();
    let m = present.len() * (present.len() - 1) / 2;
    let level = 1.0 - ALPHA / m as f64;
    let z = vernier_stats::z_for_confidence(level)?;
    let mut pairs = Vec::new();
    let mut p_values = Vec::new();
    for (i, (at_a, a)) in present.iter().enumerate() {
        for (at_b, b) in present.iter().skip(i + 1) {
            let difference = a.value - b.value;
            let (interval, p) = match (a.counts, b.counts, a.interval, b.interval) {
                (Some((pa, na)), Some((pb, nb)), _, _) => {
                    let interval = vernier_stats::newcombe_independent(pa, na, pb, nb, level)?;
                    let pooled = (pa + pb) as f64 / (na + nb) as f64;
                    let se = (pooled * (1.0 - pooled) * (1.0 / na as f64 + 1.0 / nb as f64)).sqrt();
                    let p = if se > 0.0 {
                        vernier_stats::normal_two_sided_p(difference / 100.0 / se)?
                    } else {
                        1.0
                    };
                    (Some((interval.low * 100.0, interval.high * 100.0)), Some(p))
                }
                (_, _, Some(ia), Some(ib)) => {
                    let z95 = vernier_stats::z_for_confidence(0.95)?;
                    let se_a = (ia.1 - ia.0) / (2.0 * z95);
                    let se_b = (ib.1 - ib.0) / (2.0 * z95);
                    let se = se_a.hypot(se_b);
                    if se > 0.0 {
                        let p = vernier_stats::normal_two_sided_p(difference / se)?;
                        (Some((difference - z * se, difference + z * se)), Some(p))
                    } else {
                        (None, None)
                    }
                }
                _ => (None, None),
            };
            p_values.push(p);
            pairs.push(Pair {
                ahead: names[*at_a].clone(),
                behind: names[*at_b].clone(),
                difference,
                interval,
                p,
                p_holm: None,
                distinguishable: false,
                says: String::new(),
            });
        }
    }
    let tested: Vec<f64> = p_values.iter().flatten().copied().collect();
    let adjusted = vernier_stats::holm(&tested)?;
    let mut adjusted = adjusted.into_iter();
    for pair in &mut pairs {
        if pair.p.is_some() {
            pair.p_holm = adjusted.next();
        }
        pair.distinguishable = pair.p_holm.is_some_and(|p| p < ALPHA);
        pair.says = match pair.p_holm {
            None => format!(
                "{} and {}: not tested (a side states no interval)",
                pair.ahead, pair.behind
            ),
            Some(_) if pair.distinguishable => format!(
                "{} is ahead of {} on {}",
                pair.ahead, pair.behind, column.name
            ),
            Some(_) => format!(
                "{} and {} are not distinguishable on {}",
                pair.ahead, pair.behind, column.name
            ),
        };
    }
    Ok(Dimension {
        name: column.name.clone(),
        unit: column.unit.clone(),
        higher_is_better: column.higher_is_better,
        entries,
        pairs,
        confounded_by: Vec::new(),
    })
}

/// The settings that differ between the runs `ids` (a setting one run lacks counts), the
/// model's own name aside.
fn confounders(runs: &[RunRecord], ids: &[&str]) -> Vec<String> {
    let chosen: Vec<&RunRecord> = runs
        .iter()
        .filter(|run| ids.contains(&run.id.as_str()))
        .collect();
    let mut keys: Vec<&str> = Vec::new();
    for run in &chosen {
        for (key, _) in &run.settings {
            if !keys.contains(&key.as_str()) && !key.contains("model") && !key.starts_with("run.") {
                keys.push(key);
            }
        }
    }
    let mut differing: Vec<String> = keys
        .into_iter()
        .filter(|key| {
            let first = chosen.first().and_then(|run| run.setting(key));
            chosen.iter().any(|run| run.setting(key) != first)
        })
        .map(str::to_owned)
        .collect();
    let identity = |run: &RunRecord| {
        [
            run.server_version.clone(),
            run.driver.clone(),
            run.machine.clone(),
        ]
    };
    if let Some(first) = chosen.first() {
        let first = identity(first);
        for (at, name) in ["server version", "GPU driver", "machine"]
            .iter()
            .enumerate()
        {
            if chosen.iter().any(|run| identity(run)[at] != first[at]) {
                differing.push((*name).to_owned());
            }
        }
    }
    differing
}

fn front(dimensions: &[Dimension], axes: &BoardAxes) -> Option<Front> {
    let speed = match &axes.speed {
        Some(name) => dimensions.iter().find(|d| &d.name == name)?,
        None => dimensions.iter().find(|d| d.name.contains("decode"))?,
    };
    let quality = match &axes.quality {
        Some(name) => dimensions.iter().find(|d| &d.name == name)?,
        None => dimensions
            .iter()
            .find(|d| d.name == "pass rate: total")
            .or_else(|| {
                dimensions
                    .iter()
                    .find(|d| d.name.starts_with("pass rate: "))
            })?,
    };
    let points: Vec<(String, f64, f64)> = speed
        .entries
        .iter()
        .filter_map(|entry| {
            let quality = quality
                .entries
                .iter()
                .find(|other| other.candidate == entry.candidate)?;
            Some((entry.candidate.clone(), entry.value, quality.value))
        })
        .collect();
    let better = |higher| {
        if higher {
            Better::Higher
        } else {
            Better::Lower
        }
    };
    let coordinates: Vec<(f64, f64)> = points.iter().map(|(_, x, y)| (*x, *y)).collect();
    let on_front = vernier_plot::pareto_front(
        &coordinates,
        better(speed.higher_is_better),
        better(quality.higher_is_better),
    )
    .into_iter()
    .map(|at| points[at].0.clone())
    .collect();
    Some(Front {
        speed: speed.name.clone(),
        quality: quality.name.clone(),
        on_front,
        points,
    })
}

fn differing(runs: &[RunRecord], names: &[String], used: &[Vec<String>]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let per_candidate: Vec<Vec<(String, String)>> = used
        .iter()
        .map(|ids| {
            let mut settings: Vec<(String, String)> = Vec::new();
            for run in runs.iter().filter(|run| ids.contains(&run.id)) {
                for (key, value) in run
                    .settings
                    .iter()
                    .cloned()
                    .chain([
                        ("server kind".to_owned(), run.server_kind.clone()),
                        ("server version".to_owned(), run.server_version.clone()),
                        ("GPU driver".to_owned(), run.driver.clone()),
                        ("machine".to_owned(), run.machine.clone()),
                    ])
                    .filter(|(key, value)| !value.is_empty() && !key.starts_with("run."))
                {
                    if !keys.contains(&key) {
                        keys.push(key.clone());
                    }
                    if !settings.iter().any(|(k, _)| k == &key) {
                        settings.push((key, value));
                    }
                }
            }
            settings
        })
        .collect();
    keys.iter()
        .filter_map(|key| {
            let values: Vec<String> = per_candidate
                .iter()
                .map(|settings| {
                    settings
                        .iter()
                        .find(|(k, _)| k == key)
                        .map_or_else(|| "—".to_owned(), |(_, v)| v.clone())
                })
                .collect();
            let first = values.first()?;
            values.iter().any(|value| value != first).then(|| {
                let each: Vec<String> = names
                    .iter()
                    .zip(&values)
                    .map(|(name, value)| format!("{name}={value}"))
                    .collect();
                format!("{key}: {}", each.join(", "))
            })
        })
        .collect()
}
