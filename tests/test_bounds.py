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


class _Value:
    """A value a tally may hold (weakly referenced, as the engine's tensors are)."""


def test_a_tally_holds_a_value_while_it_lives_once_and_for_good_when_kept():
    tally = bounds.Tally(held=10)
    first, second = _Value(), _Value()
    tally.hold(first, 100)
    tally.hold(first, 100)  # told twice: counted once
    tally.hold(second, 1_000)
    assert tally.held == 1_110
    del first
    assert tally.held == 1_010  # freed: released
    assert tally.keep(second)
    assert not tally.keep(_Value())  # never held
    del second
    assert tally.held == 1_010  # kept for good: its end releases nothing
    assert not tally.live


def test_an_engaged_tallys_holds_move_the_room_in_steps_of_its_slack():
    bounds.keep_room(ROOM)
    budget = 16 * 64 * 1_000  # the room moves after 1/64 of it (times the factor 2.5)
    with bounds.using(bounds.Limits(max_elements=10**9), bounds.Budget(max_memory=budget)):
        tally = bounds.Tally()
        previous = bounds.engage(tally)
        try:
            start = ROOM[0]
            assert bounds.engage(tally) is tally  # engaged again (each call of a run)
            small = _Value()
            tally.hold(small, 16 * 100)  # below the step: the room is not worked out again
            assert ROOM[0] == start
            large = _Value()
            tally.hold(large, budget // 64)  # past it: the room shrinks by what is held
            assert ROOM[0] == start - 100 - budget // (64 * 16)
            del small, large  # both released: back by the same step
            assert ROOM[0] == start
        finally:
            bounds.engage(previous)
