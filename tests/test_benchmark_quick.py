"""``python -m benchmarks --quick`` stays quick: its timing plan, checked without timing.

The harness's rules for ``--quick`` (``Timing.once_over``, the checking call as the warm-up, a
slow process measured by its first run) are checked on tiny functions; the suites whose rows
are whole processes (start-up, scripts, rejections) are run with fake processes that advance
a fake CPU clock by what the real ones cost on this project's machine (torch's import about
2.4 s, gradcli's start about 0.3 s), so that the CPU time their quick plan would take is
added up in a fraction of a second. No speed is asserted here: the plan is.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchmarks import dask, harness, rejections, script, startup


@pytest.fixture(autouse=True)
def no_collections(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness empties the garbage collector before each turn; here, where the plan is
    checked and not the time, that is left out: a full collection walks every object the
    test process holds, and in the whole suite's process the full start-up plan's took 177 s
    (5.7 s alone)."""
    monkeypatch.setattr(harness.gc, "collect", lambda generation=2: 0)


def _counted(log: list[str], name: str, value: object = None):
    def call():
        log.append(name)
        return value

    return call


def test_full_timing_warms_up_and_times_every_round_as_before():
    log: list[str] = []
    fns = {"a": _counted(log, "a"), "b": _counted(log, "b")}
    times = harness.cpu_times(fns, harness.Timing(rounds=3, round_seconds=0.0), {"a": 9.0})
    # a first call given is not used without once_over: each is warmed up, then 3 rounds
    assert Counter(log) == {"a": 4, "b": 4}
    assert len(times["a"].rounds) == 3 and times["a"].calls == 3


class Clock:
    """A fake CPU clock: ``harness.cpu_seconds`` reads it, fake work advances it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def work(self, log: list[str], name: str, seconds: float, value: object = None):
        def call():
            log.append(name)
            self.now += seconds
            return value

        return call


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(harness, "cpu_seconds", fake)
    return fake


def test_quick_times_a_slow_call_once_and_takes_the_check_as_its_warm_up(clock: Clock):
    log: list[str] = []
    fns = {
        "fast": clock.work(log, "fast", 0.01),
        "slow": clock.work(log, "slow", 2.0),
        "slow process": clock.work(log, "slow process", 2.0),
    }
    _, first = harness.first_calls(fns)
    times = harness.cpu_times(fns, harness.QUICK, first, processes=["slow process"])
    # the check's call is every warm-up; the fast one is timed in 3 rounds (2 calls each, for
    # 0.02 s a round), the slow one in the first round alone, the slow process not again
    assert Counter(log) == {"fast": 1 + 3 * 2, "slow": 1 + 1, "slow process": 1}
    assert times["fast"].rounds == pytest.approx((0.01,) * 3)
    assert times["slow"].rounds == (2.0,) and times["slow process"].rounds == (2.0,)
    assert (times["slow"].low, times["slow"].high) == (2.0, 2.0)  # no spread to print


# -- the process suites' plans --------------------------------------------------------------

#: CPU seconds of each kind of process, as measured on this project's 2-core machine.
COSTS = {"torch": 2.5, "jax": 2.0, "sympy": 0.55, "first run": 1.0, "gradcli": 0.3, "python": 0.1}
VJP_JSON = json.dumps({"values": {"y": [1.0, 21.0, 6.0]}, "grads": {"x": [4.0, 23.0]}})


def _kind(argv: list[str], env: dict | None) -> str:
    """What a command line runs: gradcli (a warm parse cache, or a first run), or python
    importing torch (a script file is a torch script), jax, sympy, or less."""
    line = " ".join(argv)
    if "gradcli" in Path(argv[0]).name:
        cache = Path((env or {}).get("GRADCLI_CACHE_DIR", "none"))
        return "gradcli" if cache.name in ("warm", "warm-run", "cache") else "first run"
    if "torch" in line or argv[-1].endswith(".py"):
        return "torch"
    if "jax" in line:
        return "jax"
    return "sympy" if "sympy" in line else "python"


class Processes:
    """A fake ``harness.command``: each call logs the kind of process it stands for, advances
    the clock by its cost and prints what the real one would."""

    def __init__(self, clock: Clock, outputs) -> None:
        self.clock, self.outputs, self.log = clock, outputs, []

    def __call__(self, argv, env=None, cwd=None, stdout_path=None, exit_code=0):
        argv = [str(a) for a in argv]
        kind = _kind(argv, env)
        cache = (env or {}).get("GRADCLI_CACHE_DIR")

        def run() -> str:
            self.log.append(kind)
            self.clock.now += COSTS[kind] + (0.2 if argv[-1].endswith(".py") else 0.0)
            if cache and "gradcli" in argv[0]:  # the real one stores the parsed program
                Path(cache).mkdir(parents=True, exist_ok=True)
                (Path(cache) / "program-0.json").write_text("{}")
            return self.outputs(argv)

        return run


def _plan(monkeypatch, clock: Clock, suite, outputs, quick: bool = True) -> tuple[Counter, float]:
    """The processes a suite's run starts (quick by default), by kind, and their CPU seconds."""
    processes = Processes(clock, outputs)
    monkeypatch.setattr(suite, "command", processes)
    harness.QUICK_SKIPS.clear()
    suite.run(quick=quick)
    return Counter(processes.log), clock.now


