"""``torch.nn.init``: fill a tensor in place, with torch's numbers where it draws them.

The random initializers take torch's bounds and deviations from the tensor's shape
(``engine.torch_random.init``) and draw from the generator in force, or the one given, as
torch's ``uniform_``/``normal_`` draw; the others write constants.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base.engine_errors import DomainError
from ..engine.tensor import Tensor
from ..engine.torch_random import Generator, in_force, samplers
from ..engine.torch_random import init as drawn
from .module import write

calculate_gain = drawn.gain


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight, as torch counts them."""
    return drawn.fans(tensor.shape)


def _fill(tensor: Tensor, values: Any) -> Tensor:
    write(tensor, values)
    return tensor


def _floating(tensor: Tensor, name: str) -> np.dtype[Any]:
    if tensor.dtype not in (np.float32, np.float64):
        raise DomainError(f"{name} fills float32 or float64 tensors, not {tensor.dtype}")
    return tensor.dtype


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill with uniform numbers in [a, b)."""
    dtype = _floating(tensor, "uniform_")
    return _fill(tensor, samplers.uniform(generator or in_force(), tensor.shape, dtype, a, b))


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill with normal numbers of mean ``mean`` and deviation ``std``."""
    dtype = _floating(tensor, "normal_")
    return _fill(tensor, samplers.normal(generator or in_force(), tensor.shape, dtype, mean, std))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return _fill(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return _fill(tensor, 1)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a matrix with the identity."""
    if tensor.ndim != 2:
        raise DomainError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(tensor.shape[0], tensor.shape[1]))


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Glorot's uniform: within gain * sqrt(6 / (fan_in + fan_out))."""
    dtype = _floating(tensor, "xavier_uniform_")
    return _fill(tensor, drawn.xavier_uniform(generator or in_force(), tensor.shape, dtype, gain))


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot's normal: deviation gain * sqrt(2 / (fan_in + fan_out))."""
    dtype = _floating(tensor, "xavier_normal_")
    return _fill(tensor, drawn.xavier_normal(generator or in_force(), tensor.shape, dtype, gain))


def _kaiming(
    kind: str,
    tensor: Tensor,
    a: float,
    mode: str,
    nonlinearity: str,
    generator: Generator | None,
) -> Tensor:
    dtype = _floating(tensor, f"kaiming_{kind}_")
    if 0 in tensor.shape:
        return tensor  # torch warns and draws nothing
    values = drawn.kaiming(
        generator or in_force(), tensor.shape, dtype, kind, a, mode, nonlinearity
    )
    return _fill(tensor, values)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He's uniform: within gain * sqrt(3 / fan)."""
    return _kaiming("uniform", tensor, a, mode, nonlinearity, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He's normal: deviation gain / sqrt(fan)."""
    return _kaiming("normal", tensor, a, mode, nonlinearity, generator)


def default_bound(weight: Tensor) -> float:
    """The bound of the uniform a Linear/Conv layer draws its bias from: 1/sqrt(fan_in)."""
    fan_in = drawn.fans(weight.shape)[0]
    return 1 / math.sqrt(fan_in) if fan_in > 0 else 0


__all__ = [
    "calculate_gain",
    "constant_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]
