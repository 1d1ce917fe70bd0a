"""Edges where a rule used to give nan, a wrong value or a numpy error, against PyTorch at
every order it defines: powers and p-norms at 0, the -inf norm, zero-size reductions."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from engine_checks import tensors

import gradcli as gc

torch = pytest.importorskip("torch")
F = torch.nn.functional

ORDERS = 3


def _gc_derivatives(fn, arrays, directions):
    """fn's value, then <d, grad> chained: the k-th entry is the k-th derivative of the
    previous entry's sum against the fixed directions (gradcli)."""
    xs = tensors(arrays, requires_grad=True)
    out = fn(*xs)
    results = [[out.numpy()]]
    scalar = (out * gc.tensor(directions[0])).sum()
    for k in range(1, ORDERS + 1):
        if scalar is None or not scalar.requires_grad:
            results.append([np.zeros_like(a) for a in arrays])
            scalar = None
            continue
        found = gc.grad(scalar, xs, create_graph=True, allow_unused=True)
        grads = [gc.Tensor(np.zeros(x.shape)) if g is None else g for g, x in zip(found, xs)]
        results.append([g.numpy() for g in grads])
        scalar = gc.tensor(0.0)
        for g, w in zip(grads, directions[k]):
            scalar = scalar + (g * gc.tensor(w)).sum()
    return results


def _torch_derivatives(fn, arrays, directions):
    xs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out = fn(*xs)
    results = [[out.detach().numpy()]]
    scalar = (out * torch.from_numpy(np.asarray(directions[0]))).sum()
    for k in range(1, ORDERS + 1):
        if scalar is None or not scalar.requires_grad:
            results.append([np.zeros_like(a) for a in arrays])
            scalar = None
            continue
        found = torch.autograd.grad(scalar, xs, create_graph=True, allow_unused=True)
        grads = [torch.zeros_like(x) if g is None else g for g, x in zip(found, xs)]
        results.append([g.detach().numpy(force=True) for g in grads])
        scalar = sum((g * torch.from_numpy(w)).sum() for g, w in zip(grads, directions[k]))
    return results


def _directions(arrays, out_shape):
    rng = np.random.default_rng(11)
    first = rng.uniform(0.5, 1.5, out_shape)
    return [first] + [[rng.uniform(0.5, 1.5, a.shape) for a in arrays] for _ in range(ORDERS)]


def _inf_norm(p, dim=None):
    return (
        lambda x: gc.norm(x, p, dim),
        lambda x: torch.linalg.vector_norm(x, p, dim=dim),
    )


EDGES = {
    "x ** 0 at 0": (lambda x: x**0.0, lambda x: x**0.0, [[0.0, 1.5, -2.0]]),
    "x ** 1 at 0": (lambda x: x**1.0, lambda x: x**1.0, [[0.0, 1.5, -2.0]]),
    "x ** 2 at 0": (lambda x: x**2.0, lambda x: x**2.0, [[0.0, 1.5, -2.0]]),
    "-inf norm": (*_inf_norm(-math.inf), [[1.0, -0.5, 0.5, 2.0]]),
    "-inf norm along dim": (*_inf_norm(-math.inf, 1), [[[3.0, -1.0], [2.0, 2.0]]]),
    "3-norm at the origin": (*_inf_norm(3), [[0.0, 0.0, 0.0]]),
    "3-norm with a zero element": (*_inf_norm(3), [[0.0, 1.0, -2.0]]),
    "3-norm of a zero row": (*_inf_norm(3, 1), [[[0.0, 0.0], [1.0, -2.0]]]),
    "4-norm at the origin": (*_inf_norm(4), [[0.0, 0.0]]),
    "4-norm with a zero element": (*_inf_norm(4), [[0.0, 1.0, -2.0]]),
}
# Only the gradient: torch's own second derivative is nan here (|x|^(p-2) at 0).
FIRST_ORDER = {
    "1.5-norm with zeros": (*_inf_norm(1.5, 1), [[[0.0, 0.0], [0.0, 3.0]]]),
    "0.5-norm with zeros": (*_inf_norm(0.5, 1), [[[0.0, 0.0], [0.0, 3.0]]]),
}
# torch's second derivatives are nan here (the norm's at 0)
FIRST_ORDER.update(
    {
        "cosine_similarity of a zero vector": (
            lambda x: gc.cosine_similarity(x, gc.tensor([[1.0, 2.0], [0.0, 0.0]])),
            lambda x: F.cosine_similarity(
                x, torch.tensor([[1.0, 2.0], [0.0, 0.0]], dtype=torch.float64)
            ),
            [[[0.0, 0.0], [1.0, -1.0]]],
        ),
        "gaussian_nll_loss with var below eps": (
            lambda v: gc.gaussian_nll_loss(gc.tensor([1.0, 2.0, 0.5]), gc.zeros(3), v),
            lambda v: F.gaussian_nll_loss(
                torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64),
                torch.zeros(3, dtype=torch.float64),
                v,
            ),
            [[1e-8, 0.0, 0.5]],
        ),
    }
)


