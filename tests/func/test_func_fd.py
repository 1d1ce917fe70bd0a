"""gradcli.func, gradcli.autograd.functional and gradcli.autograd.forward_ad checked without
torch: every derivative against central finite differences of the function itself, vmap
against a loop, the results' structure against what torch's documentation gives, and the
errors' words."""

from __future__ import annotations

import numpy as np
import pytest
from func_checks import points

import gradcli as gc
import gradcli.autograd.forward_ad as fwAD
from gradcli import func
from gradcli.autograd import functional as AF

STEP = 1e-6
TOL = {"rtol": 1e-6, "atol": 1e-8}


def numeric_jacobian(f, arrays, wrt=0):
    """d f(*arrays) / d arrays[wrt], shaped out.shape + input.shape, by central differences
    (f gives one tensor)."""
    base = [a.copy() for a in arrays]
    with gc.no_grad():
        out_shape = f(*[gc.tensor(a) for a in base]).shape
    columns = []
    for k in range(base[wrt].size):
        values = []
        for sign in (1, -1):
            moved = [a.copy() for a in base]
            moved[wrt].reshape(-1)[k] += sign * STEP
            with gc.no_grad():
                values.append(f(*[gc.tensor(a) for a in moved]).data)
        columns.append((values[0] - values[1]) / (2 * STEP))
    return np.stack(columns, axis=-1).reshape(out_shape + base[wrt].shape)


def scalar_f(x, y):
    return (x.sin() * y.exp()).sum() + (x**2 * y).mean()


def vector_f(x, y):
    return (x.unsqueeze(1) * y.unsqueeze(0)).tanh()


@pytest.fixture
def xy():
    return points((3,), (3,), seed=11)


def test_grad_and_value_match_finite_differences(xy):
    x, y = (gc.tensor(a) for a in xy)
    gx, gy = func.grad(scalar_f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx.data, numeric_jacobian(scalar_f, xy, 0), **TOL)
    np.testing.assert_allclose(gy.data, numeric_jacobian(scalar_f, xy, 1), **TOL)
    gradient, value = func.grad_and_value(scalar_f, argnums=1)(x, y)
    np.testing.assert_allclose(gradient.data, numeric_jacobian(scalar_f, xy, 1), **TOL)
    np.testing.assert_allclose(value.data, scalar_f(x, y).data)
    assert not gradient.requires_grad and not value.requires_grad


@pytest.mark.parametrize("transform", [func.jacrev, func.jacfwd])
def test_jacobians_match_finite_differences(xy, transform):
    x, y = (gc.tensor(a) for a in xy)
    jx, jy = transform(vector_f, argnums=(0, 1))(x, y)
    assert jx.shape == (3, 3, 3) and jy.shape == (3, 3, 3)
    np.testing.assert_allclose(jx.data, numeric_jacobian(vector_f, xy, 0), **TOL)
    np.testing.assert_allclose(jy.data, numeric_jacobian(vector_f, xy, 1), **TOL)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_functional_jacobian_matches_finite_differences(xy, strategy):
    x, y = (gc.tensor(a) for a in xy)
    (jx, jy) = AF.jacobian(vector_f, (x, y), vectorize=True, strategy=strategy)
    np.testing.assert_allclose(jx.data, numeric_jacobian(vector_f, xy, 0), **TOL)
    np.testing.assert_allclose(jy.data, numeric_jacobian(vector_f, xy, 1), **TOL)


def test_hessians_match_finite_differences_of_the_gradient(xy):
    x, y = (gc.tensor(a) for a in xy)

    def gradient_in_x(a, b):
        return func.grad(scalar_f)(a, b)

    expected = numeric_jacobian(gradient_in_x, xy, 0)
    for hessian in (
        func.hessian(scalar_f)(x, y),
        func.jacrev(func.jacrev(scalar_f))(x, y),
        func.jacfwd(func.jacfwd(scalar_f))(x, y),
        AF.hessian(lambda a: scalar_f(a, y), x),
        AF.hessian(
            lambda a: scalar_f(a, y), x, vectorize=True, outer_jacobian_strategy="forward-mode"
        ),
    ):
        np.testing.assert_allclose(hessian.data, expected, **TOL)


