//! State shared by all connections: settings, counters, prefix cache, slots, ground truth.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::SimConfig;
use crate::crash::{CrashFault, CrashReport, CrashedStream, Depths, StreamDepth};
use crate::error::SimError;
use crate::ground_truth::GroundTruthLog;
use crate::metrics::Counters;

/// Prefix-cache block size in tokens (vLLM's default).
pub(crate) const BLOCK_SIZE: usize = 16;

/// How often a paused engine step looks whether the engine is still hung.
pub(crate) const HUNG_RECHECK: Duration = Duration::from_millis(5);

#[derive(Debug)]
pub(crate) struct State {
    pub(crate) config: SimConfig,
    /// Where each POST request is appended as received ([`SimConfig::request_log_path`]).
    pub(crate) request_log: Option<Mutex<std::fs::File>>,
    pub(crate) counters: Counters,
    pub(crate) ground_truth: GroundTruthLog,
    pub(crate) created_unix_s: u64,
    cache: Mutex<HashSet<u64>>,
    slots: Option<Arc<Semaphore>>,
    script_matches: Vec<AtomicUsize>,
    generation_requests: AtomicUsize,
    request_sequence: AtomicU64,
    /// The engine is hung: no step runs, while `/health` and `/metrics` still answer.
    hung: AtomicBool,
    /// KV cells held by the running requests (see [`SimConfig::shared_kv_tokens`] and
    /// [`State::kv_usage`]).
    kv_in_use: AtomicU64,
    /// Tokens sent so far by each stream that has sent one (for the crash fault).
    depths: Mutex<Depths>,
    /// The crash, once the crash fault fired.
    crashed: OnceLock<CrashReport>,
    /// Flips to true at the crash.
    crash_signal: tokio::sync::watch::Sender<bool>,
    /// Set first thing at the crash: no stream sends a token after it.
    crashing: AtomicBool,
}

