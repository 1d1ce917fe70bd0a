"""How the command line reads: the program as an argument, choices, completion, JSON errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def test_the_program_can_be_the_first_argument(cli_json):
    by_argument = cli_json("grad", "out = mean((x+2)**2*3)", "--x", "ones(2,2)")
    by_option = cli_json("grad", "-e", "out = mean((x+2)**2*3)", "--x", "ones(2,2)")
    assert by_argument == by_option
    assert by_argument["grads"]["x"] == [[4.5, 4.5], [4.5, 4.5]]


@pytest.mark.parametrize(
    "command, option, choices",
    [
        ("eval", "--format", "table, json or csv"),
        ("graph", "--format", "table, dot or json"),
        ("eval", "--dtype", "float64 or float32"),
        ("jacobian", "--mode", "auto, forward, reverse or dense"),
        ("export", "--to", "torch, numpy, jax, sympy or latex"),
    ],
)
def test_help_lists_the_choices(cli, command, option, choices):
    result = cli(command, "--help", env={"COLUMNS": "200"})
    assert result.exit_code == 0
    rows = [line.strip("│ ") for line in result.stdout.splitlines() if line.startswith("│")]
    assert any(row.startswith(option) and choices in row for row in rows)


@pytest.mark.parametrize("option", ["--format", "--precision"])
def test_export_offers_no_option_it_does_not_take(cli, option):
    """export writes a script, not a result: neither --format nor --precision is offered,
    and either is refused as an unknown option."""
    assert option not in cli("export", "--help", env={"COLUMNS": "200"}).stdout
    result = cli("export", "-e", "y = x", "--x", "1", option, "4")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: no such option: {option}")


def test_help_groups_the_options_common_ones_first(cli):
    text = cli("grad", "--help", env={"COLUMNS": "200"}).stdout
    panels = [line.split("─ ")[1].split(" ─")[0] for line in text.splitlines() if "╭─" in line]
    assert panels == [
        "Arguments",
        "Options",
        "Program",
        "Values",
        "Grad options",
        "Output",
        "Limits",
        "Batch",
    ]
    order = [text.index(f"│ {option} ") for option in ("--expr", "--x", "--format", "--batch")]
    assert order == sorted(order)


@pytest.mark.parametrize(
    "short, long, command",
    [("-x", "--x", "vjp"), ("-v", "--v", "vjp"), ("-t", "--t", "jvp"), ("-h", "--help", "vjp")],
)
def test_one_letter_options_have_a_short_form(cli, short, long, command):
    program = ("-e", "y0 = x0**2; y1 = 3*x1")
    values = {"-x": "1,2", "-v": "1,1", "-t": "1,0", "-h": None}
    args = [command, *program] + ([short, values[short]] if values[short] else [short])
    same = [command, *program] + ([long, values[short]] if values[short] else [long])
    if short != "-x":
        args += ["--x", "1,2"]
        same += ["--x", "1,2"]
    if command == "vjp" and short not in ("-v", "-h"):
        args += ["--v", "1,1"]
        same += ["--v", "1,1"]
    first, second = cli(*args), cli(*same)
    assert first.exit_code == 0, first.stderr
    assert (first.stdout, first.exit_code) == (second.stdout, second.exit_code)


def test_shell_completion_can_be_installed(cli):
    result = cli("--help", env={"COLUMNS": "200"})
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


def test_an_error_is_a_json_object_when_json_was_asked_for(cli):
    result = cli("eval", "-e", "y = x +", "--x", "1", "--format", "json")
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    error = json.loads(line)
    assert set(error) == {"error", "where", "source", "column", "hint"}
    assert error["source"] == "y = x +" and isinstance(error["column"], int)
    assert error["hint"]


def test_a_scalar_output_error_as_json(cli):
    result = cli("grad", "-e", "y = x + 2", "--x", "1,2", "--format", "json")
    assert result.exit_code == 2
    error = json.loads(result.stderr)
    assert error["error"] == "grad can be implicitly created only for scalar outputs"
    assert "--v" in error["hint"]


def test_a_table_error_stays_text(cli):
    result = cli("eval", "-e", "y = x +", "--x", "1")
    assert result.exit_code == 2 and result.stderr.startswith("error: ")


def test_plot_needs_no_value_for_the_input_it_varies(cli_json, cli):
    without = cli_json("plot", "-e", "y = tanh(x)", "--points", "5")
    with_x = cli_json("plot", "-e", "y = tanh(x)", "--x", "0.7", "--points", "5")
    assert without["plot"] == with_x["plot"]
    result = cli("plot", "-e", "y = tanh(x) * a", "--wrt", "x")
    assert result.exit_code == 2 and "no value for the input 'a'" in result.stderr


def test_a_batch_of_element_style_points_needs_no_x(cli, tmp_path):
    import numpy as np

    np.save(tmp_path / "p.npy", np.array([[1.0, 2.0], [0.0, 1.0]]))
    args = ["vjp", "-e", "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1", "--v", "1,1,1"]
    result = cli(*args, "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 0, result.stderr
    grads = [json.loads(line)["grads"]["x"] for line in result.stdout.splitlines()]
    assert grads == [[4.0, 23.0], [0.0, 13.0]]


def test_functions_lists_every_operation_by_name_with_its_kink_convention(cli):
    from gradcli.lang.functions import FUNCTIONS

    lines = cli("functions").stdout.splitlines()
    names = [line.split("(")[0] for line in lines if line[:1].isalpha() and "(" in line]
    assert names == sorted(FUNCTIONS)
    relu = lines.index(next(line for line in lines if line.startswith("relu(")))
    assert lines[relu + 1].strip() == f"at kinks: {FUNCTIONS['relu'].kink}"


def test_functions_as_json_and_markdown_list_every_operation(cli):
    import json

    from gradcli.lang.functions import FUNCTIONS

    document = json.loads(cli("functions", "--format", "json").stdout)
    assert [f["name"] for f in document["functions"]] == sorted(FUNCTIONS)
    softmax = next(f for f in document["functions"] if f["name"] == "softmax")
    assert (
        softmax["signature"] == "softmax(input, dim=None, dtype=None)"
        and "x.softmax(...)" in softmax["also"]
    )
    rows = [
        r for r in cli("functions", "--format", "markdown").stdout.splitlines() if r[:3] == "| `"
    ]
    assert [r.split("`")[1].split("(")[0] for r in rows] == sorted(FUNCTIONS)
    refused = cli("functions", "--format", "mark")
    assert refused.exit_code == 2 and "did you mean 'markdown'?" in refused.stderr


#: Usage errors, in gradcli's words whatever typer is installed: the command line reads a
#: command's words itself (``cli.command_words``), so that neither typer's wording (which
#: changed from release to release: "not a valid integer", "not a valid int", pydantic's
#: "Input should be a valid integer") nor its rich box reaches the user.
USAGE_ERRORS = [
    (("vjp", "-e", "y = x", "--qqq"), "no such option: --qqq", "see gradcli vjp --help"),
    (
        ("vjp", "-e", "y = x", "--frmat", "csv"),
        "no such option: --frmat",
        "did you mean --format? (see gradcli vjp --help)",
    ),
    (("vjp", "-e", "y = x", "-q"), "no such option: -q", "see gradcli vjp --help"),
    (("vjp", "-e", "y = x", "--x"), "--x needs a value", "see gradcli vjp --help"),
    (
        ("grad", "-e", "y = x", "--strict=yes"),
        "--strict takes no value (it is a switch)",
        "see gradcli grad --help",
    ),
    (
        ("grad", "-e", "y = x", "--repeat", "0"),
        "--repeat must be a whole number between 1 and 10,000, got 0",
        "see gradcli grad --help",
    ),
    (
        ("grad", "-e", "y = x", "--precision", "abc"),
        "--precision must be a whole number between 1 and 17, got 'abc'",
        "see gradcli grad --help",
    ),
    (
        ("grad", "-e", "y = x", "--seed", "-1"),
        "--seed must be a whole number >= 0, got -1",
        "see gradcli grad --help",
    ),
    (
        ("grad", "-e", "y = x", "--max-depth", "1.5"),
        "--max-depth must be a whole number, got '1.5'",
        "see gradcli grad --help",
    ),
    (
        ("check", "-e", "y = x", "--atol", "small"),
        "--atol must be a number >= 0, got 'small'",
        "see gradcli check --help",
    ),
    (
        ("grad", "-e", "y = x", "--timeout", "soon"),
        "--timeout must be a number, got 'soon'",
        "see gradcli grad --help",
    ),
    (
        ("grad", "-e", "y = x", "--dtype", "float16"),
        "--dtype: 'float16' is not one of float64, float32",
        "did you mean 'float64'?",
    ),
    (("grad", "y = x", "more"), "unexpected argument 'more'", "see gradcli grad --help"),
    (("run", "a.py", "b.py"), "unexpected argument 'b.py'", "see gradcli run --help"),
    (("vpj", "-e", "y = x"), "no such command 'vpj'", "did you mean 'vjp'? (see gradcli --help)"),
    (("--bogus", "vjp"), "no such option: --bogus", "see gradcli --help"),
]


@pytest.mark.parametrize("args, message, hint", USAGE_ERRORS)
def test_a_usage_error_is_an_error_line(cli, args, message, hint):
    """click's usage errors read as gradcli's own: an error line and a hint, no box."""
    result = cli(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"error: {message}", f"hint: {hint}"]


@pytest.mark.parametrize(
    "args, message, hint",
    [error for error in USAGE_ERRORS if error[0][0] != "run"],  # run has no --format
)
def test_a_usage_error_is_a_json_object_under_format_json(cli, args, message, hint):
    for json_args in (("--format", "json"), ("--format=json",)):
        result = cli(*args[:1], *json_args, *args[1:])
        assert result.exit_code == 2 and result.stdout == ""
        (line,) = result.stderr.splitlines()
        error = json.loads(line)
        assert (error["error"], error["hint"]) == (message, hint)


@pytest.mark.parametrize(
    "words",
    [
        ("-e", "y = x * x", "--x", "-1.5"),  # an option takes the next word, dash or not
        ("--expr=y = x * x", "--x=-1.5"),
        ("-ey = x * x", "-x-1.5"),
        ("--x", "-1.5", "--", "y = x * x"),  # after --, words are arguments
        ("--precision", "3", "--precision", "4", "y = x * x", "-x", "-1.5"),  # the last counts
    ],
)
def test_a_command_reads_its_words_as_click_does(cli, words):
    """Every way click takes an option's value reads alike (``cli.command_words``)."""
    result = cli("grad", "--format", "json", *words)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["grads"] == {"x": -3.0}


def test_help_is_shown_before_a_value_is_read(cli):
    """--help is eager: a wrong value beside it does not stop it (as click's --help)."""
    result = cli("grad", "--precision", "many", "--help", env={"COLUMNS": "100"})
    assert result.exit_code == 0 and "--precision" in result.stdout and result.stderr == ""


def test_a_usage_error_in_a_real_run(tmp_path):
    """The console script says it as the tests' runner does (no rich box on stderr)."""
    command = [sys.executable, "-m", "gradcli", "vjp", "--bogus", "--format", "json"]
    env = {**os.environ, "GRADCLI_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert json.loads(done.stderr)["error"].startswith("no such option: --bogus")
    plain = subprocess.run(command[:-2], capture_output=True, text=True, env=env, timeout=120)
    assert plain.returncode == 2 and plain.stderr.startswith("error: no such option: --bogus")
    assert "╭" not in plain.stderr
