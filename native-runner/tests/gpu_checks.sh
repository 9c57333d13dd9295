#!/usr/bin/env bash
# What the runner proves on a GPU, after a CUDA build (bench/session_h200.sh
# builds it first):
#   native-runner/tests/gpu_checks.sh FIXTURES_DIR OUT_DIR BUILD_DIR
# FIXTURES_DIR holds .pte programs (`npm run fixtures -- --out DIR`; the GPU
# machine has no node). Runs compute-sanitizer memcheck (with leak check),
# racecheck, initcheck and synccheck over the zero-copy caller-stream path (a
# non-blocking stream, no synchronize beyond the contract's), initcheck once
# more on a zero-copy program whose caches nobody initialises and nobody
# poisons (--arena-fill none): it must report the uninitialised reads; then
# every program on CUDA and on the CPU in both caller-stream modes, as a
# correct application runs it (device-resident buffers initialised after
# load), and the contract across the reports (compare_reports.py). OUT_DIR
# gets summary.txt and gpu-logs.tar.gz.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$(cd "$1" && pwd)
out=$2
build=$(cd "$3" && pwd)
work=$(mktemp -d)
summary="$out/summary.txt"
mkdir -p "$out" "$work/reports"
say() { echo "$*" | tee -a "$summary"; }
R="$build/trtx-runner"

say "== compute-sanitizer over the zero-copy caller-stream path (device buffers initialised)"
sanitize_rc=0
for tool in memcheck racecheck initcheck synccheck; do
  for prog in kv-decode-zero-copy mixed-conv-state-one-delegate-zero-copy; do
    [ -f "$fixtures/$prog.pte" ] || continue
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    timeout 120 compute-sanitizer --tool "$tool" $extra --error-exitcode 99 \
      "$R" run "$fixtures/$prog.pte" --device cuda --caller-stream on --steps 4 --init-device-buffers --report "$work/san.json" \
      >"$work/sanitizer-$tool-$prog.log" 2>&1
    rc=$?
    line=$(grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY" "$work/sanitizer-$tool-$prog.log" | tail -1)
    say "$tool $prog rc=$rc $line"
    [ "$rc" -ne 0 ] && sanitize_rc=1
  done
done

say "== initcheck on caches nobody initialises (--arena-fill none, no --init-device-buffers): must flag"
flag_rc=0
for fill in none poison; do
  timeout 120 compute-sanitizer --tool initcheck --error-exitcode 99 \
    "$R" run "$fixtures/kv-decode-zero-copy.pte" --method decode --device cuda --caller-stream on --steps 2 --arena-fill "$fill" \
    --report "$work/uninit-$fill.json" >"$work/initcheck-uninitialised-$fill.log" 2>&1
  rc=$?
  reads=$(grep -c "Uninitialized __global__ memory read" "$work/initcheck-uninitialised-$fill.log")
  line=$(grep -E "ERROR SUMMARY" "$work/initcheck-uninitialised-$fill.log" | tail -1)
  say "initcheck arena-fill $fill, not initialised: rc=$rc, $reads uninitialised-read reports; $line"
  # Unpoisoned, the reads must be flagged; poisoned, the memory is written
  # (0xFF) and the fault shows in the results instead (NaN), not in initcheck.
  if [ "$fill" = none ] && [ "$reads" -eq 0 ]; then flag_rc=1; fi
done
grep -m3 -A4 "Uninitialized __global__ memory read" "$work/initcheck-uninitialised-none.log" | tee -a "$summary"

say "== programs on CUDA and CPU, caller stream off and on (device buffers initialised)"
for f in "$fixtures"/*.pte; do
  n=$(basename "$f" .pte)
  for dev in cuda cpu; do
    for cs in off on; do
      timeout 60 "$R" run "$f" --device "$dev" --steps 3 --caller-stream "$cs" --init-device-buffers \
        --report "$work/reports/$n.$dev.$cs.json" 2>>"$work/runner-stderr.log"
      rc=$?
      [ "$rc" -gt 3 ] && say "CRASH $n $dev $cs rc=$rc"
    done
  done
done
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
say "visible GPUs: $gpus"
python3 "$here/compare_reports.py" "$work/reports" "$gpus" >"$work/compare.log" 2>&1
compare_rc=$?
tee -a "$summary" <"$work/compare.log"

tar -czf "$out/gpu-logs.tar.gz" -C "$work" .
say "== result: contract rc=$compare_rc, sanitizers rc=$sanitize_rc, uninitialised reads flagged rc=$flag_rc"
[ "$compare_rc" -eq 0 ] && [ "$sanitize_rc" -eq 0 ] && [ "$flag_rc" -eq 0 ]
