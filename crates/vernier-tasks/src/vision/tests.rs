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
    let spec = task.spec::<VisionSpec>().expect("spec");
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
        .spec::<VisionSpec>()
        .cloned()
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
        let spec = task.spec::<VisionSpec>().expect("spec");
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
        vision_suite(9, 10).tasks[0].spec::<VisionSpec>(),
        vision_suite(10, 10).tasks[0].spec::<VisionSpec>()
    );
}