def _loss(name, *fixed, **options):
    """A loss of the first operand, the others fixed: gradcli's and torch's."""

    def ours(x):
        return getattr(gc, name)(x, *[gc.tensor(f) for f in fixed], reduction="none", **options)

    def theirs(x):
        fixed_tensors = [torch.tensor(f, dtype=torch.float64) for f in fixed]
        return getattr(F, name)(x, *fixed_tensors, reduction="none", **options)

    return ours, theirs


def _method(name, *args, **options):
    return (
        lambda x: getattr(gc, name)(x, *args, **options),
        lambda x: getattr(torch, name)(x, *args, **options),
    )


EDGES.update(
    {
        "l1_loss at input == target": (*_loss("l1_loss", [0.0, 0.0, 2.0]), [[0.0, 1.0, 2.0]]),
        "smooth_l1_loss at |d| == beta": (
            *_loss("smooth_l1_loss", [0.0, 0.0, 0.0, 0.0], beta=1.0),
            [[1.0, -1.0, 0.0, 0.5]],
        ),
        "smooth_l1_loss with beta 0": (
            *_loss("smooth_l1_loss", [0.0, 0.0, 0.0], beta=0.0),
            [[1.0, 0.0, -0.5]],
        ),
        "huber_loss at |d| == delta": (
            *_loss("huber_loss", [0.0, 0.0, 0.0, 0.0], delta=0.5),
            [[0.5, -0.5, 0.0, 2.0]],
        ),
        "margin_ranking_loss at the hinge": (
            *_loss("margin_ranking_loss", [1.0, 0.0, 2.0], [1.0, -1.0, 1.0], margin=0.5),
            [[1.5, -0.5, 1.0]],
        ),
        "hinge_embedding_loss at the margin": (
            *_loss("hinge_embedding_loss", [-1.0, -1.0, 1.0, 0.5], margin=1.0),
            [[1.0, 0.5, 1.0, 1.0]],
        ),
        "poisson_nll_loss full at target 1": (
            lambda t: gc.poisson_nll_loss(gc.tensor([0.5, 0.2, 1.0]), t, full=True),
            lambda t: F.poisson_nll_loss(
                torch.tensor([0.5, 0.2, 1.0], dtype=torch.float64), t, full=True
            ),
            [[1.0, 0.5, 2.0]],
        ),
        "triplet_margin_loss with swap, a tie": (
            lambda a: gc.triplet_margin_loss(
                a, gc.tensor([[1.0, 0.0]]), gc.tensor([[0.0, 0.0]]), swap=True
            ),
            lambda a: F.triplet_margin_loss(
                a,
                torch.tensor([[1.0, 0.0]], dtype=torch.float64),
                torch.tensor([[0.0, 0.0]], dtype=torch.float64),
                swap=True,
            ),
            [[[1.0, 0.0]]],
        ),
        "std of equal values": (*_method("std", 1), [[[1.5, 1.5, 1.5], [1.0, 2.0, 4.0]]]),
        "cumprod with one zero": (*_method("cumprod", 0), [[2.0, 0.0, 3.0, -1.5]]),
        "cumprod with two zeros": (*_method("cumprod", 0), [[2.0, 0.0, 3.0, 0.0, 0.5]]),
        "cumprod starting with zeros": (*_method("cumprod", 0), [[0.0, 0.0, 3.0]]),
        "cumprod with zeros along dim 1": (
            *_method("cumprod", 1),
            [[[1.5, 0.0, 2.0], [0.0, 3.0, 0.0], [1.0, 2.0, 3.0]]],
        ),
    }
)


