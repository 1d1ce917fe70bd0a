"""gradcli.func, gradcli.autograd.functional and gradcli.autograd.forward_ad against torch
2.13: the same functions (written once, with methods and operators both libraries have) at
the same seeded points; the results' structure exactly (tuple nesting, container types,
shapes, dtypes, which tensors require grad), the numbers to a tolerance, and the errors'
class and text."""

from __future__ import annotations

import numpy as np
import pytest
from func_checks import both, points, same, same_error

import gradcli as gc
import gradcli.autograd.forward_ad as our_fwad
from gradcli import func as our_func
from gradcli.autograd import functional as our_af

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as torch_fwad  # noqa: E402
import torch.autograd.functional as torch_af  # noqa: E402
import torch.func as torch_func  # noqa: E402

# scalar functions of one or two tensors: (name, function, input shapes)
SCALAR = [
    ("sin_sum", lambda x: x.sin().sum(), [(3,)]),
    ("cubic", lambda x: (x**3).sum() * 0.5, [(2, 2)]),
    ("exp_mean", lambda x: (x.exp() * x).mean(), [(4,)]),
    ("scalar_in", lambda x: x.tanh() * x, [()]),
    ("two", lambda x, y: (x * y.exp()).sum() + (x**2 * y).sum(), [(3,), (3,)]),
    ("matrix", lambda a, b: ((a @ b).tanh() ** 2).sum(), [(2, 3), (3, 2)]),
]
# functions with tensor (or tuple) outputs
VECTOR = [
    ("sin", lambda x: x.sin(), [(3,)]),
    ("outer", lambda x, y: x.unsqueeze(1) * y.unsqueeze(0), [(2,), (3,)]),
    ("two_outputs", lambda x, y: (x * y, (x + y).sum()), [(3,), (3,)]),
    ("matrix", lambda a, b: (a @ b).exp(), [(2, 3), (3, 2)]),
    ("scalar_in", lambda x: x * x.sin(), [()]),
]


def ids(cases):
    return [case[0] for case in cases]


def run_both(transform_ours, transform_theirs, function, shapes, requires_grad=False, **kw):
    ours_in, theirs_in = both(points(*shapes), requires_grad)
    ours = transform_ours(function, **kw)(*ours_in)
    theirs = transform_theirs(function, **kw)(*theirs_in)
    return ours, theirs


# -- torch.func ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "function", "shapes"), SCALAR, ids=ids(SCALAR))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_grad_and_grad_and_value(name, function, shapes, requires_grad):
    for transform in ("grad", "grad_and_value"):
        for argnums in [0, -1, tuple(range(len(shapes)))]:
            ours, theirs = run_both(
                getattr(our_func, transform),
                getattr(torch_func, transform),
                function,
                shapes,
                requires_grad,
                argnums=argnums,
            )
            same(ours, theirs, where=f"{transform} argnums={argnums}")


@pytest.mark.parametrize(("name", "function", "shapes"), SCALAR, ids=ids(SCALAR))
def test_nested_second_derivatives(name, function, shapes):
    """hessian, jacrev(jacrev), jacfwd(jacrev), jacrev(grad) of the first argument."""
    for transform in ("hessian", "jacrev_jacrev", "jacfwd_jacrev", "jacrev_grad"):

        def build(module, f, transform=transform):
            if transform == "hessian":
                return module.hessian(f)
            outer, inner = transform.split("_")
            return getattr(module, outer)(getattr(module, inner)(f))

        ours, theirs = run_both(
            lambda f, b=build: b(our_func, f), lambda f, b=build: b(torch_func, f), function, shapes
        )
        same(ours, theirs, rtol=1e-8, where=transform)


def test_grad_of_grad_of_a_scalar_function():
    ours_x, theirs_x = both(points(()))

    def f(x):
        return x.sin() * x**3

    same(our_func.grad(our_func.grad(f))(*ours_x), torch_func.grad(torch_func.grad(f))(*theirs_x))
    third_ours = our_func.grad(our_func.grad(our_func.grad(f)))(*ours_x)
    third_theirs = torch_func.grad(torch_func.grad(torch_func.grad(f)))(*theirs_x)
    same(third_ours, third_theirs, rtol=1e-8)


