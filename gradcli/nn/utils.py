"""``torch.nn.utils``' gradient clipping: ``clip_grad_norm_`` (scale every gradient down so
that their joint norm is at most ``max_norm``) and ``clip_grad_value_`` (clamp each element),
both in place, in the gradients' dtype, as torch computes them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base.engine_errors import DomainError
from ..engine.tensor import Tensor
from .module import write


def _tensors(parameters: Any) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _norm(values: np.ndarray, norm_type: float) -> np.ndarray:
    """The p-norm of ``values`` (an array of any shape), in its dtype."""
    magnitudes = np.abs(values.reshape(-1)).astype(np.float64)
    if math.isinf(norm_type):
        found = magnitudes.max(initial=0.0) if norm_type > 0 else magnitudes.min(initial=np.inf)
    elif norm_type == 0:
        found = float(np.count_nonzero(magnitudes))
    else:
        found = float(np.sum(magnitudes**norm_type) ** (1.0 / norm_type))
    return np.asarray(found, dtype=values.dtype)


def get_total_norm(
    tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach: Any = None
) -> Tensor:
    """The norm of the tensors' norms: their joint norm, as if concatenated."""
    found = _tensors(tensors)
    norm_type = float(norm_type)
    if not found:
        return Tensor(np.asarray(0.0, dtype=np.float32))
    norms = np.stack([_norm(t.data, norm_type) for t in found])
    total = _norm(norms, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise DomainError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return Tensor(total)


def clip_grads_with_norm_(
    parameters: Any, max_norm: float, total_norm: Tensor, foreach: Any = None
) -> None:
    """Scale every gradient by min(max_norm / (total_norm + 1e-6), 1), in place."""
    grads = [p._grad for p in _tensors(parameters) if p._grad is not None]
    if not grads:
        return
    dtype = total_norm.dtype
    coefficient = dtype.type(max_norm) / (total_norm.data + dtype.type(1e-6))
    coefficient = np.minimum(coefficient, dtype.type(1.0))
    for grad in grads:
        write(grad, grad.data * coefficient.astype(grad.dtype))


def clip_grad_norm_(
    parameters: Any,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Any = None,
) -> Tensor:
    """Scale the gradients so that their joint norm is at most ``max_norm``; returns the
    norm they had."""
    parameters = _tensors(parameters)
    grads = [p._grad for p in parameters if p._grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value], in place."""
    limit = float(clip_value)
    for param in _tensors(parameters):
        grad = param._grad
        if grad is not None:
            write(grad, np.clip(grad.data, -limit, limit))
