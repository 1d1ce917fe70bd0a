"""Every op of the table: reverse and forward rules against finite differences, first and
second order, and the adjoint identity between them."""

from __future__ import annotations

import dis
from functools import partial

import numpy as np
import pytest
from engine_checks import (
    FD_ATOL,
    FD_RTOL,
    FEW,
    RULES,
    evaluate,
    fd_directional,
    fd_gradient,
    graph_primitives,
    hessian_vector,
    random_like,
    reverse_gradients,
    tensors,
)
from engine_optable import INTEGER, LOGICAL, NO_GRADIENT, OPS
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st

import gradcli as gc
from gradcli.engine import bytecode
from gradcli.ops.table import OPS as TABLE

OP_PARAMS = [pytest.param(op, id=op.name) for op in OPS]


def test_masks_carry_no_gradient():
    """The non-differentiable mask primitive records no node and no tangent."""
    x = gc.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    relu_mask = gc.ops.primitives.mask(lambda a: (a > 0).astype(a.dtype), x)
    assert relu_mask.grad_fn is None and not relu_mask.requires_grad
    assert relu_mask.tolist() == [0.0, 0.0, 1.0]


def _rng(case):
    return np.random.default_rng(case.seed + 1)


def test_every_primitive_is_in_the_table():
    covered = {name for op in OPS + NO_GRADIENT + LOGICAL + INTEGER for name in op.primitives}
    differentiable = {name for name, prim in gc.PRIMITIVES.items() if prim.differentiable}
    missing = sorted(differentiable - covered)
    assert not missing, f"primitives without a line in engine_optable.OPS: {missing}"
    unknown = sorted(covered - set(gc.PRIMITIVES))
    assert not unknown, f"table lines claim primitives that do not exist: {unknown}"


@pytest.mark.parametrize("op", [p for p in OP_PARAMS if p.values[0].primitives])
def test_table_line_exercises_its_primitives(op):
    """The primitives a line claims do show up, in the graph of the op or of its gradient."""

    def seen(case) -> set[str]:
        xs = tensors(case.inputs, requires_grad=True)
        out = case.fn(*xs)
        names = graph_primitives(out)
        if out.requires_grad:
            v = gc.tensor(random_like(_rng(case), out.shape))
            grads = gc.grad(out, xs, v, create_graph=True, allow_unused=True)
            for g in grads:
                if g is not None:
                    names |= graph_primitives(g)
        return names

    names: set[str] = set()

    @settings(max_examples=40, database=None, deadline=None, phases=[Phase.generate])
    @given(op.cases())
    def collect(case):
        names.update(seen(case))

    collect()
    assert set(op.primitives) <= names, f"never recorded: {set(op.primitives) - names}"


@pytest.mark.parametrize("op", OP_PARAMS)
@RULES
@given(data=st.data())
def test_reverse_rule_matches_finite_differences(op, data):
    case = data.draw(op.cases())
    out = evaluate(case.fn, case.inputs)
    v = random_like(_rng(case), out.shape)
    got = reverse_gradients(case.fn, case.inputs, v)
    expected = fd_gradient(lambda xs: float(np.sum(evaluate(case.fn, xs) * v)), case.inputs)
    assert len(got) == len(expected)
    for g, e, x in zip(got, expected, case.inputs):
        assert g.shape == x.shape
        np.testing.assert_allclose(g, e, rtol=FD_RTOL, atol=FD_ATOL)


@pytest.mark.parametrize("op", OP_PARAMS)
@RULES
@given(data=st.data())
def test_forward_rule_matches_finite_differences(op, data):
    case = data.draw(op.cases())
    rng = _rng(case)
    directions = [random_like(rng, x.shape) for x in case.inputs]
    value, tangent = gc.jvp(case.fn, tensors(case.inputs), tensors(directions))
    expected_value = evaluate(case.fn, case.inputs)
    np.testing.assert_array_equal(value.numpy(), expected_value)
    assert tangent.shape == value.shape
    expected = fd_directional(lambda xs: evaluate(case.fn, xs), case.inputs, directions)
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=FD_RTOL, atol=FD_ATOL)


@pytest.mark.parametrize("op", OP_PARAMS)
@RULES
@given(data=st.data())
def test_adjoint_identity(op, data):
    """<v, J t> = <J^T v, t>, with J t from gc.jvp and J^T v from gc.vjp."""
    case = data.draw(op.cases())
    rng = _rng(case)
    directions = [random_like(rng, x.shape) for x in case.inputs]
    _, jt = gc.jvp(case.fn, tensors(case.inputs), tensors(directions))
    v = random_like(rng, jt.shape)
    jtv = reverse_gradients(case.fn, case.inputs, v)
    lhs = float(np.sum(v * jt.numpy()))
    rhs = sum(float(np.sum(g * t)) for g, t in zip(jtv, directions))
    scale = float(np.sum(np.abs(v * jt.numpy()))) + sum(
        float(np.sum(np.abs(g * t))) for g, t in zip(jtv, directions)
    )
    assert abs(lhs - rhs) <= 1e-12 * max(scale, 1.0)