def _check(gc_fn, torch_fn, inputs, orders):
    arrays = [np.asarray(a, dtype=np.float64) for a in inputs]
    with torch.no_grad():
        out_shape = tuple(torch_fn(*[torch.from_numpy(a) for a in arrays]).shape)
    directions = _directions(arrays, out_shape)
    got = _gc_derivatives(gc_fn, arrays, directions)
    expected = _torch_derivatives(torch_fn, arrays, directions)
    for order in range(orders + 1):
        for g, e in zip(got[order], expected[order]):
            assert np.all(np.isfinite(g)), f"order {order}: {g}"
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14, err_msg=f"order {order}")


@pytest.mark.parametrize("name", list(EDGES))
def test_every_order_matches_torch(name):
    _check(*EDGES[name], orders=ORDERS)


# torch's third derivative is nan here (its formula takes the log of a zero gradient)
SECOND_ORDER = {
    "logcumsumexp, large inputs": (
        *_method("logcumsumexp", 0),
        [[1000.0, 1001.0, -1000.0, 999.0]],
    ),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_order_matches_torch(name):
    _check(*SECOND_ORDER[name], orders=2)


@pytest.mark.parametrize("name", list(FIRST_ORDER))
def test_gradient_matches_torch(name):
    _check(*FIRST_ORDER[name], orders=1)


def test_minus_inf_norm_of_the_language():
    """-1e400 is -inf in the language; norm(x, -inf) is min |x|, not 1."""
    program = gc_program("y = norm(x, -1e400)")
    x = gc.tensor([3.0, -0.25, 2.0], requires_grad=True)
    y = program.run({"x": x})["y"]
    y.backward()
    assert y.item() == 0.25
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, -1.0, 0.0])


def gc_program(source):
    from gradcli.lang import parse_program

    return parse_program(source)


# -- zero-size inputs -------------------------------------------------------------------------

EMPTY_SHAPES = [(0,), (0, 3), (2, 0)]
EMPTY_OPS = {
    "softmax": (gc.softmax, torch.softmax),
    "log_softmax": (gc.log_softmax, torch.log_softmax),
    "sum": (gc.sum, torch.sum),
    "mean": (gc.mean, torch.mean),
    "prod": (gc.prod, lambda x, d: torch.prod(x, d)),
    "logsumexp": (gc.logsumexp, torch.logsumexp),
    "norm": (lambda x, d: gc.norm(x, 2, d), lambda x, d: torch.linalg.vector_norm(x, 2, d)),
    "1-norm": (lambda x, d: gc.norm(x, 1, d), lambda x, d: torch.linalg.vector_norm(x, 1, d)),
    "3-norm": (lambda x, d: gc.norm(x, 3, d), lambda x, d: torch.linalg.vector_norm(x, 3, d)),
    "amax": (gc.amax, torch.amax),
    "amin": (gc.amin, torch.amin),
}


@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
@pytest.mark.parametrize("name", list(EMPTY_OPS))
def test_zero_size_inputs_match_torch(name, shape):
    gc_fn, torch_fn = EMPTY_OPS[name]
    for dim in range(-len(shape), len(shape)):
        tx = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
        x = gc.tensor(np.zeros(shape), requires_grad=True)
        try:
            tout = torch_fn(tx, dim)
        except (RuntimeError, IndexError) as exc:
            with pytest.raises(gc.ShapeError, match="size 0"):
                gc_fn(x, dim)
            assert name in ("amax", "amin"), exc
            continue
        with np.errstate(all="raise"):  # no numpy warning on the way either
            out = gc_fn(x, dim)
        np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
        v = np.ones(out.shape)
        (g,) = gc.grad(out, [x], gc.tensor(v))
        (tg,) = torch.autograd.grad(tout, tx, torch.from_numpy(v))
        assert g.shape == shape
        np.testing.assert_array_equal(g.numpy(), tg.numpy())


