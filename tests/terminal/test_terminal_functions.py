"""`gradcli functions` on a terminal: every word whole, at every width."""

from __future__ import annotations

import subprocess

import pytest

from .screen import REPO, WIDTHS, gradcli_command, run_in_terminal


@pytest.fixture(scope="module")
def piped_words() -> list[str]:
    """The words of the list written to a pipe (one line an entry, never wrapped)."""
    done = subprocess.run(
        [*gradcli_command(), "functions"], capture_output=True, text=True, cwd=REPO, check=True
    )
    return done.stdout.split()


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_function_list_breaks_lines_between_words(columns, piped_words):
    screen = run_in_terminal(["functions"], columns, rows=3000)
    assert screen.status == 0
    assert max(map(len, screen.lines)) <= columns
    # a word cut by the terminal's own wrapping would show as two fragments
    assert screen.text.split() == piped_words
