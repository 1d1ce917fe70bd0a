"""The element-wise losses that the losses' calls (``composites.py``) check and reduce: binary
cross entropy, on probabilities and on logits, each an entry of the op table declared by its
partial derivatives; and the positional conventions of torch's losses (``losses.py``).
"""

from __future__ import annotations

import numpy as np

from ...engine.tensor import Tensor
from .. import explaining as X
from .. import symbolic as S
from ..elementwise.elementary import clamp, log, log1p, sigmoid
from ..primitives import _binary, div, mul, neg, sub
from ..table import (
    OPT_TENSOR,
    REDUCTION,
    TENSOR,
    Array,
    NumpyResult,
    Param,
)


def _bce_logits_forward(z: Array, y: Array) -> NumpyResult:
    # max(z, 0) - z*y + log(1 + exp(-|z|)): never exponentiates a large positive number.
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))


def _bce_forward(p: Array, y: Array) -> NumpyResult:
    # PyTorch clamps each log term at -100 so that p = 0 or 1 gives a finite loss.
    with np.errstate(divide="ignore"):
        log_p = np.maximum(np.log(p), -100.0)
        log_q = np.maximum(np.log1p(-p), -100.0)
    return -(y * log_p + (1 - y) * log_q)


def _bce_partials(
    p: Tensor, y: Tensor, out: Tensor, needs: tuple[bool, ...]
) -> tuple[Tensor | None, Tensor | None]:
    # PyTorch divides by max(p (1 - p), 1e-12) to stay finite at p = 0 and p = 1. The
    # denominator is built with engine ops (not a constant) so that it is differentiated too.
    dp = None
    if needs[0]:
        denom = clamp(mul(p, sub(1.0, p)), min=1e-12)
        dp = div(sub(p, y), denom)
    dy = sub(log1p(neg(p)), log(p)) if needs[1] else None
    return dp, dy


_LOSS = (Param("input", TENSOR), Param("target", TENSOR), Param("reduction", REDUCTION, "mean"))


# the losses whose third positional argument is torch's weight (its next ones, size_average and
# reduce, are deprecated and not in gradcli: the rest are named)
WEIGHT_THIRD = {"positional": ("input", "target", "weight")}


# the losses whose third positional argument is torch's deprecated size_average, which reads
# mse_loss(a, b, "sum") as size_average="sum" (the mean): what follows target is named
TWO_POSITIONAL = {"positional": ("input", "target")}


# Element-wise losses; their calls (in composites.py) check the operands and apply the
# reduction.
bce_with_logits_elementwise = _binary(
    "binary_cross_entropy_with_logits",
    "BinaryCrossEntropyWithLogitsBackward0",
    _bce_logits_forward,
    lambda z, y, out, needs: (
        sub(sigmoid(z), y) if needs[0] else None,
        neg(z) if needs[1] else None,
    ),
    "sigmoid + binary cross-entropy, stable (alias bce_with_logits)",
    params=(*_LOSS, Param("weight", OPT_TENSOR, None), Param("pos_weight", OPT_TENSOR, None)),
    methods=(),
    aliases=("bce_with_logits",),
    symbolic=S.bce_with_logits,
    explain=X.loss(X.bce_with_logits),
    kink="weight scales each term, pos_weight the target's (positive) term, as PyTorch's "
    "(1 - y) x + (1 + (pos_weight - 1) y) softplus(-x); neither gets a gradient (PyTorch "
    "refuses to differentiate them)",
    extra=WEIGHT_THIRD,
)


bce_elementwise = _binary(
    "binary_cross_entropy",
    "BinaryCrossEntropyBackward0",
    _bce_forward,
    _bce_partials,
    "binary cross-entropy of probabilities (alias bce)",
    params=(*_LOSS, Param("weight", OPT_TENSOR, None)),
    methods=(),
    aliases=("bce",),
    symbolic="its logarithms are clamped at -100, which sympy does not write",
    explain=X.loss(X.bce),
    kink="each log term is clamped at -100 and the derivative's denominator at 1e-12; weight "
    "scales each term and gets no gradient (PyTorch refuses to differentiate it)",
    extra=WEIGHT_THIRD,
)
