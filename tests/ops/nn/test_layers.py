"""The layers' conventions the sweep's finite differences cannot see, against torch: ties of
max_pool2d (the whole gradient to the first largest element), padding_idx's row of embedding
(no gradient), windows of padding alone (-inf, as torch's)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _both(values):
    return (
        gc.tensor(values, requires_grad=True),
        torch.tensor(values, dtype=torch.float64, requires_grad=True),
    )


def test_max_pool2d_gives_a_tie_to_its_first_largest_element():
    values = [[[[1.0, 1.0, 0.0], [1.0, 1.0, 2.0], [2.0, 0.0, 2.0]]]]
    x, t = _both(values)
    (gc.max_pool2d(x, 2, stride=1) * gc.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])).sum().backward()
    weights = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=torch.float64)
    (F.max_pool2d(t, 2, stride=1) * weights).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_embedding_gives_padding_idx_no_gradient():
    weight = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    indices = [[0.0, 2.0], [2.0, 1.0]]
    for padding_idx in (2, -1, 0):
        w, t = _both(weight)
        out = gc.embedding(gc.tensor(indices), w, padding_idx=padding_idx)
        expected = F.embedding(torch.tensor(indices).long(), t, padding_idx=padding_idx)
        np.testing.assert_array_equal(out.numpy(), expected.detach().numpy())
        (out * out).sum().backward()
        (expected * expected).sum().backward()
        np.testing.assert_array_equal(w.grad.numpy(), t.grad.numpy())


def test_a_window_of_padding_alone_is_minus_infinity_with_no_gradient():
    x, t = _both([[[0.5]]])
    out = gc.max_pool2d(x, 2, padding=1, dilation=2)
    expected = F.max_pool2d(t, 2, padding=1, dilation=2)
    np.testing.assert_array_equal(out.numpy(), expected.detach().numpy())
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_embedding_refuses_indices_that_are_not_rows():
    weight = gc.tensor([[1.0], [2.0]])
    with pytest.raises(gc.IndexDomainError, match="indices must be in"):
        gc.embedding(gc.tensor([2.0]), weight)
    with pytest.raises(gc.IndexDomainError, match="whole numbers"):
        gc.embedding(gc.tensor([0.5]), weight)
