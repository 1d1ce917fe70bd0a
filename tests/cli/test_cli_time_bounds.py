"""sympy's work inside --timeout, and inside a default bound where the command needs it
(export): the command stops on time with exit 124 (--timeout) or 2 (the default bound),
saying what it was doing and how to allow more."""

from __future__ import annotations

import time

import pytest
from sympy.core import cache as sympy_cache
from test_cli_subprocess import console_script, run

from gradcli.commands import export

DETERMINANT = ("-e", "y = det(reshape(x, 6, 6))", "--x", "rand(36)")  # sympy: minutes
# start-up, sympy's import and the run before sympy's work, on a busy machine: the time a
# command may take beyond its --timeout (the bounds' own tests are in tests/test_deadline.py)
SLACK = 10


@pytest.mark.parametrize("to", ["numpy", "latex"])
def test_export_stops_at_the_timeout(tmp_path, to):
    # parsed in the cache first (sympy's parse is not what is timed; on a busy machine it took
    # over 2 s), so that the deadline meets export's own formulas
    assert run([*console_script(), "eval", *DETERMINANT], tmp_path).returncode == 0
    started = time.monotonic()
    result = run(
        [*console_script(), "export", "--to", to, *DETERMINANT, "--timeout", "3"], tmp_path
    )
    took = time.monotonic() - started
    assert result.returncode == 124, result.stderr
    assert (
        f"timed out after 3 s (--timeout) while writing sympy's formulas for export --to {to}"
        in result.stderr
    )
    assert took < 3 + SLACK
    assert result.stdout == ""


def test_export_without_a_timeout_stops_at_its_default_bound(cli, monkeypatch):
    monkeypatch.setattr(export, "SYMBOLIC_SECONDS", 1.0)
    started = time.monotonic()
    result = cli("export", "--to", "sympy", *DETERMINANT)
    assert result.exit_code == 2, result.stderr
    assert "export --to sympy stopped after 1 s, the time given to sympy's formulas" in (
        result.stderr
    )
    assert "hint: allow more with --timeout SECONDS (e.g. --timeout 4)" in result.stderr
    assert time.monotonic() - started < 1 + SLACK


def test_a_timeout_above_the_default_bound_raises_it(cli, monkeypatch):
    monkeypatch.setattr(export, "SYMBOLIC_SECONDS", 0.001)
    result = cli("export", "--to", "numpy", "-e", "y = sin(x) * x", "--x", "0.5", "--timeout", "60")
    assert result.exit_code == 0, result.stderr
    assert "def jacobian_x(x):" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["check", *DETERMINANT],
        # J^T's formulas: 64 of them to simplify
        ["explain", "-e", "y = softmax(x)", "--x", "rand(8)", "--v", ",".join(["1"] * 8)],
        ["jacobian", *DETERMINANT, "--symbolic"],
    ],
    ids=["check", "explain", "jacobian --symbolic"],
)
def test_sympy_work_stops_at_the_timeout(cli, args):
    # sympy's formulas are an extra of these commands, given up with a note when they take
    # too long; at --timeout's deadline the command stops, as it does anywhere else
    assert cli("eval", *args[1:5]).exit_code == 0  # parsed, sympy imported: not what is timed
    # sympy's work, not its cache of earlier tests' formulas (after a whole suite's run in one
    # process, explain's 64 were made in under 3 s)
    sympy_cache.clear_cache()
    started = time.monotonic()
    result = cli(*args, "--timeout", "3")
    assert result.exit_code == 124, result.stderr
    assert "timed out after 3 s (--timeout) while working out sympy's formulas" in result.stderr
    assert time.monotonic() - started < 3 + SLACK


def test_a_softmax_of_16_elements_exports_as_latex(tmp_path):
    # simplify is left out of formulas this many: it took minutes (the formulas stay exact)
    command = ["export", "--to", "latex", "-e", "y = softmax(x)", "--x", "rand(16)"]
    result = run([*console_script(), *command, "--timeout", "60"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert r"y_{15} &= \frac{e^{x_{15}}}" in result.stdout
    assert result.stdout.count(r"\begin{pmatrix}") == 3
