"""How large the value of an operation will be, known before it is allocated.

Every value a primitive makes is checked against ``--max-elements`` and ``--max-memory`` before
its forward runs (``tensor.apply``), from its entry's ``size`` rule: the number of elements the
forward will allocate, given the arrays and the parameters the forward receives. An entry
without a rule makes at most the broadcast of its operands (element-wise operations), which
``predicted`` works out. A view (``expand``, a transpose) allocates nothing and its rule says so;
what is later made from it is charged by the operation that makes it. The sweep test
(tests/engine/test_engine_sweep.py) holds every entry to its rule over the test table's rows.

The check itself is one comparison with ``ROOM``; only a value above it is looked at closely
(``refuse_over``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base import bounds
from ..base.engine_errors import SizeError
from ..ops.table import Array, Op

# The most elements a value the engine makes may have without a closer look: the least of
# --max-elements, the budget alone and what an engaged run's tally leaves, at the widest
# element's bytes. ``bounds`` keeps it up to date whenever one of those changes, once it is
# handed over (``bounds.keep_room``; -1: not yet), so that the check of each value is one
# comparison.
ROOM = [-1]
# What is told of every value an operation makes, after it is made (None: nothing): a run's
# meter (``meter.py``), which counts the value against the run's tally while it lives
METER: list[Callable[[Any], None] | None] = [None]


def broadcast_count(arrays: Sequence[Array]) -> int:
    """The elements of the broadcast of ``arrays``; where they do not broadcast, the sum of
    their elements (the operation itself then says what does not fit)."""
    if len(arrays) == 1:
        return int(arrays[0].size)
    shapes = {a.shape for a in arrays}
    if len(shapes) == 1:  # one shape (numpy's broadcast_shapes costs microseconds)
        return math.prod(shapes.pop())
    try:
        return math.prod(np.broadcast_shapes(*(a.shape for a in arrays)))
    except (ValueError, RuntimeError):
        return sum(int(a.size) for a in arrays)


def predicted(prim: Op, arrays: Sequence[Array], params: dict[str, Any]) -> int:
    """The elements ``prim``'s forward will allocate for ``arrays`` and ``params``: its rule's,
    else the broadcast of its operands, or of the ``shape`` it is given where it has one (a
    reverse rule's scatter into the input's shape)."""
    rule = prim.size
    if rule is not None:
        return int(rule(*arrays, **params))
    count = broadcast_count(arrays)
    shape = params.get("shape")
    return count if shape is None else max(count, math.prod(shape))


def indexed_count(shape: Sequence[int], index: Any) -> int:
    """The elements of ``x[index]`` for an ``x`` of ``shape``, worked out without indexing:
    integers drop a dim, slices keep what they select, None adds one, integer arrays (and
    boolean masks, as their selected elements) broadcast together."""
    items = index if isinstance(index, tuple) else (index,)
    if len(items) == 1 and type(items[0]) is int and shape:  # x[0]: the rest of the dims
        return math.prod(shape[1:])
    used = sum(
        (i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1)
        for i in items
        if i is not None and i is not Ellipsis
    )
    count, arrays, dim = 1, [], 0
    for i in items:
        if i is None:
            continue
        if i is Ellipsis:
            for n in shape[dim : dim + len(shape) - used]:
                count *= n
            dim += len(shape) - used
        elif isinstance(i, slice):
            count *= len(range(*i.indices(shape[dim]))) if dim < len(shape) else 1
            dim += 1
        elif isinstance(i, np.ndarray) and i.dtype == bool:
            arrays.append((int(np.count_nonzero(i)),))
            dim += i.ndim
        elif isinstance(i, (np.ndarray, list)):
            arrays.append(np.shape(i))
            dim += 1
        else:  # an integer
            dim += 1
    for n in shape[dim:]:
        count *= n
    if arrays:
        try:
            count *= math.prod(np.broadcast_shapes(*arrays))
        except ValueError:
            count *= max(math.prod(a) for a in arrays)
    return count


def stored(array: Array) -> int:
    """The elements ``array`` holds in memory: a broadcast view (zero strides) holds only
    those of the array it was made from."""
    if 0 not in array.strides or array.size == 0:
        return int(array.size)
    return math.prod(n for n, step in zip(array.shape, array.strides) if step != 0)


def compact(array: Array) -> Array:
    """``array`` with each axis a broadcast repeats (a stride of 0) cut to length 1: the
    elements it holds, each once, which broadcast back to ``array``; so that a scan of them
    (is any infinite?) or a conversion reads what is stored, and does not make it whole."""
    if 0 not in array.strides:  # (most values: nothing repeated, without the list's frame)
        return array
    repeated = [step == 0 and n > 1 for n, step in zip(array.shape, array.strides)]
    if not any(repeated):
        return array
    return array[tuple(slice(0, 1) if r else slice(None) for r in repeated)]


def refuse_over(
    name: str, count: int, arrays: Sequence[Array] = (), what: str | None = None
) -> None:
    """Raise ``SizeError`` when a value of ``count`` elements, made by ``name`` from ``arrays``,
    would pass --max-elements, the budget, or what the engaged run's tally leaves. Called
    where ``count`` is above ``ROOM``, and by code that allocates outside a primitive
    (a constant of a composite). ``what`` names the value where "the result of NAME" does
    not."""
    if ROOM[0] < 0:
        bounds.keep_room(ROOM)
    if count <= ROOM[0]:
        return
    itemsize = max([8, *(a.dtype.itemsize for a in arrays)])
    count = int(count)
    size = count * itemsize
    elements = bounds.limits().max_elements
    memory = bounds.budget().max_memory
    tally = bounds.engaged()
    what = what or f"the result of {name}"
    if count > elements:
        raise SizeError(
            f"{what} would have {count:,} elements; the limit is {elements:,}",
            hint=f"raise it with --max-elements {bounds.round_up(count)}, or make the values "
            "smaller",
        )
    if size > memory:
        raise SizeError(
            f"{what} would need {bounds.format_bytes(size)} of memory; the budget is "
            f"{bounds.format_bytes(memory)} (--max-memory)",
            hint=f"raise it with --max-memory {bounds.suggest(size)}, or make the values smaller",
        )
    if tally is not None and size > tally.left():
        estimate = (tally.held + size) * bounds.FACTOR
        raise SizeError(
            f"with {what} ({count:,} elements), the run would need at least "
            f"{bounds.format_bytes(estimate)} of memory (its values reach "
            f"{bounds.format_bytes(tally.held + size)}, kept for the backward pass, times "
            f"{bounds.FACTOR:g} for the gradients and temporaries); the budget is "
            f"{bounds.format_bytes(memory)} (--max-memory)",
            hint=f"raise it with --max-memory {bounds.suggest(estimate)}"
            + (" or more (the run was still making values)" if tally.live else "")
            + ", or make the values smaller",
        )


def check(prim: Op, arrays: Sequence[Array], params: dict[str, Any]) -> None:
    """Raise ``SizeError`` when the value ``prim`` would make of ``arrays`` is too large."""
    count = predicted(prim, arrays, params)
    if count > ROOM[0]:
        refuse_over(prim.name, count, arrays)


def full(shape: Sequence[int], value: Any, dtype: Any, name: str) -> Array:
    """``np.full(shape, value, dtype)``, checked first: the constants composites make
    (padding, identities) of a size their parameters choose."""
    refuse_over(name, math.prod(shape))
    return np.full(tuple(shape), value, dtype=dtype)
