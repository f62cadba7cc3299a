#!/usr/bin/env python3
"""Writes tests/data/reference.safetensors with the reference implementation (the `safetensors`
package, safetensors.torch.save_file), for the C++ reader's test (tests/cpp/test_safetensors.cpp),
which checks the names, dtypes, shapes and values below. Run once, with torch and safetensors
installed; the output is committed.

Values: element k (row-major) of tensor t is (k + 1) * scale[t] - offset[t], exactly
representable in its dtype.
"""
import os

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))


def ramp(shape, dtype, scale, offset):
    n = 1
    for d in shape:
        n *= d
    return ((torch.arange(n, dtype=torch.float64) + 1) * scale - offset).to(dtype).reshape(shape)


tensors = {
    "layers.0.theta": ramp((3, 2, 4, 2), torch.float32, 0.25, 3.0),
    "layers.0.base_weight": ramp((3, 2), torch.float32, 0.5, 1.0),
    "layers.1.theta": ramp((1, 3, 4, 2), torch.float64, 0.125, 2.0),
    "steps": torch.tensor([7, -3], dtype=torch.int64),
    "empty": torch.zeros((0, 4), dtype=torch.float32),
}
save_file(tensors, os.path.join(HERE, "reference.safetensors"), metadata={"format": "pt", "widths": "[2, 3, 1]"})
