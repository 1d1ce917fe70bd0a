"""The deadline of sympy's work (``gradcli.base.deadline``): on any thread, nested, and without the
host program's signals: a program that imports gradcli keeps SIGALRM and its timers."""

from __future__ import annotations

import signal
import threading
import time

import pytest

import gradcli
from gradcli.base import deadline

DETERMINANT = "y = det(reshape(x, 6, 6))"  # sympy's formulas take minutes


def _spin(seconds: float) -> str:
    """Python work that runs ``seconds`` unless interrupted."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return "done"


def _timed(action):
    started = time.monotonic()
    try:
        return action(), time.monotonic() - started
    except deadline.TimeUp as exc:
        return exc, time.monotonic() - started


def test_work_within_its_time_returns_its_result():
    assert deadline.run_within(5, lambda: _spin(0.01)) == "done"


def test_work_past_its_time_is_interrupted_on_time():
    result, took = _timed(lambda: deadline.run_within(0.3, lambda: _spin(30)))
    assert isinstance(result, deadline.TimeUp) and result.seconds == 0.3
    assert took < 3


def test_a_watchdog_that_is_gone_is_started_anew(monkeypatch):
    """A watchdog thread that no longer runs (a forked child has none of its parent's
    threads; a thread can die) must not leave a bounded call running without limit."""
    gone = threading.Thread(target=lambda: None)
    gone.start()
    gone.join()
    monkeypatch.setattr(deadline, "_watchdog", [gone])
    result, took = _timed(lambda: deadline.run_within(0.3, lambda: _spin(30)))
    assert isinstance(result, deadline.TimeUp)
    assert took < 3
    assert deadline._watchdog[-1].is_alive()


def test_an_inner_deadline_is_not_taken_for_the_outer_one():
    def outer():
        with pytest.raises(deadline.TimeUp):
            deadline.run_within(0.2, lambda: _spin(30))
        return _spin(0.2)  # the outer call goes on after its inner one timed out

    assert deadline.run_within(10, outer) == "done"
    result, took = _timed(
        lambda: deadline.run_within(0.3, lambda: deadline.run_within(30, _spin_30))
    )
    assert isinstance(result, deadline.TimeUp) and result.seconds == 0.3 and took < 3


@pytest.mark.parametrize("inner", [0.3, 0.6, 5.0])
def test_an_outer_deadline_is_not_lost_to_an_inner_one(inner):
    """An outer call's deadline at the same moment as its inner call's (--timeout's and the
    sympy budget clipped to it), before it, or long before it: the outer call times out. A
    thread holds one pending interrupt, so a second raised while the first is pending would
    take its place: the inner one, given up with a note, and the outer one lost (exit 0
    where --timeout asked for 124)."""

    def outer():
        try:
            deadline.run_within(inner, lambda: _spin(30))
        except deadline.TimeUp:
            return "the inner call gave up"
        return "done"

    for _ in range(5):
        result, took = _timed(lambda: deadline.run_within(0.3, outer))
        assert isinstance(result, deadline.TimeUp) and result.seconds == 0.3, result
        assert took < 3


def _spin_30() -> str:
    return _spin(30)


def test_many_calls_ending_at_their_deadline_leave_nothing_armed():
    for _ in range(200):
        try:
            deadline.run_within(0.001, lambda: _spin(0.001))
        except deadline.TimeUp:
            pass
    _spin(0.1)  # an interrupt left pending would arrive here
    assert deadline._armed == set() and deadline._active == {}


def test_a_call_off_the_main_thread_is_bounded():
    found = []
    worker = threading.Thread(
        target=lambda: found.append(_timed(lambda: deadline.run_within(0.3, _spin_30))),
        daemon=True,
    )
    worker.start()
    worker.join(10)
    assert not worker.is_alive()
    ((result, took),) = found
    assert isinstance(result, deadline.TimeUp) and took < 3


def _recording(monkeypatch) -> list[str]:
    """Record every change to the process's signal handlers and interval timers."""
    calls: list[str] = []
    for name in ("signal", "setitimer", "alarm"):
        original = getattr(signal, name)

        def record(*args, name=name, original=original):
            calls.append(name)
            return original(*args)

        monkeypatch.setattr(signal, name, record)
    return calls


def test_symbolic_work_leaves_the_host_programs_signals_alone(monkeypatch):
    handler = signal.getsignal(signal.SIGALRM)
    calls = _recording(monkeypatch)
    program = gradcli.program("y = sin(x) * x")
    assert program.check(x=[0.5, 1.0]).agree
    assert program.jacobian(x=[0.5, 1.0], symbolic=True).formulas
    assert "def program(x):" in program.export(to="numpy", x=[0.5, 1.0])
    assert calls == []
    assert signal.getsignal(signal.SIGALRM) is handler


# The two tests below run in a process of their own: at the end of a whole suite's run (and
# only there), the export's worker thread once ran past its 30 s join, the watchdog's
# interrupt not reaching it; the cause is not found yet (the closing note of the issue says
# so). A fresh process tests what a user's program meets; the suite's own state stays out.
_OFF_THE_MAIN_THREAD = """
import threading, time
import numpy as np
import gradcli
from gradcli.base.errors import GradcliError
from gradcli.commands import export
from gradcli.domains import symbolic

DETERMINANT = "y = det(reshape(x, 6, 6))"
x = np.linspace(0.1, 0.9, 36)
found = []

def check():
    started = time.monotonic()
    found.append((gradcli.program(DETERMINANT).check(x=x), time.monotonic() - started))

def write():
    try:
        gradcli.program(DETERMINANT).export(to="latex", x=x)
    except GradcliError as exc:
        found.append(f"{exc.message} (hint: {exc.hint})")

symbolic.SECONDS = 0.5
export.SYMBOLIC_SECONDS = 0.5
worker = threading.Thread(target={target}, daemon=True)
worker.start()
worker.join(60)
assert not worker.is_alive(), "sympy's work ran on unbounded"
print(repr(found[0]))
"""


def _off_the_main_thread(target: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _OFF_THE_MAIN_THREAD.replace("{target}", target)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_library_bounds_sympy_off_the_main_thread():
    shown = _off_the_main_thread("check")
    assert "no symbolic check: sympy took longer than 0.5 s" in shown
    assert "agree=True" in shown  # the other three methods


def test_an_export_from_a_thread_stops_at_the_bound():
    shown = _off_the_main_thread("write")
    assert "export --to latex stopped after 0.5 s" in shown
    assert "--timeout" in shown


_AFTER_A_DEADLINE = """
import time
from gradcli.base import deadline
from hypothesis import given, settings, strategies as st

def spin():
    end = time.monotonic() + 30
    while time.monotonic() < end:
        pass

try:
    deadline.run_within(0.2, spin)
except deadline.TimeUp:
    pass

@settings(max_examples=20, deadline=None, database=None)
@given(n=st.integers(0, 100))
def fails(n):
    assert n < 3

try:
    fails()
except AssertionError:
    print("shrunk")
"""


def test_a_failing_hypothesis_test_after_a_deadline_fired_ends():
    """A deadline that fired once left CPython 3.11's pending-exception flag set for good (the
    interrupt was taken back with SetAsyncExc(NULL)): hypothesis then traced a failing test
    to explain it and spun without end at a frame's first instruction. Run in a process of its
    own, since a process that hangs so cannot be saved."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _AFTER_A_DEADLINE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "shrunk", done.stderr[-2000:]
