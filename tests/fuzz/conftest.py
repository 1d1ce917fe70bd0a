"""Fuzz test setup: a per-target tally of the cases run, and its summary at the end of the run.

Each fuzz target records every case it runs in ``fuzz_stats`` (how it ended and how long it
took). The summary is printed after the tests, whatever the capture mode; when a long run
(``-m fuzz``) took place and ``benchmarks/results/`` exists, it is also written there as JSON.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benchmarks" / "results"


@dataclass
class Target:
    """The tally of one fuzz target."""

    cases: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    slowest: float = 0.0
    slowest_case: str = ""

    def as_dict(self) -> dict:
        return {
            "cases": self.cases,
            "outcomes": dict(sorted(self.outcomes.items())),
            "slowest_seconds": round(self.slowest, 4),
            "slowest_case": self.slowest_case,
        }


@dataclass
class Failure:
    """One kind of failure a long run found: how often, and its shortest case."""

    count: int
    case: str
    message: str


@dataclass
class FuzzStats:
    """Every target's tally and failures, and whether a long (``fuzz``-marked) test ran."""

    targets: dict[str, Target] = field(default_factory=dict)
    failures: dict[str, dict[str, Failure]] = field(default_factory=dict)
    long_run: bool = False
    started: float = field(default_factory=time.perf_counter)

    def collect(self, target: str, case: str, check, *args) -> None:
        """``check(*args)``, keeping a failure (grouped by its kind) instead of stopping, so
        that one long run finds every kind of failure it can, each with its shortest case."""
        try:
            check(*args)
        except Exception as exc:  # noqa: BLE001 - every failure is kept and reported
            message = (
                str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
            )
            kind = _kind(message)
            found = self.failures.setdefault(target, {})
            if kind not in found:
                found[kind] = Failure(0, case, message)
            failure = found[kind]
            failure.count += 1
            if len(case) < len(failure.case):
                failure.case, failure.message = case, message

    def assert_no_failures(self, target: str) -> None:
        found = self.failures.get(target, {})
        assert not found, f"{target}: {len(found)} kinds of failure\n" + "\n".join(
            f"- {kind} ({f.count} cases), shortest: {f.case}" for kind, f in found.items()
        )

    def record(self, target: str, outcome: str, seconds: float, case: str) -> None:
        tally = self.targets.setdefault(target, Target())
        tally.cases += 1
        tally.outcomes[outcome] = tally.outcomes.get(outcome, 0) + 1
        if seconds > tally.slowest:
            tally.slowest, tally.slowest_case = seconds, case[:300]

    def __repr__(self) -> str:  # hypothesis prints the fixtures of a failing case
        return f"FuzzStats({sum(t.cases for t in self.targets.values())} cases)"

    def as_dict(self) -> dict:
        return {
            "long_run": self.long_run,
            "wall_seconds": round(time.perf_counter() - self.started, 1),
            "targets": {name: t.as_dict() for name, t in sorted(self.targets.items())},
            "failures": {
                target: {kind: vars(f) for kind, f in found.items()}
                for target, found in sorted(self.failures.items())
            },
        }


def _kind(message: str) -> str:
    """A failure's kind: its first line, with numbers and quoted text left out."""
    line = message.strip().split("\n", 1)[0]
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", line)
    return re.sub(r"\d+", "N", line)[:160]


_STATS = pytest.StashKey[FuzzStats]()


@pytest.fixture(scope="session")
def fuzz_stats(request) -> FuzzStats:
    stats = request.config.stash.get(_STATS, None)
    if stats is None:
        stats = request.config.stash[_STATS] = FuzzStats()
    return stats


@pytest.fixture(autouse=True)
def _note_long_run(request, fuzz_stats):
    if request.node.get_closest_marker("fuzz") is not None:
        fuzz_stats.long_run = True


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = config.stash.get(_STATS, None)
    if stats is None or not stats.targets:
        return
    report = stats.as_dict()
    write = terminalreporter.write_line
    terminalreporter.section("fuzz summary")
    for name, tally in report["targets"].items():
        outcomes = ", ".join(f"{k} {v}" for k, v in tally["outcomes"].items())
        write(f"{name}: {tally['cases']} cases ({outcomes})")
        write(f"    slowest {tally['slowest_seconds']:.3f} s: {tally['slowest_case']!r}"[:400])
    for target, found in report["failures"].items():
        for kind, failure in found.items():
            write(f"FAILURE {target}: {kind} ({failure['count']} cases)")
            write(f"    shortest: {failure['case']!r}"[:1000])
    if stats.long_run and RESULTS.is_dir():
        path = RESULTS / f"fuzz-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps(report, indent=2) + "\n")
        write(f"written to {path}")
