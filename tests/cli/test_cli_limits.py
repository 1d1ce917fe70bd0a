"""The limits: sizes, text length and nesting depth, each refused early, each configurable."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hostile import HUGE_POWERS

OUTER = "y = x[:, None] * x[None, :]"


def _peak_mb(action) -> tuple[object, float]:
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("program", HUGE_POWERS)
def test_huge_powers_are_floats_and_eat_no_memory(cli, program):
    """(How long they take is measured by ``python -m benchmarks rejections``.)"""
    cli("eval", "-e", "y = x", "--x", "1", "--no-cache")  # sympy imported: not what is measured
    result, peak = _peak_mb(lambda: cli("eval", "-e", program, "--x", "3", "--no-cache"))
    assert peak < 50, f"{peak:.0f} MB"
    assert result.exit_code == 0, result.stderr
    assert "warning:" in result.stderr and ("inf" in result.stdout or "nan" in result.stdout)


def test_an_intermediate_too_large_is_refused_before_it_is_made(cli):
    program = "a = randn(7000, 1); b = randn(1, 8000); c = a * b"
    result, peak = _peak_mb(lambda: cli("eval", "-e", program, "--no-cache"))
    assert result.exit_code == 2
    assert "statement 3 (line 1): the result of mul would have 56,000,000 elements" in (
        result.stderr
    )
    assert "the limit is 50,000,000" in result.stderr and "--max-elements" in result.stderr
    assert "        ^" in result.stderr, "the caret is under the operator"
    assert peak < 50, f"{peak:.0f} MB: nothing of the result's size was allocated"


@pytest.mark.parametrize(
    "program, what",
    [
        (OUTER, "the result of mul would have 400 elements"),
        ("y = x[:, None] @ x[None, :]", "the result of matmul would have 400 elements"),
        ("y = cat([x, x, x, x, x, x])", "the result of cat would have 120 elements"),
        ("y = stack([x, x, x, x, x, x])", "the result of stack would have 120 elements"),
        ("y = where(x[:, None], x, x[None, :])", "the result of where would have 400"),
    ],
)
def test_max_elements_is_the_limit_and_raising_it_lets_the_program_run(cli, program, what):
    refused = cli("eval", "-e", program, "--x", "randn(20)", "--max-elements", "100")
    assert refused.exit_code == 2 and what in refused.stderr
    assert "raise it with --max-elements" in refused.stderr
    assert cli("eval", "-e", program, "--x", "randn(20)", "--max-elements", "400").exit_code == 0


def test_input_sizes_are_checked_against_max_elements(cli):
    result = cli("eval", "-e", "y = x", "--x", "ones(11, 10)", "--max-elements", "100")
    assert result.exit_code == 2 and "ones(11, 10) would have 110 elements" in result.stderr
    result = cli("eval", "-e", "w = eye(11); y = w")
    assert result.exit_code == 0
    result = cli("eval", "-e", "w = eye(11); y = w", "--max-elements", "120")
    assert result.exit_code == 2 and "eye(11,) would have 121 elements" in result.stderr


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_jacobian_is_computed_in_chunks_within_the_limit(cli_json, mode):
    """The batched Jacobian splits its basis so no batched value exceeds --max-elements: the
    same numbers come out in many chunks as in one."""
    program = "h = x[:, None] * x[None, :]; y = sum(sin(h), 1)"
    args = ["jacobian", "-e", program, "--x", "randn(30)", "--mode", mode]
    whole = cli_json(*args)["jacobian"]["x"]
    chunked = cli_json(*args, "--max-elements", "1000")["jacobian"]["x"]
    np.testing.assert_array_equal(whole, chunked)


def test_the_jacobian_and_hessian_themselves_are_limited(cli):
    result = cli("jacobian", "-e", "y = x * 2", "--x", "randn(100)", "--max-elements", "5000")
    assert result.exit_code == 2 and "the Jacobian of y would have 10,000 elements" in (
        result.stderr
    )
    result = cli("hessian", "-e", "y = sum(x * x)", "--x", "randn(100)", "--max-elements", "5000")
    assert result.exit_code == 2 and "the Hessian of y would have 10,000 elements" in (
        result.stderr
    )


def test_check_refuses_more_passes_than_it_can_run_quickly(cli):
    result = cli("check", "-e", "y = sum(x)", "--x", "randn(20000)")
    assert result.exit_code == 2
    assert "check runs one pass per element" in result.stderr and "at most 10,000" in result.stderr


def test_batch_chunks_fit_the_limit_and_give_the_same_results(cli, tmp_path):
    np.save(tmp_path / "points.npy", np.random.default_rng(0).standard_normal((50, 20)))
    args = ["grad", "-e", f"{OUTER}; out = sum(y)", "--x", "zeros(20)"]
    args += ["--batch", f"@{tmp_path / 'points.npy'}"]
    whole = cli(*args)
    chunked = cli(*args, "--max-elements", "1000")
    assert whole.exit_code == chunked.exit_code == 0
    assert whole.stdout == chunked.stdout and len(whole.stdout.splitlines()) == 50


def test_nesting_depth_is_limited_and_configurable(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(tmp_path))
    program = "y = " + "+".join(["x"] * 150)
    assert cli("grad", "-e", program, "--x", "1", "--max-depth", "150").exit_code == 0
    # the cached parse under a higher limit does not let the text through under a lower one
    refused = cli("grad", "-e", program, "--x", "1")
    assert refused.exit_code == 2
    assert "the expression nests operations more than 100 deep" in refused.stderr
    assert "--max-depth (at most 190" in refused.stderr


def test_the_depth_ceiling_is_reachable_for_every_kind_of_nesting(cli):
    """At the ceiling, every kind of nesting goes through the parser, sympy and the engine."""
    n = 190
    for program in [
        "y = " + "+".join(["x"] * (n + 1)),
        "y = " + "sin(" * n + "x" + ")" * n,
        "y = " + "-" * n + "x",
        "y = x" + "[...]" * n,
    ]:
        result = cli("grad", "-e", program, "--x", "0.5", "--max-depth", str(n), "--no-cache")
        assert result.exit_code == 0, result.stderr[:300]


def test_text_length_is_limited_and_configurable(cli, tmp_path):
    program = tmp_path / "long.gc"
    program.write_text("y = x\n" + "# padding\n" * 100)
    result = cli("eval", "-f", str(program), "--x", "1", "--max-length", "500")
    assert result.exit_code == 2
    assert "the program is 1,006 characters long; the limit is 500" in result.stderr
    assert "--max-length 1100" in result.stderr
    assert cli("eval", "-f", str(program), "--x", "1", "--max-length", "2000").exit_code == 0
    value = "[" + ",".join(["1"] * 300) + "]"
    result = cli("eval", "-e", "y = x", "--x", value, "--max-length", "500")
    assert result.exit_code == 2 and "the value of x is 601 characters long" in result.stderr


def test_an_endless_program_file_or_stdin_is_not_read_to_its_end(cli, tmp_path):
    result = cli("eval", "-f", "/dev/zero")
    assert result.exit_code == 2 and "is not a regular file" in result.stderr
    result = cli("eval", "-f", "-", input="y = x\n" + "#" * 200_000)
    assert result.exit_code == 2 and "the program on stdin is at least 100,001 characters" in (
        result.stderr
    )
    huge = tmp_path / "huge.gc"
    with huge.open("wb") as f:
        f.truncate(10**12)  # a terabyte, sparse: it is never read
    result = cli("eval", "-f", str(huge))
    assert result.exit_code == 2
    assert "is at least 250,000,000,000 characters long; the limit is 100,000" in result.stderr
