"""Every sample's own command (its ``# Run:`` line) as a person sees it at 40 to 200 columns.

Nothing gradcli prints is wider than the terminal, so the terminal never breaks a line (and a
number) itself; gradcli's own breaks fall between words. Where a table's longest words do not
fit, its rows become ``column: text`` records.
"""

from __future__ import annotations

import re
import shlex

import pytest

from .screen import REPO, WIDTHS, run_in_terminal

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _sample_commands() -> dict[str, list[str]]:
    commands = {}
    for path in sorted((REPO / "samples").glob("*.gc")):
        for line in path.read_text().splitlines():
            if line.startswith("# Run: gradcli "):
                commands[path.stem] = shlex.split(line.removeprefix("# Run: gradcli "))
                break
    return commands


SAMPLES = _sample_commands()


def test_every_sample_has_a_command():
    assert len(SAMPLES) == len(list((REPO / "samples").glob("*.gc")))


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("sample", SAMPLES)
def test_no_line_is_wider_than_the_terminal(sample, columns):
    screen = run_in_terminal(SAMPLES[sample], columns)
    assert screen.status in (0, 1), screen.text  # check_kink disagrees on purpose
    for line in ANSI.sub(b"", screen.raw).decode().replace("\r", "").split("\n"):
        assert len(line) <= columns, f"{len(line)} > {columns}: {line!r}"


def test_a_narrow_explain_prints_records_instead_of_cutting_words():
    screen = run_in_terminal(SAMPLES["explain_log"], 40)
    assert "node: y" in screen.lines
    assert any(line.startswith("  local derivative: dy/dx = 1/x") for line in screen.lines)
    assert not any("…" in line for line in screen.lines)


def test_a_graph_name_too_long_for_the_terminal_ends_in_an_ellipsis():
    screen = run_in_terminal(SAMPLES["graph_network"], 40)
    assert any(line.endswith("BinaryCrossEntropyWithLogitsBackwar…") for line in screen.lines)
    assert "0" not in {line.strip("│ ") for line in screen.lines}, "no stray piece of a word"
