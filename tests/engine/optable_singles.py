"""Shape and parameter strategies, and torch counterparts, for the test-table rows of the
operations of ``gradcli/ops/arrays/repeating.py`` (flatten's dims, unflatten, expand_as, repeat,
tile, repeat_interleave, pad), einsum, clamp with tensor bounds, the loss weights, the
spectral linear algebra and dropout.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from hypothesis import strategies as st

import gradcli as gc

SIDE = 3
Spec = tuple[tuple[tuple[int, ...], ...], dict[str, Any]]


def _torch() -> Any:
    return importlib.import_module("torch")


def _shape(draw: Any, low: int, high: int = 3, side: int = 1) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(side, SIDE), min_size=low, max_size=high)))


def _dim_in(ndim: int) -> st.SearchStrategy[int]:
    n = max(ndim, 1)
    return st.integers(-n, n - 1)


@st.composite
def flatten_spec(draw: Any) -> Spec:
    """Any shape and a range of its dims (0-d: dims 0 and -1)."""
    shape = _shape(draw, 0, 4)
    n = max(len(shape), 1)
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start, n - 1))
    flip = draw(st.booleans())
    return (shape,), {"start_dim": start - n if flip else start, "end_dim": end - n * flip}


@st.composite
def unflatten_spec(draw: Any) -> Spec:
    """A dim split into sizes whose product is its size, one of them -1 at times."""
    sizes = tuple(draw(st.lists(st.integers(1, SIDE), min_size=1, max_size=3)))
    shape = _shape(draw, 0, 2)
    dim = draw(st.integers(0, len(shape)))
    full = shape[:dim] + (int(np.prod(sizes)),) + shape[dim:]
    written = list(sizes)
    if draw(st.booleans()):
        written[draw(st.integers(0, len(sizes) - 1))] = -1
    negative = draw(st.booleans())
    return (full,), {"dim": dim - len(full) if negative else dim, "sizes": tuple(written)}


@st.composite
def expand_as_spec(draw: Any) -> Spec:
    small = _shape(draw, 0)
    lead = _shape(draw, 0, 2) if len(small) < 3 else ()
    target = lead + tuple(draw(st.integers(1, SIDE)) if n == 1 else n for n in small)
    return (small,), {"other": np.zeros(target)}


def expand_as(x: Any, other: Any) -> Any:
    return gc.expand_as(x, gc.tensor(other))


def torch_expand_as(x: Any, other: Any) -> Any:
    return x.expand_as(_torch().from_numpy(other))


@st.composite
def repeat_spec(draw: Any) -> Spec:
    """As many repeats as dims, or one more (leading); 0 repeats at times."""
    shape = _shape(draw, 0)
    count = len(shape) + draw(st.integers(0, 1))
    return (shape,), {"sizes": tuple(draw(st.integers(0, 2)) for _ in range(count))}


def repeat(x: Any, sizes: tuple[int, ...]) -> Any:
    return x.repeat(*sizes)


def torch_repeat(x: Any, sizes: tuple[int, ...]) -> Any:
    return x.repeat(sizes)  # torch takes no sizes at all only as a tuple: x.repeat(())


@st.composite
def tile_spec(draw: Any) -> Spec:
    """Fewer repeats than dims (1s lead), as many, or more."""
    shape = _shape(draw, 0)
    count = draw(st.integers(0, len(shape) + 1))
    return (shape,), {"dims": tuple(draw(st.integers(1, 2)) for _ in range(count))}


@st.composite
def repeat_interleave_spec(draw: Any) -> Spec:
    """A number of repeats, or a tensor of them (one per element, 0 included, or a single
    one), with the output_size at times."""
    shape = _shape(draw, 0)
    dim = draw(st.one_of(st.none(), _dim_in(len(shape)))) if shape else None
    size = int(np.prod(shape)) if dim is None else shape[dim]
    form = draw(st.sampled_from(["number", "each", "one"]))
    if form == "number":
        repeats: Any = draw(st.integers(0, 3))
        length = size * repeats
    else:
        count = size if form == "each" else 1
        repeats = np.array(draw(st.lists(st.integers(0, 3), min_size=count, max_size=count)))
        length = int(np.broadcast_to(repeats, (size,)).sum())
    params = {"repeats": repeats, "dim": dim}
    if draw(st.booleans()):
        params["output_size"] = length
    return (shape,), params


def torch_repeat_interleave(x: Any, repeats: Any, **params: Any) -> Any:
    """torch.repeat_interleave, a tensor of repeats given as a numpy array."""
    if isinstance(repeats, np.ndarray):
        repeats = _torch().from_numpy(repeats)
    return _torch().repeat_interleave(x, repeats, **params)


@st.composite
def pad_spec(draw: Any) -> Spec:
    """Every mode: constant (any rank, negative sizes too, a value at times), and reflect,
    replicate and circular with the ranks and sizes torch takes."""
    mode = draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    if mode == "constant":
        shape = _shape(draw, 1, 3, side=2)
        k = draw(st.integers(1, len(shape)))
        pad = tuple(draw(st.integers(-1, 2)) for _ in range(2 * k))
        params: dict[str, Any] = {"pad": pad, "mode": mode}
        if draw(st.booleans()):
            params["value"] = draw(st.sampled_from([0.5, -2.0]))
        return (shape,), params
    k = draw(st.integers(1, 2))
    shape = _shape(draw, k + 1, k + 2, side=2)
    most = {"reflect": 1, "replicate": 3, "circular": 2}[mode]
    pad = []
    for i in range(k):
        n = shape[-1 - i]
        top = min(most, n - 1) if mode == "reflect" else min(most, n)
        pad += [draw(st.integers(0, top)), draw(st.integers(0, top))]
    return (shape,), {"pad": tuple(pad), "mode": mode}


def torch_pad(x: Any, **params: Any) -> Any:
    return _torch().nn.functional.pad(x, **params)


# einsum: (equation, the operands' shapes with letters for sizes); each letter gets a size
_EINSUMS = [
    ("ij,jk->ik", ("ij", "jk")),
    ("ij,jk", ("ij", "jk")),
    ("ii->i", ("ii",)),
    ("ii", ("ii",)),
    ("iij->j", ("iij",)),
    ("ij->", ("ij",)),
    ("ba", ("ab",)),
    ("...ij,...jk->...ik", ("zij", "yzjk")),
    ("ij,j->i", ("i1", "j")),
    ("i,i,i->i", ("i", "i", "i")),
    ("ij,kl->ijkl", ("ij", "kl")),
    ("bij, bjk -> bik", ("bij", "bjk")),
    ("...ij->j", ("zyij",)),
    ("ii,i->i", ("ii", "i")),
    ("ij,ij->", ("ij", "ij")),
]


@st.composite
def einsum_spec(draw: Any) -> Spec:
    equation, layouts = draw(st.sampled_from(_EINSUMS))
    sizes = {c: draw(st.integers(1, SIDE)) for c in "".join(layouts) if c != "1"}
    sizes["1"] = 1
    return tuple(tuple(sizes[c] for c in layout) for layout in layouts), {"equation": equation}


def einsum(*xs: Any, equation: str) -> Any:
    return gc.einsum(equation, *xs)


def torch_einsum(*xs: Any, equation: str) -> Any:
    return _torch().einsum(equation, *xs)


@st.composite
def bounds_spec(draw: Any, count: int = 2) -> Spec:
    """An input and bounds that broadcast to its shape (torch's backward fails for an input
    smaller than its bounds: 'output with shape [] doesn't match the broadcast shape')."""
    shape = _shape(draw, 0)
    bounds = []
    for _ in range(count):
        suffix = shape[len(shape) - draw(st.integers(0, len(shape))) :]
        bounds.append(tuple(n if draw(st.booleans()) else 1 for n in suffix))
    return (shape, *bounds), {}


def _weights(draw: Any, shape: tuple[int, ...]) -> np.ndarray:
    values = draw(st.lists(st.floats(0.5, 2.0), min_size=int(np.prod(shape)), max_size=64))
    return np.asarray(values[: int(np.prod(shape))], dtype=np.float64).reshape(shape)


def weighted(spec: Any, elementwise: bool = False, pos: bool = False) -> Any:
    """``spec`` with a ``weight``: one per class (the dim after the batch dim), or, for the
    element-wise losses, one per element of a trailing part of the input's shape (and a
    ``pos_weight`` too, with ``pos``)."""

    @st.composite
    def draw_weighted(draw: Any) -> Spec:
        shapes, params = draw(spec)
        x = shapes[0]
        params = dict(params)
        if elementwise:
            for name in ("weight", "pos_weight") if pos else ("weight",):
                if draw(st.booleans()) or name == "weight":
                    params[name] = _weights(draw, x[len(x) - draw(st.integers(0, len(x))) :])
        else:
            params["weight"] = _weights(draw, (x[1] if len(x) > 1 else x[0],))
        return shapes, params

    return draw_weighted()


def torch_weighted(function: Any) -> Any:
    """A torch counterpart given the weights as torch tensors."""

    def call(*xs: Any, **params: Any) -> Any:
        for name in ("weight", "pos_weight"):
            if name in params:
                params[name] = _torch().from_numpy(params[name])
        return function(*xs, **params)

    return call


def clamp_tensors(x: Any, low: Any, high: Any) -> Any:
    return gc.clamp(x, min=low, max=high)


def torch_clamp_tensors(x: Any, low: Any, high: Any) -> Any:
    return _torch().clamp(x, min=low, max=high)


@st.composite
def dropout_spec(draw: Any) -> Spec:
    shape = _shape(draw, 0)
    return (shape,), {"p": draw(st.sampled_from([0.0, 0.3, 0.5, 1.0])), "training": True}


def dropout(x: Any, p: float, training: bool) -> Any:
    with gc.dropout_seed(7):  # the same mask at every evaluation of a case
        return gc.dropout(x, p, training)


def torch_dropout(x: Any, p: float, training: bool) -> Any:
    """torch's dropout given gradcli's mask (torch's generator draws another)."""
    from gradcli.ops.nn.dropout import dropout_mask

    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    keep = dropout_mask(tuple(x.shape), p, 7)
    return x * _torch().from_numpy(np.asarray(keep * scale)) if training else x


@st.composite
def matrix_power_spec(draw: Any) -> Spec:
    n = draw(st.integers(1, SIDE))
    batch = draw(st.sampled_from([(), (2,)]))
    return ((*batch, n, n),), {"n": draw(st.integers(-2, 3))}


# Programs for the symbolic rules of these entries (test_engine_sweep's SYMBOLIC_PROGRAMS)
M = "[[1,2],[3,-1]]"
SYMBOLIC_PROGRAMS = {
    "unflatten": ("y = unflatten(x * x, 1, (2, 1))", M),
    "expand": ("y = x.expand(3, 2) * x", "0.5,-1"),
    "expand_as": ("o = ones(2, 2); y = expand_as(x, o) * x", "0.5,-1"),
    "repeat": ("y = x.repeat(2, 1) * x[0]", M),
    "tile": ("y = tile(x * x, (2,))", M),
    "repeat_interleave": (
        "y = repeat_interleave(x * x, 2, 1) + repeat_interleave(x, tensor([3, 1]), 1, 4)",
        M,
    ),
    "matrix_power": ("y = matrix_power(x, 3)", M),
    "einsum": ("y = einsum('ij,jk->ik', x, x * x) + einsum('ii->i', x)", M),
    "pad": (
        "y = pad(x * x, (1, 1), mode='reflect') + pad(x, (1, 1), value=2) "
        "+ pad(x, (0, 2), mode='replicate') * pad(x, (2, 0), mode='circular')",
        M,
    ),
}
