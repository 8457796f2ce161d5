//! The video suite's clips, checked by an independent decoder: `ffprobe` (Debian's `ffmpeg`)
//! decodes every MP4 a task records and must find one H.264 stream in yuv420p with the frame
//! count, size and rate the task recorded. And a generator broken on purpose is named by the
//! self-check, for video and vision alike.

use std::path::PathBuf;
use std::process::Command;

use vernier_tasks::{
    Category, VIDEO_FPS, VideoSpec, render_videos, unique_videos, video_suite, vision_suite,
};

use crate::self_check::{failures_of, task_mut};

fn ffprobe() -> PathBuf {
    let path =
        std::env::var_os("VERNIER_FFPROBE").map_or_else(|| PathBuf::from("ffprobe"), PathBuf::from);
    let found = Command::new(&path)
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "this test needs ffprobe: install Debian's ffmpeg (`apt-get install --no-install-recommends ffmpeg`; .ci/run does), or set VERNIER_FFPROBE to its path"
    );
    path
}

/// What ffprobe reads off an MP4, decoding every frame (`-count_frames`).
fn probe(ffprobe: &PathBuf, file: &std::path::Path) -> serde_json::Value {
    let output = Command::new(ffprobe)
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args([
            "-show_entries",
            "stream=codec_name,pix_fmt,width,height,nb_read_frames,r_frame_rate",
        ])
        .args(["-of", "json"])
        .arg(file)
        .output()
        .expect("ffprobe runs");
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("ffprobe's JSON");
    json["streams"][0].clone()
}

#[test]
fn every_clip_decodes_in_ffprobe_with_the_recorded_frames_and_size() {
    let ffprobe = ffprobe();
    let folder = tempfile::tempdir().expect("temporary folder");
    let suite = video_suite(11, 500);
    assert_eq!(suite.count(Category::VIDEO), 10);
    let mut n_files = 0;
    for task in &suite.tasks {
        let spec = task.spec::<VideoSpec>().expect("a video spec");
        // The clips the self-check proves, and the ones a request sends.
        let sent = unique_videos(spec, 77).expect("the clips encode");
        for (k, bytes) in spec.videos.iter().chain(&sent).enumerate() {
            let file = folder.path().join(format!("{}-{k}.mp4", task.id));
            std::fs::write(&file, bytes).expect("write the clip");
            let stream = probe(&ffprobe, &file);
            assert_eq!(stream["codec_name"], "h264", "{}: {stream}", task.id);
            assert_eq!(stream["pix_fmt"], "yuv420p", "{}: {stream}", task.id);
            assert_eq!(stream["width"], spec.width, "{}: {stream}", task.id);
            assert_eq!(stream["height"], spec.height, "{}: {stream}", task.id);
            assert_eq!(
                stream["nb_read_frames"],
                spec.n_frames.to_string(),
                "{}: {stream}",
                task.id
            );
            assert_eq!(
                stream["r_frame_rate"],
                format!("{VIDEO_FPS}/1"),
                "{}",
                task.id
            );
            n_files += 1;
        }
    }
    // compare-speed sends two clips.
    assert_eq!(n_files, 2 * (10 + 2));
}

#[test]
fn a_video_generator_broken_on_purpose_is_named_by_the_self_check() {
    let mut suite = video_suite(2, 500);
    let broken = "video-ball-bounces-1";
    // The ball drawn still from the second frame on: no bounce, whatever the gold says.
    let spec = task_mut(&mut suite, broken)
        .spec_mut::<VideoSpec>()
        .expect("spec");
    let mut frames = render_videos(spec, None).expect("frames").remove(0);
    let still = frames[1].clone();
    for frame in frames.iter_mut().skip(1) {
        frame.clone_from(&still);
    }
    spec.videos = vec![vernier_tasks::encode_mp4(&frames, spec.fps).expect("encodes")];
    let failures = failures_of(&suite);
    assert!(!failures.is_empty());
    assert!(failures.iter().all(|(id, _)| id == broken), "{failures:?}");
    assert!(
        failures
            .iter()
            .any(|(_, reason)| reason.contains("the decoded frames show Integer(0)")),
        "{failures:?}"
    );
}

#[test]
fn a_vision_generator_broken_on_purpose_is_named_by_the_self_check() {
    let mut suite = vision_suite(2, 500);
    let broken = "vision-count-squares-1";
    let spec = task_mut(&mut suite, broken)
        .spec_mut::<vernier_tasks::VisionSpec>()
        .expect("spec");
    // A blank canvas where the grid should be.
    spec.images = vec![vernier_tasks::Image::new(384, 384).to_png()];
    let failures = failures_of(&suite);
    assert!(!failures.is_empty());
    assert!(failures.iter().all(|(id, _)| id == broken), "{failures:?}");
}
