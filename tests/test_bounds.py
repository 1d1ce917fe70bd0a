"""The bounds in force (``base/bounds.py``): one ``using`` for the limits and the budget, and
the engine's room kept up to date from them."""

from __future__ import annotations

import pytest

from gradcli.base import bounds
from gradcli.base.errors import GradcliError
from gradcli.engine.sizes import ROOM


def test_using_puts_each_bound_in_force_and_restores_only_those_it_set():
    before_limits, before_budget = bounds.limits(), bounds.budget()
    small = bounds.Limits(max_elements=1_000)
    tight = bounds.Budget(max_memory=2 * 10**6)
    with bounds.using(small):
        assert bounds.limits() is small and bounds.budget() is before_budget
        with bounds.using(tight):
            assert bounds.limits() is small and bounds.budget() is tight
        assert bounds.budget() is before_budget
    assert bounds.limits() is before_limits
    with bounds.using(small, tight):
        assert (bounds.limits(), bounds.budget()) == (small, tight)
    assert (bounds.limits(), bounds.budget()) == (before_limits, before_budget)


def test_using_restores_the_bounds_when_the_body_raises():
    before = bounds.limits()
    with pytest.raises(GradcliError), bounds.using(bounds.Limits(max_elements=10)):
        bounds.check_elements(11, "the test's tensor")
    assert bounds.limits() is before
    bounds.check_elements(11, "the test's tensor")  # the default limit allows it again


def test_the_engines_room_follows_the_bounds_in_force():
    bounds.keep_room(ROOM)  # as the engine does at its first closer look
    with bounds.using(bounds.Limits(max_elements=5_000), bounds.Budget(max_memory=10**9)):
        assert ROOM[0] == 5_000
        with bounds.using(bounds.Budget(max_memory=16 * 1_000)):
            assert ROOM[0] == 1_000  # the budget alone, at 16 bytes an element
        assert ROOM[0] == 5_000
        tally = bounds.Tally()
        previous = bounds.engage(tally)
        try:
            tally.charge(4 * 10**8 - 16 * 100, "the test's values")  # 1e9 / 2.5 less 1,600
            assert ROOM[0] == 100  # what the engaged run's tally leaves
        finally:
            bounds.engage(previous)
        assert ROOM[0] == 5_000
    assert ROOM[0] == min(bounds.limits().max_elements, bounds.budget().max_memory // 16)
