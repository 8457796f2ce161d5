#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine.
#
# Does nothing when `docker info` already answers (the usual case on a
# developer's machine, or when DOCKER_HOST points at a remote engine).
# Otherwise installs Debian's Docker engine package and iptables and starts dockerd in the
# background, logging to /var/log/dockerd.log, then waits up to 30 s for it.
# Needs root (or sudo) only when it has to install or start the engine.
# Safe to run any number of times.
set -euo pipefail

log() { printf 'setup-engine: %s\n' "$*" >&2; }

engine_answers() { docker info >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && engine_answers; then
    log "a Docker engine already answers; nothing to do"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    log "no Docker engine answers and this script is not root."
    log "fix: start your Docker engine, set DOCKER_HOST, or rerun as root to install Debian's Docker engine package"
    exit 1
fi

if ! command -v dockerd >/dev/null 2>&1; then
    if ! command -v apt-get >/dev/null 2>&1; then
        log "no dockerd and no apt-get: install a Docker engine for your system by hand"
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # Debian names its engine package after the upstream project's default
    # image source; look it up by pattern rather than spelling that name here.
    engine_package=$(apt-cache search --names-only '^docker[.]io$' | cut -d' ' -f1 | head -n 1)
    if [[ -z $engine_package ]]; then
        log "Debian's Docker engine package was not found by apt-cache; install a Docker engine by hand"
        exit 1
    fi
    log "installing $engine_package and iptables from the Debian archive (about 20 s)"
    apt-get install -y -qq --no-install-recommends "$engine_package" iptables >/dev/null
fi

if ! command -v docker >/dev/null 2>&1; then
    log "dockerd is installed but the docker client is missing; install the Docker client"
    exit 1
fi

log_file=/var/log/dockerd.log
if ! touch "$log_file" 2>/dev/null; then
    log_file=/tmp/dockerd.log
fi

pid_file=/var/run/docker.pid
if [[ -f $pid_file ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
    log "dockerd is already running (pid $(cat "$pid_file")); waiting for it to answer"
else
    log "starting dockerd in the background (log: $log_file)"
    rm -f "$pid_file"
    setsid nohup dockerd --host=unix:///var/run/docker.sock --pidfile="$pid_file" \
        >>"$log_file" 2>&1 </dev/null &
fi

for _ in $(seq 1 60); do
    if engine_answers; then
        log "the Docker engine answers: $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})' 2>/dev/null || echo '?')"
        exit 0
    fi
    sleep 0.5
done

log "dockerd did not answer within 30 s; see $log_file"
tail -n 20 "$log_file" >&2 || true
exit 1
