"""Test-table helpers for the selections and the operations with several results
(gradcli/ops/reductions/selection.py): their shape and parameter strategies, gradcli calls of one
result, and the torch counterparts that pick the same result."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradcli as gc

MAX_SIDE = 3


def torch_module():
    return importlib.import_module("torch")


def _shapes(min_dims=0, max_dims=3, min_side=1):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=3)


def _dim_in(ndim):
    n = max(ndim, 1)
    return st.integers(-n, n - 1)


def _size(shape, dim) -> int:
    return shape[dim % len(shape)] if shape else 1


@st.composite
def extreme_spec(draw, dim_none=True, keep_full=False):
    """max/min/median/argmax: dim None or one dim, keepdim."""
    shape = draw(_shapes())
    dims = [st.none(), _dim_in(len(shape))] if dim_none else [_dim_in(len(shape))]
    dim = draw(st.one_of(dims))
    if dim is None and not keep_full:  # max(x): torch's has no keepdim
        return (shape,), {"dim": None}
    return (shape,), {"dim": dim, "keepdim": draw(st.booleans())}


@st.composite
def sort_spec(draw):
    shape = draw(_shapes())
    return (shape,), {"dim": draw(_dim_in(len(shape))), "descending": draw(st.booleans())}


@st.composite
def topk_spec(draw):
    shape = draw(_shapes())
    dim = draw(_dim_in(len(shape)))
    k = draw(st.integers(1, _size(shape, dim)))
    return (shape,), {"k": k, "dim": dim, "largest": draw(st.booleans())}


@st.composite
def kthvalue_spec(draw):
    shape = draw(_shapes())
    dim = draw(_dim_in(len(shape)))
    k = draw(st.integers(1, _size(shape, dim)))
    return (shape,), {"k": k, "dim": dim, "keepdim": draw(st.booleans())}


@st.composite
def running_spec(draw):
    shape = draw(_shapes())
    return (shape,), {"dim": draw(_dim_in(len(shape)))}


@st.composite
def split_spec(draw):
    """split by a size or a list of sizes, and which piece."""
    shape = draw(_shapes(min_dims=1))
    dim = draw(_dim_in(len(shape)))
    n = shape[dim]
    if draw(st.booleans()):
        sections: Any = draw(st.integers(1, n + 1))
        count = -(-n // sections)
    else:
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=2)))
        sections = [b - a for a, b in zip([0, *cuts], [*cuts, n])]
        count = len(sections)
    k = draw(st.integers(0, count - 1))
    return (shape,), {"split_size_or_sections": sections, "dim": dim, "k": k}


@st.composite
def chunk_spec(draw):
    shape = draw(_shapes(min_dims=1))
    dim = draw(_dim_in(len(shape)))
    chunks = draw(st.integers(1, 4))
    n = shape[dim]
    size = -(-n // chunks)
    count = -(-n // size)
    return (shape,), {"chunks": chunks, "dim": dim, "k": draw(st.integers(0, count - 1))}


@st.composite
def unbind_spec(draw):
    shape = draw(_shapes(min_dims=1))
    dim = draw(_dim_in(len(shape)))
    return (shape,), {"dim": dim, "k": draw(st.integers(0, shape[dim] - 1))}


@st.composite
def take_along_spec(draw):
    """An input of at least one dim, int64 indices shaped like it but along dim."""
    shape = draw(_shapes(min_dims=1))
    dim = draw(st.integers(0, len(shape) - 1))
    index_shape = list(shape)
    index_shape[dim] = draw(st.integers(1, MAX_SIDE))
    index = draw(hnp.arrays(np.int64, tuple(index_shape), elements=st.integers(0, shape[dim] - 1)))
    return (shape,), {"index": index, "dim": dim}


@st.composite
def put_along_spec(draw):
    (shape,), params = draw(take_along_spec())
    return (params["index"].shape,), {**params, "shape": shape}


def take_along(x, index, dim):
    from gradcli.ops.reductions.selection import take_along as take

    return take(x, gc.Tensor(index), dim)


def put_along(g, index, dim, shape):
    from gradcli.ops.reductions.selection import put_along as put

    return put(g, gc.Tensor(index), dim, shape)


def torch_take_along(x, index, dim):
    torch = torch_module()
    return torch.take_along_dim(x, torch.from_numpy(index), dim)


def torch_put_along(g, index, dim, shape):
    # take_along's adjoint as torch computes it: the gradient of gather w.r.t. its input
    torch = torch_module()
    x = torch.zeros(shape, dtype=g.dtype, requires_grad=True)
    taken = torch.take_along_dim(x, torch.from_numpy(index), dim)
    (out,) = torch.autograd.grad(taken, x, g, create_graph=True)
    return out


def result(function: Callable[..., gc.Tensor], k: int) -> Callable[..., gc.Tensor]:
    """gradcli's call of ``function`` giving its k-th result."""
    return lambda x, **params: function(x, **params, output=(k, 0))


def piece(function: Callable[..., gc.Tensor]) -> Callable[..., gc.Tensor]:
    """gradcli's call of split/chunk/unbind giving the piece ``k`` (a parameter)."""
    return lambda x, k, **params: function(x, **params, output=(k, 0))


def torch_result(name: str, k: int | None = None) -> Callable[..., Any]:
    """torch.<name>, its k-th result (None: the only one)."""

    def call(x, **params):
        out = getattr(torch_module(), name)(x, **params)
        return out if k is None else out[k]

    return call


def torch_extreme(name: str, k: int) -> Callable[..., Any]:
    """torch.max/min/median: of all elements (dim None) or (values, indices) along dim."""

    def call(x, dim=None, keepdim=False):
        torch = torch_module()
        if dim is None:
            return getattr(torch, name)(x)
        return getattr(torch, name)(x, dim, keepdim)[k]

    return call


def torch_piece(name: str) -> Callable[..., Any]:
    def call(x, k, **params):
        return getattr(torch_module(), name)(x, **params)[k]

    return call


def torch_arg(name: str) -> Callable[..., Any]:
    """torch.argmax/argmin, with dim=None and keepdim=True as torch 2.13 gives them."""

    def call(x, dim=None, keepdim=False):
        return getattr(torch_module(), name)(x, dim, keepdim)

    return call
