use super::*;

#[test]
fn every_family_draws_clips_its_proof_accepts_and_a_broken_one_fails() {
    let suite = video_suite(3, 500);
    assert_eq!(
        suite.tasks.len(),
        VIDEO_FAMILIES.len() * VIDEO_SAMPLES as usize
    );
    for task in &suite.tasks {
        let (n, failures) = prove_video_task(task);
        assert!(failures.is_empty(), "{}: {failures:?}", task.id);
        assert!(n >= 6, "{}", task.id);
    }
}

#[test]
fn the_controls_fail_naming_what_the_pixels_show() {
    let suite = video_suite(5, 500);
    for id in [
        "video-ball-bounces-0",
        "video-colour-order-0",
        "video-count-moving-0",
    ] {
        let spec = suite
            .task(id)
            .expect("task")
            .spec::<VideoSpec>()
            .cloned()
            .expect("spec");
        let control = broken_control(&spec).expect("a control");
        let failures = prove_video(&control);
        assert!(
            failures.iter().any(|f| f.contains("the gold says")),
            "{id}: {failures:?}"
        );
    }
    // A clip with a frame missing is refused by its count.
    let mut spec = suite
        .task("video-shape-direction-0")
        .expect("task")
        .spec::<VideoSpec>()
        .cloned()
        .expect("spec");
    let mut frames = render_videos(&spec, None).expect("frames").remove(0);
    frames.pop();
    spec.videos = vec![encode_mp4(&frames, VIDEO_FPS).expect("encodes")];
    let failures = prove_video(&spec);
    assert!(
        failures.iter().any(|f| f.contains("frames")),
        "{failures:?}"
    );
}

#[test]
fn unique_videos_differ_per_nonce_and_still_prove() {
    let suite = video_suite(1, 500);
    for task in &suite.tasks {
        let spec = task.spec::<VideoSpec>().expect("spec");
        let mut a = spec.clone();
        a.videos = unique_videos(spec, 1).expect("encodes");
        let b = unique_videos(spec, 2).expect("encodes");
        assert_ne!(a.videos, b, "{}", task.id);
        assert!(
            prove_video(&a).is_empty(),
            "{}: {:?}",
            task.id,
            prove_video(&a)
        );
        let frames = unique_frames(spec, 1).expect("frames");
        assert_eq!(frames.len(), spec.videos.len());
        assert_eq!(frames[0].len(), 12, "{}", task.id);
        assert!((frames[0][1].0 - 0.5).abs() < 1e-9);
    }
}

#[test]
fn the_same_seed_draws_the_same_suite() {
    assert_eq!(video_suite(9, 10), video_suite(9, 10));
    assert_ne!(
        video_suite(9, 10).tasks[0].spec::<VideoSpec>(),
        video_suite(10, 10).tasks[0].spec::<VideoSpec>()
    );
}
