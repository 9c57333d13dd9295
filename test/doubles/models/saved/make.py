"""Writes the saved-model fixtures of test/export-model-kind.test.ts: one file
per way people save a PyTorch model, each a kind `trtx export` tells apart by
its bytes before Python starts (src/export/model-kind.ts).

Run with trtx's managed Python (torch 2.13): ``python make.py`` in this folder.
"""

import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def main() -> None:
    torch.manual_seed(0)
    model = Net()
    example = (torch.randn(1, 4),)
    torch.save(model.state_dict(), "state_dict.pt")
    torch.save(model.state_dict(), "state_dict_legacy.pt", _use_new_zipfile_serialization=False)
    torch.save({"model": model.state_dict(), "epoch": 3}, "checkpoint.pt")
    torch.save(model, "module.pt")
    torch.jit.save(torch.jit.trace(model, example), "torchscript.pt")


if __name__ == "__main__":
    main()
