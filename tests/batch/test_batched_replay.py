"""The passes ``--batch`` replays, specialised once to their inputs' levels (batch/batched.py),
give what ``compile.run_batched`` gives step by step, bit for bit (signs of zeros and NaNs
included), for every command on programs with indexing, reductions, matrix products and
masks; and the specialisation leaves out the steps it says it leaves out."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.batch import plan as batch_plan
from gradcli.batch.batched import slot_dtypes, specialise
from gradcli.batch.passes import Settings
from gradcli.commands.compute import bind
from gradcli.engine.compile import run_batched, trace
from gradcli.lang import parse_program

PROGRAMS = [
    "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1",
    "f = (1 - x0)**2 + 100*(x1 - x0**2)**2",
    "y = tanh(x @ x) * sin(x) / (1 + exp(-x))",
    "y = sum(x[1:] * x[:-1]) ** 3 + x[0]",
    "y = softmax(x, 0) * relu(x - 0.1)",
    "h = x * 2; y = sum(h*h*x) + max(x)",
]


def _step_by_step(step, arrays, size):
    """The pass as ``Pass.replay`` replayed it before: the inputs repeated to every seed row,
    then ``run_batched``."""
    if not step.seeds:
        return run_batched(step.tape, arrays, [True])
    rows = len(step.seeds[0])
    repeated = [np.repeat(a, rows, axis=0) for a in arrays]
    repeated += [np.tile(s, (size,) + (1,) * (s.ndim - 1)) for s in step.seeds]
    outputs = run_batched(step.tape, repeated, [True] * len(repeated))
    return [o.reshape((size, rows) + o.shape[1:]) for o in outputs]


def _identical(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(a, b, equal_nan=True)
        and np.array_equal(np.signbit(a), np.signbit(b))
    )


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_pass_replays_as_run_batched(program):
    rng = np.random.default_rng(3)
    n = 3 if "x0" not in program else 2
    bound = bind(parse_program(program), {"x": rng.standard_normal(n)})
    x = rng.standard_normal((40, n))
    x[3], x[4, 0] = 0.0, -0.0  # zeros of both signs
    x[5, 0] = np.nan
    cases = {
        "grad": {},
        "eval": {},
        "jacobian": {},
        "jvp": {"settings": Settings(tangents={"x": rng.standard_normal(n)})},
        "hvp": {"settings": Settings(vectors={"x": rng.standard_normal(n)})},
        "hessian": {},
        "check": {},
    }
    compared = 0
    for command, options in cases.items():
        try:
            plan = batch_plan.plan(bound, command, {"x": x}, **options)
        except Exception:  # noqa: BLE001 - the command refuses this program (a vector output)
            continue
        for step in plan.passes:
            if step.differenced:
                continue
            with np.errstate(all="ignore"):
                before = _step_by_step(step, [x], len(x))
                now = step.replay([x], [True], len(x), bound)
            assert len(before) == len(now)
            for a, b in zip(before, now):
                assert _identical(a, b), (program, command)
            compared += 1
    assert compared >= 4


def test_repeated_and_identity_steps_are_left_out():
    """x**1, x * 1 and detach give x itself, and a step made twice is made once."""
    from gradcli.ops import library as gc

    def function(x):
        one = gc.Tensor(np.ones(3))
        return [gc.sin(x) + gc.sin(x), (x**1.0) * one, gc.detach(x)]

    example = np.array([0.5, -1.0, 2.0])
    tape = trace(function, example)
    program = specialise(tape, (1,), slot_dtypes(tape, [example]))
    assert len(program.program) < len(tape.steps)
    assert len(program.program) == 2  # one sin, one add
    points = np.random.default_rng(0).standard_normal((6, 3))
    for a, b in zip(run_batched(tape, [points], [True]), program.run([points], 6)):
        assert _identical(a, b)
