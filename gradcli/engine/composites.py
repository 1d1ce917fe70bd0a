"""Operations built from primitives: the first losses (the others are in losses.py) and small
shape helpers, each an entry of the op
table with a call and no forward.

They need no rules of their own: their derivatives come from the primitives they are made of.
"""

from __future__ import annotations

import numpy as np

from ..ops import explaining as X
from ..ops import symbolic as S
from ..ops.table import INT, OPS, OPT_INT, TENSOR, Op, Param, public, register
from . import primitives as P
from .errors import DomainError, ShapeError
from .tensor import Tensor


def _composite(name: str, summary: str, params: tuple[Param, ...], **fields) -> None:
    """Declare an operation built from others: its call is the function of that name below."""
    register(Op(name, summary, params=params, **fields))


_LOSS = OPS["binary_cross_entropy"].params  # input, target, reduction
_composite("mse_loss", "mean squared error", _LOSS, symbolic=S.mse_loss, explain=X.loss(X.mse))
_composite(
    "unsqueeze",
    "insert a dimension of size 1",
    (Param("input", TENSOR), Param("dim", INT)),
    methods=("unsqueeze",),
    symbolic=S.unsqueeze,
    explain=X.MOVED,
)
_composite(
    "squeeze",
    "remove dimensions of size 1",
    (Param("input", TENSOR), Param("dim", OPT_INT, None)),
    methods=("squeeze",),
    symbolic=S.squeeze,
    explain=X.MOVED,
)
_composite(
    "flatten",
    "all elements as a vector",
    (Param("input", TENSOR),),
    methods=("flatten",),
    explain=X.MOVED,
    symbolic=lambda x: x.reshape(-1),
)

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return P.mean(loss)
    if reduction == "sum":
        return P.sum(loss)
    if reduction == "none":
        return loss
    raise DomainError(f"reduction must be one of {', '.join(_REDUCTIONS)}, got {reduction!r}")


def _same_shape(name: str, a: Tensor, b: Tensor) -> None:
    if tuple(np.shape(a.data if isinstance(a, Tensor) else a)) != tuple(
        np.shape(b.data if isinstance(b, Tensor) else b)
    ):
        raise ShapeError(
            f"{name}: input and target must have the same shape, got {np.shape(a.data)} "
            f"and {np.shape(b.data if isinstance(b, Tensor) else b)}"
        )


@public("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, reduction: str = "mean") -> Tensor:
    """Sigmoid then binary cross-entropy in one numerically stable step (mean by default)."""
    input, target = P.as_tensor_pair(input, target)
    _same_shape("binary_cross_entropy_with_logits", input, target)
    return _reduce(P.bce_with_logits_elementwise(input, target), reduction)


@public("binary_cross_entropy")
def binary_cross_entropy(input, target, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of probabilities ``input`` against ``target`` (mean by default)."""
    input, target = P.as_tensor_pair(input, target)
    _same_shape("binary_cross_entropy", input, target)
    if np.any((input.data < 0) | (input.data > 1)):
        raise DomainError("binary_cross_entropy: all elements of input must be between 0 and 1")
    return _reduce(P.bce_elementwise(input, target), reduction)


@public("mse_loss")
def mse_loss(input, target, reduction: str = "mean") -> Tensor:
    """Mean squared error (mean by default)."""
    input, target = P.as_tensor_pair(input, target)
    _same_shape("mse_loss", input, target)
    difference = P.sub(input, target)
    return _reduce(P.mul(difference, difference), reduction)


@public("unsqueeze")
def unsqueeze(x, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    dim = P._axes(dim, x.ndim + 1)[0]
    return P.reshape(x, x.shape[:dim] + (1,) + x.shape[dim:])


@public("squeeze")
def squeeze(x, dim: int | None = None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or only ``dim``)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if dim is None:
        shape = tuple(n for n in x.shape if n != 1)
    else:
        dim = P._axes(dim, max(x.ndim, 1))[0]
        shape = x.shape if x.ndim == 0 or x.shape[dim] != 1 else x.shape[:dim] + x.shape[dim + 1 :]
    return P.reshape(x, shape)


@public("flatten")
def flatten(x) -> Tensor:
    """All elements as a vector."""
    return P.reshape(x, -1)


_composite(
    "dot",
    "inner product of two vectors",
    OPS["matmul"].params,
    methods=("dot",),
    explain=X.matmul,
    symbolic=OPS["matmul"].symbolic,
)


@public("dot")
def dot(a, b) -> Tensor:
    """Inner product of two vectors."""
    a, b = P.as_tensor_pair(a, b)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"dot: expected two vectors, got shapes {a.shape} and {b.shape}")
    return P.matmul(a, b)
