//! Vision tasks: images drawn from a recorded seed, each gold computed from the parameters that
//! drew it, and proved from the pixels of the encoded PNG before any model sees it.
//!
//! Every image is drawn on a white canvas in a closed palette, so the proof can decode the PNG
//! again and count the connected regions of each colour, measure bars, or find the box the text
//! covers. A negative control (an image drawn with one square fewer than its gold) must fail.

#![expect(
    clippy::cast_possible_truncation,
    reason = "pixel geometry: every coordinate and count is far below u32::MAX (images are at most 384 pixels a side)"
)]

mod read_back;
mod spec;
#[cfg(test)]
mod tests;

use vernier_stats::SplitMix64;

use crate::canvas::{BLACK, GRID, Image, PALETTE, WHITE, colour};
use crate::kind::Kind;
use crate::task::{Category, Checker};

impl Category {
    /// Questions about generated images.
    pub const VISION: Self = Self::new("vision");
}

/// The vision family: questions about generated images, each gold read back from the pixels.
pub(crate) const KIND: Kind = Kind {
    category: Category::VISION,
    description: "questions about generated images",
    default_budget: DEFAULT_VISION_BUDGET,
    fits: |checker| matches!(checker, Checker::Integer(_) | Checker::Word(_)),
    prove: Some(prove_vision_task),
};
use read_back::{decoded, prove_images};
pub use spec::{VisionGold, VisionSpec};

pub use read_back::prove_vision;

/// The checker of a gold.
pub(crate) fn checker_of(gold: &VisionGold) -> crate::task::Checker {
    match gold {
        VisionGold::Integer(value) => crate::task::Checker::Integer(*value),
        VisionGold::Word(word) => crate::task::Checker::Word(word.clone()),
        VisionGold::Words(words) => crate::task::Checker::WordList(words.clone()),
    }
}

/// A gold one step from `gold`: the proof must refuse it over the same pixels.
pub(crate) fn wrong_gold(gold: &VisionGold) -> VisionGold {
    match gold {
        VisionGold::Integer(v) => VisionGold::Integer(v + 1),
        VisionGold::Word(w) => VisionGold::Word(format!("{w}x")),
        VisionGold::Words(words) => {
            let mut words = words.clone();
            words.reverse();
            VisionGold::Words(words)
        }
    }
}

/// The gold as an answer line's text (upper case, so the checker's case rule is probed), and a
/// near miss the checker must refuse.
pub(crate) fn answer_texts(gold: &VisionGold) -> (String, String) {
    match gold {
        VisionGold::Integer(v) => (v.to_string(), (v + 1).to_string()),
        VisionGold::Word(w) => (w.to_ascii_uppercase(), format!("{w}s")),
        VisionGold::Words(words) => {
            let mut near = words.clone();
            near.pop();
            (words.join(", ").to_ascii_uppercase(), near.join(", "))
        }
    }
}

/// The vision families, in catalogue order.
pub const VISION_FAMILIES: [&str; 11] = [
    "count-squares",
    "count-shapes",
    "read-number",
    "read-word",
    "bar-tallest",
    "bar-value",
    "arithmetic-text",
    "code-output",
    "compare-dots",
    "spatial-left",
    "count-colours",
];

const SIDE: u32 = 384;

pub(crate) fn answer_integer() -> &'static str {
    "End your reply with a line of the form `ANSWER: <integer>`."
}

