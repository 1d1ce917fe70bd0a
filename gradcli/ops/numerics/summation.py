"""torch's order of adding floats on the CPU, so that a float32 sum (and a mean, a loss) ends in
torch's last bits, not only near them.

Floating-point addition is not associative: numpy's pairwise sum and torch's kernel round in
other places, and a float32 ``loss.item()`` printed after some steps of a training loop shows
the difference. torch 2.13's CPU sum (one thread; the facts below were read from its public
kernel and checked against it bit for bit, see tests/engine/test_engine_summation.py):

- A reduction over the memory-innermost dimension (each output sums a contiguous run of
  ``n`` elements) with ``n`` at least a vector's width (``LANES``: 8 float32s or 4 float64s,
  AVX2) adds vectors lane by lane: the run's whole vectors, taken four at a time (``ILP``) as
  rows of a cascade (``_cascade``), the four partial vectors added in order, then the
  leftover elements one by one from 0, then the lanes in order. With ``n`` under a vector's
  width the elements are taken four at a time as scalars (``_interleaved``).
- A reduction over an outer dimension (the outputs contiguous) adds down the rows: columns
  in blocks of four vectors through the cascade, then single vectors four rows at a time
  (``_interleaved``), then the leftover columns likewise as scalars; under a vector's width of
  columns, blocks of four scalar columns through the cascade and the rest interleaved.
- The cascade (``_cascade``): rows are added one after another into a first accumulator; each
  block of ``2**p`` rows (``p = max(4, ceil(log2 rows) // 4)``) is flushed into a second
  accumulator, every ``2**p`` of those into a third, and so on over four levels, the levels
  added together at the end: the first, then the second, third and fourth into it.

``sum_like_torch`` follows that order where the array's layout lets it be read off (its
memory dense, the reduced dimensions all innermost or one block in the middle, no broadcast
dimension); otherwise numpy's sum, whose result differs from torch's in the last bits at most.
Everything is numpy on whole blocks: the Python loops run over a block's rows (16 to a few
dozen) and the cascade's levels, never over elements; still, it costs several times numpy's
pairwise sum (a 64 x 512 column sum about 0.12 ms against 0.01 ms), so it is a mode:
``torch_order()`` turns it on where torch's last bits are the point (``gradcli run``, whose
scripts print what torch prints); elsewhere (the commands, the library) a sum is numpy's.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}
ILP = 4  # vectors (or scalars) taken together as one row of the cascade
_LEVELS = 4
_IN_FORCE = [False]  # torch_order() sets it
_add_reduce: Any = np.add.reduce  # (typed loosely: numpy's overloads want keepdims literal)


@contextlib.contextmanager
def torch_order(on: bool = True) -> Iterator[None]:
    """Sums add in torch's order (``on``) or numpy's within the block."""
    previous, _IN_FORCE[0] = _IN_FORCE[0], on
    try:
        yield
    finally:
        _IN_FORCE[0] = previous


def in_force() -> bool:
    """Whether torch's order is on (``torch_order()``): the matrix product reads it too."""
    return _IN_FORCE[0]


def sum_like_torch(x: Array, dim: tuple[int, ...], keepdim: bool = False) -> Array:
    """``np.sum(x, dim, keepdims=keepdim)`` added in torch's order where it can be read off."""
    lanes = LANES.get(x.dtype) if _IN_FORCE[0] else None
    if lanes is None or x.size == 0:
        # np.sum's own reduction without its Python wrapper (about 100 bytecodes a call, and
        # a sum runs several times an eager step): the same ufunc call, so the same bits;
        # numpy reads negative dims itself
        return np.asarray(_add_reduce(x, axis=dim, keepdims=keepdim))
    axis = tuple(d % x.ndim for d in dim) if x.ndim else dim
    ordered = _ordered(x, axis, lanes)
    if ordered is None:
        return np.asarray(_add_reduce(x, axis=axis, keepdims=keepdim))
    kept = [n for i, n in enumerate(x.shape) if i not in axis]
    if keepdim:
        kept = [1 if i in axis else n for i, n in enumerate(x.shape)]
    return ordered.reshape(kept)


def _ordered(x: Array, axis: tuple[int, ...], lanes: int) -> Array | None:
    """The sums over ``axis``, flat in the order of the kept dimensions, or None where the
    layout is not one whose order this module knows."""
    if not axis:
        return np.array(x).reshape(-1)
    if len(axis) == x.ndim and x.flags.c_contiguous:  # a whole sum of dense memory: one row
        return _inner(x.reshape(1, -1), lanes)
    if any(s == 0 for s, n in zip(x.strides, x.shape) if n > 1):
        return None  # a broadcast view
    # the dimensions of size > 1 in memory order, outermost first
    dims = sorted((d for d in range(x.ndim) if x.shape[d] > 1), key=lambda d: -abs(x.strides[d]))
    memory = np.transpose(x, dims + [d for d in range(x.ndim) if x.shape[d] == 1])
    if not memory.flags.c_contiguous or any(x.strides[d] < 0 for d in dims):
        return None
    reduced = [d in axis for d in dims]
    if not any(reduced):
        return _kept_order(x, axis, memory.reshape(-1, 1)[:, 0], dims)
    first = reduced.index(True)
    last = len(reduced) - 1 - reduced[::-1].index(True)
    if not all(reduced[first : last + 1]):
        return None  # reduced dimensions apart in memory: TensorIterator's other loops
    outer = math.prod(x.shape[d] for d in dims[:first])
    size = math.prod(x.shape[d] for d in dims[first : last + 1])
    inner = math.prod(x.shape[d] for d in dims[last + 1 :])
    block = memory.reshape(outer, size, inner)
    sums = _inner(block[:, :, 0], lanes) if inner == 1 else _outer(block, lanes)
    kept = [d for d in dims if d not in axis]
    return _kept_order(x, axis, sums.reshape(-1), kept)


