"""The batch plan runs the program once, in its first traced pass (``plan._traced_once``),
and its results are those of the run-then-trace path (``plan._run_then_traced``) bit for
bit; where the first pass does not fit the output (a Jacobian wanted in reverse mode) or
anything is refused, the long path says it as ever, the runs' warnings as they were."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.base.errors import GradcliError
from gradcli.batch import plan as batch_plan
from gradcli.batch.passes import Settings
from gradcli.commands.compute import Bound, bind
from gradcli.lang import parse_program

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"  # 2 inputs, 3 outputs: forward mode
ROSENBROCK = "f = (1 - x0)**2 + 100*(x1 - x0**2)**2"
WIDE = "f = x0 * x1 + sin(x0)"  # 2 inputs, 1 output: a Jacobian in reverse mode
CASES = [
    (EXAMPLE2, "jacobian", {}),
    (EXAMPLE2, "jvp", {"settings": Settings(tangents={"x": np.array([1.0, 0.5])})}),
    (EXAMPLE2, "vjp", {"v": np.array([1.0, -1.0, 2.0])}),
    (ROSENBROCK, "grad", {}),
    (ROSENBROCK, "hvp", {"settings": Settings(vectors={"x": np.array([0.5, -2.0])})}),
    (ROSENBROCK, "hessian", {}),
    (WIDE, "jacobian", {}),
    (EXAMPLE2, "check", {}),
]


def _bound(program: str) -> Bound:
    return bind(parse_program(program), {"x": np.array([1.0, 2.0])})


def _runs(monkeypatch) -> list[int]:
    calls = [0]
    run = Bound.run

    def counted(self, leaves):
        calls[0] += 1
        return run(self, leaves)

    monkeypatch.setattr(Bound, "run", counted)
    return calls


@pytest.mark.parametrize(("program", "command", "options"), CASES)
def test_the_plan_equals_the_run_then_trace_path_bit_for_bit(program, command, options):
    points = {"x": np.random.default_rng(3).standard_normal((7, 2))}
    made = batch_plan.plan(_bound(program), command, points, **options)
    long = _bound(program)
    batching = batch_plan.entry(command).batching()
    settings = options.get("settings") or Settings()
    steps, layout, output = batch_plan._run_then_traced(
        long, command, batching, None, options.get("v"), None, settings
    )
    assert (layout.output, layout.shape, layout.forward) == (
        made.layout.output,
        made.layout.shape,
        made.layout.forward,
    )
    ours = made.replay(points)
    theirs = batch_plan.Plan(
        command, output.name, ["x"], {}, made.dtypes, made.dtype, steps, layout, made.chunk
    ).replay(points)
    assert ours.keys() == theirs.keys()
    for section in ours:
        for name in ours[section]:
            np.testing.assert_array_equal(ours[section][name], theirs[section][name])


@pytest.mark.parametrize("command", ["jacobian", "jvp", "hessian", "hvp", "grad"])
def test_the_program_runs_once_where_the_first_pass_fits(monkeypatch, command):
    program = EXAMPLE2 if command in ("jacobian", "jvp") else ROSENBROCK
    options = dict(next(o for p, c, o in CASES if c == command and p == program))
    bound = _bound(program)
    calls = _runs(monkeypatch)
    batch_plan.plan(bound, command, {"x": np.zeros((3, 2))}, **options)
    assert calls[0] == 1


def test_a_refusal_is_the_long_paths_and_the_warnings_are_kept(monkeypatch):
    def negative() -> Bound:  # log(-1): a warning; a non-scalar output: hvp refuses
        return bind(parse_program("y = log(x) * 1"), {"x": np.array([-1.0, 2.0])})

    bound = negative()
    with pytest.raises(GradcliError, match="hvp needs a scalar output"):
        batch_plan.plan(
            bound, "hvp", {"x": np.ones((2, 2))}, settings=Settings(vectors={"x": np.ones(2)})
        )
    long = negative()
    with pytest.raises(GradcliError, match="hvp needs a scalar output"):
        batch_plan._run_then_traced(
            long,
            "hvp",
            batch_plan.entry("hvp").batching(),
            None,
            None,
            None,
            Settings(vectors={"x": np.ones(2)}),
        )
    assert bound.messages() == long.messages() and bound.messages()
