"""The element-wise functions and activations of gradcli/ops/elementwise/pointwise.py and
activations.py at their kinks, poles and edges, against PyTorch at every order it defines;
floor_divide, which PyTorch does not differentiate; the grad_fn names of the Tensor and Scalar
overloads."""

from __future__ import annotations

import math

import numpy as np
import pytest
from engine_checks import tensors
from engine_optable import NO_GRADIENT
from test_engine_edges import _check

import gradcli as gc
from gradcli.engine import compile as C

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _constant(values):
    return gc.tensor(values), torch.tensor(values, dtype=torch.float64)


_B, _TB = _constant([1.0, 1.5, -2.0, 0.5])
_SIGN, _TSIGN = _constant([-1.0, 1.0, -0.5])

# name -> (gradcli, torch, inputs): values and three orders of derivatives, all finite
EVERY_ORDER = {
    "floor at whole numbers": (gc.floor, torch.floor, [[1.0, -2.0, 0.0, 0.5]]),
    "ceil at whole numbers": (gc.ceil, torch.ceil, [[1.0, -2.0, 0.0, 0.5]]),
    "trunc at whole numbers": (gc.trunc, torch.trunc, [[1.0, -2.0, 0.0, -0.5]]),
    "round at halves": (gc.round, torch.round, [[0.5, 1.5, 2.5, -0.5, 1.2]]),
    "round to tens": (
        lambda x: gc.round(x, decimals=-1),
        lambda x: torch.round(x, decimals=-1),
        [[15.0, 25.0, -4.0]],
    ),
    "frac at whole numbers": (gc.frac, torch.frac, [[1.0, -2.0, 0.0, -1.5]]),
    "remainder where it jumps": (
        gc.remainder,
        torch.remainder,
        [[2.0, -3.0, 0.0, 1.0], [1.0, 1.5, 2.0, -0.5]],
    ),
    "fmod where it jumps": (gc.fmod, torch.fmod, [[2.0, -3.0, 0.0, 1.0], [1.0, 1.5, 2.0, -0.5]]),
    "remainder by a number": (lambda x: x % 2.0, lambda x: x % 2.0, [[-3.0, 4.0, 1.5]]),
    "xlogy where input is 0": (gc.xlogy, torch.xlogy, [[0.0, 0.0, 1.5], [2.0, 0.5, 3.0]]),
    "elu at 0": (gc.elu, F.elu, [[0.0, -1.0, 1.0]]),
    "elu with alpha at 0": (lambda x: gc.elu(x, 2.0), lambda x: F.elu(x, 2.0), [[0.0, -1.0]]),
    "celu at 0": (lambda x: gc.celu(x, 2.0), lambda x: F.celu(x, 2.0), [[0.0, -1.0, 0.5]]),
    "selu at 0": (gc.selu, F.selu, [[0.0, -1.0, 1.0]]),
    "leaky_relu at 0": (
        lambda x: gc.leaky_relu(x, 0.2),
        lambda x: F.leaky_relu(x, 0.2),
        [[0.0, -1.0, 1.0]],
    ),
    "relu6 at its bounds": (gc.relu6, F.relu6, [[0.0, 6.0, 3.0, -1.0, 7.0]]),
    "hardtanh at its bounds": (
        lambda x: gc.hardtanh(x, -0.5, 2.0),
        lambda x: F.hardtanh(x, -0.5, 2.0),
        [[-0.5, 2.0, 0.0]],
    ),
    "hardswish at +-3": (gc.hardswish, F.hardswish, [[-3.0, 3.0, 1.0, -4.0, 4.0]]),
    "softplus at its threshold": (
        lambda x: gc.softplus(x, beta=2.0, threshold=5.0),
        lambda x: F.softplus(x, beta=2.0, threshold=5.0),
        [[2.5, 2.6, 2.4, -1.0]],
    ),
    "softplus at the default threshold": (gc.softplus, F.softplus, [[20.0, 20.5, 19.5]]),
    "logit with eps at its bounds": (
        lambda x: gc.logit(x, eps=0.1),
        lambda x: torch.logit(x, eps=0.1),
        [[0.05, 0.1, 0.9, 0.95, 0.5]],
    ),
    "softsign at 0": (gc.softsign, F.softsign, [[0.0, -1.0, 2.0]]),
    "lerp at its ends": (gc.lerp, torch.lerp, [[1.0, 2.0], [3.0, -1.0], [0.0, 1.0]]),
    "lerp by a number": (
        lambda a, b: gc.lerp(a, b, 0.75),
        lambda a, b: torch.lerp(a, b, 0.75),
        [[1.0, 2.0], [3.0, -1.0]],
    ),
    "copysign with a number": (
        lambda x: gc.copysign(x, -1.0),
        lambda x: torch.copysign(x, -1.0),
        [[1.0, -2.0]],
    ),
    "glu along dim 0": (
        lambda x: gc.glu(x, 0),
        lambda x: F.glu(x, 0),
        [[[1.0, -2.0], [0.5, 3.0], [0.0, 1.0], [-1.0, 2.0]]],
    ),
    "gelu, both forms": (
        lambda x: gc.gelu(x) + gc.gelu(x, approximate="tanh"),
        lambda x: F.gelu(x) + F.gelu(x, approximate="tanh"),
        [[0.0, -3.0, 2.5]],
    ),
    "digamma's third derivative": (gc.digamma, torch.digamma, [[0.3, 2.5, -1.5]]),
}
# Only the gradient: torch's second derivative is nan at these points (0 / 0 in its formula)
FIRST_ORDER = {
    "sinc at 0": (gc.sinc, torch.sinc, [[0.0, 0.5, -1.0]]),
    "copysign at 0": (
        lambda x: gc.copysign(x, _SIGN),
        lambda x: torch.copysign(x, _TSIGN),
        [[0.0, -0.0, 2.0]],
    ),
}


