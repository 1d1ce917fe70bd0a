"""The op table: one line per differentiable operation.

Each ``OpRow`` says how to call the operation (``fn(*differentiable_inputs, **params)``), where its
differentiable inputs live (a ``Domain`` each, chosen so the function is smooth there), which
shapes and parameters to try (a hypothesis strategy, ``spec``), the PyTorch equivalent, and
which entries of ``gc.PRIMITIVES`` it exercises. A new primitive is one new line in ``OPS``;
``test_every_primitive_is_in_the_table`` fails until that line exists.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import optable_complex as C
import optable_indexing as I
import optable_layers as Y
import optable_linalg as L
import optable_selection as T
import optable_singles as Z
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradcli as gc
from gradcli.ops import primitives as P
from gradcli.ops.arrays import rearranging as RA
from gradcli.ops.arrays.shapes import diagonal_backward

MAX_SIDE = 3
MARGIN = 0.05  # how far sampled values stay from a kink

# -- input domains ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Domain:
    """Where an input's values are drawn from.

    Uniform on [lo, hi], at least MARGIN away from every point of ``avoid``; ``signed`` gives
    each value a random sign; ``distinct`` keeps all distinct-domain values of one case
    (across inputs) well apart, so that max/min/clamp never meet a tie.
    """

    lo: float
    hi: float
    avoid: tuple[float, ...] = ()
    signed: bool = False
    distinct: bool = False

    def sample(self, rng: np.random.Generator, shape) -> np.ndarray:
        x = rng.uniform(self.lo, self.hi, shape)
        flat = x.reshape(-1)
        for _ in range(1000):
            bad = np.zeros(flat.shape, dtype=bool)
            for p in self.avoid:
                bad |= np.abs(flat - p) < MARGIN
            if not bad.any():
                break
            flat[bad] = rng.uniform(self.lo, self.hi, int(bad.sum()))
        return flat.reshape(shape)


REAL = Domain(-2.0, 2.0)
WIDE = Domain(-4.0, 4.0)
POS = Domain(0.5, 2.0)
UNIT = Domain(-0.9, 0.9)  # asin, acos
NONZERO = Domain(0.3, 2.0, signed=True)  # abs, sign, relu, 1/x: away from the kink at 0
DISTINCT = Domain(-2.0, 2.0, distinct=True)  # maximum, minimum, amax, amin: no ties
DISTINCT_ABS = Domain(0.3, 2.0, signed=True, distinct=True)  # inf-norm: no ties of |x|
PROB = Domain(0.05, 0.95)
CLAMP = Domain(-2.0, 2.0, avoid=(-0.5, 0.5))  # away from the clamp bounds used below
WHOLE = Domain(-2.5, 2.5, avoid=(-2.0, -1.0, 0.0, 1.0, 2.0))  # floor, ceil, trunc, frac
HALVES = Domain(-2.4, 2.4, avoid=(-1.5, -0.5, 0.5, 1.5))  # round
# remainder, fmod: |input / other| stays within (0.05, 0.94), away from whole numbers
DIVIDEND = Domain(0.1, 1.4, signed=True)
DIVISOR = Domain(1.5, 2.0, signed=True)
HARD = Domain(-4.0, 4.0, avoid=(-3.0, 3.0))  # hardsigmoid, hardswish


def sample_inputs(domains, shapes, rng: np.random.Generator) -> list[np.ndarray]:
    arrays: list[Any] = [None] * len(shapes)
    distinct = [i for i, d in enumerate(domains) if d.distinct]
    if distinct:
        lo, hi = domains[distinct[0]].lo, domains[distinct[0]].hi
        sizes = [math.prod(shapes[i]) for i in distinct]
        total = sum(sizes)
        slots_count = max(8 * total, 64)
        slots = rng.choice(slots_count, size=total, replace=False)
        values = lo + (slots + rng.uniform(0.25, 0.75, total)) * (hi - lo) / slots_count
        start = 0
        for i, size in zip(distinct, sizes):
            arrays[i] = values[start : start + size].reshape(shapes[i])
            start += size
    for i, (domain, shape) in enumerate(zip(domains, shapes)):
        if arrays[i] is None:
            arrays[i] = domain.sample(rng, shape)
        if domain.signed:
            arrays[i] = arrays[i] * rng.choice([-1.0, 1.0], size=shapes[i])
        arrays[i] = np.asarray(arrays[i], dtype=np.float64)
    return arrays


# -- shape and parameter strategies: each yields (shapes of the inputs, params) ------------------


def shapes(min_dims=0, max_dims=3, min_side=1):
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=MAX_SIDE
    )


def one(min_dims=0, max_dims=3):
    """A single input of any shape, 0-d included."""
    return shapes(min_dims, max_dims).map(lambda s: ((s,), {}))


def same(n):
    """n inputs of one shape."""
    return shapes().map(lambda s: ((s,) * n, {}))


def broadcast(n):
    """n inputs whose shapes broadcast together (0-d and size-1 dimensions included)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=0, max_dims=3, min_side=1, max_side=MAX_SIDE
    ).map(lambda r: (tuple(r.input_shapes), {}))


def with_params(spec, params):
    """``spec`` with extra parameters drawn from the strategy ``params`` (a dict)."""
    return st.tuples(spec, params).map(lambda t: (t[0][0], {**t[0][1], **t[1]}))


def _dim_in(ndim):
    """Any valid single dim of an ndim-tensor, negative ones included (0-d takes 0 and -1)."""
    n = max(ndim, 1)
    return st.integers(-n, n - 1)


@st.composite
def reduction(draw, tuple_dims=True):
    shape = draw(shapes())
    options = [st.none(), _dim_in(len(shape))]
    if tuple_dims and len(shape) >= 1:
        options.append(
            st.lists(
                st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True
            ).flatmap(lambda ds: st.tuples(*[st.sampled_from([d, d - len(shape)]) for d in ds]))
        )
    dim = draw(st.one_of(options))
    return (shape,), {"dim": dim, "keepdim": draw(st.booleans())}


@st.composite
def along_dim(draw):
    shape = draw(shapes())
    return (shape,), {"dim": draw(_dim_in(len(shape)))}


@st.composite
def reshape_spec(draw):
    shape = draw(shapes())
    rest = math.prod(shape)
    new = []
    for _ in range(draw(st.integers(0, 3))):
        d = draw(st.sampled_from([k for k in range(1, rest + 1) if rest % k == 0]))
        new.append(d)
        rest //= d
    if rest != 1 or (not new and draw(st.booleans())):
        new.append(rest)
    if new and draw(st.booleans()):
        new[draw(st.integers(0, len(new) - 1))] = -1
    return (shape,), {"shape": tuple(new)}


@st.composite
def transpose_spec(draw):
    shape = draw(shapes())
    return (shape,), {"dim0": draw(_dim_in(len(shape))), "dim1": draw(_dim_in(len(shape)))}


@st.composite
def sum_to_spec(draw):
    big = draw(shapes())
    lead = draw(st.integers(0, len(big)))
    target = tuple(n if draw(st.booleans()) else 1 for n in big[lead:])
    return (big,), {"shape": target}


@st.composite
def expand_spec(draw):
    small = draw(shapes())
    lead = draw(shapes(min_dims=0, max_dims=2)) if len(small) < 3 else ()
    target = list(lead) + [draw(st.integers(1, MAX_SIDE)) if n == 1 else n for n in small]
    for i in range(len(lead), len(target)):  # -1 keeps a dimension, as in torch
        if target[i] == small[i - len(lead)] and draw(st.booleans()):
            target[i] = -1
    return (small,), {"shape": tuple(target)}


@st.composite
def where_spec(draw):
    cond_shape, a_shape, b_shape = draw(broadcast(3))[0]
    condition = draw(hnp.arrays(np.bool_, cond_shape))
    return (a_shape, b_shape), {"condition": condition}


@st.composite
def _slice(draw, n):
    bound = st.one_of(st.none(), st.integers(-n - 1, n + 1))
    step = st.one_of(st.none(), st.integers(1, 3))  # torch has no negative steps
    return slice(draw(bound), draw(bound), draw(step))


