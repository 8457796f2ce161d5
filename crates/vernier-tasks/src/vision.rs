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

use serde::{Deserialize, Serialize};

use crate::canvas::{BLACK, GRID, Image, PALETTE, TextBox, WHITE, colour};
use crate::rng::SplitMix64;

/// The shape of a region, from how much of its bounding box it fills.
fn shape_of(pixels: u32, b: TextBox) -> &'static str {
    let area = f64::from((b.x1 - b.x0) * (b.y1 - b.y0));
    let fill = f64::from(pixels) / area.max(1.0);
    if fill > 0.95 {
        "square"
    } else if fill > 0.7 {
        "circle"
    } else if fill > 0.35 {
        "triangle"
    } else {
        "other"
    }
}

/// The gold of a vision task: an integer, or a word compared without regard to case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VisionGold {
    /// An integer.
    Integer(i128),
    /// A word from the closed list the prompt gives (or a made-up word to read).
    Word(String),
    /// Words from the closed list, all of them, in order (a video's background colours).
    Words(Vec<String>),
}

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

/// What a vision task is drawn from and what it shows: the family, its parameters, the
/// images (PNG) and, for text families, the box the text covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct VisionSpec {
    /// The family, e.g. `count-squares`.
    pub family: String,
    /// The parameters the images and the gold come from.
    pub parameters: serde_json::Value,
    /// The gold, computed from the parameters.
    pub gold: VisionGold,
    /// The images as PNG files, in the order the prompt names them.
    #[serde(skip)]
    pub images: Vec<Vec<u8>>,
    /// The box the rendered text covers (text families).
    pub text: Option<TextBox>,
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

fn expect(failures: &mut Vec<String>, gold: &VisionGold, what: &str, seen: &VisionGold) {
    if seen != gold {
        failures.push(format!(
            "{what}: the pixels show {seen:?}, the gold says {gold:?}"
        ));
    }
}

/// Every way the spec's images fail to show what its gold says, read from the decoded PNGs.
/// Empty: proved.
pub fn prove_vision(spec: &VisionSpec) -> Vec<String> {
    decoded(spec).map_or_else(
        |failures| failures,
        |images| prove_images(spec, &images, &spec.gold),
    )
}

/// The spec's PNGs decoded, or why they do not decode.
fn decoded(spec: &VisionSpec) -> Result<Vec<Image>, Vec<String>> {
    spec.images
        .iter()
        .map(|png| Image::from_png(png))
        .collect::<Result<_, _>>()
        .map_err(|error| vec![error])
}

