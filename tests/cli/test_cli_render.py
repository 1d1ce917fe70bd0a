"""Output that does not depend on where it is printed: tables, JSON and CSV."""

from __future__ import annotations

import csv
import io

import pytest
from rich.cells import cell_len

from gradcli.render import format_number

NETWORK = ["grad", "-f", "samples/neural_network.gc"]
FIRST = ["grad", "-f", "samples/first_example.gc", "--show", "y,z"]


def test_table_output_is_the_same_whatever_the_terminal_settings(cli):
    plain = cli(*FIRST)
    noisy = cli(
        *FIRST,
        env={
            "FORCE_COLOR": "1",
            "COLUMNS": "40",
            "LINES": "5",
            "TERM": "xterm-256color",
            "COLORTERM": "truecolor",
            "TTY_COMPATIBLE": "1",
        },
    )
    assert plain.exit_code == noisy.exit_code == 0
    assert plain.stdout == noisy.stdout
    assert cli(*FIRST).stdout == plain.stdout, "two runs print the same table"


@pytest.mark.parametrize(
    "args",
    [FIRST, ["jacobian", "-f", "samples/log_general_case.gc"]],
    ids=["first", "log-jacobian"],
)
def test_tables_are_plain_and_at_most_100_columns_when_not_a_terminal(cli, args):
    result = cli(*args)
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout, "no ANSI escape codes"
    widths = [cell_len(line) for line in result.stdout.splitlines()]
    assert max(widths) <= 100
    assert "┏" in result.stdout, "rich tables are drawn"


def test_wide_tables_widen_the_output_instead_of_folding_numbers(cli, cli_json):
    """Off a terminal a table too wide for 100 columns is printed wider, every number whole."""
    result = cli(*NETWORK)
    assert result.exit_code == 0
    assert max(cell_len(line) for line in result.stdout.splitlines()) > 100
    assert "…" not in result.stdout
    cells = {c.strip() for line in result.stdout.splitlines() for c in line.split("│")}
    grads = cli_json(*NETWORK)["grads"]
    numbers = [v for rows in grads["W"] for v in rows]
    assert numbers and all(format_number(v, 4) in cells for v in numbers)


def test_large_values_are_summarised_in_tables_and_whole_in_json(cli, cli_json):
    args = ["eval", "-e", "y = x * 2", "--x", "arange(5000)"]
    table = cli(*args).stdout
    assert "5,000 values, edges shown: --format json or csv gives all" in table
    assert "[4999]" in table and "9998" in table and "[2500]" not in table
    assert len(cli_json(*args)["values"]["y"]) == 5000


def test_precision_sets_significant_digits_in_tables_and_csv(cli):
    args = ["eval", "-e", "y = x / 3", "--x", "1"]
    assert "0.3333" in cli(*args).stdout
    assert "0.33333333" in cli(*args, "--precision", "8").stdout
    assert "0.33333333" not in cli(*args, "--precision", "3").stdout
    assert "0.333\n" in cli(*args, "--precision", "3", "--format", "csv").stdout


def _csv_blocks(text: str) -> dict[str, tuple[str, list[list[str]]]]:
    blocks = {}
    for chunk in text.strip().split("\n\n"):
        rows = list(csv.reader(io.StringIO(chunk)))
        label, shape = rows[0]
        blocks[label] = (shape, rows[1:])
    return blocks


def test_csv_has_one_labelled_block_per_array(cli):
    result = cli("grad", "-f", "samples/first_example.gc", "--show", "y", "--format", "csv")
    assert result.exit_code == 0
    blocks = _csv_blocks(result.stdout)
    assert blocks["out"] == ("scalar", [["27"]])
    assert blocks["x.grad"] == ("2x2", [["4.5", "4.5"], ["4.5", "4.5"]])
    assert blocks["y.grad"] == ("None", [["None"]])


def test_csv_jacobian_and_transpose(cli):
    plain = _csv_blocks(cli("jacobian", "-f", "samples/vjp_example2.gc", "--format", "csv").stdout)
    assert plain["dy/dx"] == ("3x2", [["2", "0"], ["2", "20"], ["0", "3"]])
    transposed = _csv_blocks(
        cli("jacobian", "-f", "samples/vjp_example2.gc", "--transpose", "--format", "csv").stdout
    )
    assert transposed["dy/dx^T"] == ("2x3", [["2", "2", "0"], ["0", "20", "3"]])


def test_json_is_one_object_with_the_documented_keys(cli_json):
    grad = cli_json("grad", "-f", "samples/first_example.gc")
    assert {"command", "output", "values", "grads", "warnings"} <= set(grad)
    assert "jacobian" not in grad and "layout" not in grad, "keys that do not apply are left out"
    assert (grad["command"], grad["output"]) == ("grad", "out")
    jac = cli_json("jacobian", "-f", "samples/vjp_example2.gc")
    assert {"command", "output", "values", "jacobian", "layout", "warnings"} <= set(jac)
    assert "grads" not in jac
    assert jac["layout"] == "output.shape + input.shape"
    jac_t = cli_json("jacobian", "-f", "samples/vjp_example2.gc", "--transpose")
    assert jac_t["layout"] == "input.shape + output.shape"
    evaluated = cli_json("eval", "-f", "samples/first_example.gc")
    assert list(evaluated["values"]) == ["x", "y", "z", "out"]
    assert "grads" not in evaluated


def test_functions_lists_signatures_aliases_and_constants(cli):
    result = cli("functions")
    assert result.exit_code == 0
    assert "sum(input, dim=None, keepdim=False)" in result.stdout
    assert "stack(tensors, dim=0)" in result.stdout
    assert "bce_with_logits = binary_cross_entropy_with_logits" in result.stdout
    assert "constants: e, pi" in result.stdout


def test_version(cli):
    import gradcli

    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"gradcli {gradcli.__version__}"
