"""``gradcli run`` with no script on a terminal: Python's console (``>>>``, ``...``) over the
interpreter, read back from a pseudo-terminal as a person sees it."""

from __future__ import annotations

import pytest

from .screen import run_in_terminal

TYPED = [
    "x = torch.tensor([1., 2.], requires_grad=True)",
    "y = (x ** 2).sum()",
    "y",
    "def f(a):",
    "    return a * 3",
    "",
    "f(x)",
    "y.backward()",
    "x.grad",
    "1 / 0",
    "x.__dict__",
    "x.grad * 2",
]


@pytest.mark.parametrize("columns", [40, 80, 120, 200])
def test_a_session_typed_line_by_line(tmp_path, columns):
    screen = run_in_terminal(
        ["run"], columns, rows=200, typed=TYPED, env={"XDG_DATA_HOME": str(tmp_path)}
    )
    assert screen.status == 0
    text = screen.text
    assert text.startswith("gradcli run: PyTorch")
    # every value whole, after the input that asked for it; the names last between inputs
    expected = [
        ">>> y",
        "tensor(5., grad_fn=<SumBackward0>)",
        ">>> def f(a):",
        "...     return a * 3",
        ">>> f(x)",
        "tensor([3., 6.], grad_fn=<MulBackward0>)",
        ">>> x.grad",
        "tensor([2., 4.])",
        ">>> 1 / 0",
        "Traceback (most recent call last):",
        '  File "<stdin>", line 1, in <module>',
        "ZeroDivisionError: division by zero",
        ">>> x.__dict__",
        ">>> x.grad * 2",
        "tensor([4., 8.])",
    ]
    lines = screen.lines
    at = 0
    for want in expected:
        found = next((k for k in range(at, len(lines)) if lines[k].rstrip() == want), None)
        assert found is not None, f"{want!r} not shown in order:\n{text}"
        at = found + 1
    # a refusal is the command line's error, and the session goes on
    words = " ".join(text.split())
    assert "error: line 1: gradcli run does not read attributes whose names start" in words
    # the history is kept for the next session, in a file of its own
    history = tmp_path / "gradcli" / "run_history"
    assert "x.grad * 2" in history.read_text()


def test_ctrl_c_stops_the_running_input_and_the_session_goes_on(tmp_path):
    screen = run_in_terminal(
        ["run"],
        80,
        rows=50,
        typed=["while True:", "    pass", "", 'print("after")'],
        interrupt_when=b"pass\r\n... \r\n",  # the empty line typed: the loop runs
        interrupt_once=None,
        env={"XDG_DATA_HOME": str(tmp_path)},
    )
    assert screen.status == 0
    lines = screen.lines
    assert "KeyboardInterrupt" in lines
    assert lines[lines.index("KeyboardInterrupt") + 1 :] == ['>>> print("after")', "after", ">>>"]
