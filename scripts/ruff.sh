#!/usr/bin/env bash
# Runs the pinned ruff (python-bridge/requirements-dev.lock) on trtx's Python:
# python-bridge/, test/doubles/ and the runner's test and bench scripts.
# The tool lives in a virtual environment under .cache/, made from the lock on
# first use and named by the lock's hash, so a changed pin makes a fresh one.
# Usage: scripts/ruff.sh check|format [ruff options]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lock="$root/python-bridge/requirements-dev.lock"
venv="$root/.cache/ruff-$(sha256sum "$lock" | cut -c1-16)"
if [ ! -x "$venv/bin/ruff" ]; then
  echo "scripts/ruff.sh: installing $(grep -v '^#' "$lock" | tr '\n' ' ')into $venv" >&2
  rm -rf "$venv.tmp"
  "${PYTHON:-python3}" -m venv "$venv.tmp"
  "$venv.tmp/bin/python" -m pip install --disable-pip-version-check -q -r "$lock"
  rm -rf "$venv" && mv "$venv.tmp" "$venv"
fi
cd "$root"
exec "$venv/bin/ruff" "$@" python-bridge test/doubles native-runner/bench native-runner/tests
