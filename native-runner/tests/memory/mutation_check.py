#!/usr/bin/env python3
"""Removes each rule of the device-memory units in turn, in a copy of the
runner, and checks that their ctest tests (memory.*) then fail. Not part of
ctest (it rebuilds once per mutation); run by hand after changing a rule or a
test, with the ExecuTorch SDK the runner builds against:

    python3 native-runner/tests/memory/mutation_check.py SDK [work-dir]
"""

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.normpath(os.path.join(HERE, "..", ".."))
WARM = "src/memory/warm_pool.cpp"
SCRATCH = "src/memory/shared_scratch_pool.cpp"
SCRATCH_H = "include/trtx/memory/shared_scratch_pool.h"

# (rule, [(file, exact text, replacement), ...]); each text must occur exactly once.
MUTATIONS = [
    ("warm: leave a pool already at the maximum alone", [(WARM, "if (status.ok() && current == kMaxThreshold) {", "if (false) {")]),
    (
        "warm: raise to the maximum",
        [
            (
                WARM,
                "api().set_pool_release_threshold(record.device, kMaxThreshold)",
                "api().set_pool_release_threshold(record.device, 1u << 20)",
            )
        ],
    ),
    ("warm: remember the previous value", [(WARM, "record.previousThreshold = current;", "record.previousThreshold = 0;")]),
    ("warm: restore the previous value", [(WARM, "api().set_pool_release_threshold(device, record.previousThreshold)", "ok_status()")]),
    ("warm: trim on release", [(WARM, "status = api().pool_trim_to(device, 0);", "status = ok_status();")]),
    ("warm: synchronize before trimming", [(WARM, "status = api().device_synchronize();", "status = ok_status();")]),
    ("warm: switch to each device", [(WARM, "status = api().set_device(device);", "status = ok_status();")]),
    ("warm: put the caller's device back", [(WARM, "if (callerKnown) {", "if (false) {")]),
    (
        "warm: every raised device, not the releasing thread's",
        [(WARM, "if (!record.ownsRestore) continue;", "if (!record.ownsRestore || record.device != callerDevice) continue;")],
    ),
    (
        "warm: clear the CUDA error of a failed configure",
        [(WARM, "    // unrelated launch check.\n    api().clear_last_error();\n", "    // unrelated launch check.\n")],
    ),
    ("warm: a failed configure is reported", [(WARM, "record.configureStatus = status;\n    return;", "return;")]),
    ("warm: restore only when the last handle goes", [(WARM, "if (handles_ > 0 || !options_.enabled)", "if (!options_.enabled)")]),
    ("warm: --cold-pool makes no calls", [(WARM, "if (!options_.enabled) {\n      record.state", "if (false) {\n      record.state")]),
    ("warm: unbalanced release is an error", [(WARM, "if (handles_ <= 0) {", "if (false) {")]),
    ("scratch: grow to the need", [(SCRATCH, "if (bytes > s.capacity) {", "if (bytes > s.capacity && s.capacity == 0) {")]),
    (
        "scratch: allocate the new buffer before freeing the old",
        [
            (
                SCRATCH,
                "  void* fresh = nullptr;\n  if (newBytes > 0) {",
                "  if (s.buffer != nullptr) { (void)synchronize(device); (void)free(device, s.buffer, stream); s.buffer = nullptr; s.capacity = 0; }\n  void* fresh = nullptr;\n  if (newBytes > 0) {",
            )
        ],
    ),
    (
        "scratch: drain the device before freeing the old buffer",
        [
            (
                SCRATCH,
                "Status drained = synchronize(device);\n    if (!drained.ok()) {\n      if (fresh",
                "Status drained = ok_status();\n    if (!drained.ok()) {\n      if (fresh",
            )
        ],
    ),
    (
        "scratch: a failed sync during growth frees the new buffer",
        [(SCRATCH, "if (fresh != nullptr) (void)free(device, fresh, stream);", "")],
    ),
    ("scratch: hand-off waits on the previous event", [(SCRATCH, "if (s.eventRecorded) {", "if (false) {")]),
    (
        "scratch: hand-off never compares stream handles",
        [
            (SCRATCH_H, "bool eventRecorded = false;", "bool eventRecorded = false; StreamHandle lastStream = nullptr;"),
            (SCRATCH, "if (s.eventRecorded) {", "if (s.eventRecorded && stream != s.lastStream) {"),
            (SCRATCH, "  s.leased = false;\n  Status recorded", "  s.leased = false;\n  s.lastStream = stream;\n  Status recorded"),
        ],
    ),
    (
        "scratch: hand-off records an event",
        [(SCRATCH, "Status recorded = record(lease.device, s.event, stream);", "Status recorded = ok_status();")],
    ),
    (
        "scratch: a failed wait drains the device",
        [
            (
                SCRATCH,
                "Status drained = synchronize(device);\n      if (!drained.ok()) {\n        resetWindow(s);",
                "Status drained = ok_status();\n      if (!drained.ok()) {\n        resetWindow(s);",
            )
        ],
    ),
    (
        "scratch: a failed record drains the device",
        [(SCRATCH, "Status drained = synchronize(lease.device);", "Status drained = ok_status();")],
    ),
    (
        "scratch: each device call runs with its device current",
        [(SCRATCH, "  cuda::DeviceScope scope_(api_, device); \\\n", "  cuda::DeviceScope scope_(api_, 0); \\\n")],
    ),
    ("scratch: one lease per device at a time", [(SCRATCH, "if (s.leased) {", "if (false) {")]),
    ("scratch: one buffer per device", [(SCRATCH, "DeviceState& s = devices_[device];", "DeviceState& s = devices_[0];")]),
    (
        "scratch: a failed growth keeps the old buffer",
        [
            (
                SCRATCH,
                'if (!allocated.ok()) return refuse(allocated.failure(), "allocation");',
                'if (!allocated.ok()) { if (s.buffer) (void)free(device, s.buffer, stream); s.buffer = nullptr; s.capacity = 0; return refuse(allocated.failure(), "allocation"); }',
            )
        ],
    ),
    (
        "scratch: shutdown drains before freeing",
        [
            (
                SCRATCH,
                "Status drained = synchronize(device);\n    if (!drained.ok()) {\n      // Freeing",
                "Status drained = ok_status();\n    if (!drained.ok()) {\n      // Freeing",
            )
        ],
    ),
    (
        "reclaim: shrink after 3, not 2",
        [(SCRATCH, "s.underfilledRun >= options_.shrinkAfter", "s.underfilledRun + 1 >= options_.shrinkAfter")],
    ),
    ("reclaim: shrink after 3, not 4", [(SCRATCH, "s.underfilledRun >= options_.shrinkAfter", "s.underfilledRun > options_.shrinkAfter")]),
    (
        "reclaim: strictly below capacity counts",
        [
            (
                SCRATCH,
                "} else if (bytes == s.capacity) {\n    resetWindow(s);\n  }",
                "} else if (bytes + 1 >= s.capacity) {\n    resetWindow(s);\n  }",
            )
        ],
    ),
    ("reclaim: target is max(floor, window max), not the window max", [(SCRATCH, "std::max(s.floor, s.windowMax)", "s.windowMax")]),
    ("reclaim: target is max(floor, window max), not the floor", [(SCRATCH, "std::max(s.floor, s.windowMax)", "s.floor")]),
    ("reclaim: window max tracks the largest need", [(SCRATCH, "s.windowMax = std::max(s.windowMax, bytes);", "s.windowMax = bytes;")]),
    (
        "reclaim: exact fit resets the count",
        [(SCRATCH, "} else if (bytes == s.capacity) {\n    resetWindow(s);\n", "} else if (bytes == s.capacity) {\n")],
    ),
    (
        "reclaim: growth and failure reset the count",
        [(SCRATCH, "  if (bytes > s.capacity) {\n    resetWindow(s);\n", "  if (bytes > s.capacity) {\n")],
    ),
    (
        "reclaim: the count restarts after a shrink attempt",
        [
            (
                SCRATCH,
                "const std::size_t target = std::max(s.floor, s.windowMax);\n      resetWindow(s);",
                "const std::size_t target = std::max(s.floor, s.windowMax);",
            )
        ],
    ),
    ("reclaim: floor frozen at the capacity after warm-up", [(SCRATCH, "s.floor = s.capacity;", "s.floor = 0;")]),
    ("reclaim: no counting during warm-up", [(SCRATCH, "index >= options_.warmupExecutes", "true")]),
    (
        "reclaim: grow-only mode never shrinks",
        [
            (SCRATCH, "} else if (options_.reclaim && s.floorFrozen) {", "} else if (s.floorFrozen || !options_.reclaim) {"),
            (SCRATCH, "if (options_.reclaim && !s.floorFrozen && index", "if (!s.floorFrozen && index"),
        ],
    ),
    (
        "reclaim: capacity events recorded",
        [(SCRATCH, "capacityEvents_.push_back(CapacityEvent{device, executeIndex, s.capacity, newBytes, reason, note});", "")],
    ),
]


