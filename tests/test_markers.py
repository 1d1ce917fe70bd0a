"""tests/conftest.py's markers: without torch a test that needs it skips, and one that skips
unmarked fails (CI's torch run would leave it out); with torch, ``-m torch`` selects exactly
the tests that skipped without it. Run on a small suite of its own, torch stood in for by an
empty module or by its absence, so that it holds with or without torch installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

HERE = Path(__file__).resolve().parent

STAND_IN = """\
import os, sys, types
sys.modules["torch"] = types.ModuleType("torch") if os.environ["TORCH"] == "present" else None
"""

SUITE = {
    "test_mixed.py": """
import pytest


def _helper():
    return pytest.importorskip("torch")


def test_through_a_helper_unmarked():
    _helper()


@pytest.mark.torch
def test_through_a_helper_marked():
    _helper()


def test_in_its_own_text():
    pytest.importorskip("torch")


@pytest.mark.parametrize("n", [1, 2])
def test_without_torch(n):
    assert n
""",
    "test_whole_module.py": """
import pytest

torch = pytest.importorskip("torch")


def test_in_a_module_that_needs_it():
    assert torch
""",
    "test_unbound_module.py": """
import pytest

pytest.importorskip("torch")


def test_in_a_module_that_skips_unseen():
    pass
""",
}


def _outcomes(tmp_path: Path, torch: str, *args: str) -> dict[str, str]:
    """Each test's outcome (passed, skipped, failure, error), by name (a module's, for what
    happened as it was collected)."""
    (tmp_path / "conftest.py").write_text(STAND_IN + (HERE / "conftest.py").read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    torch: t\n    extras: e\n")
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    report = tmp_path / "report.xml"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}"]
    command += ["--continue-on-collection-errors", *args]
    env = {"TORCH": torch, "PATH": "/usr/bin:/bin"}
    subprocess.run(command, cwd=tmp_path, capture_output=True, env=env)
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        outcome = [child.tag for child in case if child.tag in ("skipped", "failure", "error")]
        outcomes[case.get("name", "")] = outcome[0] if outcome else "passed"
    return outcomes


def test_without_torch_a_test_that_needs_it_skips_and_an_unmarked_one_fails(tmp_path):
    assert _outcomes(tmp_path, "absent") == {
        "test_through_a_helper_unmarked": "failure",
        "test_through_a_helper_marked": "skipped",
        "test_in_its_own_text": "skipped",
        "test_without_torch[1]": "passed",
        "test_without_torch[2]": "passed",
        "test_whole_module": "skipped",
        "test_unbound_module": "error",
    }


def test_with_torch_the_marker_selects_the_tests_that_skipped_without_it(tmp_path):
    assert _outcomes(tmp_path, "present", "-m", "torch", "--ignore=test_unbound_module.py") == {
        "test_through_a_helper_marked": "passed",
        "test_in_its_own_text": "passed",
        "test_in_a_module_that_needs_it": "passed",
    }
