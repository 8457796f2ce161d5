//! What a tune's turns show: each configuration's loads pooled over its rounds, its capacity
//! and goodput at the target, its pass rate, the pairwise comparisons (Holm-corrected), the
//! winner, the Pareto fronts and what each server states it was launched with.

use std::path::Path;

use vernier_plot::{Better, pareto_front};
use vernier_sweep::{LoadPoint, LoadedSweepJournal, Target, capacity_point, pooled_load_points};

use super::config::RankBy;
use super::file::{TuneFile, TurnStatus};
use super::results::{
    ConfigResult, Figure, Front, FrontPoint, LoadRow, Pair, PassRate, Standing, TuneAnalysis,
};
use super::stated::stated_flags;
use crate::file::{BatteryFile, PartStatus};

/// One configuration's rounds, read from their folders.
struct Rounds {
    journals: Vec<LoadedSweepJournal>,
    failed_parts: Vec<String>,
    passed: u64,
    scored: u64,
    settings: Vec<serde_json::Value>,
}

fn read_rounds(file: &TuneFile, out: &Path, name: &str) -> Rounds {
    let mut rounds = Rounds {
        journals: Vec::new(),
        failed_parts: Vec::new(),
        passed: 0,
        scored: 0,
        settings: Vec::new(),
    };
    for turn in file
        .turns
        .iter()
        .filter(|t| t.config == name && t.status == TurnStatus::Done)
    {
        let folder = turn.study_folder(out);
        let Ok(battery) = BatteryFile::load(&folder) else {
            continue;
        };
        // The study's first sweep part, by name: the same part in every round.
        let sweep = file
            .study
            .parts
            .iter()
            .find(|part| part.kind == "sweep")
            .map(|part| part.name.as_str());
        for part in battery
            .parts
            .iter()
            .filter(|p| p.status != PartStatus::Done)
        {
            rounds.failed_parts.push(format!(
                "round {}: {} {}{}",
                turn.round,
                part.part,
                crate::study_report::status_word(part.status),
                part.detail
                    .as_ref()
                    .map_or_else(String::new, |detail| format!(": {detail}"))
            ));
        }
        for part in battery
            .parts
            .iter()
            .filter(|p| p.status == PartStatus::Done)
        {
            for score in &part.scores {
                rounds.passed += score.passed;
                rounds.scored += score.scored;
            }
            if Some(part.part.as_str()) == sweep {
                let part_folder = folder.join(&part.folder);
                if let Ok(journal) =
                    vernier_sweep::read_sweep_journal(&vernier_sweep::journal_path(&part_folder))
                {
                    rounds.journals.push(journal);
                }
                if let Ok(text) = std::fs::read_to_string(part_folder.join("run.json"))
                    && let Ok(run) = serde_json::from_str::<serde_json::Value>(&text)
                {
                    let flags = &run["environment"]["model"]["weights"]["launch_flags"];
                    if !flags.is_null() {
                        rounds.settings.push(flags.clone());
                    }
                }
            }
        }
    }
    rounds
}

fn shape_of(point: &LoadPoint) -> String {
    format!(
        "{:?} prompts of {} tokens, {} output tokens",
        point.workload, point.prompt_tokens_target, point.output_tokens
    )
    .to_lowercase()
}

