#!/usr/bin/env bash
# Everything the runner proves on a GPU, in one command (one device lease):
#   native-runner/tests/gpu_checks.sh FIXTURES_DIR OUT_DIR
# FIXTURES_DIR holds .pte programs (`npm run fixtures -- --out DIR` writes the
# catalogue; the GPU machine has no node, so write them beforehand). Builds
# with CUDA for sm_90, runs ctest (its CUDA cases run when a GPU is visible),
# runs every program on CUDA and on the CPU in both caller-stream modes and
# checks the contract across the reports (compare_reports.py), then runs
# compute-sanitizer memcheck, racecheck, initcheck and synccheck over the
# zero-copy caller-stream path: a non-blocking stream, and no synchronize
# beyond the ones the contract makes. OUT_DIR gets summary.txt and
# gpu-logs.tar.gz.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fixtures=$(cd "$1" && pwd)
out=$2
work=$(mktemp -d)
build="$root/native-runner/build-gpu"
summary="$out/summary.txt"
mkdir -p "$out" "$work/reports"
say() { echo "$*" | tee -a "$summary"; }

say "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$summary"
nvcc --version | tail -1 | tee -a "$summary"

say "== build (CUDA sm_90)"
start=$(date +%s)
flatbuffers=""
[ -d "$root/.device/include/flatbuffers" ] && flatbuffers="-DTRTX_FLATBUFFERS_INCLUDE_DIR=$root/.device/include"
if ! cmake -S "$root/native-runner" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
    $flatbuffers >"$work/configure.log" 2>&1 || ! cmake --build "$build" -j"$(nproc)" >"$work/build.log" 2>&1; then
  tail -40 "$work/configure.log" "$work/build.log" | tee -a "$summary"
  tar -czf "$out/gpu-logs.tar.gz" -C "$work" .
  exit 1
fi
grep -h "CUDA executors" "$work/configure.log" | tee -a "$summary"
say "built in $(( $(date +%s) - start ))s"

say "== ctest"
(cd "$build" && ctest --output-on-failure) >"$work/ctest.log" 2>&1
ctest_rc=$?
grep -E "tests passed|tests failed|Failed|\*\*\*" "$work/ctest.log" | tee -a "$summary"
grep -E "^\[FAIL\]|FAILED:" -h "$work/ctest.log" | head -20 | tee -a "$summary"
"$build/tests/method_test" >"$work/method_test.log" 2>&1
"$build/tests/reference_engine_test" >"$work/reference_engine_test.log" 2>&1
grep -h "no CUDA device" "$work/reference_engine_test.log" | tee -a "$summary"

say "== programs on CUDA and CPU, caller stream off and on"
R="$build/trtx-runner"
for f in "$fixtures"/*.pte; do
  n=$(basename "$f" .pte)
  for dev in cuda cpu; do
    for cs in off on; do
      "$R" run "$f" --device "$dev" --steps 3 --caller-stream "$cs" --report "$work/reports/$n.$dev.$cs.json" \
        2>>"$work/runner-stderr.log"
      rc=$?
      [ "$rc" -gt 3 ] && say "CRASH $n $dev $cs rc=$rc"
    done
  done
done
python3 "$here/compare_reports.py" "$work/reports" >"$work/compare.log" 2>&1
compare_rc=$?
tee -a "$summary" <"$work/compare.log"

say "== compute-sanitizer over the zero-copy caller-stream path"
sanitize_rc=0
for tool in memcheck racecheck initcheck synccheck; do
  for prog in kv-decode-zero-copy mixed-conv-state-one-delegate-zero-copy kv-decode-two-engine-zero-copy kv-decode-staged; do
    [ -f "$fixtures/$prog.pte" ] || continue
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    compute-sanitizer --tool "$tool" $extra --error-exitcode 99 \
      "$R" run "$fixtures/$prog.pte" --device cuda --caller-stream on --steps 4 --report "$work/san.json" \
      >"$work/sanitizer-$tool-$prog.log" 2>&1
    rc=$?
    line=$(grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|No .* errors|error" "$work/sanitizer-$tool-$prog.log" | tail -1)
    say "$tool $prog rc=$rc $line"
    [ "$rc" -ne 0 ] && sanitize_rc=1
  done
done

tar -czf "$out/gpu-logs.tar.gz" -C "$work" .
say "== result: ctest rc=$ctest_rc, contract rc=$compare_rc, sanitizers rc=$sanitize_rc"
[ "$ctest_rc" -eq 0 ] && [ "$compare_rc" -eq 0 ] && [ "$sanitize_rc" -eq 0 ]
