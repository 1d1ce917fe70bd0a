"""Tables as a person sees them in a terminal of 40 to 200 columns: every number whole.

Each command runs in a pseudo-terminal read back by pyte; its JSON result, from a second
run, says which numbers must be on the screen. A number is shown whole or not at all: every
numeric token in a table cell is one of the result's numbers as the table formats it, every
such number appears as a whole cell, and no cell that stands for a value is empty.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from gradcli.render import number_format

from .screen import REPO, WIDTHS, gradcli_command, numbers_on, run_in_terminal

COMMANDS = {
    "network-grad": ["grad", "-f", "samples/neural_network.gc", "--show", "z,loss"],
    "arange-eval": ["eval", "-e", "y = x*1.5", "--x", "arange(40)"],
    "cube-eval": ["eval", "-e", "y = reshape(x, 2, 3, 4)*2", "--x", "arange(24)"],
    "wide-range": ["eval", "-e", "y = x*3", "--x", "1e-9,3e7,5"],
    "network-jacobian": ["jacobian", "-f", "samples/neural_network.gc", "--wrt", "b"],
    "hessian": ["hessian", "-f", "samples/rosenbrock.gc"],
}


def _result(args: list[str]) -> dict:
    done = subprocess.run(
        gradcli_command() + args + ["--format", "json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _arrays(document: dict) -> list[np.ndarray]:
    arrays = []
    for section in ("values", "grads", "jacobian", "hessian"):
        for value in document.get(section, {}).values():
            if value is not None:
                arrays.append(np.asarray(value, dtype=float))
    return arrays


def _cells(lines: list[str]) -> list[list[str]]:
    """The cells of every table body row (a line starting with │), label cell first."""
    return [[c.strip() for c in line.split("│")[1:-1]] for line in lines if line.startswith("│")]


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("name", COMMANDS)
def test_every_number_is_whole_on_the_screen(name, columns):
    args = COMMANDS[name]
    screen = run_in_terminal(args, columns)
    assert screen.status == 0, screen.text
    assert max(len(line) for line in screen.lines) <= columns
    shown = set()
    for array in _arrays(_result(args)):
        number = number_format(array, 4)
        shown |= {number(v) for v in array.reshape(-1)}
    rows = _cells(screen.lines)
    assert rows, screen.text
    values = [cell for row in rows for cell in row[1:]]
    assert all(values), f"an empty cell stands for a value:\n{screen.text}"
    on_screen = set(values)
    missing = shown - on_screen
    assert not missing, f"not shown whole: {sorted(missing)[:5]}\n{screen.text}"
    strays = [v for v in values if v not in shown]
    assert not strays, f"cells that are no number of the result: {strays[:5]}\n{screen.text}"


@pytest.mark.parametrize("columns", WIDTHS)
def test_headers_and_labels_are_never_broken(columns):
    screen = run_in_terminal(COMMANDS["network-grad"], columns)
    headers = [line for line in screen.lines if line.startswith("┃")]
    assert headers
    for line in headers:
        for label in (c.strip() for c in line.split("┃")[1:-1]):
            assert label in ("", "value") or (label[0], label[-1]) == ("[", "]"), line
    # the warnings break between words: every word of the message is on the screen whole
    words = set(" ".join(screen.lines).split())
    assert {"Reading", ".retain_grad()", "backward()", "non-leaf"} <= words


@pytest.mark.parametrize("columns", (40, 80))
def test_wide_tensors_fold_into_blocks_of_whole_columns(columns):
    screen = run_in_terminal(COMMANDS["arange-eval"], columns)
    blocks = [line for line in screen.lines if line.startswith("columns ")]
    assert blocks and blocks[0].startswith("columns [0] to [")
    assert blocks[-1].endswith("[39] of 40")


@pytest.mark.parametrize("columns", WIDTHS)
def test_a_long_vector_is_summarised_in_one_or_two_lines_of_whole_numbers(columns):
    """A 2,000-element gradient: its first and last three numbers around ``...``, as torch
    prints it, on one or two lines (it took 13 lines for ten numbers, in blocks of columns)."""
    args = ["grad", "-e", "y = sum(x**2)", "--x", "rand(2000)"]
    screen = run_in_terminal(args, columns)
    assert screen.status == 0, screen.text
    lines = screen.lines
    start = lines.index("x.grad  shape (2000,)")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("2,000 values"))
    summary = lines[start + 1 : end]
    assert 1 <= len(summary) <= 2 and max(map(len, summary)) <= columns, screen.text
    assert summary[0].startswith("[") and summary[-1].endswith("]")
    grads = np.asarray(_result(args)["grads"]["x"])
    edges = np.concatenate([grads[:3], grads[-3:]])
    number = number_format(edges, 4)
    texts = [number(v) for v in edges]
    shown = [cell.strip() for cell in " ".join(summary)[1:-1].split(",")]
    assert shown == [*texts[:3], "...", *texts[3:]], screen.text


def test_a_tensor_of_three_dimensions_shows_one_labelled_slice_at_a_time():
    screen = run_in_terminal(COMMANDS["cube-eval"], 120)
    assert "[0, :, :]" in screen.lines and "[1, :, :]" in screen.lines


def test_wide_ranges_use_scientific_notation_for_the_whole_tensor():
    screen = run_in_terminal(COMMANDS["wide-range"], 80)
    numbers = numbers_on(screen)
    assert "3.000e-09" in numbers and "9.000e+07" in numbers and "1.500e+01" in numbers


@pytest.mark.parametrize("columns", (*WIDTHS, 47, 49))
def test_a_table_of_unbroken_headers_is_whole_or_given_as_records(columns):
    """derivative --taylor's header "coefficient f^(k)/k!" is never broken: the table was
    measured by its longest word and cut at 40 to 49 columns (every k lost); narrower than the
    table, its rows are records."""
    args = ["derivative", "-e", "f = 1 / (1 - x)", "--x", "0.5", "--order", "4", "--taylor"]
    screen = run_in_terminal(args, columns)
    assert screen.status == 0, screen.text
    assert "…" not in screen.text, screen.text
    assert "coefficient f^(k)/k!" in screen.text
    coefficients = ["2", "4", "8", "16", "32"]
    rows = [row for row in _cells(screen.lines) if len(row) == 4]
    if rows:
        assert [row[0] for row in rows] == ["0", "1", "2", "3", "4"]
        assert [row[3] for row in rows] == coefficients
    else:
        assert [line.strip() for line in screen.lines if line.startswith("k: ")] == [
            f"k: {k}" for k in range(5)
        ]
        said = [line.split(": ")[1] for line in screen.lines if "coefficient f^(k)/k!:" in line]
        assert said == coefficients
