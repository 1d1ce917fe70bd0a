"""Shape and parameter strategies, and torch counterparts, for the test-table rows of the
linear algebra and shape operations (``gradcli/ops/linalg/linalg.py``, ``shapes.py``).

Matrices that must be invertible are made well-conditioned inside the row's function, the
same way for gradcli and torch: A + n I with A's entries in [-0.5, 0.5] (strictly diagonally
dominant), and X X^T + n I for cholesky (symmetric positive-definite).
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

import gradcli as gc

SIDE = 3


def _torch() -> Any:
    return importlib.import_module("torch")


def _side(low: int = 1) -> st.SearchStrategy[int]:
    return st.integers(low, SIDE)


def _batch() -> st.SearchStrategy[tuple[int, ...]]:
    return st.one_of(st.just(()), st.tuples(st.integers(1, 2)))


def _dim_in(ndim: int) -> st.SearchStrategy[int]:
    n = max(ndim, 1)
    return st.integers(-n, n - 1)


# -- well-conditioned matrices ----------------------------------------------------------------


def well(a: Any) -> Any:
    """A + n I (gradcli or torch): invertible for entries in [-0.5, 0.5]."""
    n = a.shape[-1]
    if isinstance(a, gc.Tensor):
        return a + gc.tensor(n * np.eye(n), dtype=a.dtype)
    return a + n * _torch().eye(n, dtype=a.dtype)


def spd(x: Any) -> Any:
    """X X^T + n I: symmetric positive-definite."""
    n = x.shape[-1]
    if isinstance(x, gc.Tensor):
        return gc.matmul(x, x.mT) + gc.tensor(n * np.eye(n), dtype=x.dtype)
    return x @ x.mT + n * _torch().eye(n, dtype=x.dtype)


@st.composite
def square(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    n = draw(_side())
    return ((*draw(_batch()), n, n),), {}


@st.composite
def cholesky_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shapes, _ = draw(square())
    return shapes, {"upper": draw(st.booleans())}


@st.composite
def solve_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    """A (batch, n, n) with B a vector, a batch of vectors, a matrix or a batch of them
    (batch dims broadcast)."""
    n, k = draw(_side()), draw(_side())
    batch = draw(_batch())
    a = (*batch, n, n)
    kind = draw(st.sampled_from(["vector", "vectors", "matrix", "matrices"]))
    b = {
        "vector": (n,),
        "vectors": (*batch, n),
        "matrix": (n, k),
        "matrices": (*draw(st.sampled_from([batch, (1,) * len(batch)])), n, k),
    }[kind]
    return (a, b), {}


# -- decompositions: inputs where the derivatives are well defined, gauge-invariant results ----


def _constant(like: Any, array: np.ndarray) -> Any:
    if isinstance(like, gc.Tensor):
        return gc.tensor(array, dtype=like.dtype)
    return _torch().tensor(array, dtype=like.dtype)


def reflected(a: Any) -> Any:
    """well(A) with its first row negated: a negative determinant."""
    n = a.shape[-1]
    return well(a) * _constant(a, np.array([[-1.0]] + [[1.0]] * (n - 1)))


def separated(x: Any) -> Any:
    """X + X^T + diag(0, 8, 16, ...): symmetric, its eigenvalues at least 2 apart for entries
    of X in [-0.5, 0.5] and sides up to 3 (Weyl: each within 3 of the diagonal's)."""
    n = x.shape[-1]
    return x + x.mT + _constant(x, np.diag(8.0 * np.arange(n)))


def spread(a: Any) -> Any:
    """A + diag(4k, ..., 8, 4) (as wide or tall as A): full rank, its singular values at least
    1 apart and at least 2.5 for entries of A in [-0.5, 0.5] and sides up to 3."""
    m, n = a.shape[-2:]
    k = min(m, n)
    d = np.zeros((m, n))
    d[range(k), range(k)] = 4.0 * np.arange(k, 0, -1)
    return a + _constant(a, d)


def column_gauge(q: Any) -> Any:
    """Q * Q[0, :]: unchanged when columns of Q change sign (eigenvectors, Q, U)."""
    return q * q[..., :1, :]


def row_gauge(r: Any) -> Any:
    """R * R[:, -1]: unchanged when rows of R change sign (R, Vh)."""
    return r * r[..., :, -1:]


@st.composite
def singular_norm_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    (shape,), _ = draw(rectangular())
    return (shape,), {"ord": draw(st.sampled_from(["nuc", 2, -2])), "keepdim": draw(st.booleans())}


@st.composite
def eigh_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shapes, _ = draw(square())
    return shapes, {"UPLO": draw(st.sampled_from(["L", "U"]))}


@st.composite
def rectangular(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    return ((*draw(_batch()), draw(_side()), draw(_side())),), {}


@st.composite
def pinv_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    """Square, tall and wide; the cut-offs far below the singular values of ``spread``'s
    matrices (at least 2.5, at most about 14), or an rtol that drops none of them either."""
    shapes, _ = draw(rectangular())
    params = draw(st.sampled_from([{}, {"atol": 1.0}, {"rtol": 0.1}, {"atol": 0.5, "rtol": 0.01}]))
    return shapes, params


@st.composite
def qr_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    """Square, tall and wide; mode 'complete' only where it is differentiable (not tall)."""
    (shape,), _ = draw(rectangular())
    modes = ["reduced"] + (["complete"] if shape[-2] <= shape[-1] else [])
    return (shape,), {"mode": draw(st.sampled_from(modes))}


def decomposed(function: Any, k: int, arrange: Any, gauge: Any = None) -> Any:
    """Result ``k`` of a decomposition (gradcli's, called with output=(k, 0)) of
    ``arrange(A)``, through ``gauge``."""

    def call(a: Any, **params: Any) -> Any:
        out = function(arrange(a), **params, output=(k, 0))
        return out if gauge is None else gauge(out)

    return call


def torch_decomposed(name: str, k: int, arrange: Any, gauge: Any = None, **fixed: Any) -> Any:
    def call(a: Any, **params: Any) -> Any:
        out = getattr(_torch().linalg, name)(arrange(a), **params, **fixed)[k]
        return out if gauge is None else gauge(out)

    return call


# -- products ---------------------------------------------------------------------------------


@st.composite
def pair(draw: Any, left: str, right: str) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    """Operands of a product, by letters: ``"nk"`` and ``"km"`` are an (n, k) and a (k, m)
    matrix; ``b`` a batch size shared by both."""
    sizes = {letter: draw(_side()) for letter in "bnkm"}
    return (tuple(sizes[c] for c in left), tuple(sizes[c] for c in right)), {}


@st.composite
def inner_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    k = draw(_side())
    shapes = []
    for _ in range(2):
        lead = draw(st.lists(_side(), max_size=2))
        shapes.append(() if draw(st.integers(0, 5)) == 0 else (*lead, k))
    return tuple(shapes), {}


@st.composite
def kron_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    small = st.lists(st.integers(1, 2), max_size=2).map(tuple)
    return (draw(small), draw(small)), {}


@st.composite
def cross_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    """Shapes with a dim of size 3 (the only one), broadcasting; dim None or that dim."""
    others = draw(st.lists(st.integers(1, 2), max_size=2))
    at = draw(st.integers(0, len(others)))
    shape = (*others[:at], 3, *others[at:])
    other = tuple(n if n == 3 or draw(st.booleans()) else 1 for n in shape)
    dim = draw(st.sampled_from([None, at, at - len(shape)]))
    shapes = (shape, other) if draw(st.booleans()) else (other, shape)
    return shapes, {"dim": dim}


@st.composite
def tensordot_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    dims = draw(st.integers(0, 2))
    summed = tuple(draw(st.integers(1, 2)) for _ in range(dims))
    kept_a = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    kept_b = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    return ((*kept_a, *summed), (*summed, *kept_b)), {"dims": dims}


# -- norms ------------------------------------------------------------------------------------


@st.composite
def vector_norm_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shape = tuple(draw(st.lists(_side(), max_size=3)))
    dim = draw(st.one_of(st.none(), _dim_in(len(shape))))
    ord_ = draw(st.sampled_from([2, 1, 3, 0.5, -1, 0]))
    return (shape,), {"ord": ord_, "dim": dim, "keepdim": draw(st.booleans())}


@st.composite
def matrix_norm_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shape = (*draw(_batch()), draw(_side()), draw(_side()))
    ord_ = draw(st.sampled_from(["fro", 1, -1, math.inf, -math.inf]))
    return (shape,), {"ord": ord_, "keepdim": draw(st.booleans())}


# -- shapes -----------------------------------------------------------------------------------


def _shape(draw: Any, min_dims: int, max_dims: int = 3) -> tuple[int, ...]:
    """A shape of min_dims to max_dims dims, of sides up to 3 (up to 2 with three dims, to
    keep the finite differences few)."""
    ndim = draw(st.integers(min_dims, max_dims))
    return tuple(draw(st.integers(1, SIDE if ndim < 3 else 2)) for _ in range(ndim))


@st.composite
def triangle_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    return (_shape(draw, 2),), {"diagonal": draw(st.integers(-2, 2))}


@st.composite
def diagonal_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shape = _shape(draw, 2)
    dim1 = draw(_dim_in(len(shape)))
    dim2 = draw(_dim_in(len(shape)).filter(lambda d: d % len(shape) != dim1 % len(shape)))
    return (shape,), {"offset": draw(st.integers(-2, 2)), "dim1": dim1, "dim2": dim2}


@st.composite
def diagonal_backward_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    """The adjoint of diagonal: g shaped as diagonal's result, the input's shape given."""
    (shape,), params = draw(diagonal_spec())
    ndim = len(shape)
    params = {k: v % ndim if k != "offset" else v for k, v in params.items()}
    g = np.diagonal(np.empty(shape), params["offset"], params["dim1"], params["dim2"]).shape
    return (g,), {"shape": shape, **params}


def torch_diagonal_backward(g: Any, shape: Any, offset: int, dim1: int, dim2: int) -> Any:
    """The gradient of torch.diagonal, as torch computes it."""
    torch = _torch()
    x = torch.zeros(shape, dtype=g.dtype, requires_grad=True)
    out = torch.diagonal(x, offset, dim1, dim2)
    (grad,) = torch.autograd.grad(out, x, g, create_graph=True)
    return grad


@st.composite
def diag_embed_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shape = _shape(draw, 1, 2)
    rank = len(shape) + 1
    dim1 = draw(_dim_in(rank))
    dim2 = draw(_dim_in(rank).filter(lambda d: d % rank != dim1 % rank))
    return (shape,), {"offset": draw(st.integers(-1, 1)), "dim1": dim1, "dim2": dim2}


@st.composite
def diag_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    return (_shape(draw, 1, 2),), {"diagonal": draw(st.integers(-1, 1))}


@st.composite
def movedim_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shape = _shape(draw, 1)
    return (shape,), {
        "source": draw(_dim_in(len(shape))),
        "destination": draw(_dim_in(len(shape))),
    }


@st.composite
def permute_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    """Any shape (0-d too) and an order of its dims, some written negative."""
    shape = _shape(draw, 0)
    order = draw(st.permutations(range(len(shape))))
    dims = tuple(d - len(shape) if draw(st.booleans()) else d for d in order)
    return (shape,), {"dims": dims}


@st.composite
def flip_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shape = _shape(draw, 1)
    return (shape,), {"dims": draw(_dim_in(len(shape)))}


@st.composite
def roll_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shape = _shape(draw, 0)
    dims = draw(st.one_of(st.none(), _dim_in(len(shape)))) if shape else None
    return (shape,), {"shifts": draw(st.integers(-4, 4)), "dims": dims}


@st.composite
def narrow_spec(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    shape = _shape(draw, 1)
    dim = draw(_dim_in(len(shape)))
    n = shape[dim]
    start = draw(st.integers(-n, n))
    length = draw(st.integers(0, n - start % n if start < 0 else n - start))
    return (shape,), {"dim": dim, "start": start, "length": length}


@st.composite
def hstack_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    count = draw(st.integers(1, 3))
    if draw(st.booleans()):
        return tuple((draw(_side()),) for _ in range(count)), {}
    shape = _shape(draw, 2)
    return tuple((shape[0], draw(_side()), *shape[2:]) for _ in range(count)), {}


@st.composite
def vstack_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    count = draw(st.integers(1, 3))
    width = draw(_side())
    if draw(st.booleans()):
        return tuple((width,) for _ in range(count)), {}
    return tuple(
        draw(st.sampled_from([(width,), (draw(_side()), width)])) for _ in range(count)
    ), {}


@st.composite
def column_stack_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    count = draw(st.integers(1, 3))
    rows = draw(_side())
    return tuple(draw(st.sampled_from([(rows,), (rows, draw(_side()))])) for _ in range(count)), {}


@st.composite
def meshgrid_spec(draw: Any) -> tuple[tuple[tuple[int, ...], ...], dict[str, Any]]:
    """One to three vectors or 0-d tensors, and either indexing."""
    count = draw(st.integers(1, 3))
    shapes = tuple(draw(st.sampled_from([(), (draw(_side()),)])) for _ in range(count))
    return shapes, {"indexing": draw(st.sampled_from(["ij", "xy"]))}


def meshgrid(*xs: Any, indexing: str) -> Any:
    """Every result of gradcli's meshgrid, stacked (so that each operand is differentiated:
    result k reads operand k alone)."""
    results = [gc.meshgrid(list(xs), indexing, output=(k, 0)) for k in range(len(xs))]
    return gc.stack(results)


def torch_meshgrid(*xs: Any, indexing: str) -> Any:
    return _torch().stack(_torch().meshgrid(*xs, indexing=indexing))


def joined(function: Any) -> Any:
    """A joining function of a list, as a function of its operands."""
    return lambda *xs: function(list(xs))


def torch_joined(name: str) -> Any:
    return lambda *xs: getattr(_torch(), name)(list(xs))


def torch_linalg(name: str) -> Any:
    return lambda *xs, **params: getattr(_torch().linalg, name)(*xs, **params)


def torch_flip(x: Any, dims: int) -> Any:
    return _torch().flip(x, (dims,))


@st.composite
def matrix(draw: Any) -> tuple[tuple[tuple[int, ...]], dict[str, Any]]:
    return ((draw(_side()), draw(_side())),), {}


# Programs for the symbolic rules of these entries (test_engine_sweep's SYMBOLIC_PROGRAMS)
M = "[[1,2],[3,-1]]"
WELL = "[[2,1],[0.5,3]]"
SYMBOLIC_PROGRAMS = {
    "triu": ("y = triu(x, 0) * x", M),
    "tril": ("y = tril(x, -1) + x * x", M),
    "diagonal": ("y = diagonal(x * x)", M),
    "diag_embed": ("y = diag_embed(x * x, 1)", "0.5,-1"),
    "diag": ("y = diag(x * x)", "0.5,-1"),
    "movedim": ("y = movedim(x * x, 0, 1) * x", M),
    "permute": ("y = permute(x * x, (1, 0)) * x", M),
    "adjoint": ("y = adjoint(x) * x", M),
    "flip": ("y = flip(x, 0) * x", "0.5,-1"),
    "fliplr": ("y = fliplr(x) * x", M),
    "flipud": ("y = flipud(x) * x", M),
    "roll": ("y = roll(x, 1) * x", "0.5,-1,2"),
    "narrow": ("y = narrow(x * x, 0, 1, 1)", "0.5,-1,2"),
    "atleast_1d": ("y = atleast_1d(x * x)", "0.5,-1"),
    "atleast_2d": ("y = atleast_2d(x * x)", "0.5,-1"),
    "atleast_3d": ("y = atleast_3d(x * x)", "0.5,-1"),
    "hstack": ("y = hstack([x, x * x])", "0.5,-1"),
    "vstack": ("y = vstack([x, x * x])", "0.5,-1"),
    "column_stack": ("y = column_stack([x, x * x])", "0.5,-1"),
    "meshgrid": (
        "a, b = meshgrid(x, x * x, indexing='xy'); y = a * b + meshgrid([x[0], x])[1]",
        "0.5,-1,2",
    ),
    "mm": ("y = mm(x, x)", M),
    "mv": ("y = mv(x, sum(x, 1))", M),
    "bmm": ("y = bmm(unsqueeze(x, 0), unsqueeze(x * x, 0))", M),
    "trace": ("y = trace(x @ x)", M),
    "outer": ("y = outer(x, x * x)", "0.5,-1"),
    "inner": ("y = inner(x, x * x)", M),
    "tensordot": ("y = tensordot(x, x * x, 1)", M),
    "kron": ("y = kron(x, x * x)", "0.5,-1"),
    "cross": ("y = cross(x, x * x)", "0.5,-1,2"),
    "det": ("y = det(x)", WELL),
    "slogdet": ("s, l = slogdet(x); y = s * l", "[[1,2],[3,-1]]"),
    "inv": ("y = inv(x)", WELL),
    "solve": ("y = solve(x, sum(x, 0))", WELL),
    "cholesky": ("y = cholesky(x @ transpose(x))", "[[2,0.5],[0.3,1.5]]"),
    "vector_norm": ("y = vector_norm(x, 2, 1)", M),
    "matrix_norm": ("y = matrix_norm(x)", M),
}
