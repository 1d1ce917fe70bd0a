"""Batch rules: how one traced step acts when some arguments carry a leading batch dimension.

Each rule is ``rule(forward, params, values, batched, ranks, size)``: the step's numpy
function and parameters, its argument values (the batched ones with the batch dimension in
front), which are batched, the number of dimensions each had when traced, and the batch size.
It returns the result with the batch dimension in front. An entry with no rule is replayed
point by point. (A numpy scalar that a step made counts as a 0-d array.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .numerics.product_order import rows_like_torch
from .table import PER_POINT, Array

Forward = Callable[..., Array]  # the step's numpy function, on batched arrays
Params = dict[str, Any]
BatchRule = Callable[[Forward, Params, Sequence[Array], Sequence[bool], Sequence[int], int], Array]


def aligned(value: Array, batched: bool, rank: int, size: int, target: int) -> Array:
    """A batched value reshaped to (B, 1, ..., 1, *shape) so it has ``target`` logical dims."""
    if not batched:
        return value
    return value.reshape((size,) + (1,) * (target - rank) + value.shape[1:])


def with_batch(value: Array, batched: bool, size: int) -> Array:
    """Every value with the batch dimension: an unbatched one broadcast to the batch."""
    return value if batched else np.broadcast_to(value, (size,) + np.shape(value))


def _shifted(axis: int | tuple[int, ...], rank: int) -> int | tuple[int, ...]:
    """An axis (or a tuple of axes) of the traced value, one further right; a 0-d value's
    axes (0 or -1 stand for its only position) become the new last axis of the batch."""
    if rank == 0:
        return tuple(1 for _ in axis) if isinstance(axis, tuple) else 1
    if isinstance(axis, tuple):
        return tuple(a % rank + 1 for a in axis)
    return axis % rank + 1


def elementwise(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    """Element-wise (broadcasting) steps: ranks aligned so the batch dimension stays first."""
    target = max(ranks)
    return forward(
        *[aligned(v, b, r, size, target) for v, b, r in zip(values, batched, ranks)], **params
    )


def mask(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    """A mask: element-wise, or for a reduction's mask, every argument batched and the axis
    shifted."""
    if "axis" not in params:
        return elementwise(forward, params, values, batched, ranks, size)
    target = max(ranks)
    values = [
        with_batch(aligned(v, b, r, size, target), b, size)
        for v, b, r in zip(values, batched, ranks)
    ]
    return forward(*values, fn=params["fn"], axis=_shifted(params["axis"], target))


def reduction(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    """A reduction over ``dim`` (a tuple of axes of the traced value)."""
    dim = tuple(d + 1 for d in params["dim"])
    return forward(values[0], dim=dim, keepdim=params["keepdim"])


def along_dim(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    """An operation along one ``dim`` (softmax): the dim shifted past the batch dimension."""
    if ranks[0] == 0:  # one element along no dimension: apply it to each point alone
        return forward(values[0][:, None], dim=1)[:, 0]
    return forward(values[0], dim=_shifted(params["dim"], ranks[0]))


def transpose(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    return np.swapaxes(values[0], params["dim0"] + 1, params["dim1"] + 1)


def reshape(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    return np.reshape(values[0], (size,) + tuple(params["shape"]))


def expand(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    shape = tuple(params["shape"])
    return np.broadcast_to(aligned(values[0], True, ranks[0], size, len(shape)), (size,) + shape)


def sum_to(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    shape = tuple(params["shape"])
    x = values[0]
    inner = x.shape[1:]
    extra = len(inner) - len(shape)
    axes = tuple(range(1, extra + 1)) + tuple(
        1 + extra + i for i, n in enumerate(shape) if n == 1 and inner[extra + i] != 1
    )
    summed = np.sum(x, axis=axes, keepdims=True) if axes else x
    return summed.reshape((size,) + shape)


def _advanced_lead(index: tuple[Any, ...]) -> int:
    """Where the batch dimension lands in ``x[(slice(None), *index)]``: first, unless the
    index's arrays (with its integers, then advanced too) are apart, when numpy puts their
    broadcast dimensions in front of everything, the batch dimension after them."""
    arrays = [i for i, part in enumerate(index) if isinstance(part, np.ndarray)]
    if not arrays:
        return 0
    advanced = [
        i for i, part in enumerate(index) if isinstance(part, (np.ndarray, int, np.integer))
    ]
    if advanced[-1] - advanced[0] + 1 == len(advanced):
        return 0
    parts = [np.asarray(index[i]) for i in advanced]
    shapes = [(np.count_nonzero(p),) if p.dtype == np.bool_ else p.shape for p in parts]
    return len(np.broadcast_shapes(*shapes))


def getitem(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    index = params["index"]
    return np.moveaxis(values[0][(slice(None), *index)], _advanced_lead(index), 0)


def getitem_backward(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    x, index = values[0], params["index"]
    out = np.zeros((size,) + tuple(params["shape"]), dtype=x.dtype)
    if any(isinstance(part, np.ndarray) for part in index):  # repeated indices add up
        np.add.at(out, (slice(None), *index), np.moveaxis(x, 0, _advanced_lead(index)))
    else:  # each element once: the same sums, 0 + x, without add.at's slow loop
        out[(slice(None), *index)] += x
    return out


def getitem_backward_per_point(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    """getitem_backward's rule where each point keeps its own bits (``PER_POINT``): the values
    written where the index has no arrays, as the step writes them (a -0 stays -0), added
    where it has."""
    x, index = values[0], params["index"]
    if any(isinstance(part, np.ndarray) for part in index):
        return getitem_backward(forward, params, values, batched, ranks, size)
    out = np.zeros((size,) + tuple(params["shape"]), dtype=x.dtype)
    out[(slice(None), *index)] = x
    return out


def join(numpy_join: Callable[..., Array]) -> BatchRule:
    """stack or cat: every value batched, the dim shifted."""

    def rule(
        forward: Forward,
        params: Params,
        values: Sequence[Array],
        batched: Sequence[bool],
        ranks: Sequence[int],
        size: int,
    ) -> Array:
        joined = [with_batch(v, b, size) for v, b in zip(values, batched)]
        return numpy_join(joined, axis=params["dim"] + 1)

    return rule


#: stack's rule, one object, so that a batch plan can tell it (``batch/batched.py`` fills the
#: stacked array value by value rather than calling it)
stack = join(np.stack)


def matmul(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    """PyTorch's matmul rules with a batch dimension in front of either operand."""
    a, b = values
    a_vector, b_vector = ranks[0] == 1, ranks[1] == 1
    # A batch of vectors against a fixed matrix is one matrix product, not a batch of them,
    # made by the op's forward, which rounds a float32 product as torch's does where it knows
    # how (ops/numerics/product_order.py): the replay of a vmap then gives the numbers of the
    # same product taken outside it.
    if b_vector and batched[1] and not batched[0] and ranks[0] == 2:
        return forward(b, a.T)
    if a_vector and batched[0] and not batched[1] and ranks[1] == 2:
        return forward(a, b)
    if list(ranks) == [2, 2] and batched[1] and not batched[0]:  # (m, n) @ (B, n, k)
        size_, n, k = b.shape
        flat = forward(a, b.transpose(1, 0, 2).reshape(n, size_ * k))
        return flat.reshape(a.shape[0], size_, k).transpose(1, 0, 2)  # type: ignore[no-any-return]
    if list(ranks) == [2, 2] and batched[0] and not batched[1]:  # (B, m, n) @ (n, k)
        size_, m, n = a.shape
        return forward(a.reshape(size_ * m, n), b).reshape(size_, m, b.shape[1])
    if a_vector:
        a = a[..., None, :]
    if b_vector:
        b = b[..., None]
    if batched[0] and not a_vector and ranks[0] < ranks[1]:
        a = aligned(a, True, ranks[0], size, ranks[1])
    if batched[1] and not b_vector and ranks[1] < ranks[0]:
        b = aligned(b, True, ranks[1], size, ranks[0])
    if batched[0] and a_vector and not b_vector and ranks[1] > 2:
        a = aligned(a, True, 2, size, ranks[1])
    if batched[1] and b_vector and not a_vector and ranks[0] > 2:
        b = aligned(b, True, 2, size, ranks[0])
    out: Array = np.matmul(a, b)
    if b_vector:
        out = out[..., 0]
    if a_vector:
        out = out[..., 0, :] if not b_vector else out[..., 0]
    return out


def matmul_per_point(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    """matmul's rule where each point keeps the bits of its own product (``PER_POINT``): a
    batch of rows (1 x n matrices) against a fixed matrix at once where every row is rounded
    as its own product is (``product_order.rows_like_torch``), else each point's product."""
    a, b = values
    if batched[0] and not batched[1] and list(ranks) == [2, 2] and a.shape[1] == 1:
        rows = rows_like_torch(a[:, 0], b)
        if rows is not None:
            return rows[:, None]
    points = [
        forward(*[v[i] if flag else v for v, flag in zip(values, batched)]) for i in range(size)
    ]
    return np.stack(points)


def trailing(
    forward: Forward,
    params: Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    """A step of one value that acts on its last dimension alone (view_as_real): the batch
    dimension in front is one more leading dimension."""
    return forward(with_batch(values[0], batched[0], size), **params)


PER_POINT.update(
    {rule: rule for rule in (elementwise, mask, transpose, reshape, expand, getitem, stack)}
)
PER_POINT.update(
    {getitem_backward: getitem_backward_per_point, trailing: trailing, matmul: matmul_per_point}
)
