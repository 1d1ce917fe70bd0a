"""Ctrl-C while an answer is written (``gradcli/base/interrupts.py``): a first press waits for
the answer to be out, a second stops it at once."""

from __future__ import annotations

import os
import signal

import pytest

from gradcli.base import interrupts


@pytest.fixture(autouse=True)
def python_handles_sigint():
    """Python's own handler, as a process started from a terminal has it (a background job's
    SIGINT may be ignored: what the last test checks)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _press() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_a_first_press_waits_for_the_block_and_is_then_let_go():
    written = []
    with interrupts.held():
        _press()
        written.append("the whole answer")
    assert written == ["the whole answer"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_press_stops_the_block_at_once():
    written = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.held():
            _press()
            _press()
            written.append("never")
    assert written == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_outside_the_block_ctrl_c_interrupts_as_before():
    with pytest.raises(KeyboardInterrupt):
        _press()


def test_an_ignored_sigint_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts.held():
            _press()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
