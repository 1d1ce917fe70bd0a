"""The benchmark harness's arithmetic (benchmarks/harness.py): it counts CPU time, not time
the machine spent elsewhere, and a ratio is taken round by round. No speed is asserted here."""

from __future__ import annotations

import sys
import time

import pytest

from benchmarks import harness


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_waiting_is_not_counted_and_work_is(monkeypatch):
    # the harness's full collections before each turn are not what is checked here; in the
    # whole suite's process (every object it holds walked each time) they took 16 of 16.5 s
    monkeypatch.setattr(harness.gc, "collect", lambda generation=2: 0)
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


def _run(samples, roles):
    return harness.TreeRun(samples[-1][0], dict(samples[-1][1]), roles, samples)


def test_a_quiet_machine_runs_the_workers_side_by_side_and_the_rest_in_turn():
    # (seconds, {pid: CPU seconds so far}): the command (1) starts 1 s, then the fork server
    # (2) imports while the command traces; then two workers (3, 4) replay 4 s and 3 s while
    # the command schedules 1 s; then the command gathers 0.5 s
    samples = [
        (1.0, {1: 1.0}),
        (2.0, {1: 1.5, 2: 0.5}),
        (7.0, {1: 1.5, 2: 0.5, 3: 2.0, 4: 1.5}),
        (30.0, {1: 2.5, 2: 0.5, 3: 4.0, 4: 3.0}),  # a long interval at load: its work counts
        (31.0, {1: 3.0, 2: 0.5, 3: 4.0, 4: 3.0}),
    ]
    roles = {1: "command", 2: "fork server", 3: "worker", 4: "worker"}
    # 1 + 0.5 before; 4 (the busiest worker; all 8 over 2 cores is 4 too); 0.5 after
    assert harness.quiet_wall(_run(samples, roles), cores=2) == 6.0
    # one core: the 10.5 s of work in turn
    assert harness.quiet_wall(_run(samples, roles), cores=1) == 10.5
    # without workers, interval by interval: 3 processes at once on 2 cores take 1.5 s
    alone = [(1.0, {1: 1.0, 2: 1.0, 3: 1.0})]
    assert harness.quiet_wall(_run(alone, dict.fromkeys((1, 2, 3), "command")), 2) == 1.5


def test_a_command_s_processes_are_sampled_each_with_its_role():
    pytest.importorskip("distributed")  # sample_tree reads psutil, which comes with it
    child = "import time; e = time.process_time() + 0.3\nwhile time.process_time() < e: pass"
    parent = (
        "import subprocess, sys, time\n"
        f"worker = subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        "e = time.process_time() + 0.2\n"
        "while time.process_time() < e: pass\n"
        "worker.wait()\n"
    )
    run = harness.sample_tree([sys.executable, "-c", parent], every=0.01)
    assert harness.quiet_wall(run, 2) <= run.wall + 0.05
    (command,), (worker,) = run.of("command"), run.of("worker")
    assert 0.15 < command < 0.6 and 0.2 < worker < 0.8  # the last 10 ms may go uncounted
    assert run.wall > 0.3 and len(run.samples) > 3


def test_a_failing_command_says_why():
    pytest.importorskip("distributed")  # psutil
    with pytest.raises(RuntimeError, match="exited with 3: no such thing"):
        failing = "import sys; print('no such thing', file=sys.stderr); sys.exit(3)"
        harness.sample_tree([sys.executable, "-c", failing])


def test_each_figure_says_when_and_where_it_was_taken():
    facts = harness.machine_facts()
    assert facts["date"][:2] == "20" and facts["cpu_count"] >= 1
    assert ": " in facts["machine"]  # the host's name, then its CPU
    assert len(harness.load_average().split()) == 3


@pytest.mark.torch
def test_torch_is_held_to_one_thread():
    torch = harness.optional_import("torch")
    assert torch.get_num_threads() == 1