/// Draws one task of `family` from `rng`: the prompt and the spec.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per family, in catalogue order"
)]
pub(crate) fn draw_vision(family: &str, rng: &mut SplitMix64) -> Option<(String, VisionSpec)> {
    let spec =
        |parameters: serde_json::Value, gold: VisionGold, images: Vec<Image>, text| VisionSpec {
            family: family.to_owned(),
            parameters,
            gold,
            images: images.iter().map(Image::to_png).collect(),
            text,
        };
    Some(match family {
        "count-squares" => {
            // A 6 × 6 grid of 48-px cells 14 px apart; each cell empty or a square in one of
            // four colours. The asked colour appears at least once.
            let names = ["red", "green", "blue", "yellow"];
            let asked = *rng.pick(&names);
            let mut cells: Vec<Option<&str>> = (0..36)
                .map(|_| (rng.below(3) > 0).then(|| *rng.pick(&names)))
                .collect();
            let first = rng.index(36);
            cells[first] = Some(asked);
            let mut image = Image::new(SIDE, SIDE);
            for (i, cell) in cells.iter().enumerate() {
                if let Some(name) = cell {
                    let (col, row) = (i as u32 % 6, i as u32 / 6);
                    image.fill_rect(14 + col * 62, 14 + row * 62, 48, 48, colour(name));
                }
            }
            let gold = cells.iter().filter(|c| **c == Some(asked)).count() as i128;
            (
                format!(
                    "How many {asked} squares are in the image? {}",
                    answer_integer()
                ),
                spec(
                    serde_json::json!({"asked": asked, "cells": cells}),
                    VisionGold::Integer(gold),
                    vec![image],
                    None,
                ),
            )
        }
        "count-shapes" => {
            // A 4 × 4 grid of slots, each empty or a circle, square or triangle in any colour.
            let shapes = ["circle", "square", "triangle"];
            let mut slots: Vec<Option<(&str, &str)>> = (0..16)
                .map(|_| {
                    (rng.below(4) > 0)
                        .then(|| (*rng.pick(&shapes), PALETTE[rng.index(PALETTE.len())].0))
                })
                .collect();
            slots[rng.index(16)] = Some(("circle", PALETTE[rng.index(PALETTE.len())].0));
            let mut image = Image::new(SIDE, SIDE);
            for (i, slot) in slots.iter().enumerate() {
                if let Some((shape, name)) = slot {
                    let (x, y) = (16 + (i as u32 % 4) * 92, 16 + (i as u32 / 4) * 92);
                    match *shape {
                        "circle" => image.fill_circle(x + 30, y + 30, 30, colour(name)),
                        "square" => image.fill_rect(x, y, 60, 60, colour(name)),
                        _ => image.fill_triangle(x, y, 60, colour(name)),
                    }
                }
            }
            let gold = slots
                .iter()
                .filter(|s| matches!(s, Some(("circle", _))))
                .count() as i128;
            (
                format!(
                    "How many circles are in the image (of any colour)? {}",
                    answer_integer()
                ),
                spec(
                    serde_json::json!({"slots": slots}),
                    VisionGold::Integer(gold),
                    vec![image],
                    None,
                ),
            )
        }
        "read-number" | "read-word" | "arithmetic-text" | "code-output" => {
            let (text, gold, prompt, px) = match family {
                "read-number" => {
                    let n = rng.range(100_000, 999_999);
                    (
                        n.to_string(),
                        VisionGold::Integer(i128::from(n)),
                        format!("What number is written in the image? {}", answer_integer()),
                        64.0,
                    )
                }
                "read-word" => {
                    let syllables = ["ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze"];
                    let word: String = (0..3).map(|_| *rng.pick(&syllables)).collect();
                    (
                        word.clone(),
                        VisionGold::Word(word),
                        "The image shows one made-up word. What is it, letter for letter? End your reply with a line of the form `ANSWER: <word>`.".to_owned(),
                        64.0,
                    )
                }
                "arithmetic-text" => {
                    let (a, b, c) = (rng.range(10, 99), rng.range(2, 9), rng.range(10, 99));
                    (
                        format!("{a} + {b} × {c}"),
                        VisionGold::Integer(i128::from(a + b * c)),
                        format!(
                            "Compute the arithmetic expression shown in the image (usual precedence). {}",
                            answer_integer()
                        ),
                        44.0,
                    )
                }
                _ => {
                    let (x, y, z) = (rng.range(3, 19), rng.range(3, 19), rng.range(1, 29));
                    (
                        format!("a = {x}\nb = {y}\nprint(a * b - {z})"),
                        VisionGold::Integer(i128::from(x * y) - i128::from(z)),
                        format!(
                            "The image shows a short Python program. What does it print? {}",
                            answer_integer()
                        ),
                        34.0,
                    )
                }
            };
            let mut image = Image::new(SIDE, SIDE / 2);
            let ink = image.draw_text(&text, 24, 40, px)?;
            (
                prompt,
                spec(
                    serde_json::json!({"text": text, "px": px}),
                    gold,
                    vec![image],
                    Some(ink),
                ),
            )
        }
        "bar-tallest" | "bar-value" => {
            // Five bars A–E, values distinct multiples of 10 from 10 to 90, 3 px per unit,
            // gridlines every 10 with their values written beside the axis.
            let mut values: Vec<u32> = (1..=9).map(|v| v * 10).collect();
            for i in (1..values.len()).rev() {
                let j = rng.index(i + 1);
                values.swap(i, j);
            }
            values.truncate(5);
            let labels = ["A", "B", "C", "D", "E"];
            let mut image = Image::new(SIDE, SIDE);
            let (base, left) = (330u32, 60u32);
            for tick in (10..=90).step_by(20) {
                let y = base - tick * 3;
                image.fill_rect(left, y, SIDE - left - 10, 1, GRID);
                image.draw_text(&tick.to_string(), 8, y.saturating_sub(10), 18.0);
            }
            for (i, (value, label)) in values.iter().zip(labels).enumerate() {
                let x = left + 14 + i as u32 * 60;
                image.fill_rect(x, base - value * 3, 36, value * 3, colour("blue"));
                image.draw_text(label, x + 10, base + 8, 22.0);
            }
            let (gold, prompt) = if family == "bar-tallest" {
                let tallest = values
                    .iter()
                    .zip(labels)
                    .max_by_key(|(v, _)| **v)
                    .map_or("A", |(_, l)| l);
                (
                    VisionGold::Word(tallest.to_owned()),
                    "Which bar in the chart is the tallest? Answer with its letter, one of A, B, C, D or E, on a last line of the form `ANSWER: <letter>`.".to_owned(),
                )
            } else {
                let asked = rng.index(5);
                (
                    VisionGold::Integer(i128::from(values[asked])),
                    format!(
                        "What is the value of bar {} in the chart (read it against the gridlines)? {}",
                        labels[asked],
                        answer_integer()
                    ),
                )
            };
            (
                prompt,
                spec(
                    serde_json::json!({"values": values, "labels": labels, "px_per_unit": 3, "base": base}),
                    gold,
                    vec![image],
                    None,
                ),
            )
        }
        "compare-dots" => {
            let first = rng.range(3, 12) as u32;
            let mut second = rng.range(3, 12) as u32;
            if second == first {
                second = if first > 3 { first - 2 } else { first + 2 };
            }
            let images: Vec<Image> = [first, second]
                .iter()
                .map(|&n| {
                    let mut image = Image::new(256, 256);
                    let mut slots: Vec<u32> = (0..25).collect();
                    for i in (1..slots.len()).rev() {
                        let j = rng.index(i + 1);
                        slots.swap(i, j);
                    }
                    for &slot in slots.iter().take(n as usize) {
                        image.fill_circle(26 + (slot % 5) * 50, 26 + (slot / 5) * 50, 14, BLACK);
                    }
                    image
                })
                .collect();
            let gold = if first > second { "first" } else { "second" };
            (
                "Two images follow. Which one holds more black dots, the first or the second? End your reply with a line of the form `ANSWER: first` or `ANSWER: second`.".to_owned(),
                spec(
                    serde_json::json!({"dots": [first, second]}),
                    VisionGold::Word(gold.to_owned()),
                    images,
                    None,
                ),
            )
        }
        "spatial-left" => {
            // Five shapes in a row, each in its own colour; one is the blue square, never first.
            let mut names: Vec<&str> = PALETTE
                .iter()
                .map(|(n, _)| *n)
                .filter(|n| *n != "blue")
                .collect();
            for i in (1..names.len()).rev() {
                let j = rng.index(i + 1);
                names.swap(i, j);
            }
            let at = 1 + rng.index(4);
            let mut row: Vec<(&str, &str)> = names
                .iter()
                .take(4)
                .map(|n| {
                    (
                        *n,
                        if rng.below(2) == 0 {
                            "circle"
                        } else {
                            "triangle"
                        },
                    )
                })
                .collect();
            row.insert(at, ("blue", "square"));
            let mut image = Image::new(SIDE, 128);
            for (i, (name, shape)) in row.iter().enumerate() {
                let x = 12 + i as u32 * 74;
                match *shape {
                    "square" => image.fill_rect(x, 34, 60, 60, colour(name)),
                    "circle" => image.fill_circle(x + 30, 64, 30, colour(name)),
                    _ => image.fill_triangle(x, 34, 60, colour(name)),
                }
            }
            let gold = row[at - 1].0;
            let list: Vec<&str> = PALETTE.iter().map(|(n, _)| *n).collect();
            (
                format!(
                    "What is the colour of the shape immediately to the left of the blue square? Answer with one of: {}. End your reply with a line of the form `ANSWER: <colour>`.",
                    list.join(", ")
                ),
                spec(
                    serde_json::json!({"row": row}),
                    VisionGold::Word(gold.to_owned()),
                    vec![image],
                    None,
                ),
            )
        }
        "count-colours" => {
            // Up to 8 discs; how many distinct colours they use.
            let n = rng.range(3, 8) as usize;
            let used: Vec<&str> = (0..n)
                .map(|_| PALETTE[rng.index(PALETTE.len())].0)
                .collect();
            let mut image = Image::new(SIDE, SIDE);
            for (i, name) in used.iter().enumerate() {
                image.fill_circle(
                    60 + (i as u32 % 3) * 130,
                    60 + (i as u32 / 3) * 130,
                    40,
                    colour(name),
                );
            }
            let mut distinct = used.clone();
            distinct.sort_unstable();
            distinct.dedup();
            (
                format!(
                    "How many different colours do the discs in the image have? {}",
                    answer_integer()
                ),
                spec(
                    serde_json::json!({"discs": used}),
                    VisionGold::Integer(distinct.len() as i128),
                    vec![image],
                    None,
                ),
            )
        }
        _ => return None,
    })
}

