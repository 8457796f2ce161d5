//! Video tasks: short H.264 clips drawn from a recorded seed, each gold computed from the
//! parameters that drew it, and proved from the frames of the encoded MP4 before any model sees
//! it.
//!
//! Every clip is drawn from its parameters alone ([`render_videos`]), so the runner can draw it
//! again with a nonce strip for every request and encode it afresh. The proof decodes each MP4,
//! checks its frame count and size, and reads the answer back from the pixels (it tracks the
//! ball, the shapes and the background); it reads the frames a server without video input gets
//! ([`FRAMES_PER_SECOND_SAMPLED`]) the same way. A draw whose answer the sampled frames cannot
//! show is drawn again, so every task is answerable both ways.

#![expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "frame geometry: every coordinate and count is far below 2^31 (clips are 256×192, 48 frames)"
)]

mod read_back;
mod spec;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use serde_json::json;
use vernier_stats::SplitMix64;

use crate::canvas::{BLACK, Image, PALETTE, Rgb, WHITE, colour};
use crate::kind::Kind;
use crate::movie::encode_mp4;
use crate::task::{Category, Checker};
use crate::vision::VisionGold;

impl Category {
    /// Questions about generated videos.
    pub const VIDEO: Self = Self::new("video");
}

/// The video family: questions about generated clips, each gold tracked from the decoded
/// frames.
pub(crate) const KIND: Kind = Kind {
    category: Category::VIDEO,
    description: "questions about generated videos",
    default_budget: DEFAULT_VIDEO_BUDGET,
    fits: |checker| {
        matches!(
            checker,
            Checker::Integer(_) | Checker::Word(_) | Checker::WordList(_)
        )
    },
    prove: Some(prove_video_task),
};
use read_back::{ReadBack, read_answer, sample};
use spec::WALL;
pub use spec::{
    FRAMES_PER_SECOND_SAMPLED, VIDEO_FPS, VIDEO_FRAMES, VIDEO_HEIGHT, VIDEO_WIDTH, VideoSpec,
    sampled_indices,
};

pub use read_back::prove_video;

/// The video families, in catalogue order.
pub const VIDEO_FAMILIES: [&str; 5] = [
    "ball-bounces",
    "shape-direction",
    "colour-order",
    "count-moving",
    "compare-speed",
];

/// Video tasks per family in the bundled video suite.
pub const VIDEO_SAMPLES: u32 = 2;

/// The default completion budget of a video task.
pub const DEFAULT_VIDEO_BUDGET: u32 = 2_000;

/// The directions a `shape-direction` answer is chosen from.
pub const DIRECTIONS: [&str; 4] = ["left", "right", "up", "down"];

/// A ball or shape in a clip: where it starts, how fast it goes (pixels per frame) and what it
/// looks like.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Mover {
    x: f64,
    y: f64,
    vx: f64,
    vy: f64,
    /// Radius (disc) or half side (square).
    size: u32,
    square: bool,
    colour: Rgb,
    /// Reflects off the walls (else it must stay inside by construction).
    bounces: bool,
}

impl Mover {
    /// Positions frame by frame, and the frames at which it hit a wall on each axis.
    fn path(&self, n_frames: u32) -> (Vec<(f64, f64)>, Vec<u32>, Vec<u32>) {
        let lo = f64::from(WALL + self.size);
        let (hi_x, hi_y) = (
            f64::from(VIDEO_WIDTH - WALL - self.size - 1),
            f64::from(VIDEO_HEIGHT - WALL - self.size - 1),
        );
        let (mut x, mut y, mut vx, mut vy) = (self.x, self.y, self.vx, self.vy);
        let (mut hits_x, mut hits_y) = (Vec::new(), Vec::new());
        let mut positions = vec![(x, y)];
        for frame in 1..n_frames {
            x += vx;
            y += vy;
            if self.bounces {
                for (p, v, hi, hits) in [
                    (&mut x, &mut vx, hi_x, &mut hits_x),
                    (&mut y, &mut vy, hi_y, &mut hits_y),
                ] {
                    if *p > hi {
                        *p = 2.0 * hi - *p;
                        *v = -*v;
                        hits.push(frame);
                    } else if *p < lo {
                        *p = 2.0 * lo - *p;
                        *v = -*v;
                        hits.push(frame);
                    }
                }
            }
            positions.push((x, y));
        }
        (positions, hits_x, hits_y)
    }

