//! Reading a video task's answer back from pixels alone: tracking the ball and the shapes,
//! reading the background's colour, and decoding each MP4 again to prove its clips show the gold
//! at the full frame rate and at the sampled one.

use super::spec::{
    FRAMES_PER_SECOND_SAMPLED, VIDEO_HEIGHT, VIDEO_WIDTH, VideoSpec, WALL, sampled_indices,
};
use crate::canvas::{Image, PALETTE, Rgb, colour};
use crate::movie::decode_mp4;
use crate::vision::VisionGold;

/// Whether a decoded pixel is the drawn colour `rgb` (the codec moves colours a little).
fn near(pixel: Rgb, rgb: Rgb) -> bool {
    pixel
        .iter()
        .zip(rgb)
        .map(|(a, b)| (i32::from(*a) - i32::from(b)).pow(2))
        .sum::<i32>()
        < 60 * 60
}

/// The centre of the pixels near `rgb` (fewer than 12: `None`). Rows from `y0` to `y1` only.
fn centroid(image: &Image, rgb: Rgb, y0: u32, y1: u32) -> Option<(f64, f64)> {
    centroid_counted(image, rgb, y0, y1).map(|(x, y, _)| (x, y))
}

/// [`centroid`], with the number of pixels it averaged.
fn centroid_counted(image: &Image, rgb: Rgb, y0: u32, y1: u32) -> Option<(f64, f64, u32)> {
    let (mut sx, mut sy, mut n) = (0.0, 0.0, 0u32);
    for y in y0..y1.min(image.height) {
        for x in 0..image.width {
            if near(image.get(x, y), rgb) {
                sx += f64::from(x);
                sy += f64::from(y);
                n += 1;
            }
        }
    }
    (n >= 12).then(|| (sx / f64::from(n), sy / f64::from(n), n))
}

/// The centre of the `rgb` object in every frame, rows `y0` to `y1` only.
fn track(frames: &[Image], rgb: Rgb, y0: u32, y1: u32) -> Result<Vec<(f64, f64)>, String> {
    frames
        .iter()
        .enumerate()
        .map(|(i, frame)| {
            centroid(frame, rgb, y0, y1).ok_or(format!("frame {i} shows no {rgb:?} object"))
        })
        .collect()
}

/// How often a coordinate turns back: sign changes of its steps, still steps left out.
fn reversals(values: impl Iterator<Item = f64>) -> usize {
    let values: Vec<f64> = values.collect();
    let signs: Vec<bool> = values
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| d.abs() > 0.75)
        .map(|d| d > 0.0)
        .collect();
    signs.windows(2).filter(|w| w[0] != w[1]).count()
}

/// The palette colour a decoded pixel shows, if any.
fn palette_name(pixel: Rgb) -> Option<&'static str> {
    PALETTE
        .iter()
        .find(|(_, rgb)| near(pixel, *rgb))
        .map(|(name, _)| *name)
}

/// What the frames of the clips show, read from their pixels alone (the gold's shape).
pub(super) fn read_answer(
    family: &str,
    clips: &[Vec<Image>],
    fps: f64,
) -> Result<VisionGold, String> {
    let first = clips.first().ok_or("the task has no video")?;
    let red = colour("red");
    Ok(match family {
        "ball-bounces" => {
            let path = track(first, red, 0, VIDEO_HEIGHT)?;
            let turns = reversals(path.iter().map(|p| p.0)) + reversals(path.iter().map(|p| p.1));
            VisionGold::Integer(turns as i128)
        }
        "shape-direction" => {
            let path = track(first, colour("blue"), 0, VIDEO_HEIGHT)?;
            let (Some(a), Some(b)) = (path.first(), path.last()) else {
                return Err("no frames".to_owned());
            };
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            if dx.abs().max(dy.abs()) < 20.0 {
                return Err(format!("the square moves only ({dx:.1}, {dy:.1}) pixels"));
            }
            let word = match (dx.abs() > dy.abs(), dx > 0.0, dy > 0.0) {
                (true, true, _) => "right",
                (true, false, _) => "left",
                (false, _, true) => "down",
                (false, _, false) => "up",
            };
            VisionGold::Word(word.to_owned())
        }
        "colour-order" => {
            let mut order: Vec<String> = Vec::new();
            for (i, frame) in first.iter().enumerate() {
                let name = palette_name(frame.get(VIDEO_WIDTH / 2, VIDEO_HEIGHT / 2))
                    .ok_or(format!("frame {i}: the background is no palette colour"))?;
                if order.last().map(String::as_str) != Some(name) {
                    order.push(name.to_owned());
                }
            }
            VisionGold::Words(order)
        }
        "count-moving" => {
            let lane_height = (VIDEO_HEIGHT - 2 * WALL) / 5;
            let (Some(start), Some(end)) = (first.first(), first.last()) else {
                return Err("no frames".to_owned());
            };
            let mut moving = 0;
            for lane in 0..5 {
                let (y0, y1) = (WALL + lane * lane_height, WALL + (lane + 1) * lane_height);
                // The lane's shape is the palette colour that covers most of it.
                let found = PALETTE
                    .iter()
                    .filter_map(|(name, rgb)| {
                        centroid_counted(start, *rgb, y0, y1).map(|(_, _, n)| (n, *name))
                    })
                    .max();
                let Some((_, name)) = found else {
                    return Err(format!("lane {lane} holds no shape"));
                };
                let rgb = colour(name);
                match (centroid(start, rgb, y0, y1), centroid(end, rgb, y0, y1)) {
                    (Some(a), Some(b)) if (b.0 - a.0).abs() > 8.0 => moving += 1,
                    (Some(_), Some(_)) => {}
                    _ => return Err(format!("the {name} shape leaves its lane")),
                }
            }
            VisionGold::Integer(moving)
        }
        "compare-speed" => {
            let speeds: Vec<f64> = clips
                .iter()
                .map(|frames| {
                    let path = track(frames, red, 0, VIDEO_HEIGHT)?;
                    let distance: f64 = path.windows(2).map(|w| (w[1].0 - w[0].0).abs()).sum();
                    Ok(distance * fps / (path.len().max(2) - 1) as f64)
                })
                .collect::<Result<_, String>>()?;
            match speeds.as_slice() {
                [a, b] if a.max(*b) > 1.3 * a.min(*b) => {
                    VisionGold::Word(if a > b { "first" } else { "second" }.to_owned())
                }
                other => return Err(format!("the balls' speeds {other:?} are too close to tell")),
            }
        }
        other => return Err(format!("no reading for the family {other}")),
    })
}

