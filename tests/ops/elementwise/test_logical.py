"""Comparisons, logical operations, masks (gradcli/ops/elementwise/logical.py) against torch: their
values and dtypes, that booleans carry no gradient, how booleans promote in arithmetic, and
the batched replay of every row of ``engine_optable.LOGICAL``."""

from __future__ import annotations

import numpy as np
import pytest
from engine_checks import FEW
from engine_optable import LOGICAL
from hypothesis import given
from hypothesis import strategies as st

import gradcli as gc
from gradcli.engine.compile import run_batched, trace

torch = pytest.importorskip("torch")

ROWS = [pytest.param(row, id=row.name) for row in LOGICAL]
FLOATING = {"detach", "zeros_like", "ones_like", "full_like"}  # the rows of floating results
# Values with ties (equal elements), zeros, and the values that are not finite
SPECIAL = np.array([-1.0, 0.0, 1.0, -0.0, np.nan, np.inf, -np.inf, 0.5])


def _inputs(case, rng):
    """The case's inputs, half of their elements replaced by special values, so that
    comparisons meet ties and tests of values meet NaN and infinities."""
    chosen = []
    for x in case.inputs:
        special = rng.choice(SPECIAL, size=x.shape)
        chosen.append(np.where(rng.random(x.shape) < 0.5, special, x))
    return chosen


def _torch(case, xs):
    with torch.no_grad():
        return case.torch_fn()(*[torch.tensor(x) for x in xs])


@pytest.mark.parametrize("row", ROWS)
@FEW
@given(data=st.data())
def test_values_and_dtypes_match_torch(row, data):
    case = data.draw(row.cases())
    xs = _inputs(case, np.random.default_rng(case.seed))
    with np.errstate(all="ignore"):
        got = case.fn(*[gc.tensor(x) for x in xs])
    expected = _torch(case, xs)
    assert got.dtype == (np.bool_ if expected.dtype == torch.bool else np.float64)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("row", [r for r in ROWS if r.id != "heaviside"])
@FEW
@given(data=st.data())
def test_booleans_and_detached_values_carry_no_gradient_whatever_their_operands_require(row, data):
    case = data.draw(row.cases())
    xs = [gc.tensor(x, requires_grad=True) for x in case.inputs]
    out = case.fn(*xs)
    assert out.dtype == (np.float64 if row.name in FLOATING else np.bool_)
    assert not out.requires_grad and out.grad_fn is None
    with pytest.raises(gc.GradError, match="element 0 of tensors does not require grad"):
        out.backward(gc.tensor(np.ones(out.shape)))


@pytest.mark.parametrize("row", ROWS)
@FEW
@given(data=st.data())
def test_batched_replay_equals_each_point(row, data):
    case = data.draw(row.cases())
    rng = np.random.default_rng(case.seed)
    points = [_inputs(case, rng) for _ in range(3)]
    with np.errstate(all="ignore"):
        tape = trace(lambda *xs: [case.fn(*xs)], *points[0])
        stacked = [np.stack([p[i] for p in points]) for i in range(len(points[0]))]
        (batched,) = run_batched(tape, stacked, [True] * len(stacked))
        for k, point in enumerate(points):
            eager = case.fn(*[gc.tensor(x) for x in point]).numpy()
            assert batched[k].dtype == eager.dtype
            np.testing.assert_array_equal(batched[k], eager)


def test_heaviside_is_not_differentiated_as_in_torch():
    x = gc.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = gc.heaviside(x, gc.tensor(0.5))
    assert y.grad_fn.name() == "NotImplemented"
    tx = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="heaviside is not implemented"):
        torch.heaviside(tx, torch.tensor(0.5)).sum().backward()
    with pytest.raises(gc.GradError, match="heaviside is not implemented"):
        y.sum().backward()


def test_where_sends_the_gradient_to_the_branch_chosen():
    values = [-1.5, 0.0, 2.0]
    x = gc.tensor(values, requires_grad=True)
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (gc.where(x > 0, x * x, -x).sum()).backward()
    (torch.where(tx > 0, tx * tx, -tx).sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_masked_fill_refuses_what_torch_refuses():
    x = gc.tensor([1.0, -2.0])
    with pytest.raises(gc.DtypeError, match="only supports boolean masks"):
        gc.masked_fill(x, x, 0.0)
    with pytest.raises(gc.ShapeError, match="0-dimensional value tensor"):
        gc.masked_fill(x, x > 0, gc.tensor([1.0, 2.0]))
    v = gc.tensor(2.0, requires_grad=True)
    assert gc.masked_fill(x, x > 0, v).grad_fn.name() == "MaskedFillBackward1"


@pytest.mark.parametrize(
    "expression",
    [
        lambda m, x: (x > 0) * x,
        lambda m, x: (x > 0) + 1.5,
        lambda m, x: (x > 0) + (x < 1),
        lambda m, x: (x > 0) * (x < 1),
        lambda m, x: m.sin(x > 0),
        lambda m, x: m.exp(x > 0) * x,
        lambda m, x: (x > 0) / (x < 1),
        lambda m, x: m.maximum(x > 0, x < 1),
        lambda m, x: m.where(x > 0, x > 1, x < -1),
        lambda m, x: (x > 0).reshape(3, 1).expand(3, 2),
    ],
)
def test_booleans_promote_as_in_torch(expression):
    values = np.array([-1.5, 0.0, 2.0])
    got = expression(gc, gc.tensor(values))
    expected = expression(torch, torch.tensor(values))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)  # torch's float32
    if expected.dtype == torch.bool:
        assert got.dtype == np.bool_
    else:  # torch computes booleans alone in its default float32, gradcli in float64
        assert got.dtype.kind == "f" and got.dtype.itemsize >= 4


def test_booleans_alone_are_computed_in_float64_in_a_replay_too():
    tape = trace(lambda x: [gc.sin(x > 0)], np.array([1.0, -1.0]))
    (out,) = tape.run(np.array([-1.0, 2.0]))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.sin([0.0, 1.0]))


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (lambda x: (x > 0) - (x < 1), "Subtraction, the `-` operator, with two bool tensors"),
        (lambda x: -(x > 0), "Negation, the `-` operator, on a bool tensor"),
        (lambda x: x ^ x, r"'\^' \(bitwise_xor\) takes boolean tensors.*a \*\* b"),
        (lambda x: x & (x > 0), r"'&' \(bitwise_and\) takes boolean tensors"),
        (lambda x: ~x, r"'~' \(bitwise_not\) takes boolean tensors"),
    ],
)
def test_refusals_of_booleans_are_dtype_errors(expression, message):
    with pytest.raises(gc.DtypeError, match=message):
        expression(gc.tensor([1.0, -2.0]))


def test_any_and_all_reduce_as_torch():
    m = np.array([[True, False, False], [True, True, True]])
    for name in ("any", "all"):
        for dim in (None, 0, 1, -1):
            for keepdim in (False, True):
                got = getattr(gc, name)(gc.tensor(m), dim, keepdim)
                tm = torch.tensor(m)
                want = (
                    getattr(torch, name)(tm)
                    if dim is None
                    else getattr(torch, name)(tm, dim, keepdim=keepdim)
                )
                if dim is None and keepdim:  # torch's any(x) takes no keepdim without a dim
                    want = want.reshape(1, 1)
                np.testing.assert_array_equal(got.numpy(), want.numpy())
