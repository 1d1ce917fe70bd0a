"""The op table, entry by entry: every entry is complete, has its rows in the test table,
and every symbolic rule agrees with the engine.

The rows of ``engine_optable.OPS`` take each entry through eager reverse and forward mode,
second order and torch (test_engine_rules, test_engine_torch) and through compiled, batched
replay (test_engine_batched); this file holds the table itself to account.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from engine_checks import FEW, tensors
from engine_optable import OPS as TABLE
from engine_optable import OPS_BY_NAME
from hypothesis import given, settings
from hypothesis import strategies as st
from optable_linalg import SYMBOLIC_PROGRAMS as LINALG_PROGRAMS
from optable_singles import SYMBOLIC_PROGRAMS as SINGLES_PROGRAMS

from gradcli.commands.compute import bind, check
from gradcli.domains.symbolic import elementwise
from gradcli.engine import sizes
from gradcli.lang import load_program
from gradcli.lang.functions import FUNCTIONS
from gradcli.lang.values import parse_value
from gradcli.ops import library as gc
from gradcli.ops.table import OPS


def test_every_operation_a_program_can_call_has_a_row_in_the_test_table():
    """A row is named after the entry, or calls its function (cross_entropy_classes)."""
    called = {row.fn for row in OPS_BY_NAME.values()}
    missing = sorted(
        name for name, op in FUNCTIONS.items() if name not in OPS_BY_NAME and op.call not in called
    )
    assert not missing, f"operations without a row in engine_optable.OPS: {missing}"


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_entry_is_complete(name):
    op = OPS[name]
    assert op.summary, "a one-line summary"
    if op.forward is not None:
        assert op.backward_name, "PyTorch's grad_fn name"
        assert op.vjp is not None and op.jvp is not None, "reverse and forward rules"
        assert op.batch is not None, "a batch rule"
    if op.in_language:
        assert op.call is not None, "the function a program calls"
        assert op.symbolic is not None, "a symbolic rule, or the reason it has none"
        assert elementwise(name) or op.explain is not None, "explain's local derivative"
        # of several results: every one, as torch's (engine.several); a spelling torch names
        # its node by, or an entry built from others, names it (engine.naming): the same call
        for method in op.methods:
            assert inspect.unwrap(getattr(gc.Tensor, method)) is inspect.unwrap(op.call)


# A program per operation with a symbolic rule, for check to compare sympy's Jacobian with
# reverse and forward mode and finite differences. An element-wise function of one tensor
# needs none here: it is called on two points of its test-table row's domain.
SYMBOLIC_PROGRAMS = {
    "add": ("y = x + 2*x", "0.5,-1"),
    "sub": ("y = 3 - x", "0.5,-1"),
    "rsub": ("y = rsub(x, 3) + rsub(x, x * x, alpha=2)", "0.5,-1"),
    "mul": ("y = x * x", "0.5,-1"),
    "div": ("y = 1 / (x + 3)", "0.5,-1"),
    "pow": ("y = x ** 3", "0.5,-1"),
    "sum": ("y = sum(x * x, 1)", "[[1,2],[3,-1]]"),
    "full_like": ("y = x * full_like(x, 2.5)", "0.5,-1"),
    "zeros_like": ("y = x * x + zeros_like(x)", "0.5,-1"),
    "ones_like": ("y = x * ones_like(x, dtype=torch.float64)", "0.5,-1"),
    "mean": ("y = mean(x * x, 0)", "[[1,2],[3,-1]]"),
    "prod": ("y = prod(x, 1)", "[[1,2],[3,-1]]"),
    "logsumexp": ("y = logsumexp(x, 1)", "[[1,2],[3,-1]]"),
    "norm": ("y = norm(x)", "[[1,2],[3,-1]]"),
    "softmax": ("y = softmax(x, 1)", "[[1,2],[3,-1]]"),
    "normalize": ("y = normalize(x)", "[[1,2],[3,-1]]"),
    "log_softmax": ("y = log_softmax(x, 0)", "[[1,2],[3,-1]]"),
    "matmul": ("y = x @ x", "[[1,2],[3,-1]]"),
    "dot": ("y = dot(x, x)", "0.5,-1"),
    "transpose": ("y = transpose(x) * x", "[[1,2],[3,-1]]"),
    "reshape": ("y = reshape(x, 4) * 2", "[[1,2],[3,-1]]"),
    "flatten": ("y = flatten(x) ** 2 + flatten(unsqueeze(x, 0), 1, 2)", "[[1,2],[3,-1]]"),
    "unsqueeze": ("y = unsqueeze(x, -1) ** 2", "0.5,-1"),
    "squeeze": ("y = squeeze(unsqueeze(x, 0)) ** 2", "0.5,-1"),
    "stack": ("y = stack([x, x * x])", "0.5,-1"),
    "cat": ("y = cat([x, x * x])", "0.5,-1"),
    "mse_loss": ("y = mse_loss(x, x * x)", "0.5,-1"),
    "binary_cross_entropy_with_logits": ("y = bce_with_logits(x, sigmoid(x))", "0.5,-1"),
    "atan2": ("y = atan2(x, x * x + 1)", "0.5,-1"),
    "hypot": ("y = hypot(x, x + 2)", "0.5,-1"),
    "xlogy": ("y = xlogy(x, x * x)", "0.5,-1"),
    "logaddexp": ("y = logaddexp(x, 2 * x)", "0.5,-1"),
    "logaddexp2": ("y = logaddexp2(x, 2 * x)", "0.5,-1"),
    "lerp": ("y = lerp(x, x * x, x + 1)", "0.5,-1"),
    "logit": ("y = logit(x)", "0.25,0.5"),
    "nan_to_num": ("y = nan_to_num(x) * x", "0.5,-1"),
    "gelu": ("y = gelu(x) + gelu(x, approximate='tanh')", "0.5,-1"),
    "softplus": ("y = softplus(x, beta=2, threshold=5)", "0.5,-1"),
    "softmin": ("y = softmin(x, 1)", "[[1,2],[3,-1]]"),
    "glu": ("y = glu(x, 0)", "[[1,2],[3,-1]]"),
    **LINALG_PROGRAMS,  # linear algebra and shape operations
    **SINGLES_PROGRAMS,  # repeat, tile, pad, einsum, ...
    "kl_div": ("y = kl_div(x, sigmoid(x), reduction='batchmean')", "0.5,-1"),
    "poisson_nll_loss": ("y = poisson_nll_loss(x, exp(x), reduction='sum')", "0.5,-1"),
    "pairwise_distance": ("y = pairwise_distance(x, x * x)", "[[1,2],[3,-1]]"),
    "var": ("y = var(x * x, 1)", "[[1,2],[3,-1]]"),
    "std": ("y = std(x, correction=0)", "[[1,2],[3,-1]]"),
    "cumsum": ("y = cumsum(x * x, 1)", "[[1,2],[3,-1]]"),
    "cumprod": ("y = cumprod(x, 0)", "[[1,2],[3,-1]]"),
    "logcumsumexp": ("y = logcumsumexp(x, -1)", "[[1,2],[3,-1]]"),
    # operations with several results: each result as the program unpacks or picks it
    "var_mean": ("v, m = var_mean(x * x, 1); y = v + m", "[[1,2],[3,-1]]"),
    "std_mean": ("s, m = std_mean(x, correction=0); y = s * m", "[[1,2],[3,-1]]"),
    "split": ("a, b = split(x, [1, 1]); y = a * b + split(x, 1, 1)[1]", "[[1,2],[3,-1]]"),
    "chunk": ("a, b = chunk(x * x, 2, 1); y = a - b", "[[1,2],[3,-1]]"),
    "unbind": ("a, b = unbind(x, 1); y = a * b", "[[1,2],[3,-1]]"),
    # comparisons and logical operations: a boolean is its indicator, with derivative 0
    "eq": ("y = x * (x == x)", "0.5,-1"),
    "ne": ("y = x * (x != 0.25)", "0.5,-1"),
    "lt": ("y = x * (x < 0)", "0.5,-1"),
    "le": ("y = x * (x <= 1)", "0.5,-1"),
    "gt": ("y = x * (x > 0)", "0.5,-1"),
    "ge": ("y = x * (x >= -0.5)", "0.5,-1"),
    "logical_and": ("y = x * logical_and(x, x + 1)", "0.5,-1.5"),
    "logical_or": ("y = x * logical_or(x > 0, x + 1)", "0.5,-1.5"),
    "logical_xor": ("y = x * logical_xor(x > 0, x < 1)", "0.5,-1"),
    "logical_not": ("y = x * logical_not(x > 0)", "0.5,-1"),
    "bitwise_and": ("y = x * ((x > -2) & (x < 0))", "0.5,-1"),
    "bitwise_or": ("y = x * ((x > 0) | (x < -2))", "0.5,-1"),
    "bitwise_xor": ("y = x * ((x > 0) ^ (x < 1))", "0.5,-1"),
    "bitwise_not": ("y = x * ~(x > 0)", "0.5,-1"),
    "isclose": ("y = x * isclose(x, 0.5, atol=0.1)", "0.5,-1"),
    "any": ("y = x * any(x > 0)", "0.5,-1"),
    "all": ("y = x * all(x > 0, 0, True)", "0.5,-1"),
    "masked_fill": ("y = masked_fill(x, x > 0, 2) * x", "0.5,-1"),
    "linear": ("y = linear(x, x * x, x[0])", "[[1,2],[3,-1]]"),
    "embedding": ("i = tensor([1., 0., 1.]); y = embedding(i, x * x)", "[[1,2],[3,-1]]"),
}


def _unary(op) -> bool:
    return [p.name for p in op.params] == ["input"] and elementwise(op.name)


SYMBOLIC = sorted(name for name, op in FUNCTIONS.items() if callable(op.symbolic))


def _program(name: str) -> tuple[str, np.ndarray]:
    if name in SYMBOLIC_PROGRAMS:
        source, x = SYMBOLIC_PROGRAMS[name]
        return source, parse_value(x, "x")
    domain = OPS_BY_NAME[name].domains
    return f"y = {name}(x)", domain.sample(np.random.default_rng(0), (2,))


def test_every_symbolic_rule_has_a_program():
    without = [n for n in SYMBOLIC if n not in SYMBOLIC_PROGRAMS and not _unary(FUNCTIONS[n])]
    assert not without, f"symbolic rules with no program to check them: {without}"


@pytest.mark.parametrize("name", SYMBOLIC)
def test_symbolic_rules_agree_with_the_engine(name):
    source, x = _program(name)
    program = load_program(source, use_cache=False)
    result = check(bind(program, {"x": x}))
    assert "symbolic" in result.jacobians, result.warnings
    assert result.agree, result.worst
    assert np.allclose(result.jacobians["symbolic"]["x"], result.jacobians["reverse"]["x"])


# -- sizes: every value an entry makes was predicted, before it was allocated -----------------


def _allocated(out, arrays) -> int:
    """The elements a forward's result holds that none of its operands did: none for a view
    of an operand, what is stored for a broadcast of a new array."""
    out = np.asarray(out)
    if any(isinstance(a, np.ndarray) and np.may_share_memory(out, a) for a in arrays):
        return 0
    return sizes.stored(out)


@pytest.fixture
def recorded_sizes(monkeypatch):
    """Every primitive's forward, wrapped to record (entry, predicted, allocated) per call."""
    calls: list[tuple[str, int, int]] = []

    def wrap(prim, forward):
        def recording(*arrays, **params):
            expected = sizes.predicted(prim, arrays, params)
            out = forward(*arrays, **params)
            results = out if isinstance(out, tuple) else (out,)
            made = sum(_allocated(r, arrays) for r in results)
            calls.append((prim.name, expected, made))
            return out

        return recording

    for prim in OPS.values():
        if prim.forward is not None:
            monkeypatch.setattr(prim, "forward", wrap(prim, prim.forward))
    return calls


@pytest.mark.parametrize("row", [pytest.param(r, id=r.name) for r in TABLE])
@settings(FEW)
@given(data=st.data())
def test_every_value_an_entry_makes_is_predicted_before_it_is_allocated(row, data, recorded_sizes):
    """Forward, reverse and second order of the row's entry: each primitive call's size rule
    (or the broadcast of its operands) is at least what its forward allocated, so that the
    check before it (engine.sizes) holds every value to --max-elements and --max-memory."""
    recorded_sizes.clear()
    case = data.draw(row.cases())
    xs = tensors(case.inputs, requires_grad=True)
    out = case.fn(*xs)
    if out.requires_grad:
        cotangent = gc.tensor(np.ones(out.shape, dtype=out.dtype))
        (g,) = gc.grad(out, xs[0], cotangent, create_graph=True, allow_unused=True)
        if g is not None and g.requires_grad:
            gc.grad(g.sum(), xs[0], allow_unused=True)
    under = [c for c in recorded_sizes if c[1] < c[2]]
    assert not under, f"{case}: (entry, predicted, allocated) under-predicted: {under}"
