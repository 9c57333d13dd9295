#!/usr/bin/env bash
# Issue 40 on a GPU, one device command (bench/README.md, "The engine on a GPU"), from the repository root:
#   bash bench/engine-gpu/session.sh DIR STEPS
# DIR (carried; prepared here: bench/engine-gpu/prepare.sh) holds NAME.{staged,zero-copy}.{skeleton,recipe.json},
# NAME.inputs.trxt, sdk/ (the pinned executorch wheel's C++ SDK) and include/ (flatbuffers headers).
# Builds the runner with CUDA and the machine's CUDA libtorch (ATen's kernels on the GPU), writes the
# programs back (inflate.py checks their sha256), runs each on cuda: staged and zero-copy with every
# weight resident, zero-copy under the baked 1 GiB budget (streaming), zero-copy with a caller stream,
# and zero-copy on ExecuTorch's CPU kernels (the engine before ATen) for two steps; then eager
# PyTorch's CUDA step for the same model (eager.py). Everything goes to $OUT/engine-gpu.tgz.
set -uo pipefail
# Raw files stay in /tmp: only the archive goes to $OUT (the device returns at most 8 files).
dir=$1 steps=$2 build=native-runner/build-gpu work=/tmp/engine-gpu out=/tmp/engine-gpu/runs
mkdir -p "$work" "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
torchdir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
inflate() {
  for recipe in "$dir"/*.recipe.json; do
    base=$(basename "$recipe" .recipe.json)
    python3 bench/real-size/inflate.py "$recipe" "$dir/$base.skeleton" "$work/$base.pte" || return 1
  done
}
inflate >"$out/inflate.log" 2>&1 &
inflating=$!
t0=$(date +%s)
cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=Release -DTRTX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTRTX_BUILD_TESTS=OFF -DTRTX_BACKEND_PLUGIN=OFF -DCMAKE_PREFIX_PATH="$PWD/$dir/sdk" \
  -DTRTX_FLATBUFFERS_INCLUDE_DIR="$PWD/$dir/include" -DTRTX_LIBTORCH_DIR="$torchdir" >"$out/configure.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target trtx-runner >"$out/build.log" 2>&1 ||
  { kill "$inflating" 2>/dev/null; tail -60 "$out/configure.log" "$out/build.log"; tar -czf "$OUT/engine-gpu.tgz" -C "$out" .; exit 1; }
echo "build $(($(date +%s) - t0)) s"
wait "$inflating" || { cat "$out/inflate.log"; exit 1; }
cat "$out/inflate.log"
run() { # TAG PROGRAM STEPS ARGS...
  local tag=$1 pte=$2 n=$3
  shift 3
  local name=${pte##*/}
  name=${name%%.*}
  /usr/bin/time -f "%e s %M KiB" timeout 240 "$build/trtx-runner" run "$pte" --device cuda --steps "$n" --init-device-buffers \
    --inputs "$dir/$name.inputs.trxt" --outputs "$out/$tag.trxt" --report "$out/$tag.report.json" "$@" 2>"$out/$tag.err"
  echo "$tag exit $? $(tail -1 "$out/$tag.err")"
  python3 bench/engine-gpu/summary.py "$out/$tag.report.json"
  # What has run so far comes back even if the command is stopped at its limit.
  tar -czf "$OUT/engine-gpu.tgz" -C "$out" .
}
for staged in "$work"/*.staged.pte; do
  zc=${staged%.staged.pte}.zero-copy.pte
  run staged.resident "$staged" "$steps" --caller-stream off --budget 68719476736
  run zero-copy.resident "$zc" "$steps" --caller-stream off --budget 68719476736
  run zero-copy.budget "$zc" "$steps" --caller-stream off
  run zero-copy.resident.stream-on "$zc" "$steps" --caller-stream on --budget 68719476736
  run staged.budget "$staged" "$steps" --caller-stream off
done
PYTHONUNBUFFERED=1 python3 bench/engine-gpu/eager.py --shape 1b --dtype bfloat16 --max-cache 1024 --steps "$steps" --out "$out" 2>&1 | tail -3
tar -czf "$OUT/engine-gpu.tgz" -C "$out" . && echo "wrote engine-gpu.tgz"
# The engine before ATen's kernels (ExecuTorch's CPU kernels, bindings through the host), last: it is slow.
# TRTX_SKIP_BEFORE=1 leaves it out (measured once: bench/README.md).
[ -n "${TRTX_SKIP_BEFORE:-}" ] || for zc in "$work"/*.zero-copy.pte; do run zero-copy.executorch "$zc" 2 --caller-stream off --engine-kernels executorch; done
