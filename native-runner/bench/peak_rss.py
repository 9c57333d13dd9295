"""Peak memory of one `trtx-runner run`: samples /proc/PID/status every 5 ms
and prints the peaks of VmRSS (all resident memory), RssAnon (private
memory: malloc'd copies) and RssFile (mapped file pages, which the page cache
shares and may drop), with VmHWM at the last sample and the wall time.

    python3 native-runner/bench/peak_rss.py RUNNER PROGRAM.pte [runner options...]

A weight read through FileDataLoader is a malloc'd copy (RssAnon); through
MmapDataLoader it is the file's own pages (RssFile). One JSON line per run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                    out[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


def main(argv: list[str]) -> int:
    runner, program, *options = argv
    start = time.monotonic()
    proc = subprocess.Popen([runner, "run", program, *options], stdout=subprocess.DEVNULL)
    peak: dict[str, int] = {}
    while proc.poll() is None:
        for key, value in status(proc.pid).items():
            peak[key] = max(peak.get(key, 0), value)
        time.sleep(0.005)
    wall = time.monotonic() - start
    print(
        json.dumps(
            {
                "program": program,
                "options": options,
                "exit": proc.returncode,
                "wall_s": round(wall, 3),
                **{f"peak_{k}_mib": round(v / 2**20, 1) for k, v in sorted(peak.items())},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
