#!/usr/bin/env bash
# Regenerates requirements-zoo.lock from requirements-zoo.in: what pip would
# add to trtx's managed environment (made from requirements.lock) to install
# requirements-zoo.in there, each with the sha256 of every wheel pip may pick
# on Linux x86-64 for CPython 3.11-3.14 (the zoo is installed with
# --require-hashes). Packages the managed environment already has are not
# repeated; the zoo's build checks they satisfy transformers' requirements.
# PYTHON: the managed environment's interpreter (`npx trtx env --json`).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:?name the python of the managed environment}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m pip install --disable-pip-version-check -q --dry-run --report "$work/report.json" -r "$here/requirements-zoo.in"
"$python" "$here/tools/relock_zoo.py" "$work" >"$work/lock"
mv "$work/lock" "$here/requirements-zoo.lock"
echo "wrote $here/requirements-zoo.lock"