    fn draw(&self, image: &mut Image, (x, y): (f64, f64)) {
        let (cx, cy) = (x.round() as u32, y.round() as u32);
        if self.square {
            image.fill_rect(
                cx - self.size,
                cy - self.size,
                2 * self.size,
                2 * self.size,
                self.colour,
            );
        } else {
            image.fill_circle(cx, cy, self.size, self.colour);
        }
    }
}

/// What one clip holds: a background per frame and the movers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Clip {
    /// Background colour runs: (colour, frames).
    backgrounds: Vec<(Rgb, u32)>,
    movers: Vec<Mover>,
    walls: bool,
}

impl Clip {
    fn frames(&self, n_frames: u32, nonce: Option<u64>) -> Vec<Image> {
        let paths: Vec<Vec<(f64, f64)>> = self.movers.iter().map(|m| m.path(n_frames).0).collect();
        let mut backgrounds = self
            .backgrounds
            .iter()
            .flat_map(|(rgb, n)| std::iter::repeat_n(*rgb, *n as usize));
        let mut rng = nonce.map(SplitMix64::new);
        (0..n_frames as usize)
            .map(|frame| {
                let mut image = Image::new(VIDEO_WIDTH, VIDEO_HEIGHT);
                if let Some(rgb) = backgrounds.next() {
                    image.fill_rect(0, 0, VIDEO_WIDTH, VIDEO_HEIGHT, rgb);
                }
                if self.walls {
                    image.fill_rect(0, 0, VIDEO_WIDTH, WALL, BLACK);
                    image.fill_rect(0, VIDEO_HEIGHT - WALL, VIDEO_WIDTH, WALL, BLACK);
                    image.fill_rect(0, 0, WALL, VIDEO_HEIGHT, BLACK);
                    image.fill_rect(VIDEO_WIDTH - WALL, 0, WALL, VIDEO_HEIGHT, BLACK);
                }
                for (mover, path) in self.movers.iter().zip(&paths) {
                    mover.draw(&mut image, path[frame]);
                }
                if let Some(rng) = &mut rng {
                    // A grey strip along the bottom row, from the nonce: no two requests send
                    // the same pixels, and the proof still reads the clip.
                    let y = i64::from(VIDEO_HEIGHT - 1);
                    for x in 0..VIDEO_WIDTH {
                        let grey = 150 + u8::try_from(rng.below(80)).unwrap_or(0);
                        image.put(i64::from(x), y, [grey, grey, grey]);
                    }
                }
                image
            })
            .collect()
    }
}

fn clips_of(parameters: &serde_json::Value) -> Result<Vec<Clip>, String> {
    serde_json::from_value(parameters["clips"].clone())
        .map_err(|error| format!("the parameters hold no clips: {error}"))
}

/// The frames of every clip of `spec`, drawn from its parameters (with a nonce strip when
/// `nonce` is given).
pub fn render_videos(spec: &VideoSpec, nonce: Option<u64>) -> Result<Vec<Vec<Image>>, String> {
    Ok(clips_of(&spec.parameters)?
        .iter()
        .map(|clip| clip.frames(spec.n_frames, nonce))
        .collect())
}

fn signed(rng: &mut SplitMix64, low: u64, high: u64) -> f64 {
    let speed = rng.range(low, high) as f64;
    if rng.chance(1, 2) { speed } else { -speed }
}

fn white_clip(movers: Vec<Mover>, walls: bool) -> Clip {
    Clip {
        backgrounds: vec![(WHITE, VIDEO_FRAMES)],
        movers,
        walls,
    }
}

fn ball(rng: &mut SplitMix64, vx: f64, vy: f64) -> Mover {
    let size = 10;
    let lo = u64::from(WALL + size + 2);
    Mover {
        x: rng.range(lo, u64::from(VIDEO_WIDTH - WALL - size - 3)) as f64,
        y: rng.range(lo, u64::from(VIDEO_HEIGHT - WALL - size - 3)) as f64,
        vx,
        vy,
        size,
        square: false,
        colour: colour("red"),
        bounces: true,
    }
}

const VIDEO_PREAMBLE: &str = "Watch the video closely.";