@pytest.mark.parametrize("name", list(EVERY_ORDER))
def test_every_order_matches_torch(name):
    _check(*EVERY_ORDER[name], orders=3)


@pytest.mark.parametrize("name", list(FIRST_ORDER))
def test_gradient_matches_torch(name):
    _check(*FIRST_ORDER[name], orders=1)


def _first_order(gc_fn, torch_fn, inputs, rtol=1e-12):
    """Value and gradient against torch, nan and inf where torch has them."""
    arrays = [np.asarray(a, dtype=np.float64) for a in inputs]
    xs = tensors(arrays, requires_grad=True)
    txs = [torch.tensor(a, requires_grad=True) for a in arrays]
    with np.errstate(all="ignore"):
        out = gc_fn(*xs)
        out.sum().backward()
    tout = torch_fn(*txs)
    tout.sum().backward()
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=rtol, equal_nan=True)
    for x, t in zip(xs, txs):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=rtol, equal_nan=True)


POLES = {
    "lgamma at its poles": (gc.lgamma, torch.lgamma, [[0.0, -1.0, -2.0, 1.0, -1.5]]),
    "digamma at its poles": (gc.digamma, torch.digamma, [[0.0, -0.0, -1.0, -2.5, 1.0]]),
    "erfinv at +-1 and outside": (gc.erfinv, torch.erfinv, [[1.0, -1.0, 1.5, 0.0]]),
    "logit without eps at and outside [0, 1]": (
        gc.logit,
        torch.logit,
        [[0.0, 1.0, -0.5, 1.5, 0.25]],
    ),
    "atan2 at the origin": (gc.atan2, torch.atan2, [[0.0, 0.0, 1.0], [0.0, -0.0, 0.0]]),
    "hypot at the origin": (gc.hypot, torch.hypot, [[0.0, 3.0], [0.0, 4.0]]),
    "rsqrt at 0": (gc.rsqrt, torch.rsqrt, [[0.0, 4.0]]),
    "acosh at 1": (gc.acosh, torch.acosh, [[1.0, 2.0]]),
    "atanh at +-1": (gc.atanh, torch.atanh, [[1.0, -1.0, 0.5]]),
    "nan_to_num of nan and infinities": (
        gc.nan_to_num,
        torch.nan_to_num,
        [[math.nan, math.inf, -math.inf, 1.0]],
    ),
    "nan_to_num with replacements": (
        lambda x: gc.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
        lambda x: torch.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
        [[math.nan, math.inf, -math.inf, 1.0]],
    ),
    "remainder by 0": (gc.remainder, torch.remainder, [[1.0, -1.0], [0.0, 0.0]]),
    "logaddexp of infinities": (
        gc.logaddexp,
        torch.logaddexp,
        [[-math.inf, math.inf, 1.0], [-math.inf, 1.0, math.inf]],
    ),
}


@pytest.mark.parametrize("name", list(POLES))
def test_poles_and_edges_match_torch(name):
    _first_order(*POLES[name])


def test_hardsigmoid_matches_torch_to_its_float32_sixth():
    """torch's hardsigmoid gradient is 1/6 rounded to float32 (0.1666666716...), in float64
    too; the engine's is 1/6. Both are 0 at -3 and 3."""
    _first_order(gc.hardsigmoid, F.hardsigmoid, [[-3.0, 3.0, 1.0, -4.0, 4.0]], rtol=1e-7)


