#!/usr/bin/env bash
# On the GPU machine, one lease (results: native-runner/bench/results/h200-2026-12-02-plugin-and-validation.md):
#   OUT=DIR bash native-runner/tests/gpu_plugin_and_reference.sh SDK FLATBUFFERS_INCLUDE REFDIR
# builds the CUDA runner and trtx's backend as a --backend-lib library
# against SDK (the wheel-only SDK trtx fetches: ~/.cache/trtx/executorch-sdk/*),
# runs every program of REFDIR (scripts/gpu-reference.ts prepare) on cuda and
# the CPU, caller stream off and on (reference_gpu.sh), then the KV programs
# through the library on cuda and compares their outputs with the built-in
# backend's byte for byte. Outputs come back as OUT/ref-out.tgz for
# `scripts/gpu-reference.ts compare REFDIR DIR/ref`.
set -uo pipefail
root=$PWD; sdk=$1; fbs=$2; ref=$3; build=$root/native-runner/build-gpu; out=$OUT/gpu
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
t0=$(date +%s)
cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRTX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$sdk" -DTRTX_FLATBUFFERS_INCLUDE_DIR="$fbs" -DTRTX_PTE_CORPUS=/nonexistent \
  -DTRTX_BACKEND_PLUGIN=ON >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j16 --target trtx-runner trtx_backend_plugin >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
bash native-runner/tests/reference_gpu.sh "$sdk" "$ref" "$out/ref" "$build" > "$out/ref.log" 2>&1; echo "reference runs rc $?"; grep -c "exit 0" "$out/ref.log"; grep -v "exit 0" "$out/ref.log" | head
# The plugin on the GPU: the same program through trtx's backend built as a --backend-lib library.
plugin=$(find "$build" -name 'libtrtx_backend_plugin.so' | head -1); echo "plugin $plugin"
for n in token-llama hf-llama; do
  for v in staged zero-copy; do
    for mode in builtin plugin; do
      extra=(); [ $mode = plugin ] && extra=(--backend-lib "$plugin")
      TRTX_BACKEND_PLUGIN_TRACE="$out/plugin-trace.txt" "$build/trtx-runner" run "$ref"/$n.$v.pte --device cuda --caller-stream on --steps 5 --init-device-buffers \
        --inputs "$ref"/$n.inputs.trxt --outputs "$out/$n.$v.$mode.trxt" --report "$out/$n.$v.$mode.report.json" "${extra[@]}" 2>"$out/$n.$v.$mode.err"
      echo "$n $v $mode exit $?"
    done
    cmp "$out/$n.$v.builtin.trxt" "$out/$n.$v.plugin.trxt" && echo "$n $v plugin outputs identical to builtin"
  done
done
wc -l "$out/plugin-trace.txt" 2>/dev/null
# Hand back the reference runs' outputs as one archive (compared here with scripts/gpu-reference.ts compare).
tar -czf "$OUT/ref-out.tgz" -C "$out" ref && rm -rf "$out/ref"
tar -czf "$OUT/rest.tgz" -C "$out" . && find "$out" -mindepth 1 -delete
true
