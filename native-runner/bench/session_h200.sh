#!/usr/bin/env bash
# One device lease for the runner on the ExecuTorch runtime, from the
# repository root:
#   TRTX_ET_SDK=DIR bash native-runner/bench/session_h200.sh OUT_DIR [DEADLINE_S]
# DIR is the ExecuTorch C++ SDK (include/, lib/, share/ of the executorch
# wheel; the GPU machine has no ExecuTorch). Write beforehand, here (the GPU
# machine has neither node nor the flatbuffers headers):
#   npm run fixtures -- --out .device/fixtures
#   mkdir -p .device/seed && mv .device/fixtures/kv-decode-seed-*.pte .device/seed/
#   npx tsx bench/make-six-engines.ts --out .device/bench
#   mkdir -p .device/include && cp -r /usr/include/flatbuffers .device/include/
# Order: the CUDA build (sm_90) against the SDK; ctest; the timed runner
# benchmarks (runner_h200.sh: seed-scale staged vs zero-copy, six engines
# private vs shared scratch, 25 delegates cold vs warm pool); the warm pool
# inside the registered allocator (bench_registered_alloc); then
# gpu_checks.sh (every fixture on CUDA and the CPU, the contract across the
# reports, compute-sanitizer). Each stage has its own time limit.
set -uo pipefail
out=$1  # gets at most 8 files: log files and reports go into logs.tar.gz
deadline=${2:-480}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$out"
logs=$(mktemp -d)
trap 'tar -czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1
build=native-runner/build-gpu
sdk=${TRTX_ET_SDK:?set TRTX_ET_SDK to the ExecuTorch SDK folder}
say() { echo "== $(date -u +%H:%M:%S) $*"; }

say "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
nvcc --version | tail -1
cmake --version | head -1
say "build (CUDA, sm_90, ExecuTorch SDK $sdk)"
start=$(date +%s)
timeout 90 cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRTX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$sdk" -DTRTX_FLATBUFFERS_INCLUDE_DIR="$root/.device/include" -DTRTX_PTE_CORPUS=/nonexistent \
  >"$logs/configure.log" 2>&1 &&
  timeout 240 cmake --build "$build" -j"$(nproc)" >"$logs/build.log" 2>&1
build_rc=$?
say "build rc=$build_rc in $(( $(date +%s) - start ))s"
grep -h "trtx-runner:" "$logs/configure.log"
if [ "$build_rc" -ne 0 ]; then
  tail -40 "$logs/configure.log" "$logs/build.log"
  exit 1
fi
"$build/trtx-runner" --version

say "ctest"
(cd "$build" && timeout 60 ctest --output-on-failure) >"$logs/ctest.log" 2>&1
grep -E "tests passed|tests failed|\*\*\*Failed" "$logs/ctest.log"

say "runner benchmarks"
timeout 200 bash native-runner/bench/runner_h200.sh "$build/trtx-runner" "$logs" 23 103 190
bench_rc=$?
cp "$logs/runner-bench.md" "$logs/runner-bench.json" "$out/" 2>/dev/null
say "runner benchmarks rc=$bench_rc"

say "warm pool inside the registered allocator"
timeout 60 "$build/bench_registered_alloc" 100 | tee "$out/registered-alloc.jsonl"

left=$(( deadline - SECONDS ))
if [ "$left" -ge 30 ]; then
  say "gpu_checks (${left}s left)"
  timeout "$left" bash native-runner/tests/gpu_checks.sh .device/fixtures "$logs" "$build"
  checks_rc=$?
  cp "$logs/summary.txt" "$out/gpu-summary.txt"
  say "gpu_checks rc=$checks_rc"
else
  say "gpu_checks skipped: ${left}s left"
fi
