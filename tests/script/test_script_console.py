"""``gradcli run -i``: the console's rule for when an input goes on, and a session fed through
a pipe (the prompts on stderr, as Python's console writes them when its input is no
terminal). The terminal itself: tests/terminal/test_terminal_console.py."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from gradcli.script.console import needs_more


@pytest.mark.parametrize(
    "lines, more",
    [
        (["x = 1"], False),
        ([""], False),
        (["x = (1,"], True),
        (["x = (1,", "2)"], False),
        (['s = """a'], True),
        (["x = 1 + \\"], True),
        (["if x:"], True),
        (["if x:", "    y = 1"], True),
        (["if x:", "    y = 1", ""], False),
        (["for i in range(3): print(i)"], True),
        (["for i in range(3): print(i)", ""], False),
        (["@torch.no_grad()"], True),
        (["@torch.no_grad()", "def f(x):", "    return x", ""], False),
        (["x = )"], False),  # wrong, not unfinished: lowering says what is wrong
    ],
)
def test_an_input_goes_on_as_in_pythons_console(lines, more):
    assert needs_more(lines) is more


def _console(text: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gradcli", "run", *args]
    return subprocess.run(command, input=text, capture_output=True, text=True, timeout=120)


SESSION = """\
x = torch.tensor([1., 2.], requires_grad=True)
torch.set_grad_enabled(False)
(x * 2).requires_grad
torch.set_grad_enabled(True)
torch.set_printoptions(precision=2)
y = (x ** 2 / 3).sum()
y
for k in range(2):
    print(k)

1 / 0
import os
y.backward()
x.grad
"""


def test_a_session_keeps_its_state_from_input_to_input():
    done = _console(SESSION, "-i")
    assert done.returncode == 0, done.stderr
    # grad mode and print options set by one input hold for the next ones
    shown = re.sub("0x[0-9a-f]+", "0x…", done.stdout)
    enabled = "<torch.autograd.grad_mode.set_grad_enabled object at 0x…>\n"
    assert shown == (
        f"{enabled}False\n{enabled}tensor(1.67, grad_fn=<SumBackward0>)\n0\n1\n"
        "tensor([0.67, 1.33])\n"
    )
    # prompts on stderr; an uncaught exception and a refusal are reported, the session goes on
    assert done.stderr.startswith(">>> >>> >>> ")
    assert 'File "<stdin>", line 1, in <module>\nZeroDivisionError: division by zero' in (
        done.stderr
    )
    assert "error: line 1: gradcli reads PyTorch code: it does not import 'os'" in done.stderr


def test_a_script_then_the_console(tmp_path):
    script = tmp_path / "first.py"
    script.write_text("w = torch.ones(2, requires_grad=True)\nprint('ran')\n")
    done = _console("(w * 3).sum().backward()\nw.grad\n", "-i", str(script))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\ntensor([3., 3.])\n"


def test_no_script_and_a_pipe_reads_the_script_from_stdin():
    done = _console("print(torch.ones(2) * 2)\n")
    assert (done.returncode, done.stdout, done.stderr) == (0, "tensor([2., 2.])\n", "")


def test_an_endless_input_stops_at_the_step_bound_and_the_session_goes_on():
    done = _console("while True:\n    pass\n\nprint('after')\n", "-i", "--max-steps", "1000")
    assert done.returncode == 0
    assert "--max-steps" in done.stderr or "steps" in done.stderr
    assert done.stdout == "after\n"
