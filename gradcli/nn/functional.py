"""``torch.nn.functional``: the engine's layer, activation and loss functions under torch's
names, and ``dropout`` drawing torch's mask from the generator in force."""

from __future__ import annotations

import numpy as np

from ..engine.tensor import Tensor
from ..engine.torch_random import in_force, samplers

_PLUMBING = {"annotations", "np", "Tensor", "in_force", "samplers"}


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """torch's ``F.dropout``: in training, torch's mask from the generator in force."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.dtype not in (np.float32, np.float64):
        return input
    return input * Tensor(samplers.dropout_mask(in_force(), input.shape, float(p), input.dtype))


# every public name: the engine's functions above and dropout
__all__ = sorted(name for name in dir() if not name.startswith("_") and name not in _PLUMBING)
