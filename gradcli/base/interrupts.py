"""Ctrl-C while an answer is written: the answer is written whole first.

A KeyboardInterrupt raised inside a write leaves what was written so far on the screen: a
table cut in its middle, a number cut short, a character cut between its UTF-8 bytes. An
answer already computed is what the user asked for, so its writing holds Ctrl-C back: a first
press waits until the answer is out (and the command then ends as it would have, the work being
done); a second press while the writing is still under way (a stdout that does not drain)
stops it at once, so that Ctrl-C can never hang.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def held() -> Iterator[None]:
    """Hold a first Ctrl-C back until the block ends (and let it go then: the block's work
    is what the press would have stopped); a second press raises KeyboardInterrupt at once.
    Only the main thread receives signals: elsewhere, and where SIGINT is not Python's own
    handler (ignored, or a caller's), nothing is held."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    presses = 0

    def handler(signum: int, frame: object) -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
