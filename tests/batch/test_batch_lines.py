"""--batch's points as JSON lines: an explicit --format table refused and JSON lines streamed
by default, and a batch on stdin whose points change shape named by its line."""

from __future__ import annotations

import json

import pytest

SQUARES = ("-e", "f = sum(x**2)")


@pytest.mark.parametrize("command", ["eval", "grad", "vjp"])
def test_batch_refuses_an_explicit_table_and_streams_json_lines_by_default(cli, command):
    done = cli(command, *SQUARES, "--batch", "-", "--format", "table", input="[1, 2]\n")
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.startswith("error: --batch writes JSON lines, one a point")
    assert "hint: leave out --format table" in done.stderr
    default = cli(command, *SQUARES, "--batch", "-", input="[1, 2]\n")
    assert default.exit_code == 0, default.stderr
    assert json.loads(default.stdout)["values"]["f"] == 5.0


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("[1, 2]\n[3, 4]\n[5]\n", "line 3: the point of x has shape (1,), but line 1's has (2,)"),
        ('{"x": [1, 2]}\n{"x": [1, 2, 3]}\n', "line 2: the point of x has shape (3,)"),
        ("[1, 2]\n[[1, 2], [3]]\n", "line 2: the point of x has rows of different lengths"),
    ],
)
def test_a_batch_on_stdin_names_the_line_whose_point_has_another_shape(cli, lines, message):
    done = cli("grad", *SQUARES, "--batch", "-", input=lines)
    assert done.exit_code == 2 and done.stdout == ""
    head, rest = message.split(": the point", 1)
    assert f"error: --batch -: {head}: the point" in done.stderr
    assert rest.split(", but")[0] in done.stderr


def test_a_batch_names_the_line_of_another_input_shape(cli):
    lines = '{"x": [1, 2], "w": 1}\n{"x": [3, 4], "w": [1, 2]}\n'
    done = cli("grad", "-e", "f = sum(w * x**2)", "--batch", "-", input=lines)
    assert done.exit_code == 2
    assert "line 2: the point of w has shape (2,), but line 1's has shape ()" in done.stderr
