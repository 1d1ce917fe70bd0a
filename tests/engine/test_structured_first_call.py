"""``structured_jacobian`` (planned anew, the plan not kept) takes J_u of an element-wise rest
of a row scaling from the rest's forward rules on the values of its tracing, without tracing
the rest or computing its values again: the same Jacobian, bit for bit, the same description
and count of passes as a ``JacobianPlan`` (which traces it, to replay it), for rests that are
element-wise and for rests that are not."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import structured as S
from gradcli.ops import library as gc

RNG = np.random.default_rng(11)
A = gc.tensor(RNG.standard_normal((7, 5)))
C = gc.tensor(RNG.standard_normal(7))
HALF = gc.tensor(0.5)

RESTS = {
    "tanh": lambda u: gc.tanh(u),
    "exp and a power": lambda u: gc.exp(u) * C + u**2,
    "relu": lambda u: gc.relu(u) * 3.0,
    "sigmoid of a shift": lambda u: gc.sigmoid(u + C),
    "a selection by a mask": lambda u: gc.where(u > 0, u, C),
    "a rational function": lambda u: u**3 - 1.0 / (1 + u * u),
    "a chain of rules on arrays": lambda u: gc.log(2.0 + gc.cos(gc.sin(u))) / C - 3.0,
    "a quotient and a negation": lambda u: C / gc.exp(-u),
    "constants made in the function": lambda u: gc.tanh(u) * gc.exp(HALF * 2.0) + C * 3.0,
}


def _dense(block):
    return block if isinstance(block, np.ndarray) else block.dense()


@pytest.mark.parametrize("name", list(RESTS))
def test_first_call_gives_the_plans_jacobian(name, monkeypatch):
    rest = RESTS[name]
    x = gc.tensor(RNG.standard_normal(5))
    traced_rests = []
    coloured = S._coloured
    monkeypatch.setattr(S, "_coloured", lambda *a: traced_rests.append(1) or coloured(*a))
    first = S.structured_jacobian(lambda v: rest(gc.matmul(A, v)), x)
    shortcut = not traced_rests
    planned = S.JacobianPlan(lambda v: rest(gc.matmul(A, v)))(x)
    assert first.how == planned.how
    assert first.passes == planned.passes and first.out_shape == planned.out_shape
    a, b = _dense(first.blocks[0]), _dense(planned.blocks[0])
    assert a.dtype == b.dtype and np.array_equal(a, b)
    # the element-wise rests are not traced (the mask's comparison is not differentiable)
    assert shortcut == (name != "a selection by a mask")


def test_the_rules_on_arrays_give_the_forward_rules_bits(monkeypatch):
    """Where every step of the rest has a rule on float64 arrays and one operand with a
    tangent, the tensors' forward rules do not run, and the Jacobian is the plan's bit for
    bit; relu's rule masks the bits of a tangent of 4,096 elements or more."""
    calls = []
    tangent_of = S.tangent_of
    monkeypatch.setattr(S, "tangent_of", lambda *a: calls.append(1) or tangent_of(*a))
    wide = gc.tensor(RNG.standard_normal((5000, 5)))
    x = gc.tensor(RNG.standard_normal(5))
    for matrix, rest in ((A, RESTS["a chain of rules on arrays"]), (wide, gc.relu)):
        func = lambda v: rest(gc.matmul(matrix, v))  # noqa: B023, E731
        first = S.structured_jacobian(func, x)
        assert not calls
        planned = S.JacobianPlan(func)(x)
        assert np.array_equal(first.blocks[0], planned.blocks[0])


def test_a_rest_that_is_not_elementwise_is_planned_as_before(monkeypatch):
    x = gc.tensor(RNG.standard_normal(5))
    calls = []
    coloured = S._coloured
    monkeypatch.setattr(S, "_coloured", lambda *a: calls.append(1) or coloured(*a))
    func = lambda v: (lambda u: u[1:] * u[:-1])(gc.tanh(gc.matmul(A, v)))  # noqa: E731
    first = S.structured_jacobian(func, x)
    assert calls  # the rest was traced and coloured
    planned = S.JacobianPlan(func)(x)
    assert np.array_equal(_dense(first.blocks[0]), _dense(planned.blocks[0]))


def test_a_nonfinite_tangent_is_reported_as_by_the_plan():
    """sqrt's forward rule makes an inf tangent where u = 0 (from finite values): the first
    call, which takes the rest's tangent from the values of its tracing, reports it as the
    plan's traced pass does."""
    matrix = gc.tensor(np.array([[1.0, -1.0], [2.0, 1.0]]))
    x = gc.tensor(np.array([1.0, 1.0]))  # u = (0, 3)
    func = lambda v: gc.sqrt(gc.matmul(matrix, v))  # noqa: E731
    with np.errstate(all="ignore"), gc.watch_nonfinite() as first_found:
        first = S.structured_jacobian(func, x)
    with np.errstate(all="ignore"), gc.watch_nonfinite() as planned_found:
        planned = S.JacobianPlan(func)(x)
    assert [type(f) for f in first_found] == [gc.NonfiniteTangent]
    assert [f.prim.name for f in first_found] == [f.prim.name for f in planned_found]
    a, b = _dense(first.blocks[0]), _dense(planned.blocks[0])
    assert np.array_equal(a, b, equal_nan=True)
