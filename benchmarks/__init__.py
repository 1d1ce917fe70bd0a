"""Benchmarks for gradcli: timed figures, not tests.

Run from the repository root::

    python -m benchmarks              # every suite
    python -m benchmarks engine       # one suite, by name
    python -m benchmarks --quick --json figures.json

Each suite is a sibling module listed in :data:`SUITES`. A suite module provides

* ``TITLE``: a one-line description, and
* ``run(quick: bool) -> list[benchmarks.harness.Result]``: check and time its benchmarks and
  return the figures (``benchmarks.harness`` has the shared timing, checking and ratio helpers);
  with ``quick``, a rough check in about a minute of CPU for every suite together: the quick
  timings (``harness.QUICK``, ``PROCESS_QUICK``), and what it leaves out named with
  ``harness.quick_skip`` (printed at the end of the run, with how to run it),
* optionally ``NOTES``: lines printed under the table, such as the targets and where they come from.

To add a suite (start-up time, compiled programs, Jacobians, batch mode, ...), write
``benchmarks/<name>.py`` with those two names and add ``"<name>"`` to :data:`SUITES`.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

# One thread for every library, set before any of them is imported (and inherited by the
# processes the suites start): CPU time is then the time of one core, and no library gets a
# second core that its peers do not use.
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
for _name, _value in ONE_THREAD.items():
    os.environ[_name] = _value

#: Suite names, in the order ``python -m benchmarks`` runs them; each is a module of this package.
SUITES: tuple[str, ...] = (
    "engine", "startup", "compiled", "jacobian", "batch", "scaling", "rejections", "groups",
    "script", "dask",
)  # fmt: skip


def load_suite(name: str) -> ModuleType:
    """Import the suite module ``benchmarks.<name>`` (only when it is about to run)."""
    if name not in SUITES:
        raise KeyError(f"unknown benchmark suite {name!r}; known: {', '.join(SUITES)}")
    return importlib.import_module(f"{__name__}.{name}")
