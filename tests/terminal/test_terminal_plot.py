"""The plot as a person sees it: the terminal's size, colour on a terminal, none otherwise."""

from __future__ import annotations

import re
import subprocess

import pytest

from .screen import REPO, gradcli_command, run_in_terminal

TANH = ["plot", "-e", "y = tanh(x)", "--x-range", "-3:3"]
COLOUR = re.compile(rb"\x1b\[[0-9;]*3[0-7]m")  # an SGR sequence that sets a foreground colour


@pytest.mark.parametrize("columns", (40, 80, 160, 200))
def test_the_chart_fills_the_terminal_width(columns):
    screen = run_in_terminal(TANH, columns, rows=50)
    assert screen.status == 0, screen.text
    widths = [len(line) for line in screen.lines]
    assert max(widths) == columns
    assert len(screen.lines) == max(8, min(50 - 2, columns // 3)), "a third of the width, fits"
    axis = next(line for line in screen.lines if "+---" in line)
    assert len(axis) == columns, "the axis spans the whole width"


def test_width_and_height_options_set_the_size():
    screen = run_in_terminal(TANH + ["--width", "50", "--height", "12"], 120, rows=50)
    assert max(len(line) for line in screen.lines) == 50
    assert len(screen.lines) == 12


def test_the_series_are_coloured_on_a_terminal_and_not_under_no_color():
    assert COLOUR.search(run_in_terminal(TANH, 80).raw)
    plain = run_in_terminal(TANH, 80, env={"NO_COLOR": "1"})
    assert plain.status == 0 and not COLOUR.search(plain.raw)


def test_a_piped_chart_has_no_escape_codes_and_a_fixed_size():
    done = subprocess.run(
        gradcli_command() + TANH, capture_output=True, cwd=REPO, timeout=120, check=True
    )
    assert b"\x1b" not in done.stdout
    lines = done.stdout.decode().splitlines()
    assert max(len(line) for line in lines) == 72 and len(lines) == 22
