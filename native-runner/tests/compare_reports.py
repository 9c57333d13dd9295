#!/usr/bin/env python3
"""Reads trtx-runner reports named NAME.DEVICE.STREAM.json from one folder and
checks the runtime contract across them: staged and zero-copy twins give the
same outputs and caches at every step, with and without a caller stream;
every cache changes at every step; sync counts follow the caller-stream
rules; every program has the same outcome on CUDA and on the CPU. Prints a
summary and exits 1 on any violation. CUDA and CPU digests are compared for
information only (bit-identity across devices is not required).

Usage: compare_reports.py FOLDER [GPUS]. With GPUS < 2 (the visible CUDA
devices), a program the runner reports DeviceUnavailable for on CUDA (it
plans memory on a device the machine lacks: the two-GPU fixtures) is listed
as not run here rather than failed. EXPECTED_CUDA_CRASHES are programs
`trtx check` refuses whose CUDA run crashes inside ExecuTorch itself; they are
listed, not failed, and their CPU run must still report."""

import glob
import json
import os
import sys

folder = sys.argv[1]
gpus = int(sys.argv[2]) if len(sys.argv) > 2 else 2

# A leftover aten::copy_ write-back into a cache the engine keeps on the
# device: ExecuTorch runs its portable copy_ kernel (kernels/portable/cpu/
# op_copy.cpp), a host loop, over the device pointer and faults. The real
# runtime does the same; `trtx check` refuses the program
# (ZC_WRITEBACK_INTO_CACHE) and `trtx verify` never hands it to the runner.
EXPECTED_CUDA_CRASHES = {"broken-writeback-into-zero-copy-cache"}
not_on_cuda = set()
reports = {}
for path in glob.glob(os.path.join(folder, "*.json")):
    name, device, stream = os.path.basename(path)[:-5].rsplit(".", 2)
    with open(path) as f:
        reports[(name, device, stream)] = json.load(f)

failures = []
notes = []


def digests(r):
    return [
        (m["name"], s["step"], [o["digest"] for o in s["outputs"]], {b["name"]: b["digest"] for b in s["buffers"]})
        for m in r["methods"]
        for s in m["steps"]
    ]


names = sorted({k[0] for k in reports})
for name in names:
    for stream in ("off", "on"):
        cpu, cuda = reports.get((name, "cpu", stream)), reports.get((name, "cuda", stream))
        if cpu is not None and cuda is None and name in EXPECTED_CUDA_CRASHES:
            notes.append(f"{name} {stream}: crashed on CUDA inside ExecuTorch, as expected (trtx check refuses it)")
            continue
        cuda_codes = [e["code"] for e in cuda["errors"]] if cuda else []
        if cpu is not None and gpus < 2 and cuda_codes and set(cuda_codes) == {"DeviceUnavailable"}:
            not_on_cuda.add(name)
            notes.append(f"{name} {stream}: not run on CUDA here: {cuda['errors'][0]['location']}: {cuda['errors'][0]['message']}")
            continue
        if cpu is None or cuda is None:
            failures.append(f"{name} {stream}: missing report")
            continue
        if cuda["exit_code"] != cpu["exit_code"] or [e["code"] for e in cuda["errors"]] != [e["code"] for e in cpu["errors"]]:
            failures.append(
                f"{name} {stream}: cuda exit {cuda['exit_code']} {[e['code'] for e in cuda['errors']]} "
                f"vs cpu exit {cpu['exit_code']} {[e['code'] for e in cpu['errors']]}"
            )
        if cuda["exit_code"] == 0 and cuda["device"]["kind"] != "cuda":
            failures.append(f"{name} {stream}: ran on {cuda['device']['kind']}, not cuda")
        if cuda["exit_code"] == 0:
            notes.append(f"{name} {stream}: cuda digests {'==' if digests(cuda) == digests(cpu) else '!='} cpu digests")

pairs = sorted({n[: -len("-staged")] for n in names if n.endswith("-staged") and n[: -len("-staged")] + "-zero-copy" in names})
for base in pairs:
    for device in ("cuda", "cpu"):
        if device == "cuda" and (base + "-staged" in not_on_cuda or base + "-zero-copy" in not_on_cuda):
            continue
        runs = {}
        for stream in ("off", "on"):
            s, z = reports.get((base + "-staged", device, stream)), reports.get((base + "-zero-copy", device, stream))
            if not s or not z or s["exit_code"] or z["exit_code"]:
                failures.append(f"{base} {device} {stream}: a twin did not run")
                continue
            if digests(s) != digests(z):
                failures.append(f"{base} {device} {stream}: staged and zero-copy differ")
            runs[stream] = digests(s)
            steps = digests(s)
            for a, b in zip(steps, steps[1:]):
                if a[0] == b[0]:
                    for k, v in b[3].items():
                        if a[3].get(k) == v:
                            failures.append(f"{base} {device} {stream}: buffer {k} unchanged at step {b[1]}")
            for m in z["methods"]:
                for d in m["delegates"]:
                    if stream == "on" and d["elision"] in ("zero-copy", "none"):
                        want = (d["executes"], 0, max(d["executes"] - 1, 0), 1)
                    else:
                        want = (0, d["executes"], 0, 0)
                    got = (d["syncs_skipped"], d["syncs_performed"], d["waits"], d["drains"])
                    if got != want:
                        failures.append(
                            f"{base} {device} {stream} {m['name']}.delegates[{d['index']}] {d['elision']}: "
                            f"(skipped, performed, waits, drains) {got}, expected {want}"
                        )
            for m in s["methods"]:
                for d in m["delegates"]:
                    if d["elision"] == "staged" and d["syncs_skipped"] != 0:
                        failures.append(f"{base} {device} {stream}: a staged delegate skipped a sync")
        if runs.get("off") is not None and runs.get("on") is not None and runs["off"] != runs["on"]:
            failures.append(f"{base} {device}: results depend on the caller stream")
        notes.append(
            f"{base} {device}: staged == zero-copy in both stream modes, caches change every step"
            if not any(f.startswith(base + " " + device) for f in failures)
            else f"{base} {device}: FAILED"
        )

print(f"{len(reports)} reports, {len(names)} programs, {len(pairs)} staged/zero-copy pairs")
for n in notes:
    print("  " + n)
for f in failures:
    print("FAIL " + f)
print("contract checks: " + ("FAILED" if failures else "passed"))
sys.exit(1 if failures else 0)
