#!/usr/bin/env bash
# Build the shards' container image, vernier-sweep:VERSION, from Debian packages and the
# release `sweep` binary alone: no container registry is needed, only an apt source.
#
#   1. `cargo build --release -p sweep` (cargo's target folder, or CARGO_TARGET_DIR)
#   2. `apt-get download` the binary's runtime libraries (glibc and libgcc; TLS roots are
#      built into the binary) and `dpkg -x` them into an empty root
#   3. add the binary as /usr/local/bin/sweep, /etc/passwd with nobody (65534), /tmp and an
#      empty /results owned by nobody
#   4. `docker import` the root with sweep as its entry point, running as nobody
#
# Then push it where the cluster pulls from (`docker tag` and `docker push`, or `kind load
# docker-image`, or `ctr -n k8s.io images import` on each node) and render the Job with
# `sweep shard-job --image IMAGE ...` (deploy/k8s/README.md).
#
# Set VERNIER_SWEEP_IMAGE to build under another name. Needs root (dpkg -x ownership) and a
# Docker engine (docker/setup-engine.sh starts one).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -n 1)
image=${VERNIER_SWEEP_IMAGE:-vernier-sweep:$version}
log() { printf 'build-image: %s\n' "$*" >&2; }

if ! docker info >/dev/null 2>&1; then
    log "no Docker engine answers; run docker/setup-engine.sh first (or set DOCKER_HOST)"
    exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
    log "building needs root (dpkg -x); rerun as root"
    exit 1
fi

log "building the release sweep binary"
(cd "$repo" && cargo build --release --locked -p sweep >&2)
target_dir=${CARGO_TARGET_DIR:-$repo/target}
binary=$target_dir/release/sweep
[[ -x $binary ]] || { log "no binary at $binary"; exit 1; }

# What the binary links, checked rather than assumed: a new library fails the build here.
needed=$(objdump -p "$binary" 2>/dev/null | awk '/NEEDED/ {print $2}' | sort -u | tr '\n' ' ')
for library in $needed; do
    case $library in
        libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1 | ld-linux-*.so.*) ;;
        libgcc_s.so.1) ;;
        *) log "the binary links $library, which this recipe does not install"; exit 1 ;;
    esac
done
packages=(libc6 libgcc-s1 "$(dpkg-query -W -f '${Depends}' libgcc-s1 | grep -o 'gcc-[0-9]*-base' | head -n 1)")

work=$(mktemp -d /tmp/vernier-sweep-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs" "$work/root"
chmod 0777 "$work/debs"
log "downloading ${packages[*]}"
if ! (cd "$work/debs" && apt-get download -qq "${packages[@]}" >/dev/null 2>&1); then
    apt-get update -qq
    (cd "$work/debs" && apt-get download -qq "${packages[@]}" >/dev/null)
fi
for deb in "$work"/debs/*.deb; do
    dpkg -x "$deb" "$work/root"
done
root=$work/root
for dir in bin sbin lib lib64; do
    if [[ -d $root/usr/$dir && ! -e $root/$dir ]]; then
        ln -s "usr/$dir" "$root/$dir"
    fi
done
install -D -m 0755 "$binary" "$root/usr/local/bin/sweep"
# The release profile keeps debug information for local profiling; the image does not need it.
if command -v strip >/dev/null 2>&1; then
    strip --strip-debug "$root/usr/local/bin/sweep"
fi
mkdir -p "$root/etc" "$root/tmp" "$root/results" "$root/proc" "$root/sys" "$root/dev"
chmod 1777 "$root/tmp"
chown 65534:65534 "$root/results"
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP
rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/lintian"

log "importing as $image"
tar --numeric-owner -C "$root" -c . |
    docker import \
        -c 'USER 65534:65534' \
        -c 'WORKDIR /results' \
        -c 'ENTRYPOINT ["/usr/local/bin/sweep"]' \
        -m "vernier sweep $version" \
        - "$image" >/dev/null
docker run --rm "$image" --version >&2
log "built $image ($(docker image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
printf '%s\n' "$image"