impl State {
    pub(crate) fn new(config: SimConfig) -> Result<Self, SimError> {
        config.validate()?;
        let ground_truth = GroundTruthLog::open(config.ground_truth_path.as_deref())?;
        let request_log = config
            .request_log_path
            .as_deref()
            .map(|path| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map(Mutex::new)
                    .map_err(|source| SimError::GroundTruthFile {
                        path: path.to_owned(),
                        source,
                    })
            })
            .transpose()?;
        let script_matches = config
            .script
            .as_ref()
            .map(|script| script.rules().iter().map(|_| AtomicUsize::new(0)).collect())
            .unwrap_or_default();
        Ok(Self {
            slots: config.max_num_seqs.map(|n| Arc::new(Semaphore::new(n))),
            created_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            counters: Counters::default(),
            ground_truth,
            request_log,
            cache: Mutex::new(HashSet::new()),
            script_matches,
            generation_requests: AtomicUsize::new(0),
            request_sequence: AtomicU64::new(0),
            hung: AtomicBool::new(false),
            kv_in_use: AtomicU64::new(0),
            depths: Mutex::new(Depths::new()),
            crashed: OnceLock::new(),
            crash_signal: tokio::sync::watch::Sender::new(false),
            crashing: AtomicBool::new(false),
            config,
        })
    }

    /// A fresh sequence number (for ids and per-request seeds).
    pub(crate) fn next_sequence(&self) -> u64 {
        self.request_sequence.fetch_add(1, Ordering::Relaxed)
    }

    /// Generation requests received so far.
    pub(crate) fn generation_requests(&self) -> usize {
        self.generation_requests.load(Ordering::Relaxed)
    }

    /// Counts a generation request; returns how many came before it.
    pub(crate) fn count_generation_request(&self) -> usize {
        crate::metrics::add(&self.counters.requests_total, 1);
        self.generation_requests.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts a match of script rule `index`; returns how many matches came before it.
    pub(crate) fn count_script_match(&self, index: usize) -> usize {
        self.script_matches
            .get(index)
            .map_or(0, |counter| counter.fetch_add(1, Ordering::Relaxed))
    }

    /// Waits for a slot (when `max_num_seqs` is set) and marks the request running.
    pub(crate) async fn acquire_slot(self: &Arc<Self>) -> RunningGuard {
        let permit = match &self.slots {
            None => None,
            Some(slots) => {
                crate::metrics::add(&self.counters.waiting, 1);
                let permit = Arc::clone(slots).acquire_owned().await.ok();
                self.counters.waiting.fetch_sub(1, Ordering::Relaxed);
                permit
            }
        };
        crate::metrics::add(&self.counters.running, 1);
        RunningGuard {
            state: Arc::clone(self),
            _permit: permit,
            kv_held: 0,
            stream: None,
        }
    }

    /// Runs `f` on the streams' depths.
    pub(crate) fn with_depths<T>(&self, f: impl FnOnce(&Depths) -> T) -> T {
        match self.depths.lock() {
            Ok(depths) => f(&depths),
            Err(poisoned) => f(&poisoned.into_inner()),
        }
    }

    /// Records the crash (once) from the depths now, and wakes whoever waits for it.
    pub(crate) fn crash(&self, fault: CrashFault) {
        let now = Instant::now();
        // Set under the depths' lock, which every token takes before it is sent: no token
        // leaves after the dump.
        let mut streams: Vec<CrashedStream> = self.with_depths(|depths| {
            self.crashing.store(true, Ordering::SeqCst);
            depths
                .values()
                .map(|stream| CrashedStream {
                    request_id: stream.request_id.clone(),
                    tokens: stream.tokens,
                    age_ms: u64::try_from(now.duration_since(stream.since).as_millis())
                        .unwrap_or(u64::MAX),
                })
                .collect()
        });
        streams.sort_by_key(|stream| std::cmp::Reverse(stream.tokens));
        let metrics = self.counters.snapshot();
        let _ = self.crashed.set(CrashReport {
            unix_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            running: metrics.num_requests_running,
            waiting: metrics.num_requests_waiting,
            streams,
            fault,
        });
        self.crash_signal.send_replace(true);
    }

    /// Whether the server is dying (or dead) of the crash fault.
    pub(crate) fn is_crashing(&self) -> bool {
        self.crashing.load(Ordering::SeqCst)
    }

    /// The crash, once it happened.
    pub(crate) fn crash_report(&self) -> Option<CrashReport> {
        self.crashed.get().cloned()
    }

    /// A receiver that turns true at the crash.
    pub(crate) fn crash_receiver(&self) -> tokio::sync::watch::Receiver<bool> {
        self.crash_signal.subscribe()
    }

    /// Whether the engine is hung (see [`SimHandle::set_hung`](crate::SimHandle::set_hung)).
    pub(crate) fn is_hung(&self) -> bool {
        self.hung.load(Ordering::Relaxed)
    }

    /// Hangs the engine (`true`) or lets it run again (`false`).
    pub(crate) fn set_hung(&self, hung: bool) {
        self.hung.store(hung, Ordering::Relaxed);
    }

    /// Returns at once when the engine runs; otherwise waits until it runs again and returns
    /// how long it was paused.
    pub(crate) async fn wait_while_hung(&self) -> Duration {
        if !self.is_hung() {
            return Duration::ZERO;
        }
        let since = Instant::now();
        while self.is_hung() {
            tokio::time::sleep(HUNG_RECHECK).await;
        }
        since.elapsed()
    }

    /// What `vllm:cache_config_info` states of this simulator's KV cache.
    pub(crate) fn cache_stated(&self) -> crate::metrics::CacheStated {
        crate::metrics::CacheStated {
            block_size: BLOCK_SIZE,
            prefix_caching: self.config.prefix_cache,
            tokens: crate::metrics::kv_capacity(&self.config),
        }
    }

    /// The share of the KV cache the running requests hold (each its prompt plus
    /// `max_tokens`), 0 to 1: `vllm:kv_cache_usage_perc`.
    pub(crate) fn kv_usage(&self) -> f64 {
        let capacity = crate::metrics::kv_capacity(&self.config);
        if capacity == 0 {
            return 0.0;
        }
        (self.kv_in_use.load(Ordering::Relaxed) as f64 / capacity as f64).min(1.0)
    }

    /// Decode step for the number of requests running now.
    pub(crate) fn current_step(&self) -> Duration {
        let running = self.counters.running.load(Ordering::Relaxed).max(1);
        let factor = 1.0 + self.config.slowdown_per_running_request * (running - 1) as f64;
        self.config.decode_step.mul_f64(factor)
    }

    /// Looks the prompt up in the prefix cache (and records its blocks); returns cached tokens.
    pub(crate) fn prefix_lookup(&self, tokens: &[u32], salt: Option<&str>) -> u32 {
        if !self.config.prefix_cache || tokens.is_empty() {
            return 0;
        }
        let hashes = block_hashes(tokens, salt);
        // As in vLLM, the last prompt token is always computed: only blocks within the first
        // n - 1 tokens can hit.
        let eligible = (tokens.len() - 1) / BLOCK_SIZE;
        let Ok(mut cache) = self.cache.lock() else {
            return 0;
        };
        let hit_blocks = hashes
            .iter()
            .take(eligible)
            .take_while(|hash| cache.contains(hash))
            .count();
        cache.extend(hashes);
        drop(cache);
        let cached = u32::try_from(hit_blocks * BLOCK_SIZE).unwrap_or(u32::MAX);
        crate::metrics::add(&self.counters.cache_queries, tokens.len() as u64);
        crate::metrics::add(&self.counters.cache_hits, u64::from(cached));
        cached
    }
}

