"""Non-finite values: each reported as a warning naming its statement (an overflow as an
overflow), JSON's null, and --strict's exit 1."""

from __future__ import annotations

import json

import pytest

SQRT_TANGENT = (
    "statement 1 (line 1) `y = sqrt(x)`: the forward-mode derivative of sqrt gave a "
    "non-finite tangent (the derivative of sqrt at 0 is infinite)"
)


def test_non_finite_values_are_reported_and_strict_fails(cli):
    result = cli("grad", "-e", "y = sqrt(x); out = sum(y)", "--x", "0,1", "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["grads"]["x"] == [None, 0.5]  # JSON has no infinity: null (the warning says)
    assert "the derivative of sqrt at 0 is infinite" in doc["warnings"][0]
    strict = cli("grad", "-e", "y = sqrt(x); out = sum(y)", "--x", "0,1", "--strict")
    assert strict.exit_code == 1
    assert "x.grad" in strict.stdout  # the values are still printed


@pytest.mark.parametrize(
    "name, at_zero, away",
    [
        ("jvp", ["--x", "0", "--t", "1"], ["--x", "1", "--t", "1"]),
        ("jacobian", ["--x", "0,1", "--mode", "forward"], ["--x", "2,1", "--mode", "forward"]),
        ("plot", ["--x-range", "0:1"], ["--x-range", "1:2"]),
    ],
)
def test_forward_mode_non_finite_tangents_are_reported_and_strict_fails(cli, name, at_zero, away):
    result = cli(name, "-e", "y = sqrt(x)", *at_zero)
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert warnings == [f"warning: {SQRT_TANGENT}"]
    assert cli(name, "-e", "y = sqrt(x)", *at_zero, "--strict").exit_code == 1
    finite = cli(name, "-e", "y = sqrt(x)", *away, "--strict")
    assert finite.exit_code == 0 and "warning" not in finite.stderr


def test_forward_non_finite_names_the_first_statement_only(cli):
    result = cli("eval", "-e", "y = log(x); z = y * 2; w = y * 0", "--x", "0,1")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert len(warnings) == 2
    assert "`y = log(x)`: log gave -inf (log of a non-positive number)" in warnings[0]
    assert "`w = y * 0`: mul gave nan (0 * inf)" in warnings[1]


def test_an_overflow_is_named_an_overflow(cli):
    """issue 27: ``x * 1e308 * 10`` said "mul gave inf (0 * inf)"; an infinity from finite
    operands is an overflow, a NaN from mul is 0 * inf."""
    result = cli("eval", "-e", "y = x * 1e308 * 10; z = y * 0", "--x", "1,2")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert "`y = x * 1e308 * 10`: mul gave inf (overflow)" in warnings[0]
    assert "`z = y * 0`: mul gave nan (0 * inf)" in warnings[1]


def test_an_imaginary_literal_beyond_float64_is_python_s_complex_0_inf(cli):
    """issue 27: ``x * 1e400j`` exited 70; Python reads 1e400j as complex(0, inf), so torch
    gives nan+infj (the real part 1 * 0 - 0 * inf)."""
    result = cli(
        "eval", "-e", "y = x * 1e400j", "--x", "1,2", "--format", "json", "--nonfinite", "string"
    )
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["values"]["y"] == [["nan", "inf"], ["nan", "inf"]]
    assert any("1e400j is beyond float64's range" in w for w in out["warnings"])
    assert any("mul gave nan (0 * inf)" in w for w in out["warnings"])