@st.composite
def index_for(draw, shape):
    """An index for ``x[index]``: basic (ints, slices, None, ...), integer arrays or a mask."""
    ndim = len(shape)
    kind = draw(st.sampled_from(["basic", "array", "pairs", "mask", "apart"]))
    if kind == "apart" and ndim >= 2:  # advanced parts apart: numpy puts their dims first
        first = draw(
            hnp.arrays(
                np.int64,
                draw(shapes(min_dims=1, max_dims=2)),
                elements=st.integers(-shape[0], shape[0] - 1),
            )
        )
        last = draw(st.integers(-shape[-1], shape[-1] - 1))
        between = draw(_slice(shape[1])) if ndim >= 3 else None
        return (first, between, last)
    if kind in ("basic", "apart") or (kind == "pairs" and ndim < 2):
        k = draw(st.integers(1, ndim))
        ellipsis_first = k < ndim and draw(st.booleans())  # then index the last k dims
        indexed = shape[ndim - k :] if ellipsis_first else shape[:k]
        parts = [draw(st.one_of(st.integers(-n, n - 1), _slice(n))) for n in indexed]
        if draw(st.booleans()):
            parts.insert(draw(st.integers(0, len(parts))), None)
        if ellipsis_first:
            parts.insert(0, Ellipsis)
        elif k < ndim and draw(st.booleans()):
            parts.append(Ellipsis)
        return tuple(parts)
    if kind == "array":
        position = draw(st.integers(0, ndim - 1))
        n = shape[position]
        array_shape = draw(shapes(min_dims=1, max_dims=2))
        array = draw(hnp.arrays(np.int64, array_shape, elements=st.integers(-n, n - 1)))
        lead = tuple(draw(_slice(m)) for m in shape[:position])
        return (*lead, array)
    if kind == "pairs":  # x[rows, cols]: pairs, repeats allowed
        length = draw(st.integers(1, 4))
        rows, cols = (
            draw(hnp.arrays(np.int64, (length,), elements=st.integers(-n, n - 1)))
            for n in shape[:2]
        )
        return (rows, cols)
    k = draw(st.integers(1, ndim))  # a boolean mask over the first k dimensions
    return (draw(hnp.arrays(np.bool_, shape[:k])),)


@st.composite
def getitem_spec(draw):
    shape = draw(shapes(min_dims=1))
    return (shape,), {"index": draw(index_for(shape))}


@st.composite
def scatter_spec(draw):
    shape = draw(shapes(min_dims=1))
    index = draw(index_for(shape))
    return (np.empty(shape)[index].shape,), {"index": index, "shape": shape}


@st.composite
def stack_spec(draw):
    shape = draw(shapes())
    count = draw(st.integers(1, 3))
    return (shape,) * count, {"dim": draw(_dim_in(len(shape) + 1))}


@st.composite
def cat_spec(draw):
    shape = list(draw(shapes(min_dims=1)))
    dim = draw(_dim_in(len(shape)))
    out = []
    for _ in range(draw(st.integers(1, 3))):
        shape[dim] = draw(st.integers(1, MAX_SIDE))
        out.append(tuple(shape))
    return tuple(out), {"dim": dim}


@st.composite
def matmul_spec(draw):
    """Every PyTorch matmul rule: vector-vector, matrix-vector, vector-matrix, matrix-matrix,
    and batched operands (of either kind, vectors included) with broadcast batch dims."""
    n, k, m = (draw(st.integers(1, MAX_SIDE)) for _ in range(3))
    kind_a, kind_b = (draw(st.sampled_from(["vector", "matrix", "batched"])) for _ in range(2))
    batch_a, batch_b = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=2, max_side=2)
    ).input_shapes
    a = {"vector": (k,), "matrix": (n, k), "batched": (*batch_a, n, k)}[kind_a]
    b = {"vector": (k,), "matrix": (k, m), "batched": (*batch_b, k, m)}[kind_b]
    return (a, b), {}


@st.composite
def dot_spec(draw):
    n = draw(st.integers(1, MAX_SIDE))
    return ((n,), (n,)), {}


@st.composite
def class_targets(draw):
    """cross_entropy with class indices: input (C,) with a 0-d target, or (N, C) with (N,)."""
    classes = draw(st.integers(1, 4))
    batch = draw(st.one_of(st.just(()), st.tuples(st.integers(1, 3))))
    target = draw(hnp.arrays(np.int64, batch, elements=st.integers(0, classes - 1)))
    reduction = draw(st.sampled_from(["mean", "sum", "none"]))
    return ((*batch, classes),), {"target": target, "reduction": reduction}


@st.composite
def class_probabilities(draw):
    shape = draw(shapes(min_dims=1, max_dims=2))
    return (shape, shape), {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))}


@st.composite
def unsqueeze_spec(draw):
    shape = draw(shapes())
    return (shape,), {"dim": draw(st.integers(-len(shape) - 1, len(shape)))}


@st.composite
def squeeze_spec(draw):
    shape = draw(shapes())
    dim = draw(st.one_of(st.none(), _dim_in(len(shape)))) if shape else None
    return (shape,), {} if dim is None else {"dim": dim}


@st.composite
def glu_spec(draw):
    """A shape whose size along dim is even."""
    shape = list(draw(shapes(min_dims=1)))
    dim = draw(_dim_in(len(shape)))
    shape[dim] = 2 * draw(st.integers(1, 2))
    return (tuple(shape),), {"dim": dim}


def options(**choices):
    """Parameters drawn from the given choices (a list per parameter)."""
    return st.fixed_dictionaries({name: st.sampled_from(c) for name, c in choices.items()})


REDUCTIONS = st.sampled_from(["mean", "sum", "none"])
# torch's dtype parameter of a reduction, a softmax, a scan: what it computes in (float64, the
# inputs' own, here: finite differences need it; tests/engine/test_engine_signatures.py
# compares float32 with torch's)
TYPED = options(dtype=[None, "float64"])
CLAMP_BOUNDS = st.sampled_from([{"min": -0.5}, {"max": 0.5}, {"min": -0.5, "max": 0.5}])


REDUCTIONS_KL = st.sampled_from(["mean", "batchmean", "sum", "none"])


def signs(shape) -> st.SearchStrategy:
    """A target of labels 1 and -1."""
    return hnp.arrays(np.float64, shape, elements=st.sampled_from([1.0, -1.0]))


@st.composite
def loss_spec(draw, **options):
    """Input and target of one shape, a reduction, and options drawn from ``options``."""
    shape = draw(shapes())
    params = {name: draw(strategy) for name, strategy in options.items()}
    return (shape, shape), {"reduction": draw(REDUCTIONS), **params}


@st.composite
def signed_target_spec(draw, **options):
    """An input and a target of labels +-1 (a parameter: torch differentiates no target)."""
    shape = draw(shapes())
    params = {name: draw(strategy) for name, strategy in options.items()}
    return (shape,), {"target": draw(signs(shape)), "reduction": draw(REDUCTIONS), **params}


@st.composite
def gaussian_nll_spec(draw):
    """var shaped like input, like it without its last dim, or with a last dim of 1."""
    shape = draw(shapes())
    kinds = ["same"] + (["dropped", "one"] if shape else [])
    kind = draw(st.sampled_from(kinds))
    var = {"same": shape, "dropped": shape[:-1], "one": shape[:-1] + (1,)}[kind]
    params = {"full": draw(st.booleans()), "reduction": draw(REDUCTIONS)}
    return (shape, shape, var), params


@st.composite
def along_pair_spec(draw):
    """Two same-shaped inputs of at least one dim, and a dim."""
    shape = draw(shapes(min_dims=1))
    return (shape, shape), {"dim": draw(_dim_in(len(shape)))}


@st.composite
def pairwise_spec(draw):
    shape = draw(shapes())
    p = draw(st.sampled_from([1.0, 2.0, 3.0]))
    return (shape, shape), {"p": p, "keepdim": draw(st.booleans())}


@st.composite
def rows_spec(draw, count, signed=False, **options):
    """``count`` inputs of rows (N, D) or one row (D), with a +-1 target per row."""
    shape = draw(st.sampled_from([(2, 3), (3,), (1, 2), (3, 2)]))
    params = {name: draw(strategy) for name, strategy in options.items()}
    if signed:
        params["target"] = draw(signs(shape[:-1]))
    return (shape,) * count, {"reduction": draw(REDUCTIONS), **params}


@st.composite
def ranking_spec(draw):
    shape = draw(shapes())
    margin = draw(st.sampled_from([0.0, 0.5]))
    return (shape, shape), {
        "target": draw(signs(shape)),
        "margin": margin,
        "reduction": draw(REDUCTIONS),
    }


