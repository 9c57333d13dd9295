#!/usr/bin/env bash
# One device lease for the runner (issues 6, 7) and the Python bridge probe
# (issue 8), from the repository root:
#   bash native-runner/bench/session_h200.sh OUT_DIR [DEADLINE_S]
# Needs .device/ written here first (the GPU machine has neither node nor the
# flatbuffers headers):
#   npm run fixtures -- --out .device/fixtures
#   mkdir -p .device/seed && mv .device/fixtures/kv-decode-seed-*.pte .device/seed/
#   npx tsx bench/make-six-engines.ts --out .device/bench
#   mkdir -p .device/include && cp -r /usr/include/flatbuffers .device/include/
# The seed-scale pair is kept out of .device/fixtures because gpu_checks.sh
# also runs every fixture on the CPU, where one seed-scale step takes seconds.
#
# Order: the bridge probe runs beside the CUDA build (it is done before any
# timing starts); then the timed benchmarks (runner_h200.sh); then
# gpu_checks.sh, whose build is then a no-op (same build folder and flags):
# ctest, every fixture on CUDA and CPU, the contract across reports,
# compute-sanitizer. Every stage has its own time limit; gpu_checks gets what
# is left until DEADLINE_S (default 400) seconds after the start.
set -uo pipefail
out=$1
deadline=${2:-400}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$out/gpu" "$out/runner"
export PYTHONUNBUFFERED=1
build=native-runner/build-gpu
say() { echo "== $(date -u +%H:%M:%S) $*"; }

say "bridge probe (background)"
(
  timeout 150 python3 python-bridge/tools/make_mutating_archive.py "$out/x.pt2" --device cuda &&
    timeout 120 python3 python-bridge/tools/probe_exported_program.py "$out/x.pt2" --run 2 >"$out/bridge-probe.json"
  echo "bridge probe rc=$?"
  PYTHONPATH=python-bridge timeout 120 python3 -m trtx_bridge \
    <<<'{"protocol":1,"model":"x","output":"/tmp/o.pte","methods":null,"budget_bytes":null,"zero_copy_kv":false,"allow_pickle":false,"check_only":true}' \
    >"$out/bridge-check.jsonl"
  echo "bridge check rc=$?"
) >/tmp/bridge.log 2>&1 &
bridge=$!

say "build (CUDA, sm_90)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
start=$(date +%s)
timeout 60 cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTRTX_FLATBUFFERS_INCLUDE_DIR="$root/.device/include" >/tmp/configure.log 2>&1 &&
  timeout 180 cmake --build "$build" -j"$(nproc)" >/tmp/build.log 2>&1
build_rc=$?
say "build rc=$build_rc in $(( $(date +%s) - start ))s"
[ "$build_rc" -ne 0 ] && tail -40 /tmp/configure.log /tmp/build.log

wait "$bridge"
cat /tmp/bridge.log
rm -f "$out/x.pt2"

if [ "$build_rc" -eq 0 ]; then
  say "runner benchmarks"
  timeout 180 bash native-runner/bench/runner_h200.sh "$build/trtx-runner" "$out/runner" 23 103 160
  say "runner benchmarks rc=$?"
fi

left=$(( deadline - SECONDS ))
if [ "$left" -ge 30 ]; then
  say "gpu_checks (${left}s left)"
  timeout "$left" bash native-runner/tests/gpu_checks.sh .device/fixtures "$out/gpu"
  say "gpu_checks rc=$?"
else
  say "gpu_checks skipped: ${left}s left"
fi
