"""The engine's global switches: whether graphs are recorded, whether forward mode runs, the
default floating dtype and the complex one beside it, the nonfinite watch; read by every
operation (``tensor.apply``)."""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..ops.table import Op
from .graph_hooks import SAVED_HOOKS
from .sizes import METER

if TYPE_CHECKING:
    from .tensor import Node, Tensor

DEFAULT_DTYPE = np.dtype(np.float64)


class _Modes:
    """Global switches: whether graphs are recorded, whether forward mode is running.

    One instance, ``_Mode``, with slots: every operation reads it, and an instance's slot is
    read faster than a class attribute."""

    __slots__ = (
        "grad_enabled",
        "_forward_active",
        "nonfinite_watch",
        "_tracer",
        "watching",
        "default_float",
        "tangent_holders",
    )

    def __init__(self) -> None:
        self.grad_enabled = True
        self._forward_active = False
        # nodes whose reverse rule, and NonfiniteTangents of forward rules, first made a nan
        # or inf
        self.nonfinite_watch: list[Node | NonfiniteTangent] | None = None
        self._tracer: Any = None
        # whether a tracer, forward mode or a meter (sizes.METER) is on: what apply reads
        self.watching = False
        # torch's default floating dtype: what integers and booleans alone compute in (i / 2)
        self.default_float: np.dtype[Any] = DEFAULT_DTYPE
        # inside forward_ad's dual level: (weak references to) the tensors given a tangent,
        # whose tangents the level's end takes away, as torch's
        self.tangent_holders: list[weakref.ref[Tensor]] | None = None

    @property
    def tracer(self) -> Any:
        """What records every primitive application while compiling (None: nothing)."""
        return self._tracer

    @tracer.setter
    def tracer(self, tracer: Any) -> None:
        self._tracer = tracer
        self.rewatch()

    @property
    def forward_active(self) -> bool:
        """Whether forward mode runs: operations compute their outputs' tangents."""
        return self._forward_active

    @forward_active.setter
    def forward_active(self, active: bool) -> None:
        self._forward_active = active
        self.rewatch()

    def rewatch(self) -> None:
        """``watching``: a tracer, forward mode, a saved_tensors_hooks block (graph_hooks) or a
        run's meter (meter.py)."""
        self.watching = (
            self._tracer is not None
            or self._forward_active
            or bool(SAVED_HOOKS)
            or METER[0] is not None
        )


_Mode = _Modes()


@contextmanager
def set_grad_enabled(enabled: bool) -> Iterator[None]:
    """Record graphs (True) or not (False) inside the block."""
    previous = _Mode.grad_enabled
    _Mode.grad_enabled = enabled
    try:
        yield
    finally:
        _Mode.grad_enabled = previous


@contextmanager
def default_dtype(dtype: npt.DTypeLike) -> Iterator[None]:
    """Inside the block, integers and booleans alone compute in ``dtype`` (torch's
    ``set_default_dtype``): ``gradcli run`` computes in float32, as torch does."""
    previous = _Mode.default_float
    _Mode.default_float = np.dtype(dtype)
    try:
        yield
    finally:
        _Mode.default_float = previous