/// The frames of each clip a server without video input is sent ([`sampled_indices`]).
pub(super) fn sample(clips: &[Vec<Image>], fps: u32) -> Vec<Vec<Image>> {
    clips
        .iter()
        .map(|frames| {
            sampled_indices(fps, frames.len() as u32)
                .into_iter()
                .filter_map(|(i, _)| frames.get(i as usize).cloned())
                .collect()
        })
        .collect()
}

/// Adds a failure when `seen` is not `gold` or could not be read; `what` names the frames.
fn expect(
    failures: &mut Vec<String>,
    gold: &VisionGold,
    what: &str,
    seen: &Result<VisionGold, String>,
) {
    match seen {
        Ok(seen) if seen == gold => {}
        Ok(seen) => failures.push(format!("{what} show {seen:?}, the gold says {gold:?}")),
        Err(error) => failures.push(format!("{what}: {error}")),
    }
}

/// What a spec's clips show once decoded again: the answer read at the full rate and at the
/// rate `--video-as frames` sends.
pub(super) struct ReadBack {
    full: Result<VisionGold, String>,
    sampled: Result<VisionGold, String>,
}

impl ReadBack {
    /// Each MP4 decoded again, its frame count and size checked against the spec, and the
    /// answer read back from its frames; every way that fails, when it does.
    pub(super) fn of(spec: &VideoSpec) -> Result<Self, Vec<String>> {
        if spec.videos.is_empty() {
            return Err(vec!["the task has no video".to_owned()]);
        }
        let mut failures = Vec::new();
        let mut clips = Vec::new();
        for (k, bytes) in spec.videos.iter().enumerate() {
            match decode_mp4(bytes) {
                Ok(decoded) => {
                    let shape = (
                        decoded.width,
                        decoded.height,
                        decoded.frames.len() as u32,
                        decoded.fps,
                    );
                    let recorded = (spec.width, spec.height, spec.n_frames, spec.fps);
                    if shape != recorded {
                        failures.push(format!(
                            "video {}: decoded (width, height, frames, fps) {shape:?}, recorded {recorded:?}",
                            k + 1
                        ));
                    }
                    clips.push(decoded.frames);
                }
                Err(error) => failures.push(format!("video {}: {error}", k + 1)),
            }
        }
        if !failures.is_empty() {
            return Err(failures);
        }
        Ok(Self {
            full: read_answer(&spec.family, &clips, f64::from(spec.fps)),
            sampled: read_answer(
                &spec.family,
                &sample(&clips, spec.fps),
                f64::from(FRAMES_PER_SECOND_SAMPLED),
            ),
        })
    }

    /// Every way the readings differ from `gold`.
    pub(super) fn against(&self, gold: &VisionGold) -> Vec<String> {
        let mut failures = Vec::new();
        expect(&mut failures, gold, "the decoded frames", &self.full);
        expect(
            &mut failures,
            gold,
            "the frames sent without video input",
            &self.sampled,
        );
        failures
    }
}

/// Every way the spec's clips fail to show what its gold says: each MP4 is decoded again, its
/// frame count and size checked against the spec, and the answer read back from its frames, at
/// the full rate and at the rate `--video-as frames` sends. Empty: proved.
pub fn prove_video(spec: &VideoSpec) -> Vec<String> {
    ReadBack::of(spec).map_or_else(|failures| failures, |seen| seen.against(&spec.gold))
}
