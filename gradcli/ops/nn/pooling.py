"""Pooling (``torch.nn.functional``'s ``max_pool1d``, ``max_pool2d``, ``max_pool3d``,
``avg_pool1d``, ``avg_pool2d``, ``avg_pool3d``), each an entry of the op table: the windows
a convolution reads (``convolution.py``), reduced.

Each setting (kernel_size, stride, padding, dilation) is an int, the same along every spatial
dim, or a tuple of one int per dim, as torch takes it; bad settings get torch's words (a
``ShapeError``, which ``gradcli run`` raises as torch's ``RuntimeError``), which differ from one
function to the next as torch's do. A max is taken by a mask of the first largest element of
each window, as torch's kernel picks it; a 1-D pooling is torch's 2-D one of height 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...base.engine_errors import ShapeError
from ...engine.tensor import Tensor
from .. import primitives as P
from ..arrays import rearranging as RA
from ..reductions import reductions as RD
from ..table import BOOL, INTS, OPT_INTS, TENSOR, Array, Param, made_public
from .composites import _composite
from .convolution import _SPATIAL, Sizes, _listed, _padded, _reach, _whole, _windows
from .layers import _explained, _tensor

_COUNTS = {1: "one", 2: "two", 3: "three"}


def _length_refusal(name: str, rank: int, what: str, given: int) -> str:
    """torch's words for a setting of ``given`` values where ``rank`` are wanted."""
    if name == "max_pool1d":
        form = {
            "stride": "None, an int, list of ints, or tuple of ints",
            "padding": "an int, list of ints, or tuple of ints",
        }.get(what, "an int, list of ints or tuple of ints")
        return f"max_pool1d() {what} must be {form} of size 1 but got size {given}"
    if name == "avg_pool1d":
        return f"avg_pool1d() argument '{what}' should contain one int (got {given})"
    count = _COUNTS[rank]
    if name == "avg_pool3d":
        omitted = "omitted, " if what == "stride" else ""
        return f"avg_pool3d: {what} must be {omitted}a single int, or a tuple of {count} ints"
    form = {
        "stride": f"either be omitted, a single int, or a tuple of {count} ints",
        "dilation": f"be either a single int, or a tuple of {count} ints",
    }.get(what, f"either be a single int, or a tuple of {count} ints")
    return f"{name}: {what} must {form}"


def _setting(value: Any, rank: int, what: str, name: str) -> Sizes:
    """A pooling's ``what`` as one int per spatial dim, refused in torch's words."""
    values = _listed(value)
    if len(values) == 1:
        values *= rank
    if len(values) != rank or not all(_whole(v) for v in values):
        raise ShapeError(_length_refusal(name, rank, what, len(_listed(value))))
    return tuple(int(v) for v in values)


def _by_axis(values: Sizes, prefix: str) -> str:
    """``dH: 2 dW: 1`` as torch's pooling checks name each spatial dim's value."""
    letters = ("T", "H", "W")[3 - len(values) :]
    return " ".join(f"{prefix}{letter}: {v}" for letter, v in zip(letters, values))


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
        self.kernel = _setting(kernel_size, rank, "kernel_size", name)
        omitted = stride is None or (isinstance(stride, (tuple, list)) and not stride)
        self.stride = self.kernel if omitted else _setting(stride, rank, "stride", name)
        self.padding = _setting(padding, rank, "padding", name)
        self.dilation = _setting(dilation, rank, "dilation", name)

    def height_one(self) -> _Pooling:
        """This 1-D pooling as torch computes it: a 2-D one of height 1."""
        flat = _Pooling(self.name, 2, 1, 1, 0, 1, self.ceil_mode)
        flat.kernel, flat.stride = (1, *self.kernel), (1, *self.stride)
        flat.padding, flat.dilation = (0, *self.padding), (1, *self.dilation)
        return flat

    def windows(self, x: Tensor, fill: float) -> tuple[Tensor, bool, Sizes]:
        """(N, C, *counts, *kernel), the input padded with ``fill`` (and ceil_mode's last
        windows reaching past it); whether it came unbatched; the counts."""
        spatial = x.shape[-self.rank :] if x.ndim >= self.rank else ()
        settings = zip(spatial, self.kernel, self.stride, self.padding, self.dilation)
        counts = tuple(_pooled_count(*each, self.ceil_mode) for each in settings)
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
        if self.name == "avg_pool3d" and any(s < k for s, k in zip(spatial, self.kernel)):
            raise ShapeError(
                f"input image ({_by_axis(tuple(spatial), '')}) smaller than kernel size "
                f"({_by_axis(self.kernel, 'k')})"
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


def _largest(pooling: _Pooling, x: Tensor) -> Tensor:
    """The largest element of each window."""
    windows, unbatched, counts = pooling.windows(x, -math.inf)
    flat = RA.reshape(windows, (*windows.shape[: 2 + len(counts)], -1))
    chosen = P.mask(_first_largest, flat)
    return _unbatched(RD.sum(P.where(chosen, flat, P.zeros_like(flat)), -1), unbatched)


def _mean(pooling: _Pooling, x: Tensor, count_include_pad: bool) -> Tensor:
    """The mean of each window, a window reaching past the padding (ceil_mode) divided by what
    it covers of the padded input, or by its count of the input's own elements without
    count_include_pad."""
    windows, unbatched, counts = pooling.windows(x, 0.0)
    rank = len(counts)
    total = RD.sum(windows, tuple(range(-rank, 0)))
    spatial = tuple(x.shape[-rank:])
    reach = [(c - 1) * s + k for c, s, k in zip(counts, pooling.stride, pooling.kernel)]
    within = all(r <= n + 2 * p for r, n, p in zip(reach, spatial, pooling.padding))
    if within and (count_include_pad or not any(pooling.padding)):
        out = P.div(total, float(math.prod(pooling.kernel)))
    else:
        divisors = pooling.divisors(spatial, counts, count_include_pad)
        out = P.div(total, Tensor(divisors.astype(total.dtype)))
    return _unbatched(out, unbatched)


def _max_pool1d_checks(pooling: _Pooling, x: Tensor) -> None:
    """max_pool1d's own checks, in its words, before the 2-D pooling it is."""
    if x.ndim not in (2, 3):
        raise ShapeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(x.shape)}"
        )
    (k,), (s,), (p,), (d,) = pooling.kernel, pooling.stride, pooling.padding, pooling.dilation
    for what, value, bad in (
        ("kernel_size", k, k <= 0),
        ("stride", s, s <= 0),
        ("padding", p, p < 0),
    ):
        if bad:
            must = "be non-negative" if what == "padding" else "be greater than zero"
            raise ShapeError(f"max_pool1d() {what} must {must}, but got {value}")
    if p > k // 2:
        raise ShapeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={p} and kernel_size={k}"
        )
    if d <= 0:
        raise ShapeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    count = _pooled_count(x.shape[-1], k, s, p, d, pooling.ceil_mode)
    if count < 1:
        raise ShapeError(f"max_pool1d() Invalid computed output size: {count}")