def test_nesting_does_not_confuse_perturbations():
    """The inner grad differentiates with respect to its own input only: d/dx [d/dy (x y)]
    at y = x is 1, not 2."""
    ours_x, theirs_x = both(points(()))

    def outer(module):
        return module.grad(lambda x: module.grad(lambda y: x * y)(x))

    same(outer(our_func)(*ours_x), outer(torch_func)(*theirs_x))
    assert outer(our_func)(*ours_x).item() == 1.0


@pytest.mark.parametrize(("name", "function", "shapes"), VECTOR, ids=ids(VECTOR))
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians(name, function, shapes, transform):
    for argnums in [0, tuple(range(len(shapes)))]:
        ours, theirs = run_both(
            getattr(our_func, transform),
            getattr(torch_func, transform),
            function,
            shapes,
            argnums=argnums,
        )
        same(ours, theirs, where=f"{transform} argnums={argnums}")


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_of_a_dict_and_has_aux(transform):
    def f(params, x):
        y = (params["w"] * x).sin() + params["b"]
        return y, {"norm": (y**2).sum()}

    arrays = points((3,), (3,), (3,))
    ours_in, theirs_in = both(arrays)
    ours = getattr(our_func, transform)(f, has_aux=True)(
        {"w": ours_in[0], "b": ours_in[1]}, ours_in[2]
    )
    theirs = getattr(torch_func, transform)(f, has_aux=True)(
        {"w": theirs_in[0], "b": theirs_in[1]}, theirs_in[2]
    )
    same(ours, theirs)


def test_vjp_and_its_function():
    def f(x, y):
        return x.sin() * y, (x * y).sum()

    for requires_grad in (False, True):
        ours_in, theirs_in = both(points((3,), (3,)), requires_grad)
        ours_out, ours_fn = our_func.vjp(f, *ours_in)
        theirs_out, theirs_fn = torch_func.vjp(f, *theirs_in)
        same(ours_out, theirs_out)
        ours_v, theirs_v = both(points((3,), (), seed=1))
        same(ours_fn(tuple(ours_v)), theirs_fn(tuple(theirs_v)))


def test_vjp_with_aux_of_one_input():
    ours_in, theirs_in = both(points((2, 2)))

    def f(x):
        return x.exp(), x.sum()

    ours_out, ours_fn, ours_aux = our_func.vjp(f, *ours_in, has_aux=True)
    theirs_out, theirs_fn, theirs_aux = torch_func.vjp(f, *theirs_in, has_aux=True)
    same((ours_out, ours_aux), (theirs_out, theirs_aux))
    ours_v, theirs_v = both(points((2, 2), seed=3))
    same(ours_fn(ours_v[0]), theirs_fn(theirs_v[0]))


@pytest.mark.parametrize(("name", "function", "shapes"), VECTOR, ids=ids(VECTOR))
def test_jvp(name, function, shapes):
    for requires_grad in (False, True):
        ours_in, theirs_in = both(points(*shapes), requires_grad)
        ours_t, theirs_t = both(points(*shapes, seed=5))
        ours = our_func.jvp(function, tuple(ours_in), tuple(ours_t))
        theirs = torch_func.jvp(function, tuple(theirs_in), tuple(theirs_t))
        # torch's primal output of an input that requires grad is an alias (AliasBackward0)
        same(ours, theirs)


