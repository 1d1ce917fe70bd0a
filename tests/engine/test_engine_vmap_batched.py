"""vmap's batched pass (engine/vmap_batched.py): the slices' results checked against the first
slice's trace all at once, each slice's bits as its own replay's, and the slices standing where
the trace is not the function on every slice."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli import func
from gradcli.engine import compile, vmap_batched
from gradcli.ops.numerics import summation


def _rows(seed: int = 0) -> tuple[gc.Tensor, gc.Tensor, gc.Tensor]:
    rng = np.random.default_rng(seed)
    weight = gc.Tensor(rng.standard_normal((33, 31)).astype(np.float32))
    bias = gc.Tensor(rng.standard_normal(33).astype(np.float32))
    xs = gc.Tensor(rng.standard_normal((12, 31)).astype(np.float32))
    return weight, bias, xs


def _predict(weight, bias, x):
    return gc.tanh(gc.linear(x, weight, bias))


def _batch_jacobian(weight, bias, xs):
    return func.vmap(func.jacrev(_predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xs)


@pytest.mark.parametrize("slice_by_slice", [False, True])
def test_the_slices_are_checked_together_or_one_by_one_with_the_same_numbers(
    slice_by_slice, monkeypatch
):
    checked_alone = []
    real = vmap_batched.BatchedPass._replays

    def counted(self, values, leaves):
        checked_alone.append(1)
        return real(self, values, leaves)

    with summation.torch_order(), gc.default_dtype(np.float32):
        expected = _batch_jacobian(*_rows()).data
        if slice_by_slice:  # a step with no rule for each slice alone
            monkeypatch.setattr(compile, "PER_POINT", {})
        monkeypatch.setattr(vmap_batched.BatchedPass, "_replays", counted)
        found = _batch_jacobian(*_rows()).data
    assert found.tobytes() == expected.tobytes()
    assert len(checked_alone) == (12 if slice_by_slice else 0)


def test_slices_that_take_another_branch_stand():
    def branching(x):
        return x * 2 if x.sum().item() > 0 else -x * 3

    xs = gc.Tensor(np.array([[1.0, 2.0], [-1.0, -2.0], [3.0, -1.0]], np.float32))
    found = func.vmap(branching)(xs)
    expected = np.stack([branching(gc.Tensor(row)).data for row in xs.data])
    assert np.array_equal(found.data, expected)
