#!/usr/bin/env bash
# Runner-level benchmarks on a GPU, through trtx-runner (the ExecuTorch
# runtime with trtx's TensorRTBackend and device allocator) and its report
# (step_us, per-step copy bytes, the memory section). Every run initialises
# device-resident buffers after load (--init-device-buffers), as a correct
# application does:
#   native-runner/bench/runner_h200.sh RUNNER OUT_DIR [SEED_STEPS] [SMALL_STEPS] [BUDGET_S]
# Reads the programs written beforehand (the GPU machine has no node):
#   .device/seed/kv-decode-seed-{staged,zero-copy}.pte  (npm run fixtures)
#   .device/fixtures/multi-engine.pte                   (npm run fixtures)
#   .device/bench/{six-engines-equal,multi-engine-25}.pte (npx tsx bench/make-six-engines.ts)
# Writes OUT_DIR/runner-bench.md (the tables), OUT_DIR/runner-bench.json and
# OUT_DIR/runner-reports.tar.gz (every report). The first 3 steps of each run
# are warm-up and left out of the medians. TRTX_BENCH_DEVICE=cpu tries it on
# a CPU build. A run that would start after BUDGET_S seconds (default 160) is
# skipped and each run is cut at what is left, so the tables are always
# written.
set -uo pipefail
R=$1
out=$2
seed_steps=${3:-23}
small_steps=${4:-103}
budget=${5:-160}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rep=$(mktemp -d)
mkdir -p "$out"
log="$rep/runner-bench.log"
run() {  # NAME TIMEOUT ARGS...
  local name=$1 limit=$2
  shift 2
  local left=$(( budget - SECONDS ))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 5 ]; then
    echo "$name skipped: out of time" | tee -a "$log"
    return
  fi
  local t0
  t0=$(date +%s%N)
  timeout "$limit" "$R" run "$@" --device "${TRTX_BENCH_DEVICE:-cuda}" --init-device-buffers --report "$rep/$name.json" 2>>"$log"
  local rc=$?
  printf '%-40s rc=%d %6d ms\n' "$name" "$rc" "$(( ($(date +%s%N) - t0) / 1000000 ))" | tee -a "$log"
}

echo "== staged vs zero-copy per decode step, seed scale ($seed_steps steps)" | tee -a "$log"
for cs in off on; do
  for prog in staged zero-copy; do
    run "seed.$prog.$cs" 50 "$root/.device/seed/kv-decode-seed-$prog.pte" --method decode --steps "$seed_steps" --caller-stream "$cs"
  done
done

echo "== private vs shared scratch" | tee -a "$log"
for cs in off on; do
  run "six.private.$cs" 60 "$root/.device/bench/six-engines-equal.pte" --steps "$seed_steps" --caller-stream "$cs"
  run "six.shared.$cs" 60 "$root/.device/bench/six-engines-equal.pte" --steps "$seed_steps" --caller-stream "$cs" --shared-scratch
done
run "multi3.private" 60 "$root/.device/fixtures/multi-engine.pte" --steps "$small_steps"
run "multi3.shared" 60 "$root/.device/fixtures/multi-engine.pte" --steps "$small_steps" --shared-scratch

echo "== 25 delegates, cold vs warm pool (the order alternates by pass)" | tee -a "$log"
for pass in 1 2; do
  for scratch in private shared; do
    for state in persistent fresh; do
      flags=()
      [ "$scratch" = shared ] && flags+=(--shared-scratch)
      [ "$state" = fresh ] && flags+=(--fresh-state)
      if [ "$pass" = 1 ]; then order="warm cold"; else order="cold warm"; fi
      for pool in $order; do
        pf=()
        [ "$pool" = cold ] && pf=(--cold-pool)
        run "m25.$scratch.$state.$pool.$pass" 60 "$root/.device/bench/multi-engine-25.pte" --steps "$small_steps" \
          "${flags[@]}" "${pf[@]}"
      done
    done
  done
done

python3 "$here/runner_tables.py" "$rep" 3 >"$out/runner-bench.md" 2>>"$log"
cp "$rep/summary.json" "$out/runner-bench.json" 2>/dev/null
tar -czf "$out/runner-reports.tar.gz" -C "$rep" .
cp "$log" "$out/runner-bench.log"
cat "$out/runner-bench.md"