@pytest.mark.parametrize("op", OP_PARAMS)
@RULES
@given(data=st.data())
def test_second_order_matches_finite_differences(op, data):
    """H w of s(x) = <v, f(x)>, by grad(create_graph=True) twice and by gc.hvp, against
    central differences of the engine's own gradient along w."""
    case = data.draw(op.cases())
    rng = _rng(case)
    out = evaluate(case.fn, case.inputs)
    v = random_like(rng, out.shape)
    w = [random_like(rng, x.shape) for x in case.inputs]
    got = hessian_vector(case.fn, case.inputs, v, w)
    expected = fd_directional(lambda xs: reverse_gradients(case.fn, xs, v), case.inputs, w)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=FD_RTOL, atol=FD_ATOL)

    def s(*xs):
        return (case.fn(*xs) * gc.tensor(v)).sum()

    _, hvp = gc.hvp(s, tensors(case.inputs), tensors(w))
    for h, g in zip(hvp, got):
        np.testing.assert_allclose(h.numpy(), g, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", OP_PARAMS)
@FEW
@given(data=st.data())
def test_jacobian_strategies_agree_with_finite_differences(op, data):
    case = data.draw(op.cases())
    out_shape = evaluate(case.fn, case.inputs).shape
    reverse = gc.jacobian(case.fn, tensors(case.inputs), strategy="reverse-mode")
    forward = gc.jacobian(case.fn, tensors(case.inputs), strategy="forward-mode")
    for i, (r, f, x) in enumerate(zip(reverse, forward, case.inputs)):
        assert r.shape == f.shape == out_shape + x.shape
        np.testing.assert_allclose(r.numpy(), f.numpy(), rtol=1e-12, atol=1e-12)
        columns = []
        for k in range(x.size):
            directions = [np.zeros_like(y) for y in case.inputs]
            directions[i].reshape(-1)[k] = 1.0
            columns.append(fd_directional(partial(evaluate, case.fn), case.inputs, directions))
        expected = (
            np.stack(columns, axis=-1).reshape(out_shape + x.shape)
            if columns
            else np.zeros(out_shape + x.shape)
        )
        np.testing.assert_allclose(r.numpy(), expected, rtol=FD_RTOL, atol=FD_ATOL)


@pytest.mark.parametrize("op", OP_PARAMS)
@FEW
@given(data=st.data())
def test_hessian_is_symmetric_and_matches_hvp(op, data):
    case = data.draw(op.cases())
    rng = _rng(case)
    v = random_like(rng, evaluate(case.fn, case.inputs).shape)
    w = [random_like(rng, x.shape) for x in case.inputs]

    def s(*xs):
        return (case.fn(*xs) * gc.tensor(v)).sum()

    blocks = gc.hessian(s, tensors(case.inputs))
    hw = hessian_vector(case.fn, case.inputs, v, w)
    sizes = [x.size for x in case.inputs]
    full = np.block(
        [
            [blocks[i][j].numpy().reshape(sizes[i], sizes[j]) for j in range(len(sizes))]
            for i in range(len(sizes))
        ]
    )
    np.testing.assert_allclose(full, full.T, rtol=1e-9, atol=1e-9)
    flat_w = np.concatenate([wi.reshape(-1) for wi in w])
    flat_hw = np.concatenate([h.reshape(-1) for h in hw])
    np.testing.assert_allclose(full @ flat_w, flat_hw, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("op", OP_PARAMS)
@FEW
@given(data=st.data())
def test_float32_stays_float32(op, data):
    case = data.draw(op.cases())
    assume(case.params.get("dtype") is None)  # a dtype given is the result's (sum(x, dtype=))
    xs = tensors(case.inputs, requires_grad=True, dtype=gc.float32)
    out = case.fn(*xs)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), evaluate(case.fn, case.inputs), rtol=1e-4, atol=1e-5)
    rng = _rng(case)
    v = gc.tensor(random_like(rng, out.shape), dtype=gc.float32)
    if out.requires_grad:
        out.backward(v)
        for x in xs:
            assert x.grad is not None and x.grad.dtype == np.float32
    expected = reverse_gradients(case.fn, case.inputs, v.numpy().astype(np.float64))
    for x, e in zip(xs, expected):
        got = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        np.testing.assert_allclose(got, e, rtol=1e-3, atol=1e-4)
    directions = [gc.tensor(random_like(rng, x.shape), dtype=gc.float32) for x in case.inputs]
    _, tangent = gc.jvp(case.fn, tensors(case.inputs, dtype=gc.float32), directions)
    assert tangent.dtype == np.float32


def _reads_by_dis(function, name):
    """``reads_argument`` by ``dis``: whether any instruction loads the local ``name``."""
    code = function.__code__
    if name in code.co_cellvars:
        return True
    return any(i.argval == name and "FAST" in i.opname for i in dis.get_instructions(code))


def test_reads_argument_finds_every_rule_that_reads_out():
    """The element-wise factories tell the engine which reverse rules never read ``out`` by
    reading their bytecode (``reads_argument``): it must agree with ``dis`` on every entry's
    derivative, read through a nested function, a long jump (EXTENDED_ARG), or not at all."""
    checked = 0
    for op in TABLE.values():
        for cell in getattr(op.vjp, "__closure__", None) or ():
            rule = cell.cell_contents
            if callable(rule) and hasattr(rule, "__code__"):
                assert bytecode.reads_argument(rule, "out") == _reads_by_dis(rule, "out"), op.name
                assert op.vjp_reads_out or not _reads_by_dis(rule, "out"), op.name
                checked += 1
    assert checked > 50

    def nested(x, out):
        return (lambda: out)()

    long_body = "\n".join(f"        v{i} = x + {i}" for i in range(300))
    namespace: dict = {}
    exec(f"def long(x, out):\n    if x:\n{long_body}\n    return x\n", namespace)
    assert bytecode.reads_argument(nested, "out") and bytecode.reads_argument(len, "out")
    assert not bytecode.reads_argument(lambda x, out: x, "out")
    assert not bytecode.reads_argument(namespace["long"], "out")
    assert any(i.opname == "EXTENDED_ARG" for i in dis.get_instructions(namespace["long"]))
    assert bytecode.reads_argument(lambda x, out: out * x, "out")
