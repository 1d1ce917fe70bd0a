"""The snapshot extension: long numbers rounded, last-bit differences matched, text exact."""

from __future__ import annotations

import math

import pytest
from snapshot_numbers import RoundedNumbers, round_numbers

EXTENSION = RoundedNumbers()


def matches(received, stored) -> bool:
    """Whether a snapshot stored from ``stored`` holds for ``received``."""
    return EXTENSION.matches(
        serialized_data=EXTENSION.serialize(received), snapshot_data=EXTENSION.serialize(stored)
    )


def test_numbers_of_more_than_12_digits_are_rounded_and_the_rest_kept():
    text = '{"y": [1.4400128026144916, 2.0, 0.1, -87.99999999999999, 1.2345678901234567e-05]}'
    assert round_numbers(text) == '{"y": [1.44001280261, 2.0, 0.1, -88.0, 1.23456789012e-05]}'
    names = "x_0 d2f/dxdx 2x3 y[0,1] gradcli 0.1.0 \\x1b[1m 5,000 values"
    assert round_numbers(names) == names
    assert EXTENSION.serialize({"stdout": "1.4400128026144916"}).count("1.44001280261") == 1


def test_the_two_machines_of_the_issue_give_the_same_snapshot():
    here, there = {"stdout": "loss 1.440012802614492"}, {"stdout": "loss 1.4400128026144916"}
    assert EXTENSION.serialize(here) == EXTENSION.serialize(there)
    assert matches(here, there)


@pytest.mark.parametrize("value", [1.440012802614492, 0.1234567890125, -215.6, 1e-300, 24.2])
def test_a_value_one_bit_away_matches(value):
    for neighbour in (math.nextafter(value, math.inf), math.nextafter(value, -math.inf)):
        assert matches(f"f = {neighbour!r}", f"f = {value!r}")


def test_rounding_alone_would_not_do_at_a_boundary():
    """0.1234567890125 and the float after it round to different 12-digit numbers."""
    below, above = "0.1234567890125", "0.12345678901250001"
    assert round_numbers(below) != round_numbers(above)
    assert matches(above, below)


@pytest.mark.parametrize(
    "received",
    [
        "x.grid = [1.440012802614492, 2.0]",  # the text differs
        "x.grad = [1.440012803614492, 2.0]",  # the 10th digit differs
        "x.grad = [1.440012802614492, 2.0, 3.0]",  # one number more
        "x.grad = [1.440012802614492, nan]",  # a number became text
        "x.grad = [1.440012802614492, -2.0]",
        "x.grad =  [1.440012802614492, 2.0]",  # white space
    ],
)
def test_other_changes_do_not_match(received):
    assert not matches(received, "x.grad = [1.440012802614492, 2.0]")


def test_the_cli_tests_snapshot_fixture_uses_it(snapshot):
    assert isinstance(snapshot.extension, RoundedNumbers)