def _kept_order(x: Array, axis: tuple[int, ...], flat: Array, kept_memory: list[int]) -> Array:
    """``flat`` (the sums in the memory order of the kept dimensions) in their own order."""
    kept = [d for d in range(x.ndim) if d not in axis and x.shape[d] > 1]
    if kept == kept_memory or len(kept) < 2:
        return flat
    shaped = flat.reshape([x.shape[d] for d in kept_memory])
    return np.transpose(shaped, [kept_memory.index(d) for d in kept]).reshape(-1)


def _inner(rows: Array, lanes: int) -> Array:
    """The sum of each row of ``rows`` (batch, n), its elements contiguous."""
    batch, n = rows.shape
    if n < lanes:
        return _interleaved(rows[:, :, None])[:, 0]
    whole = n // lanes
    vectors = rows[:, : whole * lanes].reshape(batch, whole, lanes)
    partial = _interleaved(vectors)  # (batch, lanes)
    if batch == 1:  # one sum: its last steps on numpy's scalars, far cheaper than arrays
        one = rows.dtype.type(0)
        for value in rows[0, whole * lanes :]:
            one = one + value
        for value in partial[0]:
            one = one + value
        return np.array([one], rows.dtype)
    total = np.zeros(batch, rows.dtype)
    for k in range(whole * lanes, n):
        total = total + rows[:, k]
    for k in range(lanes):
        total = total + partial[:, k]
    return total


def _outer(block: Array, lanes: int) -> Array:
    """The sums down the rows of ``block`` (batch, rows, columns), its columns contiguous."""
    batch, _, columns = block.shape
    out = np.empty((batch, columns), block.dtype)
    j = 0
    if columns < lanes:
        j = _blocks(block, out, 0, ILP, _cascade)  # four scalar columns at a time
    else:
        j = _blocks(block, out, 0, ILP * lanes, _cascade)  # four vectors at a time
        j = _blocks(block, out, j, lanes, _interleaved)  # then single vectors
    if j < columns:
        out[:, j:] = _interleaved(block[:, :, j:])
    return out


def _blocks(block: Array, out: Array, start: int, width: int, summed: Any) -> int:
    """Sum the whole blocks of ``width`` columns from ``start`` with ``summed``, all blocks at
    once (each block is summed alone, so they are stacked as a batch); where they end."""
    batch, rows, columns = block.shape
    count = (columns - start) // width
    if count:
        end = start + count * width
        stacked = block[:, :, start:end].reshape(batch, rows, count, width)
        stacked = stacked.transpose(0, 2, 1, 3).reshape(batch * count, rows, width)
        out[:, start:end] = summed(stacked).reshape(batch, count * width)
        return int(end)
    return start


def _interleaved(rows: Array) -> Array:
    """torch's row_sum: ``rows`` (batch, n, width) summed over n, four rows at a time through
    the cascade, the leftover rows into the first of the four, the four then added in order."""
    batch, n, width = rows.shape
    groups = n // ILP
    if groups:
        parts = _cascade(rows[:, : groups * ILP].reshape(batch, groups, ILP * width))
        parts = parts.reshape(batch, ILP, width)
        first = parts[:, 0]
    else:
        parts = None
        first = np.zeros((batch, width), rows.dtype)
    for k in range(groups * ILP, n):
        first = first + rows[:, k]
    if parts is not None:
        for k in range(1, ILP):
            first = first + parts[:, k]
    return first


def _cascade(rows: Array) -> Array:
    """torch's multi_row_sum: ``rows`` (batch, n, width) summed over n through four levels of
    accumulators (see the module docstring)."""
    batch, n, width = rows.shape
    power = max(4, math.ceil(math.log2(n)) // _LEVELS) if n > 1 else 4
    step = 1 << power
    blocks = n // step
    # level 0: each whole block of `step` rows added in order from zero; the tail likewise
    sums = _sequential(rows[:, : blocks * step].reshape(batch, blocks, step, width))
    tail = _sequential(rows[:, blocks * step :][:, None])[:, 0]
    leftovers = []
    for _ in range(1, _LEVELS - 1):
        # the next level adds `step` flushes of this one, then flushes: what is left over
        # (fewer than `step`) stays in this level's accumulator until the end
        whole = sums.shape[1] // step
        leftovers.append(_sequential(sums[:, whole * step :][:, None])[:, 0])
        sums = _sequential(sums[:, : whole * step].reshape(batch, whole, step, width))
    leftovers.append(_sequential(sums[:, None])[:, 0])  # the last level never flushes
    total = tail
    for level in leftovers:
        total = total + level
    return total


def _sequential(groups: Array) -> Array:
    """``groups`` (batch, count, size, width) summed over ``size`` one after another, from 0.

    numpy's reduction over an axis that is not the innermost adds row after row, in order
    (its pairwise summation is for the innermost axis only), so with rows two or more wide
    one call does it; adding 0 turns a sum of negative zeros into torch's +0, since torch's
    accumulators start at 0 (tests/engine/test_engine_summation.py holds it to torch's bits).
    Rows one wide would be the innermost axis: those are added in a loop."""
    if groups.shape[3] > 1:
        return np.asarray(np.add.reduce(groups, axis=2) + groups.dtype.type(0))
    total = np.zeros(groups.shape[:2] + groups.shape[3:], groups.dtype)
    for k in range(groups.shape[2]):
        total = total + groups[:, :, k]
    return total