def test_products_match_finite_difference_jacobians(xy):
    x, y = (gc.tensor(a) for a in xy)
    v_out, v_in = points((3, 3), (3,), seed=12)
    jacobian = numeric_jacobian(vector_f, xy, 0)  # (3, 3, 3)
    jv = np.tensordot(jacobian, v_in, axes=1)
    vj = np.tensordot(v_out, jacobian, axes=2)

    out, product = func.jvp(lambda a: vector_f(a, y), (x,), (gc.tensor(v_in),))
    np.testing.assert_allclose(product.data, jv, **TOL)
    out, pull = func.vjp(lambda a: vector_f(a, y), x)
    (product,) = pull(gc.tensor(v_out))
    np.testing.assert_allclose(product.data, vj, **TOL)
    np.testing.assert_allclose(
        AF.jvp(lambda a: vector_f(a, y), x, gc.tensor(v_in))[1].data, jv, **TOL
    )
    np.testing.assert_allclose(
        AF.vjp(lambda a: vector_f(a, y), x, gc.tensor(v_out))[1].data, vj, **TOL
    )

    hessian = numeric_jacobian(lambda a, b: func.grad(scalar_f)(a, b), xy, 0)
    for name in ("hvp", "vhp"):
        value, product = getattr(AF, name)(lambda a: scalar_f(a, y), x, gc.tensor(v_in))
        np.testing.assert_allclose(product.data, hessian @ v_in, **TOL)
        np.testing.assert_allclose(value.data, scalar_f(x, y).data)


def test_forward_ad_tangent_matches_a_finite_difference(xy):
    x0, t0 = xy

    def f(a):
        return (a.sin() * a).exp().sum()

    with gc.no_grad():
        ahead, behind = f(gc.tensor(x0 + STEP * t0)), f(gc.tensor(x0 - STEP * t0))
    expected = (ahead.data - behind.data) / (2 * STEP)
    with fwAD.dual_level():
        dual = fwAD.make_dual(gc.tensor(x0), gc.tensor(t0))
        primal, tangent = fwAD.unpack_dual(f(dual))
    np.testing.assert_allclose(tangent.data, expected, **TOL)
    np.testing.assert_allclose(primal.data, f(gc.tensor(x0)).data)
    assert fwAD.unpack_dual(dual).tangent is None  # outside the level


def test_vmap_is_the_loop_over_the_mapped_dimension():
    xs, w = points((5, 3), (3, 4), seed=13)

    def f(x, w):
        return (x @ w).sin(), x.sum()

    mapped = func.vmap(f, in_dims=(0, None), out_dims=(1, 0))(gc.tensor(xs), gc.tensor(w))
    loop = [f(gc.tensor(row), gc.tensor(w)) for row in xs]
    np.testing.assert_allclose(mapped[0].data, np.stack([r[0].data for r in loop], axis=1))
    np.testing.assert_allclose(mapped[1].data, np.stack([r[1].data for r in loop]))
    per_example = func.vmap(func.grad(lambda x, w: (x @ w).tanh().sum()), in_dims=(0, None))
    grads = per_example(gc.tensor(xs), gc.tensor(w))
    for row, g in zip(xs, grads.data):
        np.testing.assert_allclose(
            g, numeric_jacobian(lambda x, w: (x @ w).tanh().sum(), [row, w], 0), **TOL
        )


def test_results_keep_their_graph_only_when_it_reaches_outside():
    """As torch's: grad(f)(x) of an x that requires grad can be differentiated again; of one
    that does not, it is a plain tensor; under no_grad it is cut."""
    x = gc.tensor([0.5, -1.5], requires_grad=True)

    def f(a):
        return (a**3).sum()

    g = func.grad(f)(x)
    assert g.requires_grad
    (second,) = gc.grad(g.sum(), [x])
    np.testing.assert_allclose(second.data, 6 * x.data)
    assert not func.grad(f)(x.detach()).requires_grad
    with gc.no_grad():
        assert not func.grad(f)(x).requires_grad


