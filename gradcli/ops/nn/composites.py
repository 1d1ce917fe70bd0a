"""Operations built from primitives: the first losses (the others are in losses.py) and small
shape helpers, each an entry of the op
table with a call and no forward.

They need no rules of their own: their derivatives come from the primitives they are made of.
A ``backward_name`` here is the name of the node torch makes for the operation, which
``gradcli run`` prints for the engine's last node of it (``grad_fn=<CopySlices>``).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, ShapeError
from ...engine.tensor import Tensor, TensorLike
from .. import explaining as X
from .. import primitives as P
from .. import symbolic as S
from ..arrays import rearranging as RA
from ..elementwise import elementary as EL
from ..linalg import matrix_product as MM
from ..reductions import reductions as RD
from ..rules.dims import _axes, as_tensor_pair
from ..table import INT, OPS, OPT_INT, OPT_TENSOR, REDUCTIONS, TENSOR, Op, Param, public, register
from .elementwise_losses import TWO_POSITIONAL, bce_elementwise, bce_with_logits_elementwise


def _composite(name: str, summary: str, params: tuple[Param, ...], **fields: Any) -> None:
    """Declare an operation built from others: its call is the function of that name below."""
    register(Op(name, summary, params=params, **fields))


_LOSS = OPS["binary_cross_entropy"].params[:3]  # input, target, reduction
_composite(
    "mse_loss",
    "mean squared error",
    _LOSS,
    symbolic=S.mse_loss,
    explain=X.loss(X.mse),
    backward_name="MseLossBackward0",
    extra=TWO_POSITIONAL,
)
_composite(
    "unsqueeze",
    "insert a dimension of size 1",
    (Param("input", TENSOR), Param("dim", INT)),
    methods=("unsqueeze",),
    symbolic=S.unsqueeze,
    backward_name="UnsqueezeBackward0",
    explain=X.MOVED,
)
_composite(
    "squeeze",
    "remove dimensions of size 1",
    (Param("input", TENSOR), Param("dim", OPT_INT, None)),
    methods=("squeeze",),
    backward_name=lambda args: (  # torch's overloads squeeze(), squeeze(int), squeeze(ints)
        "SqueezeBackward0"
        if len(args) < 2 or args[1] is None
        else "SqueezeBackward2"
        if isinstance(args[1], (tuple, list))
        else "SqueezeBackward1"
    ),
    symbolic=S.squeeze,
    explain=X.MOVED,
    extra={"view": True},  # x.squeeze() of no dim of size 1 is a node (see naming)
)


def flattened_shape(shape: tuple[int, ...], start_dim: int, end_dim: int) -> tuple[int, ...]:
    """The shape ``flatten(x, start_dim, end_dim)`` makes of a tensor of ``shape``."""
    if not shape:
        _axes(start_dim, 0), _axes(end_dim, 0)  # validates the dims
        return (1,)
    start, end = _axes(start_dim, len(shape))[0], _axes(end_dim, len(shape))[0]
    if start > end:
        raise ShapeError(
            f"flatten: start_dim ({start_dim}) cannot come after end_dim ({end_dim}) for a "
            f"tensor of shape {shape}"
        )
    return shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :]


_composite(
    "flatten",
    "the dims start_dim to end_dim as one (all elements as a vector by default)",
    (Param("input", TENSOR), Param("start_dim", INT, 0), Param("end_dim", INT, -1)),
    methods=("flatten",),
    backward_name="ViewBackward0",
    explain=X.MOVED,
    symbolic=lambda x, start_dim=0, end_dim=-1: x.reshape(
        flattened_shape(x.shape, start_dim, end_dim)
    ),
)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return RD.mean(loss)
    if reduction == "sum":
        return RD.sum(loss)
    if reduction == "none":
        return loss
    raise DomainError(f"reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")


def _same_shape(name: str, a: Tensor, b: Tensor) -> None:
    if tuple(np.shape(a.data if isinstance(a, Tensor) else a)) != tuple(
        np.shape(b.data if isinstance(b, Tensor) else b)
    ):
        raise ShapeError(
            f"{name}: input and target must have the same shape, got {np.shape(a.data)} "
            f"and {np.shape(b.data if isinstance(b, Tensor) else b)}"
        )


def _copy(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.array(x, dtype=dtype)


def constant_weight(
    name: str, what: str, weight: TensorLike, shape: tuple[int, ...], dtype: np.dtype
) -> Tensor:
    """A loss's weight as a value of ``dtype`` without a gradient (PyTorch refuses to
    differentiate one), which must broadcast to ``shape``."""
    w = weight if isinstance(weight, Tensor) else Tensor(np.asarray(weight, dtype=np.float64))
    try:
        fits = np.broadcast_shapes(w.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{name}: {what} of shape {w.shape} must broadcast to {tuple(shape)}")
    return P.mask(functools.partial(_copy, dtype=dtype), w)


@public("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: TensorLike,
    target: TensorLike,
    reduction: str = "mean",
    weight: TensorLike | None = None,
    pos_weight: TensorLike | None = None,
) -> Tensor:
    """Sigmoid then binary cross-entropy in one numerically stable step (mean by default);
    ``weight`` scales each term, ``pos_weight`` the positive (target) term."""
    name = "binary_cross_entropy_with_logits"
    input, target = as_tensor_pair(input, target)
    _same_shape(name, input, target)
    if pos_weight is None:
        loss = bce_with_logits_elementwise(input, target)
    else:
        from ..elementwise.activations import softplus

        pw = constant_weight(name, "pos_weight", pos_weight, input.shape, input.dtype)
        scale = P.add(P.mul(P.sub(pw, 1.0), target), 1.0)  # (pos_weight - 1) y + 1
        loss = P.add(P.mul(P.sub(1.0, target), input), P.mul(scale, softplus(P.neg(input))))
    if weight is not None:
        loss = P.mul(loss, constant_weight(name, "weight", weight, input.shape, input.dtype))
    return _reduce(loss, reduction)


@public("binary_cross_entropy")
def binary_cross_entropy(
    input: TensorLike,
    target: TensorLike,
    reduction: str = "mean",
    weight: TensorLike | None = None,
) -> Tensor:
    """Binary cross-entropy of probabilities ``input`` against ``target`` (mean by default),
    each term scaled by ``weight`` when given."""
    input, target = as_tensor_pair(input, target)
    _same_shape("binary_cross_entropy", input, target)
    if np.any((input.data < 0) | (input.data > 1)):
        raise DomainError("binary_cross_entropy: all elements of input must be between 0 and 1")
    loss = bce_elementwise(input, target)
    if weight is not None:
        w = constant_weight("binary_cross_entropy", "weight", weight, input.shape, input.dtype)
        loss = P.mul(loss, w)
    return _reduce(loss, reduction)


@public("mse_loss")
def mse_loss(input: TensorLike, target: TensorLike, reduction: str = "mean") -> Tensor:
    """Mean squared error (mean by default)."""
    input, target = as_tensor_pair(input, target)
    _same_shape("mse_loss", input, target)
    difference = P.sub(input, target)
    return _reduce(P.mul(difference, difference), reduction)


@public("unsqueeze")
def unsqueeze(x: TensorLike, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    dim = _axes(dim, x.ndim + 1)[0]
    return RA.reshape(x, x.shape[:dim] + (1,) + x.shape[dim:])


@public("squeeze")
def squeeze(x: TensorLike, dim: int | None = None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or only ``dim``)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if dim is None:
        shape = tuple(n for n in x.shape if n != 1)
    else:
        dim = _axes(dim, max(x.ndim, 1))[0]
        shape = x.shape if x.ndim == 0 or x.shape[dim] != 1 else x.shape[:dim] + x.shape[dim + 1 :]
    return RA.reshape(x, shape)


@public("flatten")
def flatten(x: TensorLike, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The dims ``start_dim`` to ``end_dim`` (both included) as one: all elements as a vector
    by default (a tensor of shape () becomes one of shape (1,), as torch's)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return RA.reshape(x, flattened_shape(x.shape, int(start_dim), int(end_dim)))


def _one_bound(name: str, bound: str) -> None:
    """clamp_min and clamp_max: clamp with one bound, a number or a tensor."""
    side = "below" if bound == "min" else "above"
    _composite(
        name,
        f"limit input from {side} by {bound} (a number or a tensor): clamp(input, {bound}=...)",
        (Param("input", TENSOR), Param(bound, OPT_TENSOR)),
        methods=(name,),
        symbolic=OPS["clamp"].symbolic,
        formula=lambda sp, v, b: OPS["clamp"].formula(  # type: ignore[misc]
            sp, v, *((b, None) if bound == "min" else (None, b))
        ),
        explain=X.per_element(
            lambda slot: (
                f"1 where {slot.wrt} is inside the bound (the bound included), else 0"
                if slot.position == 0
                else f"1 where input is strictly {side} {slot.wrt}, else 0"
            )
        ),
        # torch's overloads: a number bound (Backward0) or a tensor bound (Backward1)
        backward_name=lambda args: (
            f"Clamp{bound.capitalize()}Backward{1 if isinstance(args[1], Tensor) else 0}"
        ),
        kink=f"the bound is included (gradient 1 to input there); a tensor {bound} gets the "
        f"gradient where input is strictly {side} it",
    )


_one_bound("clamp_min", "min")
_one_bound("clamp_max", "max")


@public("clamp_min")
def clamp_min(x: TensorLike, min: TensorLike) -> Tensor:  # noqa: A002 - PyTorch's name
    """max(input, min) with clamp's gradient: the bound included."""
    return EL.clamp(x, min=min)


