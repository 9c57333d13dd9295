#!/usr/bin/env bash
# One lease of two GPUs (nvidia-h200-x2) for the runner's per-device
# bookkeeping, from the repository root:
#   TRTX_ET_SDK=DIR bash native-runner/bench/session_h200x2.sh OUT_DIR [DEADLINE_S]
# DIR is the ExecuTorch C++ SDK (include/, lib/, share/ of the executorch
# wheel). Written beforehand, here (the GPU machine has neither node nor the
# flatbuffers headers):
#   npm run fixtures -- --out .device/fixtures --only two-
#   mkdir -p .device/include && cp -r /usr/include/flatbuffers .device/include/
#   .device/corpus/: the corpus programs (npm run corpus; ~/.cache/trtx/corpus/)
#     and their zero-copy rewrites (trtx rewrite X.pte --zero-copy-kv -o X.zero-copy.pte)
# Order, each stage under its own time limit: the CUDA build (sm_90) and
# ctest; two_device_check (the warm pool raised on both devices and released
# from a thread on the other, shared scratch one buffer per device with
# reclamation on each); the two-GPU program and its one-GPU twin, staged and
# zero-copy, on CUDA and the CPU, both caller-stream modes, compared bit for
# bit (two_gpu_compare.py, tests/compare_reports.py), with shared scratch;
# compute-sanitizer memcheck and synccheck on the two-device zero-copy path;
# then, time allowing, the corpus on GPU 0 against the CPU.
# Nothing here uses NCCL; NCCL_NVLS_ENABLE=0 all the same (KINDS.md).
set -uo pipefail
out=$1
deadline=${2:-450}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$out"
work=$(mktemp -d)
trap 'tar -czf "$out/logs.tar.gz" -C "$work" . 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
build=native-runner/build-gpu
sdk=${TRTX_ET_SDK:?set TRTX_ET_SDK to the ExecuTorch SDK folder}
fx=.device/fixtures
say() { echo "== $(date -u +%H:%M:%S) +${SECONDS}s $*"; }
left() { echo $(( deadline - SECONDS )); }

say "devices"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -4
nvcc --version | tail -1

say "build (CUDA, sm_90)"
timeout 60 cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRTX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$sdk" -DTRTX_FLATBUFFERS_INCLUDE_DIR="$root/.device/include" -DTRTX_PTE_CORPUS=/nonexistent \
  >"$work/configure.log" 2>&1 && timeout 180 cmake --build "$build" -j"$(nproc)" >"$work/build.log" 2>&1
rc=$?
say "build rc=$rc"
if [ "$rc" -ne 0 ]; then tail -40 "$work/configure.log" "$work/build.log"; exit 1; fi
R="$build/trtx-runner"
"$R" --version
(cd "$build" && timeout 60 ctest --output-on-failure) >"$work/ctest.log" 2>&1
grep -E "tests passed|tests failed|\*\*\*Failed" "$work/ctest.log"

say "two_device_check"
timeout 90 "$build/two_device_check" | tee "$out/two-device-check.jsonl"
say "two_device_check rc=$?"

say "two-GPU program vs one GPU vs CPU"
mkdir -p "$work/reports" "$work/scratch"
for p in kv-decode-two-gpu-staged kv-decode-two-gpu-zero-copy kv-decode-two-engine-staged kv-decode-two-engine-zero-copy; do
  for dev in cuda cpu; do
    for cs in off on; do
      timeout 30 "$R" run "$fx/$p.pte" --device "$dev" --steps 4 --caller-stream "$cs" --init-device-buffers \
        --report "$work/reports/$p.$dev.$cs.json" 2>>"$work/runner-stderr.log"
      echo "$p $dev $cs rc=$?"
    done
  done
done
for cs in off on; do
  timeout 30 "$R" run "$fx/kv-decode-two-gpu-zero-copy.pte" --device cuda --steps 4 --caller-stream "$cs" --shared-scratch \
    --init-device-buffers --report "$work/scratch/kv-decode-two-gpu-zero-copy.cuda.$cs.json" 2>>"$work/runner-stderr.log"
  echo "shared scratch $cs rc=$?"
done
timeout 30 "$R" run "$fx/broken-two-gpu-device-id-swapped.pte" --device cuda --steps 1 --report "$work/swapped.json" 2>&1 | tail -1
echo "device_id swapped rc=${PIPESTATUS[0]} (must be 1, DeviceMismatch)"
python3 native-runner/bench/two_gpu_compare.py "$work/reports" "$work/scratch" | tee "$out/two-gpu-compare.md"
python3 native-runner/tests/compare_reports.py "$work/reports" | tee "$out/contract.txt"

say "compute-sanitizer on the two-device zero-copy path ($(left)s left)"
for tool in memcheck synccheck; do
  for cs in on off; do
    [ "$(left)" -lt 40 ] && { echo "$tool $cs skipped: out of time"; continue; }
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    timeout 120 compute-sanitizer --tool "$tool" $extra --error-exitcode 99 \
      "$R" run "$fx/kv-decode-two-gpu-zero-copy.pte" --device cuda --caller-stream "$cs" --steps 3 --init-device-buffers \
      --report "$work/san-$tool-$cs.json" >"$work/sanitizer-$tool-$cs.log" 2>&1
    rc=$?
    echo "$tool caller-stream $cs rc=$rc $(grep -E 'ERROR SUMMARY|LEAK SUMMARY' "$work/sanitizer-$tool-$cs.log" | tail -1)" | tee -a "$out/sanitizer.txt"
  done
done

say "corpus on GPU 0 vs the CPU ($(left)s left)"
if [ -d .device/corpus ]; then
  for f in .device/corpus/*.pte; do
    [ "$(left)" -lt 15 ] && { echo "corpus: out of time at $f"; break; }
    n=$(basename "$f" .pte)
    for dev in cuda cpu; do
      CUDA_VISIBLE_DEVICES=0 timeout 20 "$R" run "$f" --device "$dev" --steps 3 --init-device-buffers \
        --report "$work/corpus-$n.$dev.json" 2>>"$work/corpus-stderr.log"
    done
    python3 - "$work/corpus-$n.cuda.json" "$work/corpus-$n.cpu.json" "$n" <<'EOF' | tee -a "$out/corpus.txt"
import json, sys
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
a, b, n = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
def d(r):
    return [(m['name'], s['step'], [o['digest'] for o in s['outputs']], sorted((x['name'], x['digest']) for x in s['buffers'])) for m in r['methods'] for s in m['steps']]
if a is None or b is None:
    print(f'{n}: no report (cuda {a is not None}, cpu {b is not None})')
else:
    codes = lambda r: [e['code'] for e in r['errors']]
    same = d(a) == d(b) if a['exit_code'] == 0 and b['exit_code'] == 0 else None
    print(f'{n}: cuda exit {a["exit_code"]} {codes(a)}, cpu exit {b["exit_code"]} {codes(b)}, '
          f'digests {"==" if same else "!=" if same is False else "n/a"} ({len(d(a))} method steps)')
EOF
  done
fi
say "done"