/// One configuration's result from its rounds, and the shape its speed is read at.
fn config_result(
    file: &TuneFile,
    config: &super::config::TuneConfig,
    (rounds, points): (Rounds, &[LoadPoint]),
    (target, shape): (Option<&Target>, Option<&LoadPoint>),
) -> ConfigResult {
    // The speed figures are read at the tune's one shape.
    let first_shape: Vec<&LoadPoint> = shape
        .map(|shape| points.iter().filter(|p| p.same_shape(shape)).collect())
        .unwrap_or_default();
    let chosen = if target.is_some() {
        capacity_point(&first_shape)
    } else {
        (0..first_shape.len()).max_by(|&a, &b| {
            let g = |i: usize| first_shape[i].goodput().map_or(0.0, |g| g.0);
            g(a).total_cmp(&g(b))
        })
    };
    let at = chosen.map(|index| first_shape[index]);
    let turns: Vec<_> = file
        .turns
        .iter()
        .filter(|t| t.config == config.name)
        .collect();
    let pass_rate = (rounds.scored > 0).then(|| {
        let interval = vernier_stats::wilson(rounds.passed, rounds.scored, 0.95)
            .map_or((0.0, 1.0), |i| (i.low, i.high));
        PassRate {
            passed: rounds.passed,
            scored: rounds.scored,
            rate: rounds.passed as f64 / rounds.scored as f64,
            interval,
        }
    });
    let standing = if turns.iter().any(|t| t.status == TurnStatus::StartFailed) {
        Standing::FailedToStart
    } else if turns.iter().any(|t| t.status == TurnStatus::Crashed) {
        Standing::Crashed
    } else if first_shape.is_empty() && (target.is_some() || pass_rate.is_none()) {
        Standing::Unmeasured
    } else {
        let speed_met = target.is_none() || at.is_some();
        let quality_met = file
            .target
            .as_ref()
            .and_then(|t| t.pass_rate_at_least)
            .is_none_or(|least| pass_rate.is_some_and(|p| p.rate >= least));
        if speed_met && quality_met {
            Standing::Meets
        } else {
            Standing::Misses
        }
    };
    ConfigResult {
        name: config.name.clone(),
        command: config.command.clone(),
        rank: 0,
        standing,
        rounds_done: u32::try_from(
            turns
                .iter()
                .filter(|t| t.status == TurnStatus::Done)
                .count(),
        )
        .unwrap_or(u32::MAX),
        ready_s: turns.iter().filter_map(|t| t.ready_s).collect(),
        load_kind: first_shape
            .first()
            .map_or_else(|| "concurrency".to_owned(), |p| p.load_kind.clone()),
        capacity: target.and(at.map(|p| p.load)),
        at_load: at.map(|p| p.load),
        goodput: at.and_then(|p| Figure::of(p.goodput())),
        goodput_windows: at
            .map(|p| p.window_output_tokens_per_s.clone())
            .unwrap_or_default(),
        decode: at.and_then(|p| Figure::of(p.decode())),
        loads: first_shape.iter().map(|p| load_row(p)).collect(),
        pass_rate,
        deaths: turns.iter().filter_map(|t| t.death.clone()).collect(),
        failed_parts: rounds.failed_parts,
        stated: stated_flags(&config.command, &rounds.settings),
    }
}

/// The analysis of a tune whose turns are over.
pub fn analyse(file: &TuneFile, out: &Path) -> TuneAnalysis {
    let target = file
        .target
        .as_ref()
        .and_then(|t| t.speed.as_deref())
        .and_then(|text| Target::parse(text).ok());
    let measured: Vec<(Rounds, Vec<LoadPoint>)> = file
        .configs
        .iter()
        .map(|config| {
            let rounds = read_rounds(file, out, &config.name);
            let journals: Vec<&LoadedSweepJournal> = rounds.journals.iter().collect();
            let points = pooled_load_points(&journals, target.as_ref());
            (rounds, points)
        })
        .collect();
    // One shape for every configuration: the first (in the sweep's order) any measured; a
    // configuration without it is read as not measured.
    let first = measured
        .iter()
        .filter_map(|(_, points)| points.first())
        .min_by(|a, b| {
            (a.workload, a.prompt_tokens_target, a.output_tokens).cmp(&(
                b.workload,
                b.prompt_tokens_target,
                b.output_tokens,
            ))
        })
        .cloned();
    let shape = first.as_ref().map(shape_of);
    let results: Vec<ConfigResult> = file
        .configs
        .iter()
        .zip(measured)
        .map(|(config, (rounds, points))| {
            config_result(
                file,
                config,
                (rounds, &points),
                (target.as_ref(), first.as_ref()),
            )
        })
        .collect();
    let mut results = results;
    rank(&mut results, file.rank_by);
    let pairs = pairs_of(&results);
    let winner = results
        .iter()
        .find(|r| r.standing == Standing::Meets && (r.goodput.is_some() || r.pass_rate.is_some()))
        .map(|r| r.name.clone());
    let verdict = verdict_of(&results, &pairs, winner.as_deref(), file);
    let fronts = fronts_of(&results);
    let stated: Vec<(&str, &[super::stated::StatedFlag])> = results
        .iter()
        .map(|r| (r.name.as_str(), r.stated.as_slice()))
        .collect();
    let differing_settings = super::stated::differing(&stated);
    TuneAnalysis {
        shape,
        configs: results,
        pairs,
        winner,
        verdict,
        fronts,
        differing_settings,
    }
}

