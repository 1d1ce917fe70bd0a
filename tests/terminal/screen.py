"""Run gradcli as a person would: in a pseudo-terminal of a given size, read back by ``pyte``.

``run_in_terminal(args, columns)`` starts the installed ``gradcli`` with its stdin, stderr and
(unless ``stdout`` names a file) stdout on a pseudo-terminal of ``columns`` x ``rows``, feeds
everything it writes to a ``pyte`` screen, and returns a ``Screen``: the lines a person would
see, the raw bytes and the exit status. ``interrupt_after`` sends SIGINT to the process group
once that many seconds have passed, as Ctrl-C in a shell does.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyte

REPO = Path(__file__).resolve().parents[2]
WIDTHS = (40, 80, 120, 200)


def gradcli_command() -> list[str]:
    """The console script beside this interpreter, else ``python -m gradcli``."""
    beside = Path(sys.executable).with_name("gradcli")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "gradcli"]


@dataclass
class Screen:
    lines: list[str]  # what the terminal shows, trailing blanks removed
    raw: bytes  # every byte written to the terminal
    status: int  # the exit code, or -N when killed by signal N

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def interruptible() -> None:
    """In the child before it runs gradcli: SIGINT as a terminal's shell leaves it (default), so
    that Ctrl-C reaches Python even where the suite itself was started with SIGINT ignored (a
    shell's ``command &`` without job control, ``nohup``), which the child would inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_in_terminal(
    args: list[str],
    columns: int,
    rows: int = 1000,
    stdout=None,
    env: dict | None = None,
    interrupt_after: float | None = None,
    interrupt_when: bytes | None = None,
    interrupt_once: Callable[[], bool] | None = None,
    timeout: float = 120,
    typed: list[str] | None = None,
    prompts: tuple[bytes, ...] = (b">>> ", b"... "),
) -> Screen:
    """Run ``gradcli ARGS`` on a ``columns`` x ``rows`` pseudo-terminal (see the module doc).

    ``interrupt_when``: send SIGINT as soon as the terminal has shown these bytes.
    ``interrupt_once``: with ``interrupt_after``, send it no sooner than this says so as well
    (on a loaded machine a fixed delay can come before the work it should interrupt).
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE")
    }
    environment.update({"TERM": "xterm-256color", **(env or {})})
    process = subprocess.Popen(
        gradcli_command() + [str(a) for a in args],
        stdin=slave,
        stdout=slave if stdout is None else stdout,
        stderr=slave,
        cwd=REPO,
        env=environment,
        start_new_session=True,
        preexec_fn=interruptible,
    )
    os.close(slave)
    data = bytearray()
    started = time.monotonic()
    interrupted = False
    pending = list(typed or [])
    answered = 0  # the prompts answered so far
    try:
        while True:
            now = time.monotonic() - started
            if now > timeout:
                os.killpg(process.pid, signal.SIGKILL)
                raise AssertionError(f"gradcli {' '.join(map(str, args))} ran past {timeout} s")
            waited = interrupt_after is not None and now >= interrupt_after
            due = (waited and (interrupt_once is None or interrupt_once())) or (
                interrupt_when is not None and interrupt_when in data
            )
            if due and not interrupted:
                os.killpg(process.pid, signal.SIGINT)
                interrupted = True
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the other side closed: the process has ended
                    break
                if not chunk:
                    break
                data += chunk
            elif process.poll() is not None:
                break
            if typed is not None and any(data.endswith(p) for p in prompts):
                shown = sum(data.count(p) for p in prompts)
                if shown > answered:
                    answered = shown
                    os.write(master, (pending.pop(0) + "\n").encode() if pending else b"\x04")
        status = process.wait(timeout=timeout)
    finally:
        os.close(master)
    screen = pyte.Screen(columns, rows)
    # a terminal's line discipline turns \n into \r\n; pyte, which sees the bytes, needs it too
    pyte.ByteStream(screen).feed(bytes(data).replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return Screen(lines, bytes(data), status)


NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?(?![\w.])|nan|-?inf")


def numbers_on(screen: Screen) -> list[str]:
    """Every numeric token on the screen, as text."""
    return [m.group() for line in screen.lines for m in NUMBER.finditer(line)]