/// Vision tasks per family in the bundled vision suite.
pub const VISION_SAMPLES: u32 = 2;

/// The default completion budget of a vision task.
pub const DEFAULT_VISION_BUDGET: u32 = 2_000;

/// The vision suite drawn from `seed`: [`VISION_SAMPLES`] tasks of every family, ids
/// `vision-<family>-<k>`, each with its images, gold and parameters.
pub fn vision_suite(seed: u64, budget_tokens: u32) -> crate::suite::Suite {
    generated_suite(
        "vision",
        &VISION_FAMILIES,
        VISION_SAMPLES,
        (seed, 0xA076_1D64_78BD_642F),
        |family, rng, id| {
            draw_vision(family, rng)
                .map(|(prompt, spec)| vision_task(id, &prompt, spec, budget_tokens))
        },
    )
}

/// A generated suite named `name` (the ids' prefix): `samples` tasks of every family, each
/// drawn by `draw` from its own stream of `seed` (`salt` keeps the suites' streams apart).
pub(crate) fn generated_suite(
    name: &str,
    families: &[&str],
    samples: u32,
    (seed, salt): (u64, u64),
    mut draw: impl FnMut(&str, &mut SplitMix64, String) -> Option<crate::task::Task>,
) -> crate::suite::Suite {
    let mut tasks = Vec::new();
    for (index, family) in families.iter().enumerate() {
        for sample in 0..samples {
            let mut mixer = SplitMix64::new(seed);
            let mut rng = SplitMix64::new(
                mixer.next_u64()
                    ^ (index as u64 + 1).wrapping_mul(salt)
                    ^ u64::from(sample + 1).wrapping_mul(0xE703_7ED1_A0B4_28DB),
            );
            tasks.extend(draw(family, &mut rng, format!("{name}-{family}-{sample}")));
        }
    }
    crate::suite::Suite::new(name, tasks)
}

