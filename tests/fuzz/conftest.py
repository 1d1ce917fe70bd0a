"""Fuzz test setup: each test's cases are counted in ``fuzz_stats``, the run's tally, whose
summary ``tally.py`` prints at the end of the run (in one process or under pytest-xdist)."""

from __future__ import annotations

import pytest
from fuzz.tally import FuzzStats, stats_of


@pytest.fixture(scope="session")
def fuzz_stats(request) -> FuzzStats:
    return stats_of(request.config)


@pytest.fixture(autouse=True)
def _note_long_run(request, fuzz_stats):
    if request.node.get_closest_marker("fuzz") is not None:
        fuzz_stats.long_run = True
