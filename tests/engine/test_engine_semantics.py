"""Autograd semantics, after PyTorch: errors, accumulation, leaves, retain_grad, broadcasting,
conventions at kinks, deep graphs, determinism, dtypes, grad() and higher order."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradcli as gc


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# -- errors of backward -------------------------------------------------------------------------


def test_gradient_of_the_wrong_shape_names_both_shapes():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(
        gc.ShapeError,
        match=r"grad_output\[0\] has a shape of torch.Size\(\[3\]\).*"
        r"output\[0\] has a shape of torch.Size\(\[2\]\)\.",
    ):
        y.backward(gc.ones(3))
    with pytest.raises(gc.ShapeError, match=r"torch.Size\(\[2, 1\]\).*torch.Size\(\[2\]\)"):
        gc.grad(y, x, gc.ones(2, 1))
    assert x.grad is None


def test_second_backward_without_retain_graph_raises():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    z = (x * x).sum()
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    with pytest.raises(RuntimeError, match="second time") as info:
        z.backward()
    assert "retain_graph" in str(info.value)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])  # untouched by the failed call


def test_grad_frees_the_graph_too():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    z = (x.exp() * x).sum()
    gc.grad(z, x)
    with pytest.raises(RuntimeError, match="retain_graph"):
        gc.grad(z, x)


def test_retain_graph_allows_another_pass():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 12.0])


def test_backward_of_a_tensor_without_grad_raises():
    x = gc.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        (x * 2).sum().backward()


def test_grad_of_an_input_without_requires_grad_raises():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    a = gc.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        gc.grad((x * a).sum(), [x, a])


# -- leaves, accumulation, retain_grad ----------------------------------------------------------


def test_gradients_accumulate_across_backward_calls():
    x = gc.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    (3 * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.numpy() + 3)
    x.grad = None
    x.sin().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.cos(x.numpy()))


def test_accumulation_does_not_write_into_the_users_gradient():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    v = gc.tensor([1.0, 1.0])
    (x + 0).backward(v)
    (x + 0).backward(v)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 1.0])


def test_leaves_without_requires_grad_keep_grad_none(no_warnings):
    a = gc.tensor([1.0, 2.0])
    x = gc.tensor([3.0, 4.0], requires_grad=True)
    (a * x).sum().backward()
    assert a.grad is None
    assert not a.requires_grad and a.is_leaf
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0])


def test_non_leaf_grad_is_none_with_a_warning():
    x = gc.tensor([3.0, 4.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None


def test_retain_grad_keeps_a_non_leaf_gradient(no_warnings):
    x = gc.tensor([3.0, 4.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y * y).sum()
    z.retain_grad()
    z.backward()
    np.testing.assert_array_equal(y.grad.numpy(), 2 * y.numpy())
    assert z.grad.item() == 1.0
    np.testing.assert_array_equal(x.grad.numpy(), 4 * y.numpy())


def test_retain_grad_needs_requires_grad():
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        gc.tensor([1.0]).retain_grad()


def test_no_grad_records_nothing():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    with gc.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    z = x * 2
    assert z.requires_grad and z.grad_fn is not None


def test_detach_cuts_the_graph():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    y = (x.detach() * x).sum()  # only the second factor is differentiated
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0])


def test_fan_out_gradients_add_up():
    x = gc.tensor(1.5, requires_grad=True)
    y = x * x + x.sin() + x
    y.backward()
    assert x.grad.item() == pytest.approx(2 * 1.5 + math.cos(1.5) + 1, rel=1e-15)


# -- broadcasting -------------------------------------------------------------------------------


@pytest.mark.parametrize("b_shape", [(3,), (1, 3), (2, 1), (), (1, 1), (4, 2, 3), (4, 1, 1)])
def test_broadcast_operands_get_gradients_summed_to_their_shape(b_shape):
    rng = np.random.default_rng(1)
    a_value = rng.standard_normal((2, 3))
    b_value = rng.standard_normal(b_shape)
    a = gc.tensor(a_value, requires_grad=True)
    b = gc.tensor(b_value, requires_grad=True)
    out = a * b + b
    v = rng.standard_normal(out.shape)
    out.backward(gc.tensor(v))
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    full_a = v * b_value
    full_b = v * a_value + v
    extra = full_a.ndim - a.ndim
    expected_a = full_a.sum(axis=tuple(range(extra)))
    np.testing.assert_allclose(a.grad.numpy(), expected_a, rtol=1e-13)
    expected_b = full_b.sum(axis=tuple(range(full_b.ndim - len(b_shape))))
    expected_b = expected_b.sum(
        axis=tuple(i for i, n in enumerate(b_shape) if n == 1), keepdims=True
    ).reshape(b_shape)
    np.testing.assert_allclose(b.grad.numpy(), expected_b, rtol=1e-13)


def test_python_numbers_broadcast_without_gradients():
    x = gc.tensor([[1.0, 2.0]], requires_grad=True)
    (2.0 * x - 1 + x / 4).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2.25, 2.25]])


# -- kinks and edges ----------------------------------------------------------------------------


def _grad(fn, values, v=None):
    x = gc.tensor(values, requires_grad=True)
    out = fn(x)
    out.backward(None if v is None else gc.tensor(v))
    return x.grad.numpy()


def test_abs_derivative_at_zero_is_zero():
    np.testing.assert_array_equal(_grad(lambda x: gc.abs(x).sum(), [0.0, -2.0, 3.0]), [0, -1, 1])


def test_relu_derivative_at_zero_is_zero():
    np.testing.assert_array_equal(_grad(lambda x: gc.relu(x).sum(), [0.0, -2.0, 3.0]), [0, 0, 1])


def test_sign_derivative_is_zero():
    np.testing.assert_array_equal(_grad(lambda x: gc.sign(x).sum(), [0.0, -2.0, 3.0]), [0, 0, 0])


def test_sqrt_derivative_at_zero_is_inf():
    with np.errstate(divide="ignore"):
        g = _grad(lambda x: gc.sqrt(x).sum(), [0.0, 4.0])
    np.testing.assert_array_equal(g, [np.inf, 0.25])


def test_clamp_passes_the_gradient_at_its_bounds():
    g = _grad(lambda x: gc.clamp(x, -1.0, 1.0).sum(), [-1.0, 1.0, 0.0, -2.0, 2.0])
    np.testing.assert_array_equal(g, [1, 1, 1, 0, 0])


def test_amax_and_amin_split_ties_evenly():
    x = [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]
    np.testing.assert_array_equal(_grad(gc.amax, x), [[0, 0.5, 0.5], [0, 0, 0]])
    np.testing.assert_array_equal(
        _grad(lambda t: gc.amax(t, dim=1), x, [1.0, 1.0]), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]
    )
    np.testing.assert_array_equal(
        _grad(lambda t: gc.amin(t, dim=1, keepdim=True), x, [[1.0], [3.0]]), [[1, 0, 0], [1, 1, 1]]
    )
    third = 1 / 3
    g = _grad(gc.amin, [[1.0, 3.0], [1.0, 1.0]])
    np.testing.assert_array_equal(g, [[third, 0], [third, third]])


def test_maximum_and_minimum_ties_give_half_each():
    a = gc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = gc.tensor([1.0, 0.0, 5.0], requires_grad=True)
    gc.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 1, 0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 0, 1])
    a.grad = b.grad = None
    gc.minimum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 0, 1])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 1, 0])


def test_norm_at_the_origin_has_zero_gradient():
    np.testing.assert_array_equal(_grad(gc.norm, [0.0, 0.0]), [0.0, 0.0])


def test_prod_with_zeros():
    np.testing.assert_array_equal(_grad(gc.prod, [2.0, 0.0, 3.0]), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(_grad(gc.prod, [2.0, 0.0, 0.0]), [0.0, 0.0, 0.0])


def test_getitem_with_repeated_indices_adds_up():
    g = _grad(lambda x: x[[0, 0, 2, 0]].sum(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(g, [3.0, 0.0, 1.0])


def test_getitem_with_ints_slices_and_arrays():
    x = gc.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    rows, cols = np.array([2, 0, 2]), np.array([3, 3, 3])
    y = x[1].sum() + 2 * x[:, 1:3].sum() + 3 * x[-1, ::2].sum() + 5 * x[rows, cols].sum()
    y.backward()
    expected = np.zeros((3, 4))
    expected[1] += 1
    expected[:, 1:3] += 2
    expected[2, [0, 2]] += 3
    expected[2, 3] += 10  # row 2 picked twice
    expected[0, 3] += 5
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_negative_step_slices():
    g = _grad(lambda x: (x[::-2] * gc.tensor([1.0, 10.0])).sum(), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(g, [0.0, 10.0, 0.0, 1.0])


# -- matmul rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "out_shape"),
    [
        ((3,), (3,), ()),
        ((2, 3), (3,), (2,)),
        ((3,), (3, 4), (4,)),
        ((2, 3), (3, 4), (2, 4)),
        ((5, 2, 3), (3, 4), (5, 2, 4)),
        ((2, 3), (5, 3, 4), (5, 2, 4)),
        ((3,), (5, 3, 4), (5, 4)),
        ((5, 2, 3), (3,), (5, 2)),
        ((5, 1, 2, 3), (4, 3, 2), (5, 4, 2, 2)),
    ],
)
def test_matmul_follows_pytorchs_shape_rules(a_shape, b_shape, out_shape):
    rng = np.random.default_rng(2)
    a_value, b_value = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    a = gc.tensor(a_value, requires_grad=True)
    b = gc.tensor(b_value, requires_grad=True)
    out = a @ b
    assert out.shape == out_shape
    np.testing.assert_allclose(out.numpy(), np.matmul(a_value, b_value), rtol=1e-14)
    out.backward(gc.ones(*out_shape))
    assert a.grad.shape == a_shape and b.grad.shape == b_shape
    # sum(a @ b) is linear in each operand: its gradient entry at k is sum(e_k @ b), exactly.
    operands = ((a_value, a.grad, b_value, True), (b_value, b.grad, a_value, False))
    for value, grad, other, first in operands:
        expected = np.zeros(value.shape)
        for k in np.ndindex(value.shape):
            unit = np.zeros(value.shape)
            unit[k] = 1.0
            expected[k] = np.matmul(unit, other).sum() if first else np.matmul(other, unit).sum()
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-13, atol=1e-13)


# -- deep graphs, determinism -------------------------------------------------------------------


def test_a_chain_of_100000_ops_backpropagates_without_recursion():
    x = gc.tensor(0.5, requires_grad=True)
    h = x
    for _ in range(50_000):
        h = h * 1.0 + 0.0
    h.backward()
    assert x.grad.item() == 1.0


def test_a_chain_of_100000_sines():
    x = gc.tensor(0.5, requires_grad=True)
    h, value, expected = x, 0.5, 1.0
    for _ in range(100_000):
        expected *= math.cos(value)
        value = math.sin(value)
        h = gc.sin(h)
    (g,) = gc.grad(h, x)
    assert h.item() == pytest.approx(value, rel=1e-12)
    assert g.item() == pytest.approx(expected, rel=1e-9)


def _messy_gradients():
    gc.manual_seed(123)
    x = gc.randn(4, 5, requires_grad=True)
    w = gc.randn(5, 3, requires_grad=True)
    h = x @ w
    total = (h.tanh() * h).sum() + gc.logsumexp(h, 1).sum() + (x * x).mean() * h.amax()
    for k in range(5):
        total = total + (x[:, k] * h[:, k % 3].sigmoid()).sum()
    total.backward()
    return x.grad.numpy().tobytes(), w.grad.numpy().tobytes()


def test_gradients_are_bit_identical_across_runs():
    first = _messy_gradients()
    second = _messy_gradients()
    assert first == second


# -- dtypes -------------------------------------------------------------------------------------


def test_float32_stays_float32_through_forward_and_backward():
    x = gc.tensor([0.5, 1.5, -2.0], dtype=gc.float32, requires_grad=True)
    w = gc.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=gc.float32, requires_grad=True)
    steps = [x * 2 + 1, (x**2).exp(), gc.softmax(x, 0), x @ w, gc.norm(x), x.sigmoid() / 3]
    for step in steps:
        assert step.dtype == np.float32
    out = sum(s.sum() for s in steps)
    assert out.dtype == np.float32
    out.backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32
    (g,) = gc.grad((x.sin() * 2).sum(), x, create_graph=True)
    assert g.dtype == np.float32
    (h,) = gc.grad(g.sum(), x)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h.numpy(), -2 * np.sin(x.numpy()), rtol=1e-6)
    assert gc.hessian(lambda t: (t**3).sum(), x).dtype == np.float32
    assert gc.jacobian(lambda t: t.exp(), x).dtype == np.float32
    assert gc.jacobian(lambda t: t.exp(), x, strategy="forward-mode").dtype == np.float32


def test_default_dtype_is_float64():
    assert gc.tensor([1, 2]).dtype == np.float64
    assert gc.ones(2).dtype == np.float64
    assert (gc.tensor([1.0], dtype=gc.float32) * gc.tensor([1.0])).dtype == np.float64


# -- grad(), higher order, the functional API ---------------------------------------------------


def test_grad_with_allow_unused():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    u = gc.tensor([3.0], requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        gc.grad(y, [x, u], retain_graph=True)
    gx, gu = gc.grad(y, [x, u], allow_unused=True)
    np.testing.assert_array_equal(gx.numpy(), [2.0, 2.0])
    assert gu is None


def test_grad_wrt_an_intermediate():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = (y * y).sum()
    gy, gx = gc.grad(z, [y, x])
    np.testing.assert_array_equal(gy.numpy(), [6.0, 12.0])
    np.testing.assert_array_equal(gx.numpy(), [18.0, 36.0])


def test_create_graph_then_differentiate_the_gradient_again():
    x = gc.tensor([1.0, -2.0], requires_grad=True)
    y = (x**4).sum()
    (g,) = gc.grad(y, x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_array_equal(g.numpy(), 4 * x.numpy() ** 3)
    (h,) = gc.grad(g.sum(), x, create_graph=True)
    np.testing.assert_array_equal(h.numpy(), 12 * x.numpy() ** 2)
    (t,) = gc.grad(h.sum(), x)
    np.testing.assert_array_equal(t.numpy(), 24 * x.numpy())


def test_backward_with_create_graph_gives_a_differentiable_grad():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (h,) = gc.grad(x.grad.sum(), x)
    np.testing.assert_array_equal(h.numpy(), 6 * x.numpy())


def test_hessian_of_a_polynomial():
    def f(x):
        return x[0] ** 2 * x[1] + x[1] ** 3

    H = gc.hessian(f, gc.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(H.numpy(), [[4.0, 2.0], [2.0, 12.0]])
    _, hv = gc.hvp(f, gc.tensor([1.0, 2.0]), gc.tensor([1.0, -1.0]))
    np.testing.assert_array_equal(hv.numpy(), [2.0, -10.0])


def test_hessian_of_several_inputs():
    def f(x, y):
        return (x * x * y).sum()

    H = gc.hessian(f, [gc.tensor([1.0, 2.0]), gc.tensor([3.0, 4.0])])
    np.testing.assert_array_equal(H[0][0].numpy(), np.diag([6.0, 8.0]))
    np.testing.assert_array_equal(H[0][1].numpy(), np.diag([2.0, 4.0]))
    np.testing.assert_array_equal(H[1][0].numpy(), np.diag([2.0, 4.0]))
    np.testing.assert_array_equal(H[1][1].numpy(), np.zeros((2, 2)))


def test_vjp_and_jvp_defaults_and_their_errors():
    out, g = gc.vjp(lambda x: (x * x).sum(), gc.tensor([1.0, 2.0]))
    assert out.item() == 5.0
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    out, t = gc.jvp(lambda x: x * x, gc.tensor(3.0))
    assert (out.item(), t.item()) == (9.0, 6.0)
    with pytest.raises(RuntimeError, match="scalar"):
        gc.vjp(lambda x: x * x, gc.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="scalar"):
        gc.jvp(lambda x: x * x, gc.tensor([1.0, 2.0]))


def test_functional_api_does_not_touch_the_inputs():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    gc.vjp(lambda t: (t * t).sum(), x)
    gc.jacobian(lambda t: t * t, x)
    gc.hessian(lambda t: (t * t).sum(), x)
    assert x.grad is None


def test_jacobian_of_a_constant_function_is_zero():
    J = gc.jacobian(lambda x: gc.ones(2), gc.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(J.numpy(), np.zeros((2, 3)))


# -- regressions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "name"),
    [
        (lambda x: x.sum(), "SumBackward0"),
        (lambda x: x.mean(), "MeanBackward0"),
        (lambda x: x.prod(), "ProdBackward0"),
        (lambda x: x.norm(), "LinalgVectorNormBackward0"),
        (lambda x: x @ x, "DotBackward0"),
        (lambda x: gc.stack([x, x]).sum(0, keepdim=True), "SumBackward1"),
    ],
)
def test_repr_after_backward_still_names_the_backward_function(fn, name):
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    y = fn(x)
    assert f"grad_fn=<{name}>" in repr(y)
    y.backward(gc.ones(*y.shape))
    assert f"grad_fn=<{name}>" in repr(y)  # the graph is freed, the name is kept


@pytest.mark.filterwarnings("ignore:divide by zero")
def test_python_zero_keeps_its_sign():
    one = gc.tensor(1.0)
    for _ in range(2):  # in both orders, so that no cached constant can stand in for the other
        assert (one / 0.0).item() == math.inf
        assert (one / -0.0).item() == -math.inf
        assert math.copysign(1.0, (gc.tensor(2.0) * -0.0).item()) == -1.0


def test_python_numbers_take_the_tensors_dtype():
    for dtype in (gc.float32, gc.float64, gc.float32):
        x = gc.tensor([1.0, 2.0], dtype=dtype)
        assert (x * 2.5).dtype == dtype
        assert (2.5 - x).dtype == dtype
    with np.errstate(over="ignore"):
        big = gc.tensor([1.0], dtype=gc.float32) * 1e300
    assert big.item() == math.inf  # the number became float32 too: it overflows


@pytest.mark.parametrize(
    "combine",
    [
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: a - b,
        lambda a, b: gc.cat([a, b]),
        lambda a, b: (a * b.sin()).exp(),
    ],
)
def test_a_gradient_has_its_tensors_dtype_whatever_the_results(combine):
    """As torch's engine casts a gradient to its input's dtype: a float32 operand of a float64
    result gets a float32 gradient, the float64 one a float64 gradient (to the grad of
    autograd.grad too), with the float64 pass's values rounded once."""
    x = gc.tensor([0.25, -0.5], dtype=gc.float64, requires_grad=True)
    z = gc.tensor([1.5, 2.5], dtype=gc.float32, requires_grad=True)
    combine(x, z).sum().backward()
    assert (x.grad.dtype, z.grad.dtype) == (gc.float64, gc.float32)
    wide = gc.tensor(z.detach().data.astype(np.float64), requires_grad=True)
    combine(x.detach(), wide).sum().backward()
    assert np.array_equal(z.grad.data, wide.grad.data.astype(np.float32))
    (found,) = gc.autograd.grad(combine(x, z).sum(), z, create_graph=True)
    assert found.dtype == gc.float32


_INDICES = [
    (0,),
    (-1,),
    (slice(0, 1),),
    (slice(None),),  # x[:], a slice alone: torch slices
    (slice(0, 5),),
    (slice(-3, None),),
    (slice(None, None, 2),),
    (0, slice(None)),
    (slice(None), 0),
    (0, slice(0, 1)),
    (slice(0, 1), 0),
    (slice(None), slice(None)),  # x[:, :]: the whole tensor, an alias
    (None,),
    (0, None),
    (None, 0),
    (Ellipsis,),
    (Ellipsis, 0),
    (0, Ellipsis),
    (Ellipsis, None),
    (1, 2),
]


@pytest.mark.parametrize("index", _INDICES, ids=str)
def test_indexing_names_its_node_as_torch_does(index):
    torch = pytest.importorskip("torch")
    x = gc.tensor(np.ones((3, 3)), requires_grad=True)
    t = torch.ones(3, 3, requires_grad=True)
    expected = t[index if len(index) > 1 or not isinstance(index[0], slice) else index[0]]
    assert x[index].grad_fn.name() == expected.grad_fn.name()
