"""The fixtures of the tests that run the command line (``tests/cli``, ``tests/commands``,
``tests/batch``, ``tests/ops``; each folder's conftest.py takes them from here): a private
parse cache, the repository as working directory, a runner.

``cli(*args, input=None, env=None)`` runs ``gradcli ARGS`` in-process through Typer's
``CliRunner`` (stdout and stderr kept apart, stdout not a terminal) and returns the result;
``cli_json(*args)`` adds ``--format json``, checks the exit code and parses the output strictly.
``csv_as_json(*args)`` runs with ``--format csv`` and ``--format json`` and checks that the CSV
holds every array of the JSON under its keys (``grads.x``), to the last bit; it returns the
CSV's arrays by label.
``snapshot`` is syrupy's, with long numbers rounded (see ``snapshot_numbers``);
``torch_oracle(args, document)`` checks every number of a JSON document against torch.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from snapshot_numbers import RoundedNumbers
from typer.testing import CliRunner

from gradcli.cli.app import app

REPO = Path(__file__).resolve().parents[1]

#: The fixtures, which each folder's conftest.py takes (``from command_fixtures import *``).
__all__ = [
    "_isolated_environment",
    "cli",
    "cli_json",
    "csv_as_json",
    "parse_json",
    "repo",
    "snapshot",
    "torch_oracle",
]

# Variables that could change how rich draws a table; each test starts without them.
_DISPLAY_VARIABLES = (
    "NO_COLOR",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
    "TERM",
    "COLORTERM",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
)


def _no_bare_constants(token: str):
    raise AssertionError(f"invalid JSON: bare {token} (gradcli must write null or a string)")


def strict_json(text: str):
    """``json.loads`` that refuses NaN, Infinity and -Infinity tokens."""
    return json.loads(text, parse_constant=_no_bare_constants)


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory, monkeypatch):
    """A parse cache shared by this test session only, and a neutral display environment."""
    cache = tmp_path_factory.getbasetemp() / "gradcli-parse-cache"
    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(cache))
    for name in _DISPLAY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def tidy_csv(text: str) -> dict[str, np.ndarray | None]:
    """gradcli's ``tensor,i0,...,value`` CSV read back: an array per label (of floats, or of
    formulas as text), None for a gradient that is None. Checks that every element is there."""
    header, *rows = csv.reader(io.StringIO(text))
    assert header == ["tensor", *(f"i{k}" for k in range(len(header) - 2)), "value"]
    cells: dict[str, dict[tuple[int, ...], str]] = {}
    for label, *index, value in rows:
        rank = index.index("") if "" in index else len(index)
        assert set(index[rank:]) <= {""}, f"{label}: blank index cells come last"
        element = tuple(int(i) for i in index[:rank])
        assert element not in cells.setdefault(label, {}), f"{label}{list(element)} twice"
        cells[label][element] = value
    arrays = {}
    for label, elements in cells.items():
        if list(elements.items()) == [((), "")]:
            arrays[label] = None
            continue
        shape = tuple(max(i) + 1 for i in zip(*elements)) if () not in elements else ()
        assert len(elements) == math.prod(shape), f"{label}: an element is missing"
        values = [elements[i] for i in np.ndindex(shape)]
        try:
            arrays[label] = np.array([float(v) for v in values]).reshape(shape)
        except ValueError:  # formulas
            arrays[label] = np.array(values, dtype=object).reshape(shape)
    return arrays


# the sections of a JSON document that hold arrays (the others: command, output, layout, ...)
ARRAY_SECTIONS = ("values", "grads", "jvp", "hessian", "hvp", "check", "jacobian", "symbolic")


def csv_labels(document: dict) -> dict:
    """The arrays of a JSON document under the labels gradcli's CSV gives them: their keys
    joined by dots (``grads.x``, ``jacobian.y.x``), in the document's order."""
    labelled = {}

    def walk(prefix: str, tree) -> None:
        if isinstance(tree, dict):
            for key, value in tree.items():
                walk(f"{prefix}.{key}", value)
        else:
            labelled[prefix] = tree

    for section, tree in document.items():
        if section in ARRAY_SECTIONS:
            walk(section, tree)
    return labelled


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def cli(monkeypatch):
    """Run the app in-process from the repository root (samples use relative paths)."""
    monkeypatch.chdir(REPO)
    runner = CliRunner()

    def invoke(*args, input: str | None = None, env: dict | None = None):
        return runner.invoke(app, [str(a) for a in args], input=input, env=env)

    return invoke