/// What a finished request leaves in the prefix cache besides its prompt's blocks: the
/// full blocks of its prompt followed by its reply, as vLLM v1 caches the blocks filled
/// during decode.
#[derive(Debug, Clone)]
pub(crate) struct DecodeBlocks {
    /// Prompt token ids, then the reply's (see [`Generation::cache_ids`]), less the last
    /// generated token, whose KV is never computed.
    ///
    /// [`Generation::cache_ids`]: crate::plan::Generation::cache_ids
    pub(crate) tokens: Vec<u32>,
    /// The request's `cache_salt`.
    pub(crate) salt: Option<String>,
}

impl DecodeBlocks {
    /// The blocks of `prompt` followed by `reply`, less the reply's last token.
    pub(crate) fn new(prompt: &[u32], reply: &[u32], salt: Option<String>) -> Self {
        let computed = reply.len().saturating_sub(1);
        let mut tokens = Vec::with_capacity(prompt.len() + computed);
        tokens.extend_from_slice(prompt);
        tokens.extend_from_slice(&reply[..computed]);
        Self { tokens, salt }
    }
}

impl State {
    /// Records the full blocks of a request that finished normally (prompt and reply) in the
    /// prefix cache, so that the next turn of its conversation can hit them. Counts no query.
    pub(crate) fn cache_decode_blocks(&self, blocks: &DecodeBlocks) {
        if !self.config.prefix_cache {
            return;
        }
        let hashes = block_hashes(&blocks.tokens, blocks.salt.as_deref());
        if let Ok(mut cache) = self.cache.lock() {
            cache.extend(hashes);
        }
    }
}

/// Chained hashes of the full blocks of `tokens`, seeded by the salt.
fn block_hashes(tokens: &[u32], salt: Option<&str>) -> Vec<u64> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mix = |byte: u8, hash: &mut u64| {
        *hash ^= u64::from(byte);
        *hash = hash.wrapping_mul(0x0100_0000_01b3);
    };
    if let Some(salt) = salt {
        mix(1, &mut hash);
        for byte in salt.bytes() {
            mix(byte, &mut hash);
        }
    }
    tokens
        .chunks_exact(BLOCK_SIZE)
        .map(|block| {
            for token in block {
                for byte in token.to_le_bytes() {
                    mix(byte, &mut hash);
                }
            }
            hash
        })
        .collect()
}

/// Marks a request running until dropped (and holds its slot).
#[derive(Debug)]
pub(crate) struct RunningGuard {
    state: Arc<State>,
    _permit: Option<OwnedSemaphorePermit>,
    /// KV cells this request holds.
    kv_held: u64,
    /// This request's key among the streams' depths, once it sent a token.
    stream: Option<u64>,
}

impl RunningGuard {
    pub(crate) fn state(&self) -> &Arc<State> {
        &self.state
    }

    /// Takes `cells` of the KV cache for as long as the request runs; `false` when the
    /// running requests leave too few of a shared cache ([`SimConfig::shared_kv_tokens`]:
    /// nothing is taken then). Always `true` without a shared cache, where the cells are only
    /// counted (for `vllm:kv_cache_usage_perc`).
    pub(crate) fn hold_kv(&mut self, cells: u64) -> bool {
        let capacity = self.state.config.shared_kv_tokens;
        let taken =
            self.state
                .kv_in_use
                .fetch_update(
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                    |in_use| match capacity {
                        Some(capacity) => {
                            (in_use + cells <= u64::from(capacity)).then_some(in_use + cells)
                        }
                        None => Some(in_use + cells),
                    },
                );
        if taken.is_ok() {
            self.kv_held += cells;
        }
        taken.is_ok()
    }