def _height_one(x: Tensor, pooled: Callable[[Tensor], Tensor]) -> Tensor:
    """A 1-D pooling of ``x`` (N, C, L) or (C, L): ``pooled`` of it as (N, C, 1, L)."""
    out = pooled(RA.reshape(x, (*x.shape[:-1], 1, x.shape[-1])))
    return RA.reshape(out, (*out.shape[:-2], out.shape[-1]))


def _max_pooling(rank: int) -> Callable[..., Tensor]:
    """Declare max_pool1d, 2d or 3d and make its call."""
    name = f"max_pool{rank}d"
    _composite(
        name,
        f"the largest element of each kernel_size window of (N, C, {_SPATIAL[rank]}) "
        "(kernel_size, stride, padding, dilation: an int or one per dim)",
        (
            Param("input", TENSOR),
            Param("kernel_size", INTS),
            Param("stride", OPT_INTS, None),
            Param("padding", INTS, 0),
            Param("dilation", INTS, 1),
            Param("ceil_mode", BOOL, False),
        ),
        backward_name="SqueezeBackward1" if rank == 1 else f"MaxPool{rank}DWithIndicesBackward0",
        symbolic="no symbolic form here: the largest element of each window is a choice",
        explain=_explained(
            input="{d_input} at the first largest element of each window (row-major order)"
        ),
        kink=(
            "at a tie the whole gradient goes to the first largest element of the window (in "
            "row-major order), as torch's kernel picks it; padding is -inf, never picked"
        ),
    )

    def max_pool(
        input: Any,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        ceil_mode: bool = False,
    ) -> Tensor:
        pooling = _Pooling(name, rank, kernel_size, stride, padding, dilation, ceil_mode)
        x = _tensor(input)
        if rank > 1:
            return _largest(pooling, x)
        _max_pool1d_checks(pooling, x)
        return _height_one(x, lambda flat: _largest(pooling.height_one(), flat))

    return made_public(
        name,
        max_pool,
        name,
        f"torch.nn.functional.{name}: kernel_size, stride, padding and dilation an int or a "
        f"tuple of {rank} ints (stride None: kernel_size; ceil_mode: the output size rounded "
        "up, the last windows reaching past the input).",
    )


max_pool1d = _max_pooling(1)
max_pool2d = _max_pooling(2)
max_pool3d = _max_pooling(3)


def _average_pooling(rank: int) -> Callable[..., Tensor]:
    """Declare avg_pool1d, 2d or 3d and make its call."""
    name = f"avg_pool{rank}d"
    _composite(
        name,
        f"the mean of each kernel_size window of (N, C, {_SPATIAL[rank]}) (kernel_size, "
        "stride, padding: an int or one per dim)",
        (
            Param("input", TENSOR),
            Param("kernel_size", INTS),
            Param("stride", OPT_INTS, None),
            Param("padding", INTS, 0),
            Param("ceil_mode", BOOL, False),
            Param("count_include_pad", BOOL, True),
        ),
        backward_name="SqueezeBackward1" if rank == 1 else f"AvgPool{rank}DBackward0",
        symbolic="no symbolic form here: each output is a mean over a window",
        explain=_explained(
            input="the mean of {d_input} over each window (its padding zeros counted unless "
            "count_include_pad=False)"
        ),
        kink="smooth; count_include_pad=False divides by the elements of the input alone",
    )

    def avg_pool(
        input: Any,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> Tensor:
        pooling = _Pooling(name, rank, kernel_size, stride, padding, 1, ceil_mode)
        x = _tensor(input)
        if rank > 1:
            return _mean(pooling, x, count_include_pad)
        if x.ndim not in (2, 3):
            raise ShapeError(
                f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument "
                "#1 'self' (while checking arguments for avg_pool1d)"
            )
        return _height_one(x, lambda flat: _mean(pooling.height_one(), flat, count_include_pad))

    return made_public(
        name,
        avg_pool,
        name,
        f"torch.nn.functional.{name}: kernel_size, stride and padding an int or a tuple of "
        f"{rank} ints (stride None: kernel_size; ceil_mode: the output size rounded up, a last "
        "window reaching past the padding divided by what it covers of the padded input).",
    )


avg_pool1d = _average_pooling(1)
avg_pool2d = _average_pooling(2)
avg_pool3d = _average_pooling(3)
