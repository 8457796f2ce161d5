//! What `capture_body` (behind `sweep --capture N`) costs a measured stream: one whole
//! 512-token stream from the simulator over loopback, read event by event, with the body kept
//! byte for byte and without. The simulator decodes with no delay, so the time is the client's
//! and the loopback's, and any cost of keeping the frames shows in full.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use vernier_openai::{ChatMessage, ChatRequest, Client, ClientBuilder, StreamOptions};
use vernier_sim::{Sim, SimConfig};

const TOKENS: u64 = 512;

fn request() -> ChatRequest {
    let mut request = ChatRequest::new(
        "vernier-sim",
        vec![ChatMessage::user("Write about rivers and the sea.")],
    );
    request.max_tokens = Some(TOKENS);
    request.stream_options = Some(StreamOptions::usage(true));
    request
        .with_extra("return_token_ids", true)
        .with_extra("ignore_eos", true)
}

/// Reads one stream to its end; returns the events read.
async fn one_stream(client: &Client, request: &ChatRequest, capture: bool) -> usize {
    let Ok(mut stream) = client.chat_stream(request).await else {
        panic!("the simulator refused the stream");
    };
    if capture {
        stream.capture_body();
    }
    let mut events = 0;
    while let Some(event) = stream.next_event().await {
        assert!(event.is_ok(), "the simulator's stream broke");
        events += 1;
    }
    if capture {
        std::hint::black_box(stream.take_capture());
    }
    events
}

fn capture_on_and_off(criterion: &mut Criterion) {
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        panic!("a tokio runtime");
    };
    let config = SimConfig::builder()
        .decode_step(Duration::ZERO)
        .prefill_tokens_per_s(1.0e9)
        .fixed_overhead(Duration::ZERO)
        .build();
    let Ok(sim) = runtime.block_on(Sim::start(config)) else {
        panic!("the simulator starts");
    };
    let Ok(client) = ClientBuilder::new(&format!("{}/v1", sim.base_url())).build() else {
        panic!("a client");
    };
    let request = request();
    let mut group = criterion.benchmark_group("stream_512_tokens");
    group.throughput(Throughput::Elements(TOKENS));
    // Each side's stream is timed alternately with an untimed stream of the other side. On a
    // shared machine whichever benchmark runs second can still be slower by a quarter to a half
    // with identical work (12.4 against 19.4 ms was seen with both sides off), so compare the
    // sides run alone: `cargo bench -p vernier-openai --bench capture -- capture_off`, then
    // `-- capture_on`.
    for (name, capture) in [("capture_off", false), ("capture_on", true)] {
        group.bench_function(name, |bencher| {
            bencher.iter_custom(|iterations| {
                let mut timed = Duration::ZERO;
                for _ in 0..iterations {
                    runtime.block_on(one_stream(&client, &request, !capture));
                    let start = Instant::now();
                    std::hint::black_box(runtime.block_on(one_stream(&client, &request, capture)));
                    timed += start.elapsed();
                }
                timed
            });
        });
    }
    group.finish();
    runtime.block_on(sim.shutdown());
}

criterion_group!(benches, capture_on_and_off);
criterion_main!(benches);
