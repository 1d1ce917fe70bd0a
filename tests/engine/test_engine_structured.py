"""Every row of the op table through the structured Jacobian (engine/structured.py): the
sparsity pattern propagated by the entries' pattern rules covers every non-zero of the true
(dense) Jacobian, and the Jacobian computed from the pattern (colouring, compressed passes,
row scaling) equals the dense one. Then the structured paths themselves, on the programs they
are for."""

from __future__ import annotations

import numpy as np
import pytest
from engine_checks import FEW
from engine_optable import OPS
from hypothesis import given
from hypothesis import strategies as st

import gradcli as gc
from gradcli.engine import structured
from gradcli.engine.compile import trace
from gradcli.engine.structured import (
    JacobianPlan,
    NotStructured,
    Sparse,
    colours_of,
    propagate,
    structured_jacobian,
    valid,
)
from gradcli.ops.patterns import Pattern

ROWS = [pytest.param(op, id=op.name) for op in OPS]


def _dense(fn, inputs) -> list[np.ndarray]:
    """The Jacobian one backward pass per output element, as (outputs, inputs) matrices."""
    blocks = gc.jacobian(fn, [gc.tensor(x) for x in inputs])
    out = int(np.prod(blocks[0].shape[: blocks[0].ndim - inputs[0].ndim], dtype=int))
    return [b.numpy().reshape(out, x.size) for b, x in zip(blocks, inputs)]


def _pattern(fn, inputs) -> np.ndarray:
    """The propagated pattern of the output, as a boolean (outputs, all inputs) matrix."""
    tape = trace(lambda *xs: [fn(*xs)], *inputs)
    sizes = [x.size for x in inputs]
    offsets = np.cumsum([0, *sizes])
    width = int(offsets[-1])
    starts = {s: Pattern.identity(n, int(o), width) for s, n, o in zip(tape.inputs, sizes, offsets)}
    found = propagate(tape, starts)[tape.outputs[0]]
    rows = int(np.prod(tape.shapes[tape.outputs[0]], dtype=int))
    matrix = np.zeros((rows, width), dtype=bool)
    if found is not None:
        r, c = found.pairs()
        matrix[r, c] = True
    return matrix


@pytest.mark.parametrize("op", ROWS)
@FEW
@given(data=st.data())
def test_pattern_covers_and_structured_equals_dense(op, data):
    case = data.draw(op.cases())
    dense = _dense(case.fn, case.inputs)
    pattern = _pattern(case.fn, case.inputs)
    nonzero = np.concatenate([d != 0 for d in dense], axis=1)
    assert not (nonzero & ~pattern).any(), "a non-zero of J outside the declared pattern"
    found = structured_jacobian(case.fn, [gc.tensor(x) for x in case.inputs], force=True)
    for block, want in zip(found.blocks, dense):
        got = block.dense() if isinstance(block, Sparse) else block
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# -- the structured paths ---------------------------------------------------------------------


def _check(fn, *inputs) -> str:
    """The structured Jacobian equals the dense one; returns how it was found."""
    found = structured_jacobian(fn, [gc.tensor(x) for x in inputs])
    for block, want in zip(found.blocks, _dense(fn, list(inputs))):
        got = block.dense() if isinstance(block, Sparse) else block
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    return found.how


def test_row_scaling_of_a_matrix_product_takes_one_pass():
    rng = np.random.default_rng(0)
    A = gc.tensor(rng.standard_normal((6, 5)))
    how = _check(lambda x: gc.tanh(gc.matmul(A, x)) * 2, rng.standard_normal(5))
    assert how.startswith("row scaling")
    how = _check(lambda x: gc.sigmoid(gc.matmul(x, A)), rng.standard_normal(6))
    assert how.startswith("row scaling")


def test_a_product_whose_input_is_read_again_is_coloured_instead():
    rng = np.random.default_rng(1)
    A = gc.tensor(rng.standard_normal((5, 5)))
    with pytest.raises(NotStructured):  # dense: no fewer passes than the dense Jacobian
        structured_jacobian(lambda x: gc.matmul(A, x) + x, gc.tensor(rng.standard_normal(5)))


def test_elementwise_takes_one_forward_pass():
    x = np.linspace(-1, 1, 50)
    found = structured_jacobian(lambda v: gc.sin(v) * gc.exp(-(v**2)), gc.tensor(x))
    assert found.passes == 1
    (block,) = found.blocks
    assert isinstance(block, Sparse)
    np.testing.assert_array_equal(block.rows, np.arange(50))
    np.testing.assert_array_equal(block.cols, np.arange(50))
    want = np.cos(x) * np.exp(-(x**2)) - 2 * x * np.sin(x) * np.exp(-(x**2))
    np.testing.assert_allclose(block.values, want, rtol=1e-12)


