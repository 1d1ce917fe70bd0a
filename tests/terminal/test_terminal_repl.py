"""``gradcli repl`` as a person uses it: in a pseudo-terminal (pexpect), keys and all.

Each test starts the installed gradcli with its own data directory (XDG_DATA_HOME), types
lines, Tab, the Up arrow, Ctrl-C and Ctrl-D, and reads what the terminal shows.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import time
from pathlib import Path

import pyte
import pytest

from gradcli.cli import repl

from .screen import REPO, gradcli_command, interruptible

pexpect = pytest.importorskip("pexpect")

PROMPT = "gradcli> "
MORE = r"\.\.\. "
UP = "\x1b[A"
DISPLAY = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def _start(data: os.PathLike, *args: str, columns: int = 120, codec_errors: str = "strict"):
    env = {k: v for k, v in os.environ.items() if k not in DISPLAY}
    cache = Path(data).parent / "gradcli-cache"  # never the user's own parse cache
    env.update(XDG_DATA_HOME=str(data), GRADCLI_CACHE_DIR=str(cache), TERM="xterm")
    env["INPUTRC"] = os.devnull  # readline's defaults, whatever the user's ~/.inputrc says
    command, *rest = gradcli_command()
    child = pexpect.spawn(
        command,
        [*rest, *args],
        env=env,
        cwd=REPO,
        encoding="utf-8",
        codec_errors=codec_errors,
        timeout=60,
        dimensions=(50 if columns >= 120 else 300, columns),
        preexec_fn=interruptible,
    )
    child.expect(PROMPT)
    return child


def _type(child, line: str) -> str:
    """Type ``line`` and Enter; what was printed before the next prompt, without the echo."""
    child.sendline(line)
    child.expect(PROMPT)
    shown = ANSI.sub("", child.before)
    return shown.split("\n", 1)[1] if "\n" in shown else ""


def _end(child) -> int:
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def _json(text: str) -> dict:
    return json.loads(next(line for line in text.splitlines() if line.startswith("{")))


def _screen(text: str, columns: int) -> list[str]:
    """What a terminal of ``columns`` shows of ``text`` (pexpect's, with its line ends)."""
    screen = pyte.Screen(columns, 300)
    pyte.Stream(screen).feed(text)
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.mark.parametrize("columns", (40, 80))
def test_the_banner_and_help_break_between_words(tmp_path, columns):
    """Read back by pyte: every word of the banner and of :help whole on the screen, in
    order (they were printed unwrapped, and the terminal broke them inside words)."""
    child = _start(tmp_path, columns=columns)
    banner = child.before
    child.sendline(":help")
    child.expect(PROMPT)
    lines = _screen(banner + PROMPT + ":help\r\n" + child.before.split("\n", 1)[1], columns)
    _end(child)
    help_words = repl.help_text(10_000).split()
    words = " ".join(lines).split()
    assert words[: len(repl.BANNER.split())] == repl.BANNER.split(), lines
    start = words.index("Statements")
    assert words[start : start + len(help_words)] == help_words, lines


def test_statements_and_values_persist_and_commands_act_on_them(tmp_path):
    """The seed post's example 2, typed a line at a time: J^T v = (4, 23)."""
    child = _start(tmp_path)
    note = _type(child, "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1")
    assert "no value yet for x0, x1 (elements of x)" in note and ":set x 1,2" in note
    assert "│ x │   1 │   2 │" in _type(child, ":set x 1,2")
    shown = _type(child, ":vjp y 1,1,1")
    assert "J^T v for x" in shown and "│ x │   4 │  23 │" in shown
    assert _type(child, ":format json").strip() == "format: json"
    assert _json(_type(child, ":grad y1"))["grads"] == {"x": [2.0, 20.0]}
    jacobian = _json(_type(child, ":jacobian"))
    assert jacobian["jacobian"] == {"x": [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]]}
    assert _json(_type(child, "z = y1 * x1"))["values"] == {"z": 42.0}
    explained = _json(_type(child, ":explain z"))
    assert explained["grads"] == {"x": [4.0, 61.0]}  # d(x0²x1 + 5x1³)/dx = (2x0x1, x0² + 15x1²)
    assert _end(child) == 0


