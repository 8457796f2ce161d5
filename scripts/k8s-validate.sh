#!/usr/bin/env bash
# Installs the Kubernetes manifest validator the tests check `sweep shard-job` with
# (kubernetes-validate, which carries the Kubernetes API's own OpenAPI schemas, so it needs no
# cluster), with pip into a folder cached outside the repository (no virtual environment, so
# Debian's python3-venv is not needed), and prints the wrapper that runs it:
#
#   VERNIER_K8S_VALIDATE=<cache>/k8s-validate-1.37.0/kubernetes-validate
#
# so that `eval "$(scripts/k8s-validate.sh)"` sets it. Idempotent: with it cached it only
# prints. With --check it installs nothing: it prints the line when it is cached and exits 1
# otherwise (tests use this to find it).
#
# Settings (environment): VERNIER_CACHE (default ~/.cache/vernier).
set -euo pipefail

version=1.37.0
folder="${VERNIER_CACHE:-$HOME/.cache/vernier}/k8s-validate-$version"
tool=$folder/kubernetes-validate
log() { printf 'k8s-validate.sh: %s\n' "$*" >&2; }

# The wrapper is written last: a half-made folder is made again.
if [[ ! -x $tool ]]; then
    if [[ ${1:-} == --check ]]; then
        exit 1
    fi
    log "installing kubernetes-validate $version into $folder"
    rm -rf "$folder"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$folder/lib" \
        "kubernetes-validate==$version" >&2 || { rm -rf "$folder"; exit 1; }
    # The interpreter that installed it runs it (its compiled parts are for that version).
    python=$(python3 -c 'import sys; print(sys.executable)')
    cat >"$tool.partial" <<WRAPPER
#!/bin/sh
PYTHONPATH="$folder/lib" exec "$python" -m kubernetes_validate "\$@"
WRAPPER
    chmod +x "$tool.partial"
    mv "$tool.partial" "$tool"
fi
printf 'VERNIER_K8S_VALIDATE=%s\n' "$tool"
