#!/usr/bin/env bash
# clang-format (Debian's clang-format package) over the native runner's
# hand-written C++ and CUDA (.clang-format at the root; native-runner/generated/
# is flatc's output and stays as flatc writes it).
# Usage: scripts/clang-format.sh --check | --write
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bin="${CLANG_FORMAT:-clang-format}"
if ! command -v "$bin" >/dev/null; then
  echo "scripts/clang-format.sh: $bin not found; install Debian's clang-format package (apt-get install clang-format)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'native-runner/*.cpp' 'native-runner/*.h' 'native-runner/*.cu' 'native-runner/*.cuh' | grep -v '^native-runner/generated/' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
case "${1:-}" in
  --check) exec "$bin" --dry-run --Werror "${files[@]}" ;;
  --write) exec "$bin" -i "${files[@]}" ;;
  *) echo "usage: scripts/clang-format.sh --check | --write" >&2; exit 2 ;;
esac
