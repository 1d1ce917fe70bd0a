"""Convolutions, the operations that read sliding windows (``torch.nn.functional``'s
``conv1d``, ``conv2d``, ``conv3d``, ``conv_transpose1d``, ``conv_transpose2d``,
``conv_transpose3d``), each an entry of the op table; pooling (``pooling.py``) reads the same
windows.

Each setting of a window (kernel_size, stride, padding, dilation, output_padding) is an int, the
same along every spatial dim, or a tuple of one int per dim, as torch takes it; bad settings get
torch's words (a ``ShapeError``, which ``gradcli run`` raises as torch's ``RuntimeError``).

All are composites of the engine's primitives, exact and differentiable to any order: a
convolution gathers each output position's window with one indexing step (``getitem`` with
integer arrays, whose adjoint ``getitem_backward`` adds the windows back) and contracts it with
the kernel by ``matmul``; a transposed convolution is that adjoint, the kernel's products
scattered onto the output. Every value on the way is a primitive's, so --max-elements and
--max-memory refuse a huge one before it is allocated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import ShapeError
from ...engine import sizes
from ...engine.tensor import Tensor
from .. import primitives as P
from ..arrays import rearranging as RA
from ..linalg import matrix_product as MM
from ..table import INT, INTS, OPT_TENSOR, TENSOR, Param, made_public
from .composites import _composite
from .layers import _channels, _explained, _optional, _tensor

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


_TRANSPOSED_PARAMS = (
    Param("input", TENSOR),
    Param("weight", TENSOR),
    Param("bias", OPT_TENSOR, None),
    Param("stride", INTS, 1),
    Param("padding", INTS, 0),
    Param("output_padding", INTS, 0),
    Param("groups", INT, 1),
    Param("dilation", INTS, 1),
)
_TRANSPOSED_EXPLAIN = _explained(
    input="each element of {d_input} times {weight}, added onto the output window it reaches",
    weight="each element of {input} times {d_weight}, added onto the output window it reaches",
    bias="{d_bias} (added to each output position of its channel)",
)


def _transposed_convolution(rank: int) -> Callable[..., Tensor]:
    """Declare conv_transpose1d, 2d or 3d (``rank`` spatial dims) and make its call."""
    name = f"conv_transpose{rank}d"
    _composite(
        name,
        f"{rank}-D transposed convolution of (N, C, {_SPATIAL[rank]}) by (C, O/groups, "
        f"{_KERNEL[rank]}): conv{rank}d's adjoint; stride, padding, output_padding, dilation: "
        "an int or one per dim",
        _TRANSPOSED_PARAMS,
        backward_name=_convolution_node(rank),
        symbolic=_CONV_SYMBOLIC,
        explain=_TRANSPOSED_EXPLAIN,
        kink="smooth (a bilinear map of input and weight); padding crops the output",
    )

    def transposed_convolution(
        input: Any,
        weight: Any,
        bias: Any = None,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        dilation: Any = 1,
    ) -> Tensor:
        operands = (input, weight, bias)
        return _convolved(name, rank, operands, stride, padding, dilation, groups, output_padding)

    return made_public(
        name,
        transposed_convolution,
        name,
        f"torch.nn.functional.{name}: each input element times the kernel, added onto the "
        f"output at stride steps; stride, padding, output_padding and dilation an int or a "
        f"tuple of {rank} ints.",
    )


conv_transpose1d = _transposed_convolution(1)
conv_transpose2d = _transposed_convolution(2)
conv_transpose3d = _transposed_convolution(3)