fn load_row(point: &LoadPoint) -> LoadRow {
    LoadRow {
        load: point.load,
        requests: point.requests,
        met: point.target.as_ref().map(|t| t.met),
        checks: point
            .target
            .iter()
            .flat_map(|t| &t.parts)
            .map(|part| {
                format!(
                    "{}: {}",
                    part.part,
                    part.value
                        .map_or_else(|| "none".to_owned(), |v| format!("{v:.1} {}", part.unit))
                )
            })
            .collect(),
        goodput: Figure::of(point.goodput()),
        decode: Figure::of(point.decode()),
    }
}

/// Best first: standing, then the ranking figure.
fn rank(results: &mut [ConfigResult], by: RankBy) {
    let goodput = |r: &ConfigResult| r.goodput.map_or(f64::NEG_INFINITY, |g| g.value);
    let pass = |r: &ConfigResult| r.pass_rate.map_or(f64::NEG_INFINITY, |p| p.rate);
    results.sort_by(|a, b| {
        a.standing.cmp(&b.standing).then_with(|| {
            match by {
                RankBy::Goodput => goodput(b).total_cmp(&goodput(a)),
                RankBy::Capacity => b
                    .capacity
                    .unwrap_or(f64::NEG_INFINITY)
                    .total_cmp(&a.capacity.unwrap_or(f64::NEG_INFINITY))
                    .then_with(|| goodput(b).total_cmp(&goodput(a))),
            }
            .then_with(|| pass(b).total_cmp(&pass(a)))
        })
    });
    for (index, result) in results.iter_mut().enumerate() {
        result.rank = index + 1;
    }
}

/// Every pair of configurations with two or more windows each: the Hodges–Lehmann shift with
/// its Mann–Whitney interval, the two-sided Mann–Whitney p, Holm across the pairs.
fn pairs_of(results: &[ConfigResult]) -> Vec<Pair> {
    let compared: Vec<&ConfigResult> = results
        .iter()
        .filter(|r| r.standing <= Standing::Misses)
        .collect();
    let mut pairs = Vec::new();
    for (index, a) in compared.iter().enumerate() {
        for b in &compared[index + 1..] {
            if let Some(pair) = goodput_pair(a, b).or_else(|| pass_rate_pair(a, b)) {
                pairs.push(pair);
            }
        }
    }
    let ps: Vec<f64> = pairs.iter().map(|p| p.p).collect();
    if let Ok(adjusted) = vernier_stats::holm(&ps) {
        for (pair, p_holm) in pairs.iter_mut().zip(adjusted) {
            pair.p_holm = p_holm;
            pair.distinguishable = p_holm < 0.05;
        }
    }
    pairs
}

