#!/usr/bin/env bash
# Regenerates requirements.lock: a fresh virtual environment from
# requirements.in, frozen. The local build label of torch (+cpu) is dropped so
# the lock names the release and pip picks the build the machine offers.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/requirements.in"
{
  sed -n '1,4p' "$here/requirements.lock"
  "$work/venv/bin/python" -m pip freeze --all --exclude pip --exclude setuptools --exclude wheel | sed -E 's/^(torch==[^+]+)\+[a-z0-9.]+$/\1/'
} >"$work/lock"
mv "$work/lock" "$here/requirements.lock"
echo "wrote $here/requirements.lock"
node "$here/tools/relock-sdk.mjs"
