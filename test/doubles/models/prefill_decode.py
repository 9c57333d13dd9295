"""Factory fixture for trtx's bridge tests (runs against the torch TEST DOUBLE)."""

import torch


class Step(torch.nn.Module):
    pass


def make():
    return {
        "methods": {
            "prefill": {"module": Step(), "example_inputs": (torch.zeros(1, 8),)},
            "decode": {
                "module": Step(),
                "example_inputs": (torch.zeros(1, 1),),
                "compile_options": {"min_block_size": 1},
            },
        }
    }


def single():
    return Step(), (torch.zeros(2, 3),)


def bare():
    return Step()


def reserved():
    return {"module": Step(), "example_inputs": (torch.zeros(1),), "compile_options": {"arg_inputs": ()}}


def broken():
    raise ValueError("factory fixture failed on purpose")
