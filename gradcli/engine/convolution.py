"""Convolutions and pooling, the operations that read sliding windows (``torch.nn.functional``'s
``conv1d``, ``conv2d``, ``conv3d``, ``conv_transpose2d``, ``max_pool2d``, ``avg_pool2d``), each
an entry of the op table.

Each setting of a window (kernel_size, stride, padding, dilation, output_padding) is an int, the
same along every spatial dim, or a tuple of one int per dim, as torch takes it; bad settings get
torch's words (a ``ShapeError``, which ``gradcli run`` raises as torch's ``RuntimeError``).

All are composites of the engine's primitives, exact and differentiable to any order: a
convolution gathers each output position's window with one indexing step (``getitem`` with
integer arrays, whose adjoint ``getitem_backward`` adds the windows back) and contracts it with
the kernel by ``matmul``; a transposed convolution is that adjoint, the kernel's products
scattered onto the output; pooling reduces the same windows (a max by a mask of the first
largest element of each window, as torch's kernel picks it). Every value on the way is a
primitive's, so --max-elements and --max-memory refuse a huge one before it is allocated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base.engine_errors import ShapeError
from ..ops.table import (
    BOOL,
    INT,
    INTS,
    OPT_INTS,
    OPT_TENSOR,
    TENSOR,
    Array,
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
from .layers import _channels, _explained, _optional, _tensor
from .tensor import Tensor

Sizes = tuple[int, ...]
_COUNTS = {1: "one", 2: "two", 3: "three"}
_AXES = {2: ("height", "width"), 3: ("depth", "height", "width")}


def _whole(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _conv_setting(value: Any, rank: int, what: str) -> Sizes:
    """A convolution's ``what`` (an int, or a tuple of ``rank`` ints) as one int per spatial
    dim, refused in torch's words."""
    values = _listed(value)
    if len(values) == 1:
        values *= rank
    if len(values) != rank or not all(_whole(v) for v in values):
        raise ShapeError(
            f"expected {what} to be a single integer value or a list of {rank} values to match "
            f"the convolution dimensions, but got {what}={_listed(value)}"
        )
    return tuple(int(v) for v in values)


def _pool_setting(value: Any, rank: int, what: str, name: str) -> Sizes:
    """A pooling's ``what`` as one int per spatial dim, refused in torch's words."""
    values = _listed(value)
    if len(values) == 1:
        values *= rank
    if len(values) != rank or not all(_whole(v) for v in values):
        count = _COUNTS[rank]
        form = {
            "stride": f"either be omitted, a single int, or a tuple of {count} ints",
            "dilation": f"be either a single int, or a tuple of {count} ints",
        }.get(what, f"either be a single int, or a tuple of {count} ints")
        raise ShapeError(f"{name}: {what} must {form}")
    return tuple(int(v) for v in values)


def _by_axis(values: Sizes, prefix: str) -> str:
    """``dH: 2 dW: 1`` as torch's pooling checks name each spatial dim's value."""
    letters = ("T", "H", "W")[3 - len(values) :]
    return " ".join(f"{prefix}{letter}: {v}" for letter, v in zip(letters, values))


def _spatial(name: str, x: Tensor, rank: int) -> tuple[Tensor, bool]:
    """``x`` with a batch dim (N, C, *spatial), and whether it came without one (C, *spatial),
    as torch's convolutions accept it."""
    if x.ndim not in (rank + 1, rank + 2):
        raise ShapeError(
            f"Expected {rank + 1}D (unbatched) or {rank + 2}D (batched) input to {name}, but "
            f"got input of size: {list(x.shape)}"
        )
    return (RA.reshape(x, (1, *x.shape)), True) if x.ndim == rank + 1 else (x, False)


def _sizes_text(values: Sequence[int]) -> str:
    return " x ".join(str(v) for v in values)


# -- windows: what convolutions and pooling read ----------------------------------------------


def _padded(x: Tensor, before: Sizes, after: Sizes, fill: float) -> Tensor:
    """(N, C, *spatial) with ``before[d]`` elements of ``fill`` before spatial dim d and
    ``after[d]`` after it."""
    for d in range(len(before) - 1, -1, -1):
        dim = 2 + d
        if not (before[d] or after[d]):
            continue
        sides = []
        for length in (before[d], after[d]):
            shape = list(x.shape)
            shape[dim] = length
            sides.append(Tensor(sizes.full(shape, fill, x.dtype, "the padding")))
        x = RA.cat([sides[0], x, sides[1]], dim)
    return x


