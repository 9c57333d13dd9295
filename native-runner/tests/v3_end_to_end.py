"""Reference engine version 3 end to end through `trtx-runner run`: the same
decoder lowered as version 2 (weights inside the engine) and version 3
(weights in the outer program's named data, make_v3_program.py) gives the
same outputs every step, with the weights resolved from the program's
PteDataMap by ExecuTorch's Module, through both loaders; the report carries
the per-step numbers (step_time_us, program_copies, engine_stand_in_bytes)
and the budget's resident and streamed bytes.

    python native-runner/tests/v3_end_to_end.py RUNNER PYTHON_BRIDGE_DIR

Needs torch and executorch (trtx's managed environment); ctest runs it when
configured with -DTRTX_PYTHON=<that environment's python>.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def make(bridge: str, out: str, version: int, budget: int | None = None) -> None:
    cmd = [sys.executable, os.path.join(HERE, "make_v3_program.py"), out, "--version", str(version)]
    if budget is not None:
        cmd += ["--budget", str(budget)]
    env = dict(os.environ, PYTHONPATH=bridge)
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run(runner: str, program: str, report: str, *options: str) -> dict:
    done = subprocess.run([runner, "run", program, "--device", "cpu", "--report", report, *options], check=False)
    with open(report) as f:
        r = json.load(f)
    assert done.returncode == 0 and r["ok"], (program, options, r["errors"])
    return r


def digests(r: dict) -> list[list[str]]:
    return [[o["digest"] for o in s["outputs"]] for s in r["methods"][0]["steps"]]


def main(runner: str, bridge: str) -> int:
    with tempfile.TemporaryDirectory() as d:
        v2, v3, v3s = (os.path.join(d, n) for n in ("v2.pte", "v3.pte", "v3-streaming.pte"))
        make(bridge, v2, 2)
        make(bridge, v3, 3)
        make(bridge, v3s, 3, budget=100)
        r2 = run(runner, v2, os.path.join(d, "r2.json"), "--steps", "3")
        for loader in ("mmap", "file"):
            r3 = run(runner, v3, os.path.join(d, f"r3-{loader}.json"), "--steps", "3", "--loader", loader)
            assert r3["options"]["loader"] == loader
            assert digests(r3) == digests(r2), (digests(r3), digests(r2))
        m = r3["methods"][0]
        [delegate] = m["delegates"]
        assert delegate["engine"] == "reference-program"
        assert m["step_time_us"]["count"] == 3 and len(m["step_time_us"]["each"]) == 3
        assert m["step_time_us"]["median"] == sorted(s["step_us"] for s in m["steps"])[1]
        for step in m["steps"]:
            # The decoder's delegate inputs are staged by ExecuTorch's copy
            # kernels: all of the step's staging is theirs, and the stand-in
            # engine's reads and writes are counted apart.
            assert step["program_copies"]["h2d_bytes"] == step["h2d_bytes"] > 0, step
            assert step["program_copies"]["d2h_bytes"] == step["d2h_bytes"] > 0, step
            stand_in = step["engine_stand_in_bytes"]
            assert stand_in["d2h_bytes"] > 0 and stand_in["h2d_bytes"] > 0, step
        weights = int(delegate["budget"]["streamable_bytes"])
        assert weights > 0 and delegate["budget"]["resident_bytes"] == str(weights)
        assert delegate["budget"]["streamed_bytes_per_execute"] == "0"
        # Built for streaming, run under a budget of half the weights.
        half = weights // 2
        rs = run(runner, v3s, os.path.join(d, "rs.json"), "--budget", str(half))
        budget = rs["methods"][0]["delegates"][0]["budget"]
        assert budget["streaming"] and budget["effective"] == str(half), budget
        assert budget["resident_bytes"] == str(half), budget
        assert budget["streamed_bytes_per_execute"] == str(weights - half), budget
    print("v3 end to end: v2 and v3 agree over 3 steps with both loaders; report fields hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
