"""A leaf's first gradient is an array of its own: no other tensor, gradient or user value
shares its memory, so that writing into ``.grad`` in place (``x.grad.zero_()``, an
optimizer's update) changes that gradient alone. The engine takes the array a rule made
where the pass alone holds it (as torch's AccumulateGrad steals such a gradient) and copies
it everywhere else; these cases are the ones where a copy is needed, and the plain one."""

from __future__ import annotations

import numpy as np

import gradcli as gc
from gradcli.engine.custom_function import Function

_X = np.array([[1.5, -0.5], [0.25, 2.0]])


def _leaf(values: np.ndarray = _X) -> gc.Tensor:
    return gc.tensor(values, requires_grad=True)


def _alone(array: np.ndarray, *others: np.ndarray) -> bool:
    return array.flags.writeable and not any(np.shares_memory(array, o) for o in others)


def test_two_leaves_given_one_cotangent_get_two_arrays():
    a, b = _leaf(), _leaf()
    ((a + b) * 3).sum().backward()
    assert _alone(a.grad.data, b.grad.data)
    a.grad.data[...] = 0.0
    np.testing.assert_array_equal(b.grad.data, np.full((2, 2), 3.0))


def test_a_leaf_does_not_share_the_gradient_the_user_gave():
    x = _leaf()
    v = gc.tensor(np.ones((2, 2)))
    (x + 0.0).backward(v)
    assert _alone(x.grad.data, v.data)
    x.grad.data[...] = 7.0
    np.testing.assert_array_equal(v.data, np.ones((2, 2)))


def test_a_leaf_does_not_share_a_retained_non_leaf_gradient():
    x = _leaf()
    y = x * 2.0
    y.retain_grad()
    ((y + x) * 3.0).sum().backward()
    assert _alone(x.grad.data, y.grad.data)
    np.testing.assert_array_equal(x.grad.data, np.full((2, 2), 9.0))
    np.testing.assert_array_equal(y.grad.data, np.full((2, 2), 3.0))


def test_a_leaf_does_not_share_what_a_custom_function_returned():
    kept = gc.tensor(np.full((2, 2), 5.0))

    class Given(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return kept

    x = _leaf()
    Given.apply(x).sum().backward()
    assert _alone(x.grad.data, kept.data)


def test_a_matrix_products_gradient_is_the_leafs_alone_and_accumulates():
    """The plain case, where the product's array becomes the gradient: it is right, it is
    the leaf's alone, and a second pass adds to it without writing into the first."""
    x, w = _leaf(), _leaf(np.array([[1.0, 2.0], [3.0, 4.0]]))
    (x @ w).sum().backward()
    first = w.grad
    np.testing.assert_allclose(first.data, _X.sum(0)[:, None] * np.ones((2, 2)))
    assert _alone(first.data, x.grad.data, x.data, w.data)
    (x @ w).sum().backward()
    np.testing.assert_allclose(w.grad.data, 2 * first.data)
    np.testing.assert_allclose(first.data, _X.sum(0)[:, None] * np.ones((2, 2)))