def test_vmap_in_dims_out_dims_and_nesting():
    ours_in, theirs_in = both(points((4, 3), (3,), (3, 4)))
    cases = [
        (lambda x, w: (x * w).sum(), {"in_dims": (0, None)}, [0, 1]),
        (lambda x, w: x * w, {"in_dims": (0, None), "out_dims": 1}, [0, 1]),
        (lambda y: y.sin(), {"in_dims": 1}, [2]),
        (lambda x: (x, x.sum()), {"out_dims": (1, 0)}, [0]),
        (lambda x, y: x @ y, {"in_dims": (0, 1)}, [0, 2]),
    ]
    for function, kwargs, chosen in cases:
        ours = our_func.vmap(function, **kwargs)(*[ours_in[i] for i in chosen])
        theirs = torch_func.vmap(function, **kwargs)(*[theirs_in[i] for i in chosen])
        same(ours, theirs, where=str(kwargs))
    nested_ours = our_func.vmap(
        our_func.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(0, None)
    )
    nested_theirs = torch_func.vmap(
        torch_func.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(0, None)
    )
    same(nested_ours(ours_in[0], ours_in[1]), nested_theirs(theirs_in[0], theirs_in[1]))


def test_vmap_is_one_batched_pass_as_torchs():
    """torch runs a vmapped function once over the batch: a batch of vectors times a matrix is
    one matrix product, whose float32 rows round unlike one product per vector. gradcli's
    vmap gives the product of the batch bit for bit, as torch's does, where nothing needs the
    graph; where the input requires grad the slices stand, joined by the graph."""
    generator = np.random.default_rng(7)
    w = generator.standard_normal((33, 31)).astype(np.float32)
    xs = generator.standard_normal((64, 31)).astype(np.float32)
    theirs = torch_func.vmap(lambda r: r @ torch.from_numpy(w).T)(torch.from_numpy(xs))
    assert torch.equal(theirs, torch.from_numpy(xs) @ torch.from_numpy(w).T)
    ours = our_func.vmap(lambda r: r @ gc.Tensor(w).T)(gc.Tensor(xs))
    assert ours.dtype == np.float32 and np.array_equal(ours.data, xs @ w.T)
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-5, atol=1e-5)
    leaf = gc.Tensor(xs, requires_grad=True)
    joined = our_func.vmap(lambda r: r @ gc.Tensor(w).T)(leaf)
    joined.sum().backward()
    np.testing.assert_allclose(joined.data, ours.data, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(leaf.grad.data, np.broadcast_to(w.sum(0), xs.shape), rtol=1e-5)


def test_vmap_of_a_dict_and_of_grad():
    ours_in, theirs_in = both(points((2, 5), (5,)))

    def dot(d):
        return (d["x"] * d["y"]).sum()

    in_dims = ({"x": 0, "y": None},)
    same(
        our_func.vmap(dot, in_dims=in_dims)({"x": ours_in[0], "y": ours_in[1]}),
        torch_func.vmap(dot, in_dims=in_dims)({"x": theirs_in[0], "y": theirs_in[1]}),
    )

    def loss(w, x):
        return (w * x).tanh().sum()

    per_example_ours = our_func.vmap(our_func.grad(loss), in_dims=(None, 0))(ours_in[1], ours_in[0])
    per_example_theirs = torch_func.vmap(torch_func.grad(loss), in_dims=(None, 0))(
        theirs_in[1], theirs_in[0]
    )
    same(per_example_ours, per_example_theirs)


# -- torch.autograd.functional ------------------------------------------------------------------


@pytest.mark.parametrize(("name", "function", "shapes"), VECTOR, ids=ids(VECTOR))
@pytest.mark.parametrize("create_graph", [False, True])
def test_functional_vjp_jvp_jacobian(name, function, shapes, create_graph):
    arrays = points(*shapes)
    many = len(shapes) > 1
    ours_in, theirs_in = both(arrays)
    ours_x = tuple(ours_in) if many else ours_in[0]
    theirs_x = tuple(theirs_in) if many else theirs_in[0]
    out = function(*theirs_in)
    out_shapes = [tuple(o.shape) for o in (out if isinstance(out, tuple) else (out,))]
    ours_v, theirs_v = both(points(*out_shapes, seed=2))
    ours_vv = tuple(ours_v) if isinstance(out, tuple) else ours_v[0]
    theirs_vv = tuple(theirs_v) if isinstance(out, tuple) else theirs_v[0]
    same(
        our_af.vjp(function, ours_x, ours_vv, create_graph=create_graph),
        torch_af.vjp(function, theirs_x, theirs_vv, create_graph=create_graph),
        where="vjp",
    )
    ours_t, theirs_t = both(points(*shapes, seed=4))
    same(
        our_af.jvp(function, ours_x, tuple(ours_t) if many else ours_t[0], create_graph),
        torch_af.jvp(function, theirs_x, tuple(theirs_t) if many else theirs_t[0], create_graph),
        where="jvp",
    )
    for vectorize in (False, True):
        same(
            our_af.jacobian(function, ours_x, create_graph=create_graph, vectorize=vectorize),
            torch_af.jacobian(function, theirs_x, create_graph=create_graph, vectorize=vectorize),
            where=f"jacobian vectorize={vectorize}",
        )
    if not create_graph:
        same(
            our_af.jacobian(function, ours_x, vectorize=True, strategy="forward-mode"),
            torch_af.jacobian(function, theirs_x, vectorize=True, strategy="forward-mode"),
            where="forward-mode jacobian",
        )


@pytest.mark.parametrize(("name", "function", "shapes"), SCALAR, ids=ids(SCALAR))
@pytest.mark.parametrize("create_graph", [False, True])
def test_functional_hessian_vhp_hvp(name, function, shapes, create_graph):
    many = len(shapes) > 1
    ours_in, theirs_in = both(points(*shapes))
    ours_x = tuple(ours_in) if many else ours_in[0]
    theirs_x = tuple(theirs_in) if many else theirs_in[0]
    same(
        our_af.hessian(function, ours_x, create_graph=create_graph),
        torch_af.hessian(function, theirs_x, create_graph=create_graph),
        rtol=1e-8,
        where="hessian",
    )
    same(
        our_af.hessian(function, ours_x, vectorize=True, outer_jacobian_strategy="forward-mode"),
        torch_af.hessian(
            function, theirs_x, vectorize=True, outer_jacobian_strategy="forward-mode"
        ),
        rtol=1e-8,
        where="forward-over-reverse hessian",
    )
    ours_v, theirs_v = both(points(*shapes, seed=7))
    for name in ("vhp", "hvp"):
        same(
            getattr(our_af, name)(
                function, ours_x, tuple(ours_v) if many else ours_v[0], create_graph
            ),
            getattr(torch_af, name)(
                function, theirs_x, tuple(theirs_v) if many else theirs_v[0], create_graph
            ),
            rtol=1e-8,
            where=name,
        )


def test_functional_inputs_that_require_grad_and_create_graph():
    """With create_graph the results stay connected to inputs that require grad, so that they
    can be differentiated again, as torch's."""
    ours_in, theirs_in = both(points((3,)), requires_grad=True)

    def f(x):
        return (x**3).sum()

    ours = our_af.hessian(f, ours_in[0], create_graph=True)
    theirs = torch_af.hessian(f, theirs_in[0], create_graph=True)
    same(ours, theirs)
    (ours_third,) = gc.grad(ours.sum(), ours_in)
    (theirs_third,) = torch.autograd.grad(theirs.sum(), theirs_in)
    same(ours_third, theirs_third)


def test_functional_independent_inputs_give_zeros_or_strict_errors():
    ours_in, theirs_in = both(points((2,), (2,)))

    def f(x, y):
        return x * 2

    same(our_af.jacobian(f, tuple(ours_in)), torch_af.jacobian(f, tuple(theirs_in)))
    same(our_af.vjp(f, tuple(ours_in), ours_in[0]), torch_af.vjp(f, tuple(theirs_in), theirs_in[0]))
    for name in ("vjp", "jacobian"):
        args_ours = (f, tuple(ours_in)) + ((ours_in[0],) if name == "vjp" else ())
        args_theirs = (f, tuple(theirs_in)) + ((theirs_in[0],) if name == "vjp" else ())
        same_error(
            lambda n=name, a=args_ours: getattr(our_af, n)(*a, strict=True),
            lambda n=name, a=args_theirs: getattr(torch_af, n)(*a, strict=True),
        )
    same_error(
        lambda: our_af.jvp(f, tuple(ours_in), tuple(ours_in), strict=True),
        lambda: torch_af.jvp(f, tuple(theirs_in), tuple(theirs_in), strict=True),
    )
    same_error(
        lambda: our_af.hessian(lambda x: (x * 2).sum(), ours_in[0], strict=True),
        lambda: torch_af.hessian(lambda x: (x * 2).sum(), theirs_in[0], strict=True),
    )


# -- torch.autograd.forward_ad ------------------------------------------------------------------


def test_forward_ad_dual_numbers():
    arrays = points((3,), (3,))
    for requires_grad in (False, True):
        ours_in, theirs_in = both(arrays[:1], requires_grad)
        ours_t, theirs_t = both(arrays[1:])
        with our_fwad.dual_level() as ours_level, torch_fwad.dual_level() as theirs_level:
            assert ours_level == theirs_level
            ours_dual = our_fwad.make_dual(ours_in[0], ours_t[0])
            theirs_dual = torch_fwad.make_dual(theirs_in[0], theirs_t[0])
            ours_y = (ours_dual.sin() * ours_dual).exp().sum()
            theirs_y = (theirs_dual.sin() * theirs_dual).exp().sum()
            ours_unpacked = our_fwad.unpack_dual(ours_y)
            theirs_unpacked = torch_fwad.unpack_dual(theirs_y)
            assert type(ours_unpacked).__name__ == type(theirs_unpacked).__name__
            assert ours_unpacked._fields == theirs_unpacked._fields
            same(ours_unpacked.primal, theirs_unpacked.primal)
            np.testing.assert_allclose(
                ours_unpacked.tangent.data, theirs_unpacked.tangent.detach().numpy(), rtol=1e-12
            )
            assert our_fwad.unpack_dual(ours_in[0]).tangent is None
        # the level's end takes the tangents away
        assert our_fwad.unpack_dual(ours_y).tangent is None
        with our_fwad.dual_level():
            assert our_fwad.unpack_dual(ours_y).tangent is None
            assert our_fwad.unpack_dual(ours_y * 2).tangent is None


def test_forward_ad_errors():
    ours_x, theirs_x = both(points((2,)))
    same_error(
        lambda: our_fwad.make_dual(ours_x[0], ours_x[0]),
        lambda: torch_fwad.make_dual(theirs_x[0], theirs_x[0]),
    )
    with our_fwad.dual_level(), torch_fwad.dual_level():
        same_error(
            lambda: our_fwad.make_dual(ours_x[0], gc.ones(3)),
            lambda: torch_fwad.make_dual(theirs_x[0], torch.ones(3)),
        )
        same_error(
            lambda: our_fwad.make_dual(gc.Tensor(np.array([1, 2])), gc.ones(2)),
            lambda: torch_fwad.make_dual(torch.tensor([1, 2]), torch.ones(2)),
        )
        same_error(our_fwad.enter_dual_level, torch_fwad.enter_dual_level)


# -- torch's errors -----------------------------------------------------------------------------


def test_errors_of_misuse_as_torch_words_them():
    ours_in, theirs_in = both(points((3,), (3,)))
    x, y = ours_in
    tx, ty = theirs_in
    cases = [
        (lambda: our_func.grad(lambda a: a)(x), lambda: torch_func.grad(lambda a: a)(tx)),
        (lambda: our_func.grad(lambda a: 3.0)(x), lambda: torch_func.grad(lambda a: 3.0)(tx)),
        (
            lambda: our_func.grad(lambda a: a.sum(), argnums=2)(x),
            lambda: torch_func.grad(lambda a: a.sum(), argnums=2)(tx),
        ),
        (
            lambda: our_func.grad(lambda a, b: a.sum(), argnums=(0, 0))(x, y),
            lambda: torch_func.grad(lambda a, b: a.sum(), argnums=(0, 0))(tx, ty),
        ),
        (
            lambda: our_func.grad(lambda a: a.sum(), argnums=[0])(x),
            lambda: torch_func.grad(lambda a: a.sum(), argnums=[0])(tx),
        ),
        (
            lambda: our_func.grad(lambda a: a.sum(), has_aux=True)(x),
            lambda: torch_func.grad(lambda a: a.sum(), has_aux=True)(tx),
        ),
        (lambda: our_func.jvp(lambda a: a, x, x), lambda: torch_func.jvp(lambda a: a, tx, tx)),
        (
            lambda: our_func.jvp(lambda a: a, (x,), x),
            lambda: torch_func.jvp(lambda a: a, (tx,), tx),
        ),
        (
            lambda: our_func.vjp(lambda a: (a, a), x)[1](x),
            lambda: torch_func.vjp(lambda a: (a, a), tx)[1](tx),
        ),
        (
            lambda: our_func.vmap(lambda a, b: a * b)(x, gc.ones(2)),
            lambda: torch_func.vmap(lambda a, b: a * b)(tx, torch.ones(2)),
        ),
        (
            lambda: our_func.vmap(lambda a: a, in_dims=1)(x),
            lambda: torch_func.vmap(lambda a: a, in_dims=1)(tx),
        ),
        (lambda: our_func.vmap(lambda a: a)(1.0), lambda: torch_func.vmap(lambda a: a)(1.0)),
        (
            lambda: our_func.vmap(lambda a: a.sum().item())(x.reshape(3, 1)),
            lambda: torch_func.vmap(lambda a: 1.0)(tx.reshape(3, 1)),
        ),
        (lambda: our_af.vjp(lambda a: a, x), lambda: torch_af.vjp(lambda a: a, tx)),
        (lambda: our_af.jvp(lambda a: a, x), lambda: torch_af.jvp(lambda a: a, tx)),
        (
            lambda: our_af.vjp(lambda a: a, x, gc.ones(2)),
            lambda: torch_af.vjp(lambda a: a, tx, torch.ones(2)),
        ),
        (
            lambda: our_af.vjp(lambda a, b: a, (x, y), (x, y)),
            lambda: torch_af.vjp(lambda a, b: a, (tx, ty), (tx, ty)),
        ),
        (lambda: our_af.jacobian(lambda a: a, [x]), lambda: torch_af.jacobian(lambda a: a, [tx])),
        (
            lambda: our_af.jacobian(lambda a: [a], x),
            lambda: torch_af.jacobian(lambda a: [a], tx),
        ),
        (lambda: our_af.hessian(lambda a: a, x), lambda: torch_af.hessian(lambda a: a, tx)),
        (
            lambda: our_af.hessian(lambda a: (a, a), x),
            lambda: torch_af.hessian(lambda a: (a, a), tx),
        ),
        (
            lambda: our_af.jacobian(lambda a: a, x, strategy="forward-mode"),
            lambda: torch_af.jacobian(lambda a: a, tx, strategy="forward-mode"),
        ),
        (
            lambda: our_af.jacobian(lambda a: a, x, strategy="forward-mode", create_graph=True),
            lambda: torch_af.jacobian(lambda a: a, tx, strategy="forward-mode", create_graph=True),
        ),
        (
            lambda: our_af.hvp(lambda a: a.sum(), x, gc.ones(2)),
            lambda: torch_af.hvp(lambda a: a.sum(), tx, torch.ones(2)),
        ),
        (
            lambda: our_func.grad(lambda a, b: a * b, argnums=1)(x, 2.0),
            lambda: torch_func.grad(lambda a, b: a * b, argnums=1)(tx, 2.0),
        ),
        (
            lambda: our_func.jvp(lambda a: a, (1.0,), (1.0,)),
            lambda: torch_func.jvp(lambda a: a, (1.0,), (1.0,)),
        ),
        (
            lambda: our_func.vmap(lambda a, b: a, in_dims=(0, 0))(x, 2.0),
            lambda: torch_func.vmap(lambda a, b: a, in_dims=(0, 0))(tx, 2.0),
        ),
        (
            lambda: our_func.vmap(lambda a, b: a, in_dims=(0,))(x, y),
            lambda: torch_func.vmap(lambda a, b: a, in_dims=(0,))(tx, ty),
        ),
        (
            lambda: our_func.vmap(lambda a: a, out_dims="x")(x),
            lambda: torch_func.vmap(lambda a: a, out_dims="x")(tx),
        ),
        (
            lambda: our_func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x),
            lambda: torch_func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(tx),
        ),
        (
            lambda: our_func.vmap(lambda a: a, randomness="never"),
            lambda: torch_func.vmap(lambda a: a, randomness="never"),
        ),
        (
            lambda: our_func.jacrev(lambda a: a, chunk_size=0),
            lambda: torch_func.jacrev(lambda a: a, chunk_size=0),
        ),
        (
            lambda: our_func.vjp(lambda a: a.sum() > 0, x),
            lambda: torch_func.vjp(lambda a: a.sum() > 0, tx),
        ),
        (
            lambda: our_func.jacrev(lambda a: 2.0)(x),
            lambda: torch_func.jacrev(lambda a: 2.0)(tx),
        ),
    ]
    for i, (ours, theirs) in enumerate(cases):
        try:
            same_error(ours, theirs)
        except AssertionError as exc:
            raise AssertionError(f"case {i}: {exc}") from None


