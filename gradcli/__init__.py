"""gradcli: a command-line gradient calculator with PyTorch's autograd semantics.

``import gradcli as gc`` gives the engine's library API: ``gc.tensor``, ``gc.ones``, the
operations by their PyTorch names, ``gc.grad``, ``gc.jacobian`` and the rest; and the
commands' API (``gradcli.api``): ``gc.program(text)``, whose methods are the commands and
return the results the command line renders, and ``gc.text(result, format)``.
"""

__version__ = "0.1.0"

from .api import Program, program, text  # noqa: E402
from .engine import *  # noqa: F401,F403,E402
from .engine import __all__ as _engine_all  # noqa: E402

__all__ = ["__version__", *_engine_all, "Program", "program", "text"]