def run(cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    sdk = sys.argv[1]
    work = sys.argv[2] if len(sys.argv) > 2 else "/tmp/trtx-memory-mutation"
    copy = os.path.join(work, "native-runner")
    build = os.path.join(work, "build")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(RUNNER, copy, ignore=shutil.ignore_patterns("build*"))

    def fresh_copy():
        # The mutated parts, copied with a new modification time so that the
        # build recompiles a file a mutation touched before.
        for part in ("src/memory", "include/trtx/memory"):
            target = os.path.join(copy, part)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(os.path.join(RUNNER, part), target, copy_function=shutil.copy)

    tests = ("test_warm_pool", "test_shared_scratch", "test_reclamation", "test_runtime_scratch_provider")
    targets = ["trtx_memory_" + t for t in tests]
    build_cmd = ["cmake", "--build", build, "-j2", "--target"] + targets
    test_cmd = ["ctest", "--test-dir", build, "-R", "^memory[.]"]
    configured = run(
        ["cmake", "-S", copy, "-B", build, "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_PREFIX_PATH=" + sdk, "-DTRTX_BACKEND_PLUGIN=OFF"]
    )
    if configured.returncode != 0:
        print(configured.stdout)
        return 2
    baseline = run(build_cmd)
    tested = run(test_cmd)
    if baseline.returncode != 0 or tested.returncode != 0:
        print("unmutated sources do not pass:\n" + baseline.stdout + tested.stdout)
        return 2

    survived = []
    for rule, edits in MUTATIONS:
        fresh_copy()
        for rel, old, new in edits:
            path = os.path.join(copy, rel)
            with open(path) as f:
                text = f.read()
            if text.count(old) != 1:
                print("MUTATION DOES NOT APPLY (%d matches): %s" % (text.count(old), rule))
                return 2
            with open(path, "w") as f:
                f.write(text.replace(old, new))
        built = run(build_cmd)
        if built.returncode != 0:
            print(f"DOES NOT COMPILE  {rule}")
            survived.append(rule)
            continue
        result = run(test_cmd)
        if result.returncode == 0:
            print(f"SURVIVED          {rule}")
            survived.append(rule)
        else:
            print(f"killed            {rule}")
    fresh_copy()
    print("%d mutations, %d killed, %d survived" % (len(MUTATIONS), len(MUTATIONS) - len(survived), len(survived)))
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
