#!/usr/bin/env bash
# Build the docker sandbox's runner image without any registry: a Debian root filesystem made
# by debootstrap, imported as an image. Deployments with a registry can use
# deploy/Dockerfile.sandbox instead; both give the same contents.
#
#   scripts/build-sandbox-image.sh [IMAGE]        (default: rlvr-sandbox:bookworm)
#
# Needs root, debootstrap and a running docker engine. Skips the build when IMAGE exists, unless
# REBUILD=1. Nothing of this project is baked in: each container's supervisor gets its code from
# the host when the container starts.
set -euo pipefail

IMAGE=${1:-${RLVR_SANDBOX_DOCKER_IMAGE:-rlvr-sandbox:bookworm}}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# python3 (the whole standard library, as the local sandbox offers) runs Python programs; g++ compiles C++; util-linux (prlimit), coreutils,
# tar and findutils come with minbase and are what the host's last-resort kill uses.
PACKAGES=python3,g++

if [[ ${REBUILD:-0} != 1 ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "sandbox image $IMAGE already present"
    exit 0
fi

root=$(mktemp -d /var/tmp/rlvr-sandbox-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "debootstrap bookworm ($PACKAGES) into $root"
debootstrap --variant=minbase --include="$PACKAGES" bookworm "$root" "$MIRROR" >"$root.log" 2>&1 || {
    tail -20 "$root.log" >&2
    exit 1
}
rm -f "$root.log"
# Nothing a program could use to learn about the build host, and no package caches.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/* "$root"/root/.??*
echo "sandbox" >"$root/etc/hostname"
tar -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'WORKDIR /tmp' \
    --change 'CMD ["sleep", "infinity"]' \
    --message "rlvr sandbox runner (debootstrap bookworm minbase + $PACKAGES)" \
    - "$IMAGE" >/dev/null
echo "built sandbox image $IMAGE"
