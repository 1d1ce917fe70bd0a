"""gradcli: a command-line gradient calculator with PyTorch's autograd semantics.

``import gradcli as gc`` gives the engine's library API: ``gc.tensor``, ``gc.ones``, the
operations by their PyTorch names, ``gc.grad``, ``gc.jacobian`` and the rest; torch's
function transforms as ``gc.func`` (``grad``, ``jacrev``, ``vmap``, ...) and
``gc.autograd`` (``functional``, ``forward_ad``); and the commands' API (``gradcli.api``):
``gc.program(text)``, whose methods are the commands and return the results the command
line renders, and ``gc.text(result, format)``.
"""

from typing import Any as _Any

from .base import collector as _collector

__version__ = "0.1.0"

# The collector is paused while the engine is imported, then goes on as before, what the
# import made moved to its oldest generation unscanned (``base/collector.py``). Freezing it for
# good (``gc.freeze``) is the command line's business (``cli``): a library must not change how
# the collector of the user's process treats the user's own objects.
_collecting = _collector.pause()

# numpy first, from as few frames deep as gradcli can: imported from deeper in gradcli's own
# imports, its imports go back and forth across the edge of CPython 3.11's first 16 KB chunk
# of frames, which is then mapped and unmapped each time (seen: 760 times in a warm `gradcli
# vjp`, a sixth of its time, mostly in the kernel)
import numpy  # noqa: E402, F401, I001

from .api import Program, program, text  # noqa: E402
from .ops.library import *  # noqa: F401,F403,E402
from .ops.library import __all__ as _engine_all  # noqa: E402

__all__ = ["__version__", *_engine_all, "Program", "program", "text"]

_collector.resume(_collecting)


def __getattr__(name: str) -> _Any:
    """``gc.func``, ``gc.autograd``, ``gc.nn``, ``gc.optim`` and ``gc.utils``, imported when
    first used (a command never needs them, so its start-up does not pay for them)."""
    if name in ("func", "autograd", "nn", "optim", "utils"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
