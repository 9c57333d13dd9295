#!/usr/bin/env python3
"""The two-GPU program against its one-GPU and CPU runs, from trtx-runner
reports (bench/session_h200x2.sh writes them):
  two_gpu_compare.py REPORTS_DIR SCRATCH_DIR
REPORTS_DIR holds NAME.DEVICE.STREAM.json for NAME in kv-decode-two-gpu-{staged,
zero-copy} (engines on cuda:0 and cuda:1) and kv-decode-two-engine-{staged,
zero-copy} (the same computation on cuda:0 alone), DEVICE cuda|cpu, STREAM
off|on. Every report must have run, and every one's outputs and named buffers
(the caches) must be bit-identical, step by step, to the CPU run of the
one-GPU staged program. On CUDA the two-GPU runs must have their engines on
cuda:0 and cuda:1 and both devices' pools raised at load, restored and trimmed
at teardown. SCRATCH_DIR holds the two-GPU zero-copy program run with
--shared-scratch (NAME.cuda.STREAM.json): one scratch buffer per device, each
as large as the largest need of the engines on that device, and nothing more.
Prints a summary (markdown lines) and exits 1 on any violation."""

import glob
import json
import os
import sys

reports_dir, scratch_dir = sys.argv[1], sys.argv[2]
failures, lines = [], []


def load(folder):
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            out[os.path.basename(path)[:-5]] = json.load(f)
    return out


def digests(r):
    return [
        (m["name"], s["step"], [o["digest"] for o in s["outputs"]], sorted((b["name"], b["digest"]) for b in s["buffers"]))
        for m in r["methods"]
        for s in m["steps"]
    ]


def traffic(r, method):
    steps = [s for m in r["methods"] if m["name"] == method for s in m["steps"]]
    return (steps[0]["h2d_bytes"], steps[0]["d2h_bytes"]) if steps else None


reports = load(reports_dir)
ref_name = "kv-decode-two-engine-staged.cpu.off"
ref = reports.get(ref_name)
if ref is None or ref["exit_code"] != 0:
    failures.append(f"the reference run {ref_name} is missing or failed")
    ref_d = None
else:
    ref_d = digests(ref)
    print(f"reference: {ref_name}, {len(ref_d)} method steps")

for name, r in reports.items():
    prog, device, stream = name.rsplit(".", 2)
    if r["exit_code"] != 0:
        failures.append(f"{name}: exit {r['exit_code']} {[e['code'] for e in r['errors']]}")
        continue
    if device == "cuda" and r["device"]["kind"] != "cuda":
        failures.append(f"{name}: ran on {r['device']['kind']}")
    same = ref_d is not None and digests(r) == ref_d
    if not same:
        failures.append(f"{name}: outputs or caches differ from {ref_name}")
    targets = sorted({d["target_device"] for m in r["methods"] for d in m["delegates"]})
    pool = r["memory"]["pool"]["devices"]
    pool_text = ", ".join(f"cuda:{p['device']} {p['state_at_load']}->{p['state']}" for p in pool) or "none"
    lines.append(
        f"| {prog} | {device} | {stream} | {'==' if same else '!='} | {' '.join(targets)} | {pool_text} | {traffic(r, 'decode')} |"
    )
    if device == "cuda" and "two-gpu" in prog:
        if targets != ["cuda:0", "cuda:1"]:
            failures.append(f"{name}: engines on {targets}, not cuda:0 and cuda:1")
        want = [0, 1]
        if [p["device"] for p in pool] != want or not all(
            p["state_at_load"] == "raised" and p["state"] == "restored" and p["restored"] and p["trimmed"] for p in pool
        ):
            failures.append(f"{name}: pool devices {pool}")

scratch = load(scratch_dir)
for name, r in scratch.items():
    if r["exit_code"] != 0:
        failures.append(f"scratch {name}: exit {r['exit_code']}")
        continue
    s = r["memory"]["scratch"]
    need = {}
    for m in r["methods"]:
        for d in m["delegates"]:
            dev = int(d["target_device"].split(":")[1])
            need[dev] = max(need.get(dev, 0), int(d["scratch_bytes"]))
    peaks = {d["device"]: d["peak_capacity"] for d in s["devices"]}
    lines.append(
        f"scratch {name}: mode {s['mode']}, peak_buffers {s['peak_buffers']}, peak per device {peaks}, "
        f"largest need per device {need}, capacity events {len(s['capacity_events'])}, "
        f"handoff failures {s['handoff_failures']}"
    )
    if s["mode"] != "shared" or s["peak_buffers"] != 2 or peaks != need or s["handoff_failures"] != 0:
        failures.append(f"scratch {name}: expected one buffer per device sized to its largest need")
    if ref_d is not None and digests(r) != ref_d:
        failures.append(f"scratch {name}: outputs or caches differ from {ref_name}")

print("| program | device | caller stream | digests vs reference | engines | pool at load -> teardown | decode step 0 (h2d, d2h) bytes |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for line in lines:
    print(line)
for f in failures:
    print("FAIL " + f)
print("two-GPU comparison: " + ("FAILED" if failures else "passed"))
sys.exit(1 if failures else 0)
