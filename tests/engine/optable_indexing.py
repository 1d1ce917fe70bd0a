"""The test table's strategies and calls for indexing by tensors (gradcli/ops/arrays/indexing.py):
gather, take_along_dim, index_select, scatter, scatter_add, index_add, masked_select, the
``index`` and ``index_put`` primitives, and the integer results one_hot, nonzero, argwhere,
and ``to`` an integer dtype (gradcli/ops/elementwise/dtypes.py).

An index is a parameter of the case (a numpy int64 array, or a boolean mask), given to
gradcli as a tensor and to torch as a LongTensor; only the values indexed are differentiable
inputs."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradcli as gc
from gradcli.ops.arrays.indexing import SLOT, indexed, put

MAX_SIDE = 3
Spec = tuple[tuple[tuple[int, ...], ...], dict[str, Any]]


def _torch() -> Any:
    return importlib.import_module("torch")


def _shape(draw: Any, min_dims: int = 1) -> tuple[int, ...]:
    return draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=MAX_SIDE))


def _values(draw: Any, shape: tuple[int, ...], below: int) -> np.ndarray:
    return draw(hnp.arrays(np.int64, shape, elements=st.integers(0, below - 1)))


def _dim(draw: Any, ndim: int) -> int:
    n = max(ndim, 1)
    return draw(st.integers(-n, n - 1))


def _index_shape(draw: Any, shape: tuple[int, ...], dim: int) -> tuple[int, ...]:
    """gather's index: any length along dim, no longer than input elsewhere."""
    return tuple(
        draw(st.integers(1, MAX_SIDE)) if d == dim % len(shape) else draw(st.integers(1, n))
        for d, n in enumerate(shape)
    )


# -- gather, take_along_dim, index_select ------------------------------------------------------


@st.composite
def gather_spec(draw: Any) -> Spec:
    shape = _shape(draw, min_dims=0)
    if not shape:
        return ((),), {"dim": draw(st.sampled_from([0, -1])), "index": np.array(0)}
    dim = _dim(draw, len(shape))
    index = _values(draw, _index_shape(draw, shape, dim), shape[dim])
    return (shape,), {"dim": dim, "index": index}


def gather(torch: bool = False) -> Any:
    def call(x: Any, dim: int, index: np.ndarray) -> Any:
        if torch:
            return _torch().gather(x, dim, _torch().from_numpy(index))
        return gc.gather(x, dim, gc.tensor(index))

    return call


@st.composite
def take_along_dim_spec(draw: Any) -> Spec:
    shape = _shape(draw)
    if draw(st.booleans()):
        size = int(np.prod(shape))
        index = _values(draw, _shape(draw, min_dims=0), size)
        return (shape,), {"indices": index, "dim": None}
    dim = _dim(draw, len(shape))
    index_shape = tuple(
        draw(st.integers(1, MAX_SIDE)) if d == dim % len(shape) else draw(st.sampled_from([1, n]))
        for d, n in enumerate(shape)
    )
    return (shape,), {"indices": _values(draw, index_shape, shape[dim]), "dim": dim}


def take_along_dim(torch: bool = False) -> Any:
    def call(x: Any, indices: np.ndarray, dim: int | None) -> Any:
        if torch:
            return _torch().take_along_dim(x, _torch().from_numpy(indices), dim)
        return gc.take_along_dim(x, gc.tensor(indices), dim)

    return call


@st.composite
def index_select_spec(draw: Any) -> Spec:
    shape = _shape(draw)
    dim = _dim(draw, len(shape))
    length = draw(st.integers(1, 4))
    return (shape,), {"dim": dim, "index": _values(draw, (length,), shape[dim])}


def index_select(torch: bool = False) -> Any:
    def call(x: Any, dim: int, index: np.ndarray) -> Any:
        if torch:
            return _torch().index_select(x, dim, _torch().from_numpy(index))
        return gc.index_select(x, dim, gc.tensor(index))

    return call


# -- scatter, scatter_add, index_add ------------------------------------------------------------


@st.composite
def scatter_spec(draw: Any, unique: bool = False) -> Spec:
    """input, src and index of scatter_add (scatter: no two writes to one position, where
    torch's gradient of src is not the derivative of the forward)."""
    shape = _shape(draw)
    dim = _dim(draw, len(shape))
    d = dim % len(shape)
    index_shape = list(_index_shape(draw, shape, dim))
    if unique:
        index_shape[d] = min(index_shape[d], shape[d])
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        columns = np.moveaxis(np.zeros(index_shape, dtype=np.int64), d, -1)
        flat = columns.reshape(-1, index_shape[d])
        for row in flat:
            row[:] = rng.permutation(shape[d])[: index_shape[d]]
        index = np.moveaxis(flat.reshape(columns.shape), -1, d).copy()
    else:
        index = _values(draw, tuple(index_shape), shape[d])
    # src as large as index: torch's backward refuses a larger src (its gradient of src has
    # the shape of index); gradcli's cuts src to index's shape (tests/engine/test_engine_indexing)
    return (shape, tuple(index_shape)), {"dim": dim, "index": index}


