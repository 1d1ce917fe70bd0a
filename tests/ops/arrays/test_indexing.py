"""Indexing by tensors (gradcli/ops/arrays/indexing.py) against torch: the integer results
(one_hot, nonzero, argwhere) and their batched replay, out-of-range indices, repeated
indices, and the tape of a mask computed from the inputs (replayed eagerly at each point).
The differentiable rows (gather, scatter, ...) are in engine_optable.OPS."""

from __future__ import annotations

import numpy as np
import pytest
from engine_checks import FEW
from engine_optable import INTEGER
from hypothesis import given
from hypothesis import strategies as st

import gradcli as gc
from gradcli.engine.compile import NotBatchable, run_batched, trace

torch = pytest.importorskip("torch")

ROWS = [pytest.param(row, id=row.name) for row in INTEGER]


@pytest.mark.parametrize("row", ROWS)
@FEW
@given(data=st.data())
def test_integer_results_match_torch_and_carry_no_gradient(row, data):
    case = data.draw(row.cases())
    xs = [gc.tensor(x, requires_grad=True) for x in case.inputs]
    got = case.fn(*xs)
    expected = case.torch_fn()(*[torch.tensor(x, requires_grad=True) for x in case.inputs])
    assert expected.dtype == torch.int64 and got.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert not got.requires_grad and got.grad_fn is None


@pytest.mark.parametrize("row", ROWS)
@FEW
@given(data=st.data())
def test_batched_replay_of_integer_results_equals_each_point(row, data):
    case = data.draw(row.cases())
    rng = np.random.default_rng(case.seed)
    points = [[rng.uniform(-2, 2, x.shape) for x in case.inputs] for _ in range(3)]
    tape = trace(lambda *xs: [case.fn(*xs)], *points[0])
    stacked = [np.stack([p[i] for p in points]) for i in range(len(points[0]))]
    eager = [case.fn(*[gc.tensor(x) for x in p]).numpy() for p in points]
    if tape.dynamic:  # the result's shape follows the values: each point is traced anew
        with pytest.raises(NotBatchable):
            run_batched(tape, stacked, [True] * len(stacked))
        return
    (batched,) = run_batched(tape, stacked, [True] * len(stacked))
    for k, want in enumerate(eager):
        assert batched[k].dtype == want.dtype
        np.testing.assert_array_equal(batched[k], want)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda x: gc.gather(x, 0, gc.tensor([[5]])),
            "index 5 is out of bounds for dimension 0 with size 3",
        ),
        (
            lambda x: gc.index_select(x, 1, gc.tensor([-3])),
            "index -3 is out of bounds for dimension 1 with size 2",
        ),
        (lambda x: gc.gather(x, 0, gc.tensor([[0.5]])), "must be long, int or bool tensors"),
        (lambda x: gc.masked_select(x, gc.tensor([1.0, 0.0])), "expected a boolean mask"),
        (lambda x: gc.index_select(x, 0, gc.tensor([[0]])), "index is supposed to be a vector"),
        (lambda x: gc.gather(x, 0, gc.tensor([0])), "same number of dimensions"),
        (lambda x: gc.one_hot(gc.tensor([0, 3]), 2), "smaller than num_classes (2)"),
        (lambda x: gc.one_hot(gc.tensor([-1])), "non-negative"),
        (lambda x: x[gc.tensor([True, False])], None),
    ],
)
def test_refusals_name_the_index_and_the_size(call, message):
    x = gc.tensor(np.arange(6.0).reshape(3, 2))
    if message is None:  # a mask of the wrong shape: torch's refusal
        with pytest.raises(gc.EngineError):
            call(x)
        with pytest.raises(IndexError):
            torch.arange(6.0).reshape(3, 2)[torch.tensor([True, False])]
        return
    with pytest.raises(gc.EngineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(x)


def test_repeated_indices_add_up_in_the_gradient():
    x = gc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    (
        gc.index_select(x, 0, gc.tensor([0, 0, 2, 0])) * gc.tensor([1.0, 2.0, 3.0, 4.0])
    ).sum().backward()
    (
        t.index_select(0, torch.tensor([0, 0, 2, 0])) * torch.tensor([1.0, 2.0, 3.0, 4.0])
    ).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), [7.0, 0.0, 3.0])


