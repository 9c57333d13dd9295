"""Write a small ExportedProgram archive whose buffers are updated in place.

    python python-bridge/tools/make_mutating_archive.py OUT.pt2 [--device cuda]

The module is a decode step shaped like pytorch/TensorRT#4667's case: two KV caches
written with index_copy_ at a position, a ring-shifted convolution state
(copy_ of a shifted version of itself), and a step counter (add_). Every buffer
mutation therefore appears in the graph signature's buffers_to_mutate. Needs
real PyTorch (2.5 or later, for example inputs stored in the archive); run it
where torch is installed, then feed the archive to probe_exported_program.py or
to `trtx export`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

HIDDEN = 8
MAX_LEN = 4
WINDOW = 3


def build_module(torch):  # torch passed in so the file imports without it
    class DecodeStep(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(HIDDEN, HIDDEN)
            self.register_buffer("k_cache", torch.zeros(1, MAX_LEN, HIDDEN))
            self.register_buffer("v_cache", torch.zeros(1, MAX_LEN, HIDDEN))
            self.register_buffer("conv_state", torch.zeros(1, WINDOW, HIDDEN))
            self.register_buffer("steps", torch.zeros(1, dtype=torch.long))

        def forward(self, x, pos):
            k = self.proj(x)
            self.k_cache.index_copy_(1, pos, k.unsqueeze(1))
            self.v_cache.index_copy_(1, pos, (2 * k).unsqueeze(1))
            shifted = torch.cat([self.conv_state[:, 1:], x.unsqueeze(1)], dim=1)
            self.conv_state.copy_(shifted)
            self.steps.add_(1)
            return self.k_cache.sum(1) + self.v_cache.sum(1) + self.conv_state.sum(1)

    return DecodeStep()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="archive to write (.pt2)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    args = parser.parse_args()

    import torch
    from trtx_bridge.signature import describe_signature

    torch.manual_seed(0)
    model = build_module(torch).eval().to(args.device)
    x = torch.randn(1, HIDDEN, device=args.device)
    pos = torch.tensor([0], dtype=torch.long, device=args.device)
    with torch.no_grad():
        program = torch.export.export(model, (x, pos))
    torch.export.save(program, args.out)
    print(
        json.dumps(
            {
                "archive": os.path.abspath(args.out),
                "torch": torch.__version__,
                "device": args.device,
                "signature": describe_signature(program.graph_signature),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
