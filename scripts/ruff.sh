#!/usr/bin/env bash
# Runs the pinned ruff (python-bridge/requirements-dev.lock) on trtx's Python:
# python-bridge/, test/doubles/ and the runner's test and bench scripts.
# The tool lives in a virtual environment under trtx's cache root
# ($TRTX_CACHE_DIR, else ~/.cache/trtx: what src/util/cache-dir.ts decides),
# made from the lock on first use and named by the lock's hash, so a changed
# pin makes a fresh one and every clone with the same lock shares it.
# Usage: scripts/ruff.sh check|format [ruff options]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lock="$root/python-bridge/requirements-dev.lock"
cache="${TRTX_CACHE_DIR:-$HOME/.cache/trtx}"
cache="$(realpath -m "$cache")"
venv="$cache/ruff-$(sha256sum "$lock" | cut -c1-16)"
if [ ! -x "$venv/bin/ruff" ]; then
  echo "scripts/ruff.sh: installing $(grep -v '^#' "$lock" | tr '\n' ' ')into $venv" >&2
  mkdir -p "$cache"
  # A folder of this process's own, moved into place whole: clones sharing the
  # cache may make it at the same time, and the first to finish wins.
  tmp="$(mktemp -d "$venv.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  "${PYTHON:-python3}" -m venv "$tmp"
  "$tmp/bin/python" -m pip install --disable-pip-version-check -q -r "$lock"
  mv -T "$tmp" "$venv" 2>/dev/null || [ -x "$venv/bin/ruff" ]
fi
cd "$root"
exec "$venv/bin/ruff" "$@" python-bridge test/doubles native-runner/bench native-runner/tests