@public("clamp_max")
def clamp_max(x: TensorLike, max: TensorLike) -> Tensor:  # noqa: A002 - PyTorch's name
    """min(input, max) with clamp's gradient: the bound included."""
    return EL.clamp(x, max=max)


_composite(
    "dot",
    "inner product of two vectors",
    OPS["matmul"].params,
    methods=("dot",),
    explain=X.matmul,
    backward_name="DotBackward0",
    symbolic=OPS["matmul"].symbolic,
)


@public("dot")
def dot(a: TensorLike, b: TensorLike) -> Tensor:
    """Inner product of two vectors."""
    a, b = as_tensor_pair(a, b)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"dot: expected two vectors, got shapes {a.shape} and {b.shape}")
    return MM.matmul(a, b)


def _setitem_text(slot: X.Slot) -> str:
    if slot.position == 0:
        return f"1 where {slot.node} keeps {slot.wrt}[i], 0 where it was overwritten"
    return f"1 ({slot.wrt} is copied into {slot.node} at the index, once for each time)"


_composite(
    "setitem",
    "x[index] = value: x with value written at index (PyTorch's CopySlices)",
    (),  # a statement writes it (y[0] = ...), not a call
    operator="[]=",
    symbolic=S.setitem,
    # the name of torch's node, which the engine's where is: an index of tensors or lists is
    # torch's index_put_
    backward_name=lambda args: (
        "IndexPutBackward0"
        if any(isinstance(item, (Tensor, tuple, list)) for item in args[2:])
        else "CopySlices"
    ),
    kink="an index of tensors: torch's index_put_ (accumulate False); where an index repeats "
    "the last write stays, and every value written gets the gradient of its place",
    explain=X.per_element(_setitem_text),
)  # its call is indexing.py's setitem, which writes an index of tensors with put_into
