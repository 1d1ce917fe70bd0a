"""Output that does not depend on where it is printed: tables, JSON and CSV."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess

import numpy as np
import pytest
from rich.cells import cell_len

from gradcli.render import number_format

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
    number = number_format(np.asarray(grads["W"]), 4)
    numbers = [v for rows in grads["W"] for v in rows]
    assert numbers and all(number(v) in cells for v in numbers)


def test_large_values_are_summarised_in_tables_and_whole_in_json(cli, cli_json):
    args = ["eval", "-e", "y = x * 2", "--x", "arange(5000)"]
    table = cli(*args).stdout
    assert "5,000 values, edges shown: --format json or csv gives all" in table
    assert "[   0,    2,    4, ..., 9994, 9996, 9998]" in table.splitlines()
    assert "2500" not in table
    assert len(cli_json(*args)["values"]["y"]) == 5000


def test_a_long_vector_is_summarised_on_one_line_as_torch_prints_it(cli):
    """2,000 numbers: the first and last three around ``...``, one format, on one line; torch's
    threshold (1000 elements) and edge items (3)."""
    table = cli("grad", "-e", "y = sum(x**2)", "--x", "rand(2000)").stdout.splitlines()
    start = table.index("x.grad  shape (2000,)")
    line, note = table[start + 1 : start + 3]
    assert line.startswith("[") and line.endswith("]") and "..." in line
    numbers = line[1:-1].split(", ")
    assert len(numbers) == 7 and numbers[3] == "..."
    assert {len(n.split(".")[1]) for n in numbers if n != "..."} == {4}, line
    assert note == "2,000 values, edges shown: --format json or csv gives all"
    assert len(cli("eval", "-e", "y = x", "--x", "rand(1000)").stdout.splitlines()) > 3


def test_a_row_pads_its_numbers_to_common_decimals(cli):
    """0.4203 beside 0.42 and 1.5: one format for the tensor (torch's 0.4200, 1.5000), never
    trailing zeros dropped from one cell and kept in the next."""
    table = cli("eval", "-e", "y = x * 1", "--x", "0.4203,0.42,1.5").stdout
    assert "│ y │ 0.4203 │ 0.4200 │ 1.5000 │" in table.splitlines()


@pytest.mark.parametrize(
    "values, texts",
    [
        ([0.4203, 0.42, 1.5, 0.0], ["0.4203", "0.4200", "1.5000", "0.0000"]),
        ([682.619, 1.5], ["682.6", "1.5"]),
        ([1.0, 20.0, -3.0], ["1", "20", "-3"]),
        ([0.5, 400.0], ["0.5", "400.0"]),
        ([0.5, 1200.0], ["5.000e-01", "1.200e+03"]),  # over 1000 times: torch's scientific
        ([1e-9, 3e7, 5.0], ["1.000e-09", "3.000e+07", "5.000e+00"]),
        ([1.0, 2000.0], ["1", "2000"]),  # whole numbers stay whole
        ([float("nan"), float("-inf"), 0.25], ["nan", "-inf", "0.25"]),
        ([0.0, 0.0], ["0", "0"]),
    ],
)
def test_one_number_format_for_each_array(values, texts):
    number = number_format(np.array(values), 4)
    assert [number(v) for v in values] == texts


def test_precision_sets_significant_digits_in_tables_only(cli):
    args = ["eval", "-e", "y = x / 3", "--x", "1"]
    assert "0.3333" in cli(*args).stdout
    assert "0.33333333" in cli(*args, "--precision", "8").stdout
    assert "0.33333333" not in cli(*args, "--precision", "3").stdout
    for digits in ("1", "3", "17"):
        assert cli(*args, "--precision", digits, "--format", "csv").stdout == (
            "tensor,value\nvalues.x,1.0\nvalues.y,0.3333333333333333\n"
        )


@pytest.mark.parametrize(
    "args, default, rounded",
    [
        (["plot", "y = tanh(x)", "--x-range", "-3:3"], "-0.9951 |", "-1 |"),
        (["graph", "-e", "y = x * 3.14159", "--x", "1"], "constant 3.142", "constant 3.1"),
        (["check", "-e", "y = abs(x)", "--x", "1e-9"], ": 0.0001651 vs 1", ": 0.00017 vs 1"),
        (["explain", "-e", "y = sum(x / 3)", "--x", "1,2"], "0.3333", "0.33 "),
    ],
    ids=["plot labels", "graph constants", "check differences", "explain"],
)
def test_precision_reaches_every_table(cli, args, default, rounded):
    assert default in cli(*args).stdout
    two = cli(*args, "--precision", "2").stdout
    assert rounded in two and default not in two


def _csv_rows(cli, *args) -> list[list[str]]:
    result = cli(*args, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    return list(csv.reader(io.StringIO(result.stdout)))


def test_csv_is_tidy_one_row_per_element(cli):
    rows = _csv_rows(cli, "grad", "-f", "samples/first_example.gc", "--show", "y")
    assert rows == [
        ["tensor", "i0", "i1", "value"],
        ["values.out", "", "", "27.0"],
        ["grads.x", "0", "0", "4.5"],
        ["grads.x", "0", "1", "4.5"],
        ["grads.x", "1", "0", "4.5"],
        ["grads.x", "1", "1", "4.5"],
        ["grads.y", "", "", ""],  # None: not a leaf
    ]


def test_csv_cells_read_back_to_the_same_float64(cli, cli_json):
    args = ["eval", "-e", "y = x / 3; z = exp(x) * 1e300; w = x * 1e-310", "--x", "1,-2,0.1"]
    values = cli_json(*args)["values"]
    rows = _csv_rows(cli, *args)
    assert rows[0] == ["tensor", "i0", "value"]
    for name in ("x", "y", "z", "w"):
        cells = [float(value) for tensor, _, value in rows[1:] if tensor == f"values.{name}"]
        assert cells == values[name]
    assert [float(r[2]) for r in rows if r[0] == "values.y"] == [1 / 3, -2 / 3, 0.1 / 3]
    single = _csv_rows(cli, "eval", "-e", "y = x * 1", "--x", "0.1", "--dtype", "float32")
    assert single[-1] == ["values.y", repr(float(np.float32(0.1)))]


def test_csv_spells_nan_and_infinities(cli):
    rows = _csv_rows(cli, "eval", "-e", "y = log(x); z = 1 / x", "--x", "-1,0,1")
    assert [r[2] for r in rows if r[0] == "values.y"] == ["nan", "-inf", "0.0"]
    assert [r[2] for r in rows if r[0] == "values.z"] == ["-1.0", "inf", "1.0"]


def test_csv_jacobian_index_is_the_output_s_then_the_input_s(cli, csv_as_json):
    rows = _csv_rows(cli, "jacobian", "-f", "samples/vjp_example2.gc")
    assert rows[:2] == [["tensor", "i0", "i1", "value"], ["values.y", "0", "", "1.0"]]
    assert ["jacobian.x", "1", "1", "20.0"] in rows and ["jacobian.x", "2", "1", "3.0"] in rows
    rows = _csv_rows(cli, "jacobian", "-f", "samples/vjp_example2.gc", "--transpose")
    assert ["jacobian.x", "1", "1", "20.0"] in rows and ["jacobian.x", "1", "2", "3.0"] in rows
    arrays = csv_as_json("jacobian", "-e", "y = x ** 2", "--x", "[[1,2,3],[4,5,6]]")
    assert arrays["jacobian.x"].shape == (2, 3, 2, 3) and arrays["jacobian.x"][1, 2, 1, 2] == 12
    rows = _csv_rows(cli, "jacobian", "-e", "y = x ** 2", "--x", "[[1,2,3],[4,5,6]]")
    assert rows[0] == ["tensor", "i0", "i1", "i2", "i3", "value"]
    assert rows[1] == ["values.y", "0", "0", "", "", "1.0"]  # y = x ** 2 at x[0,0] = 1


def test_csv_hessian_index_is_the_first_input_s_then_the_second_s(csv_as_json):
    arrays = csv_as_json("hessian", "-e", "f = x[0] * w[2]", "--x", "1,2", "-i", "w=3,4,5")
    assert arrays["hessian.x,w"].shape == (2, 3) and arrays["hessian.x,w"][0, 2] == 1.0
    assert arrays["hessian.w,x"].shape == (3, 2) and arrays["hessian.w,x"][2, 0] == 1.0
    assert arrays["hessian.x,w"].sum() == arrays["hessian.w,x"].sum() == 1.0


def test_a_mixed_hessian_block_has_rows_of_the_first_input_and_columns_of_the_second(cli):
    """d2z/dxdw of a vector x and a scalar w: a row per x element, one column w (the split of
    the block's dims is by each input's own, not half of the block's)."""
    for exact in ([], ["--exact"]):
        done = cli("hessian", "-e", "z = sum(sin(x))*w", "--x", "1,2", "-i", "w=3", *exact)
        mixed = done.stdout.split("d2z/dxdw")[1].split("d2z/dwdx")[0]
        rows = [line.split("│")[1].strip() for line in mixed.splitlines() if "│" in line]
        assert rows == ["x[0]", "x[1]"], mixed
        other = done.stdout.split("d2z/dwdx")[1].split("d2z/dwdw")[0]
        assert "x[0]" in other.splitlines()[2] and "│ w " in other, other  # columns of x


@pytest.mark.parametrize(
    "args, labels",
    [
        (["check", "-f", "samples/vjp_example2.gc"],
         ["values.y", *(f"check.{m}.x" for m in ("reverse", "forward", "finite differences",
                                                 "symbolic"))]),
        (["jvp", "-f", "samples/forward_mode.gc", "--t", "1,0"], ["values.y", "jvp.y"]),
        (["hvp", "-f", "samples/hvp_rosenbrock.gc", "--v", "1,0"], ["values.f", "hvp.x"]),
        (["vjp", "-f", "samples/log_general_case.gc", "--v", "[[3,2,0],[4,0,1]]"],
         ["values.y", "grads.x"]),
        (["explain", "-f", "samples/vjp_example2.gc", "--v", "1,1,1"], ["values.y", "grads.x"]),
        (["grad", "-f", "samples/neural_network.gc", "--show", "z"],
         ["values.loss", "grads.x", "grads.y", "grads.W", "grads.b", "grads.z"]),
    ],
    ids=["check", "jvp", "hvp", "vjp", "explain", "grad"],
)  # fmt: skip
def test_csv_holds_every_array_of_the_json_to_the_last_bit(csv_as_json, args, labels):
    assert list(csv_as_json(*args)) == labels


def test_csv_symbolic_formulas_are_text_cells(cli, csv_as_json):
    arrays = csv_as_json("grad", "-f", "samples/rosenbrock.gc", "--symbolic")
    assert arrays["symbolic.x"].tolist() == [
        "400*x_0*(x_0**2 - x_1) + 2*x_0 - 2",
        "-200*x_0**2 + 200*x_1",
    ]
    rows = _csv_rows(cli, "jacobian", "-e", "y = x * x", "--x", "1,2", "--symbolic")
    assert ["symbolic.x", "1", "1", "2*x_1"] in rows


def test_csv_plot_has_a_column_per_series_at_full_precision(cli, cli_json):
    args = ["plot", "-e", "y = tanh(x)", "--x", "0", "--x-range", "-1:1", "--points", "5"]
    header, *rows = _csv_rows(cli, *args, "--precision", "2")
    assert header == ["x", "y", "dy/dx"]
    columns = [[float(cell) for cell in column] for column in zip(*rows)]
    assert columns == list(cli_json(*args)["plot"].values())
    assert columns[1][1] == float(np.tanh(-0.5))


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
    assert "sum(input, dim=None, keepdim=False, dtype=None)" in result.stdout
    assert "stack(tensors, dim=0)" in result.stdout
    assert "bce_with_logits = binary_cross_entropy_with_logits" in result.stdout
    assert "constants: e, pi" in result.stdout


def test_version(cli):
    import gradcli

    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"gradcli {gradcli.__version__}"


def test_json_arithmetic_reads_non_finite_numbers(cli):
    """Under the default (--nonfinite null), jq's add sums a gradient holding an infinity
    (null, which jq adds as nothing) where "inf" strings made it fail; with --nonfinite string
    jq refuses, as asked."""
    jq = shutil.which("jq")
    if jq is None:
        pytest.skip("jq is not installed")
    args = ["grad", "-e", "y = sum(1 / x)", "--x", "0,1,2", "--format", "json"]
    default = cli(*args)
    assert default.exit_code == 0 and '"inf"' not in default.stdout
    added = subprocess.run(
        [jq, ".grads.x | add"], input=default.stdout, capture_output=True, text=True
    )
    assert added.returncode == 0 and float(added.stdout) == -1.25
    strings = cli(*args, "--nonfinite", "string").stdout
    refused = subprocess.run([jq, ".grads.x | add"], input=strings, capture_output=True, text=True)
    assert refused.returncode != 0 and "cannot be added" in refused.stderr


def test_nonfinite_takes_null_or_string(cli):
    result = cli("eval", "-e", "y = x", "--x", "1", "--format", "json", "--nonfinite", "nul")
    assert result.exit_code == 2
    assert json.loads(result.stderr)["error"] == "--nonfinite: 'nul' is not one of null, string"