def test_scatter_with_repeated_indices_follows_torch():
    """The last write stays; every src element gets the gradient at its target (gather)."""
    index = np.array([[0, 1], [0, 1], [2, 1]])
    src = np.arange(6.0).reshape(3, 2) + 1
    s = gc.tensor(src, requires_grad=True)
    out = gc.scatter(gc.tensor(np.zeros((3, 2))), 0, gc.tensor(index), s)
    ts = torch.tensor(src, requires_grad=True)
    expected = torch.zeros(3, 2, dtype=torch.float64).scatter(0, torch.from_numpy(index), ts)
    np.testing.assert_array_equal(out.numpy(), expected.detach().numpy())
    g = np.arange(6.0).reshape(3, 2)
    out.backward(gc.tensor(g))
    expected.backward(torch.from_numpy(g))
    np.testing.assert_array_equal(s.grad.numpy(), ts.grad.numpy())


def test_a_mask_computed_from_the_inputs_makes_the_tape_dynamic():
    """x[x > 0] has as many elements as x has positive ones: a tape of it is valid at its own
    point only, so a batch traces each point anew (and run_batched refuses it)."""
    from gradcli.ops.arrays.indexing import SLOT, indexed

    def f(x):
        return [indexed(x, [x > 0], (SLOT,)).sum()]

    tape = trace(f, np.array([1.0, -1.0, 2.0]))
    assert tape.dynamic
    with pytest.raises(NotBatchable):
        run_batched(tape, [np.array([[1.0, -1.0, 2.0], [1.0, 1.0, 1.0]])], [True])
    constant = trace(
        lambda x: [indexed(x, [gc.tensor([True, False, True])], (SLOT,)).sum()], np.ones(3)
    )
    assert not constant.dynamic
    (out,) = run_batched(constant, [np.array([[1.0, 5.0, 2.0], [3.0, 1.0, 1.0]])], [True])
    np.testing.assert_array_equal(out, [3.0, 4.0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_change_between_floating_dtypes_is_differentiable_as_in_torch(dtype):
    values = np.array([1.7, -2.5, 0.0, 0.3])
    x = gc.tensor(values, requires_grad=True)
    t = torch.tensor(values, requires_grad=True)
    changed = gc.to(x, "float32")
    out = (changed * gc.to(changed, dtype) * gc.to(x, "int64")).sum()
    expected = (t.float() * t.float().to(getattr(torch, dtype)) * t.long()).sum()
    out.backward()
    expected.backward()
    assert changed.dtype == np.float32 and changed.grad_fn.name() == "ToCopyBackward0"
    np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)
    assert gc.to(x, "float64") is x  # the same dtype: the tensor itself, as torch


def test_integer_arithmetic_promotes_as_torch():
    i = gc.Tensor(np.array([0, 3]))
    f = gc.tensor([1.5, 2.0], dtype=gc.float32)
    ti, tf = torch.tensor([0, 3]), torch.tensor([1.5, 2.0])
    cases = [
        (i + f, ti + tf),
        (i * 2, ti * 2),
        (i / 2, ti / 2),
        (gc.floor_divide(i, 2), ti // 2),
        (i + 2.5, ti + 2.5),
        (i.sum(), ti.sum()),
        ((i > 1) + 1, (ti > 1) + 1),
    ]
    with gc.default_dtype(np.float32):  # torch's default floating dtype
        cases.append((i / 2, ti / 2))
        cases.append((i + 2.5, ti + 2.5))
    for k, (got, want) in enumerate(cases):
        expected_dtype = str(want.dtype).removeprefix("torch.")
        if k in (2, 4):  # gradcli's default floating dtype is float64 outside gradcli run
            expected_dtype = "float64"
        assert str(got.dtype) == expected_dtype, (k, got.dtype, want.dtype)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(gc.DtypeError, match="mean\\(\\): could not infer output dtype"):
        i.mean()