/// Draws one candidate of `family`: the prompt, the parameters and the gold. The caller keeps
/// it only if the frames show the gold at both frame rates.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per family, in catalogue order"
)]
fn draw_candidate(
    family: &str,
    rng: &mut SplitMix64,
) -> Option<(String, serde_json::Value, VisionGold)> {
    let answer_integer = crate::vision::answer_integer();
    Some(match family {
        "ball-bounces" => {
            let (vx, vy) = (signed(rng, 6, 15), signed(rng, 3, 9));
            let mover = ball(rng, vx, vy);
            let (_, hits_x, hits_y) = mover.path(VIDEO_FRAMES);
            let gold = (hits_x.len() + hits_y.len()) as i128;
            (
                format!(
                    "{VIDEO_PREAMBLE} A red ball moves inside a box with black walls. How many \
                     times does it bounce off a wall during the video? {answer_integer}"
                ),
                json!({"clips": [white_clip(vec![mover], true)], "hits_x": hits_x, "hits_y": hits_y}),
                VisionGold::Integer(gold),
            )
        }
        "shape-direction" => {
            let direction = *rng.pick(&DIRECTIONS);
            let speed = rng.range(2, 3) as f64;
            let size = 12;
            let (w, h) = (f64::from(VIDEO_WIDTH), f64::from(VIDEO_HEIGHT));
            let margin = f64::from(WALL + size + 4);
            let (x, y, vx, vy) = match direction {
                "right" => (margin, h / 2.0, speed, 0.0),
                "left" => (w - margin, h / 2.0, -speed, 0.0),
                "down" => (w / 2.0, margin, 0.0, speed * 0.7),
                _ => (w / 2.0, h - margin, 0.0, -speed * 0.7),
            };
            // Start somewhere across the other axis, and far enough from the end to stay in.
            let across = rng.range(40, 150) as f64;
            let (x, y) = if vx == 0.0 {
                (across.min(w - margin), y)
            } else {
                (x, (across * 0.7).clamp(margin, h - margin))
            };
            let shape = Mover {
                x,
                y,
                vx,
                vy,
                size,
                square: true,
                colour: colour("blue"),
                bounces: false,
            };
            (
                format!(
                    "{VIDEO_PREAMBLE} In which direction does the blue square move? Answer with \
                     one word from this list: left, right, up, down. End your reply with a line \
                     of the form `ANSWER: <direction>`."
                ),
                json!({"clips": [white_clip(vec![shape], false)], "direction": direction}),
                VisionGold::Word(direction.to_owned()),
            )
        }
        "colour-order" => {
            let mut names: Vec<&str> = PALETTE.iter().map(|(name, _)| *name).collect();
            rng.shuffle(&mut names);
            names.truncate(3);
            let first = rng.range(14, 18) as u32;
            let second = rng.range(14, 18) as u32;
            let runs = [first, second, VIDEO_FRAMES - first - second];
            let clip = Clip {
                backgrounds: names
                    .iter()
                    .zip(runs)
                    .map(|(name, n)| (colour(name), n))
                    .collect(),
                movers: Vec::new(),
                walls: false,
            };
            let list = PALETTE
                .iter()
                .map(|(name, _)| *name)
                .collect::<Vec<_>>()
                .join(", ");
            (
                format!(
                    "{VIDEO_PREAMBLE} The background changes colour. Name the background colours \
                     in the order they appear, from this list: {list}. End your reply with a line \
                     of the form `ANSWER: <colour>, <colour>, <colour>`."
                ),
                json!({"clips": [clip], "order": names, "runs": runs}),
                VisionGold::Words(names.iter().map(|n| (*n).to_owned()).collect()),
            )
        }
        "count-moving" => {
            let mut names: Vec<&str> = PALETTE.iter().map(|(name, _)| *name).collect();
            rng.shuffle(&mut names);
            names.truncate(5);
            let n_moving = rng.range(1, 4) as usize;
            let mut lanes: Vec<usize> = (0..5).collect();
            rng.shuffle(&mut lanes);
            let moving: Vec<usize> = lanes[..n_moving].to_vec();
            let lane_height = (VIDEO_HEIGHT - 2 * WALL) / 5;
            let movers = names
                .iter()
                .enumerate()
                .map(|(lane, name)| {
                    let moves = moving.contains(&lane);
                    let speed = if moves { rng.range(2, 3) as f64 } else { 0.0 };
                    let size = 9;
                    let travel = speed * f64::from(VIDEO_FRAMES - 1);
                    let room = f64::from(VIDEO_WIDTH - 2 * (WALL + size + 2)) - travel;
                    let start = f64::from(WALL + size + 2) + rng.below(room.max(1.0) as u64) as f64;
                    let right = rng.chance(1, 2);
                    Mover {
                        x: if right || !moves {
                            start
                        } else {
                            start + travel
                        },
                        y: f64::from(WALL + lane_height * lane as u32 + lane_height / 2),
                        vx: if right { speed } else { -speed },
                        vy: 0.0,
                        size,
                        square: lane % 2 == 0,
                        colour: colour(name),
                        bounces: false,
                    }
                })
                .collect();
            (
                format!(
                    "{VIDEO_PREAMBLE} Several coloured shapes are shown. How many of them move \
                     during the video? {answer_integer}"
                ),
                json!({"clips": [white_clip(movers, false)], "colours": names, "moving": moving}),
                VisionGold::Integer(n_moving as i128),
            )
        }
        "compare-speed" => {
            let slow = rng.range(3, 5) as f64;
            let fast = slow * (1.6 + rng.below(6) as f64 / 10.0);
            let faster_first = rng.chance(1, 2);
            let (a, b) = if faster_first {
                (fast, slow)
            } else {
                (slow, fast)
            };
            let clips: Vec<Clip> = [a, b]
                .into_iter()
                .map(|speed| {
                    let vx = if rng.chance(1, 2) { speed } else { -speed };
                    let mut mover = ball(rng, vx, 0.0);
                    mover.y = f64::from(VIDEO_HEIGHT / 2);
                    white_clip(vec![mover], true)
                })
                .collect();
            (
                format!(
                    "{VIDEO_PREAMBLE} Two videos follow, each of a red ball. In which video does \
                     the ball move faster? Answer `first` or `second`. End your reply with a line \
                     of the form `ANSWER: <first|second>`."
                ),
                json!({"clips": clips, "speeds": [a, b]}),
                VisionGold::Word(if faster_first { "first" } else { "second" }.to_owned()),
            )
        }
        _ => return None,
    })
}