def scatter(name: str, torch: bool = False) -> Any:
    def call(x: Any, src: Any, dim: int, index: np.ndarray) -> Any:
        if torch:
            return getattr(_torch(), name)(x, dim, _torch().from_numpy(index), src)
        return getattr(gc, name)(x, dim, gc.tensor(index), src)

    return call


@st.composite
def index_add_spec(draw: Any) -> Spec:
    shape = _shape(draw)
    dim = _dim(draw, len(shape))
    length = draw(st.integers(1, 4))
    source = tuple(length if d == dim % len(shape) else n for d, n in enumerate(shape))
    index = _values(draw, (length,), shape[dim])
    alpha = draw(st.sampled_from([1, -0.5, 2.0]))
    return (shape, source), {"dim": dim, "index": index, "alpha": alpha}


def index_add(torch: bool = False) -> Any:
    def call(x: Any, source: Any, dim: int, index: np.ndarray, alpha: float) -> Any:
        if torch:
            return _torch().index_add(x, dim, _torch().from_numpy(index), source, alpha=alpha)
        return gc.index_add(x, dim, gc.tensor(index), source, alpha=alpha)

    return call


# -- masked_select, and the primitives ----------------------------------------------------------


@st.composite
def masked_select_spec(draw: Any) -> Spec:
    x_shape, mask_shape = draw(
        hnp.mutually_broadcastable_shapes(
            num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=MAX_SIDE
        )
    ).input_shapes
    return (x_shape,), {"mask": draw(hnp.arrays(np.bool_, mask_shape))}


def masked_select(torch: bool = False) -> Any:
    def call(x: Any, mask: np.ndarray) -> Any:
        if torch:
            return _torch().masked_select(x, _torch().from_numpy(mask))
        return gc.masked_select(x, gc.tensor(mask))

    return call


def _layout(index: tuple[Any, ...]) -> tuple[list[Any], tuple[Any, ...]]:
    """An index of getitem's test table as index's operands and layout."""
    arrays = [i for i in index if isinstance(i, np.ndarray)]
    return arrays, tuple(SLOT if isinstance(i, np.ndarray) else i for i in index)


def index_call(x: Any, index: tuple[Any, ...]) -> Any:
    arrays, layout = _layout(index)
    return indexed(x, [gc.tensor(a) for a in arrays], layout)


def index_put_call(g: Any, index: tuple[Any, ...], shape: tuple[int, ...]) -> Any:
    arrays, layout = _layout(index)
    return put(g, [gc.tensor(a) for a in arrays], layout, shape, True)


# -- integer results: one_hot, nonzero, argwhere ----------------------------------------------


@st.composite
def one_hot_spec(draw: Any) -> Spec:
    """Class indices (given as the input's values) and num_classes."""
    return (_shape(draw, min_dims=0),), {"num_classes": draw(st.sampled_from([-1, 4]))}


def one_hot(torch: bool = False) -> Any:
    """one_hot of the input's values as classes 0..3."""

    def call(x: Any, num_classes: int) -> Any:
        if torch:
            classes = (x.detach().abs() * 1.5).floor().long() % 4
            return _torch().nn.functional.one_hot(classes, num_classes)
        return gc.one_hot(gc.remainder(gc.floor(gc.abs(x) * 1.5), 4), num_classes)

    return call


def nonzero_of(name: str, torch: bool = False) -> Any:
    """nonzero (argwhere) of the input's positive elements."""

    def call(x: Any) -> Any:
        if torch:
            return getattr(_torch(), name)((x > 0).double())
        return getattr(gc, name)(gc.where(x > 0, x, 0.0))

    return call


def to_integer(torch: bool = False) -> Any:
    """The input as int64 (truncated toward zero): no gradient."""

    def call(x: Any) -> Any:
        if torch:
            return x.to(_torch().int64)
        return gc.to(x, "int64")

    return call


# -- y[index] = value with tensors in the index: torch's index_put_ ----------------------------


@st.composite
def setitem_spec(draw: Any) -> Spec:
    """x, and a value broadcast to x[index] (a number, a row, or all of it); the index a mask
    or distinct indices over the first dims (an index written twice keeps the last write,
    where torch's gradient of the value overwritten is not the derivative of the forward)."""
    shape = _shape(draw)
    if draw(st.booleans()):
        mask = draw(hnp.arrays(np.bool_, shape[: draw(st.integers(1, len(shape)))]))
        index: tuple[Any, ...] = (mask,)
    else:
        order = draw(st.permutations(range(shape[-1])))
        picked = np.array(order[: draw(st.integers(1, shape[-1]))], dtype=np.int64)
        index = (Ellipsis, picked)
    part = np.empty(shape)[index].shape
    value = draw(st.sampled_from([(), part[-1:], part]))
    return (shape, value), {"index": index}


def setitem(torch: bool = False) -> Any:
    def call(x: Any, value: Any, index: tuple[Any, ...]) -> Any:
        if torch:
            y = x.clone()
            y[tuple(_torch().from_numpy(i) if isinstance(i, np.ndarray) else i for i in index)] = (
                value
            )
            return y
        arrays, layout = _layout(index)
        return gc.setitem(x, value, *[gc.tensor(a) for a in arrays], *layout)

    return call
