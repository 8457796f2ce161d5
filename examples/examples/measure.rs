//! Measures one streamed chat completion and prints one JSON object.
//!
//! ```text
//! cargo run --release --example measure -- --base-url URL [--model M]
//!     [--max-tokens N | --max-completion-tokens N] [--prompt TEXT] [--api-key-env VAR]
//!     [--token-ids] [--continuous-usage] [--ignore-eos]
//! ```
//!
//! Without `--base-url` it starts the bundled simulator in-process (and says so on stderr).
//! Without `--model` it takes the first model of `/v1/models` whose id does not look like an
//! embedding, rerank, speech or moderation model (none of `embed`, `rerank`, `whisper`, `tts`,
//! `moderation` in it) and names it on stderr. The output cap goes out as `max_tokens`
//! (default 256); `--max-completion-tokens N` sends `max_completion_tokens` instead, for hosted
//! models that refuse `max_tokens` (a 400 naming `max_tokens` suggests it).
//! It always asks for `stream_options.include_usage`; `--token-ids` (vLLM `return_token_ids`),
//! `--continuous-usage` (vLLM per-chunk usage) and `--ignore-eos` add vendor fields that hosted
//! APIs may refuse. Exit status: 0 measured, 1 the request failed, 2 bad arguments, 3 the stream
//! broke off (the partial measurement is still printed, with `stream_error`).
#![expect(
    clippy::print_stderr,
    reason = "a command-line example reports errors and the simulator banner on stderr"
)]

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use vernier_examples::{max_tokens_rejected, pick_generation_model};
use vernier_meter::Measurement;
use vernier_openai::{ChatMessage, ChatRequest, Client, ClientBuilder, StreamOptions};
use vernier_sim::{Sim, SimConfig, SimHandle, TokensPerEvent};

/// Measure one streamed chat completion: TTFT, decode rate, tokens per event, token source.
#[derive(Debug, Parser)]
struct Arguments {
    /// Server root or `/v1` URL; without it the bundled simulator is started in-process.
    #[arg(long)]
    base_url: Option<String>,
    /// Model id. When omitted: the first of `/v1/models` whose id contains none of `embed`,
    /// `rerank`, `whisper`, `tts`, `moderation` (named on stderr).
    #[arg(long)]
    model: Option<String>,
    /// Output cap, sent as `max_tokens`.
    #[arg(long, default_value_t = 256)]
    max_tokens: u64,
    /// Output cap sent as `max_completion_tokens` instead of `max_tokens`, for hosted models
    /// that refuse `max_tokens`.
    #[arg(long, value_name = "N", conflicts_with = "max_tokens")]
    max_completion_tokens: Option<u64>,
    /// The user message.
    #[arg(
        long,
        default_value = "Write a short story about a lighthouse keeper who measures the tides."
    )]
    prompt: String,
    /// Environment variable holding a bearer API key.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Ask for per-chunk token ids (vLLM `return_token_ids`).
    #[arg(long)]
    token_ids: bool,
    /// Ask for per-chunk usage (vLLM `stream_options.continuous_usage_stats`).
    #[arg(long)]
    continuous_usage: bool,
    /// Ask the server to ignore end-of-sequence so the output reaches the cap (vLLM).
    #[arg(long)]
    ignore_eos: bool,
}

// One thread: the socket, hyper's connection task and the reading task share it, so an event
// costs no wake-up across threads. On the default multi-threaded runtime, `main`'s future runs
// on this thread while the workers poll the socket, and each event cost about 4x the CPU.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut arguments = match Arguments::try_parse() {
        Ok(arguments) => arguments,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let mut simulator: Option<SimHandle> = None;
    let base_url = if let Some(base_url) = arguments.base_url.clone() {
        base_url
    } else {
        match start_simulator().await {
            Ok(sim) => {
                let url = sim.base_url();
                eprintln!(
                    "no --base-url given: measuring the bundled simulator at {url} (speculative-decoding-like events, 10 ms steps); pass --base-url to measure a real server"
                );
                arguments.token_ids = true;
                simulator = Some(sim);
                url
            }
            Err(error) => {
                eprintln!("error: failed to start the bundled simulator: {error}");
                return ExitCode::from(1);
            }
        }
    };
    let code = match run(&arguments, &base_url).await {
        Ok((output, stream_error)) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not a failure of the measurement.
            let _ = writeln!(stdout, "{output}");
            if let Some(error) = stream_error {
                eprintln!("error: the stream broke off, partial measurement printed: {error}");
                ExitCode::from(3)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(1)
        }
    };
    if let Some(sim) = simulator {
        sim.shutdown().await;
    }
    code
}

