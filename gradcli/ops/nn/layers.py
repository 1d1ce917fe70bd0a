"""Layers in their functional forms (``torch.nn.functional``), each an entry of the op table:
``linear``, ``layer_norm``, ``batch_norm``, ``group_norm``, ``embedding`` and
``scaled_dot_product_attention`` (convolutions and pooling are in ``convolution.py``).

All are composites of the engine's primitives, exact and differentiable to any order, with
batch rules for free. Operands that torch makes optional (a bias, a norm's weight) are
parameters of kind ``OPT_TENSOR``: None leaves them out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from ...base.engine_errors import DomainError, IndexDomainError, ShapeError
from ...engine.creation import write
from ...engine.tensor import Tensor
from .. import explaining as X
from .. import primitives as P
from ..arrays import rearranging as RA
from ..elementwise import elementary as EL
from ..linalg import matrix_product as MM
from ..linalg.linalg import _differential
from ..numerics import moments, product_order
from ..reductions import reductions as RD
from ..table import (
    BOOL,
    INT,
    NUMBER,
    OPT_INT,
    OPT_NUMBER,
    OPT_TENSOR,
    TENSOR,
    Array,
    Objects,
    Param,
    public,
)
from .composites import _composite

Pair = tuple[int, int]


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x, dtype=np.float64))


def _optional(x: Any) -> Tensor | None:
    return None if x is None else _tensor(x)


def _explained(**formulas: str) -> Any:
    """An explain rule by differentials, a formula per operand's parameter name: ``{input}``,
    ``{weight}``... in a formula are the operands' names, ``{d_input}``... their
    differentials."""

    def formula(slot: Any) -> str:
        names = {param: name for param, name in zip(slot.operands, slot.names)}
        names.update({f"d_{param}": X.d(name) for param, name in names.items()})
        missing = {p: "(none)" for p in formulas} | {f"d_{p}": "(none)" for p in formulas}
        return str(formulas[slot.parameter].format(**(missing | names)))

    return _differential(formula)


@overload
def _channels(c: Tensor, rank: int) -> Tensor: ...


@overload
def _channels(c: None, rank: int) -> None: ...


def _channels(c: Tensor | None, rank: int) -> Tensor | None:
    """A per-channel vector (C) shaped to broadcast over dim 1 of a tensor of ``rank`` dims."""
    if c is None:
        return None
    return RA.reshape(c, (c.shape[0],) + (1,) * (rank - 2))


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        out = P.mul(out, weight)
    return out if bias is None else P.add(out, bias)


# -- linear -----------------------------------------------------------------------------------


def _linear_symbolic(x: Objects, w: Objects, b: Objects | None) -> Any:
    out = np.matmul(x, w.T if w.ndim == 2 else w)
    return out if b is None else out + b


def _linear_node(args: list[Any]) -> str:
    """torch's node of ``linear(input, weight, bias)``: addmm for a batch of rows, the view
    of one for a vector or a deeper batch (an empty name: the primitive's own)."""
    input, weight, bias = args
    if getattr(weight, "ndim", 0) != 2 or not isinstance(input, Tensor):
        return ""
    if input.ndim == 2:
        return "AddmmBackward0" if bias is not None else "MmBackward0"
    if bias is not None:
        return "ViewBackward0"
    return "SqueezeBackward4" if input.ndim == 1 else "UnsafeViewBackward0"


_composite(
    "linear",
    "input @ weight^T + bias: a fully connected layer (bias None: none)",
    (Param("input", TENSOR), Param("weight", TENSOR), Param("bias", OPT_TENSOR, None)),
    backward_name=_linear_node,
    symbolic=_linear_symbolic,
    explain=_explained(
        input="{d_input} @ {weight}^T",
        weight="{input} @ {d_weight}^T",
        bias="{d_bias} (added to each row)",
    ),
)


@public("linear")
def linear(input: Any, weight: Any, bias: Any = None) -> Tensor:
    """``input @ weight.T + bias`` over the last dim of input; weight (out, in) or (in)."""
    x, w, b = _tensor(input), _tensor(weight), _optional(bias)
    if w.ndim not in (1, 2) or x.ndim == 0 or x.shape[-1] != w.shape[-1]:
        raise ShapeError(
            f"linear: input's last dim must match weight (out_features, in_features), got "
            f"input {x.shape} and weight {w.shape}"
        )
    out = MM.matmul(x, RA.transpose(w, 0, 1) if w.ndim == 2 else w)
    if b is None:
        return out
    try:
        np.broadcast_shapes(out.shape, b.shape)
    except ValueError:
        raise ShapeError(f"linear: bias {b.shape} does not fit the output {out.shape}") from None
    total = P.add(out, b)
    if x.ndim == 2 and w.ndim == 2:
        # torch's addmm adds the product's blocks to the bias: the same graph and gradients,
        # the value rounded as torch's (gradcli run's torch order; see product_order)
        first = product_order.addmm_like_torch(b.data, x.data, w.data.T)
        if first is not None:
            total.data[...] = first
    return total


def _same(x: Array) -> Array:
    """The identity, as a mask: a value that carries no gradient."""
    return x


# -- normalization ----------------------------------------------------------------------------


def _normalized(x: Tensor, dims: tuple[int, ...], eps: float) -> Tensor:
    """(x - mean) / sqrt(var + eps) over ``dims``, the variance biased (divided by n)."""
    centered = P.sub(x, RD.mean(x, dims, keepdim=True))
    var = RD.mean(P.mul(centered, centered), dims, keepdim=True)
    return P.div(centered, EL.sqrt(P.add(var, eps)))


def _rounded_as_torch(
    out: Tensor, x: Tensor, w: Tensor | None, b: Tensor | None, value: Any, *also: Tensor
) -> Tensor:
    """``out`` (a normalization of ``x``, weight ``w``, bias ``b``, other operands ``also``)
    with the same graph and gradients, its value ``value(x, w, b)`` (arrays; None: not known)
    as torch rounds it, where ``moments`` knows torch's order and it is in force (gradcli
    run)."""
    wd, bd = (None if t is None else t.data for t in (w, b))
    if moments.supported(x.data, wd, bd, *(t.data for t in also)) and (
        x.data.shape == x.shape == out.data.shape
    ):
        torch_value = value(x.data, wd, bd)
        if torch_value is not None:
            out.data[...] = torch_value
    return out


_NORM_KINK = (
    "the variance is the biased one (divided by n), as torch's; eps keeps the square root "
    "away from 0"
)


def _normalization(
    name: str, summary: str, count: Param, over: str, weight: str, per: str, bias: str
) -> None:
    """Declare layer_norm or group_norm: the input normalized over ``over`` (after ``count``,
    the normalized shape or the groups), then * weight (the weight ``per`` position) + bias."""
    _composite(
        name,
        summary,
        (
            Param("input", TENSOR),
            count,
            Param("weight", OPT_TENSOR, None),
            Param("bias", OPT_TENSOR, None),
            Param("eps", NUMBER, 1e-5),
        ),
        backward_name=f"Native{name.title().replace('_', '')}Backward0",
        symbolic=f"no symbolic form here: a mean and a variance over {over}",
        explain=_explained(
            input="(({d_input} - mean({d_input})) - y*mean(y*{d_input}))/sqrt(var + eps)*w over "
            + over
            + f" (y: the input normalized; w: {weight}, 1 without one)",
            weight="y*{d_weight}" + per + " (y: the input normalized)",
            bias=bias,
        ),
        kink=_NORM_KINK,
    )


_normalization(
    "layer_norm",
    "normalize over the last dim (of size normalized_shape) to mean 0, variance 1, then "
    "* weight + bias",
    Param("normalized_shape", INT),
    over="the normalized dims",
    weight="the weight",
    per="",
    bias="{d_bias} (added at each position)",
)


@public("layer_norm")
def layer_norm(
    input: Any,
    normalized_shape: int | Sequence[int],
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
) -> Tensor:
    """torch.nn.functional.layer_norm: the trailing dims ``normalized_shape`` (an int: the
    last dim) normalized, then scaled by weight and shifted by bias (both that shape)."""
    x, w, b = _tensor(input), _optional(weight), _optional(bias)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or x.ndim < k or tuple(x.shape[x.ndim - k :]) != shape:
        raise ShapeError(
            f"layer_norm: normalized_shape {list(shape)} must be the input's last dims, got "
            f"input of shape {x.shape}"
        )
    for what, t in (("weight", w), ("bias", b)):
        if t is not None and t.shape != shape:
            raise ShapeError(f"layer_norm: {what} must have shape {shape}, got {t.shape}")
    out = _affine(_normalized(x, tuple(range(x.ndim - k, x.ndim)), eps), w, b)
    size = math.prod(shape)
    return _rounded_as_torch(
        out, x, w, b, lambda a, wd, bd: moments.layer_norm_like_torch(a, size, wd, bd, eps)
    )


_normalization(
    "group_norm",
    "normalize each group of num_groups channels of (N, C, ...) per sample, then * weight "
    "+ bias per channel",
    Param("num_groups", INT),
    over="each group",
    weight="the weight of the channel",
    per=" per channel",
    bias="{d_bias} per channel",
)


def _per_channel(name: str, x: Tensor, **given: Tensor | None) -> None:
    for what, t in given.items():
        if t is not None and t.shape != (x.shape[1],):
            raise ShapeError(
                f"{name}: {what} must have one element per channel ({x.shape[1]},), got {t.shape}"
            )


@public("group_norm")
def group_norm(
    input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5
) -> Tensor:
    """torch.nn.functional.group_norm of (N, C, *)."""
    x, w, b = _tensor(input), _optional(weight), _optional(bias)
    if x.ndim < 2:
        raise ShapeError(f"group_norm: input must be (N, C, ...), got shape {x.shape}")
    if num_groups < 1 or x.shape[1] % num_groups:
        raise DomainError(
            f"group_norm: the channels ({x.shape[1]}) must divide into num_groups ({num_groups})"
        )
    _per_channel("group_norm", x, weight=w, bias=b)
    grouped = RA.reshape(x, (x.shape[0], num_groups, -1))
    out = RA.reshape(_normalized(grouped, (2,), eps), x.shape)
    out = _affine(out, _channels(w, x.ndim), _channels(b, x.ndim))
    return _rounded_as_torch(
        out, x, w, b, lambda a, wd, bd: moments.group_norm_like_torch(a, num_groups, wd, bd, eps)
    )


_composite(
    "batch_norm",
    "normalize each channel of (N, C, ...) by the running statistics (training False) or "
    "the batch's, then * weight + bias",
    (
        Param("input", TENSOR),
        Param("running_mean", OPT_TENSOR),
        Param("running_var", OPT_TENSOR),
        Param("weight", OPT_TENSOR, None),
        Param("bias", OPT_TENSOR, None),
        Param("training", BOOL, False),
        Param("momentum", NUMBER, 0.1),
        Param("eps", NUMBER, 1e-5),
    ),
    backward_name="NativeBatchNormBackward0",
    symbolic="no symbolic form here: a normalization per channel",
    explain=_explained(
        input="{d_input}/sqrt(var + eps)*w per channel (w: the weight, 1 without one; "
        "training=True: the batch's statistics, so (({d_input} - mean({d_input})) - "
        "y*mean(y*{d_input}))/sqrt(var + eps)*w with y the input normalized)",
        running_mean="0 (the running statistics are not differentiable)",
        running_var="0 (the running statistics are not differentiable)",
        weight="y*{d_weight} per channel (y: the input normalized)",
        bias="{d_bias} per channel",
    ),
    kink=(
        "training=False normalizes by running_mean and running_var; training=True by the "
        "batch's mean and biased variance over every dim but the channels (torch also updates "
        "the running statistics in place by momentum, which a program cannot see; a PyTorch "
        "script run by gradcli run sees it); the running statistics get no gradient (torch "
        "refuses to differentiate them)"
    ),
    extra={"updates": lambda args: _update_running(args)},
)


@public("batch_norm")
def batch_norm(
    input: Any,
    running_mean: Any,
    running_var: Any,
    weight: Any = None,
    bias: Any = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """torch.nn.functional.batch_norm of (N, C, *); its running statistics are left as given
    (``update_running_statistics`` is torch's in-place update, which scripts see)."""
    x, w, b = _tensor(input), _optional(weight), _optional(bias)
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: input must be (N, C, ...), got shape {x.shape}")
    for what, given in (("running_mean", running_mean), ("running_var", running_var)):
        elements = np.size(given.data if isinstance(given, Tensor) else given)
        if given is not None and elements != x.shape[1]:  # torch's words and order
            raise ShapeError(f"{what} should contain {x.shape[1]} elements not {elements}")
    if (running_mean is None) != (running_var is None):
        raise ShapeError("running_mean and running_var must either both be None or neither be None")
    if running_mean is None and not training:
        raise ShapeError("running_mean must be defined in evaluation mode")
    if running_mean is None:  # training on the batch's statistics alone
        running_mean = Tensor(np.zeros(x.shape[1], x.dtype))
        running_var = Tensor(np.ones(x.shape[1], x.dtype))
    mean, var = _tensor(running_mean), _tensor(running_var)
    # torch refuses to differentiate the running statistics: here they carry no gradient
    mean, var = P.mask(_same, mean), P.mask(_same, var)
    _per_channel("batch_norm", x, running_mean=mean, running_var=var, weight=w, bias=b)
    if training:
        if math.prod(x.shape) // x.shape[1] <= 1:
            raise DomainError(
                f"batch_norm: expected more than 1 value per channel when training, got input "
                f"of shape {x.shape}"
            )
        out = _normalized(x, (0, *range(2, x.ndim)), eps)
    else:
        spread = EL.sqrt(P.add(_channels(var, x.ndim), eps))
        out = P.div(P.sub(x, _channels(mean, x.ndim)), spread)
    out = _affine(out, _channels(w, x.ndim), _channels(b, x.ndim))
    return _rounded_as_torch(
        out,
        x,
        w,
        b,
        lambda a, wd, bd: moments.batch_norm_like_torch(
            a, mean.data, var.data, wd, bd, training, eps
        ),
        mean,
        var,
    )


def _update_running(args: Sequence[Any]) -> None:
    """After ``batch_norm(*args)`` (every parameter bound, in order) in training: torch's
    update of the running statistics given."""
    input, running_mean, running_var, _, _, training, momentum = args[:7]
    if training and isinstance(running_mean, Tensor) and isinstance(running_var, Tensor):
        update_running_statistics(_tensor(input), running_mean, running_var, momentum)


def update_running_statistics(
    x: Tensor, running_mean: Tensor, running_var: Tensor, momentum: float
) -> None:
    """torch's running statistics after a batch ``x`` (N, C, *) in training, written in place
    into the arrays of ``running_mean`` and ``running_var`` (every tensor sharing them sees
    the new values): the batch's mean and unbiased variance averaged in by ``momentum``."""
    rounded = moments.running_statistics_like_torch(
        x.data, running_mean.data, running_var.data, momentum
    )
    if rounded is None:  # outside gradcli run's torch order: one rounding from float64
        axes = (0, *range(2, x.ndim))
        data = x.data.astype(np.float64)
        count = data.size // data.shape[1]
        mean = data.mean(axis=axes)
        var = data.var(axis=axes) * count / max(count - 1, 1)
        rounded = (
            momentum * mean + (1 - momentum) * running_mean.data,
            momentum * var + (1 - momentum) * running_var.data,
        )
    write(running_mean, rounded[0])
    write(running_var, rounded[1])


# -- embedding --------------------------------------------------------------------------------


_composite(
    "embedding",
    "the rows of weight at integer indices (given as whole numbers): a lookup table",
    (
        Param("input", TENSOR),
        Param("weight", TENSOR),
        Param("padding_idx", OPT_INT, None),
    ),
    backward_name="EmbeddingBackward0",
    symbolic=lambda indices, weight, padding_idx=None: weight[_indices(indices, weight)],
    explain=_explained(
        input="0 (indices are not differentiable)",
        weight="{d_weight} at the rows {input} picks (none at padding_idx)",
    ),
    kink=(
        "the indices get no gradient; a row is picked once per index (gradients add up); "
        "padding_idx's row gets no gradient"
    ),
)


def _indices(indices: Array, weight: Any) -> Array:
    """Whole numbers as int64 indices into weight's rows, checked."""
    values = np.asarray(indices)
    rows = np.shape(weight)[0]
    if values.dtype == object:
        values = values.astype(float)
    if not np.all(values == np.round(values)):
        raise IndexDomainError("embedding: input must hold whole numbers (row indices)")
    found = values.astype(np.int64)
    outside = (found < 0) | (found >= rows)
    if np.any(outside):
        raise IndexDomainError(
            f"embedding: indices must be in [0, {rows - 1}], got {int(found[outside].flat[0])}"
        )
    return found


@public("embedding")
def embedding(input: Any, weight: Any, padding_idx: int | None = None) -> Tensor:
    """torch.nn.functional.embedding: ``weight[input]``, input holding row indices."""
    idx, w = _tensor(input), _tensor(weight)
    if w.ndim != 2:
        raise ShapeError(f"embedding: weight must be 2-D (rows, dims), got shape {w.shape}")
    found = _indices(idx.data, w.data)
    out = RA.getitem(w, (found,))
    if padding_idx is None:
        return out
    row = padding_idx + w.shape[0] if padding_idx < 0 else padding_idx
    if not 0 <= row < w.shape[0]:
        raise IndexDomainError(
            f"embedding: padding_idx must be within the {w.shape[0]} rows, got {padding_idx}"
        )
    padded = (found == row)[..., None]
    return P.where(Tensor(padded), P.mask(_same, out), out) if padded.any() else out


# -- attention --------------------------------------------------------------------------------

_composite(
    "scaled_dot_product_attention",
    "softmax(query @ key^T * scale + mask) @ value (attn_mask: booleans, True where a query "
    "sees a key, or numbers added to the scores; is_causal: each query sees keys up to its own "
    "position)",
    (
        Param("query", TENSOR),
        Param("key", TENSOR),
        Param("value", TENSOR),
        Param("attn_mask", OPT_TENSOR, None),
        Param("dropout_p", NUMBER, 0.0),
        Param("is_causal", BOOL, False),
        Param("scale", OPT_NUMBER, None),
    ),
    symbolic="no symbolic form here: a softmax over each query's scores (see softmax)",
    explain=_explained(
        query="(a*(ds - sum(a*ds, -1))) @ {value}, a = softmax(s), s = {query} @ {key}^T * "
        "scale, ds = {d_query} @ {key}^T * scale",
        key="(a*(ds - sum(a*ds, -1))) @ {value}, a = softmax(s), s = {query} @ {key}^T * "
        "scale, ds = {query} @ {d_key}^T * scale",
        value="softmax({query} @ {key}^T * scale) @ {d_value}",
    ),
    kink=(
        "smooth; is_causal masks scores above the diagonal (aligned top-left, as torch) with "
        "-inf, so they get weight 0; a query that sees no key gives zeros (torch's safe "
        "softmax); scale None is 1/sqrt(E)"
    ),
)


@public("scaled_dot_product_attention")
def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """torch.nn.functional.scaled_dot_product_attention (without dropout) of query
    (..., L, E), key (..., S, E), value (..., S, Ev); attn_mask broadcasts to (..., L, S):
    booleans (True: the query sees the key) or numbers added to the scores."""
    name = "scaled_dot_product_attention"
    if attn_mask is not None and is_causal:
        raise DomainError(f"_{name}: Explicit attn_mask should not be set when is_causal=True")
    if dropout_p:
        raise DomainError(
            f"{name}: dropout_p={dropout_p} is not taken (random weights); gradcli computes "
            "attention without dropout: give dropout_p=0.0, as torch's eval mode does"
        )
    q, k, v = _tensor(query), _tensor(key), _tensor(value)
    if min(q.ndim, k.ndim, v.ndim) < 2 or q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ShapeError(
            "scaled_dot_product_attention: query (..., L, E), key (..., S, E) and value "
            f"(..., S, Ev) must agree, got {q.shape}, {k.shape} and {v.shape}"
        )
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = P.mul(MM.matmul(q, RA.transpose(k, -2, -1)), factor)
    if is_causal:
        allowed = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
        scores = P.where(Tensor(allowed), scores, -math.inf)
    if attn_mask is None:
        return MM.matmul(RD.softmax(scores, -1), v)
    mask = _tensor(attn_mask)
    scores = P.where(mask, scores, -math.inf) if mask.dtype == np.bool_ else P.add(scores, mask)
    # torch's safe softmax: a query that sees no key (scores all -inf) gives zeros, and its
    # gradient is 0 (its scores are replaced by constants before the softmax)
    seen = P.mask(_sees_a_key, scores)
    weights = P.where(seen, RD.softmax(P.where(seen, scores, 0.0), -1), 0.0)
    return MM.matmul(weights, v)


def _sees_a_key(scores: Array) -> Array:
    """Whether a query's scores (the last axis) hold one above -inf."""
    seen: Array = np.any(scores > -math.inf, axis=-1, keepdims=True)
    return seen