def test_a_dual_tensor_prints_its_tangent_as_torch_does():
    x = np.array([1.0, 2.0], dtype=np.float32)
    with gc.default_dtype(np.float32):
        with our_fwad.dual_level(), torch_fwad.dual_level():
            ours = our_fwad.make_dual(
                gc.tensor(x, dtype=gc.float32), gc.tensor(x[::-1].copy(), dtype=gc.float32)
            )
            theirs = torch_fwad.make_dual(torch.tensor(x), torch.tensor(x[::-1].copy()))
            for a, b in ((ours, theirs), (ours.sum(), theirs.sum()), (ours * 2, theirs * 2)):
                assert repr(a) == repr(b)
            ours64 = our_fwad.make_dual(gc.tensor(x.astype(np.float64)), gc.ones(2))
            theirs64 = torch_fwad.make_dual(
                torch.tensor(x.astype(np.float64)), torch.ones(2).double()
            )
            assert repr(ours64) == repr(theirs64)
        assert repr(ours) == repr(theirs) == "tensor([1., 2.])"


def test_transforms_compose_across_the_two_apis():
    """torch.autograd.functional over torch.func's transforms, and torch.func over vmap."""
    ours_in, theirs_in = both(points((3,)))

    def f(x):
        return (x.sin() * x).sum()

    same(
        our_af.jacobian(our_func.grad(f), ours_in[0]),
        torch_af.jacobian(torch_func.grad(f), theirs_in[0]),
    )
    same(
        our_func.jacrev(our_func.vmap(lambda a: a.exp() * a))(ours_in[0]),
        torch_func.jacrev(torch_func.vmap(lambda a: a.exp() * a))(theirs_in[0]),
    )
    same(
        our_af.hvp(lambda a: our_func.grad(f)(a).sum(), ours_in[0], ours_in[0]),
        torch_af.hvp(lambda a: torch_func.grad(f)(a).sum(), theirs_in[0], theirs_in[0]),
    )