/// Every way `images` (the spec's, decoded) fail to show `gold`. Empty: proved.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per family, in catalogue order"
)]
fn prove_images(spec: &VisionSpec, images: &[Image], gold: &VisionGold) -> Vec<String> {
    let mut failures = Vec::new();
    let Some(first) = images.first() else {
        return vec!["the task has no image".to_owned()];
    };
    let p = &spec.parameters;
    match spec.family.as_str() {
        "count-squares" => {
            let asked = p["asked"].as_str().unwrap_or_default();
            let regions = first.regions(colour(asked));
            let squares = regions
                .iter()
                .filter(|(n, b)| shape_of(*n, *b) == "square" && b.x1 - b.x0 == b.y1 - b.y0)
                .count();
            expect(
                &mut failures,
                gold,
                &format!("{asked} squares"),
                &VisionGold::Integer(squares as i128),
            );
        }
        "count-shapes" => {
            let circles: usize = PALETTE
                .iter()
                .map(|(_, rgb)| {
                    first
                        .regions(*rgb)
                        .iter()
                        .filter(|(n, b)| shape_of(*n, *b) == "circle")
                        .count()
                })
                .sum();
            expect(
                &mut failures,
                gold,
                "circles",
                &VisionGold::Integer(circles as i128),
            );
        }
        "read-number" | "read-word" | "arithmetic-text" | "code-output" => {
            let Some(ink) = first.ink_box() else {
                failures.push("no text is drawn".to_owned());
                return failures;
            };
            let margin = 4;
            if ink.x0 < margin
                || ink.y0 < margin
                || ink.x1 + margin > first.width
                || ink.y1 + margin > first.height
            {
                failures.push(format!("the text {ink:?} runs to the edge of the image"));
            }
            if spec.text != Some(ink) {
                failures.push(format!(
                    "the ink covers {ink:?}; the recorded text box is {:?}",
                    spec.text
                ));
            }
            let lines = p["text"].as_str().unwrap_or_default().split('\n').count() as u32;
            if (ink.y1 - ink.y0) / lines.max(1) < 20 {
                failures.push("the text is smaller than 20 pixels a line: not readable".to_owned());
            }
            // The gold is recomputed from the text the image was drawn with.
            let text = p["text"].as_str().unwrap_or_default();
            let recomputed = match spec.family.as_str() {
                "read-number" => text.parse().ok().map(VisionGold::Integer),
                "read-word" => Some(VisionGold::Word(text.to_owned())),
                "arithmetic-text" => {
                    let parts: Vec<i128> = text
                        .split(['+', '×'])
                        .filter_map(|s| s.trim().parse().ok())
                        .collect();
                    (parts.len() == 3).then(|| VisionGold::Integer(parts[0] + parts[1] * parts[2]))
                }
                _ => {
                    let value = |name: &str| {
                        text.lines()
                            .find_map(|l| l.strip_prefix(&format!("{name} = ")))
                            .and_then(|v| v.trim().parse::<i128>().ok())
                    };
                    let z = text
                        .rsplit("- ")
                        .next()
                        .and_then(|s| s.trim_end_matches(')').trim().parse::<i128>().ok());
                    match (value("a"), value("b"), z) {
                        (Some(a), Some(b), Some(z)) => Some(VisionGold::Integer(a * b - z)),
                        _ => None,
                    }
                }
            };
            match recomputed {
                Some(drawn) => expect(&mut failures, gold, "the text's value", &drawn),
                None => failures.push("the drawn text does not parse".to_owned()),
            }
        }
        "bar-tallest" | "bar-value" => {
            let mut bars: Vec<TextBox> = first
                .regions(colour("blue"))
                .into_iter()
                .map(|(_, b)| b)
                .collect();
            bars.sort_by_key(|b| b.x0);
            let per_unit = p["px_per_unit"].as_u64().unwrap_or(3) as u32;
            let heights: Vec<u32> = bars
                .iter()
                .map(|b| (b.y1 - b.y0) / per_unit.max(1))
                .collect();
            let values: Vec<u32> = p["values"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .filter_map(|x| x.as_u64().map(|x| x as u32))
                        .collect()
                })
                .unwrap_or_default();
            if heights != values {
                failures.push(format!(
                    "the bars measure {heights:?}; the parameters say {values:?}"
                ));
            }
            let labels = ["A", "B", "C", "D", "E"];
            if spec.family == "bar-tallest" {
                let tallest = heights
                    .iter()
                    .zip(labels)
                    .max_by_key(|(h, _)| **h)
                    .map_or("?", |(_, l)| l);
                expect(
                    &mut failures,
                    gold,
                    "the tallest bar",
                    &VisionGold::Word(tallest.to_owned()),
                );
            } else if let VisionGold::Integer(value) = *gold
                && !heights.iter().any(|h| i128::from(*h) == value)
            {
                failures.push(format!("no bar measures {value}"));
            }
        }
        "compare-dots" => {
            let counts: Vec<usize> = images.iter().map(|i| i.regions(BLACK).len()).collect();
            match counts.as_slice() {
                [a, b] if a != b => expect(
                    &mut failures,
                    gold,
                    "dots",
                    &VisionGold::Word(if a > b { "first" } else { "second" }.to_owned()),
                ),
                other => failures.push(format!("the two images hold {other:?} dots: no answer")),
            }
        }
        "spatial-left" => {
            let mut shapes: Vec<(u32, &str, &str)> = PALETTE
                .iter()
                .flat_map(|(name, rgb)| {
                    first
                        .regions(*rgb)
                        .into_iter()
                        .map(move |(n, b)| (b.x0, *name, shape_of(n, b)))
                })
                .collect();
            shapes.sort_by_key(|s| s.0);
            match shapes.iter().position(|s| s.1 == "blue" && s.2 == "square") {
                Some(at) if at > 0 => expect(
                    &mut failures,
                    gold,
                    "left of the blue square",
                    &VisionGold::Word(shapes[at - 1].1.to_owned()),
                ),
                _ => failures.push("no shape stands left of a blue square".to_owned()),
            }
        }
        "count-colours" => {
            let distinct = PALETTE
                .iter()
                .filter(|(_, rgb)| !first.regions(*rgb).is_empty())
                .count();
            expect(
                &mut failures,
                gold,
                "colours",
                &VisionGold::Integer(distinct as i128),
            );
        }
        other => failures.push(format!("no proof for the family {other}")),
    }
    failures
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
    let mut task = crate::task::Task::new(
        id.clone(),
        crate::task::Category::Vision,
        format!("Question {id}. {prompt}"),
        budget_tokens,
        checker,
    );
    task.vision = Some(spec);
    task
}

