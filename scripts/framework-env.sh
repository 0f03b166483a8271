#!/usr/bin/env bash
# Build the side environment in which tests/frameworks drive the real trainers (TRL, verl,
# verifiers, OpenRLHF, NeMo-Gym) against a running service: .venv-frameworks (or $1).
#
# The trainers' pins clash with the service's (verl's hydra needs antlr4 4.9, the service's
# verifier core pins 4.13), so they get a venv of their own. The project goes in with --no-deps
# plus its `client` extra's requirements, read from pyproject.toml: the client needs only httpx.
# The service itself runs from the main venv.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.venv-frameworks}
REQUIREMENTS=scripts/framework-requirements.txt
PYTHON=${PYTHON:-python3}

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
# Nothing in it belongs in git (nor in ruff's view of the tree).
echo '*' >"$VENV/.gitignore"
PIP=("$VENV/bin/pip" install --quiet --disable-pip-version-check --no-compile)
# --no-compile: byte-compiling the ~2 GB installed here costs more than compiling, on first
# import, the few modules the tests use.
"${PIP[@]}" --upgrade pip
# torch first and alone, at the exact pin: a CPU wheel of a few hundred MB.
"${PIP[@]}" "$(grep -E '^torch==' "$REQUIREMENTS")"
grep -vE '^(openrlhf|torch|nemo-gym)==' "$REQUIREMENTS" >"$VENV/requirements-main.txt"
"${PIP[@]}" -r "$VENV/requirements-main.txt" -c "$REQUIREMENTS"
"${PIP[@]}" --no-deps "$(grep -E '^openrlhf==' "$REQUIREMENTS")"
"${PIP[@]}" --no-deps --ignore-requires-python "$(grep -E '^nemo-gym==' "$REQUIREMENTS")"
# verl's and OpenRLHF's wheels install their own test suites as a top-level package `tests`,
# which would shadow this repository's tests/ (a namespace package); nothing imports them.
rm -rf "$VENV"/lib/python3*/site-packages/tests
"$VENV/bin/python" - >"$VENV/requirements-client.txt" <<'PY'
import tomllib

with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["optional-dependencies"]["client"]))
PY
"${PIP[@]}" -r "$VENV/requirements-client.txt" -c "$REQUIREMENTS"
"${PIP[@]}" --no-deps -e .
