"""Shared test setup: every test starts from the same random state, and a test that needs a
package the test extra does not install is marked, so that it skips cleanly without it and
CI can run exactly those tests again once the package is there.

Two markers say what a test needs beyond ``pip install -e '.[test]'``:

- ``torch``: torch 2.13, the oracle of the cross-checks (``pip install torch==2.13.0``);
- ``extras``: an optional extra's package (``gradcli[all]``: Dask, Zarr, pyarrow,
  matplotlib, numba).

A marked test is skipped when its package is missing. The markers are applied by hand
(``@pytest.mark.torch``, where a helper skips) or found: a test whose own text calls
``pytest.importorskip`` for the package is marked, and so is every test of a module that binds
the package's name at its top (``torch = pytest.importorskip("torch")``, so that without the
package the module is skipped as it is collected) and every test that uses a fixture of
``FIXTURES``. A test that skips for want of one of these packages without being marked fails,
saying to mark it: otherwise CI's second run (``pytest -m "torch or extras"``, after installing
torch and the extras) would leave it out, and nothing would run it.
"""

import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc

# the fuzz targets' tally, printed by the process that reports the run (see its text); a copy
# of this file elsewhere (tests/test_markers.py's own small suite) has no tests/fuzz beside it
pytest_plugins = ["fuzz.tally"] if (Path(__file__).parent / "fuzz").is_dir() else []

# which marker a missing package calls for (a module name's first part)
NEEDS = {
    "torch": "torch",
    "dask": "extras",
    "distributed": "extras",
    "zarr": "extras",
    "pyarrow": "extras",
    "matplotlib": "extras",
    "numba": "extras",
}
# fixtures that skip for want of a package, and the marker a test using one gets
FIXTURES = {"torch_oracle": "torch", "torch_outputs": "torch", "torch": "torch"}


def _package(module: object) -> str | None:
    """The name of the package of NEEDS that this module object is, if any."""
    name = getattr(module, "__name__", None)
    if not isinstance(name, str):
        return None
    top = name.partition(".")[0]
    return top if top in NEEDS and sys.modules.get(name) is module else None


_IMPORTORSKIP = re.compile(r"importorskip\(\"([\w.]+)\"")


def _skips_for(function: object) -> set[str]:
    """The markers the packages a test function's own text imports-or-skips call for."""
    try:
        source = inspect.getsource(function)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return set()
    needed = (name.partition(".")[0] for name in _IMPORTORSKIP.findall(source))
    return {NEEDS[name] for name in needed if name in NEEDS}


def pytest_collection_modifyitems(config, items):
    for item in items:
        marks = {FIXTURES[name] for name in item.fixturenames if name in FIXTURES}
        marks |= _skips_for(getattr(item, "function", None))
        module = getattr(item, "module", None)
        for value in vars(module).values() if module is not None else ():
            package = _package(value)
            if package is not None:
                marks.add(NEEDS[package])
        for mark in sorted(marks):
            item.add_marker(mark)


def pytest_runtest_setup(item):
    if item.get_closest_marker("torch"):
        pytest.importorskip("torch")


_MISSING = re.compile(r"could not import '([\w.]+)'")


def _unmarked_need(reason: str, marked: set[str]) -> str | None:
    """The marker a skip for want of a package calls for, when the test lacks it."""
    missing = _MISSING.search(reason)
    if missing is None:
        return None
    need = NEEDS.get(missing.group(1).partition(".")[0])
    return need if need is not None and need not in marked else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return
    marked = {mark.name for mark in item.iter_markers()}
    need = _unmarked_need(report.longrepr[2], marked)
    if need is not None:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} skipped ({report.longrepr[2]}) but is not marked {need}: "
            f"give it @pytest.mark.{need}, or CI's run with the package installed leaves it out"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A module skipped as it is collected, for want of a package, must bind the package's
    name at its top, where ``pytest_collection_modifyitems`` finds it once it is there."""
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return
    missing = _MISSING.search(report.longrepr[2])
    if missing is None or missing.group(1).partition(".")[0] not in NEEDS:
        return
    source = collector.path.read_text(encoding="utf-8")
    name = missing.group(1)
    if not re.search(rf"^\w+ = pytest\.importorskip\(\"{re.escape(name)}\"\)", source, re.M):
        report.outcome = "failed"
        report.longrepr = (
            f"{report.nodeid} is skipped for want of {name} but does not bind it at its top "
            f'(NAME = pytest.importorskip("{name}")): CI\'s run with {name} installed would '
            "leave it out"
        )


@pytest.fixture(autouse=True)
def _seed_randomness():
    """Seed gradcli's generator (``gc.rand``/``gc.randn``) and numpy's global one."""
    gc.manual_seed(0)
    np.random.seed(0)
    yield