/// The self-check of one vision task: its images decode and show the gold (from the pixels);
/// the proof refuses the same images against a wrong gold, and (counting families) an image
/// drawn with one item fewer; the checker takes the gold and refuses a near miss, a cut-off and
/// an answer only in the reasoning. Gives the number of checks and every failure.
pub fn prove_vision_task(task: &crate::task::Task) -> (usize, Vec<String>) {
    let mut proof = crate::proof::Proof::default();
    let Some(spec) = &task.vision else {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_draws_images_its_proof_accepts_and_a_wrong_gold_fails() {
        let suite = vision_suite(3, 500);
        assert_eq!(
            suite.tasks.len(),
            VISION_FAMILIES.len() * VISION_SAMPLES as usize
        );
        for task in &suite.tasks {
            let (n, failures) = prove_vision_task(task);
            assert!(failures.is_empty(), "{}: {failures:?}", task.id);
            assert!(n >= 6, "{}", task.id);
        }
    }

    #[test]
    fn a_broken_generator_is_caught_by_the_pixels() {
        let suite = vision_suite(5, 500);
        let task = suite.task("vision-count-squares-0").expect("task");
        let spec = task.vision.as_ref().expect("spec");
        let control = one_square_fewer(spec).expect("a control");
        let failures = prove_vision(&control);
        assert!(
            failures.iter().any(|f| f.contains("squares")),
            "{failures:?}"
        );
        // A bar chart whose bar was drawn short.
        let bars = suite
            .task("vision-bar-value-0")
            .expect("task")
            .vision
            .clone()
            .expect("spec");
        let mut image = Image::from_png(&bars.images[0]).expect("png");
        let (_, b) = image.regions(colour("blue"))[0];
        image.fill_rect(b.x0, b.y0, b.x1 - b.x0, 3, WHITE);
        let mut short = bars.clone();
        short.images = vec![image.to_png()];
        assert!(!prove_vision(&short).is_empty());
    }

    #[test]
    fn unique_images_differ_per_nonce_and_still_prove() {
        let suite = vision_suite(1, 500);
        for task in &suite.tasks {
            let spec = task.vision.as_ref().expect("spec");
            let mut a = spec.clone();
            a.images = unique_images(spec, 1);
            let mut b = spec.clone();
            b.images = unique_images(spec, 2);
            assert_ne!(a.images, b.images, "{}", task.id);
            assert!(
                prove_vision(&a).is_empty(),
                "{}: {:?}",
                task.id,
                prove_vision(&a)
            );
        }
    }

    #[test]
    fn the_same_seed_draws_the_same_suite() {
        assert_eq!(vision_suite(9, 10), vision_suite(9, 10));
        assert_ne!(
            vision_suite(9, 10).tasks[0].vision,
            vision_suite(10, 10).tasks[0].vision
        );
    }
}