@st.composite
def nll_spec(draw, smoothing=False):
    """Class indices for (C), (N, C) or (N, C, d): some equal to ignore_index, never all."""
    classes = draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,), (3,), (2, 2)]))
    target = draw(hnp.arrays(np.int64, batch, elements=st.integers(0, classes - 1)))
    ignore = draw(st.sampled_from([-100, 0]))
    if ignore == 0 and np.all(target == 0):
        ignore = -100
    shape = (classes,) if not batch else (batch[0], classes, *batch[1:])
    params = {"target": target, "reduction": draw(REDUCTIONS), "ignore_index": ignore}
    if smoothing:
        params["label_smoothing"] = draw(st.sampled_from([0.0, 0.1, 0.5]))
    return (shape,), params


@st.composite
def smoothed_probabilities(draw):
    shape = draw(st.sampled_from([(3,), (2, 3), (2, 3, 2)]))
    smoothing = draw(st.sampled_from([0.1, 0.5]))
    return (shape, shape), {"reduction": draw(REDUCTIONS), "label_smoothing": smoothing}


@st.composite
def statistics_spec(draw):
    """var and std: sides of at least 2 (so correction 1 leaves a degree of freedom)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=MAX_SIDE))
    dim = draw(st.one_of(st.none(), _dim_in(len(shape))))
    form = draw(st.sampled_from(["default", "correction", "unbiased"]))
    params = {"dim": dim, "keepdim": draw(st.booleans())}
    if form == "correction":
        params["correction"] = draw(st.sampled_from([0, 1, 0.5]))
    elif form == "unbiased":
        params["unbiased"] = draw(st.booleans())
    return (shape,), params


# -- torch counterparts -------------------------------------------------------------------------


def torch_module():
    return importlib.import_module("torch")


def torch_index(index):
    torch = torch_module()
    return tuple(torch.from_numpy(i) if isinstance(i, np.ndarray) else i for i in index)


def _all_dims(x, dim):
    return tuple(range(x.ndim)) if dim is None else dim


def _t_reduce(name):
    def call(x, dim=None, keepdim=False, **params):
        return getattr(torch_module(), name)(x, _all_dims(x, dim), keepdim=keepdim, **params)

    return call


def _t_typed(call):
    """``call`` given torch's dtype where the row gives a dtype's name (``dtype="float64"``)."""

    def run(*xs, dtype=None, **params):
        if dtype is not None:
            params["dtype"] = getattr(torch_module(), dtype)
        return call(*xs, **params)

    return run


def _typed_along(name, domain):
    """The row of an operation along a dim that takes torch's dtype (softmax, cumsum)."""
    return OpRow(
        name, getattr(gc, name), domain, with_params(along_dim(), TYPED), _t_typed(_t(name))
    )


def _t_prod(x, dim=None, keepdim=False, dtype=None):
    dims = _all_dims(x, dim)
    dims = (dims,) if isinstance(dims, int) else dims
    if x.ndim == 0:
        return x.prod(dtype=dtype)
    axes = {d % x.ndim for d in dims}
    out = x
    for d in sorted(axes, reverse=True):
        out = out.prod(d, keepdim=True, dtype=dtype)
    if not keepdim:
        out = out.reshape([n for i, n in enumerate(out.shape) if i not in axes])
    return out


def _t_norm(p):
    def call(x, dim=None, keepdim=False):
        return torch_module().linalg.vector_norm(x, p, dim=dim, keepdim=keepdim)

    return call


def _t_scatter(g, index, shape):
    # The adjoint of indexing, as torch computes it: the gradient of x[index] w.r.t. x.
    torch = torch_module()
    x = torch.zeros(shape, dtype=g.dtype, requires_grad=True)
    (out,) = torch.autograd.grad(x[torch_index(index)], x, g, create_graph=True)
    return out


def _t_functional(name, **fixed):
    def call(*xs, **params):
        return getattr(torch_module().nn.functional, name)(*xs, **fixed, **params)

    return call


def _t(name):
    def call(*xs, **params):
        return getattr(torch_module(), name)(*xs, **params)

    return call


def _t_with_target(name):
    """A torch loss whose target is a parameter (a numpy array)."""

    def call(*xs, target, **params):
        target = torch_module().from_numpy(np.asarray(target))
        return getattr(torch_module().nn.functional, name)(*xs, target, **params)

    return call


def _gc_with_target(function):
    def call(*xs, target, **params):
        return function(*xs, gc.Tensor(np.asarray(target, dtype=xs[0].dtype)), **params)

    return call


def _t_statistic(name):
    def call(x, dim=None, keepdim=False, **options):
        return getattr(torch_module(), name)(x, dim, keepdim=keepdim, **options)

    return call


# -- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpRow:
    """One table line. ``fn(*inputs, **params)`` computes the op on gradcli tensors."""

    name: str
    fn: Callable[..., gc.Tensor]
    domains: Domain | tuple[Domain, ...]
    spec: Any = field(default_factory=one)
    torch: Callable | str | None = "same"  # "same": torch.<name> with the same arguments
    prims: tuple[str, ...] | None = None  # default: (name,) when name is a primitive

    @property
    def primitives(self) -> tuple[str, ...]:
        if self.prims is not None:
            return self.prims
        return (self.name,) if self.name in gc.PRIMITIVES else ()

    def torch_fn(self) -> Callable | None:
        if self.torch == "same":
            return _t(self.name)
        return self.torch

    def cases(self):
        """A hypothesis strategy of ``Case``s of this op."""
        return st.tuples(self.spec, st.integers(0, 2**32 - 1)).map(
            lambda t: Case.build(self, t[0][0], t[0][1], t[1])
        )


@dataclass
class Case:
    op: OpRow
    shapes: tuple
    params: dict
    seed: int
    inputs: list[np.ndarray]

    @classmethod
    def build(cls, op: OpRow, shapes, params, seed) -> Case:
        domains = op.domains if isinstance(op.domains, tuple) else (op.domains,) * len(shapes)
        assert len(domains) == len(shapes), op.name
        inputs = sample_inputs(domains, shapes, np.random.default_rng(seed))
        return cls(op, tuple(shapes), params, seed, inputs)

    def fn(self, *xs):
        return self.op.fn(*xs, **self.params)

    def torch_fn(self) -> Callable | None:
        f = self.op.torch_fn()
        return None if f is None else partial(f, **self.params)

    def __repr__(self) -> str:
        return f"Case({self.op.name}, shapes={self.shapes}, params={self.params}, seed={self.seed})"


def _stack(*xs, dim):
    return gc.stack(list(xs), dim)


def _cat(*xs, dim):
    return gc.cat(list(xs), dim)


def _where(a, b, condition):
    return gc.where(condition, a, b)


def _t_where(a, b, condition):
    return torch_module().where(torch_module().from_numpy(condition), a, b)


def _masked_fill(x, value, mask):
    return gc.masked_fill(x, gc.tensor(mask), value)


def _t_masked_fill(x, value, mask):
    return torch_module().masked_fill(x, torch_module().from_numpy(mask), value)


@st.composite
def masked_fill_spec(draw):
    """An input, a 0-d value (differentiated too) and a boolean mask that broadcasts to it."""
    shape = draw(shapes())
    mask_shape = tuple(n if draw(st.booleans()) else 1 for n in shape)
    return (shape, ()), {"mask": draw(hnp.arrays(np.bool_, mask_shape))}


COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def _t_cross_entropy_classes(x, target, **params):
    return torch_module().nn.functional.cross_entropy(
        x, torch_module().from_numpy(target), **params
    )


def _t_cross_entropy_classes_nll(x, target, **params):
    return torch_module().nn.functional.nll_loss(x, torch_module().from_numpy(target), **params)


