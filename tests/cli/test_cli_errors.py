"""Bad input: a message on stderr saying what is wrong and what is right; exit 2, no traceback."""

from __future__ import annotations

import pytest

from gradcli.lang.values import VALUE_SYNTAX


def fails(result, *fragments: str) -> str:
    """Assert a clean user error (exit 2, stderr only, no traceback) containing ``fragments``."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert isinstance(result.exception, SystemExit)
    for fragment in fragments:
        assert fragment in result.stderr, f"{fragment!r} not in:\n{result.stderr}"
    return result.stderr


def caret_column(stderr: str, source: str) -> int:
    """The column the caret points at, within ``source`` as printed in the error."""
    lines = stderr.splitlines()
    index = lines.index(f"  {source}")
    caret = lines[index + 1]
    assert caret.strip() == "^"
    return caret.index("^") - 2


def test_unknown_name_asks_for_a_value_with_i(cli):
    stderr = fails(cli("grad", "-e", "y = sum(x + z)", "--x", "1"), "no value for the input 'z'")
    assert "hint: give it with -i z=VALUE" in stderr


def test_missing_x_asks_for_x(cli):
    fails(cli("grad", "-e", "y = sum(x * 2)"), "no value for the input 'x'", "--x VALUE")


def test_value_for_a_name_the_program_does_not_use(cli):
    fails(
        cli("grad", "-e", "out = sum(x * weight)", "--x", "1", "-i", "weight=2", "-i", "wieght=3"),
        "a value was given for 'wieght', but the program has no input 'wieght'",
        "did you mean 'weight'?",
    )


def test_unknown_function_suggests_the_closest(cli):
    stderr = fails(
        cli("grad", "-e", "y = sine(x)", "--x", "1"),
        "error: statement 1 (line 1): unknown function 'sine'",
        "hint: did you mean 'sin'?",
    )
    assert caret_column(stderr, "y = sine(x)") == 4


def test_unknown_function_without_a_close_match_points_to_functions(cli):
    fails(cli("grad", "-e", "y = frobnicate(x)", "--x", "1"), "see `gradcli functions`")


def test_shape_mismatch_names_statement_shapes_and_operator(cli):
    source = "z = x + w"
    stderr = fails(
        cli("eval", "-e", f"y = x * 2\n{source}", "--x", "1,2", "-i", "w=1,2,3"),
        "statement 2 (line 2)",
        "(2,)",
        "(3,)",
    )
    assert caret_column(stderr, source) == source.index("+")


def test_shape_mismatch_in_a_function_points_at_the_call(cli):
    source = "y = matmul(A, x)"
    stderr = fails(
        cli("eval", "-e", source, "-i", "A=ones(2,3)", "--x", "ones(2)"), "(2, 3)", "(2,)"
    )
    assert caret_column(stderr, source) == source.index("matmul")


def test_missing_option_value(cli):
    result = cli("grad", "-e", "y = x * x", "--x")
    assert result.exit_code == 2
    assert "--x needs a value" in result.stderr and "Traceback" not in result.stderr


def test_empty_value(cli):
    fails(
        cli("grad", "-e", "y = x * w", "--x", "1", "-i", "w="),
        "the value of w is empty",
        "a value is a number",
    )


def test_i_without_equals(cli):
    fails(cli("grad", "-e", "y = x", "-i", "w"), "cannot read -i 'w'", "write -i NAME=VALUE")


@pytest.mark.parametrize(
    "value, message, column, hint",
    [
        ("1,,2", "cannot read the value of x", 2, VALUE_SYNTAX),
        ("foo", "the name 'foo' is not allowed in a value", 0, VALUE_SYNTAX),
        ("[1, 'a']", "is not allowed in a value", 4, VALUE_SYNTAX),
        ("[1, True]", "True/False is not a number", None, VALUE_SYNTAX),
        ("frob(2)", "unknown constructor 'frob'", 0, "constructors are ones, zeros, full"),
    ],
)
def test_malformed_value_shows_what_a_value_looks_like(cli, value, message, column, hint):
    stderr = fails(cli("eval", "-e", "y = x", "--x", value), message)
    assert f"hint: {hint}" in stderr
    if column is not None:
        assert caret_column(stderr, value) == column


def test_ragged_list(cli):
    fails(cli("eval", "-e", "y = x", "--x", "[[1,2],[3]]"), "must all have the same length")


def test_missing_file_value(cli, tmp_path):
    fails(cli("eval", "-e", "y = x", "--x", f"@{tmp_path / 'nope.npy'}"), "no such file")


def test_npz_needs_a_key_when_it_holds_several(cli, tmp_path):
    import numpy as np

    np.savez(tmp_path / "two.npz", a=np.ones(1), b=np.ones(1))
    fails(
        cli("eval", "-e", "y = x", "--x", f"@{tmp_path / 'two.npz'}"),
        "holds 2 arrays",
        "KEY one of a, b",
    )
    fails(cli("eval", "-e", "y = x", "--x", f"@{tmp_path / 'two.npz'}:c"), "has no array 'c'")


def test_non_scalar_output_without_v(cli):
    fails(
        cli("grad", "-f", "samples/vjp_example1.gc"),
        "grad can be implicitly created only for scalar outputs",
        "give the vector v with --v",
    )
    fails(cli("vjp", "-f", "samples/vjp_example2.gc"), "vjp needs the vector v", "--v")


def test_v_of_the_wrong_shape(cli):
    fails(
        cli("vjp", "-f", "samples/vjp_example2.gc", "--v", "1,1"),
        "--v has shape (2,) but the output y has shape (3,)",
    )


def test_output_that_needs_no_grad(cli):
    fails(cli("grad", "-e", "y = 2 * 3"), "does not depend on any input that requires grad")


@pytest.mark.parametrize(
    "args, message",
    [
        (["grad", "-f", "samples/first_example.gc", "--of", "q"], "--of names 'q'"),
        (["grad", "-f", "samples/first_example.gc", "--show", "q"], "names 'q'"),
        (
            ["grad", "-f", "samples/first_example.gc", "--repeat", "0"],
            "--repeat must be a whole number between 1 and 10,000, got 0",
        ),
        (["grad", "-f", "samples/first_example.gc", "--format", "xml"], "'xml' is not one of"),
        (["grad", "-f", "samples/first_example.gc", "--format", "jsno"], "did you mean 'json'?"),
        (["graph", "-f", "samples/first_example.gc", "--format", "csv"], "table, dot, json"),
        (["jacobian", "-f", "samples/first_example.gc", "--mode", "fwd"], "mean 'forward'?"),
        (["grad", "-f", "samples/first_example.gc", "--precision", "0"], "between 1 and 17"),
        (["grad", "-f", "samples/first_example.gc", "--precision", "99"], "between 1 and 17"),
        (["check", "-f", "samples/first_example.gc", "--atol", "nan"], "--atol must be a finite"),
        (["check", "-f", "samples/first_example.gc", "--rtol", "inf"], "--rtol must be a finite"),
        (["plot", "-e", "y = x", "--x", "0", "--points", "100000000"], "between 2 and 10,000"),
        (["grad", "-e", "y = x", "--x", "1", "--max-depth", "191"], "between 1 and 190"),
        (["grad", "-e", "y = x", "--x", "1", "--max-elements", "0"], "between 1 and 1,000,000"),
        (["grad", "-e", "y = x", "--x", "1", "--max-length", "0"], "between 1 and 1,000,000"),
        (
            ["grad", "-e", "y = x", "--x", "-", "--max-elements", "99999999999999999999999"],
            "--max-elements must be between 1 and 1,000,000,000,000,000",
        ),
        (["grad", "-f", "samples/first_example.gc", "--dtype", "int8"], "'int8' is not one of"),
        (["grad", "-f", "samples/no_such_sample.gc"], "--file: no such file"),
        (["grad", "-e", "y = x", "-f", "samples/first_example.gc"], "give the program once"),
        (["grad", "y = x", "-e", "y = x"], "give the program once"),
        (["grad", "--x", "1"], "give the program once"),
        (["grad", "-e", "# nothing\n"], "the program is empty"),
        (["grad", "-e", "y = x", "--x", "1", "--x", "2", "-i", "x=3"], "given twice"),
        (["jacobian", "-f", "samples/vjp_example2.gc", "--wrt", "q"], "--wrt names 'q'"),
    ],
)
def test_usage_errors(cli, args, message):
    fails(cli(*args), message)


@pytest.mark.parametrize(
    "program, message, column",
    [
        ("y = z + 1; z = 3", "'z' is used before it is assigned (in statement 2)", 4),
        ("y = x; y = 2", "'y' is already assigned in statement 1", 0),
        ("z = sum(y); y0 = x; y1 = x", "'y' is used before all its elements are assigned", 8),
        ("y = x @@ 2", "'@' is followed by '@' with no value between them", 7),
        ("y = x << 2", "'<<' (a bit shift) is not allowed", 6),
        ("y = sum(x, dim=1.5)", "dim of sum must be an int, a tuple of ints, or None", 15),
        ("y = mean(x, foo=1)", "mean has no argument named 'foo'", 16),
        ("y = exp(x, 3)", "exp has no 2nd argument", 11),
        ("y = x + ones(2, requires_grad=True)", "ones(..., requires_grad=True) makes an input", 8),
        ("sin = x", "'sin' cannot be assigned", 0),
        ("y = x5", "x5 means x[5], but x has shape (2,)", None),
    ],
)
def test_program_errors_name_the_statement_and_point_at_the_column(cli, program, message, column):
    stderr = fails(cli("eval", "-e", program, "--x", "1,2"), message, "statement")
    if column is not None:
        statement = next(line[2:] for line in stderr.splitlines()[1:] if line.startswith("  "))
        assert caret_column(stderr, statement) == column


def test_debug_shows_the_traceback(cli):
    result = cli("grad", "-e", "y = sine(x)", "--x", "1", "--debug")
    assert result.exit_code == 2
    assert "Traceback" in result.stderr and "unknown function 'sine'" in result.stderr
