"""Every primitive through the batched replay of a traced pass (compile.run_batched): at each
point of a batch, the value, gradient (reverse rules), second derivative and tangent (forward
rules) equal the eager engine's at that point alone. Shapes include 0-d inputs and negative
dims, since the replay shifts axes for the batch dimension."""

from __future__ import annotations

import numpy as np
import pytest
from engine_checks import FEW
from engine_optable import INTEGER, LOGICAL, NO_GRADIENT, OPS, sample_inputs
from hypothesis import given
from hypothesis import strategies as st

import gradcli as gc
from gradcli import func
from gradcli.engine.compile import NotBatchable, run_batched, trace
from gradcli.ops.numerics import summation

POINTS = 3
BATCHED_OPS = [pytest.param(op, id=op.name) for op in OPS if op.primitives]


def _pass(case, v, w, t):
    """The op's value, its gradient against v, a Hessian-vector product against w and the
    forward-mode tangent along t, all as tensors."""

    def run(*xs):
        for x in xs:
            x.requires_grad = True
        out = case.fn(*xs)
        first = gc.grad((out * gc.tensor(v)).sum(), list(xs), create_graph=True, allow_unused=True)
        first = [gc.Tensor(np.zeros(x.shape)) if g is None else g for g, x in zip(first, xs)]
        inner = gc.tensor(0.0)
        for g, wi in zip(first, w):
            inner = inner + (g * gc.tensor(wi)).sum()
        second = [gc.Tensor(np.zeros(x.shape)) for x in xs]
        if inner.requires_grad:
            found = gc.grad(inner, list(xs), allow_unused=True)
            second = [s if g is None else g for g, s in zip(found, second)]
        plain = [gc.Tensor(x.data) for x in xs]
        _, tangent = gc.jvp(case.fn, plain, [gc.tensor(ti) for ti in t])
        return [out, *first, *second, tangent]

    return run


def test_the_ops_cover_every_primitive():
    # the rows without a gradient are replayed in test_engine_pointwise.py and
    # test_engine_logical.py
    covered = {name for op in OPS + NO_GRADIENT + LOGICAL + INTEGER for name in op.primitives} | {
        "mask"
    }
    assert covered == set(gc.PRIMITIVES)


def _traced_points(op, data):
    """A case of ``op``'s pass traced, the pass, POINTS points, and the points stacked."""
    case = data.draw(op.cases())
    rng = np.random.default_rng(case.seed + 3)
    with gc.no_grad():
        out_shape = case.fn(*[gc.tensor(x) for x in case.inputs]).shape
    v = rng.standard_normal(out_shape)
    w = [rng.standard_normal(x.shape) for x in case.inputs]
    t = [rng.standard_normal(x.shape) for x in case.inputs]
    run = _pass(case, v, w, t)
    tape = trace(run, *case.inputs)
    domains = op.domains if isinstance(op.domains, tuple) else (op.domains,) * len(case.inputs)
    points = [
        sample_inputs(domains, case.shapes, np.random.default_rng(case.seed + 10 + k))
        for k in range(POINTS)
    ]
    stacked = [np.stack([p[i] for p in points]) for i in range(len(case.inputs))]
    return tape, run, points, stacked


@pytest.mark.parametrize("op", BATCHED_OPS)
@FEW
@given(data=st.data())
def test_batched_replay_equals_each_point(op, data):
    tape, run, points, stacked = _traced_points(op, data)
    batched = run_batched(tape, stacked, [True] * len(stacked))
    for k, point in enumerate(points):
        eager = [r.numpy() for r in run(*[gc.tensor(x) for x in point])]
        for got, want in zip(batched, eager):
            assert got[k].shape == want.shape
            np.testing.assert_allclose(got[k], want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("op", BATCHED_OPS)
@FEW
@given(data=st.data())
def test_a_replay_of_each_point_alone_gives_its_own_replays_bits(op, data):
    """``each_alone``: every point's outputs are the bits of the tape replayed at that point
    alone, or the replay refuses a step that has no such rule."""
    tape, _, points, stacked = _traced_points(op, data)
    with np.errstate(all="ignore"):
        try:
            together = run_batched(tape, stacked, [True] * len(stacked), each_alone=True)
        except NotBatchable:
            return
        for k, point in enumerate(points):
            for got, want in zip(together, tape.run(*point)):
                got, want = np.asarray(got[k]), np.asarray(want)
                assert (got.shape, got.dtype) == (want.shape, want.dtype)
                assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("activation", ["sigmoid", "silu"])
def test_a_step_whose_values_follow_each_elements_place_is_not_replayed_each_alone(activation):
    """torch's float32 sigmoid and silu take SLEEF's exp over whole vectors of 32 elements and
    the C library's over the rest: a point's 37 elements in a batch are not where they are
    alone, so a replay that keeps each point's bits refuses the step; vmap's slices are then
    checked one by one, and its numbers are the batch's."""
    rng = np.random.default_rng(3)
    points = rng.standard_normal((4, 37)).astype(np.float32)
    with summation.torch_order(), gc.default_dtype(np.float32):
        tape = trace(lambda x: [getattr(gc, activation)(x.sin())], points[0])
        with pytest.raises(NotBatchable, match=activation):
            run_batched(tape, [points], [True], each_alone=True)
        found = func.vmap(lambda x: getattr(gc, activation)(x.sin()))(gc.Tensor(points))
        batch = getattr(gc, activation)(gc.Tensor(points).sin())
    assert found.data.tobytes() == batch.data.tobytes()


@pytest.mark.parametrize(
    "a_shape, b_shape, batched, ranks",
    [
        ((4, 3), (5, 3), (False, True), (2, 1)),  # a matrix against a batch of vectors
        ((5, 3), (3, 4), (True, False), (1, 2)),  # a batch of vectors against a matrix
        ((4, 3), (5, 3, 2), (False, True), (2, 2)),  # a matrix against a batch of matrices
        ((5, 4, 3), (3, 2), (True, False), (2, 2)),  # a batch of matrices against a matrix
    ],
)
def test_a_batched_matrix_product_is_the_ops_own_product(a_shape, b_shape, batched, ranks):
    """The batch rule makes its one matrix product with the op's forward, which rounds a float32
    product as torch's does (product_order), not with numpy's product, whose last bits follow
    the machine's BLAS: a vmap's replay then gives the numbers of the product outside it (a
    script comparing the two with torch.allclose saw False on a machine without AVX-512)."""
    from gradcli.ops import batching

    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    made: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def forward(x, y):
        made.append((x.shape, y.shape))
        return np.matmul(x, y)

    out = batching.matmul(forward, {}, [a, b], batched, ranks, 5)
    assert len(made) == 1
    for i in range(5):
        x = a[i] if batched[0] else a
        y = b[i] if batched[1] else b
        np.testing.assert_allclose(out[i], x @ y, rtol=1e-5)
