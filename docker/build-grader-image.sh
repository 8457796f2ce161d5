#!/usr/bin/env bash
# Build the grader's Python image, vernier-grader-python:latest, from Debian
# packages alone: no container registry is needed, only an apt source.
#
#   1. `apt-get download` the runtime closure of python3.11 (full standard library)
#   2. `dpkg -x` every package into an empty root
#   3. add /etc/passwd and /etc/group with nobody (65534), an empty /work and /tmp
#   4. byte-compile the standard library in a chroot (the sandbox root is read-only,
#      so nothing can be compiled later)
#   5. `docker import` the root with ENV LANG=C.UTF-8 and a LABEL holding the
#      SHA-256 of this script, so a changed recipe triggers a rebuild
#
# The image holds no grading code: the grader uploads its runner with each
# submission (see crates/vernier-grader/README.md for why).
#
# Idempotent: when the image exists with the expected label it only prints the
# image ID. Set VERNIER_GRADER_IMAGE to build under another name, FORCE=1 to
# rebuild. Needs root (chroot, dpkg -x ownership) and a Docker engine
# (docker/setup-engine.sh starts one).
set -euo pipefail

image=${VERNIER_GRADER_IMAGE:-vernier-grader-python:latest}
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
recipe_sha=$(sha256sum "$script_dir/build-grader-image.sh" | cut -c1-64)
label_key=org.vernier.recipe

log() { printf 'build-grader-image: %s\n' "$*" >&2; }

if ! docker info >/dev/null 2>&1; then
    log "no Docker engine answers; run docker/setup-engine.sh first (or set DOCKER_HOST)"
    exit 1
fi

current=$(docker image inspect --format "{{ index .Config.Labels \"$label_key\" }}" "$image" 2>/dev/null || true)
if [[ ${FORCE:-0} != 1 && $current == "$recipe_sha" ]]; then
    log "$image is up to date (recipe $recipe_sha)"
    docker image inspect --format '{{.Id}}' "$image"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    log "building needs root (dpkg -x and chroot); rerun as root"
    exit 1
fi
for tool in apt-get dpkg chroot sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || { log "missing $tool: this recipe needs a Debian-like host"; exit 1; }
done

# The runtime closure of python3.11 on Debian 12, measured in docs: adding a
# package here changes the recipe hash and so rebuilds the image.
packages=(
    python3 python3-minimal libpython3-stdlib python3.11 python3.11-minimal
    libpython3.11-minimal libpython3.11-stdlib media-types tzdata readline-common
    libtirpc-common libc6 libgcc-s1 gcc-12-base libcrypt1 zlib1g libexpat1 libssl3
    libffi8 libbz2-1.0 liblzma5 libsqlite3-0 libncursesw6 libtinfo6 libreadline8
    libuuid1 libdb5.3 libgdbm6 libnsl2 libtirpc3 libgssapi-krb5-2 libk5crypto3
    libkeyutils1 libkrb5-3 libkrb5support0 libcom-err2
)

work=$(mktemp -d /tmp/vernier-grader-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs" "$work/root"
# apt-get download runs as the _apt user: its folder must be writable by it.
chmod 0777 "$work/debs"

log "downloading ${#packages[@]} Debian packages"
if ! (cd "$work/debs" && apt-get download -qq "${packages[@]}" >/dev/null 2>&1); then
    log "apt-get download failed; refreshing the package lists and retrying"
    apt-get update -qq
    (cd "$work/debs" && apt-get download -qq "${packages[@]}" >/dev/null)
fi

log "unpacking into a root filesystem"
for deb in "$work"/debs/*.deb; do
    dpkg -x "$deb" "$work/root"
done

root=$work/root
# Debian 12 is merged-/usr; dpkg -x does not create the top-level links.
for dir in bin sbin lib lib64; do
    if [[ -d $root/usr/$dir && ! -e $root/$dir ]]; then
        ln -s "usr/$dir" "$root/$dir"
    fi
done
if [[ ! -e $root/usr/bin/python3 ]]; then
    ln -s python3.11 "$root/usr/bin/python3"
fi
mkdir -p "$root/etc" "$root/tmp" "$root/work" "$root/proc" "$root/sys" "$root/dev"
chmod 1777 "$root/tmp"
chmod 0555 "$root/work"
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP

log "byte-compiling the standard library"
chroot "$root" /usr/bin/python3.11 -m compileall -q -j 0 /usr/lib/python3.11 >/dev/null 2>&1 ||
    chroot "$root" /usr/bin/python3.11 -m compileall -q /usr/lib/python3.11 >/dev/null
# Smoke test: the modules graders rely on import.
chroot "$root" /usr/bin/python3.11 -I -c 'import json, dataclasses, decimal, fractions, collections, itertools, re, math, heapq, bisect, functools' ||
    { log "the unpacked Python cannot import its standard library"; exit 1; }

# Trim what a sandbox never needs.
rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/lintian"

log "importing as $image"
tar --numeric-owner -C "$root" -c . |
    docker import \
        -c "LABEL $label_key=$recipe_sha" \
        -c 'ENV LANG=C.UTF-8' \
        -c 'USER 65534:65534' \
        -c 'WORKDIR /work' \
        -c 'CMD ["/usr/bin/python3"]' \
        -m "vernier grader python, recipe $recipe_sha" \
        - "$image" >/dev/null

log "built $image ($(docker image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
docker image inspect --format '{{.Id}}' "$image"