/// The task of a drawn vision spec.
pub fn vision_task(
    id: impl Into<String>,
    prompt: &str,
    spec: VisionSpec,
    budget_tokens: u32,
) -> crate::task::Task {
    let checker = checker_of(&spec.gold);
    let id = id.into();
    // The task's id opens its text, so that tasks of one family never share a prompt.
    let task = crate::task::Task::new(
        id.clone(),
        crate::task::Category::VISION,
        format!("Question {id}. {prompt}"),
        budget_tokens,
        checker,
    );
    task.with_spec(spec)
}

/// The self-check of one vision task: its images decode and show the gold (from the pixels);
/// the proof refuses the same images against a wrong gold, and (counting families) an image
/// drawn with one item fewer; the checker takes the gold and refuses a near miss, a cut-off and
/// an answer only in the reasoning. Gives the number of checks and every failure.
pub fn prove_vision_task(task: &crate::task::Task) -> (usize, Vec<String>) {
    let mut proof = crate::proof::Proof::default();
    let Some(spec) = task.spec::<VisionSpec>() else {
        proof.require(false, "a vision task without its spec");
        return proof.finish();
    };
    // The images are decoded once: the gold must hold on what they show, and a wrong gold
    // over the same pixels must be refused (the proof bites).
    match decoded(spec) {
        Ok(images) => {
            proof.require_none(prove_images(spec, &images, &spec.gold));
            proof.require(
                !prove_images(spec, &images, &wrong_gold(&spec.gold)).is_empty(),
                "the proof accepts a wrong gold over the same images",
            );
        }
        Err(failures) => proof.require_none(failures),
    }
    if spec.family == "count-squares"
        && let Some(control) = one_square_fewer(spec)
    {
        proof.require(
            !prove_vision(&control).is_empty(),
            "the proof accepts an image with one square fewer than its gold",
        );
    }
    probe_checker(&mut proof, task, &spec.gold);
    proof.finish()
}