/// Goodput compared, where both have two windows or more: the Hodges–Lehmann shift with its
/// Mann–Whitney interval and the two-sided Mann–Whitney p.
fn goodput_pair(a: &ConfigResult, b: &ConfigResult) -> Option<Pair> {
    let (x, y) = (&a.goodput_windows, &b.goodput_windows);
    if x.len() < 2 || y.len() < 2 {
        return None;
    }
    let mut shifts: Vec<f64> = x
        .iter()
        .flat_map(|u| y.iter().map(move |v| u - v))
        .collect();
    shifts.sort_by(f64::total_cmp);
    Some(Pair {
        a: a.name.clone(),
        b: b.name.clone(),
        figure: "goodput, output tokens/s".to_owned(),
        difference: vernier_stats::median(&shifts).unwrap_or(0.0),
        interval: vernier_stats::shift_interval(x, y, 0.95)
            .ok()
            .flatten()
            .map(|i| (i.low, i.high)),
        p: vernier_stats::mann_whitney_p(x, y).unwrap_or(1.0),
        p_holm: 1.0,
        distinguishable: false,
    })
}

/// Pass rates compared, where no goodput is (a tune of suites alone): the difference with
/// Newcombe's interval and the pooled two-proportion z test's two-sided p.
fn pass_rate_pair(a: &ConfigResult, b: &ConfigResult) -> Option<Pair> {
    let (pa, pb) = (a.pass_rate?, b.pass_rate?);
    let interval =
        vernier_stats::newcombe_independent(pa.passed, pa.scored, pb.passed, pb.scored, 0.95)
            .ok()
            .map(|i| (i.low, i.high));
    let pooled = (pa.passed + pb.passed) as f64 / (pa.scored + pb.scored) as f64;
    let spread =
        (pooled * (1.0 - pooled) * (1.0 / pa.scored as f64 + 1.0 / pb.scored as f64)).sqrt();
    let p = if spread > 0.0 {
        vernier_stats::normal_two_sided_p((pa.rate - pb.rate) / spread).unwrap_or(1.0)
    } else {
        1.0
    };
    Some(Pair {
        a: a.name.clone(),
        b: b.name.clone(),
        figure: "pass rate".to_owned(),
        difference: pa.rate - pb.rate,
        interval,
        p,
        p_holm: 1.0,
        distinguishable: false,
    })
}

