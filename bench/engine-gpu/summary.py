"""One line per method of a runner report (bench/engine-gpu/session.sh): step times, copies, kernels, weights."""

import json
import sys

with open(sys.argv[1]) as f:
    r = json.load(f)
for m in r["methods"]:
    st = m.get("step_time_us", {})
    s0 = m["steps"][0] if m["steps"] else {}
    si = s0.get("engine_stand_in_bytes", {})
    for d in m["delegates"]:
        w = d.get("weights") or {}
        print(
            f"  {m['name']}: kernels {d.get('kernels')} step us {[round(x) for x in st.get('each', [])]} median {st.get('median')}; "
            f"staging h2d {s0.get('h2d_bytes')} d2h {s0.get('d2h_bytes')}; stand-in h2d {si.get('h2d_bytes')} d2h {si.get('d2h_bytes')} "
            f"d2d {d.get('d2d_bytes')}; weights resident {w.get('resident_bytes')} streamed/execute {w.get('streamed_bytes_per_execute')} "
            f"window {w.get('window_bytes')} counted {w.get('streamed_bytes')} over {d.get('executes')}"
        )
for e in r.get("errors", []):
    print("  error", e)
