#!/usr/bin/env bash
# Reference engine version 3 on a GPU, from the repository root:
#   bash native-runner/bench/session_v3.sh OUT_DIR
# Carry (ignored paths, written beforehand here):
#   .device/sdk      the ExecuTorch C++ SDK (include/, lib/, share/ of the wheel)
#   .device/include  the flatbuffers headers (cp -r /usr/include/flatbuffers)
#   .device/v3       programs from native-runner/tests/make_v3_program.py:
#                    small-v2/-v3 (defaults), mid-v2/-v3 (--hidden 1024
#                    --layers 4 --budget 1000000: 16 MiB of weights)
# Builds with CUDA (sm_90), runs ctest, then every program on CUDA and the
# CPU with and without a caller stream (5 steps), a half-weights budget on
# mid-v3, and compute-sanitizer memcheck on small-v3; summary.py compares
# the digests (v2 = v3, CUDA = CPU) and prints the report's new numbers.
set -uo pipefail
out=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$out"
build=native-runner/build-gpu
say() { echo "== $(date -u +%H:%M:%S) $*"; }

say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
timeout 120 cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRTX_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$root/.device/sdk" \
  -DTRTX_FLATBUFFERS_INCLUDE_DIR="$root/.device/include" -DTRTX_PTE_CORPUS=/nonexistent >"$out/configure.log" 2>&1 &&
  timeout 300 cmake --build "$build" -j"$(nproc)" >"$out/build.log" 2>&1
rc=$?
say "build rc=$rc"
if [ "$rc" -ne 0 ]; then
  tail -30 "$out/configure.log" "$out/build.log"
  exit 1
fi
(cd "$build" && timeout 120 ctest --output-on-failure) >"$out/ctest.log" 2>&1
grep -E "tests passed|tests failed|\*\*\*Failed" "$out/ctest.log"

say "runs"
for p in small-v2 small-v3 mid-v2 mid-v3; do
  for dev in cuda cpu; do
    for cs in off on; do
      timeout 120 "$build/trtx-runner" run ".device/v3/$p.pte" --device "$dev" --caller-stream "$cs" --steps 5 \
        --report "$out/$p-$dev-$cs.json" 2>>"$out/runs.log"
      echo "$p $dev caller-stream=$cs rc=$?"
    done
  done
done
weights=$(python3 -c "import json;print(json.load(open('$out/mid-v3-cuda-off.json'))['methods'][0]['delegates'][0]['budget']['streamable_bytes'])")
timeout 120 "$build/trtx-runner" run .device/v3/mid-v3.pte --device cuda --budget $((weights / 2)) --steps 2 \
  --report "$out/mid-v3-budget.json" 2>>"$out/runs.log"
echo "mid-v3 budget $((weights / 2)) rc=$?"

say "compute-sanitizer memcheck, small-v3, caller stream"
timeout 180 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
  "$build/trtx-runner" run .device/v3/small-v3.pte --device cuda --caller-stream on --steps 3 \
  --report "$out/memcheck.json" >"$out/memcheck.log" 2>&1
echo "memcheck rc=$?"
tail -3 "$out/memcheck.log"

say "summary"
python3 native-runner/bench/session_v3_summary.py "$out"