def test_vjp_fn_create_graph_as_torch():
    ours_in, theirs_in = both(points((3,)), requires_grad=True)
    ours_fn = our_func.vjp(lambda a: a.sin() * a, *ours_in)[1]
    theirs_fn = torch_func.vjp(lambda a: a.sin() * a, *theirs_in)[1]
    for kwargs in ({}, {"create_graph": False}, {"create_graph": True}):
        same(ours_fn(gc.ones(3), **kwargs), theirs_fn(torch.ones(3, dtype=torch.float64), **kwargs))
    with gc.no_grad(), torch.no_grad():
        same(ours_fn(gc.ones(3)), theirs_fn(torch.ones(3, dtype=torch.float64)))


# -- torch.autograd.gradcheck -------------------------------------------------------------------


def test_gradcheck_as_torch():
    from gradcli.autograd import gradcheck

    ours_in, theirs_in = both(points((3, 2), (2,)), requires_grad=True)
    cases = [
        lambda x, w: (x @ w).tanh(),
        lambda x, w: ((x * w).exp().sum(), x.sin()),
        lambda x, w: (x**2).sum() * w,
    ]
    for f in cases:
        for kwargs in ({}, {"check_forward_ad": True}, {"eps": 1e-4, "atol": 1e-4}):
            assert gradcheck(f, tuple(ours_in), **kwargs) is True
            assert torch.autograd.gradcheck(f, tuple(theirs_in), **kwargs) is True

    def wrong(x, w):
        return x * x.detach() + w.sum()

    with gc.default_dtype(np.float32):  # torch's default dtype: the message prints alike
        text = same_error(
            lambda: gradcheck(wrong, tuple(ours_in)),
            lambda: torch.autograd.gradcheck(wrong, tuple(theirs_in)),
        )
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert gradcheck(wrong, tuple(ours_in), raise_exception=False) is False
    plain = gc.tensor([1.0]), torch.tensor([1.0])
    same_error(
        lambda: gradcheck(lambda a: a, (plain[0],)),
        lambda: torch.autograd.gradcheck(lambda a: a, (plain[1],)),
    )


