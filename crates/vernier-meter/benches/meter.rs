//! Cost per event of the meter: (a) `Meter::observe` alone; (b) SSE decode + JSON parse of a
//! typical vLLM chat chunk + meter update.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use vernier_meter::{Meter, Observation};
use vernier_openai::{ChatChunk, SseDecoder, SseEvent, StampedChunk, observation};

const EVENTS_PER_BATCH: usize = 1024;

fn observe_alone(criterion: &mut Criterion) {
    let origin = Instant::now();
    let events: Vec<Observation> = (0..EVENTS_PER_BATCH as u64)
        .map(|index| {
            Observation::new(origin + Duration::from_micros(index * 7_000))
                .with_content_bytes(12)
                .with_token_ids(3)
        })
        .collect();
    let mut group = criterion.benchmark_group("meter");
    group.throughput(Throughput::Elements(EVENTS_PER_BATCH as u64));
    let mut meter = Meter::new(origin, EVENTS_PER_BATCH);
    group.bench_function("observe_per_1024_events", |bencher| {
        bencher.iter(|| {
            meter.restart(origin);
            for event in &events {
                meter.observe(black_box(event));
            }
            black_box(meter.n_events())
        });
    });
    group.finish();
}

/// A vLLM chat chunk with 3 tokens of content and `return_token_ids`, as framed on the wire.
const VLLM_CHUNK: &[u8] = br#"data: {"id":"chatcmpl-8f3c2a9e1b7d4c6f9a0e","object":"chat.completion.chunk","created":1733912345,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" the quick fox"},"logprobs":null,"finish_reason":null,"stop_reason":null,"token_ids":[279,4062,39935]}]}

"#;

fn decode_parse_observe(criterion: &mut Criterion) {
    assert!(
        (250..=350).contains(&VLLM_CHUNK.len()),
        "chunk is {} bytes",
        VLLM_CHUNK.len()
    );
    let mut group = criterion.benchmark_group("meter");
    group.throughput(Throughput::Elements(EVENTS_PER_BATCH as u64));
    group.bench_function("sse_json_observe_per_1024_events", |bencher| {
        bencher.iter_batched_ref(
            || {
                (
                    SseDecoder::default(),
                    Vec::<SseEvent>::with_capacity(4),
                    Meter::new(Instant::now(), EVENTS_PER_BATCH),
                )
            },
            |(decoder, events, meter)| {
                for _ in 0..EVENTS_PER_BATCH {
                    events.clear();
                    decoder
                        .decode(black_box(VLLM_CHUNK), events)
                        .expect("well-formed chunk");
                    let at = Instant::now();
                    for event in events.iter() {
                        let chunk: ChatChunk =
                            serde_json::from_str(&event.data).expect("valid chunk JSON");
                        meter.observe(&observation(&StampedChunk::new(
                            at,
                            chunk,
                            event.data.len(),
                        )));
                    }
                }
                assert_eq!(meter.n_events(), EVENTS_PER_BATCH);
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, observe_alone, decode_parse_observe);
criterion_main!(benches);