/// The checker probes of a generated media task: it takes the gold in any case and refuses a
/// near miss, a cut-off and an answer only in the reasoning.
pub(crate) fn probe_checker(
    proof: &mut crate::proof::Proof,
    task: &crate::task::Task,
    gold: &VisionGold,
) {
    use crate::task::{OutcomeKind, Reply};
    let (gold_text, near) = answer_texts(gold);
    proof.grades(
        task,
        "the gold (any case)",
        &Reply::stopped(format!("Looking at it.\nANSWER: {gold_text}")),
        OutcomeKind::Pass,
    );
    proof.grades(
        task,
        "a near miss",
        &Reply::stopped(format!("ANSWER: {near}")),
        OutcomeKind::Wrong,
    );
    proof.refuses_cut_off_and_reasoning(task, &gold_text);
}

/// The count-squares image redrawn with one asked square fewer (the negative control).
fn one_square_fewer(spec: &VisionSpec) -> Option<VisionSpec> {
    let asked = spec.parameters["asked"].as_str()?;
    let mut image = Image::from_png(spec.images.first()?).ok()?;
    let (_, b) = *image.regions(colour(asked)).first()?;
    image.fill_rect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0, WHITE);
    let mut control = spec.clone();
    control.images = vec![image.to_png()];
    Some(control)
}

/// The images of a request, made unique: a strip of grey pixels (never a palette colour, never
/// dark enough to read as ink) along the bottom row, drawn from `nonce`, so a multimodal prefix
/// cache cannot hit. The proof still holds on the result.
pub fn unique_images(spec: &VisionSpec, nonce: u64) -> Vec<Vec<u8>> {
    let mut rng = SplitMix64::new(nonce);
    spec.images
        .iter()
        .map(|png| match Image::from_png(png) {
            Ok(mut image) => {
                let y = image.height - 1;
                for x in 0..image.width {
                    let grey = 150 + u8::try_from(rng.below(80)).unwrap_or(0);
                    image.put(i64::from(x), i64::from(y), [grey, grey, grey]);
                }
                image.to_png()
            }
            Err(_) => png.clone(),
        })
        .collect()
}
