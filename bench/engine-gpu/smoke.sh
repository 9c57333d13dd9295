#!/usr/bin/env bash
# The ATen CUDA path in one short device command: builds the runner with CUDA and the machine's CUDA
# libtorch, runs each program of DIR (scripts/gpu-reference.ts prepare) staged and zero-copy on cuda
# with its recorded inputs; outputs and reports to $OUT/smoke.tgz for `scripts/gpu-reference.ts compare`.
#   bash bench/engine-gpu/smoke.sh SDKDIR DIR
set -uo pipefail
# Raw files stay in /tmp: only the archive goes to $OUT (the device returns at most 8 files).
sdk=$1 dir=$2 build=native-runner/build-gpu out=/tmp/engine-smoke/runs
mkdir -p "$out"
torchdir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
t0=$(date +%s)
cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=Release -DTRTX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTRTX_BUILD_TESTS=OFF -DTRTX_BACKEND_PLUGIN=OFF -DCMAKE_PREFIX_PATH="$PWD/$sdk/sdk" \
  -DTRTX_FLATBUFFERS_INCLUDE_DIR="$PWD/$sdk/include" -DTRTX_LIBTORCH_DIR="$torchdir" >"$out/configure.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target trtx-runner >"$out/build.log" 2>&1 ||
  { tail -40 "$out/configure.log" "$out/build.log"; tar -czf "$OUT/smoke.tgz" -C "$out" .; exit 1; }
echo "build $(($(date +%s) - t0)) s"
for pte in "$dir"/*.pte; do
  base=$(basename "$pte" .pte) name=${base%.*}
  tag="$base.cuda.stream-off"
  timeout 180 "$build/trtx-runner" run "$pte" --device cuda --steps "$(cat "$dir/$name.steps")" --init-device-buffers \
    --inputs "$dir/$name.inputs.trxt" --outputs "$out/$tag.trxt" --report "$out/$tag.report.json" 2>"$out/$tag.err"
  echo "$tag exit $?"
  python3 bench/engine-gpu/summary.py "$out/$tag.report.json"
done
tar -czf "$OUT/smoke.tgz" -C "$out" .
