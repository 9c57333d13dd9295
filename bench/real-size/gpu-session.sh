#!/usr/bin/env bash
# The real-size decoders on a GPU (bench/README.md, "Real size"), from the repository root of the GPU machine:
#   bash bench/real-size/gpu-session.sh DIR STEPS [STREAMS]   (STREAMS: caller-stream modes, default "off on")
# DIR (carried, prepared here with scripts/gpu-reference.ts prepare, then skeleton.ts over each .pte) holds
# NAME.{staged,zero-copy}.{skeleton,recipe.json}, NAME.inputs.trxt and .device/{sdk,include}.
# Builds the CUDA runner, writes each program back (inflate.py checks its sha256), runs it on cuda with the
# recorded inputs, in each caller-stream mode of STREAMS, caches initialised as the zero-copy contract asks; the
# outputs and reports go to $OUT/ref.tgz for `scripts/gpu-reference.ts compare`.
set -uo pipefail
dir=$1 steps=$2 streams=${3:-off on} build=native-runner/build-gpu work=/tmp/real-size out=$OUT/runs
mkdir -p "$work" "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# The programs are written back while the runner builds (both take minutes of device time).
inflate() {
  for recipe in "$dir"/*.recipe.json; do
    base=$(basename "$recipe" .recipe.json) t=$(date +%s)
    python3 bench/real-size/inflate.py "$recipe" "$dir/$base.skeleton" "$work/$base.pte" || return 1
    echo "inflated $base in $(($(date +%s) - t)) s"
  done
}
inflate >"$out/inflate.log" 2>&1 &
inflating=$!
t0=$(date +%s)
cmake -S native-runner -B "$build" -DCMAKE_BUILD_TYPE=Release -DTRTX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$PWD/.device/sdk" -DTRTX_FLATBUFFERS_INCLUDE_DIR="$PWD/.device/include" -DTRTX_PTE_CORPUS=/nonexistent >"$out/configure.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target trtx-runner >"$out/build.log" 2>&1 || { kill "$inflating" 2>/dev/null; tail -40 "$out/configure.log" "$out/build.log"; exit 1; }
echo "build $(($(date +%s) - t0)) s"
wait "$inflating" || { cat "$out/inflate.log"; exit 1; }
cat "$out/inflate.log"
for pte in "$work"/*.pte; do
  base=$(basename "$pte" .pte) name=${base%.*}
  for stream in $streams; do
    tag="$base.cuda.stream-$stream"
    /usr/bin/time -f "%e s %M KiB" "$build/trtx-runner" run "$pte" --device cuda --caller-stream "$stream" --steps "$steps" \
      --init-device-buffers --inputs "$dir/$name.inputs.trxt" --outputs "$out/$tag.trxt" --report "$out/$tag.report.json" 2>"$out/$tag.err"
    echo "$tag exit $? $(tail -1 "$out/$tag.err")"
    python3 - "$out/$tag.report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for m in r["methods"]:
    st = m.get("step_time_us", {})
    s0 = m["steps"][0]
    pc = s0.get("program_copies", {})
    si = s0.get("engine_stand_in_bytes", {})
    b = [d.get("budget", {}) for d in m["delegates"]]
    print(f"  {m['name']}: step us {st.get('each')} median {st.get('median')}; program h2d {pc.get('h2d_bytes')} d2h {pc.get('d2h_bytes')}; "
          f"staging h2d {s0['h2d_bytes']} d2h {s0['d2h_bytes']}; stand-in h2d {si.get('h2d_bytes')} d2h {si.get('d2h_bytes')}; budget {b}")
PY
  done
done
tar -czf "$OUT/ref.tgz" -C "$out" . && find "$out" -mindepth 1 -delete