def complex_of(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """torch's complex dtype for a number ``1j`` beside a tensor of ``dtype``: complex64 beside
    float32, complex128 beside float64, the default complex dtype (the default floating
    dtype's) beside integers and booleans; a complex dtype is itself."""
    if dtype.kind == "c":
        return dtype
    floating = dtype if dtype.kind == "f" else _Mode.default_float
    return np.dtype(np.complex64) if floating.itemsize <= 4 else np.dtype(np.complex128)


def default_floating() -> np.dtype[Any]:
    """The default floating dtype (float64; float32 in ``gradcli run``, as torch's)."""
    return _Mode.default_float


def default_complex() -> np.dtype[Any]:
    """The default complex dtype: the default floating dtype's (complex64 in ``gradcli run``)."""
    return complex_of(_Mode.default_float)


def traced_constant(tensor: Tensor) -> bool:
    """Whether a program is being traced (``compile.trace``) and ``tensor`` is one of its
    constants there: a value no step of the tape makes nor any input gives, the same at every
    replay (a number of the program)."""
    tracer = _Mode._tracer
    return tracer is not None and tracer.is_constant(tensor)


def is_grad_enabled() -> bool:
    """Whether graphs are recorded here (``torch.is_grad_enabled()``)."""
    return _Mode.grad_enabled


def no_grad() -> AbstractContextManager[None]:
    """Context manager that stops graph recording, like ``torch.no_grad()``."""
    return set_grad_enabled(False)


@contextmanager
def watch_nonfinite() -> Iterator[list[Node | NonfiniteTangent]]:
    """Collect, in a list, the nodes whose reverse rule turned finite values into nan or inf,
    and a ``NonfiniteTangent`` for each forward rule that did so to a tangent."""
    previous = _Mode.nonfinite_watch
    found: list[Node | NonfiniteTangent] = []
    _Mode.nonfinite_watch = found
    try:
        yield found
    finally:
        _Mode.nonfinite_watch = previous


#: The most elements of a real array that ``all_finite`` reads as Python floats: numpy's
#: ``isfinite(array).all()`` costs about 2 µs a call whatever the size (the reduction goes
#: through numpy's Python wrapper), ten times the floats' test on a few elements.
FEW_ELEMENTS = 16


def all_finite(array: np.ndarray) -> bool:
    """Whether ``array`` holds no nan or infinity (True for a dtype that holds neither)."""
    kind = array.dtype.kind
    if kind == "f" and array.size <= FEW_ELEMENTS and array.itemsize <= 8:  # exact as floats
        if array.ndim == 0:
            return math.isfinite(array)
        return all(map(math.isfinite, array.ravel().tolist()))
    return kind not in "fc" or bool(np.isfinite(array).all())


def watched_nonfinite() -> list[Node | NonfiniteTangent] | None:
    """The list the innermost ``watch_nonfinite`` block collects into (None outside one)."""
    return _Mode.nonfinite_watch


class NonfiniteTangent:
    """A forward rule that turned finite inputs and tangents into a nan or inf tangent.

    ``origin`` is free for the caller: gradcli's programs put the statement there."""

    __slots__ = ("prim", "origin")

    def __init__(self, prim: Op) -> None:
        self.prim = prim
        self.origin: Any = None


@contextmanager
def _forward_mode(active: bool) -> Iterator[None]:
    previous = _Mode.forward_active
    _Mode.forward_active = active
    try:
        yield
    finally:
        _Mode.forward_active = previous


# -- what the nonfinite watch records (tensor.apply and the reverse pass call these) ----------


def watch_tangent(
    prim: Op, tensors: Sequence[Tensor], tangents: Sequence[Tensor | None], tangent: Tensor
) -> None:
    """Put a ``NonfiniteTangent`` of ``prim`` on the watch list if its forward rule made the
    first nan or inf (finite operands and tangents, a nonfinite tangent)."""
    if all_finite(tangent.data) or not all(all_finite(t.data) for t in tensors):
        return
    watch = _Mode.nonfinite_watch
    if watch is not None and all(t is None or all_finite(t.data) for t in tangents):
        watch.append(NonfiniteTangent(prim))


def watch_rule(
    watch: list[Node | NonfiniteTangent],
    output: Tensor,
    cotangent: Tensor,
    inputs: Sequence[Tensor],
    input_cotangents: Sequence[Tensor | None],
) -> None:
    """Put the node of ``output`` on the watch list if its rule made the first nan or inf
    (its results read first: most rules make none, and then nothing else is read)."""
    for c in input_cotangents:
        if c is not None and not all_finite(c.data):
            break
    else:
        return
    if not all_finite(cotangent.data) or not all(all_finite(t.data) for t in inputs):
        return
    node = output.grad_fn
    assert node is not None  # (an operation made output)
    if node not in watch:
        watch.append(node)
