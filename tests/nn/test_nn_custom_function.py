"""Custom autograd Functions (gradcli/engine/custom_function.py) against torch 2.13: values,
gradients, double backward, several outputs, ctx's switches and the errors, each written
once over a namespace that is gradcli's engine or torch."""

from __future__ import annotations

import types

import numpy as np
import pytest

import gradcli.ops.library as E
from gradcli.base.engine_errors import GradError, ShapeError
from gradcli.engine.custom_function import Function, node_text, once_differentiable


def _engine_api():
    return types.SimpleNamespace(Function=Function, tensor=E.tensor, grad=E.grad, zeros=E.zeros)


def _torch_api(torch):
    return types.SimpleNamespace(
        Function=torch.autograd.Function,
        tensor=lambda data, requires_grad=False: torch.tensor(
            data, dtype=torch.float64, requires_grad=requires_grad
        ),
        grad=torch.autograd.grad,
        zeros=lambda *shape: torch.zeros(*shape, dtype=torch.float64),
    )


def _functions(api):
    class Exp(api.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    class MulConstant(api.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    class Cube(api.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 3 * x**2

    class TwoOutputs(api.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            ctx.seen = None
            return x * y, x + y

        @staticmethod
        def backward(ctx, grad_product, grad_sum):
            x, y = ctx.saved_tensors
            ctx.seen = (grad_product is None, grad_sum is None)
            grad_product = 0 if grad_product is None else grad_product
            grad_sum = 0 if grad_sum is None else grad_sum
            return grad_product * y + grad_sum, grad_product * x + grad_sum

    class Needs(api.Function):
        @staticmethod
        def forward(ctx, x, y, scale):
            ctx.needs = tuple(ctx.needs_input_grad)
            return x * y * scale

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    class Broadcast(api.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.unsqueeze(0).expand(3, *g.shape) * 2

    return types.SimpleNamespace(
        Exp=Exp,
        MulConstant=MulConstant,
        Cube=Cube,
        TwoOutputs=TwoOutputs,
        Needs=Needs,
        Broadcast=Broadcast,
    )


def _run(api):
    """Every value the scenarios print, as lists."""
    fns = _functions(api)
    found = {}
    x = api.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = fns.Exp.apply(x)
    (g,) = api.grad(y.sum(), x, create_graph=True)
    (g2,) = api.grad(g.sum(), x)
    found["exp"] = (y.tolist(), g.tolist(), g2.tolist())
    z = fns.MulConstant.apply(x, 3.0)
    (gz,) = api.grad(z.sum(), x)
    found["mul_constant"] = (z.tolist(), gz.tolist())
    c = fns.Cube.apply(x)
    (gc,) = api.grad(c.sum(), x, create_graph=True)
    (gc2,) = api.grad((gc * gc).sum(), x)
    found["cube"] = (gc.tolist(), gc2.tolist())
    w = api.tensor([1.5, 0.25, -2.0], requires_grad=True)
    product, total = fns.TwoOutputs.apply(x, w)
    gx, gw = api.grad((product * product).sum() + 3 * total.sum(), (x, w))
    found["two"] = (gx.tolist(), gw.tolist())
    product, total = fns.TwoOutputs.apply(x, w)
    (gx,) = api.grad(product.sum(), x)
    found["one_of_two"] = gx.tolist()
    n = fns.Needs.apply(x, api.tensor([1.0, 2.0, 3.0]), 2)
    (gn,) = api.grad(n.sum(), x)
    found["needs"] = gn.tolist()
    b = fns.Broadcast.apply(x)
    (gb,) = api.grad(b.sum(), x)
    found["broadcast"] = gb.tolist()
    return found, fns


def test_custom_functions_are_torchs():
    torch = pytest.importorskip("torch")
    ours, _ = _run(_engine_api())
    theirs, _ = _run(_torch_api(torch))
    assert ours.keys() == theirs.keys()
    for key in ours:
        np.testing.assert_allclose(
            np.concatenate([np.ravel(v) for v in ours[key]])
            if isinstance(ours[key], tuple)
            else ours[key],
            np.concatenate([np.ravel(v) for v in theirs[key]])
            if isinstance(theirs[key], tuple)
            else theirs[key],
            rtol=1e-14,
            err_msg=key,
        )


def test_exp_and_its_second_derivative_without_torch():
    found, _ = _run(_engine_api())
    e = np.exp([0.5, -1.0, 2.0])
    for values in found["exp"]:
        np.testing.assert_allclose(values, e, rtol=1e-15)
    np.testing.assert_allclose(found["cube"][1], 36 * np.array([0.5, -1.0, 2.0]) ** 3, rtol=1e-14)
    assert found["broadcast"] == [6.0, 6.0, 6.0]


def test_node_names_and_needs_input_grad():
    fns = _functions(_engine_api())
    x = E.tensor([1.0, 2.0], requires_grad=True)
    y = fns.Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    assert repr(y).endswith("grad_fn=<ExpBackward>)")
    assert node_text(y.grad_fn).startswith("<torch.autograd.function.ExpBackward object at 0x")
    assert node_text((y * 2).grad_fn).startswith("<MulBackward0 object at 0x")
    product, total = fns.TwoOutputs.apply(x, E.tensor([3.0, 4.0]))
    assert product.grad_fn.name() == total.grad_fn.name() == "TwoOutputsBackward"
    fns.Needs.apply(x, E.tensor([1.0, 1.0]), 2.0).sum().backward()
    with E.no_grad():
        assert not fns.Exp.apply(x).requires_grad
    assert not fns.Exp.apply(E.tensor([1.0])).requires_grad


def test_materialized_and_none_gradients_of_an_unused_output():
    fns = _functions(_engine_api())
    x = E.tensor([1.0, 2.0], requires_grad=True)
    w = E.tensor([3.0, 4.0], requires_grad=True)
    product, _ = fns.TwoOutputs.apply(x, w)
    ctx = product.grad_fn.output._params["ctx"]
    product.sum().backward()
    assert ctx.seen == (False, False)  # zeros handed in for the unused output
    got = []

    class Lazy(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            got.append((g1 is None, g2 is None))
            return (g1 if g1 is not None else 0) * 2 + (g2 if g2 is not None else 0) * 3

    x.grad = None
    first, _ = Lazy.apply(x)
    first.sum().backward()
    assert got == [(False, True)]
    assert x.grad.tolist() == [2.0, 2.0]


def test_non_differentiable_outputs_and_returned_inputs():
    class SortWithIndices(Function):
        @staticmethod
        def forward(ctx, a):
            order = np.argsort(a.data, kind="stable")
            ctx.order = order
            ranks = E.tensor(order.astype(np.float64))
            ctx.mark_non_differentiable(ranks)
            return a[order], ranks

        @staticmethod
        def backward(ctx, g, g_ranks):
            out = np.zeros(len(ctx.order))
            out[ctx.order] = g.data
            return E.tensor(out)

    class Same(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = E.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, ranks = SortWithIndices.apply(x)
    assert values.requires_grad and not ranks.requires_grad
    (values * E.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]
    same = Same.apply(x)
    assert same is not x and x.is_leaf
    assert E.grad(same.sum(), x)[0].tolist() == [5.0, 5.0, 5.0]


def test_wrong_gradients_are_refused_as_torch():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    class BadShape(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return E.ones(4)

    class GradForNumber(Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = E.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        GradError,
        match=r"function TooManyBackward returned an incorrect number "
        r"of gradients \(expected 1, got 2\)",
    ):
        TooMany.apply(x).sum().backward()
    with pytest.raises(
        ShapeError,
        match=r"Function BadShapeBackward returned an invalid gradient "
        r"at index 0 - got \[4\] but expected shape compatible with \[2\]",
    ):
        BadShape.apply(x).sum().backward()
    with pytest.raises(GradError, match="returned a gradient different than None at position 2"):
        GradForNumber.apply(x, 2.0).sum().backward()


def test_setup_context_style_and_once_differentiable():
    class Square(Function):
        @staticmethod
        def forward(a):
            return a * a

        @staticmethod
        def setup_context(ctx, inputs, output):
            (a,) = inputs
            ctx.save_for_backward(a)

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2 * a

    x = E.tensor([1.5, -2.0], requires_grad=True)
    (g,) = E.grad(Square.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [3.0, -4.0]
    assert not g.requires_grad  # once_differentiable: no graph of the backward


def test_forward_mode_runs_the_jvp_or_refuses_as_torch():
    class Exp(Function):
        @staticmethod
        def forward(ctx, a):
            result = a.exp()
            ctx.result = result
            return result

        @staticmethod
        def backward(ctx, g):
            return g * ctx.result

        @staticmethod
        def jvp(ctx, tangent):
            return tangent * ctx.result

    class NoJvp(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = E.tensor([0.5, 1.0])
    value, tangent = E.jvp(lambda t: Exp.apply(t), x, E.tensor([1.0, 2.0]))
    np.testing.assert_allclose(tangent.data, np.exp([0.5, 1.0]) * [1.0, 2.0], rtol=1e-15)
    # torch's class: Function.jvp raises NotImplementedError
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        E.jvp(lambda t: NoJvp.apply(t), x, E.ones(2))


def test_saved_tensors_are_freed_by_a_backward_as_in_torch():
    fns = _functions(_engine_api())
    x = E.tensor([1.0, 2.0], requires_grad=True)
    y = fns.Exp.apply(x)
    ctx = y.grad_fn.output._params["ctx"]
    y.sum().backward(retain_graph=True)
    assert len(ctx.saved_tensors) == 1
    y.sum().backward()
    with pytest.raises(GradError, match="directly access saved tensors after they have already"):
        ctx.saved_tensors  # noqa: B018


def _sinh_derivatives(function, exp, grad, x):
    """The double-backward tutorial's Sinh: intermediate results returned as outputs, so
    that the second derivative goes through them."""

    class Sinh(function):
        @staticmethod
        def forward(ctx, x):
            expx = exp(x)
            expnegx = exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, grad_out_exp, grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += grad_out_exp * expx
            grad_input -= grad_out_negexp * expnegx
            return grad_input

    out = Sinh.apply(x)[0]
    (first,) = grad(out.sum(), x, create_graph=True)
    (second,) = grad(first.sum(), x)
    return [out.detach().numpy(), first.detach().numpy(), second.numpy()]


def test_double_backward_through_outputs_saved_for_backward_is_torchs():
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).random((3, 3))
    theirs = _sinh_derivatives(
        torch.autograd.Function,
        torch.exp,
        torch.autograd.grad,
        torch.tensor(data, requires_grad=True),
    )
    ours = _sinh_derivatives(Function, E.exp, E.grad, E.tensor(data, requires_grad=True))
    for mine, expected in zip(ours, theirs):
        np.testing.assert_allclose(mine, expected, rtol=1e-15)
    # and the mathematics: sinh' = cosh, cosh' = sinh
    np.testing.assert_allclose(ours[1], np.cosh(data), rtol=1e-14)
    np.testing.assert_allclose(ours[2], np.sinh(data), rtol=1e-14)


def test_the_library_names_them_as_torch_does():
    """``gradcli.autograd.Function`` as ``torch.autograd.Function``; ``gc.nn`` and ``gc.optim``
    as ``torch.nn`` and ``torch.optim``."""
    import gradcli
    from gradcli.autograd import Function as Named
    from gradcli.autograd import once_differentiable
    from gradcli.engine import custom_function

    assert Named is custom_function.Function
    assert once_differentiable is custom_function.once_differentiable
    assert gradcli.nn.Linear.__name__ == "Linear" and gradcli.optim.SGD.__name__ == "SGD"
