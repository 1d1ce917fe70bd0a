"""torch's whole signature of the operations gradcli has, as real code calls them: the
parameters and forms beyond the common ones (``dtype=`` of a reduction, ``rounding_mode``,
a tensor unpacked along its first dimension, ...), each checked against torch 2.13 and, where
differentiable, against finite differences through the engine's rules."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc

torch = pytest.importorskip("torch")

_X = np.array([[1.2, -2.3, 0.4], [3.1, 0.7, -1.6]])


def _pair(values=_X, requires_grad=True):
    return (
        gc.tensor(values, requires_grad=requires_grad),
        torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad),
    )


def _same(got, expected) -> None:
    assert got.dtype == expected.detach().numpy().dtype
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6)


def test_iterating_a_tensor_gives_its_rows_as_torch_does():
    x, tx = _pair()
    rows, trows = list(x), list(tx)
    assert len(rows) == len(trows) == 2
    for row, trow in zip(rows, trows):
        _same(row, trow)
        assert row.grad_fn.name() == type(trow.grad_fn).__name__ == "UnbindBackward0"
    a, b = x
    ta, tb = tx
    (a * 2 + b * b).sum().backward()
    (ta * 2 + tb * tb).sum().backward()
    _same(x.grad, tx.grad)


def test_iterating_a_0d_tensor_is_torchs_type_error():
    with pytest.raises(TypeError) as expected:
        iter(torch.tensor(1.0))
    with pytest.raises(TypeError) as got:
        iter(gc.tensor(1.0))
    assert str(got.value) == str(expected.value)