def _startup_output(argv: list[str]) -> str:
    return startup.RUN_OUTPUT if "run" in argv or argv[-1].endswith(".py") else VJP_JSON


def test_quick_start_up_runs_torch_once(monkeypatch, clock: Clock):
    monkeypatch.setattr(startup, "installed", lambda name: True)  # torch and jax, or not
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # the row that compiles gradcli, or not
    kinds, seconds = _plan(monkeypatch, clock, startup, _startup_output)
    # torch's start-up once (the run benchmark's baseline, by its checking run), no jax, no
    # sympy; the cheap processes in 3 rounds, the first run once
    assert kinds["torch"] == 1 and kinds["jax"] == 0
    assert kinds["sympy"] == 0 and kinds["first run"] == 1
    assert seconds < 9, kinds
    assert any("torch and jax scripts" in line for line in harness.QUICK_SKIPS)


def test_the_full_start_up_is_as_it_was(monkeypatch, clock: Clock):
    monkeypatch.setattr(startup, "installed", lambda name: True)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    kinds, _ = _plan(monkeypatch, clock, startup, _startup_output, quick=False)
    # every row checked once (not sympy), warmed up once and timed in 7 rounds
    assert kinds["torch"] == 2 * 9 and kinds["jax"] == 9 and kinds["sympy"] == 8
    assert kinds["first run"] == 2 * 9 and not harness.QUICK_SKIPS


def test_quick_scripts_run_one_script_and_torch_once(monkeypatch, clock: Clock):
    kinds, seconds = _plan(monkeypatch, clock, script, lambda argv: "0 1.5\n")
    # one script, no floors: torch running it, measured by the run that checked its output
    assert kinds["torch"] == 1
    assert seconds < 6, kinds
    assert any("nn training" in line for line in harness.QUICK_SKIPS)


def test_quick_rejections_run_each_refusal_once(monkeypatch, clock: Clock, tmp_path: Path):
    monkeypatch.setattr(rejections, "_run_in_process", lambda folder, quick: [])
    kinds, seconds = _plan(monkeypatch, clock, rejections, lambda argv: "")
    # the seed's vjp (once more first, to write the caches) and each refusal: the run that
    # checks its exit code is its figure
    assert kinds == {"gradcli": 2 + len(rejections._inputs(tmp_path))}
    assert seconds < 5, kinds


def test_quick_leaves_dask_out_and_says_how_to_run_it():
    harness.QUICK_SKIPS.clear()
    assert dask.run(quick=True) == []
    (line,) = harness.QUICK_SKIPS
    assert line.startswith("dask: ") and "`python -m benchmarks dask`" in line


def test_quick_timings_stay_small():
    for timing in (harness.QUICK, harness.PROCESS_QUICK, harness.ONCE):
        assert timing.rounds <= 3 and timing.round_seconds <= 0.02
        assert timing.once_over is not None and timing.once_over <= 0.5
    for timing in (harness.FULL, harness.PROCESS_FULL):  # full mode: every call in rounds
        assert timing.once_over is None and timing.rounds == 7


def test_sys_executable_is_a_python():  # the fakes above tell python from gradcli by argv[0]
    assert "gradcli" not in Path(sys.executable).name
