"""Load a saved ExportedProgram and print its graph signature as JSON.

    python python-bridge/tools/probe_exported_program.py ARCHIVE [--run N]

Prints what the bridge will see when it loads the archive: the kind the
sniffer gives it, user inputs, buffers, buffers_to_mutate, user outputs, the
example inputs stored in the archive, and which mutations would get a copy-back
under the write-back predicate (ExecuTorch's when importable, trtx's stand-in
otherwise, both when both are present so they can be compared). With --run N
it also runs the program N times on its example inputs and reports, per
mutated buffer, a checksum before and after: a buffer the program updates in
place must change. Needs real PyTorch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _describe_value(value):
    shape = getattr(value, "shape", None)
    if shape is not None:
        return {"shape": list(shape), "dtype": str(getattr(value, "dtype", "")), "device": str(getattr(value, "device", ""))}
    if isinstance(value, (list, tuple)):
        return [_describe_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _describe_value(v) for k, v in value.items()}
    return repr(value)


def _checksums(module, names):
    import torch

    state = dict(module.named_buffers())
    out = {}
    for name in names:
        tensor = state.get(name)
        if tensor is None:
            out[name] = None
            continue
        out[name] = float(tensor.detach().to(torch.float64).sum().item())
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive")
    parser.add_argument("--run", type=int, default=0, metavar="N", help="run the program N times on its example inputs")
    args = parser.parse_args()

    import torch
    from trtx_bridge.mutation_order import fallback_inplace_lineage, plan_copyback_order, resolve_lineage
    from trtx_bridge.signature import describe_signature
    from trtx_bridge.sniff import sniff_model_file

    sniffed = sniff_model_file(args.archive)
    report = {
        "archive": os.path.abspath(args.archive),
        "sniffed": {"kind": sniffed.kind, "detail": sniffed.detail},
        "torch": torch.__version__,
    }
    program = torch.export.load(args.archive)
    # torch.export now saves the non-functional training IR: in-place updates
    # stay in the graph and buffers_to_mutate is empty until the program is
    # functionalized. An empty decomposition table functionalizes and nothing
    # else, which is what to_edge (and Torch-TensorRT) will see.
    report["signature_as_saved"] = describe_signature(program.graph_signature)
    if hasattr(program, "run_decompositions"):
        program = program.run_decompositions({})
        report["functionalized"] = True
    report["signature"] = describe_signature(program.graph_signature)
    stored = getattr(program, "example_inputs", None)
    report["example_inputs"] = None if stored is None else _describe_value(stored)

    predicate, which = resolve_lineage()
    plan = plan_copyback_order(program, predicate)
    report["copyback_plan"] = {
        "predicate": which,
        "copy_back": plan.copy_back,
        "in_place": plan.in_place,
        "would_move": plan.moved,
        "residual": plan.residual,
    }
    if which != "trtx":
        # The stand-in must agree with upstream on real graphs; say so when it does not.
        fallback = plan_copyback_order(program, fallback_inplace_lineage)
        report["copyback_plan"]["stand_in_agrees"] = (fallback.copy_back, fallback.in_place) == (plan.copy_back, plan.in_place)

    if args.run > 0:
        if stored is None:
            report["run"] = "skipped: the archive stores no example inputs"
        else:
            module = program.module()
            mutated = sorted(set(report["signature"]["buffers_to_mutate"].values()))
            before = _checksums(module, mutated)
            call_args, call_kwargs = stored
            with torch.no_grad():
                for _ in range(args.run):
                    module(*call_args, **(call_kwargs or {}))
            after = _checksums(module, mutated)
            report["run"] = {
                "times": args.run,
                "buffers": {name: {"before": before[name], "after": after[name]} for name in mutated},
                "every_mutated_buffer_changed": all(before[n] != after[n] for n in mutated),
            }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
