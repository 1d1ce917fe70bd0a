"""A deadline for a call of Python work, on any thread, without signals.

sympy's differentiation, simplification and printing can take exponential time, and offer no
way to be stopped. ``run_within(seconds, function)`` calls ``function``, and when it is still
running after ``seconds``, a watchdog thread raises an exception in the caller's thread
(CPython's ``PyThreadState_SetAsyncExc``). It arrives at the work's next bytecode, as a signal
handler's exception would, but the process's signals (``SIGALRM``, ``setitimer``) stay the
host program's, and work on any thread is bounded. A call into C that runs long is
interrupted when it returns. No thread is started until a call is bounded.

The exception may arrive anywhere between two bytecodes of the caller's thread, so the
bookkeeping here is done under a C lock (a ``with`` of it runs no Python code that the
exception could cut short) in steps that may be done twice, and the call is a function, not
a ``with`` block: a context manager's ``__exit__`` is Python code that the exception could
skip.

An interrupt the watchdog raised is never taken back (``PyThreadState_SetAsyncExc`` with
NULL): in CPython 3.11 that leaves the interpreter's "async exception pending" flag set for
good, and every later check of it runs the slow path; under a tracer (hypothesis traces a
failing test to explain it) a frame's first instruction then runs again and again without
end. A call that ends before its interrupt arrives lets it arrive instead, and drops it.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import queue
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class TimeUp(Exception):
    """The call ran past its deadline; ``seconds`` is the time it was given."""

    def __init__(self, seconds: float):
        super().__init__(f"took longer than {seconds:g} s")
        self.seconds = seconds


class _Interrupt(BaseException):
    """What the watchdog raises in a caller's thread: a BaseException, so that no ``except
    Exception`` in the work swallows it. Each call raises a class of its own, so that an
    inner call's deadline is never taken for an enclosing call's."""


class _Call:
    """One bounded call: its thread, its deadline, its interrupt, and whether the watchdog
    has raised it (``fired``)."""

    __slots__ = ("thread", "deadline", "interrupt", "fired")

    def __init__(self, seconds: float):
        self.thread = threading.get_ident()
        self.deadline = time.monotonic() + max(seconds, 0.0)
        self.interrupt: type[_Interrupt] = type(f"_Interrupt{next(_numbers)}", (_Interrupt,), {})
        self.fired = False


_numbers = itertools.count()
_lock = threading.Lock()
_armed: set[_Call] = set()  # the calls running that the watchdog has not interrupted
_active: dict[int, list[_Call]] = {}  # thread -> its bounded calls running, outermost first
_wakeups: queue.SimpleQueue[None] = queue.SimpleQueue()  # the watchdog wakes to re-read _armed
# when the watchdog wakes next (inf: when woken): a call whose deadline is later need not wake
# it, which spares a switch of threads per call (explain bounds sympy's work on each step)
_planned = [math.inf]
_watchdog: list[threading.Thread] = []
_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc  # looked up once: a C call after


def _raise_in(thread: int, interrupt: type[BaseException]) -> None:
    """Raise ``interrupt`` in ``thread`` at its next check of pending work (a call, a loop's
    jump back)."""
    _set_async_exc(ctypes.c_ulong(thread), ctypes.py_object(interrupt))


def _watch() -> None:
    """The watchdog: interrupts each call whose deadline has passed, then sleeps until the
    next deadline or until a call is armed."""
    while True:
        with _lock:
            now = time.monotonic()
            for call in sorted((c for c in _armed if c.deadline <= now), key=_depth):
                _armed.discard(call)
                call.fired = True
                # a thread holds one pending interrupt: one raised while an enclosing call's
                # is pending would take its place; that one unwinds this call too
                if not any(c.fired for c in _active[call.thread][: _depth(call)]):
                    _raise_in(call.thread, call.interrupt)
            nearest = min((c.deadline for c in _armed), default=math.inf)
            _planned[0] = nearest
        try:
            _wakeups.get(timeout=None if nearest == math.inf else max(nearest - now, 0.0))
        except queue.Empty:
            pass


def _depth(call: _Call) -> int:
    """How many bounded calls of its thread enclose ``call`` (under ``_lock``)."""
    return _active[call.thread].index(call)


def _arm(call: _Call) -> None:
    with _lock:
        # a watchdog that is not running (none yet; or, after a fork, the parent's, which the
        # child does not have) is started anew: a call must never wait on a watchdog that is gone
        if not _watchdog or not _watchdog[-1].is_alive():
            watchdog = threading.Thread(target=_watch, name="gradcli-deadline", daemon=True)
            watchdog.start()
            _watchdog[:] = [watchdog]
            _planned[0] = math.inf
        _armed.add(call)
        _active.setdefault(call.thread, []).append(call)
        wake = call.deadline < _planned[0]
    if wake:
        _wakeups.put(None)


def _disarm(call: _Call) -> bool:
    """Take ``call`` off the watchdog; whether the watchdog has fired at it."""
    with _lock:
        _armed.discard(call)
        calls = _active.get(call.thread, [])
        if call in calls:
            calls.remove(call)
        if not calls:
            _active.pop(call.thread, None)
        return call.fired


def _let_arrive() -> None:
    """Run a few checks of pending work, so that an interrupt raised in this thread and not
    yet arrived arrives here (the first check delivers it; a work that caught it left none)."""
    for _ in range(64):
        _nothing()


def _nothing() -> None:
    """A call: its first instruction checks for pending work."""


def run_within(seconds: float, function: Callable[[], T]) -> T:
    """``function()``, or ``TimeUp`` when it runs longer than ``seconds``."""
    call = _Call(seconds)
    failure: BaseException | None = None
    try:
        _arm(call)
        result = function()
    except BaseException as exc:  # noqa: BLE001 - re-raised below, once the call is disarmed
        failure = exc
    while True:
        try:
            if _disarm(call) and not isinstance(failure, call.interrupt):
                _let_arrive()  # its interrupt, raised as it ended: dropped when it arrives
            break
        except _Interrupt as exc:  # one arrived while disarming
            if isinstance(exc, call.interrupt):
                continue  # this call's own, late: the call is over
            if failure is None or isinstance(failure, call.interrupt):
                failure = exc  # an enclosing call's: it goes on up
    if isinstance(failure, call.interrupt):
        raise TimeUp(seconds) from None
    if failure is not None:
        raise failure
    return result