/// Draws one task of `family` from `rng`: a candidate is kept once its drawn frames show its
/// gold at the full rate and at the sampled rate (at most 64 candidates).
pub(crate) fn draw_video(family: &str, rng: &mut SplitMix64) -> Option<(String, VideoSpec)> {
    for _ in 0..64 {
        let (prompt, parameters, gold) = draw_candidate(family, rng)?;
        let mut spec = VideoSpec {
            family: family.to_owned(),
            parameters,
            gold,
            width: VIDEO_WIDTH,
            height: VIDEO_HEIGHT,
            fps: VIDEO_FPS,
            n_frames: VIDEO_FRAMES,
            videos: Vec::new(),
        };
        let Ok(clips) = render_videos(&spec, None) else {
            continue;
        };
        let full = read_answer(family, &clips, f64::from(VIDEO_FPS));
        let sampled = read_answer(
            family,
            &sample(&clips, VIDEO_FPS),
            f64::from(FRAMES_PER_SECOND_SAMPLED),
        );
        if full.as_ref() != Ok(&spec.gold) || sampled.as_ref() != Ok(&spec.gold) {
            continue;
        }
        let videos: Result<Vec<Vec<u8>>, String> = clips
            .iter()
            .map(|frames| encode_mp4(frames, VIDEO_FPS))
            .collect();
        spec.videos = videos.ok()?;
        return Some((prompt, spec));
    }
    None
}

/// The video suite drawn from `seed`: [`VIDEO_SAMPLES`] tasks of every family, ids
/// `video-<family>-<k>`, each with its clips, gold and parameters.
pub fn video_suite(seed: u64, budget_tokens: u32) -> crate::suite::Suite {
    crate::vision::generated_suite(
        "video",
        &VIDEO_FAMILIES,
        VIDEO_SAMPLES,
        (seed, 0x9E37_79B9_7F4A_7C15),
        |family, rng, id| {
            draw_video(family, rng)
                .map(|(prompt, spec)| video_task(id, &prompt, spec, budget_tokens))
        },
    )
}

/// The task of a drawn video spec.
pub fn video_task(
    id: impl Into<String>,
    prompt: &str,
    spec: VideoSpec,
    budget_tokens: u32,
) -> crate::task::Task {
    let id = id.into();
    let task = crate::task::Task::new(
        id.clone(),
        crate::task::Category::VIDEO,
        format!("Question {id}. {prompt}"),
        budget_tokens,
        crate::vision::checker_of(&spec.gold),
    );
    task.with_spec(spec)
}

