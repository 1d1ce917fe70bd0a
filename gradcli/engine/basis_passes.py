"""A Jacobian's backward passes, one per basis vector, traced once and replayed.

jacrev's rows and jacfwd's columns (``autograd_functional.py``) take one backward pass per
basis vector ``e_k``, through the same graph: only the cotangent changes. Where no graph is
built (``create_graph`` off), the first pass is traced (``compile.trace_on``) with ``e_0`` as
the tape's one input, and the others replay the tape at ``e_k``: the same numpy calls on the
same arrays as the engine's pass, without its nodes, heap and rule dispatch, so the same
numbers (a 512-wide Hessian's 512 columns took most of a corpus script's minute on the engine).

The pass is replayed only where it is the engine's on every basis vector: no hook, watch,
forward mode or enclosing trace is on, no custom ``autograd.Function`` is in the graph (its
backward is the script's Python, which may print or branch on values), the tape's shapes do
not follow its values, and its replay fits the room the run leaves (``--max-memory``). The
second vector is computed both ways and must agree bit for bit; else, and elsewhere, each
vector takes a pass on the engine as before. The vectors from the second on are replayed a
chunk at a time (``compile.run_batched``'s ``each_alone``: only the batch rules that give each
vector the bits of its own replay, matmul's rounding each row as its own product), one replay
per vector where a step has no such rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .compile import UNREPLAYABLE, NotBatchable, Tape, peak_elements, run_batched, trace_on
from .graph_hooks import HOOKED, PACKED, SAVED_HOOKS
from .levels import reachable
from .meter import fits, metered, zeros
from .tensor import Tensor, _Mode

Pass = Callable[[Tensor], Sequence[Tensor | None]]

#: The most elements a slot of a replay over a chunk of basis vectors holds (the tape's largest
#: slot times the chunk): a chunk's arrays stay in the caches, where one batch of all the
#: vectors of a 512-wide Hessian of Jacobians made arrays of 8 M elements, slower than a replay
#: per vector.
CHUNK_ELEMENTS = 1 << 18


def basis(shape: tuple[int, ...], dtype: np.dtype[Any], k: int) -> Tensor:
    """The ``k``-th basis vector of ``shape`` (flat order), checked and metered."""
    e = zeros(shape, dtype, "a basis vector")
    e.data.reshape(-1)[k] = 1
    return e


def each_basis(
    one: Pass,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    through: Sequence[Tensor | None],
    plain: bool,
) -> Iterator[Sequence[Tensor | None]]:
    """``one(e_k)`` for each basis vector ``e_k`` of ``shape``, in order: ``one`` is a backward
    pass from the tensors ``through``; ``plain`` where it builds no graph (only then is it
    replayed, as the module's text says)."""
    count = int(np.prod(shape))
    if not (plain and count > 2 and _replayable(through)):
        for k in range(count):
            yield one(basis(shape, dtype, k))
        return
    first = basis(shape, dtype, 0)
    found: list[Sequence[Tensor | None]] = []

    def traced() -> list[Tensor]:
        found.append(one(first))
        return [t for t in found[0] if t is not None]

    tape = trace_on([first], traced)
    yield found[0]
    e_1 = basis(shape, dtype, 1)
    second = one(e_1)
    yield second
    together = _together(tape, found[0], shape, dtype)
    if together is not None and _agrees(together[0], second):
        yield from together[1:]
        return
    replay = _replay(tape, found[0])
    if replay is None or not _agrees(_tried(replay, e_1), second):
        for k in range(2, count):
            yield one(basis(shape, dtype, k))
        return
    for k in range(2, count):
        yield replay(basis(shape, dtype, k))


def _replayable(through: Sequence[Tensor | None]) -> bool:
    """Whether nothing but the pass's own rules would run in a pass from ``through``: no
    tracer, forward mode, hooks or nonfinite watch, and no custom Function in the graph."""
    if _Mode.tracer is not None or _Mode.forward_active or _Mode.nonfinite_watch is not None:
        return False
    if HOOKED or PACKED or SAVED_HOOKS:
        return False
    for tensor in reachable(through):
        op = tensor._op
        if op is not None and ("custom_function" in op.extra or tensor._inputs is None):
            return False  # the script's Python; or released: the engine's pass refuses it
    return True


def _replay(
    tape: Tape, first: Sequence[Tensor | None]
) -> Callable[[Tensor], list[Tensor | None]] | None:
    """The pass as a replay of ``tape`` (its results where the traced pass had tensors, None
    where it had None), or None where the tape cannot be replayed."""
    if tape.dynamic or not fits(peak_elements(tape, 1)):
        return None
    where = [value is not None for value in first]

    def replay(e: Tensor) -> list[Tensor | None]:
        with np.errstate(all="ignore"):
            arrays = iter(tape.run(e.data))
        return [metered(Tensor(next(arrays))) if there else None for there in where]

    return replay


def _tried(
    replay: Callable[[Tensor], list[Tensor | None]], e: Tensor
) -> list[Tensor | None] | None:
    """The replay at ``e``; None where numpy refuses a step."""
    try:
        return replay(e)
    except UNREPLAYABLE:
        return None


def _together(
    tape: Tape, first: Sequence[Tensor | None], shape: tuple[int, ...], dtype: np.dtype[Any]
) -> list[list[Tensor | None]] | None:
    """The passes of the basis vectors from the second on, the tape replayed over a chunk of
    them at a time (``compile.run_batched``, each vector's bits as its own replay's); None where
    a step has no such rule, numpy refuses one, or a chunk does not fit the room the run
    leaves."""
    count = int(np.prod(shape))
    chunk = max(1, min(count - 1, CHUNK_ELEMENTS // max(tape.largest, 1)))
    if not fits(peak_elements(tape, chunk)):
        return None
    vectors = zeros((count - 1, *shape), dtype, "the basis vectors")
    vectors.data.reshape(count - 1, count)[np.arange(count - 1), np.arange(1, count)] = 1
    passes: list[list[Tensor | None]] = []
    try:
        with np.errstate(all="ignore"):
            for start in range(0, count - 1, chunk):
                part = vectors.data[start : start + chunk]
                outputs = iter(run_batched(tape, [part], [True], each_alone=True))
                columns = [next(outputs) if value is not None else None for value in first]
                passes.extend(
                    [None if c is None else metered(Tensor(_own(c[k]))) for c in columns]
                    for k in range(len(part))
                )
    except (NotBatchable, *UNREPLAYABLE):
        return None
    return passes


def _own(row: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A pass's array from a row of the batch: a copy where the row is a read-only view (an
    output the same at every vector, broadcast)."""
    return row if row.flags.writeable else row.copy()


def _agrees(replayed: Sequence[Tensor | None] | None, computed: Sequence[Tensor | None]) -> bool:
    """Whether a replay gave what the engine's pass ``computed``, bit for bit (NaN where it
    has NaN, of any payload); not where numpy refused a step (``replayed`` None)."""
    if replayed is None:
        return False
    for ours, theirs in zip(replayed, computed, strict=True):
        if ours is None or theirs is None:
            if ours is not theirs:
                return False
            continue
        a, b = ours.data, theirs.data
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if not np.array_equal(a, b, equal_nan=b.dtype.kind in "fc"):
            return False
        if b.dtype.kind == "f" and not np.array_equal(np.signbit(a), np.signbit(b)):
            return False  # -0 where +0
    return True
