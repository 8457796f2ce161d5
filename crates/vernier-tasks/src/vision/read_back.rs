//! Reading a vision task's answer back from the decoded PNGs alone: regions of each colour and
//! their shapes, bar heights and the text a box covers, checked against the gold.

use super::spec::{VisionGold, VisionSpec};
use crate::canvas::{BLACK, Image, PALETTE, TextBox, colour};

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

/// Adds a failure when the pixels show `seen` and the gold says otherwise.
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
pub(super) fn decoded(spec: &VisionSpec) -> Result<Vec<Image>, Vec<String>> {
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
pub(super) fn prove_images(spec: &VisionSpec, images: &[Image], gold: &VisionGold) -> Vec<String> {
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
