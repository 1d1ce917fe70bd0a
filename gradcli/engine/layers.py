"""Layers in their functional forms (``torch.nn.functional``), each an entry of the op table:
``linear``, ``conv1d``, ``conv2d``, ``conv_transpose2d``, ``max_pool2d``, ``avg_pool2d``,
``layer_norm``, ``batch_norm``, ``group_norm``, ``embedding`` and
``scaled_dot_product_attention``.

All are composites of the engine's primitives, exact and differentiable to any order, with
batch rules for free: a convolution gathers each output position's window with one indexing
step (``getitem`` with integer arrays, whose adjoint ``getitem_backward`` adds the windows back) and
contracts it with the kernel by ``matmul``; a transposed convolution is that adjoint, the
kernel's products scattered onto the output; pooling reduces the same windows (a max by a
mask of the first largest element of each window, as torch's kernel picks it). Operands that
torch makes optional (a bias, a norm's weight) are parameters of kind ``OPT_TENSOR``: None
leaves them out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np

from ..base.engine_errors import DomainError, IndexDomainError, ShapeError
from ..ops import explaining as X
from ..ops.table import (
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
    made_public,
    public,
)
from . import matrix_product as MM
from . import primitives as P
from . import rearranging as RA
from . import reductions as RD
from . import sizes
from .composites import _composite
from .linalg import _differential
from .tensor import Tensor

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
    return P.add(out, b)


# -- windows: what convolutions and pooling read ----------------------------------------------


def _positions(size: int, kernel: int, stride: int, padding: int, dilation: int) -> Array:
    """(out, kernel) indices into the padded axis: where each window's elements are."""
    count = (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    sizes.refuse_over("the windows", count * kernel)
    return np.arange(count)[:, None] * stride + np.arange(kernel)[None, :] * dilation


def _padded(x: Tensor, padding: Pair, fill: float, extra: Pair = (0, 0)) -> Tensor:
    """(N, C, H, W) with ``padding`` (for H, for W) elements of ``fill`` on each side, and
    ``extra`` more after (the windows of pooling's ceil_mode that reach past the padding)."""
    for dim, count, more in ((3, padding[1], extra[1]), (2, padding[0], extra[0])):
        sides = []
        for length in (count, count + more):
            shape = list(x.shape)
            shape[dim] = length
            sides.append(Tensor(sizes.full(shape, fill, x.dtype, "the padding")))
        if count or more:
            x = RA.cat([sides[0], x, sides[1]], dim)
    return x


def _windows(
    x: Tensor, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, fill: float, name: str
) -> Tensor:
    """(N, C, H, W) -> (N, C, OH, OW, KH, KW): the window of each output position, the input
    padded with ``fill``."""
    x = _padded(x, padding, fill)
    rows = _positions(x.shape[2], kernel[0], stride[0], 0, dilation[0])
    cols = _positions(x.shape[3], kernel[1], stride[1], 0, dilation[1])
    if rows.shape[0] <= 0 or cols.shape[0] <= 0:
        raise ShapeError(
            f"{name}: the kernel {kernel[0]}x{kernel[1]} (dilation {dilation[0]}) is larger "
            f"than the padded input {x.shape[2]}x{x.shape[3]}"
        )
    index = (slice(None), slice(None), rows[:, None, :, None], cols[None, :, None, :])
    return RA.getitem(x, index)


def _check_spatial(name: str, x: Tensor, rank: int) -> tuple[Tensor, bool]:
    """``x`` with a batch dim (N, C, *spatial), and whether it came without one (C, *spatial),
    as torch accepts it."""
    if x.ndim == rank + 1:
        return RA.reshape(x, (1, *x.shape)), True
    if x.ndim != rank + 2:
        raise ShapeError(
            f"{name}: input must have {rank + 1} dims (C, {'L' if rank == 1 else 'H, W'}) or "
            f"{rank + 2} (N, C, {'L' if rank == 1 else 'H, W'}), got shape {x.shape}"
        )
    return x, False


def _positive(name: str, **values: int) -> None:
    for what, value in values.items():
        if value < 1:
            raise DomainError(f"{name}: {what} must be at least 1, got {value}")


def _conv2d(
    x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair, groups: int, name: str
) -> Tensor:
    """The convolution (cross-correlation) of (N, C, H, W) with (O, C/groups, KH, KW)."""
    n, c = x.shape[:2]
    o, per_group, kh, kw = w.shape
    if groups < 1 or c % groups or o % groups or per_group * groups != c:
        raise ShapeError(
            f"{name}: weight {w.shape} with groups={groups} expects {per_group * groups} input "
            f"channels (and out channels divisible by groups), got input {x.shape}"
        )
    win = _windows(x, (kh, kw), stride, padding, dilation, 0.0, name)
    oh, ow = win.shape[2], win.shape[3]
    win = RA.reshape(win, (n, groups, per_group, oh * ow, kh * kw))
    win = RA.reshape(RA.transpose(win, 2, 3), (n, groups, oh * ow, per_group * kh * kw))
    kernel = RA.transpose(RA.reshape(w, (groups, o // groups, per_group * kh * kw)), 1, 2)
    out = RA.transpose(MM.matmul(win, kernel), 2, 3)  # (N, G, O/G, OH*OW)
    return RA.reshape(out, (n, o, oh, ow))


_CONV_PARAMS = (
    Param("input", TENSOR),
    Param("weight", TENSOR),
    Param("bias", OPT_TENSOR, None),
    Param("stride", INT, 1),
    Param("padding", INT, 0),
    Param("dilation", INT, 1),
    Param("groups", INT, 1),
)
_CONV_EXPLAIN = _explained(
    input="the sum over each window of {weight} times {d_input}",
    weight="the sum over each window of {input} times {d_weight}",
    bias="{d_bias} (added to each output position of its channel)",
)
_CONV_SYMBOLIC = "no symbolic form here: each output is a sum over a window (see linear)"
_CONV_KINK = "smooth (a bilinear map of input and weight); padding reads zeros"
_composite(
    "conv2d",
    "2-D convolution (cross-correlation) of (N, C, H, W) by (O, C/groups, kH, kW)",
    _CONV_PARAMS,
    backward_name="ConvolutionBackward0",
    symbolic=_CONV_SYMBOLIC,
    explain=_CONV_EXPLAIN,
    kink=_CONV_KINK,
)
_composite(
    "conv1d",
    "1-D convolution (cross-correlation) of (N, C, L) by (O, C/groups, k)",
    _CONV_PARAMS,
    backward_name="ConvolutionBackward0",
    symbolic=_CONV_SYMBOLIC,
    explain=_CONV_EXPLAIN,
    kink=_CONV_KINK,
)


def _convolved(
    name: str,
    rank: int,
    input: Any,
    weight: Any,
    bias: Any,
    stride: int,
    padding: int,
    dilation: int,
    groups: int,
) -> Tensor:
    x, w, b = _tensor(input), _tensor(weight), _optional(bias)
    _positive(name, stride=stride, dilation=dilation, groups=groups)
    if padding < 0:
        raise DomainError(f"{name}: padding must be at least 0, got {padding}")
    if w.ndim != rank + 2:
        raise ShapeError(f"{name}: weight must have {rank + 2} dims, got shape {w.shape}")
    x, unbatched = _check_spatial(name, x, rank)
    if rank == 1:  # (N, C, L) as (N, C, 1, L)
        x = RA.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2]))
        w = RA.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
        out = _conv2d(x, w, (1, stride), (0, padding), (1, dilation), groups, name)
        out = RA.reshape(out, (out.shape[0], out.shape[1], out.shape[3]))
    else:
        s, p, d = (stride, stride), (padding, padding), (dilation, dilation)
        out = _conv2d(x, w, s, p, d, groups, name)
    if b is not None:
        if b.shape != (w.shape[0],):
            raise ShapeError(f"{name}: bias must have shape ({w.shape[0]},), got {b.shape}")
        out = P.add(out, _channels(b, out.ndim))
    return RA.reshape(out, out.shape[1:]) if unbatched else out


def _convolution(name: str, dims: int, doc: str) -> Callable[..., Tensor]:
    """The call of conv1d or conv2d (``dims`` spatial dims), named ``name``."""

    def convolution(
        input: Any,
        weight: Any,
        bias: Any = None,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
    ) -> Tensor:
        return _convolved(name, dims, input, weight, bias, stride, padding, dilation, groups)

    return made_public(name, convolution, name, doc)


conv2d = _convolution(
    "conv2d", 2, "torch.nn.functional.conv2d with square stride, padding and dilation."
)
conv1d = _convolution("conv1d", 1, "torch.nn.functional.conv1d.")


# -- conv_transpose2d -------------------------------------------------------------------------

_composite(
    "conv_transpose2d",
    "2-D transposed convolution of (N, C, H, W) by (C, O/groups, kH, kW): conv2d's adjoint",
    (
        Param("input", TENSOR),
        Param("weight", TENSOR),
        Param("bias", OPT_TENSOR, None),
        Param("stride", INT, 1),
        Param("padding", INT, 0),
        Param("output_padding", INT, 0),
        Param("groups", INT, 1),
        Param("dilation", INT, 1),
    ),
    backward_name="ConvolutionBackward0",
    symbolic=_CONV_SYMBOLIC,
    explain=_explained(
        input="each element of {d_input} times {weight}, added onto the output window it reaches",
        weight="each element of {input} times {d_weight}, added onto the output window it reaches",
        bias="{d_bias} (added to each output position of its channel)",
    ),
    kink="smooth (a bilinear map of input and weight); padding crops the output",
)


@public("conv_transpose2d")
def conv_transpose2d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: int = 1,
    padding: int = 0,
    output_padding: int = 0,
    groups: int = 1,
    dilation: int = 1,
) -> Tensor:
    """torch.nn.functional.conv_transpose2d with square stride, padding and dilation: each
    input element times the kernel, added onto the output at stride steps."""
    name = "conv_transpose2d"
    x, w, b = _tensor(input), _tensor(weight), _optional(bias)
    _positive(name, stride=stride, dilation=dilation, groups=groups)
    if padding < 0 or not 0 <= output_padding < max(stride, dilation):
        raise DomainError(
            f"{name}: padding must be at least 0 and output_padding smaller than stride or "
            f"dilation, got padding={padding}, output_padding={output_padding}"
        )
    if w.ndim != 4:
        raise ShapeError(f"{name}: weight must have 4 dims, got shape {w.shape}")
    x, unbatched = _check_spatial(name, x, 2)
    n, c, h, width = x.shape
    _, per_group, kh, kw = w.shape
    if w.shape[0] != c or c % groups:
        raise ShapeError(
            f"{name}: weight {w.shape} expects {w.shape[0]} input channels (divisible by "
            f"groups={groups}), got input {x.shape}"
        )
    g, cg = groups, c // groups
    # every input element's products with the kernel: (N, G, H*W, O/G * kH * kW)
    flat = RA.transpose(RA.reshape(x, (n, g, cg, h * width)), 2, 3)
    products = MM.matmul(flat, RA.reshape(w, (g, cg, per_group * kh * kw)))
    products = RA.reshape(products, (n, g, h, width, per_group, kh, kw))
    products = RA.transpose(RA.transpose(products, 4, 3), 3, 2)  # (N, G, O/G, H, W, kH, kW)
    products = RA.reshape(products, (n, g * per_group, h, width, kh, kw))
    # where input element i's product with kernel element k lands: i * stride + k * dilation
    rows = np.arange(h)[:, None] * stride + np.arange(kh)[None, :] * dilation
    cols = np.arange(width)[:, None] * stride + np.arange(kw)[None, :] * dilation
    full = (
        (h - 1) * stride + dilation * (kh - 1) + 1 + output_padding,
        (width - 1) * stride + dilation * (kw - 1) + 1 + output_padding,
    )
    if full[0] <= 2 * padding or full[1] <= 2 * padding:
        raise ShapeError(f"{name}: padding={padding} leaves no output of {full[0]}x{full[1]}")
    index = (slice(None), slice(None), rows[:, None, :, None], cols[None, :, None, :])
    out = RA.getitem_backward(products, index, (n, g * per_group, *full))
    if padding:
        cut = (slice(None), slice(None), slice(padding, full[0] - padding))
        out = RA.getitem(out, (*cut, slice(padding, full[1] - padding)))
    if b is not None:
        if b.shape != (g * per_group,):
            raise ShapeError(f"{name}: bias must have shape ({g * per_group},), got {b.shape}")
        out = P.add(out, _channels(b, 4))
    return RA.reshape(out, out.shape[1:]) if unbatched else out