OPS: list[OpRow] = [
    # element-wise, one input
    OpRow("neg", gc.neg, REAL),
    OpRow("reciprocal", gc.reciprocal, NONZERO),
    OpRow("exp", gc.exp, REAL),
    OpRow("log", gc.log, POS),
    OpRow("log2", gc.log2, POS),
    OpRow("log1p", gc.log1p, Domain(-0.5, 2.0)),
    OpRow("expm1", gc.expm1, REAL),
    OpRow("sqrt", gc.sqrt, POS),
    OpRow("abs", gc.abs, NONZERO),
    OpRow("sign", gc.sign, NONZERO),
    OpRow("masked_fill", _masked_fill, (REAL, REAL), masked_fill_spec(), torch=_t_masked_fill),
    OpRow("sin", gc.sin, REAL),
    OpRow("cos", gc.cos, REAL),
    OpRow("tan", gc.tan, Domain(-1.2, 1.2)),
    OpRow("asin", gc.asin, UNIT),
    OpRow("acos", gc.acos, UNIT),
    OpRow("atan", gc.atan, REAL),
    OpRow("sinh", gc.sinh, REAL),
    OpRow("cosh", gc.cosh, REAL),
    OpRow("tanh", gc.tanh, REAL),
    OpRow("sigmoid", gc.sigmoid, WIDE),
    OpRow("relu", gc.relu, NONZERO),
    OpRow(
        "softplus",
        gc.softplus,
        Domain(-4.0, 4.0, avoid=(2.5,)),  # beta x = threshold at 2.5 for beta 2, threshold 5
        with_params(one(), st.sampled_from([{}, {"beta": 2.0, "threshold": 5.0}])),
        torch=_t_functional("softplus"),
    ),
    OpRow("erf", gc.erf, REAL),
    # element-wise, one input (gradcli/ops/elementwise/pointwise.py)
    OpRow("log10", gc.log10, POS),
    OpRow("exp2", gc.exp2, REAL),
    OpRow("square", gc.square, REAL),
    OpRow("rsqrt", gc.rsqrt, POS),
    # torch 2.13 has no cbrt: the real cube root written out
    OpRow("cbrt", gc.cbrt, NONZERO, torch=lambda x: x.sign() * x.abs() ** (1 / 3)),
    OpRow("floor", gc.floor, WHOLE),
    OpRow("ceil", gc.ceil, WHOLE),
    OpRow("trunc", gc.trunc, WHOLE),
    OpRow("round", gc.round, HALVES, with_params(one(), options(decimals=[0, -1]))),
    OpRow("frac", gc.frac, WHOLE),
    OpRow("erfc", gc.erfc, REAL),
    OpRow("erfinv", gc.erfinv, UNIT),
    OpRow("lgamma", gc.lgamma, Domain(0.3, 4.0), prims=("lgamma", "digamma")),
    OpRow("digamma", gc.digamma, Domain(0.3, 4.0), prims=("digamma", "polygamma")),
    OpRow(
        "logit",
        gc.logit,
        Domain(0.02, 0.98, avoid=(0.1, 0.9)),
        with_params(one(), st.sampled_from([{}, {"eps": 0.1}])),
    ),
    OpRow("sinc", gc.sinc, NONZERO),
    OpRow("deg2rad", gc.deg2rad, WIDE),
    OpRow("rad2deg", gc.rad2deg, REAL),
    OpRow("asinh", gc.asinh, WIDE),
    OpRow("acosh", gc.acosh, Domain(1.2, 3.0)),
    OpRow("atanh", gc.atanh, UNIT),
    OpRow("nan_to_num", gc.nan_to_num, REAL),
    # activations
    OpRow(
        "gelu",
        gc.gelu,
        WIDE,
        with_params(one(), options(approximate=["none", "tanh"])),
        torch=_t_functional("gelu"),
    ),
    OpRow("silu", gc.silu, WIDE, torch=_t_functional("silu")),
    OpRow(
        "elu",
        gc.elu,
        NONZERO,
        with_params(one(), options(alpha=[1.0, 0.5])),
        torch=_t_functional("elu"),
    ),
    OpRow("celu", gc.celu, NONZERO, with_params(one(), options(alpha=[1.0, 2.0]))),
    OpRow("selu", gc.selu, NONZERO),
    OpRow(
        "leaky_relu",
        gc.leaky_relu,
        NONZERO,
        with_params(one(), options(negative_slope=[0.01, 0.2])),
        torch=_t_functional("leaky_relu"),
    ),
    OpRow("relu6", gc.relu6, Domain(-2.0, 8.0, avoid=(0.0, 6.0)), torch=_t_functional("relu6")),
    OpRow(
        "hardtanh",
        gc.hardtanh,
        CLAMP,
        with_params(one(), st.sampled_from([{}, {"min_val": -0.5, "max_val": 0.5}])),
        torch=_t_functional("hardtanh"),
    ),
    # torch's hardsigmoid has no second derivative and a float32 1/6: the same function
    # written with relu6 is the oracle here (tests/engine/test_engine_pointwise.py compares
    # with torch's own at first order)
    OpRow(
        "hardsigmoid",
        gc.hardsigmoid,
        HARD,
        torch=lambda x: torch_module().nn.functional.relu6(x + 3.0) / 6.0,
    ),
    OpRow("hardswish", gc.hardswish, HARD, torch=_t_functional("hardswish")),
    OpRow("mish", gc.mish, WIDE, torch=_t_functional("mish"), prims=("mish", "softplus")),
    OpRow("softsign", gc.softsign, NONZERO, torch=_t_functional("softsign")),
    OpRow("logsigmoid", gc.logsigmoid, WIDE, torch=_t_functional("logsigmoid")),
    OpRow("softmin", gc.softmin, REAL, along_dim(), torch=_t_functional("softmin")),
    OpRow("glu", gc.glu, REAL, glu_spec(), torch=_t_functional("glu")),
    OpRow("clamp", gc.clamp, CLAMP, with_params(one(), CLAMP_BOUNDS)),
    # tensor bounds: distinct values (no ties), min > max at times
    OpRow(
        "clamp_tensors",
        Z.clamp_tensors,
        (DISTINCT, DISTINCT, DISTINCT),
        Z.bounds_spec(),
        torch=Z.torch_clamp_tensors,
        prims=("where",),
    ),
    OpRow("clamp_min", gc.clamp_min, (DISTINCT, DISTINCT), Z.bounds_spec(1)),
    OpRow("clamp_max", gc.clamp_max, CLAMP, with_params(one(), options(max=[0.5, -0.5]))),
    # element-wise, broadcasting
    # torch's alpha: other scaled first
    OpRow("add", gc.add, (REAL, REAL), with_params(broadcast(2), options(alpha=[1, 2.5]))),
    OpRow("sub", gc.sub, (REAL, REAL), with_params(broadcast(2), options(alpha=[1, -0.5]))),
    # torch.rsub, and 2 - x: other - alpha * input
    OpRow("rsub", gc.rsub, (REAL, REAL), with_params(broadcast(2), options(alpha=[1, -0.5]))),
    OpRow("mul", gc.mul, (REAL, REAL), broadcast(2)),
    OpRow("div", gc.div, (REAL, NONZERO), broadcast(2)),
    # the quotient rounded: |input / other| within (0.05, 0.94), away from whole numbers
    OpRow(
        "div_rounded",
        gc.div,
        (DIVIDEND, DIVISOR),
        with_params(broadcast(2), options(rounding_mode=["trunc", "floor"])),
        torch=_t("div"),
    ),
    OpRow("pow", gc.pow, (POS, REAL), broadcast(2)),
    OpRow("pow_scalar_exponent", lambda x: x**3.0, REAL, torch=lambda x: x**3.0, prims=("pow",)),
    OpRow("rpow", lambda x: 2.0**x, REAL, torch=lambda x: 2.0**x, prims=("pow",)),
    OpRow("maximum", gc.maximum, (DISTINCT, DISTINCT), broadcast(2)),
    OpRow("minimum", gc.minimum, (DISTINCT, DISTINCT), broadcast(2)),
    OpRow("where", _where, (REAL, REAL), where_spec(), torch=_t_where),
    OpRow("atan2", gc.atan2, (NONZERO, REAL), broadcast(2)),  # input away from the branch cut
    OpRow("hypot", gc.hypot, (NONZERO, REAL), broadcast(2)),
    OpRow("remainder", gc.remainder, (DIVIDEND, DIVISOR), broadcast(2)),
    OpRow("fmod", gc.fmod, (DIVIDEND, DIVISOR), broadcast(2)),
    OpRow("xlogy", gc.xlogy, (REAL, POS), broadcast(2)),
    OpRow("logaddexp", gc.logaddexp, (WIDE, WIDE), broadcast(2)),
    OpRow("logaddexp2", gc.logaddexp2, (WIDE, WIDE), broadcast(2)),
    OpRow("copysign", gc.copysign, (NONZERO, NONZERO), broadcast(2)),
    OpRow("lerp", gc.lerp, (REAL, REAL, REAL), broadcast(3)),
    OpRow(
        "binary_cross_entropy_with_logits",
        gc.binary_cross_entropy_with_logits,
        (WIDE, PROB),
        with_params(same(2), st.fixed_dictionaries({"reduction": REDUCTIONS})),
        torch=_t_functional("binary_cross_entropy_with_logits"),
    ),
    OpRow(
        "binary_cross_entropy",
        gc.binary_cross_entropy,
        (PROB, PROB),
        with_params(same(2), st.fixed_dictionaries({"reduction": REDUCTIONS})),
        torch=_t_functional("binary_cross_entropy"),
    ),
    OpRow(
        "mse_loss",
        gc.mse_loss,
        (REAL, REAL),
        with_params(same(2), st.fixed_dictionaries({"reduction": REDUCTIONS})),
        torch=_t_functional("mse_loss"),
    ),
    OpRow(
        "cross_entropy_classes",
        gc.cross_entropy,
        REAL,
        class_targets(),
        torch=_t_cross_entropy_classes,
        prims=("log_softmax", "class_nll"),  # (every target kept, a mean or sum: one node)
    ),
    OpRow(
        "cross_entropy_probabilities",
        gc.cross_entropy,
        (REAL, PROB),
        class_probabilities(),
        torch=_t_functional("cross_entropy"),
    ),
    OpRow(
        "cross_entropy_smoothed",
        gc.cross_entropy,
        REAL,
        nll_spec(smoothing=True),
        torch=_t_cross_entropy_classes,
    ),
    OpRow(
        "cross_entropy_smoothed_probabilities",
        gc.cross_entropy,
        (REAL, PROB),
        smoothed_probabilities(),
        torch=_t_functional("cross_entropy"),
    ),
    OpRow(
        "nll_loss",
        gc.nll_loss,
        REAL,
        nll_spec(),
        torch=_t_cross_entropy_classes_nll,
        prims=("class_nll",),
    ),
    # class weights and element weights (no gradient for them, as in torch)
    OpRow(
        "cross_entropy_weighted",
        gc.cross_entropy,
        REAL,
        Z.weighted(nll_spec(smoothing=True)),
        torch=Z.torch_weighted(_t_cross_entropy_classes),
    ),
    OpRow(
        "cross_entropy_weighted_probabilities",
        gc.cross_entropy,
        (REAL, PROB),
        Z.weighted(smoothed_probabilities()),
        torch=Z.torch_weighted(_t_functional("cross_entropy")),
    ),
    OpRow(
        "nll_loss_weighted",
        gc.nll_loss,
        REAL,
        Z.weighted(nll_spec()),
        torch=Z.torch_weighted(_t_cross_entropy_classes_nll),
    ),
    OpRow(
        "binary_cross_entropy_weighted",
        gc.binary_cross_entropy,
        (PROB, PROB),
        Z.weighted(with_params(same(2), st.fixed_dictionaries({"reduction": REDUCTIONS})), True),
        torch=Z.torch_weighted(_t_functional("binary_cross_entropy")),
    ),
    OpRow(
        "binary_cross_entropy_with_logits_weighted",
        gc.binary_cross_entropy_with_logits,
        (WIDE, PROB),
        Z.weighted(
            with_params(same(2), st.fixed_dictionaries({"reduction": REDUCTIONS})), True, True
        ),
        torch=Z.torch_weighted(_t_functional("binary_cross_entropy_with_logits")),
    ),
    OpRow("l1_loss", gc.l1_loss, (DISTINCT, DISTINCT), loss_spec(), torch=_t_functional("l1_loss")),
    OpRow(
        "smooth_l1_loss",
        gc.smooth_l1_loss,
        (REAL, REAL),
        loss_spec(beta=st.sampled_from([0.5, 1.0, 1.5])),
        torch=_t_functional("smooth_l1_loss"),
    ),
    OpRow(
        "huber_loss",
        gc.huber_loss,
        (REAL, REAL),
        loss_spec(delta=st.sampled_from([0.5, 1.0, 1.5])),
        torch=_t_functional("huber_loss"),
    ),
    OpRow(
        "kl_div",
        gc.kl_div,
        (REAL, PROB),
        with_params(
            same(2),
            st.fixed_dictionaries({"reduction": REDUCTIONS_KL, "log_target": st.booleans()}),
        ),
        torch=_t_functional("kl_div"),
    ),
    OpRow(
        "poisson_nll_loss",
        gc.poisson_nll_loss,
        (POS, Domain(0.2, 3.0, avoid=(1.0,))),
        loss_spec(log_input=st.booleans(), full=st.booleans()),
        torch=_t_functional("poisson_nll_loss"),
    ),
    OpRow(
        "gaussian_nll_loss",
        gc.gaussian_nll_loss,
        (REAL, REAL, POS),
        gaussian_nll_spec(),
        torch=_t_functional("gaussian_nll_loss"),
    ),
    OpRow(
        "soft_margin_loss",
        _gc_with_target(gc.soft_margin_loss),
        REAL,
        signed_target_spec(),
        torch=_t_with_target("soft_margin_loss"),
    ),
    OpRow(
        "hinge_embedding_loss",
        _gc_with_target(gc.hinge_embedding_loss),
        Domain(-2.0, 2.0, avoid=(0.5, 1.0)),
        signed_target_spec(margin=st.sampled_from([1.0, 0.5])),
        torch=_t_with_target("hinge_embedding_loss"),
    ),
    OpRow(
        "margin_ranking_loss",
        _gc_with_target(gc.margin_ranking_loss),
        (DISTINCT, DISTINCT),
        ranking_spec(),
        torch=_t_with_target("margin_ranking_loss"),
    ),
    OpRow(
        "cosine_embedding_loss",
        _gc_with_target(gc.cosine_embedding_loss),
        (REAL, REAL),
        rows_spec(2, signed=True, margin=st.sampled_from([0.0, -0.5])),
        torch=_t_with_target("cosine_embedding_loss"),
    ),
    OpRow(
        "triplet_margin_loss",
        gc.triplet_margin_loss,
        (REAL, REAL, REAL),
        rows_spec(3, swap=st.booleans(), margin=st.sampled_from([1.0, 3.0])),
        torch=_t_functional("triplet_margin_loss"),
    ),
    OpRow(
        "cosine_similarity",
        gc.cosine_similarity,
        (NONZERO, NONZERO),
        along_pair_spec(),
        torch=_t_functional("cosine_similarity"),
    ),
    OpRow(
        "normalize",
        gc.normalize,
        NONZERO,
        with_params(along_dim(), options(p=[2.0, 1.0, 3.0])),
        torch=_t_functional("normalize"),
    ),
    OpRow(
        "pairwise_distance",
        gc.pairwise_distance,
        (DISTINCT, DISTINCT),
        pairwise_spec(),
        torch=_t_functional("pairwise_distance"),
    ),
    # broadcasting helpers
    OpRow("sum_to", P.sum_to, REAL, sum_to_spec(), torch=lambda x, shape: x.sum_to_size(shape)),
    OpRow("expand", gc.expand, REAL, expand_spec(), torch=lambda x, shape: x.expand(shape)),
    # reductions
    OpRow("sum", gc.sum, REAL, with_params(reduction(), TYPED), torch=_t_typed(_t_reduce("sum"))),
    OpRow(
        "mean", gc.mean, REAL, with_params(reduction(), TYPED), torch=_t_typed(_t_reduce("mean"))
    ),
    OpRow("prod", gc.prod, NONZERO, with_params(reduction(), TYPED), torch=_t_typed(_t_prod)),
    OpRow("amax", gc.amax, DISTINCT, reduction(), torch=_t_reduce("amax")),
    OpRow("amin", gc.amin, DISTINCT, reduction(), torch=_t_reduce("amin")),
    OpRow("logsumexp", gc.logsumexp, REAL, reduction(), torch=_t_reduce("logsumexp")),
    OpRow("norm", gc.norm, NONZERO, reduction(), torch=_t_norm(2)),
    OpRow("norm_p1", partial(gc.norm, p=1), NONZERO, reduction(), torch=_t_norm(1)),
    OpRow(
        "norm_inf", partial(gc.norm, p=math.inf), DISTINCT_ABS, reduction(), torch=_t_norm(math.inf)
    ),
    OpRow("norm_p3", partial(gc.norm, p=3), NONZERO, reduction(), torch=_t_norm(3)),
    *[_typed_along(name, REAL) for name in ("softmax", "log_softmax")],
    OpRow("var", gc.var, REAL, statistics_spec(), torch=_t_statistic("var")),
    OpRow("std", gc.std, REAL, statistics_spec(), torch=_t_statistic("std")),
    _typed_along("cumsum", REAL),
    _typed_along("cumprod", NONZERO),
    OpRow("logcumsumexp", gc.logcumsumexp, REAL, along_dim()),
    # selections and operations with several results (gradcli/ops/reductions/selection.py): each
    # result is a row; the indices are rows of INDICES below
    OpRow("take_along", T.take_along, REAL, T.take_along_spec(), torch=T.torch_take_along),
    OpRow("put_along", T.put_along, REAL, T.put_along_spec(), torch=T.torch_put_along),
    *[
        OpRow(
            name,
            T.result(getattr(gc, name), 0),
            DISTINCT,
            T.extreme_spec(),
            torch=T.torch_extreme(name, 0),
            prims=("take_along",),
        )
        for name in ("max", "min", "median", "nanmedian")
    ],
    OpRow(
        "sort",
        T.result(gc.sort, 0),
        DISTINCT,
        T.sort_spec(),
        torch=T.torch_result("sort", 0),
        prims=("take_along",),
    ),
    OpRow(
        "topk",
        T.result(gc.topk, 0),
        DISTINCT,
        T.topk_spec(),
        torch=T.torch_result("topk", 0),
        prims=("take_along",),
    ),
    OpRow(
        "kthvalue",
        T.result(gc.kthvalue, 0),
        DISTINCT,
        T.kthvalue_spec(),
        torch=T.torch_result("kthvalue", 0),
        prims=("take_along",),
    ),
    OpRow(
        "mode",
        T.result(gc.mode, 0),
        DISTINCT,
        T.extreme_spec(dim_none=False),
        torch=T.torch_extreme("mode", 0),
        prims=("take_along",),
    ),
    *[
        OpRow(
            name,
            gc.OPS[name].call,
            DISTINCT,
            T.running_spec(),
            torch=T.torch_result(name, 0),
            prims=("take_along",),
        )
        for name in ("cummax", "cummin")
    ],
    OpRow(
        "var_mean",
        T.result(gc.var_mean, 0),
        REAL,
        statistics_spec(),
        torch=T.torch_result("var_mean", 0),
        prims=("var",),
    ),
    OpRow(
        "var_mean_mean",
        T.result(gc.var_mean, 1),
        REAL,
        statistics_spec(),
        torch=T.torch_result("var_mean", 1),
        prims=("mean",),
    ),
    OpRow(
        "std_mean",
        T.result(gc.std_mean, 0),
        REAL,
        statistics_spec(),
        torch=T.torch_result("std_mean", 0),
        prims=("var",),
    ),
    OpRow(
        "std_mean_mean",
        T.result(gc.std_mean, 1),
        REAL,
        statistics_spec(),
        torch=T.torch_result("std_mean", 1),
        prims=("mean",),
    ),
    *[
        OpRow(
            name,
            T.piece(gc.OPS[name].call),
            REAL,
            spec,
            torch=T.torch_piece(name),
            prims=("getitem",),
        )
        for name, spec in (
            ("split", T.split_spec()),
            ("chunk", T.chunk_spec()),
            ("unbind", T.unbind_spec()),
        )
    ],
    # shapes, indexing, joining
    OpRow("reshape", lambda x, shape: gc.reshape(x, shape), REAL, reshape_spec()),
    OpRow("transpose", gc.transpose, REAL, transpose_spec()),
    OpRow("matrix_transpose", gc.transpose, REAL, one(max_dims=2), torch=lambda x: x.t(), prims=()),
    OpRow(
        "getitem", gc.getitem, REAL, getitem_spec(), torch=lambda x, index: x[torch_index(index)]
    ),
    OpRow("getitem_backward", RA.getitem_backward, REAL, scatter_spec(), torch=_t_scatter),
    # indexing by tensors (gradcli/ops/arrays/indexing.py): the index is a parameter
    OpRow(
        "index_tensor",
        I.index_call,
        REAL,
        getitem_spec(),
        torch=lambda x, index: x[torch_index(index)],
    ),
    OpRow("index_put", I.index_put_call, REAL, scatter_spec(), torch=_t_scatter),
    OpRow(
        "gather", I.gather(), REAL, I.gather_spec(), torch=I.gather(True), prims=("index_tensor",)
    ),
    OpRow(
        "take_along_dim",
        I.take_along_dim(),
        REAL,
        I.take_along_dim_spec(),
        torch=I.take_along_dim(True),
        prims=("index_tensor",),
    ),
    OpRow(
        "index_select",
        I.index_select(),
        REAL,
        I.index_select_spec(),
        torch=I.index_select(True),
        prims=("index_tensor",),
    ),
    OpRow(
        "scatter",
        I.scatter("scatter"),
        (REAL, REAL),
        I.scatter_spec(unique=True),
        torch=I.scatter("scatter", True),
        prims=("index_put", "where"),
    ),
    OpRow(
        "scatter_add",
        I.scatter("scatter_add"),
        (REAL, REAL),
        I.scatter_spec(),
        torch=I.scatter("scatter_add", True),
        prims=("index_put",),
    ),
    OpRow(
        "index_add",
        I.index_add(),
        (REAL, REAL),
        I.index_add_spec(),
        torch=I.index_add(True),
        prims=("index_put",),
    ),
    OpRow(
        "setitem",
        I.setitem(),
        (REAL, REAL),
        I.setitem_spec(),
        torch=I.setitem(True),
        prims=("index_put", "where"),
    ),
    OpRow(
        "masked_select",
        I.masked_select(),
        REAL,
        I.masked_select_spec(),
        torch=I.masked_select(True),
        prims=("index_tensor",),
    ),
    OpRow(
        "stack", _stack, REAL, stack_spec(), torch=lambda *xs, dim: torch_module().stack(xs, dim)
    ),
    OpRow("cat", _cat, REAL, cat_spec(), torch=lambda *xs, dim: torch_module().cat(xs, dim)),
    OpRow("unsqueeze", gc.unsqueeze, REAL, unsqueeze_spec()),
    OpRow("squeeze", gc.squeeze, REAL, squeeze_spec()),
    OpRow("flatten", gc.flatten, REAL, Z.flatten_spec()),
    OpRow("unflatten", gc.unflatten, REAL, Z.unflatten_spec()),
    OpRow("expand_as", Z.expand_as, REAL, Z.expand_as_spec(), torch=Z.torch_expand_as),
    OpRow("repeat", Z.repeat, REAL, Z.repeat_spec(), torch=Z.torch_repeat),
    OpRow("tile", gc.tile, REAL, Z.tile_spec()),
    OpRow(
        "repeat_interleave",
        gc.repeat_interleave,
        REAL,
        Z.repeat_interleave_spec(),
        torch=Z.torch_repeat_interleave,
    ),
    OpRow("pad", gc.pad, REAL, Z.pad_spec(), torch=Z.torch_pad),
    OpRow("triu", gc.triu, REAL, L.triangle_spec()),
    OpRow("tril", gc.tril, REAL, L.triangle_spec()),
    OpRow("diagonal", gc.diagonal, REAL, L.diagonal_spec()),
    OpRow(
        "diagonal_backward",
        diagonal_backward,
        REAL,
        L.diagonal_backward_spec(),
        torch=L.torch_diagonal_backward,
    ),
    OpRow("diag_embed", gc.diag_embed, REAL, L.diag_embed_spec()),
    OpRow("diag", gc.diag, REAL, L.diag_spec()),
    OpRow("movedim", gc.movedim, REAL, L.movedim_spec()),
    OpRow(
        "permute",
        lambda x, dims: gc.permute(x, dims),
        REAL,
        L.permute_spec(),
        torch=lambda x, dims: x.permute(dims),
    ),
    OpRow("adjoint", gc.adjoint, REAL, one(min_dims=2)),
    OpRow("mT", lambda x: x.mT, REAL, one(min_dims=2), torch=lambda x: x.mT, prims=()),
    OpRow("flip", gc.flip, REAL, L.flip_spec(), torch=L.torch_flip),
    OpRow("fliplr", gc.fliplr, REAL, one(min_dims=2)),
    OpRow("flipud", gc.flipud, REAL, one(min_dims=1)),
    OpRow("roll", gc.roll, REAL, L.roll_spec()),
    OpRow("narrow", gc.narrow, REAL, L.narrow_spec()),
    OpRow("atleast_1d", gc.atleast_1d, REAL),
    OpRow("atleast_2d", gc.atleast_2d, REAL),
    OpRow("atleast_3d", gc.atleast_3d, REAL),
    OpRow("hstack", L.joined(gc.hstack), REAL, L.hstack_spec(), torch=L.torch_joined("hstack")),
    OpRow("vstack", L.joined(gc.vstack), REAL, L.vstack_spec(), torch=L.torch_joined("vstack")),
    OpRow(
        "column_stack",
        L.joined(gc.column_stack),
        REAL,
        L.column_stack_spec(),
        torch=L.torch_joined("column_stack"),
    ),
    OpRow(
        "meshgrid",
        L.meshgrid,
        REAL,
        L.meshgrid_spec(),
        torch=L.torch_meshgrid,
        prims=("reshape", "expand"),
    ),
    # products
    OpRow("matmul", gc.matmul, (REAL, REAL), matmul_spec()),
    OpRow("dot", gc.dot, (REAL, REAL), dot_spec()),
    OpRow("mm", gc.mm, (REAL, REAL), L.pair("nk", "km")),
    OpRow("mv", gc.mv, (REAL, REAL), L.pair("nk", "k")),
    OpRow("bmm", gc.bmm, (REAL, REAL), L.pair("bnk", "bkm")),
    OpRow("trace", gc.trace, REAL, L.matrix()),
    OpRow("outer", gc.outer, (REAL, REAL), L.pair("n", "m")),
    OpRow("inner", gc.inner, (REAL, REAL), L.inner_spec()),
    OpRow("tensordot", gc.tensordot, (REAL, REAL), L.tensordot_spec()),
    OpRow("kron", gc.kron, (REAL, REAL), L.kron_spec()),
    OpRow("cross", gc.cross, (REAL, REAL), L.cross_spec()),
    OpRow("einsum", Z.einsum, REAL, Z.einsum_spec(), torch=Z.torch_einsum),
    OpRow(
        "det",
        lambda a: gc.det(L.well(a)),
        Domain(-0.5, 0.5),
        L.square(),
        torch=lambda a: torch_module().linalg.det(L.well(a)),
        prims=("det", "cofactor"),
    ),
    OpRow(
        "inv",
        lambda a: gc.inv(L.well(a)),
        Domain(-0.5, 0.5),
        L.square(),
        torch=lambda a: torch_module().linalg.inv(L.well(a)),
    ),
    OpRow(
        "matrix_power",
        lambda a, n: gc.matrix_power(L.well(a), n),
        Domain(-0.5, 0.5),
        Z.matrix_power_spec(),
        torch=lambda a, n: torch_module().linalg.matrix_power(L.well(a), n),
        prims=("matmul",),
    ),
    OpRow(
        "solve",
        lambda a, b: gc.solve(L.well(a), b),
        (Domain(-0.5, 0.5), REAL),
        L.solve_spec(),
        torch=lambda a, b: torch_module().linalg.solve(L.well(a), b),
    ),
    OpRow(
        "cholesky",
        lambda x, upper: gc.cholesky(L.spd(x), upper=upper),
        REAL,
        L.cholesky_spec(),
        torch=lambda x, upper: torch_module().linalg.cholesky(L.spd(x), upper=upper),
    ),
    # decompositions (gradcli/ops/linalg/decompositions.py): a row per result, on inputs where it
    # is differentiable; singular vectors through a function that their signs do not change
    *[
        OpRow(
            name,
            L.decomposed(gc.slogdet, 1, arrange),
            Domain(-0.5, 0.5),
            L.square(),
            torch=L.torch_decomposed("slogdet", 1, arrange),
            prims=("slogdet", "cofactor", "det"),
        )
        for name, arrange in (("slogdet", L.well), ("slogdet_negative", L.reflected))
    ],
    OpRow(
        "eigh",
        L.decomposed(gc.eigh, 0, L.separated),
        Domain(-0.5, 0.5),
        L.eigh_spec(),
        torch=L.torch_decomposed("eigh", 0, L.separated),
    ),
    OpRow(
        "eigh_eigenvectors",
        L.decomposed(gc.eigh, 1, L.separated, L.column_gauge),
        Domain(-0.5, 0.5),
        L.eigh_spec(),
        torch=L.torch_decomposed("eigh", 1, L.separated, L.column_gauge),
        prims=("eigh",),
    ),
    OpRow(
        "qr",
        L.decomposed(gc.qr, 0, L.spread, L.column_gauge),
        Domain(-0.5, 0.5),
        L.qr_spec(),
        torch=L.torch_decomposed("qr", 0, L.spread, L.column_gauge),
        prims=("qr", "inv"),
    ),
    OpRow(
        "qr_R",
        L.decomposed(gc.qr, 1, L.spread, L.row_gauge),
        Domain(-0.5, 0.5),
        L.qr_spec(),
        torch=L.torch_decomposed("qr", 1, L.spread, L.row_gauge),
        prims=("qr",),
    ),
    *[
        OpRow(
            name,
            L.decomposed(partial(gc.svd, full_matrices=False), k, L.spread, gauge),
            Domain(-0.5, 0.5),
            L.rectangular(),
            torch=L.torch_decomposed("svd", k, L.spread, gauge, full_matrices=False),
            prims=("svd",),
        )
        for name, k, gauge in (
            ("svd", 0, L.column_gauge),
            ("svd_S", 1, None),
            ("svd_Vh", 2, L.row_gauge),
        )
    ],
    # svdvals, eigvalsh, pinv (gradcli/ops/linalg/spectra.py), on the same well-spread inputs
    OpRow(
        "svdvals",
        lambda a: gc.svdvals(L.spread(a)),
        Domain(-0.5, 0.5),
        L.rectangular(),
        torch=lambda a: torch_module().linalg.svdvals(L.spread(a)),
        prims=("svd",),
    ),
    OpRow(
        "eigvalsh",
        lambda a, UPLO: gc.eigvalsh(L.separated(a), UPLO=UPLO),
        Domain(-0.5, 0.5),
        L.eigh_spec(),
        torch=lambda a, UPLO: torch_module().linalg.eigvalsh(L.separated(a), UPLO=UPLO),
        prims=("eigh",),
    ),
    OpRow(
        "pinv",
        lambda a, **params: gc.pinv(L.spread(a), **params),
        Domain(-0.5, 0.5),
        L.pinv_spec(),
        torch=lambda a, **params: torch_module().linalg.pinv(L.spread(a), **params),
    ),
    OpRow(
        "pinv_hermitian",
        lambda a: gc.pinv(L.spd(a), hermitian=True),
        Domain(-0.5, 0.5),
        L.square(),
        torch=lambda a: torch_module().linalg.pinv(L.spd(a), hermitian=True),
        prims=("pinv",),
    ),
    OpRow(
        "vector_norm",
        gc.vector_norm,
        NONZERO,
        L.vector_norm_spec(),
        torch=L.torch_linalg("vector_norm"),
    ),
    OpRow(
        "matrix_norm",
        gc.matrix_norm,
        NONZERO,
        L.matrix_norm_spec(),
        torch=L.torch_linalg("matrix_norm"),
    ),
    OpRow(
        "matrix_norm_singular",
        lambda a, **params: gc.matrix_norm(L.spread(a), **params),
        Domain(-0.5, 0.5),
        L.singular_norm_spec(),
        torch=lambda a, **params: torch_module().linalg.matrix_norm(L.spread(a), **params),
        prims=("svd",),
    ),
    # layers (gradcli/ops/nn/layers.py, convolution.py): composites; the primitives named are
    # those their batched replay takes through (tests/engine/test_engine_batched.py)
    OpRow("linear", gc.linear, REAL, Y.linear_spec(), torch=_t_functional("linear")),
    OpRow(
        "conv2d",
        Y.conv("conv2d"),
        REAL,
        Y.conv_spec(),
        torch=Y.conv("conv2d", torch=True),
        prims=("getitem", "matmul"),
    ),
    OpRow(
        "conv1d", Y.conv("conv1d"), REAL, Y.conv_spec(rank=1), torch=Y.conv("conv1d", torch=True)
    ),
    OpRow(
        "conv3d", Y.conv("conv3d"), REAL, Y.conv_spec(rank=3), torch=Y.conv("conv3d", torch=True)
    ),
    OpRow(
        "conv_transpose2d",
        Y.conv("conv_transpose2d"),
        REAL,
        Y.conv_spec(transposed=True),
        torch=Y.conv("conv_transpose2d", torch=True),
        prims=("getitem_backward",),
    ),
    *(
        OpRow(
            f"conv_transpose{rank}d",
            Y.conv(f"conv_transpose{rank}d"),
            REAL,
            Y.conv_spec(rank=rank, transposed=True),
            torch=Y.conv(f"conv_transpose{rank}d", torch=True),
        )
        for rank in (1, 3)
    ),
    *(
        OpRow(
            f"max_pool{rank}d",
            getattr(gc, f"max_pool{rank}d"),
            DISTINCT,
            Y.pool_spec(rank=rank),
            torch=_t_functional(f"max_pool{rank}d"),
            prims=("where",),
        )
        for rank in (1, 2, 3)
    ),
    *(
        OpRow(
            f"avg_pool{rank}d",
            getattr(gc, f"avg_pool{rank}d"),
            REAL,
            Y.pool_spec(rank=rank, average=True),
            torch=_t_functional(f"avg_pool{rank}d"),
        )
        for rank in (1, 2, 3)
    ),
    OpRow("layer_norm", Y.layer_norm(), DISTINCT, Y.layer_norm_spec(), torch=Y.layer_norm(True)),
    OpRow("group_norm", Y.group_norm(), DISTINCT, Y.group_norm_spec(), torch=Y.group_norm(True)),
    OpRow("batch_norm", Y.batch_norm(), DISTINCT, Y.batch_norm_spec(), torch=Y.batch_norm(True)),
    OpRow("embedding", Y.embedding(), REAL, Y.embedding_spec(), torch=Y.embedding(True)),
    OpRow("dropout", Z.dropout, REAL, Z.dropout_spec(), torch=Z.torch_dropout, prims=("mul",)),
    OpRow(
        "scaled_dot_product_attention",
        gc.scaled_dot_product_attention,
        REAL,
        Y.attention_spec(),
        torch=_t_functional("scaled_dot_product_attention"),
        prims=("softmax",),
    ),
]