def test_a_stencil_takes_three_colours():
    x = np.random.default_rng(2).standard_normal(40)
    found = structured_jacobian(lambda v: v[2:] - 2 * v[1:-1] + v[:-2], gc.tensor(x))
    assert found.passes == 3 and "3 colours of columns" in found.how
    (block,) = found.blocks
    assert isinstance(block, Sparse) and len(block.values) == 3 * 38
    want = np.zeros((38, 40))
    for i in range(38):
        want[i, i : i + 3] = (1, -2, 1)
    np.testing.assert_array_equal(block.dense(), want)


def test_a_constant_banded_matrix_makes_a_banded_pattern():
    band = np.diag(np.full(30, 2.0)) + np.diag(np.ones(29), 1) + np.diag(np.ones(29), -1)
    B = gc.tensor(band)
    how = _check(lambda v: gc.matmul(B, v) ** 2 + v, np.random.default_rng(3).standard_normal(30))
    assert "3 colours" in how


def test_rows_are_coloured_when_that_takes_fewer_passes():
    # y[0] depends on every x, y[i] on x[i] alone: each column needs its own colour (they all
    # meet in row 0), the rows two
    x = np.random.default_rng(4).standard_normal(20)
    how = _check(lambda v: gc.cat([gc.sum(v * v, 0, keepdim=True), v[1:] * 2]), x)
    assert how == "2 colours of rows, reverse"


def test_several_inputs_and_reductions():
    rng = np.random.default_rng(5)
    _check(lambda a, b: a * b + gc.sum(a, 1, keepdim=True), *rng.standard_normal((2, 6, 4)))
    _check(lambda a: gc.softmax(a, 1) * 3, rng.standard_normal((7, 3)))


def _pattern_of(rows: list[np.ndarray], width: int) -> Pattern:
    indptr = np.cumsum([0] + [len(r) for r in rows])
    return Pattern(indptr, np.concatenate(rows).astype(np.int64), width)


def test_the_greedy_colouring_is_valid_and_uses_few_colours():
    rng = np.random.default_rng(6)
    rows = [np.sort(rng.choice(40, 2, replace=False)) for _ in range(40)]
    pattern = _pattern_of(rows, 40)
    colours = colours_of(pattern)
    assert valid(pattern, colours)
    # a column meets at most (rows it is in) x (columns of a row - 1) others
    meets = np.bincount(pattern.indices, minlength=40).max()
    assert colours.max() + 1 <= meets + 1 < 40
    first, second = rows[0]
    colours[first] = colours[second]  # two columns of one row made alike
    assert not valid(pattern, colours)


def test_an_arrow_takes_two_colours_of_rows():
    # row 0 holds every column, every other row its own column alone
    pattern = _pattern_of([np.arange(12)] + [np.array([j]) for j in range(1, 12)], 12)
    assert colours_of(pattern).max() + 1 == 12
    by_rows = colours_of(pattern.transposed())
    assert valid(pattern.transposed(), by_rows) and by_rows.max() + 1 == 2


# -- plans: planned once for each kind of input, replayed after ---------------------------------


def _blocks_of(found) -> list[np.ndarray]:
    return [b.dense() if isinstance(b, Sparse) else b for b in found.blocks]


def _no_tracing(monkeypatch) -> None:
    def refuse(*_args, **_kwargs):
        raise AssertionError("a replay traced the function")

    monkeypatch.setattr(structured, "trace", refuse)


RNG = np.random.default_rng(7)
MATRIX = gc.tensor(RNG.standard_normal((6, 5)))
PLANNED = [
    pytest.param(lambda v: gc.tanh(gc.matmul(MATRIX, v)) * 2, [(5,)], id="row-scaling"),
    pytest.param(lambda v: gc.sigmoid(gc.matmul(v, MATRIX)), [(6,)], id="row-scaling-right"),
    pytest.param(lambda v: gc.sin(v) * gc.exp(-(v**2)), [(9,)], id="elementwise"),
    pytest.param(lambda v: v[2:] - 2 * v[1:-1] + v[:-2], [(12,)], id="stencil"),
    pytest.param(
        lambda v: gc.cat([gc.sum(v * v, 0, keepdim=True), v[1:] * 2]), [(8,)], id="rows-reverse"
    ),
    pytest.param(  # six colours of rows: the reverse pass traced once, replayed as a batch
        lambda v: gc.cat([*[gc.sum(v**k, 0, keepdim=True) for k in range(1, 6)], gc.sin(v)]),
        [(20,)],
        id="rows-reverse-batched",
    ),
    pytest.param(lambda a, b: a * b + gc.sum(a, 1, keepdim=True), [(3, 4), (3, 4)], id="two"),
]