def test_softplus_without_arguments_is_unchanged():
    x = gc.tensor([-30.0, 0.5, 15.0, 25.0], requires_grad=True)
    gc.softplus(x).sum().backward()
    tx = torch.tensor([-30.0, 0.5, 15.0, 25.0], dtype=torch.float64, requires_grad=True)
    F.softplus(tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("row", NO_GRADIENT, ids=lambda row: row.name)
def test_floor_divide_values_match_torch_and_its_derivative_is_refused_as_torch_does(row):
    a = np.array([[7.0, -7.0, 0.5], [-0.5, 3.0, -3.0]])
    b = np.array([2.0, 2.0, -0.25])
    out = row.fn(gc.tensor(a), gc.tensor(b))
    np.testing.assert_array_equal(out.numpy(), torch.floor_divide(*map(torch.tensor, (a, b))))
    np.testing.assert_array_equal((gc.tensor(a) // 2.0).numpy(), np.floor_divide(a, 2.0))
    x = gc.tensor(a, requires_grad=True)
    y = x // gc.tensor(b)
    assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
    tx = torch.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="floor_divide is not implemented"):
        (tx // torch.tensor(b)).sum().backward()
    with pytest.raises(gc.GradError, match="floor_divide is not implemented"):
        y.sum().backward()
    with pytest.raises(gc.GradError, match="floor_divide is not implemented"):
        gc.jvp(lambda t: t // 2.0, [gc.tensor(a)], [gc.tensor(np.ones_like(a))])


def test_a_numbers_remainder_by_a_tensor_has_no_derivative_as_in_torch():
    tx = torch.tensor([1.5, -2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="remainder is not implemented"):
        (5.0 % tx).sum().backward()
    x = gc.tensor([1.5, -2.0], requires_grad=True)
    np.testing.assert_array_equal((5.0 % x).numpy(), (5.0 % tx).detach().numpy())
    with pytest.raises(gc.GradError, match="remainder of a number by a tensor"):
        (5.0 % x).sum().backward()


def _name(t) -> str:
    return type(t.grad_fn).__name__ if isinstance(t, torch.Tensor) else t.grad_fn.name()


OVERLOADS = {
    "remainder, tensor": lambda m, x, y: m.remainder(x, y),
    "remainder, number": lambda m, x, y: x % 2.0,
    "fmod, tensor": lambda m, x, y: m.fmod(x, y),
    "fmod, number": lambda m, x, y: m.fmod(x, 2.0),
    "xlogy, tensor": lambda m, x, y: m.xlogy(x, y),
    "xlogy, number other": lambda m, x, y: m.xlogy(x, 2.0),
    "copysign, tensor": lambda m, x, y: m.copysign(x, y),
    "copysign, number": lambda m, x, y: m.copysign(x, -1.0),
    "lerp, tensor weight": lambda m, x, y: m.lerp(x, y, y),
    "lerp, number weight": lambda m, x, y: m.lerp(x, y, 0.5),
    "round": lambda m, x, y: m.round(x),
    "round with decimals": lambda m, x, y: m.round(x, decimals=1),
    "square": lambda m, x, y: m.square(x),
    "relu6": lambda m, x, y: m.nn.functional.relu6(x) if m is torch else m.relu6(x),
    "selu": lambda m, x, y: m.nn.functional.selu(x) if m is torch else m.selu(x),
    "softsign": lambda m, x, y: m.nn.functional.softsign(x) if m is torch else m.softsign(x),
    "softmin": lambda m, x, y: m.nn.functional.softmin(x, 0) if m is torch else m.softmin(x, 0),
}


@pytest.mark.parametrize("name", list(OVERLOADS))
def test_grad_fn_names_are_torchs(name):
    values = ([0.5, 1.5], [2.0, 3.0])
    x, y = (gc.tensor(v, requires_grad=True) for v in values)
    tx, ty = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values)
    assert _name(OVERLOADS[name](gc, x, y)) == _name(OVERLOADS[name](torch, tx, ty))


def test_glu_refuses_an_odd_dimension():
    with pytest.raises(gc.ShapeError, match="halving dimension must be even"):
        gc.glu(gc.ones(3))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gc.gelu(gc.ones(2), approximate="erf"), "approximate must be 'none' or 'tanh'"),
        (lambda: gc.celu(gc.ones(2), alpha=0.0), "alpha may not be 0"),
        (lambda: gc.hardtanh(gc.ones(2), 1.0, -1.0), "must not be below min_val"),
    ],
)
def test_bad_arguments_are_domain_errors(call, message):
    with pytest.raises(gc.DomainError, match=message):
        call()


@pytest.mark.parametrize("row", NO_GRADIENT, ids=lambda row: row.name)
def test_a_traced_floor_division_replays_on_a_batch(row):
    a, b = np.array([[7.0, -7.0, 0.5], [-0.5, 3.0, -3.0]]), np.array([2.0, -0.25, 1.5])
    tape = C.trace(lambda x, y: [row.fn(x, y)], a[0], b)
    (out,) = C.run_batched(tape, [a, b], [True, False])
    np.testing.assert_array_equal(out, np.floor_divide(a, b))