# the complex entries, as real functions of the real and imaginary parts
# (tests/engine/test_engine_complex.py takes every complex entry through complex inputs)
for _name, (_function, _spec, _prims) in C.REAL_FUNCTIONS.items():
    _engine, _torch = C._both(_function)
    _domains = (
        (NONZERO, NONZERO)
        if _name == "angle"
        else (POS, REAL)
        if _name == "polar"
        else (REAL, REAL)
    )
    OPS.append(
        OpRow(
            _name,
            _engine,
            _domains,
            broadcast(2) if _spec == "broadcast" else same(2),
            torch=_torch,
            prims=_prims,
        )
    )

# Operations PyTorch does not differentiate (its backward raises): their rows are checked
# by tests/engine/test_engine_pointwise.py, not by the derivative tests.
NO_GRADIENT: list[OpRow] = [
    OpRow("floor_divide", gc.floor_divide, (DIVIDEND, DIVISOR), broadcast(2)),
]


def _positive(function, count=2):
    """``function`` of booleans: its operands' signs (bitwise operations take booleans only)."""
    return lambda *xs: function(*[x > 0 for x in xs[:count]])


# Operations whose results are booleans, and heaviside, detach and the tensors shaped as
# another (zeros_like, ...), which PyTorch does not differentiate:
# their rows are checked by tests/engine/test_engine_logical.py (values against torch, no
# gradient, batched replay), not by the derivative tests.
LOGICAL: list[OpRow] = [
    *[OpRow(name, getattr(gc, name), (REAL, REAL), broadcast(2)) for name in COMPARISONS],
    OpRow("logical_and", gc.logical_and, (REAL, REAL), broadcast(2)),
    OpRow("logical_or", gc.logical_or, (REAL, REAL), broadcast(2)),
    OpRow("logical_xor", gc.logical_xor, (REAL, REAL), broadcast(2)),
    OpRow("logical_not", gc.logical_not, REAL),
    *[
        OpRow(
            name,
            _positive(getattr(gc, name)),
            (REAL, REAL),
            broadcast(2),
            torch=_positive(_t(name)),
        )
        for name in ("bitwise_and", "bitwise_or", "bitwise_xor")
    ],
    OpRow("bitwise_not", _positive(gc.bitwise_not, 1), REAL, torch=_positive(_t("bitwise_not"), 1)),
    OpRow("isnan", gc.isnan, REAL),
    OpRow("isinf", gc.isinf, REAL),
    OpRow("isfinite", gc.isfinite, REAL),
    OpRow(
        "isclose",
        gc.isclose,
        (REAL, REAL),
        with_params(broadcast(2), options(rtol=[1e-05, 0.5], atol=[1e-08, 0.5])),
    ),
    OpRow("any", gc.any, REAL, reduction(tuple_dims=False)),
    OpRow("all", gc.all, REAL, reduction(tuple_dims=False)),
    OpRow("heaviside", gc.heaviside, (REAL, REAL), broadcast(2)),
    OpRow("detach", gc.detach, REAL, torch=lambda x: x.detach()),
    OpRow("zeros_like", gc.zeros_like, REAL),
    OpRow("ones_like", gc.ones_like, REAL),
    OpRow("full_like", gc.full_like, REAL, with_params(one(), options(fill_value=[2.5, -1.0]))),
]

