"""The bounds of ``gradcli run``'s interpreter and its refusals: each stops the script with a
``GradcliError`` (exit 2 on the command line) naming what and where, before the value is made
or, for what gradcli does not take, before anything of the script runs; and an uncaught
exception's traceback is Python's."""

from __future__ import annotations

import subprocess
import sys

import pytest
from python_oracle import gradcli_run

from gradcli.base.errors import GradcliError

STEPS = {"max_steps": 5000}


@pytest.mark.parametrize(
    "program, message",
    [
        ("while True:\n    pass", "the script ran more than 5,000 steps"),
        ("i = 0\nwhile i >= 0:\n    i += 1", "the script ran more than 5,000 steps"),
        ("y = list(range(10**12))", "the script ran more than 5,000 steps"),
        ("y = sum(range(10**12))", "the script ran more than 5,000 steps"),
        ("y = [[i * j for i in range(10**4)] for j in range(10**4)]", "more than 5,000 steps"),
        ("def f(n):\n    return f(n + 1)\nf(0)", "the script's calls nest more than 150 deep"),
        ("f = lambda n: f(n)\nf(0)", "the script's calls nest more than 150 deep"),
        ("s = ' ' * 10**10", "str * 10,000,000,000 would have 10,000,000,000 items"),
        ("s = [0] * 10**9", "list * 1,000,000,000 would have"),
        ("s = 'ab'\nwhile True:\n    s = s + s", "joining two of str would"),
        ("n = 2 ** 10**8", "2 ** 100000000 would be an integer of about 200,000,000 bits"),
        ("n = 3\nfor i in range(40):\n    n = n * n", "the product would be an integer"),
        ("s = '{:>100000000000}'.format(1)", "the spec '>100000000000' makes"),
        ("s = 'x'.center(10**10)", "str.center would have"),
    ],
)
def test_a_runaway_script_is_stopped_with_a_clear_error(program, message):
    with pytest.raises(GradcliError) as caught:
        gradcli_run(program, **STEPS)
    assert message in caught.value.message
    assert caught.value.where is not None and caught.value.where.startswith("line ")


@pytest.mark.parametrize(
    "program, line, column",
    [
        ("x = 1\ny = x.__dict__", 2, 4),
        ("print('run')\nclass A:\n    def __getattr__(self, name):\n        pass", 3, 4),
        ("import os", 1, 0),
        ("y = [v.__dict__ for v in range(2)]", 1, 5),
        ("def f(a=open('p')):\n    return a", 1, 8),
        ("print(f'{__import__}')", 1, 9),
    ],
)
def test_a_refusal_names_its_line_and_column_and_nothing_runs(program, line, column):
    with pytest.raises(GradcliError) as caught:
        gradcli_run("print('before')\n" + program)
    error = caught.value
    assert error.where == f"line {line + 1}"
    assert error.column == column
    assert "^" in error.render()


def test_an_uncaught_exception_prints_pythons_traceback(tmp_path):
    """The frames through the script's functions, the source lines and Python 3.11's carets,
    as ``python script.py`` prints them."""
    script = tmp_path / "script.py"
    script.write_text(
        "def ratio(a, b):\n    return a / b\n\ndef mean_ratio(values):\n"
        "    return sum(ratio(v, v - 2) for v in values) / len(values)\n\n"
        "print(mean_ratio([1, 3]))\nprint(mean_ratio([1, 2]))\n"
    )
    real = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    done = subprocess.run(
        [sys.executable, "-m", "gradcli", "run", str(script)], capture_output=True, text=True
    )
    assert done.stdout == real.stdout
    assert done.returncode == real.returncode == 1
    python_frames = [line for line in real.stderr.splitlines() if "<genexpr>" not in line]
    assert done.stderr.splitlines()[-1] == real.stderr.splitlines()[-1]
    assert done.stderr.splitlines()[:3] == python_frames[:3]
