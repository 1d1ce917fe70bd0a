"""CLI test setup: a private parse cache, the repository as working directory, a runner.

``cli(*args, input=None, env=None)`` runs ``gradcli ARGS`` in-process through Typer's
``CliRunner`` (stdout and stderr kept apart, stdout not a terminal) and returns the result;
``cli_json(*args)`` adds ``--format json``, checks the exit code and parses the output strictly.
``snapshot`` is syrupy's, with long numbers rounded (see ``snapshot_numbers``);
``torch_oracle(args, document)`` checks every number of a JSON document against torch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from snapshot_numbers import RoundedNumbers
from typer.testing import CliRunner

from gradcli.cli import app

REPO = Path(__file__).resolve().parents[2]

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
    raise AssertionError(f"invalid JSON: bare {token} (gradcli must write it as a string)")


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
def snapshot(snapshot):
    """Syrupy's snapshot, its long numbers rounded and compared at a tolerance."""
    return snapshot.use_extension(RoundedNumbers)


@pytest.fixture
def torch_oracle():
    """``torch_oracle.check_document``; the test is skipped when torch is not installed."""
    pytest.importorskip("torch")
    from torch_oracle import check_document

    return check_document