# Indices (int64, no gradient): argmax, argmin, argsort, and the indices that the operations
# with several results give; checked by tests/engine/test_engine_selection.py (values against
# torch, no gradient, batched replay), not by the derivative tests.
INDICES: list[OpRow] = [
    *[
        OpRow(
            f"{name}_indices",
            T.result(gc.OPS[name].call, 1),
            DISTINCT,
            T.extreme_spec(dim_none=False),
            torch=T.torch_extreme(name, 1),
        )
        for name in ("max", "min", "median", "nanmedian")
    ],
    OpRow(
        "argmax", gc.argmax, DISTINCT, T.extreme_spec(keep_full=True), torch=T.torch_arg("argmax")
    ),
    OpRow(
        "argmin", gc.argmin, DISTINCT, T.extreme_spec(keep_full=True), torch=T.torch_arg("argmin")
    ),
    OpRow("argsort", gc.argsort, DISTINCT, T.sort_spec()),
    OpRow(
        "sort_indices",
        T.result(gc.sort, 1),
        DISTINCT,
        T.sort_spec(),
        torch=T.torch_result("sort", 1),
    ),
    OpRow(
        "topk_indices",
        T.result(gc.topk, 1),
        DISTINCT,
        T.topk_spec(),
        torch=T.torch_result("topk", 1),
    ),
    OpRow(
        "kthvalue_indices",
        T.result(gc.kthvalue, 1),
        DISTINCT,
        T.kthvalue_spec(),
        torch=T.torch_result("kthvalue", 1),
    ),
    OpRow(
        "mode_indices",
        T.result(gc.mode, 1),
        DISTINCT,
        T.extreme_spec(dim_none=False),
        torch=T.torch_extreme("mode", 1),
    ),
    *[
        OpRow(
            f"{name}_indices",
            T.result(gc.OPS[name].call, 1),
            DISTINCT,
            T.running_spec(),
            torch=T.torch_result(name, 1),
        )
        for name in ("cummax", "cummin")
    ],
]


