"""TEST DOUBLE of torch for trtx's bridge tests. Not PyTorch. See ../README.md."""

from _trtx_double import missing_guard, record

missing_guard("torch")

__version__ = "2.99.0+trtx.double"


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


float32 = dtype("float32")
int64 = dtype("int64")


class Tensor:
    def __init__(self, shape, dtype_=float32, device="cpu"):
        self.shape = tuple(shape)
        self.dtype = dtype_
        self.device = device

    def _double_summary(self):
        return {"tensor": list(self.shape), "dtype": self.dtype.name, "device": self.device}

    def to(self, device):
        return Tensor(self.shape, self.dtype, str(device))


class device:
    def __init__(self, type, index=None):
        self.type = type
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


def zeros(*shape, dtype=float32, device="cpu"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return Tensor(shape, dtype, device)


def load(f, map_location=None, weights_only=True, **kwargs):
    import os

    record("torch.load", f=str(f), weights_only=weights_only)

    if os.environ.get("TRTX_DOUBLE_PICKLE_VALUE") == "bare":
        return nn.Module()
    return {"module": nn.Module(), "example_inputs": (zeros(1, 4),)}


from . import cuda, export, nn  # noqa: F401


class no_grad:
    """The bridge lowers and finalizes under torch.no_grad(); the double only needs the context."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