def test_the_dtype_of_the_inputs_is_kept():
    x = gc.tensor([0.5, 1.5], dtype=gc.float32)
    assert x.dtype == np.float32
    assert func.grad(lambda a: (a**2).sum())(x).dtype == np.float32
    assert func.jacrev(lambda a: a.sin())(x).dtype == np.float32
    assert func.jacfwd(lambda a: a.sin())(x).dtype == np.float32
    assert AF.hessian(lambda a: (a**3).sum(), x).dtype == np.float32


def test_structures_as_torch_documents_them():
    x, y = (gc.tensor(a) for a in points((2,), (2,), seed=14))
    out, pull = func.vjp(lambda a: a.sin(), x)
    assert isinstance(pull(gc.ones(2)), tuple) and len(pull(gc.ones(2))) == 1
    jac = AF.jacobian(lambda a, b: (a * b, a.sum()), (x, y))
    assert isinstance(jac, tuple) and all(isinstance(row, tuple) and len(row) == 2 for row in jac)
    assert [j.shape for j in jac[1]] == [(2,), (2,)]
    forward = AF.jacobian(
        lambda a, b: (a * b, a.sum()), (x, y), vectorize=True, strategy="forward-mode"
    )
    assert isinstance(forward, list) and all(isinstance(row, list) for row in forward)
    assert isinstance(AF.jacobian(lambda a: a * 2, x), gc.Tensor)
    hessian = AF.hessian(lambda a, b: (a * b).sum(), (x, y))
    assert isinstance(hessian, tuple) and [h.shape for row in hessian for h in row] == [(2, 2)] * 4
    unpacked = fwAD.unpack_dual(x)
    assert unpacked.primal is x and unpacked.tangent is None
    params = {"w": x, "b": y}
    grads = func.grad(lambda p: (p["w"] * p["b"]).sum())(params)
    assert list(grads) == ["w", "b"]
    np.testing.assert_allclose(grads["w"].data, y.data)


def test_errors_in_torch_words():
    x = gc.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError) as error:
        func.grad(lambda a: a * 2)(x)
    assert str(error.value) == (
        "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
        "with 1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
    )
    assert isinstance(error.value, gc.EngineError)
    with pytest.raises(RuntimeError, match="Got argnum=3, but only 1 positional inputs"):
        func.grad(lambda a: a.sum(), argnums=3)(x)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided"):
        AF.vjp(lambda a: a * 2, x)
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor"):
        AF.jacobian(lambda a: a, [x])
    with pytest.raises(ValueError, match="vmap: Expected all tensors to have the same size"):
        func.vmap(lambda a, b: a * b)(x, gc.ones(3))
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level(), pytest.raises(RuntimeError, match="Nested forward mode AD"):
        fwAD.enter_dual_level()
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(lambda a: a, x, strategy="forward-mode")


def test_the_library_names_them_as_torch_does():
    import gradcli.autograd
    import gradcli.func

    assert gradcli.func.grad is func.grad and gradcli.func.vmap is func.vmap
    assert gradcli.autograd.functional.jacobian is AF.jacobian
    assert gradcli.autograd.forward_ad.dual_level is fwAD.dual_level
    assert gradcli.autograd.grad is gc.grad
    assert gc.func is gradcli.func and gc.autograd is gradcli.autograd


def test_gradcheck_passes_right_gradients_and_catches_a_wrong_one():
    from gradcli.autograd import GradcheckError, gradcheck

    x = gc.tensor(points((3,), seed=15)[0], requires_grad=True)
    assert gradcheck(lambda a: (a.sin() * a.exp()).cumsum(0), (x,), check_forward_ad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to"):
        gradcheck(lambda a: a * a.detach(), (x,))
    assert isinstance(GradcheckError("x"), RuntimeError)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        single = gc.tensor([1.0, 2.0], dtype=gc.float32, requires_grad=True)
        assert gradcheck(lambda a: a * 2, (single,), raise_exception=False) is False