def test_bad_input_prints_the_command_lines_error_and_the_session_goes_on(tmp_path):
    child = _start(tmp_path)
    shown = _type(child, "y = sinn(x)")
    cli = subprocess.run(
        [*gradcli_command(), "eval", "-e", "y = sinn(x)", "--x", "1"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert cli.returncode == 2
    # the command line's error, less its "statement 1 (line 1)": the line typed is all of it
    expected = cli.stderr.replace("error: statement 1 (line 1): ", "error: ", 1)
    assert [line.rstrip() for line in shown.strip().splitlines()] == expected.splitlines()
    assert "did you mean :grad?" in _type(child, ":gard")
    assert "Traceback" not in _type(child, ":set x ones(")
    assert "│ y │ 0.8415 │" in _type(child, "y = sin(x)") + _type(child, ":set x 1")
    assert _end(child) == 0


def test_an_open_bracket_continues_the_statement(tmp_path):
    child = _start(tmp_path)
    _type(child, ":set x 1,2")
    child.sendline("y = sum(")
    child.expect(MORE)
    child.sendline("  x ** 2)")
    child.expect(PROMPT)
    assert "│ y │     5 │" in ANSI.sub("", child.before)
    assert _type(child, ":program").splitlines()[0] == "y = sum( x ** 2)"
    assert _end(child) == 0


def test_ctrl_c_cancels_the_line_and_ctrl_d_ends(tmp_path):
    child = _start(tmp_path)
    child.sendline("y = sum(")
    child.expect(MORE)
    child.send("x")
    child.expect_exact("x")  # the line holds it (under load, Ctrl-C could come first)
    child.sendintr()
    child.expect(PROMPT)
    assert _type(child, ":program").strip() == ""  # nothing of the cancelled statement
    child.send("y = x +")
    child.expect_exact("y = x +")
    child.sendintr()
    child.expect(PROMPT)
    assert "│ y │     3 │" in _type(child, "y = x + 1") + _type(child, ":set x 2")
    assert _end(child) == 0


def test_ctrl_c_stops_a_long_computation_and_the_session_goes_on(tmp_path):
    # The terminal's own line discipline discards the output it still holds when Ctrl-C is
    # typed (no NOFLSH): where the check ended first, part of its table is lost on the way to
    # the screen, a character possibly cut between its bytes (not gradcli's doing: its answer
    # is written whole, base/interrupts.py), hence "replace" for this session's bytes.
    child = _start(tmp_path, codec_errors="replace")
    _type(child, "y = exp(x) * 2")
    _type(child, ":set x rand(1500)")
    child.sendline(":check")  # 3000 runs of finite differences: seconds
    time.sleep(0.5)
    child.sendintr()
    if child.expect(["interrupted", "all methods agree", PROMPT]) != 0:
        pytest.skip("the check ended before Ctrl-C reached it")
    child.expect(PROMPT)
    assert "│ y │    20 │" in _type(child, ":set x 2.302585092994046")  # 2 e^(ln 10)
    assert _end(child) == 0


def test_tab_completes_commands_functions_and_names(tmp_path):
    child = _start(tmp_path)
    _type(child, ":set x 1,2")
    child.send("total = logsumex\t")
    child.expect_exact("logsumexp")
    child.sendline("(x)")
    child.expect(PROMPT)
    child.send("gap = tot\t")
    child.expect_exact("total")
    child.sendline(" - 1")
    child.expect(PROMPT)
    child.send(":jac\t")
    child.expect_exact(":jacobian")
    shown = _type(child, "")
    assert "dgap/dx" in shown
    assert "0.2689 │ 0.7311" in shown  # softmax(1, 2)
    assert _end(child) == 0


def test_history_is_kept_across_sessions_in_a_private_directory(tmp_path):
    child = _start(tmp_path)
    _type(child, "y = x * 3")
    _type(child, ":set x 2")
    assert _end(child) == 0
    history = tmp_path / "gradcli" / "history"
    assert stat.S_IMODE(history.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert history.read_text().splitlines()[-2:] == ["y = x * 3", ":set x 2"]
    child = _start(tmp_path)
    child.send(UP + UP)  # back to `y = x * 3`
    assert "no value yet for x" in _type(child, "")
    assert "│ y │     6 │" in _type(child, UP + UP)  # back to `:set x 2`, past the new line
    assert _end(child) == 0


@pytest.mark.parametrize("kind", ["a file", "a directory"])
def test_a_history_that_cannot_be_written_never_breaks_the_repl(tmp_path, kind):
    if kind == "a file":  # XDG_DATA_HOME is a file: no directory can be made in it
        data = tmp_path / "data"
        data.write_text("not a directory")
    else:  # the history is a directory: it can be neither read nor written
        data = tmp_path
        (data / "gradcli" / "history").mkdir(parents=True)
    child = _start(data)
    assert "│ y │     4 │" in _type(child, "y = x ** 2") + _type(child, ":set x 2")
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.before and "error" not in child.before
    child.close()
    assert child.exitstatus == 0


def test_plain_gradcli_in_a_terminal_is_the_repl(tmp_path):
    child = _start(tmp_path, *())  # no arguments at all
    assert _json(_type(child, ":format json") + _type(child, "y = 2 * 3"))["values"] == {"y": 6.0}
    assert _end(child) == 0
