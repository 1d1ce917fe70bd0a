"""``torch.nn.init``'s random initializers: the bounds and deviations torch computes from a
weight's shape, then its ``uniform_`` or ``normal_`` draws (``samplers``), so that a layer
initialized here holds torch's numbers.

``kaiming`` draws both of torch's Kaiming initializers. ``fans`` is torch's
``_calculate_fan_in_and_fan_out`` (dimension 1 in, dimension 0 out, each times the product
of the dimensions after them), ``gain`` its ``calculate_gain``; ``linear_default`` draws
what ``nn.Linear`` (and ``nn.Conv*d``) draw when made: the weight by
``kaiming_uniform_(a=sqrt(5))``, then the bias uniform within 1/sqrt(fan_in).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError
from . import samplers
from .generator import Generator

# the nonlinearities whose gain is 1
LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def gain(nonlinearity: str, param: float | None = None) -> float:
    """``nn.init.calculate_gain``: the factor a nonlinearity asks of the deviation."""
    if nonlinearity in LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise DomainError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise DomainError(f"Unsupported nonlinearity {nonlinearity}")


def fans(shape: Sequence[int]) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of ``shape``, as torch counts them."""
    if len(shape) < 2:
        raise DomainError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _fan(shape: Sequence[int], mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise DomainError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = fans(shape)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform(
    generator: Generator, shape: Sequence[int], dtype: Any, gain: float = 1.0
) -> np.ndarray:
    """``xavier_uniform_``: uniform within sqrt(3) * gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = fans(shape)
    bound = math.sqrt(3.0) * (gain * math.sqrt(2.0 / float(fan_in + fan_out)))
    return samplers.uniform(generator, shape, dtype, -bound, bound)


def xavier_normal(
    generator: Generator, shape: Sequence[int], dtype: Any, gain: float = 1.0
) -> np.ndarray:
    """``xavier_normal_``: normal with deviation gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = fans(shape)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return samplers.normal(generator, shape, dtype, 0.0, std)


def kaiming(
    generator: Generator,
    shape: Sequence[int],
    dtype: Any,
    kind: str = "uniform",
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
) -> np.ndarray:
    """``kaiming_uniform_`` (kind "uniform": within sqrt(3) * gain / sqrt(fan)) and
    ``kaiming_normal_`` (kind "normal": deviation gain / sqrt(fan)); a tensor with no
    elements draws nothing."""
    if 0 in shape:
        return np.zeros(shape, dtype=dtype)
    std = gain(nonlinearity, a) / math.sqrt(_fan(shape, mode))
    if kind == "normal":
        return samplers.normal(generator, shape, dtype, 0.0, std)
    bound = math.sqrt(3.0) * std
    return samplers.uniform(generator, shape, dtype, -bound, bound)


def linear_default(
    generator: Generator, shape: Sequence[int], dtype: Any, bias: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """What ``nn.Linear``/``nn.Conv*d`` draw when made: the weight (``shape``: out, in, ...)
    by ``kaiming_uniform_(a=sqrt(5))``, then the bias (out) uniform within 1/sqrt(fan_in)."""
    weight = kaiming(generator, shape, dtype, a=math.sqrt(5))
    if not bias:
        return weight, None
    fan_in = fans(shape)[0]
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    return weight, samplers.uniform(generator, (shape[0],), dtype, -bound, bound)