# -- pooling ----------------------------------------------------------------------------------


def _first_largest(windows: Array) -> Array:
    """One-hot along the last axis: the first largest element (a NaN first), as torch's
    max_pool2d picks it."""
    picked = np.argmax(windows, axis=-1)
    chosen: Array = np.arange(windows.shape[-1]) == picked[..., None]
    return chosen


def _pooled_count(
    size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool
) -> int:
    """The windows along an axis: torch's output size, rounded up with ``ceil_mode`` (but the
    last window starts inside the input or its left padding)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    count = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (count - 1) * stride >= size + padding:
        count -= 1
    return count


def _pool_windows(
    name: str,
    input: Any,
    kernel_size: int,
    stride: int | None,
    padding: int,
    dilation: int,
    fill: float,
    ceil_mode: bool = False,
) -> tuple[Tensor, bool]:
    x = _tensor(input)
    stride = kernel_size if stride is None else stride
    _positive(name, kernel_size=kernel_size, stride=stride, dilation=dilation)
    if not 0 <= padding <= kernel_size // 2:
        raise DomainError(
            f"{name}: padding should be at most half of the kernel size ({kernel_size // 2}), "
            f"got {padding}"
        )
    x, unbatched = _check_spatial(name, x, 2)
    extra = []  # what ceil_mode's last windows reach past the padded input
    for size in x.shape[2:]:
        count = _pooled_count(size, kernel_size, stride, padding, dilation, ceil_mode)
        reach = (count - 1) * stride + dilation * (kernel_size - 1) + 1
        extra.append(max(reach - size - 2 * padding, 0))
    x = _padded(x, (padding, padding), fill, (extra[0], extra[1]))
    k, s, d = (kernel_size,) * 2, (stride,) * 2, (dilation,) * 2
    return _windows(x, k, s, (0, 0), d, fill, name), unbatched


_composite(
    "max_pool2d",
    "the largest element of each kernel_size x kernel_size window of (N, C, H, W)",
    (
        Param("input", TENSOR),
        Param("kernel_size", INT),
        Param("stride", OPT_INT, None),
        Param("padding", INT, 0),
        Param("dilation", INT, 1),
        Param("ceil_mode", BOOL, False),
    ),
    backward_name="MaxPool2DWithIndicesBackward0",
    symbolic="no symbolic form here: the largest element of each window is a choice",
    explain=_explained(
        input="{d_input} at the first largest element of each window (row-major order)"
    ),
    kink=(
        "at a tie the whole gradient goes to the first largest element of the window (in "
        "row-major order), as torch's kernel picks it; padding is -inf, never picked"
    ),
)


@public("max_pool2d")
def max_pool2d(
    input: Any,
    kernel_size: int,
    stride: int | None = None,
    padding: int = 0,
    dilation: int = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """torch.nn.functional.max_pool2d with a square kernel (stride None: kernel_size;
    ceil_mode: the output size rounded up, the last windows reaching past the input)."""
    windows, unbatched = _pool_windows(
        "max_pool2d", input, kernel_size, stride, padding, dilation, -math.inf, ceil_mode
    )
    flat = RA.reshape(windows, (*windows.shape[:4], -1))
    chosen = P.mask(_first_largest, flat)
    out = RD.sum(P.where(chosen, flat, P.zeros_like(flat)), -1)
    return RA.reshape(out, out.shape[1:]) if unbatched else out


_composite(
    "avg_pool2d",
    "the mean of each kernel_size x kernel_size window of (N, C, H, W)",
    (
        Param("input", TENSOR),
        Param("kernel_size", INT),
        Param("stride", OPT_INT, None),
        Param("padding", INT, 0),
        Param("ceil_mode", BOOL, False),
        Param("count_include_pad", BOOL, True),
    ),
    backward_name="AvgPool2DBackward0",
    symbolic="no symbolic form here: each output is a mean over a window",
    explain=_explained(
        input="the mean of {d_input} over each window (its padding zeros counted unless "
        "count_include_pad=False)"
    ),
    kink="smooth; count_include_pad=False divides by the elements of the input alone",
)


@public("avg_pool2d")
def avg_pool2d(
    input: Any,
    kernel_size: int,
    stride: int | None = None,
    padding: int = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """torch.nn.functional.avg_pool2d with a square kernel (stride None: kernel_size;
    ceil_mode: the output size rounded up, a last window reaching past the padding divided
    by what it covers of the padded input)."""
    name = "avg_pool2d"
    windows, unbatched = _pool_windows(name, input, kernel_size, stride, padding, 1, 0.0, ceil_mode)
    total = RD.sum(windows, (-2, -1))
    step = kernel_size if stride is None else stride
    shape = _tensor(input).shape[-2:]
    reach = [(n - 1) * step + kernel_size for n in total.shape[-2:]]
    if (count_include_pad or padding == 0) and all(
        r <= n + 2 * padding for r, n in zip(reach, shape)
    ):
        out = P.div(total, float(kernel_size * kernel_size))
    else:  # each window's count of the padded input's elements, or of the input's own
        counted = []
        for size, windows_along in zip(shape, total.shape[-2:]):
            at = np.arange(windows_along)[:, None] * step + np.arange(kernel_size)[None, :]
            low, high = (0, size + 2 * padding) if count_include_pad else (padding, size + padding)
            counted.append(((at >= low) & (at < high)).sum(axis=1))
        counts = (counted[0][:, None] * counted[1][None, :]).astype(total.dtype)
        out = P.div(total, Tensor(counts))
    return RA.reshape(out, out.shape[1:]) if unbatched else out


def _same(x: Array) -> Array:
    """The identity, as a mask: a value that carries no gradient."""
    return x


# -- normalization ----------------------------------------------------------------------------


def _normalized(x: Tensor, dims: tuple[int, ...], eps: float) -> Tensor:
    """(x - mean) / sqrt(var + eps) over ``dims``, the variance biased (divided by n)."""
    centered = P.sub(x, RD.mean(x, dims, keepdim=True))
    var = RD.mean(P.mul(centered, centered), dims, keepdim=True)
    return P.div(centered, P.sqrt(P.add(var, eps)))


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
    out = _normalized(x, tuple(range(x.ndim - k, x.ndim)), eps)
    return _affine(out, w, b)


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
    return _affine(out, _channels(w, x.ndim), _channels(b, x.ndim))


_composite(
    "batch_norm",
    "normalize each channel of (N, C, ...) by the running statistics (training False) or "
    "the batch's, then * weight + bias",
    (
        Param("input", TENSOR),
        Param("running_mean", TENSOR),
        Param("running_var", TENSOR),
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
        "the running statistics in place by momentum, which a program cannot see); the "
        "running statistics get no gradient (torch refuses to differentiate them)"
    ),
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
    """torch.nn.functional.batch_norm of (N, C, *) (its running statistics left as given)."""
    x, w, b = _tensor(input), _optional(weight), _optional(bias)
    mean, var = _tensor(running_mean), _tensor(running_var)
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: input must be (N, C, ...), got shape {x.shape}")
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
        spread = P.sqrt(P.add(_channels(var, x.ndim), eps))
        out = P.div(P.sub(x, _channels(mean, x.ndim)), spread)
    return _affine(out, _channels(w, x.ndim), _channels(b, x.ndim))


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
