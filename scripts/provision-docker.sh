#!/usr/bin/env bash
# Make the docker sandbox usable on this machine: a docker engine (Debian's docker.io, started
# as `dockerd --bridge=none --iptables=false`: sandboxes need no network) and the runner image
# (scripts/build-sandbox-image.sh). Idempotent; exits non-zero, saying why, when it cannot.
#
# CI runs it before the tests and then requires the docker tests to pass; without it (or
# where it fails) those tests skip with the reason printed.
set -euo pipefail
cd "$(dirname "$0")/.."

log=${DOCKERD_LOG:-/var/log/rlvr-dockerd.log}

engine_up() { docker info >/dev/null 2>&1; }

apt_install() {  # apt_install <package...>: from Debian's packages, refreshing lists once if needed
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "$@" >/dev/null 2>&1 || {
        apt-get update -q >/dev/null 2>&1
        apt-get install -y -q "$@" >/dev/null
    }
}

if ! engine_up; then
    if [[ $(id -u) != 0 ]]; then
        echo "no docker engine answers, and starting one needs root" >&2
        exit 1
    fi
    if ! command -v dockerd >/dev/null; then
        echo "installing docker.io"
        apt_install docker.io
    fi
    if ! command -v docker >/dev/null; then
        apt_install docker.io
    fi
    echo "starting dockerd (log: $log)"
    setsid nohup dockerd --bridge=none --iptables=false >"$log" 2>&1 </dev/null &
    for _ in $(seq 1 120); do
        engine_up && break
        sleep 0.5
    done
    if ! engine_up; then
        echo "dockerd did not come up:" >&2
        tail -20 "$log" >&2 || true
        exit 1
    fi
fi

if ! command -v debootstrap >/dev/null; then
    echo "installing debootstrap"
    apt_install debootstrap
fi
scripts/build-sandbox-image.sh
