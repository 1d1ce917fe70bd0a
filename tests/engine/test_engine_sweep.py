"""The op table, entry by entry: every entry is complete, has its rows in the test table,
and every symbolic rule agrees with the engine.

The rows of ``engine_optable.OPS`` take each entry through eager reverse and forward mode,
second order and torch (test_engine_rules, test_engine_torch) and through compiled, batched
replay (test_engine_batched); this file holds the table itself to account.
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_optable import OPS_BY_NAME

from gradcli import engine as gc
from gradcli.compute import bind, check
from gradcli.lang import load_program
from gradcli.lang.functions import FUNCTIONS
from gradcli.ops.table import OPS
from gradcli.symbolic import elementwise


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
        for method in op.methods:
            assert getattr(gc.Tensor, method) is op.call


# One program per operation with a symbolic rule: check compares sympy's Jacobian with
# reverse and forward mode and finite differences.
SYMBOLIC_PROGRAMS = {
    "add": ("y = x + 2*x", "0.5,-1"),
    "sub": ("y = 3 - x", "0.5,-1"),
    "mul": ("y = x * x", "0.5,-1"),
    "div": ("y = 1 / (x + 3)", "0.5,-1"),
    "pow": ("y = x ** 3", "0.5,-1"),
    "neg": ("y = -x", "0.5,-1"),
    "reciprocal": ("y = reciprocal(x + 3)", "0.5,-1"),
    "exp": ("y = exp(x)", "0.5,-1"),
    "log": ("y = log(x + 3)", "0.5,-1"),
    "log1p": ("y = log1p(x + 2)", "0.5,-1"),
    "expm1": ("y = expm1(x)", "0.5,-1"),
    "sqrt": ("y = sqrt(x + 3)", "0.5,-1"),
    "abs": ("y = abs(x)", "0.5,-1"),
    "sin": ("y = sin(x)", "0.5,-1"),
    "cos": ("y = cos(x)", "0.5,-1"),
    "tan": ("y = tan(x)", "0.5,-1"),
    "asin": ("y = asin(x / 2)", "0.5,-1"),
    "acos": ("y = acos(x / 2)", "0.5,-1"),
    "atan": ("y = atan(x)", "0.5,-1"),
    "sinh": ("y = sinh(x)", "0.5,-1"),
    "cosh": ("y = cosh(x)", "0.5,-1"),
    "tanh": ("y = tanh(x)", "0.5,-1"),
    "sigmoid": ("y = sigmoid(x)", "0.5,-1"),
    "softplus": ("y = softplus(x)", "0.5,-1"),
    "erf": ("y = erf(x)", "0.5,-1"),
    "sum": ("y = sum(x * x, 1)", "[[1,2],[3,-1]]"),
    "mean": ("y = mean(x * x, 0)", "[[1,2],[3,-1]]"),
    "prod": ("y = prod(x, 1)", "[[1,2],[3,-1]]"),
    "logsumexp": ("y = logsumexp(x, 1)", "[[1,2],[3,-1]]"),
    "norm": ("y = norm(x)", "[[1,2],[3,-1]]"),
    "softmax": ("y = softmax(x, 1)", "[[1,2],[3,-1]]"),
    "log_softmax": ("y = log_softmax(x, 0)", "[[1,2],[3,-1]]"),
    "matmul": ("y = x @ x", "[[1,2],[3,-1]]"),
    "dot": ("y = dot(x, x)", "0.5,-1"),
    "transpose": ("y = transpose(x) * x", "[[1,2],[3,-1]]"),
    "reshape": ("y = reshape(x, 4) * 2", "[[1,2],[3,-1]]"),
    "flatten": ("y = flatten(x) ** 2", "[[1,2],[3,-1]]"),
    "unsqueeze": ("y = unsqueeze(x, -1) ** 2", "0.5,-1"),
    "squeeze": ("y = squeeze(unsqueeze(x, 0)) ** 2", "0.5,-1"),
    "stack": ("y = stack([x, x * x])", "0.5,-1"),
    "cat": ("y = cat([x, x * x])", "0.5,-1"),
    "mse_loss": ("y = mse_loss(x, x * x)", "0.5,-1"),
    "binary_cross_entropy_with_logits": ("y = bce_with_logits(x, sigmoid(x))", "0.5,-1"),
}


def test_every_symbolic_rule_has_a_program():
    with_rules = {name for name, op in FUNCTIONS.items() if callable(op.symbolic)}
    assert with_rules == set(SYMBOLIC_PROGRAMS)


@pytest.mark.parametrize("name", sorted(SYMBOLIC_PROGRAMS))
def test_symbolic_rules_agree_with_the_engine(name):
    source, x = SYMBOLIC_PROGRAMS[name]
    from gradcli.values import parse_value

    program = load_program(source, use_cache=False)
    result = check(bind(program, {"x": parse_value(x, "x")}))
    assert "symbolic" in result.check, result.warnings
    assert result.agree, result.worst
    assert np.allclose(result.check["symbolic"]["x"], result.check["reverse"]["x"])
