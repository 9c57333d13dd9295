#!/usr/bin/env bash
# Builds and runs every device-memory benchmark and the GPU functional check
# in one go (one device lease):
#   bash native-runner/bench/run_all.sh [--build-only]
# Results go to $OUT (the device machine's return folder) or /tmp/trtx-device-memory:
#   report.md (every table), results.jsonl, env.txt, build.log, sanitizer.txt
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUTDIR=${OUT:-/tmp/trtx-device-memory}
BUILD=${BUILD_DIR:-/tmp/trtx-device-memory-build}
ARCH=${CUDA_ARCH:-sm_90}
mkdir -p "$OUTDIR" "$BUILD"
NVCC=(nvcc -O2 -std=c++17 "-arch=$ARCH" -I"$ROOT/include" -I"$ROOT/generated" -I"$ROOT/src/memory")

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1
  nvcc --version | tail -2
  uname -r
} > "$OUTDIR/env.txt" 2>&1

# Library objects, then the programs, each step in parallel.
LIB_SOURCES="warm_pool.cpp shared_scratch_pool.cpp json_text.cpp"
: > "$OUTDIR/build.log"
pids=()
for src in $LIB_SOURCES; do
  ( "${NVCC[@]}" -c "$ROOT/src/memory/$src" -o "$BUILD/$src.o" >> "$OUTDIR/build.log" 2>&1 ) &
  pids+=($!)
done
build_failed=0
# The reports quote strings with the runner's JSON writer; every CUDA call
# goes through the runner's CUDA wrapper.
for src in json_quote.cpp cuda_api.cpp; do
  ( "${NVCC[@]}" -c "$ROOT/src/runtime/$src" -o "$BUILD/$src.o" >> "$OUTDIR/build.log" 2>&1 ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || build_failed=1; done
PROGRAMS="gpu_check bench_alloc bench_decode bench_shared_scratch bench_reclaim"
pids=()
if [ "$build_failed" = 0 ]; then
  for prog in $PROGRAMS; do
    ( "${NVCC[@]}" "$HERE/$prog.cu" "$BUILD"/*.o -o "$BUILD/$prog" >> "$OUTDIR/build.log" 2>&1 ) &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || build_failed=1; done
fi
if [ "$build_failed" != 0 ]; then
  echo "BUILD FAILED"; cat "$OUTDIR/build.log"; exit 1
fi
echo "built: $PROGRAMS"
[ "${1:-}" = "--build-only" ] && exit 0

REPORT="$OUTDIR/report.md"
RESULTS="$OUTDIR/results.jsonl"
: > "$REPORT"
: > "$RESULTS"
status=0
for prog in $PROGRAMS; do
  echo "### $prog" >> "$REPORT"
  timeout 45 "$BUILD/$prog" "$RESULTS" >> "$REPORT" 2>&1
  rc=$?
  echo "exit status: $rc" >> "$REPORT"
  echo >> "$REPORT"
  [ "$rc" = 0 ] || status=1
done
# Memory errors in the CUDA wiring (use after free across the hand-off, growth, shrink).
if command -v compute-sanitizer > /dev/null; then
  timeout 60 compute-sanitizer --tool memcheck --leak-check full "$BUILD/gpu_check" > "$OUTDIR/sanitizer.txt" 2>&1
  echo "compute-sanitizer memcheck exit status: $?" >> "$OUTDIR/sanitizer.txt"
else
  echo "compute-sanitizer not found" > "$OUTDIR/sanitizer.txt"
fi
cat "$REPORT"
tail -3 "$OUTDIR/sanitizer.txt"
exit $status