async fn start_simulator() -> Result<SimHandle, vernier_sim::SimError> {
    let config = SimConfig::builder()
        .decode_step(Duration::from_millis(10))
        .tokens_per_event(TokensPerEvent::prose_like())
        .build();
    Sim::start(config).await
}

/// Measures one request; returns the JSON object and the stream error, if it broke off.
async fn run(
    arguments: &Arguments,
    base_url: &str,
) -> Result<(serde_json::Value, Option<String>), String> {
    let mut builder = ClientBuilder::new(base_url);
    if let Some(variable) = &arguments.api_key_env {
        builder = builder.api_key_from_env(variable);
    }
    let client = builder
        .build()
        .map_err(|error| format!("failed to set up the client for {base_url}: {error}"))?;
    let model = match &arguments.model {
        Some(model) => model.clone(),
        None => choose_model(&client).await?,
    };
    let mut request = ChatRequest::new(
        model.clone(),
        vec![ChatMessage::user(arguments.prompt.clone())],
    );
    if let Some(max_completion_tokens) = arguments.max_completion_tokens {
        request.max_completion_tokens = Some(max_completion_tokens);
    } else {
        request.max_tokens = Some(arguments.max_tokens);
    }
    request.stream_options = Some(StreamOptions::usage(arguments.continuous_usage));
    if arguments.token_ids {
        request = request.with_extra("return_token_ids", true);
    }
    if arguments.ignore_eos {
        request = request.with_extra("ignore_eos", true);
    }
    let (measurement, stream_error) = measure(&client, &request).await?;
    let mut output = serde_json::to_value(&measurement)
        .map_err(|error| format!("failed to encode the measurement: {error}"))?;
    if let Some(object) = output.as_object_mut() {
        object.insert("model".to_owned(), model.into());
        object.insert("base_url".to_owned(), base_url.into());
        object.insert("stream_error".to_owned(), stream_error.clone().into());
    }
    Ok((output, stream_error))
}

/// The first model of `/v1/models` that generates text, named on stderr.
async fn choose_model(client: &Client) -> Result<String, String> {
    let models = client
        .models()
        .await
        .map_err(|error| format!("failed to list models at /v1/models (pass --model): {error}"))?;
    let ids: Vec<&str> = models.iter().map(|model| model.id.as_str()).collect();
    if ids.is_empty() {
        return Err("failed to pick a model: /v1/models lists none; pass --model".to_owned());
    }
    let Some(model) = pick_generation_model(ids.iter().copied()) else {
        return Err(format!(
            "failed to pick a model: every model at /v1/models ({}) looks like an embedding, rerank, speech or moderation model; pass --model",
            ids.join(", ")
        ));
    };
    eprintln!(
        "no --model given: measuring {model}, the first model listed at /v1/models ({} in all) that is not an embedding, rerank, speech or moderation model; pass --model to choose",
        ids.len()
    );
    Ok(model.to_owned())
}

/// Streams `request` through the shared meter loop; a stream that breaks off still measures.
async fn measure(
    client: &Client,
    request: &ChatRequest,
) -> Result<(Measurement, Option<String>), String> {
    let (metered, stream_error) =
        client.measure_chat(request)
            .await
            .map_err(|error| {
                let hint = if request.max_tokens.is_some() && max_tokens_rejected(&error) {
                    " (if the model refuses `max_tokens` itself, pass --max-completion-tokens N to send `max_completion_tokens` instead)"
                } else {
                    ""
                };
                format!("failed to start the chat stream: {error}{hint}")
            })?;
    Ok((
        metered.measurement,
        stream_error.map(|error| error.to_string()),
    ))
}
