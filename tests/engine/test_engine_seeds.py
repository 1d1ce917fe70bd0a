"""The issue's seed examples at the library level, with exact values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli as gc


def test_seed_a_mean_of_squares_and_accumulation():
    x = gc.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    assert out.item() == 27.0
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 4.5))
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 9.0))


def test_seed_b_logistic_regression_gradients():
    x = gc.ones(8)
    y = gc.zeros(10)
    W = gc.randn(8, 10, requires_grad=True)
    b = gc.randn(10, requires_grad=True)
    z = gc.matmul(x, W) + b
    loss = gc.binary_cross_entropy_with_logits(z, y)
    loss.backward()

    zv = x.numpy() @ W.numpy() + b.numpy()
    expected_b = (1 / (1 + np.exp(-zv)) - y.numpy()) / 10
    np.testing.assert_allclose(b.grad.numpy(), expected_b, rtol=1e-14, atol=1e-16)
    expected_W = np.outer(x.numpy(), expected_b)
    np.testing.assert_allclose(W.grad.numpy(), expected_W, rtol=1e-14, atol=1e-16)
    expected_loss = np.mean(np.maximum(zv, 0) - zv * y.numpy() + np.log1p(np.exp(-np.abs(zv))))
    assert loss.item() == pytest.approx(expected_loss, rel=1e-14)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # leaves: no warning
        assert x.grad is None
        assert y.grad is None
    for non_leaf in (z, loss):
        with pytest.warns(UserWarning, match="not a leaf") as record:
            assert non_leaf.grad is None
        assert "retain_grad" in str(record[0].message)


def test_seed_c_non_scalar_output_needs_a_gradient():
    x = gc.rand(3, requires_grad=True)
    y = x + 2
    message = "grad can be implicitly created only for scalar outputs"
    with pytest.raises(RuntimeError, match=message):
        y.backward()
    assert x.grad is None
    v = gc.tensor([0.1, 1.0, 0.0001])
    y.backward(v)
    np.testing.assert_array_equal(x.grad.numpy(), v.numpy())


def test_seed_c_grad_returns_the_vjp_and_leaves_grad_alone():
    x = gc.rand(3, requires_grad=True)
    y = x + 2
    v = gc.tensor([0.1, 1.0, 0.0001])
    (g,) = gc.grad(y, x, v)
    np.testing.assert_array_equal(g.numpy(), v.numpy())
    assert x.grad is None


def _seed_d(x):
    return gc.stack([x[0] ** 2, x[0] ** 2 + 5 * x[1] ** 2, 3 * x[1]])


def test_seed_d_stacked_outputs():
    x = gc.tensor([1.0, 2], requires_grad=True)
    y = _seed_d(x)
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 21.0, 6.0])
    y.backward(gc.tensor([1.0, 1, 1]))
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 23.0])


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_seed_d_jacobian(strategy):
    J = gc.jacobian(_seed_d, gc.tensor([1.0, 2]), strategy=strategy)
    np.testing.assert_array_equal(J.numpy(), [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]])


def test_seed_e_log_backward():
    x = gc.tensor([[1.0, 2, 3], [4, 5, 6]], requires_grad=True)
    y = gc.log(x)
    y.backward(gc.tensor([[3.0, 2, 0], [4, 0, 1]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[3.0, 1.0, 0.0], [1.0, 0.0, 1 / 6]])