    /// Counts `tokens` more sent by this stream (request `request_id`); `false` (nothing
    /// counted) once the server is crashing, when the token must not be sent.
    pub(crate) fn add_depth(&mut self, request_id: &str, tokens: u32) -> bool {
        let key = *self
            .stream
            .get_or_insert_with(|| self.state.next_sequence());
        let Ok(mut depths) = self.state.depths.lock() else {
            return false;
        };
        if self.state.is_crashing() {
            return false;
        }
        let entry = depths.entry(key).or_insert_with(|| StreamDepth {
            request_id: request_id.to_owned(),
            tokens: 0,
            since: Instant::now(),
        });
        entry.tokens += u64::from(tokens);
        true
    }
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        if let Some(key) = self.stream
            && let Ok(mut depths) = self.state.depths.lock()
        {
            depths.remove(&key);
        }
        self.state.counters.running.fetch_sub(1, Ordering::Relaxed);
        self.state
            .kv_in_use
            .fetch_sub(self.kv_held, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State::new(SimConfig::default()).expect("default config is valid")
    }

    #[test]
    fn prefix_cache_hits_whole_blocks_and_respects_salt() {
        let state = state();
        let prompt: Vec<u32> = (0..40).collect();
        assert_eq!(state.prefix_lookup(&prompt, None), 0);
        assert_eq!(state.prefix_lookup(&prompt, None), 32);
        assert_eq!(state.prefix_lookup(&prompt, Some("other")), 0);
        // A prompt sharing only the first block.
        let mut changed = prompt.clone();
        changed[20] = 999;
        assert_eq!(state.prefix_lookup(&changed, None), 16);
        // A unique first token defeats the cache entirely.
        let mut nonce_first = prompt.clone();
        nonce_first[0] = 12_345;
        assert_eq!(state.prefix_lookup(&nonce_first, None), 0);
        // Exactly 32 tokens: the last token is always computed, so only one block hits.
        let exact: Vec<u32> = (100..132).collect();
        state.prefix_lookup(&exact, None);
        assert_eq!(state.prefix_lookup(&exact, None), 16);
        let metrics = state.counters.snapshot();
        assert_eq!(metrics.prefix_cache_hits_total, 32 + 16 + 16);
        assert_eq!(metrics.prefix_cache_queries_total, 40 * 5 + 32 * 2);
    }

    #[test]
    fn decode_blocks_extend_the_cached_prefix() {
        let state = state();
        let prompt: Vec<u32> = (0..20).collect();
        let reply: Vec<u32> = (1000..1030).collect();
        assert_eq!(state.prefix_lookup(&prompt, None), 0);
        let blocks = DecodeBlocks::new(&prompt, &reply, None);
        assert_eq!(
            blocks.tokens.len(),
            20 + 29,
            "the last reply token is not cached"
        );
        state.cache_decode_blocks(&blocks);
        // The next turn: prompt, reply, then more.
        let mut next = prompt.clone();
        next.extend(&reply);
        next.extend(2000..2010);
        // 49 cached tokens hold 3 full blocks.
        assert_eq!(state.prefix_lookup(&next, None), 48);
        assert_eq!(state.prefix_lookup(&next, Some("other")), 0);
        // Caching them counted no query.
        let metrics = state.counters.snapshot();
        assert_eq!(metrics.prefix_cache_queries_total, 20 + 60 * 2);
        let empty = DecodeBlocks::new(&prompt, &[], None);
        assert_eq!(empty.tokens, prompt);
    }

    #[test]
    fn step_grows_with_running_requests() {
        let config = SimConfig::builder()
            .slowdown_per_running_request(0.5)
            .decode_step(Duration::from_millis(10))
            .build();
        let state = Arc::new(State::new(config).expect("valid"));
        assert_eq!(state.current_step(), Duration::from_millis(10));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let guards = runtime.block_on(async {
            vec![
                state.acquire_slot().await,
                state.acquire_slot().await,
                state.acquire_slot().await,
            ]
        });
        assert_eq!(state.current_step(), Duration::from_millis(20));
        drop(guards);
        assert_eq!(state.counters.snapshot().num_requests_running, 0);
    }
}
