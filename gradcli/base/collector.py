"""The garbage collector paused while gradcli's modules are imported, and resumed after
without a scan of what the imports made.

Importing makes tens of thousands of objects that live as long as the process, and next to no
garbage: the collector would only scan them, again and again. It is paused (``pause``) while
the modules are imported. Resumed as it was (``resume``), its first collection would scan every
object made while it was paused, the young generation grown to all of them: a sixth of a warm
``gradcli vjp``'s time (two such scans, 20 to 30 ms on this project's machine). So before it
goes on, the objects the collector tracks move to its oldest generation unscanned
(``gc.freeze`` then ``gc.unfreeze``), where those that outlived the collections of an import
with the collector on would have gone anyway. Where the process has frozen objects of its own,
``gc.unfreeze`` would give them back to the collector: nothing moves then, and the first
collection scans. Nothing stays frozen: freezing the imports' objects for good is the command
line's business (``keep``, called by ``cli.app.main``), never a library's; in the command
line's process, what a later import makes (sympy's, on a cache miss) is frozen as it resumes.
"""

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: Whether this process is the command line's, whose objects stay frozen (``keep``).
_kept = False


def keep() -> None:
    """Freeze for good what the process holds, and what later imports make as the collector
    resumes: for the command line's own process (``cli.app.main``), never a library's."""
    global _kept
    gc.freeze()
    _kept = True


def pause() -> bool:
    """Stop the collector; whether it was on (for ``resume``)."""
    collecting = gc.isenabled()
    gc.disable()
    return collecting


def resume(collecting: bool) -> None:
    """Start the collector again if it was on (``collecting``, from ``pause``), what it
    tracks moved to its oldest generation first, unscanned (frozen, after ``keep``)."""
    if not collecting:
        return
    if _kept:
        gc.freeze()
    elif not gc.get_freeze_count():
        gc.freeze()
        gc.unfreeze()
    gc.enable()


@contextmanager
def paused_for(module: str) -> Iterator[None]:
    """The collector paused while the block runs, if it imports ``module`` (a library of
    many objects: sympy, rich) for the first time; else nothing changes (a REPL's next
    statement must not freeze what the session made)."""
    if module in sys.modules:
        yield
        return
    collecting = pause()
    try:
        yield
    finally:
        resume(collecting)