fn verdict_of(
    results: &[ConfigResult],
    pairs: &[Pair],
    winner: Option<&str>,
    file: &TuneFile,
) -> String {
    let target = file.target.as_ref().map_or_else(
        || "most output (no target)".to_owned(),
        |t| format!("target {}", t.text),
    );
    let Some(winner) = winner else {
        let what = if file.target.is_some() {
            format!("no configuration meets the {target}")
        } else {
            "no configuration's speed was measured".to_owned()
        };
        return format!(
            "{what}: {}",
            results
                .iter()
                .map(|r| format!("{} {}", r.name, r.standing.words()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let Some(best) = results.iter().find(|r| r.name == winner) else {
        return format!("{winner} wins");
    };
    let figure = best.goodput.map_or_else(
        || {
            best.pass_rate.map_or_else(String::new, |p| {
                format!(
                    ": pass rate {:.1}% [{:.1}, {:.1}] (no speed measured)",
                    p.rate * 100.0,
                    p.interval.0 * 100.0,
                    p.interval.1 * 100.0
                )
            })
        },
        |g| {
            format!(
                ": {:.1} output tokens/s at {}",
                g.value,
                best.at_load
                    .map_or_else(String::new, |load| load_words(load, &best.load_kind))
            )
        },
    );
    let runner_up = results
        .iter()
        .find(|r| r.name != winner && r.standing == Standing::Meets);
    let against = runner_up.and_then(|other| {
        pairs
            .iter()
            .find(|p| (p.a == winner && p.b == other.name) || (p.b == winner && p.a == other.name))
            .map(|pair| (other, pair))
    });
    let rest = match against {
        Some((other, pair)) if pair.distinguishable => {
            // The pair's difference is a − b: from the winner's side.
            let sign = if pair.a == winner { 1.0 } else { -1.0 };
            let interval = pair.interval.map_or_else(String::new, |(low, high)| {
                let (low, high) = (sign * low, sign * high);
                format!(" [{:.1}, {:.1}]", low.min(high), low.max(high))
            });
            format!(
                "; ahead of {} by {:.3} in {}{interval} (Holm-adjusted p {:.3})",
                other.name,
                sign * pair.difference,
                pair.figure,
                pair.p_holm
            )
        }
        Some((other, pair)) => {
            let (n, m) = (best.goodput_windows.len(), other.goodput_windows.len());
            if pair.figure != "pass rate" && smallest_holm_p(n, m, pairs.len()) >= 0.05 {
                format!(
                    "; not distinguishable from {} (Holm-adjusted p {:.3}): {n} and {m} repetition windows cannot reach p < 0.05 across {} pairs, so add rounds or repetitions",
                    other.name,
                    pair.p_holm,
                    pairs.len()
                )
            } else {
                format!(
                    "; not distinguishable from {} (Holm-adjusted p {:.3}): either will do",
                    other.name, pair.p_holm
                )
            }
        }
        None => String::new(),
    };
    format!("{winner} wins for the {target}{figure}{rest}")
}

/// The smallest Holm-adjusted p one pair of `n` and `m` windows can reach among `pairs`
/// pairs: the exact two-sided 2 / C(n + m, n), times the pairs.
fn smallest_holm_p(n: usize, m: usize, pairs: usize) -> f64 {
    let mut orderings = 1.0_f64;
    for i in 1..=n {
        orderings = orderings * (m + i) as f64 / i as f64;
    }
    (2.0 / orderings * pairs as f64).min(1.0)
}

/// A load in words: `16 in flight`, `2.5 requests/s`.
pub(crate) fn load_words(load: f64, kind: &str) -> String {
    if kind == "rate" {
        format!("{} requests/s", number(load))
    } else {
        format!("{} in flight", number(load))
    }
}

/// A load as written: whole numbers without a point.
pub(crate) fn number(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

fn fronts_of(results: &[ConfigResult]) -> Vec<Front> {
    let mut fronts = Vec::new();
    let speed: Vec<FrontPoint> = results
        .iter()
        .filter(|r| r.standing <= Standing::Misses)
        .filter_map(|r| {
            Some(FrontPoint {
                name: r.name.clone(),
                x: r.decode?,
                y: r.goodput?,
            })
        })
        .collect();
    if !speed.is_empty() {
        fronts.push(front(
            "decode per request, tokens/s",
            "output tokens/s (goodput)",
            speed,
        ));
    }
    let quality: Vec<FrontPoint> = results
        .iter()
        .filter(|r| r.standing <= Standing::Misses)
        .filter_map(|r| {
            let pass = r.pass_rate?;
            Some(FrontPoint {
                name: r.name.clone(),
                x: r.goodput?,
                y: Figure {
                    value: pass.rate,
                    interval: Some(pass.interval),
                },
            })
        })
        .collect();
    if !quality.is_empty() {
        fronts.push(front("output tokens/s (goodput)", "pass rate", quality));
    }
    fronts
}

fn front(x: &str, y: &str, points: Vec<FrontPoint>) -> Front {
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.x.value, p.y.value)).collect();
    let on_front = pareto_front(&xy, Better::Higher, Better::Higher)
        .into_iter()
        .map(|index| points[index].name.clone())
        .collect();
    Front {
        x: x.to_owned(),
        y: y.to_owned(),
        points,
        on_front,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, goodput: f64, decode: f64, passed: u64) -> ConfigResult {
        let figure = |value: f64| Figure {
            value,
            interval: Some((value * 0.99, value * 1.01)),
        };
        ConfigResult {
            name: name.to_owned(),
            command: format!("serve {name}"),
            rank: 0,
            standing: Standing::Meets,
            rounds_done: 2,
            ready_s: vec![1.0, 1.0],
            load_kind: "concurrency".to_owned(),
            capacity: Some(4.0),
            at_load: Some(4.0),
            goodput: Some(figure(goodput)),
            goodput_windows: (0..6).map(|i| goodput + f64::from(i)).collect(),
            decode: Some(figure(decode)),
            loads: Vec::new(),
            pass_rate: Some(PassRate {
                passed,
                scored: 100,
                rate: passed as f64 / 100.0,
                interval: (0.0, 1.0),
            }),
            deaths: Vec::new(),
            failed_parts: Vec::new(),
            stated: Vec::new(),
        }
    }

    #[test]
    fn the_fronts_hold_the_undominated_and_a_crashed_configuration_is_on_neither() {
        // By hand: on speed (decode, goodput) a=(100, 100), b=(50, 400), c=(40, 300): c is
        // beaten by b on both; on quality (goodput, pass rate) a=(100, .9), b=(400, .5),
        // c=(300, .95): nothing beats c on pass rate, nothing beats b on goodput, a is
        // beaten by c on both.
        let mut results = vec![
            result("a", 100.0, 100.0, 90),
            result("b", 400.0, 50.0, 50),
            result("c", 300.0, 40.0, 95),
            result("d", 900.0, 900.0, 99),
        ];
        results[3].standing = Standing::Crashed;
        rank(&mut results, RankBy::Goodput);
        let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["b", "c", "a", "d"], "the crashed one last");
        let fronts = fronts_of(&results);
        assert_eq!(fronts.len(), 2);
        assert_eq!(fronts[0].on_front, ["b", "a"]);
        assert_eq!(fronts[1].on_front, ["b", "c"]);
        // Six windows apart against six: the exact two-sided p is 2/924, Holm across three
        // pairs 6/924.
        let pairs = pairs_of(&results);
        assert_eq!(pairs.len(), 3, "the crashed one is compared with nothing");
        let ab = pairs
            .iter()
            .find(|p| p.a == "b" && p.b == "a")
            .expect("b against a");
        assert!((ab.p - 2.0 / 924.0).abs() < 1e-12, "{ab:?}");
        assert!((ab.p_holm - 6.0 / 924.0).abs() < 1e-12, "{ab:?}");
        assert!((ab.difference - 300.0).abs() < 1e-9, "{ab:?}");
        assert!(ab.distinguishable);
        // 3 against 3: 2/20 = 0.1 at best; 6 against 6 across 3 pairs: 6/924.
        assert!((smallest_holm_p(3, 3, 1) - 0.1).abs() < 1e-12);
        assert!((smallest_holm_p(6, 6, 3) - 6.0 / 924.0).abs() < 1e-12);
    }

    #[test]
    fn suites_alone_are_ranked_and_compared_by_their_pass_rates() {
        let mut results = vec![result("low", 0.0, 0.0, 50), result("high", 0.0, 0.0, 90)];
        for r in &mut results {
            r.goodput = None;
            r.goodput_windows.clear();
            r.decode = None;
        }
        rank(&mut results, RankBy::Goodput);
        assert_eq!(results[0].name, "high");
        let pairs = pairs_of(&results);
        assert_eq!(pairs.len(), 1);
        let pair = &pairs[0];
        assert_eq!(pair.figure, "pass rate");
        assert!((pair.difference - 0.4).abs() < 1e-12, "{pair:?}");
        // 90/100 against 50/100: pooled 0.7, z = 0.4 / sqrt(0.21 * 0.02) = 6.17.
        assert!(pair.p < 1e-8 && pair.distinguishable, "{pair:?}");
        let (low, high) = pair.interval.expect("Newcombe's interval");
        assert!(
            low > 0.25 && high < 0.55 && low < 0.4 && 0.4 < high,
            "{pair:?}"
        );
    }
}