def test_gradgradcheck_as_torch():
    from gradcli.autograd import gradgradcheck

    ours_in, theirs_in = both(points((3,), (3,)), requires_grad=True)
    for f in (lambda x, y: (x * y).sin(), lambda x, y: ((x**3) * y.exp()).sum()):
        assert gradgradcheck(f, tuple(ours_in)) is True
        assert torch.autograd.gradgradcheck(f, tuple(theirs_in)) is True
    ours_v, theirs_v = both(points((3,), seed=9), requires_grad=True)

    def wrong(x, y):
        return x * (x * y).detach()  # its second derivative in y is missing

    with gc.default_dtype(np.float32):
        same_error(
            lambda: gradgradcheck(wrong, tuple(ours_in), ours_v[0]),
            lambda: torch.autograd.gradgradcheck(wrong, tuple(theirs_in), theirs_v[0]),
        )


def test_compositions_of_transforms():
    """vmap of hessian with several argnums, vmap of jacrev of a pytree output, forward over
    reverse (jvp of grad) and reverse over forward (grad of jvp)."""
    ours_in, theirs_in = both(points((4, 3), (3,)))

    def f(x, w):
        return (x * w).sin().sum() * (x**2).sum()

    same(
        our_func.vmap(our_func.hessian(f, argnums=(0, 1)), in_dims=(0, None))(*ours_in),
        torch_func.vmap(torch_func.hessian(f, argnums=(0, 1)), in_dims=(0, None))(*theirs_in),
        rtol=1e-8,
    )

    def g(x):
        return x.sin(), {"a": x.sum()}

    same(
        our_func.vmap(our_func.jacrev(g))(ours_in[0]),
        torch_func.vmap(torch_func.jacrev(g))(theirs_in[0]),
    )

    def cube(x):
        return (x**3).sum()

    w, tw = ours_in[1], theirs_in[1]
    same(
        our_func.jvp(our_func.grad(cube), (w,), (w,)),
        torch_func.jvp(torch_func.grad(cube), (tw,), (tw,)),
    )
    same(
        our_func.grad(lambda x: our_func.jvp(cube, (x,), (x,))[1])(w),
        torch_func.grad(lambda x: torch_func.jvp(cube, (x,), (x,))[1])(tw),
    )
