//! `Meter::observe` must not allocate while within the capacity given to `Meter::new`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use vernier_meter::{Final, Meter, Observation};

/// Counts allocations made by the current thread (tests run on parallel threads).
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_allocation() {
    // `try_with` avoids touching the slot after it has been torn down at thread exit.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

#[expect(
    unsafe_code,
    reason = "a counting global allocator must implement the unsafe GlobalAlloc trait"
)]
// SAFETY: every method forwards to the system allocator with the caller's arguments unchanged.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_allocation();
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(pointer, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_during(work: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    work();
    ALLOCATIONS.with(Cell::get) - before
}

fn typical_event(meter: &Meter, index: u64) -> Observation {
    let at = meter.request_sent_at() + std::time::Duration::from_millis(index);
    Observation::new(at)
        .with_content_bytes(9)
        .with_token_ids(3)
        .with_cumulative_completion_tokens(3 * index)
}

#[test]
fn observe_within_capacity_does_not_allocate() {
    let expected_events = 4096;
    let mut meter = Meter::new(std::time::Instant::now(), expected_events);
    let events: Vec<Observation> = (1..=4096)
        .map(|index| typical_event(&meter, index))
        .collect();
    let allocations = allocations_during(|| {
        meter.headers_received(meter.request_sent_at());
        for event in &events {
            meter.observe(event);
        }
    });
    assert_eq!(
        allocations, 0,
        "observe allocated within the preallocated capacity"
    );
    assert_eq!(meter.n_events(), 4096);
}

#[test]
fn a_restarted_meter_reuses_its_buffer() {
    let mut meter = Meter::new(std::time::Instant::now(), 64);
    let events: Vec<Observation> = (1..=64).map(|index| typical_event(&meter, index)).collect();
    for event in &events {
        meter.observe(event);
    }
    let allocations = allocations_during(|| {
        meter.restart(std::time::Instant::now());
        for event in &events {
            meter.observe(event);
        }
    });
    assert_eq!(allocations, 0, "a restarted meter allocated");
    assert_eq!(meter.n_events(), 64);
}

#[test]
fn the_counter_sees_allocation_past_capacity() {
    // Proves the counting allocator works: growing past the capacity must be seen.
    let mut meter = Meter::new(std::time::Instant::now(), 2);
    let events: Vec<Observation> = (1..=3).map(|index| typical_event(&meter, index)).collect();
    let allocations = allocations_during(|| {
        for event in &events {
            meter.observe(event);
        }
    });
    assert!(allocations >= 1, "growing past capacity should allocate");
    assert!(meter.capacity() >= 3);
}

#[test]
fn finish_after_no_allocation_stream_still_measures() {
    let mut meter = Meter::new(std::time::Instant::now(), 16);
    for index in 1..=10 {
        let event = typical_event(&meter, index);
        meter.observe(&event);
    }
    let measurement = meter.finish(&Final::new(
        meter.request_sent_at() + std::time::Duration::from_millis(11),
    ));
    assert_eq!(measurement.completion_tokens, 30);
}
