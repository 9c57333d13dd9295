#!/usr/bin/env bash
# On the GPU machine (scripts/gpu-reference.ts prepares DIR here first):
#   bash native-runner/tests/reference_gpu.sh SDK DIR OUT [BUILD]
# Builds the CUDA runner against the ExecuTorch SDK and runs every
# NAME.{staged,zero-copy}.pte of DIR with its recorded inputs
# (NAME.inputs.trxt) on cuda and on the CPU, caller stream off and on, the
# device caches initialised as the zero-copy contract asks; each run's
# outputs go to OUT/NAME.VARIANT.DEVICE.stream-MODE.trxt, its report beside.
set -uo pipefail
sdk=$1 dir=$2 out=$3 build=${4:-native-runner/build-gpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
if [ ! -x "$build/trtx-runner" ]; then
  cmake -S "$root/native-runner" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRTX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_PREFIX_PATH="$sdk" -DTRTX_FLATBUFFERS_INCLUDE_DIR="$root/.device/include" -DTRTX_PTE_CORPUS=/nonexistent >"$out/configure.log" 2>&1 &&
    cmake --build "$build" -j"$(nproc)" --target trtx-runner >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
fi
rc=0
for pte in "$dir"/*.pte; do
  base=$(basename "$pte" .pte)        # NAME.VARIANT
  name=${base%.*}
  steps=$(cat "$dir/$name.steps")
  for device in cuda cpu; do
    for stream in off on; do
      tag="$base.$device.stream-$stream"
      "$build/trtx-runner" run "$pte" --device "$device" --caller-stream "$stream" --steps "$steps" --init-device-buffers \
        --inputs "$dir/$name.inputs.trxt" --outputs "$out/$tag.trxt" --report "$out/$tag.report.json" 2>"$out/$tag.err"
      code=$?
      echo "$tag exit $code"
      [ "$code" -eq 0 ] || { rc=1; tail -3 "$out/$tag.err"; }
    done
  done
done
exit $rc
