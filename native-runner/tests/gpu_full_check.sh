#!/usr/bin/env bash
# The whole runner on one GPU lease (results:
# native-runner/bench/results/h200-2026-12-02-one-dialect.md):
#   OUT=DIR bash native-runner/tests/gpu_full_check.sh SDK FLATBUFFERS_INCLUDE REFDIR FIXTURES
# the CUDA build of every target (runner, backend plugin, ctests) against SDK
# (the wheel-only SDK trtx fetches), ctest, every program of REFDIR
# (scripts/gpu-reference.ts prepare) on cuda and the CPU with the caller
# stream off and on, the --backend-lib path against the built-in backend
# byte for byte, --shared-scratch and --cold-pool against the default, then
# gpu_checks.sh (compute-sanitizer, the contract across reports) over
# FIXTURES (`npm run fixtures -- --out DIR`). The reference runs' outputs
# come back as OUT/ref-out.tgz for `scripts/gpu-reference.ts compare`.
set -uo pipefail
root=$PWD; sdk=$1; fbs=$2; ref=$3; fixtures=$4; build=$root/native-runner/build-gpu; out=$OUT/gpu
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
t0=$(date +%s)
cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRTX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$sdk" -DTRTX_FLATBUFFERS_INCLUDE_DIR="$fbs" -DTRTX_PTE_CORPUS=/nonexistent \
  -DTRTX_BACKEND_PLUGIN=ON >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j16 >"$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
(cd "$build" && ctest -j8 --output-on-failure -E corpus > "$out/ctest.log" 2>&1); echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*" "$out/ctest.log" | head -20
bash native-runner/tests/reference_gpu.sh "$sdk" "$ref" "$out/ref" "$build" > "$out/ref.log" 2>&1; echo "reference runs rc $?"; grep -c "exit 0" "$out/ref.log"; grep -v "exit 0" "$out/ref.log" | head
plugin=$(find "$build" -name 'libtrtx_backend_plugin.so' | head -1); echo "plugin $plugin"
for n in token-llama hf-llama; do
  for v in staged zero-copy; do
    for mode in builtin plugin; do
      extra=(); [ $mode = plugin ] && extra=(--backend-lib "$plugin")
      "$build/trtx-runner" run "$ref"/$n.$v.pte --device cuda --caller-stream on --steps 5 --init-device-buffers \
        --inputs "$ref"/$n.inputs.trxt --outputs "$out/$n.$v.$mode.trxt" --report "$out/$n.$v.$mode.report.json" "${extra[@]}" 2>"$out/$n.$v.$mode.err"
      echo "$n $v $mode exit $?"
    done
    cmp "$out/$n.$v.builtin.trxt" "$out/$n.$v.plugin.trxt" && echo "$n $v plugin outputs identical to builtin"
  done
done
# The shared scratch and the warm pool through the runner on the GPU (the CUDA wrapper's pool calls).
for flags in "--shared-scratch" "--cold-pool" ""; do
  "$build/trtx-runner" run "$ref"/token-llama.zero-copy.pte --device cuda --steps 5 --init-device-buffers $flags \
    --inputs "$ref"/token-llama.inputs.trxt --outputs "$out/tl.zc$flags.trxt" --report "$out/tl.zc$flags.json" 2>"$out/tl.zc$flags.err"
  echo "token-llama zero-copy cuda $flags exit $?"
done
cmp "$out/tl.zc--shared-scratch.trxt" "$out/tl.zc.trxt" && echo "shared scratch outputs identical"
cmp "$out/tl.zc--cold-pool.trxt" "$out/tl.zc.trxt" && echo "cold pool outputs identical"
python3 -c "import json,sys; r=json.load(open('$out/tl.zc--shared-scratch.json')); print('memory', json.dumps(r.get('memory'))[:600])"
t1=$(date +%s)
bash native-runner/tests/gpu_checks.sh "$fixtures" "$out/checks" "$build" > "$out/checks.log" 2>&1; echo "gpu_checks rc $? in $(( $(date +%s) - t1 )) s"
tail -25 "$out/checks/summary.txt"
tar -czf "$OUT/ref-out.tgz" -C "$out" ref && rm -rf "$out/ref"
tar -czf "$OUT/rest.tgz" -C "$out" . && find "$out" -mindepth 1 -delete
true
