"""``gradcli run`` on other people's PyTorch code: the scripts of ``tests/script/corpus`` (real
code from public teaching material, each header naming its source and edits) against what torch
2.13 prints for them, as recorded in ``corpus_expected.json`` by ``corpus_oracle.py``.

A script is identical when gradcli's stdout (object addresses masked) and exit status are
torch's. The scripts listed in ``corpus_passing.txt`` are identical today and must stay so; the
others are measured, not failed: the summary ranks what stops them, by the number of scripts
each reason blocks (the first refusal of each script). Print that table with

    python tests/script/test_corpus.py

Where torch is installed, a fixed sample of the corpus is run by torch again and must print what
the record says, so the record cannot drift from torch; ``pytest -m corpus`` re-runs all of it.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus_oracle import CORPUS, EXPECTED, REPO, exception_line, mask, scripts
from typer.testing import CliRunner

from gradcli.cli.app import app

PASSING = Path(__file__).with_name("corpus_passing.txt")
ORACLE = Path(__file__).with_name("corpus_oracle.py")
# Every eighth script (by name) is run by torch again in the default suite.
TORCH_SAMPLE_STRIDE = 8
# One worker of pytest-xdist runs this module: each script runs once a session (run_gradcli's
# cache), for its own test and for the summary.
pytestmark = pytest.mark.xdist_group("corpus")

# How the interactive interpreter echoes a bare `torch.manual_seed(0)` line, address masked.
GENERATOR = "<torch._C.Generator object at 0x…>"
# What varies inside one kind of refusal (names, counts, code quoted back), replaced by '…' so
# that the ranking counts kinds, not spellings.
_SPECIFICS = [
    (re.compile(r"^error: statement \d+ \(line \d+\): "), ""),
    (re.compile(r"^error: "), ""),
    (re.compile(r"^[A-Za-z_]\w*: (line \d+ |gradcli run takes )"), r"…: \1"),
    (re.compile(r"line \d+"), "line …"),
    (re.compile(r"^nothing joins .* and .*: "), "nothing joins … and …: "),
    (re.compile(r"^unknown function '[^']*'"), "unknown function '…'"),
    (re.compile(r"^'[^']*' cannot be assigned"), "'…' cannot be assigned"),
    (re.compile(r"torch(\.\w+)+ is not an operation"), "torch.… is not an operation"),
    (re.compile(r"into \d+ names"), "into … names"),
]


@dataclass(frozen=True)
class Outcome:
    """What one run printed: stdout, stderr, exit status."""

    stdout: str
    stderr: str
    status: int


def expected() -> dict[str, dict]:
    """torch's record for each script, by file name."""
    return json.loads(EXPECTED.read_text())["scripts"]


def passing() -> list[str]:
    """The scripts gradcli reproduces today (one file name a line; '#' starts a comment)."""
    lines = (line.split("#")[0].strip() for line in PASSING.read_text().splitlines())
    return [line for line in lines if line]


@functools.cache
def run_gradcli(script: Path) -> Outcome:
    """``gradcli run SCRIPT`` in-process, stdout kept apart from stderr; each script is run once
    a session (the passing scripts' tests and the summary read the same outcome)."""
    done = CliRunner().invoke(app, ["run", str(script)])
    return Outcome(done.stdout, done.stderr, done.exit_code)


def identical(outcome: Outcome, record: dict) -> bool:
    """gradcli printed torch's stdout (addresses masked) and exited with torch's status."""
    return mask(outcome.stdout) == record["stdout"] and outcome.status == record["status"]


def reason(outcome: Outcome, record: dict) -> str:
    """Why a script is not identical, as a kind (specifics masked); empty when it is."""
    if identical(outcome, record):
        return ""
    lines = outcome.stderr.strip().splitlines()
    if outcome.status == 2 and lines:
        # the refusal, not a warning the script printed before it
        text = next((line for line in lines if line.startswith("error: ")), lines[0])
        for pattern, replacement in _SPECIFICS:
            text = pattern.sub(replacement, text)
        return text
    if outcome.status != record["status"]:
        last = exception_line(outcome.stderr, outcome.status) or "no error"
        return f"exit {outcome.status} where torch exits {record['status']} ({last})"
    if GENERATOR in record["stdout"] and GENERATOR not in mask(outcome.stdout):
        return "runs, but does not echo torch.manual_seed's generator (issue 31)"
    return "runs, but prints other text than torch"


@dataclass
class Measure:
    """The corpus measured: the identical scripts and, for the others, their reasons."""

    total: int
    same: list[str]
    blocked: dict[str, list[str]]

    def table(self) -> str:
        """N of M identical, and the reasons ranked by the number of scripts they block."""
        rows = sorted(self.blocked.items(), key=lambda item: (-len(item[1]), item[0]))
        width = max([len(r) for r, _ in rows] + [6])
        out = [f"{len(self.same)} of {self.total} corpus scripts identical to torch", ""]
        out.append(f"{'scripts':>7}  {'reason':<{width}}  example")
        for text, names in rows:
            out.append(f"{len(names):>7}  {text:<{width}}  {names[0]}")
        return "\n".join(out)