def _reach(kernel: int, dilation: int) -> int:
    """How many elements a window spans: its kernel, dilated."""
    return dilation * (kernel - 1) + 1


def _lattice(outer: Sizes, outer_step: Sizes, inner: Sizes, inner_step: Sizes) -> tuple[Any, ...]:
    """The index of (N, C, *spatial) at ``i * outer_step + j * inner_step`` along each spatial
    dim, for i below ``outer`` and j below ``inner``: its values (N, C, *outer, *inner). With
    the output positions outer (by stride) and the kernel's inner (by dilation): each output
    position's window; with the kernel's outer and the input's positions inner: where a
    transposed convolution's products land."""
    rank = len(outer)
    index: list[Any] = [slice(None), slice(None)]
    for d in range(rank):
        at = np.arange(outer[d])[:, None] * outer_step[d] + np.arange(inner[d]) * inner_step[d]
        shape = [1] * (2 * rank)
        shape[d], shape[rank + d] = outer[d], inner[d]
        index.append(at.reshape(shape))
    return tuple(index)


def _windows(x: Tensor, counts: Sizes, kernel: Sizes, stride: Sizes, dilation: Sizes) -> Tensor:
    """(N, C, *spatial), padded already -> (N, C, *counts, *kernel): the windows."""
    sizes.refuse_over(
        "the windows", math.prod(x.shape[:2]) * math.prod(counts) * math.prod(kernel), (x.data,)
    )
    return RA.getitem(x, _lattice(counts, stride, kernel, dilation))


# -- convolution ------------------------------------------------------------------------------


def _check_conv_settings(stride: Sizes, padding: Sizes, dilation: Sizes, groups: int) -> None:
    if any(s < 1 for s in stride):
        raise ShapeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise ShapeError("negative padding is not supported")
    if any(d < 1 for d in dilation):
        raise ShapeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups < 1:
        raise ShapeError("non-positive groups is not supported")


def _check_conv_operands(
    name: str, x: Tensor, w: Tensor, b: Tensor | None, groups: int, transposed: bool
) -> None:
    """torch's checks of a convolution's input (batched), weight and bias."""
    channels = w.shape[0] if transposed else w.shape[1] * groups
    if w.shape[0] % groups:
        raise ShapeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(w.shape)}] instead"
        )
    if x.shape[1] != channels:
        given = f"transposed=1, weight of size {list(w.shape)}" if transposed else None
        raise ShapeError(
            f"Given {given or f'groups={groups}, weight of size {list(w.shape)}'}, expected "
            f"input{list(x.shape)} to have {channels} channels, but got {x.shape[1]} channels "
            "instead"
        )
    out_channels = w.shape[1] * groups if transposed else w.shape[0]
    if b is not None and b.shape != (out_channels,):
        raise ShapeError(
            f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with "
            f"{out_channels} elements, but got bias of size {list(b.shape)} instead"
        )


def _conv_padding(
    padding: Any, kernel: Sizes, stride: Sizes, dilation: Sizes
) -> tuple[Sizes, Sizes]:
    """The padding before and after each spatial dim: numbers, 'valid' (none) or 'same' (the
    output the input's size; an odd total pads one more after, as torch)."""
    rank = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * rank, (0,) * rank
        if padding != "same":
            raise ShapeError(f"Invalid padding string: {padding!r}")
        if any(s != 1 for s in stride):
            raise ShapeError("padding='same' is not supported for strided convolutions")
        total = [_reach(k, d) - 1 for k, d in zip(kernel, dilation)]
        return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
    sides = _conv_setting(padding, rank, "padding")
    return sides, sides