@pytest.fixture
def cli_json(cli):
    """Run with ``--format json``; exit code 0 and strictly valid JSON are required."""

    def invoke(*args, input: str | None = None):
        result = cli(*args, "--format", "json", input=input)
        assert result.exit_code == 0, result.stderr
        return strict_json(result.stdout)

    return invoke


@pytest.fixture
def parse_json():
    return strict_json


@pytest.fixture
def csv_as_json(cli):
    """Run with ``--format csv`` and ``--format json``: the same arrays, the same floats."""

    def invoke(*args) -> dict[str, np.ndarray | None]:
        table = cli(*args, "--format", "csv")
        document = cli(*args, "--format", "json", "--nonfinite", "string")  # as CSV writes them
        assert table.exit_code == document.exit_code, table.stderr
        arrays, expected = tidy_csv(table.stdout), csv_labels(strict_json(document.stdout))
        expected = {k: v for k, v in expected.items() if v is None or np.size(v)}  # no rows
        assert list(arrays) == list(expected)
        for label, array in arrays.items():
            wanted = expected[label]
            if array is None or wanted is None or array.dtype == object:  # None, or formulas
                assert (array if array is None else array.tolist()) == wanted, label
            else:
                wanted = np.asarray(wanted, dtype=float)  # "nan", "inf", "-inf" as numbers
                assert array.shape == wanted.shape, label
                assert np.array_equal(array, wanted, equal_nan=True), label
        return arrays

    return invoke


@pytest.fixture
def snapshot(snapshot):
    """Syrupy's snapshot, its long numbers rounded and compared at a tolerance."""
    return snapshot.use_extension(RoundedNumbers)


@pytest.fixture
def torch_oracle():
    """``torch_oracle.check_document``; the test is skipped when torch is not installed."""
    pytest.importorskip("torch")
    from torch_oracle import check_document

    return check_document


# -- the samples, and gradcli as a process ----------------------------------------------------

SAMPLES = sorted((REPO / "samples").glob("*.gc"))


def run_line(sample: Path) -> list[str]:
    """The arguments of the sample's ``# Run: gradcli ...`` comment."""
    lines = [line for line in sample.read_text().splitlines() if line.startswith("# Run:")]
    assert len(lines) == 1, f"{sample.name} needs exactly one '# Run: gradcli ...' line"
    words = shlex.split(lines[0][len("# Run:") :])
    assert words[:1] == ["gradcli"], f"{sample.name}: the Run line must start with gradcli"
    return words[1:]


_WRAPPER = """
import json, resource, subprocess, sys
limit = int(sys.argv[1])
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
done = subprocess.run(sys.argv[2:], preexec_fn=cap, stdin=sys.stdin, capture_output=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"code": done.returncode, "peak": peak * 1024,
                  "stdout": done.stdout.decode(errors="replace")[-2000:],
                  "stderr": done.stderr.decode(errors="replace")}))
"""


def measured(args: list[str], tmp_path, limit_mb: int = 1500, stdin=None) -> dict:
    """``gradcli ARGS`` as a process under an address-space limit of ``limit_mb``: its exit
    code, the end of its stdout, its stderr and its peak resident memory in MB."""
    env = {**os.environ, "GRADCLI_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gradcli", *args]
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(limit_mb * 2**20), *command],
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    report = json.loads(done.stdout)
    report["peak_mb"] = report["peak"] / 1e6
    return report


GRADCLI = [sys.executable, "-m", "gradcli"]


def run(
    args: list[str],
    env: dict[str, str] | None = None,
    timeout: float = 120,
    stdout=None,
    memory: int | None = None,
):
    """``gradcli ARGS`` as a process (text out, the repository as working directory), under
    an address-space limit of ``memory`` bytes if given (a regression then fails at once
    instead of swapping)."""

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        GRADCLI + args,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
        timeout=timeout,
        preexec_fn=limit,
    )


def value_of(result, name: str = "y"):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["values"][name]
