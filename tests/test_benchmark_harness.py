"""The benchmark harness's arithmetic (benchmarks/harness.py): it counts CPU time, not time
the machine spent elsewhere, and a ratio is taken round by round. No speed is asserted here."""

from __future__ import annotations

import time

from benchmarks import harness


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_waiting_is_not_counted_and_work_is():
    times = harness.cpu_times(
        {"sleeps": lambda: time.sleep(0.02), "works": lambda: _busy(0.02)},
        harness.Timing(rounds=3, round_seconds=0.0),
    )
    assert times["sleeps"].median < 0.01
    assert 0.015 < times["works"].median < 0.2
    assert len(times["works"].rounds) == 3 and times["works"].calls == 3


def test_a_ratio_is_the_median_of_the_rounds_ratios_with_their_spread():
    base = harness.Result("s", "b", "base", 2.0, 1.0, 4.0, 3, "base", (1.0, 2.0, 4.0))
    mine = harness.Result("s", "b", "mine", 4.0, 3.0, 4.0, 3, "base", (3.0, 4.0, 4.0))
    harness.add_ratios([base, mine], "mine", {"b": 2.5})
    # rounds' ratios 3, 2, 1: the median 2 where the medians' ratio would also be 2, but
    # the spread is of the rounds' own ratios
    assert (mine.ratio, mine.ratio_low, mine.ratio_high) == (2.0, 1.0, 3.0)
    assert mine.status == "PASS" and base.ratio == 1.0


def test_one_measurement_has_no_spread_and_keeps_its_clock():
    row = harness.single("s", "b", "dask", 1.5, "one process", "wall")
    assert (row.median_ms, row.low_ms, row.high_ms, row.clock) == (1500.0, 1500.0, 1500.0, "wall")
