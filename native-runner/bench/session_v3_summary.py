"""Summary of native-runner/bench/session_v3.sh: every run ok, the digests
of each program equal across CUDA and the CPU and both caller-stream modes,
version 2 equal to version 3 of the same model, and per run the report's
step_time_us median, the program's staging (program_copies) and the
stand-in engine's own bytes per step, and the budget per engine.

    python3 native-runner/bench/session_v3_summary.py OUT_DIR
"""

from __future__ import annotations

import json
import os
import sys


def load(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def digests(r: dict) -> list[list[str]]:
    return [[o["digest"] for o in s["outputs"]] for s in r["methods"][0]["steps"]]


def main(out: str) -> int:
    failed = 0
    by_model: dict[str, list[list[str]]] = {}
    for model in ("small", "mid"):
        for version in ("v2", "v3"):
            for dev in ("cuda", "cpu"):
                for cs in ("off", "on"):
                    name = f"{model}-{version}-{dev}-{cs}"
                    path = os.path.join(out, name + ".json")
                    if not os.path.exists(path):
                        print(f"{name}: no report")
                        failed += 1
                        continue
                    r = load(path)
                    m = r["methods"][0] if r["methods"] else None
                    if not r["ok"] or m is None:
                        print(f"{name}: FAILED {r['errors'][:1]}")
                        failed += 1
                        continue
                    d = digests(r)
                    ref = by_model.setdefault(model, d)
                    same = d == ref
                    failed += 0 if same else 1
                    step = m["steps"][-1]
                    dl = m["delegates"][0]
                    print(
                        f"{name}: {r['device']['name']} digests {'=' if same else 'DIFFER'}"
                        f" median {m['step_time_us']['median']:.1f} us"
                        f" program h2d/d2h {step['program_copies']['h2d_bytes']}/{step['program_copies']['d2h_bytes']}"
                        f" stand-in h2d/d2h {step['engine_stand_in_bytes']['h2d_bytes']}/{step['engine_stand_in_bytes']['d2h_bytes']}"
                        f" weights {dl['budget']['streamable_bytes']} resident {dl['budget']['resident_bytes']}"
                        f" streamed/execute {dl['budget']['streamed_bytes_per_execute']}"
                        f" syncs skipped {dl['syncs_skipped']}"
                    )
    budget = os.path.join(out, "mid-v3-budget.json")
    if os.path.exists(budget):
        b = load(budget)["methods"][0]["delegates"][0]["budget"]
        print(f"mid-v3 --budget: {b}")
    print("ALL AGREE" if failed == 0 else f"{failed} PROBLEMS")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