/// The clips of a request, drawn again from the parameters with a nonce strip along the bottom
/// row of every frame and encoded afresh, so a multimodal prefix cache cannot hit.
pub fn unique_videos(spec: &VideoSpec, nonce: u64) -> Result<Vec<Vec<u8>>, String> {
    render_videos(spec, Some(nonce))?
        .iter()
        .map(|frames| encode_mp4(frames, spec.fps))
        .collect()
}

/// A frame sent without video input: its time in seconds and the PNG.
pub type TimedFrame = (f64, Vec<u8>);

/// The frames of a request for a server without video input: per clip, the sampled frames
/// ([`sampled_indices`]) as PNG with their times in seconds, with the same nonce strip.
pub fn unique_frames(spec: &VideoSpec, nonce: u64) -> Result<Vec<Vec<TimedFrame>>, String> {
    let indices = sampled_indices(spec.fps, spec.n_frames);
    Ok(render_videos(spec, Some(nonce))?
        .iter()
        .map(|frames| {
            indices
                .iter()
                .filter_map(|(i, at)| frames.get(*i as usize).map(|f| (*at, f.to_png())))
                .collect()
        })
        .collect())
}

/// The self-check of one video task: its clips decode to the recorded frame count and size and
/// show the gold (tracked from the pixels); the proof refuses the same clips against a wrong
/// gold and a clip cut short before its last bounce or change; the checker takes the gold and
/// refuses a near miss, a cut-off and an answer only in the reasoning.
pub fn prove_video_task(task: &crate::task::Task) -> (usize, Vec<String>) {
    let mut proof = crate::proof::Proof::default();
    let Some(spec) = task.spec::<VideoSpec>() else {
        proof.require(false, "a video task without its spec");
        return proof.finish();
    };
    // The clips are decoded once: the gold must hold on what they show, and a wrong gold
    // must not.
    match ReadBack::of(spec) {
        Err(failures) => proof.require_none(failures),
        Ok(seen) => {
            proof.require_none(seen.against(&spec.gold));
            proof.require(
                !seen
                    .against(&crate::vision::wrong_gold(&spec.gold))
                    .is_empty(),
                "the proof accepts a wrong gold over the same video",
            );
        }
    }
    if let Some(control) = broken_control(spec) {
        proof.require(
            !prove_video(&control).is_empty(),
            "the proof accepts a video drawn without its last event",
        );
    }
    crate::vision::probe_checker(&mut proof, task, &spec.gold);
    proof.finish()
}

/// The negative control of the families that count events: the same clip drawn without its
/// last bounce (`ball-bounces`) or its last background (`colour-order`), or with one mover
/// stopped (`count-moving`), its gold unchanged.
fn broken_control(spec: &VideoSpec) -> Option<VideoSpec> {
    let mut clips = clips_of(&spec.parameters).ok()?;
    let clip = clips.first_mut()?;
    match spec.family.as_str() {
        "ball-bounces" => {
            // Freeze the ball from the frame of its last hit on: one bounce fewer.
            let last = spec.parameters["hits_x"]
                .as_array()
                .into_iter()
                .chain(spec.parameters["hits_y"].as_array())
                .flatten()
                .filter_map(serde_json::Value::as_u64)
                .max()?;
            let mut frames = clip.frames(spec.n_frames, None);
            let frozen = frames.get(last as usize - 1)?.clone();
            for frame in frames.iter_mut().skip(last as usize - 1) {
                frame.clone_from(&frozen);
            }
            let mut control = spec.clone();
            control.videos = vec![encode_mp4(&frames, spec.fps).ok()?];
            return Some(control);
        }
        "colour-order" => {
            let last = clip.backgrounds.pop()?;
            if let Some(previous) = clip.backgrounds.last_mut() {
                previous.1 += last.1;
            }
        }
        "count-moving" => {
            let mover = clip.movers.iter_mut().find(|m| m.vx != 0.0)?;
            mover.vx = 0.0;
        }
        _ => return None,
    }
    let mut control = spec.clone();
    control.parameters["clips"] = serde_json::to_value(&clips).ok()?;
    control.videos = render_videos(&control, None)
        .ok()?
        .iter()
        .map(|frames| encode_mp4(frames, spec.fps))
        .collect::<Result<_, _>>()
        .ok()?;
    Some(control)
}