# -- where torch's value or gradient is nan or inf: the same, nan for nan --------------------

NONFINITE = {
    "std of one value": (lambda x: gc.std(x), lambda x: torch.std(x), [[1.5]]),
    "var of one value": (lambda x: gc.var(x, 0), lambda x: torch.var(x, 0), [[1.5]]),
    # (with correction above N, or over all dims, torch's own gradients disagree with each
    # other: 2/(N - correction) unclamped, or inf for every element)
    "var with correction N": (
        lambda x: gc.var(x, 0, correction=2),
        lambda x: torch.var(x, 0, correction=2),
        [[1.0, 2.5]],
    ),
    "kl_div at target 0": (
        lambda t: gc.kl_div(gc.tensor([-1.0, -2.0, -0.5]), t, reduction="sum"),
        lambda t: F.kl_div(
            torch.tensor([-1.0, -2.0, -0.5], dtype=torch.float64), t, reduction="sum"
        ),
        [[0.0, 0.5, 0.5]],
    ),
    "nll_loss with every target ignored": (
        lambda x: gc.nll_loss(x, gc.tensor([1.0, 1.0]), ignore_index=1),
        lambda x: F.nll_loss(x, torch.tensor([1, 1]), ignore_index=1),
        [[[-1.0, -0.5], [-0.2, -2.0]]],
    ),
    "cross_entropy of one ignored target": (
        lambda x: gc.cross_entropy(x, gc.tensor(-100.0)),
        lambda x: F.cross_entropy(x, torch.tensor(-100)),
        [[1.0, -0.5]],
    ),
}


@pytest.mark.parametrize("name", list(NONFINITE))
def test_nonfinite_values_and_gradients_match_torch(name):
    gc_fn, torch_fn, inputs = NONFINITE[name]
    arrays = [np.asarray(a, dtype=np.float64) for a in inputs]
    xs = tensors(arrays, requires_grad=True)
    txs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's warning of no degrees of freedom
        out, tout = gc_fn(*xs), torch_fn(*txs)
        out.backward()
        expected = torch.autograd.grad(tout, txs)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-12)
    assert not np.all(
        np.isfinite(np.concatenate([out.numpy().ravel(), xs[0].grad.numpy().ravel()]))
    )
    for x, e in zip(xs, expected):
        np.testing.assert_allclose(x.grad.numpy(), e.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: gc.gaussian_nll_loss(gc.ones(2, 3), gc.ones(2, 3), gc.ones(3)), gc.ShapeError),
        (
            lambda: gc.gaussian_nll_loss(gc.ones(2), gc.ones(2), gc.tensor([1.0, -1.0])),
            gc.DomainError,
        ),
        (
            lambda: gc.cross_entropy(gc.ones(2, 3), gc.tensor([0, 1]), label_smoothing=1.5),
            gc.DomainError,
        ),
        (lambda: gc.nll_loss(gc.ones(2, 3), gc.tensor([0, 3])), gc.IndexDomainError),
        (lambda: gc.nll_loss(gc.ones(2, 3, 2), gc.tensor([0, 1])), gc.ShapeError),
        (lambda: gc.smooth_l1_loss(gc.ones(2), gc.ones(2), beta=-1.0), gc.DomainError),
        (lambda: gc.huber_loss(gc.ones(2), gc.ones(2), delta=0.0), gc.DomainError),
        (lambda: gc.kl_div(gc.ones(2), gc.ones(2), reduction="batch"), gc.DomainError),
        (lambda: gc.var(gc.ones(2), unbiased=True, correction=0), gc.DomainError),
        (lambda: gc.cumsum(gc.ones(2, 2), 2), gc.ShapeError),
        (lambda: gc.cosine_embedding_loss(gc.ones(2, 3), gc.ones(2, 3), gc.ones(3)), gc.ShapeError),
    ],
)
def test_bad_arguments_are_refused_as_torch_refuses_them(call, error):
    with pytest.raises(error):
        call()