@pytest.mark.parametrize(("fn", "shapes"), PLANNED)
def test_a_replayed_plan_equals_planning_anew(fn, shapes, monkeypatch):
    rng = np.random.default_rng(8)
    plan = JacobianPlan(fn)
    first = [rng.standard_normal(s) for s in shapes]
    planned = plan([gc.tensor(x) for x in first])
    for block, want in zip(_blocks_of(planned), _dense(fn, first)):  # the first call too
        np.testing.assert_allclose(block.reshape(want.shape), want, rtol=1e-12, atol=1e-14)
    assert plan.built == 1
    points = [[rng.standard_normal(s) * 2 for s in shapes] for _ in range(3)]
    fresh = [structured_jacobian(fn, [gc.tensor(x) for x in p]) for p in points]
    dense = [_dense(fn, p) for p in points]
    _no_tracing(monkeypatch)  # a replay traces nothing
    for point, want, dense_want in zip(points, fresh, dense):
        got = plan([gc.tensor(x) for x in point])
        assert (got.how, got.passes, got.out_shape) == (want.how, want.passes, want.out_shape)
        for block, same, exact in zip(_blocks_of(got), _blocks_of(want), dense_want):
            np.testing.assert_array_equal(block, same)
            np.testing.assert_allclose(block.reshape(exact.shape), exact, rtol=1e-12, atol=1e-14)
    assert plan.built == 1


def test_a_plan_is_made_anew_for_new_shapes_and_dtypes():
    plan = JacobianPlan(lambda v: gc.tanh(v) * v)
    x = np.linspace(-1, 1, 6)
    plan(gc.tensor(x))
    plan(gc.tensor(x + 1))
    assert plan.built == 1
    longer = np.linspace(-2, 2, 9)
    found = plan(gc.tensor(longer))
    assert plan.built == 2 and found.blocks[0].shape == (9, 9)
    np.testing.assert_allclose(
        found.blocks[0].values, np.tanh(longer) + longer / np.cosh(longer) ** 2
    )
    single = plan(gc.tensor(x, dtype=gc.float32))
    assert plan.built == 3 and single.blocks[0].values.dtype == np.float32
    plan(gc.tensor(x))  # the first plan is kept
    assert plan.built == 3


def test_a_plan_is_made_anew_when_the_function_reads_something_else():
    rng = np.random.default_rng(9)
    A = gc.tensor(rng.standard_normal((4, 4)))
    plan = JacobianPlan(lambda v: gc.tanh(gc.matmul(A, v)))
    x = rng.standard_normal(4)
    plan(gc.tensor(x))
    A = gc.tensor(rng.standard_normal((4, 4)))  # the closure's variable rebound
    (got,) = plan(gc.tensor(x)).blocks
    assert plan.built == 2
    want = (1 - np.tanh(A.numpy() @ x) ** 2)[:, None] * A.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    other = JacobianPlan(lambda v: gc.tanh(gc.matmul(A, v)) * 3)  # another function: its own
    np.testing.assert_allclose(other(gc.tensor(x)).blocks[0], 3 * want, rtol=1e-12)


def test_a_plan_remembers_where_the_structure_does_not_pay(monkeypatch):
    A = gc.tensor(np.random.default_rng(10).standard_normal((5, 5)))
    plan = JacobianPlan(lambda x: gc.matmul(A, x) + x)
    with pytest.raises(NotStructured):
        plan(gc.tensor(np.ones(5)))
    _no_tracing(monkeypatch)
    with pytest.raises(NotStructured, match="no fewer passes"):
        plan(gc.tensor(np.zeros(5)))
    assert plan.built == 1


def test_a_plan_hands_out_coordinates_no_result_can_change():
    plan = JacobianPlan(lambda v: v[1:] * v[:-1])
    (block,) = plan(gc.tensor(np.arange(6.0))).blocks
    with pytest.raises(ValueError):
        block.rows[0] = 3
    (again,) = plan(gc.tensor(np.arange(6.0))).blocks
    np.testing.assert_array_equal(again.rows, block.rows)
