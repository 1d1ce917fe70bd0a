"""Correct or loud: ``--strict`` on what the inputs bring (NaN, inf, a float32 overflow), a
number beyond float range named at its statement, names sympy has a meaning for as plain
names, and errors that cut long lists (issue 16's cases).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

# -- correct or loud ------------------------------------------------------------------------------


def test_strict_sees_a_nan_given_as_an_input(cli):
    """On main: exit 0."""
    result = cli("grad", "-e", "y = sum(x*x)", "--x", "nan,1", "--strict", "--format", "json")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "error: a NaN or an infinity came in with the inputs (--strict): the input x holds "
        "1 NaN (the first at x[0])"
    )
    assert json.loads(result.stdout)["grads"]["x"] == [None, 2.0], "printed first"
    assert cli("grad", "-e", "y = sum(x*x)", "--x", "nan,1").exit_code == 0


def test_strict_names_every_input_that_holds_nan_or_inf(cli):
    result = cli("eval", "-e", "y = x*W", "--x", "[[1,inf],[nan,2]]", "-i", "W=-inf", "--strict")
    assert result.exit_code == 1
    assert "the input x holds 1 NaN and 1 inf (the first at x[0, 1])" in result.stderr
    assert "the input W holds 1 inf" in result.stderr


def test_a_float32_input_that_overflows_is_a_warning_or_under_strict_an_error(cli):
    """On main 3.4e39 silently became inf, even under --strict."""
    args = ("eval", "-e", "y = x*2", "--x", "3.4e39,1,-1e40", "--dtype", "float32")
    warned = cli(*args, "--format", "json")
    assert warned.exit_code == 0
    (warning,) = json.loads(warned.stdout)["warnings"]
    assert warning.startswith("the input x: 2 finite values beyond float32's range")
    strict = cli(*args, "--strict")
    assert strict.exit_code == 2 and strict.stdout == ""
    assert "beyond float32's range" in strict.stderr and "(--strict)" in strict.stderr
    assert cli("eval", "-e", "y = x*2", "--x", "3.4e39", "--strict").exit_code == 0  # float64


OVERFLOW = "beyond float64's range (±1.798e+308): read as inf"


def test_a_number_written_beyond_float_range_is_a_warning_at_its_statement(cli):
    """On main ``y = x * 1e400`` gave inf with no warning at all: the infinity appears where
    the number is read, and the warning says so there (once, however often the program
    runs); --strict exits 1 on it."""
    document = json.loads(
        cli("grad", "-e", "y = sum(x * 1e400)", "--x", "2", "--format", "json").stdout
    )
    assert document["warnings"] == [
        f"statement 1 (line 1) `y = sum(x * 1e400)`: 1e400 is {OVERFLOW}"
    ]
    whole = "1" + "0" * 400
    written = cli("eval", "-e", f"y = x * -1e999 + {whole}", "--x", "2", "--format", "json")
    (warning, *_) = json.loads(written.stdout)["warnings"]
    assert warning.endswith(f"`: 1e999, a number of 401 digits are {OVERFLOW}")
    strict = cli("eval", "-e", "y = x * 1e400", "--x", "2", "--strict")
    assert strict.exit_code == 1
    assert strict.stderr.splitlines()[-1] == (
        "error: a NaN or an infinity appeared (--strict); see the warnings"
    )


def test_a_constant_made_in_a_statement_is_named_by_the_statement(cli):
    """On main --strict blamed ``the input _c1_1_4``, a name the user never wrote."""
    program = "y = full(2, 2, 1e400) * x"
    strict = cli("eval", "-e", program, "--x", "2", "--strict")
    assert strict.exit_code == 1
    assert f"warning: statement 1 (line 1) `{program}`: 1e400 is {OVERFLOW}" in strict.stderr
    assert "_c1" not in strict.stderr and "came in with the inputs" not in strict.stderr
    narrow = cli("eval", "-e", "y = full(2, 2, 1e39) * x", "--x", "2", "--dtype", "float32")
    assert narrow.exit_code == 0 and "_c1" not in narrow.stderr
    assert narrow.stderr.startswith(
        "warning: statement 1 (line 1) `y = full(2, 2, 1e39) * x`: full(2, 2, 1e39): 4 finite "
        "values beyond float32's range"
    )
    declared = "x = full(2, 1e400); y = x * 2"
    default = cli("eval", "-e", declared, "--format", "json")
    assert json.loads(default.stdout)["warnings"] == [
        f"statement 1 (line 1) `x = full(2, 1e400)`: 1e400 is {OVERFLOW}"
    ]
    given = cli("eval", "-e", declared, "--x", "2", "--format", "json")  # the default unused
    assert json.loads(given.stdout)["warnings"] == []


SYMPY_NAMES = [
    "αSymbol",
    "Symbol",
    "Integer",
    "Float",
    "Function",
    "Lambda",
    "Rational",
    "S",
    "N",
    "I",
    "E",
    "oo",
    "zoo",
    "nan",
    "Add",
    "Mul",
    "Pow",
    "Matrix",
    "Abs",
    "Sum",
    "αInteger",
    "xFloat",
    "Float2",
]


@pytest.mark.parametrize("name", SYMPY_NAMES)
def test_names_sympy_has_a_meaning_for_are_plain_names(cli_json, name):
    """On main ``y = αSymbol * 3`` exited with "'Symbol' object is not callable"."""
    document = cli_json("grad", "-e", f"y = {name} * 3 + sin({name})", "-i", f"{name}=2")
    assert document["values"]["y"] == pytest.approx(6 + np.sin(2))
    assert document["grads"][name] == pytest.approx(3 + np.cos(2))


@pytest.mark.parametrize("name", ["Symbol", "Integer", "Float", "αSymbol", "S", "E"])
def test_sympy_names_as_statement_names_and_through_check(cli, name):
    program = f"{name} = x * 2 + 1.5e3; N = {name} * {name}"
    result = cli("check", "-e", program, "--x", "3")
    assert result.exit_code == 0, result.output
    assert "all methods agree" in result.stdout


def test_an_error_about_an_archive_of_20000_arrays_cuts_the_list(cli, tmp_path):
    """On main the error was 149 KB long."""
    archive = tmp_path / "many.npz"
    np.savez(archive, **{f"a{i}": np.zeros(1) for i in range(20_000)})
    for spec in (f"@{archive}", f"@{archive}:missing"):
        result = cli("eval", "-e", "y = x*2", "--x", spec)
        assert result.exit_code == 2
        assert len(result.stderr) < 600, result.stderr
        assert "a0, a1, a2" in result.stderr and "... and 19,990 more" in result.stderr


def test_listing_cuts_long_lists_and_long_names():
    from gradcli.base.errors import listing

    assert listing(["a", "b"]) == "a, b"
    assert listing([], empty="none") == "none"
    assert listing(range(25)) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... and 15 more"
    assert listing(["x" * 100]) == "x" * 59 + "…"