def _whole(function, torch=False):
    """``function`` of integers: its operands times 4, truncated to int64 (bitwise operations
    of integers)."""

    def call(*xs):
        return function(*[(x * 4).to(torch_module().int64 if torch else "int64") for x in xs])

    return call


# Operations whose results are integers (int64), which carry no gradient: their rows are
# checked by tests/engine/test_engine_indexing.py (values and dtypes against torch, no
# gradient, batched replay), not by the derivative tests.
INTEGER: list[OpRow] = [
    OpRow("to", I.to_integer(), REAL, torch=I.to_integer(True)),
    OpRow("one_hot", I.one_hot(), REAL, I.one_hot_spec(), torch=I.one_hot(True)),
    OpRow("nonzero", I.nonzero_of("nonzero"), REAL, torch=I.nonzero_of("nonzero", True)),
    OpRow(
        "argwhere",
        I.nonzero_of("argwhere"),
        REAL,
        torch=I.nonzero_of("argwhere", True),
        prims=("nonzero",),
    ),
    *[
        OpRow(
            f"{name}_integers",
            _whole(getattr(gc, name)),
            (WIDE,) * count,
            broadcast(2) if count == 2 else one(),
            torch=_whole(_t(name), True),
            prims=(name,),
        )
        for name, count in (
            ("bitwise_and", 2),
            ("bitwise_or", 2),
            ("bitwise_xor", 2),
            ("bitwise_not", 1),
        )
    ],
]

OPS_BY_NAME = {op.name: op for op in OPS + NO_GRADIENT + LOGICAL + INDICES + INTEGER}
assert len(OPS_BY_NAME) == (
    len(OPS) + len(NO_GRADIENT) + len(LOGICAL) + len(INDICES) + len(INTEGER)
), "duplicate op names"