def _convolve(
    x: Tensor, w: Tensor, stride: Sizes, before: Sizes, after: Sizes, dilation: Sizes, groups: int
) -> Tensor:
    """The convolution (cross-correlation) of (N, C, *spatial) with (O, C/groups, *kernel)."""
    n = x.shape[0]
    o, per_group = w.shape[:2]
    kernel = tuple(w.shape[2:])
    padded = [s + lo + hi for s, lo, hi in zip(x.shape[2:], before, after)]
    reach = [_reach(k, d) for k, d in zip(kernel, dilation)]
    if any(r > p for r, p in zip(reach, padded)):
        raise ShapeError(
            f"Calculated padded input size per channel: ({_sizes_text(padded)}). Kernel size: "
            f"({_sizes_text(reach)}). Kernel size can't be greater than actual input size"
        )
    counts = tuple((p - r) // s + 1 for p, r, s in zip(padded, reach, stride))
    win = _windows(_padded(x, before, after, 0.0), counts, kernel, stride, dilation)
    positions, taps = math.prod(counts), math.prod(kernel)
    win = RA.reshape(win, (n, groups, per_group, positions, taps))
    win = RA.reshape(RA.transpose(win, 2, 3), (n, groups, positions, per_group * taps))
    kernels = RA.transpose(RA.reshape(w, (groups, o // groups, per_group * taps)), 1, 2)
    if groups == 1:  # numpy multiplies by a matrix much faster than by a stack of one
        kernels = RA.reshape(kernels, kernels.shape[1:])
    out = RA.transpose(MM.matmul(win, kernels), 2, 3)  # (N, G, O/G, positions)
    return RA.reshape(out, (n, o, *counts))


def _convolved(
    name: str,
    rank: int,
    operands: tuple[Any, Any, Any],
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    output_padding: Any = None,
) -> Tensor:
    """conv{rank}d of ``operands`` (input, weight, bias), or conv_transpose{rank}d given an
    ``output_padding``: the settings checked in torch's order and words."""
    transposed = output_padding is not None
    x, w, b = _tensor(operands[0]), _tensor(operands[1]), _optional(operands[2])
    strides = _conv_setting(stride, rank, "stride")
    if transposed or not isinstance(padding, str):
        padding = _conv_setting(padding, rank, "padding")
    dilations = _conv_setting(dilation, rank, "dilation")
    if transposed:
        output_padding = _conv_setting(output_padding, rank, "output_padding")
    if w.ndim != rank + 2:
        channels = (
            "in_channels, out_channels/groups" if transposed else "out_channels, in_channels/groups"
        )
        raise ShapeError(
            f"{name}: weight must have {rank + 2} dims ({channels}, kernel dims), got shape "
            f"{w.shape}"
        )
    kernel = tuple(w.shape[2:])
    if any(k < 1 for k in kernel):
        named = _per_axis(("kernel", kernel, 1))
        raise ShapeError(f"kernel size should be greater than zero, but got {named}")
    before, after = _conv_padding(padding, kernel, strides, dilations)
    _check_conv_settings(strides, before, dilations, groups)
    if transposed:
        _output_padding_check(output_padding, strides, dilations)
    x, unbatched = _spatial(name, x, rank)
    _check_conv_operands(name, x, w, b, groups, transposed)
    if transposed:
        out = _transposed(x, w, strides, before, output_padding, dilations, groups)
    else:
        out = _convolve(x, w, strides, before, after, dilations, groups)
    if b is not None:
        out = P.add(out, _channels(b, out.ndim))
    return RA.reshape(out, out.shape[1:]) if unbatched else out


def _convolution_node(rank: int) -> Callable[[list[Any]], str]:
    """torch's node of a convolution of ``rank`` spatial dims: the convolution's, or, for an
    input without a batch dim, the squeeze of the batch dim torch added to it."""

    def name(args: list[Any]) -> str:
        unbatched = getattr(args[0], "ndim", rank + 2) == rank + 1
        return "SqueezeBackward1" if unbatched else "ConvolutionBackward0"

    return name


_CONV_PARAMS = (
    Param("input", TENSOR),
    Param("weight", TENSOR),
    Param("bias", OPT_TENSOR, None),
    Param("stride", INTS, 1),
    Param("padding", INTS, 0),
    Param("dilation", INTS, 1),
    Param("groups", INT, 1),
)
_CONV_EXPLAIN = _explained(
    input="the sum over each window of {weight} times {d_input}",
    weight="the sum over each window of {input} times {d_weight}",
    bias="{d_bias} (added to each output position of its channel)",
)
_CONV_SYMBOLIC = "no symbolic form here: each output is a sum over a window (see linear)"
_CONV_KINK = "smooth (a bilinear map of input and weight); padding reads zeros"
_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}
_KERNEL = {1: "k", 2: "kH, kW", 3: "kD, kH, kW"}


def _convolution(rank: int) -> Callable[..., Tensor]:
    """Declare conv1d, conv2d or conv3d (``rank`` spatial dims) and make its call."""
    name = f"conv{rank}d"
    _composite(
        name,
        f"{rank}-D convolution (cross-correlation) of (N, C, {_SPATIAL[rank]}) by "
        f"(O, C/groups, {_KERNEL[rank]}); stride, padding, dilation: an int or one per dim",
        _CONV_PARAMS,
        backward_name=_convolution_node(rank),
        symbolic=_CONV_SYMBOLIC,
        explain=_CONV_EXPLAIN,
        kink=_CONV_KINK,
    )

    def convolution(
        input: Any,
        weight: Any,
        bias: Any = None,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
    ) -> Tensor:
        return _convolved(name, rank, (input, weight, bias), stride, padding, dilation, groups)

    return made_public(
        name,
        convolution,
        name,
        f"torch.nn.functional.{name}: stride, padding and dilation an int or a tuple of "
        f"{rank} ints (padding also 'valid' or 'same').",
    )


conv1d = _convolution(1)
conv2d = _convolution(2)
conv3d = _convolution(3)


# -- transposed convolution -------------------------------------------------------------------


def _transposed(
    x: Tensor,
    w: Tensor,
    stride: Sizes,
    padding: Sizes,
    output_padding: Sizes,
    dilation: Sizes,
    groups: int,
) -> Tensor:
    """conv's adjoint: every element of (N, C, *spatial) times the kernel (C, O/groups,
    *kernel), added onto the output where it lands (element i, kernel element k: i * stride +
    k * dilation), then ``padding`` cropped from each side."""
    n, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    per_group, kernel = w.shape[1], tuple(w.shape[2:])
    g, cg = groups, c // groups
    full = tuple(
        (s - 1) * st + _reach(k, d) + op
        for s, st, k, d, op in zip(spatial, stride, kernel, dilation, output_padding)
    )
    if any(f - 2 * p < 1 for f, p in zip(full, padding)):
        cropped = [f - 2 * p for f, p in zip(full, padding)]
        raise ShapeError(
            f"Given input size per channel: ({_sizes_text(spatial)}). Calculated output size "
            f"per channel: ({_sizes_text(cropped)}). Output size is too small"
        )
    # every input element's products with the kernel, laid out (N, O, *kernel, *spatial) as
    # the matmul makes them: (G, O/G * kernel elements, C/G) @ (N, G, C/G, positions)
    kernels = RA.transpose(RA.reshape(w, (g, cg, -1)), 1, 2)
    flat = RA.reshape(x, (n, g, cg, math.prod(spatial)))
    if g == 1:  # numpy multiplies by a matrix much faster than by a stack of one
        kernels = RA.reshape(kernels, kernels.shape[1:])
    products = MM.matmul(kernels, flat)
    products = RA.reshape(products, (n, g * per_group, *kernel, *spatial))
    # where input element i's product with kernel element k lands: i * stride + k * dilation
    lands = _lattice(kernel, dilation, spatial, stride)
    out = RA.getitem_backward(products, lands, (n, g * per_group, *full))
    if any(padding):
        crop = tuple(slice(p, f - p) for p, f in zip(padding, full))
        out = RA.getitem(out, (slice(None), slice(None), *crop))
    return out


def _per_axis(*settings: tuple[str, Sizes, int]) -> str:
    """``kernel_height: 3 kernel_width: 2``: settings (name, values, the value a 1-D
    convolution's height takes) named per axis as torch's checks name them (a 1-D convolution
    is torch's 2-D one of height 1)."""
    words = []
    for what, values, height in settings:
        shown = (height, *values) if len(values) == 1 else values
        axes = _AXES[len(shown)]
        words += [f"{what}_{axis}: {value}" for axis, value in zip(axes, shown)]
    return " ".join(words)


def _output_padding_check(output_padding: Sizes, stride: Sizes, dilation: Sizes) -> None:
    if any(p < 0 for p in output_padding):
        raise ShapeError("negative output_padding is not supported")
    if any(p >= s and p >= d for p, s, d in zip(output_padding, stride, dilation)):
        named = _per_axis(
            ("output_padding", output_padding, 0), ("stride", stride, 1), ("dilation", dilation, 1)
        )
        raise ShapeError(
            f"output padding must be smaller than either stride or dilation, but got {named}"
        )


_composite(
    "conv_transpose2d",
    "2-D transposed convolution of (N, C, H, W) by (C, O/groups, kH, kW): conv2d's adjoint; "
    "stride, padding, output_padding, dilation: an int or one per dim",
    (
        Param("input", TENSOR),
        Param("weight", TENSOR),
        Param("bias", OPT_TENSOR, None),
        Param("stride", INTS, 1),
        Param("padding", INTS, 0),
        Param("output_padding", INTS, 0),
        Param("groups", INT, 1),
        Param("dilation", INTS, 1),
    ),
    backward_name=_convolution_node(2),
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
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """torch.nn.functional.conv_transpose2d: each input element times the kernel, added onto
    the output at stride steps; stride, padding, output_padding and dilation an int or a tuple
    of 2 ints."""
    return _convolved(
        "conv_transpose2d",
        2,
        (input, weight, bias),
        stride,
        padding,
        dilation,
        groups,
        output_padding,
    )


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
    """The windows along an axis, as torch's pooling_output_shape counts them (and checks its
    settings): rounded up with ``ceil_mode``, but the last window starts inside the input or
    its left padding."""
    if stride == 0:
        raise ShapeError("stride should not be zero")
    if padding < 0:
        raise ShapeError(f"pad must be non-negative, but got pad: {padding}")
    if padding > int(_reach(kernel, dilation) / 2):  # C++ division, toward zero
        raise ShapeError(
            f"pad should be at most half of effective kernel size, but got pad={padding}, "
            f"kernel_size={kernel} and dilation={dilation}"
        )
    span = size + 2 * padding - _reach(kernel, dilation)
    count = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (count - 1) * stride >= size + padding:
        count -= 1
    return count


class _Pooling:
    """A pooling's settings, checked as torch checks them, and its windows over an input."""

    def __init__(
        self,
        name: str,
        rank: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        ceil_mode: bool,
    ) -> None:
        self.name, self.rank, self.ceil_mode = name, rank, ceil_mode
        self.kernel = _pool_setting(kernel_size, rank, "kernel_size", name)
        omitted = stride is None or (isinstance(stride, (tuple, list)) and not stride)
        self.stride = self.kernel if omitted else _pool_setting(stride, rank, "stride", name)
        self.padding = _pool_setting(padding, rank, "padding", name)
        self.dilation = _pool_setting(dilation, rank, "dilation", name)

    def windows(self, input: Any, fill: float) -> tuple[Tensor, bool, Sizes]:
        """(N, C, *counts, *kernel), the input padded with ``fill`` (and ceil_mode's last
        windows reaching past it); whether it came unbatched; the counts."""
        x = _tensor(input)
        spatial = x.shape[-self.rank :] if x.ndim >= self.rank else ()
        counts = tuple(
            _pooled_count(s, k, st, p, d, self.ceil_mode)
            for s, k, st, p, d in zip(
                spatial, self.kernel, self.stride, self.padding, self.dilation
            )
        )
        for values, what in ((self.kernel, "kernel size"), (self.stride, "stride")):
            if any(v <= 0 for v in values):
                letter = "k" if what == "kernel size" else "d"
                raise ShapeError(
                    f"{what} should be greater than zero, but got {_by_axis(values, letter)}"
                )
        if any(d <= 0 for d in self.dilation):
            raise ShapeError(
                "dilation should be greater than zero, but got "
                + _by_axis(self.dilation, "dilation")
            )
        if x.ndim not in (self.rank + 1, self.rank + 2):
            raise ShapeError(
                f"non-empty {self.rank + 1}D or {self.rank + 2}D (batch mode) tensor expected "
                "for input"
            )
        if any(c < 1 for c in counts):
            planes = "x".join(str(v) for v in x.shape[-self.rank - 1 :])
            shown = "x".join(str(v) for v in (x.shape[-self.rank - 1], *counts))
            raise ShapeError(
                f"Given input size: ({planes}). Calculated output size: ({shown}). Output size "
                "is too small"
            )
        unbatched = x.ndim == self.rank + 1
        if unbatched:
            x = RA.reshape(x, (1, *x.shape))
        reach = [
            (c - 1) * st + _reach(k, d)
            for c, st, k, d in zip(counts, self.stride, self.kernel, self.dilation)
        ]
        extra = tuple(max(r - s - 2 * p, 0) for r, s, p in zip(reach, spatial, self.padding))
        after = tuple(p + e for p, e in zip(self.padding, extra))
        x = _padded(x, self.padding, after, fill)
        return _windows(x, counts, self.kernel, self.stride, self.dilation), unbatched, counts

    def divisors(self, spatial: Sizes, counts: Sizes, count_include_pad: bool) -> Array:
        """Each window's count of the padded input's elements (count_include_pad) or of the
        input's own: what average pooling divides its sum by."""
        counted = []
        for size, windows, k, st, p in zip(spatial, counts, self.kernel, self.stride, self.padding):
            at = np.arange(windows)[:, None] * st + np.arange(k)[None, :]
            low, high = (0, size + 2 * p) if count_include_pad else (p, size + p)
            counted.append(((at >= low) & (at < high)).sum(axis=1))
        return np.asarray(math.prod(np.ix_(*counted)))


def _unbatched(out: Tensor, unbatched: bool) -> Tensor:
    return RA.reshape(out, out.shape[1:]) if unbatched else out


_composite(
    "max_pool2d",
    "the largest element of each kernel_size window of (N, C, H, W) (kernel_size, stride, "
    "padding, dilation: an int or one per dim)",
    (
        Param("input", TENSOR),
        Param("kernel_size", INTS),
        Param("stride", OPT_INTS, None),
        Param("padding", INTS, 0),
        Param("dilation", INTS, 1),
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
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """torch.nn.functional.max_pool2d: kernel_size, stride, padding and dilation an int or a
    tuple of 2 ints (stride None: kernel_size; ceil_mode: the output size rounded up, the last
    windows reaching past the input)."""
    pooling = _Pooling("max_pool2d", 2, kernel_size, stride, padding, dilation, ceil_mode)
    windows, unbatched, counts = pooling.windows(input, -math.inf)
    flat = RA.reshape(windows, (*windows.shape[: 2 + len(counts)], -1))
    chosen = P.mask(_first_largest, flat)
    return _unbatched(RD.sum(P.where(chosen, flat, P.zeros_like(flat)), -1), unbatched)


_composite(
    "avg_pool2d",
    "the mean of each kernel_size window of (N, C, H, W) (kernel_size, stride, padding: an "
    "int or one per dim)",
    (
        Param("input", TENSOR),
        Param("kernel_size", INTS),
        Param("stride", OPT_INTS, None),
        Param("padding", INTS, 0),
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
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """torch.nn.functional.avg_pool2d: kernel_size, stride and padding an int or a tuple of 2
    ints (stride None: kernel_size; ceil_mode: the output size rounded up, a last window
    reaching past the padding divided by what it covers of the padded input)."""
    pooling = _Pooling("avg_pool2d", 2, kernel_size, stride, padding, 1, ceil_mode)
    windows, unbatched, counts = pooling.windows(input, 0.0)
    rank = len(counts)
    total = RD.sum(windows, tuple(range(-rank, 0)))
    spatial = tuple(_tensor(input).shape[-rank:])
    reach = [(c - 1) * s + k for c, s, k in zip(counts, pooling.stride, pooling.kernel)]
    within = all(r <= n + 2 * p for r, n, p in zip(reach, spatial, pooling.padding))
    if within and (count_include_pad or not any(pooling.padding)):
        out = P.div(total, float(math.prod(pooling.kernel)))
    else:
        divisors = pooling.divisors(spatial, counts, count_include_pad)
        out = P.div(total, Tensor(divisors.astype(total.dtype)))
    return _unbatched(out, unbatched)
