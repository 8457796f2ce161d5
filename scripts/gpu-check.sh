#!/usr/bin/env bash
# The NVML path on a machine with an NVIDIA GPU, in under five minutes: the GPUs' identity, an
# idle baseline, then a known load (a CUDA matrix-multiply loop for LOAD_S seconds) sampled
# through NVML, with mean power and energy for each.
#
#   bash scripts/gpu-check.sh            # LOAD_S=60 by default
#   LOAD_S=30 bash scripts/gpu-check.sh
#
# The load is PyTorch when python3 can import it with CUDA, else a small CUDA program built
# with nvcc; with neither, the script says so and stops (exit 3).
set -euo pipefail
cd "$(dirname "$0")/.."
load_s="${LOAD_S:-60}"
idle_s="${IDLE_S:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== build the sampler"
cargo build --quiet --release -p vernier-examples --example gpu_sample
sampler="${CARGO_TARGET_DIR:-target}/release/examples/gpu_sample"

echo "== nvidia-smi (for comparison)"
nvidia-smi --query-gpu=name,memory.total,driver_version,power.limit --format=csv || true

echo "== idle: ${idle_s} s"
"$sampler" --seconds "$idle_s" --interval-ms 200

load=()
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    cat > "$work/load.py" <<'PY'
import sys, time, torch
seconds = float(sys.argv[1])
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
end = time.time() + seconds
n = 0
while time.time() < end:
    for _ in range(10):
        a @ b
    torch.cuda.synchronize()
    n += 10
print(f"load: {n} fp16 8192x8192 matmuls in {seconds:.0f} s ({n * 2 * 8192**3 / seconds / 1e12:.1f} TFLOP/s)")
PY
    load=(python3 "$work/load.py" "$load_s")
elif command -v nvcc >/dev/null; then
    cat > "$work/load.cu" <<'CU'
#include <cstdio>
#include <cstdlib>
#include <ctime>
__global__ void burn(float *x, int n, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int r = 0; r < rounds; ++r) v = v * 1.0000001f + 0.0000001f;
    x[i] = v;
}
int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 60.0;
    int n = 1 << 24;
    float *x;
    cudaMalloc(&x, n * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    time_t end = time(NULL) + (time_t)seconds;
    long launches = 0;
    while (time(NULL) < end) {
        burn<<<(n + 255) / 256, 256>>>(x, n, 4096);
        cudaDeviceSynchronize();
        ++launches;
    }
    printf("load: %ld kernel launches in %.0f s\n", launches, seconds);
    cudaFree(x);
    return 0;
}
CU
    nvcc -O2 -o "$work/load" "$work/load.cu"
    load=("$work/load" "$load_s")
else
    echo "no GPU load available: install PyTorch with CUDA, or the CUDA toolkit (nvcc)" >&2
    exit 3
fi

echo "== load: ${load_s} s"
"${load[@]}" &
load_pid=$!
sleep 2
"$sampler" --seconds "$((load_s - 4))" --interval-ms 200
wait "$load_pid"
