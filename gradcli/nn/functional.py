"""``torch.nn.functional``: the engine's layer, activation and loss functions under torch's
names, and ``dropout`` drawing torch's mask from the generator in force."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import engine as E
from ..engine.tensor import Tensor
from ..engine.torch_random import in_force, samplers

# the engine's functions that torch.nn.functional has under the same name
NAMES = (
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "cosine_similarity",
    "cross_entropy",
    "elu",
    "embedding",
    "gelu",
    "glu",
    "group_norm",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "logsigmoid",
    "max_pool2d",
    "mish",
    "mse_loss",
    "nll_loss",
    "normalize",
    "pad",
    "relu",
    "relu6",
    "scaled_dot_product_attention",
    "selu",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softplus",
    "softsign",
    "tanh",
)

globals().update({name: getattr(E, name) for name in NAMES})


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """torch's ``F.dropout``: in training, torch's mask from the generator in force."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.dtype not in (np.float32, np.float64):
        return input
    return input * Tensor(samplers.dropout_mask(in_force(), input.shape, float(p), input.dtype))


def __getattr__(name: str) -> Any:  # the functions set above; tell type checkers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [*NAMES, "dropout"]
