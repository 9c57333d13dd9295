#!/usr/bin/env python3
"""Tables for the runner-level benchmarks from trtx-runner reports (version 2:
the runner on the ExecuTorch runtime), as written by
native-runner/bench/runner_h200.sh:

  runner_tables.py REPORTS_DIR WARMUP > tables.md   (and REPORTS_DIR/summary.json)

Report names: seed.<staged|zero-copy>.<off|on>.json,
six.<private|shared>.<off|on>.json, multi3.<private|shared>.json,
m25.<private|shared>.<persistent|fresh>.<warm|cold>.<pass>.json.
Step times are each report's step_us; the first WARMUP steps are left out.
"""

import json
import os
import statistics
import sys


def load(d, name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


def steps(r):
    return r["methods"][0]["steps"] if r and r["methods"] else []


def timed(r, warmup):
    return [s["step_us"] for s in steps(r)[warmup:]]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def digests(r):
    return [
        ([o["digest"] for o in s["outputs"]], [(b["name"], b["digest"]) for b in s["buffers"]]) for m in r["methods"] for s in m["steps"]
    ]


def status(r):
    if r is None:
        return "missing"
    if not r["ok"]:
        e = r["errors"][0] if r["errors"] else {"code": "?", "message": ""}
        return "exit %d %s: %s" % (r["exit_code"], e["code"], e["message"][:120])
    return "ok"


def per_step_bytes(r, warmup):
    ss = steps(r)[warmup:]
    if not ss:
        return (0, 0, 0)
    return (med([s["h2d_bytes"] for s in ss]), med([s["d2h_bytes"] for s in ss]), med([s["d2d_bytes"] for s in ss]))


def seed_tables(d, warmup, out):
    """Staged vs zero-copy: appends its tables to out, returns summary.json's "seed"."""
    # Staged vs zero-copy per decode step at seed scale (the 30-layer model of pytorch/TensorRT#4667).
    out.append("### Staged vs zero-copy per decode step (kv-decode-seed, method decode)\n")
    out.append("| caller stream | program | status | steps timed | median step us | p10 | p90 | H2D B/step | D2H B/step | D2D B/step |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    seed = {}
    for cs in ("off", "on"):
        for prog in ("staged", "zero-copy"):
            r = load(d, f"seed.{prog}.{cs}.json")
            t = timed(r, warmup)
            h2d, d2h, d2d = per_step_bytes(r, warmup)
            seed[(prog, cs)] = {
                "status": status(r),
                "median_us": med(t),
                "p10_us": pct(t, 0.1),
                "p90_us": pct(t, 0.9),
                "n": len(t),
                "h2d": h2d,
                "d2h": d2h,
                "d2d": d2d,
                "report": r,
            }
            out.append(
                "| %s | %s | %s | %d | %.1f | %.1f | %.1f | %d | %d | %d |"
                % (cs, prog, status(r), len(t), med(t), pct(t, 0.1), pct(t, 0.9), h2d, d2h, d2d)
            )
    out.append("")
    out.append(
        "| caller stream | step time staged / zero-copy | H2D+D2H bytes staged / zero-copy | staged and zero-copy digests identical at every step |"
    )
    out.append("|---|---:|---:|---|")
    result = {}
    for cs in ("off", "on"):
        a, b = seed[("staged", cs)], seed[("zero-copy", cs)]
        ratio = a["median_us"] / b["median_us"] if b["median_us"] and b["median_us"] == b["median_us"] else float("nan")
        bytes_a, bytes_b = a["h2d"] + a["d2h"], b["h2d"] + b["d2h"]
        same = a["report"] is not None and b["report"] is not None and digests(a["report"]) == digests(b["report"])
        out.append(
            "| %s | %.1fx | %d / %d (%.0fx) | %s |"
            % (cs, ratio, bytes_a, bytes_b, bytes_a / bytes_b if bytes_b else float("nan"), "yes" if same else "NO")
        )
        result[cs] = {k: {kk: vv for kk, vv in v.items() if kk != "report"} for k, v in (("staged", a), ("zero-copy", b))}
        result[cs]["time_ratio"] = ratio
        result[cs]["identical"] = same
    out.append("")
    return result


def scratch_table(d, warmup, out, title, prefix, variants):
    """Private vs shared scratch: appends its table to out, returns its summary.json entry."""
    out.append(f"### {title}\n")
    out.append("| variant | status | scratch mode | peak scratch B | buffers | median step us | outputs identical to private |")
    out.append("|---|---|---|---:|---:|---:|---|")
    rows = {}
    for v in variants:
        rp = load(d, f"{prefix}.private{v}.json")
        rs = load(d, f"{prefix}.shared{v}.json")
        for mode, r in (("private", rp), ("shared", rs)):
            sc = r["memory"]["scratch"] if r else {"peak_bytes": 0, "peak_buffers": 0}
            same = "-" if mode == "private" else ("yes" if rp and rs and digests(rp) == digests(rs) else "NO")
            out.append(
                "| %s | %s | %s | %d | %d | %.1f | %s |"
                % (v.strip(".") or "-", status(r), mode, sc["peak_bytes"], sc["peak_buffers"], med(timed(r, warmup)), same)
            )
            rows[f"{mode}{v}"] = {
                "status": status(r),
                "peak_bytes": sc["peak_bytes"],
                "peak_buffers": sc["peak_buffers"],
                "median_us": med(timed(r, warmup)),
                "identical": same,
                "capacity_events": r["memory"]["scratch"]["capacity_events"] if r else None,
            }
        if rp and rs and rp["memory"]["scratch"]["peak_bytes"]:
            frac = 1 - rs["memory"]["scratch"]["peak_bytes"] / rp["memory"]["scratch"]["peak_bytes"]
            out.append("| {} | reclaimed | | {:.4f} of private | | | |".format(v.strip(".") or "-", frac))
            rows[f"reclaimed{v}"] = frac
    out.append("")
    return rows


def m25_table(d, warmup, out):
    """Cold vs warm pool: appends its table to out, returns summary.json's "m25"."""
    # Warm pool: 25 delegates, cold vs warm pool.
    out.append("### 25 delegates (multiEngine(25)): cold vs warm pool\n")
    out.append(
        "| scratch | methods | pass | warm median step us | cold median step us | cold / warm | warm p90 | cold p90 | pool at load (warm run) | pool api calls warm / cold | allocations | allocation call us warm / cold (median, registered allocator) | outputs identical |"
    )
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|---|")
    rows = []
    for scratch in ("private", "shared"):
        for state in ("persistent", "fresh"):
            for p in ("1", "2"):
                w = load(d, f"m25.{scratch}.{state}.warm.{p}.json")
                c = load(d, f"m25.{scratch}.{state}.cold.{p}.json")
                if w is None and c is None:
                    continue
                tw, tc = timed(w, warmup), timed(c, warmup)
                ratio = med(tc) / med(tw) if tw and tc else float("nan")
                pool = w["memory"]["pool"] if w else None
                at_load = ",".join("%d:%s" % (x["device"], x["state_at_load"]) for x in pool["devices"]) if pool else "-"
                calls = "{} / {}".format(pool["api_calls"] if pool else "-", c["memory"]["pool"]["api_calls"] if c else "-")
                same = "yes" if w and c and digests(w) == digests(c) else "NO"
                st = "" if status(w) == "ok" and status(c) == "ok" else f" ({status(w)} / {status(c)})"
                aw = w["memory"]["device_arenas"] if w else None
                ac = c["memory"]["device_arenas"] if c else None
                alloc = "{} / {}".format(
                    "{:.2f}".format(aw["allocate_call_us"]["median"]) if aw and aw["allocate_call_us"]["median"] is not None else "-",
                    "{:.2f}".format(ac["allocate_call_us"]["median"]) if ac and ac["allocate_call_us"]["median"] is not None else "-",
                )
                out.append(
                    "| {} | {}{} | {} | {:.1f} | {:.1f} | {:.2f}x | {:.1f} | {:.1f} | {} | {} | {} | {} | {} |".format(
                        scratch,
                        state,
                        st,
                        p,
                        med(tw),
                        med(tc),
                        ratio,
                        pct(tw, 0.9),
                        pct(tc, 0.9),
                        at_load,
                        calls,
                        aw["allocations"] if aw else "-",
                        alloc,
                        same,
                    )
                )
                rows.append(
                    {
                        "scratch": scratch,
                        "state": state,
                        "pass": p,
                        "warm_median_us": med(tw),
                        "cold_median_us": med(tc),
                        "ratio": ratio,
                        "warm_p90": pct(tw, 0.9),
                        "cold_p90": pct(tc, 0.9),
                        "pool_warm": pool,
                        "pool_cold": c["memory"]["pool"] if c else None,
                        "identical": same,
                        "arenas_warm": aw,
                        "arenas_cold": ac,
                        "n": len(tw),
                    }
                )
    out.append("")
    return rows


def main():
    d, warmup = sys.argv[1], int(sys.argv[2])
    summary = {"warmup": warmup}
    out = []
    summary["seed"] = seed_tables(d, warmup, out)
    # Shared scratch: six engines with equal scratch, and multi-engine.pte: private vs shared.
    summary["six"] = scratch_table(d, warmup, out, "Six engines, 281,018,368 B scratch each: private vs shared", "six", (".off", ".on"))
    summary["multi3"] = scratch_table(d, warmup, out, "multi-engine.pte (3 engines, 1/2/3 MiB): private vs shared", "multi3", ("",))
    summary["m25"] = m25_table(d, warmup, out)
    print("\n".join(out))
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)


if __name__ == "__main__":
    main()