def measure(names: list[str] | None = None) -> Measure:
    """Run the corpus (or the named scripts) through gradcli and compare with the record."""
    records = expected()
    chosen = [p for p in scripts() if names is None or p.name in names]
    same: list[str] = []
    blocked: dict[str, list[str]] = defaultdict(list)
    for script in chosen:
        why = reason(run_gradcli(script), records[script.name])
        if why:
            blocked[why].append(script.name)
        else:
            same.append(script.name)
    return Measure(len(chosen), same, dict(blocked))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def test_every_script_is_recorded_and_names_its_source():
    records = expected()
    names = [p.name for p in scripts()]
    assert len(names) >= 150
    assert sorted(records) == names
    for script in scripts():
        header = script.read_text().splitlines()[:3]
        assert header[0].startswith("# Source: "), script.name
        assert header[1].startswith("# Licence: "), script.name
        assert header[2].startswith("# Edits:"), script.name
    assert set(passing()) <= set(names)


@pytest.mark.parametrize("name", passing())
def test_a_passing_script_stays_identical_to_torch(name):
    record = expected()[name]
    outcome = run_gradcli(CORPUS / name)
    assert mask(outcome.stdout) == record["stdout"]
    assert outcome.status == record["status"]


def test_the_corpus_summary(capsys):
    """Measures the whole corpus (not failed on the others); the table goes to the report."""
    result = measure()
    assert result.total == len(scripts())
    assert set(passing()) <= set(result.same)
    assert len(result.same) + sum(len(v) for v in result.blocked.values()) == result.total
    with capsys.disabled():
        print("\n" + result.table())


def test_a_refusal_is_counted_by_its_kind():
    record = {"stdout": "", "status": 0}
    refusals = [
        "error: statement 4 (line 11): attribute access ('.') is not allowed\n  x.y\n  ^\n",
        "error: statement 2 (line 8): unknown function 'vjp'\n",
        "error: statement 9 (line 30): unknown function 'hvp'\n",
        "error: statement 5 (line 7): nothing joins jacrev(f) and (x): multiplication needs '*'\n",
        "s.py:3: UserWarning: torch.range is deprecated\n  x = torch.range(0, 1)\n"
        "error: line 5: gradcli has no torch.float16 yet\n",
    ]
    kinds = [reason(Outcome("", text, 2), record) for text in refusals]
    assert kinds == [
        "attribute access ('.') is not allowed",
        "unknown function '…'",
        "unknown function '…'",
        "nothing joins … and …: multiplication needs '*'",
        "line …: gradcli has no torch.float16 yet",
    ]
    assert reason(Outcome("", "", 0), record) == ""
    assert reason(Outcome("x\n", "", 0), record) == "runs, but prints other text than torch"
    seeded = {"stdout": "<torch._C.Generator object at 0x7f00>\nTrue\n", "status": 0}
    seeded["stdout"] = mask(seeded["stdout"])
    assert reason(Outcome("True\n", "", 0), seeded).startswith("runs, but does not echo")
    failed = Outcome("", "Traceback (most recent call last):\nRuntimeError: boom\n", 1)
    assert reason(failed, record) == "exit 1 where torch exits 0 (RuntimeError: boom)"


def test_addresses_are_masked_and_the_repository_made_relative():
    text = f"<MulBackward0 object at 0x7f3a2c1d9e80> {REPO}/tests/x.py"
    assert mask(text) == "<MulBackward0 object at 0x…> <repo>/tests/x.py"


def _torch_again(names: list[str], tmp_path: Path) -> dict[str, dict]:
    pytest.importorskip("torch")
    out = tmp_path / "torch.json"
    command = [sys.executable, str(ORACLE), "--out", str(out), "--only", ",".join(names)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert document["torch"] == json.loads(EXPECTED.read_text())["torch"]
    return document["scripts"]


@pytest.mark.torch
def test_the_record_is_what_torch_prints_for_a_sample(tmp_path):
    names = [p.name for p in scripts()][::TORCH_SAMPLE_STRIDE]
    again = _torch_again(names, tmp_path)
    records = expected()
    assert {name: again[name] for name in names} == {name: records[name] for name in names}


@pytest.mark.corpus
def test_the_record_is_what_torch_prints_for_every_script(tmp_path):
    names = [p.name for p in scripts()]
    assert _torch_again(names, tmp_path) == expected()


if __name__ == "__main__":
    result = measure()
    print(result.table())
    promoted = sorted(set(result.same) - set(passing()))
    if promoted:
        print(f"\nidentical but not in {PASSING.name}: {', '.join(promoted)}")
