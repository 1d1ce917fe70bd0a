"""Runs of element-wise steps fused into one numba kernel (engine/fused.py, the extra ``fast``):
the step-by-step replay's numbers, exactly for arithmetic, within a few units in the last place
where the C library's sin, exp, ... stand for numpy's own loops."""

from __future__ import annotations

import io
import re
import tokenize

import numpy as np
import pytest

import gradcli as gc
from gradcli.engine import fused, generated
from gradcli.engine.compile import trace

numba = pytest.importorskip("numba")


def _chain(steps, body):
    def run(x):
        x.requires_grad = True
        h = x
        for _ in range(steps):
            h = body(h)
        return [h.sum(), gc.grad(h.sum(), [x])[0]]

    return run


ARITHMETIC = lambda h: (h * 0.75 - 0.3) / (h * h + 1.5) + (-h)  # noqa: E731
TRANSCENDENTAL = lambda h: gc.sin(h) * 1.01 + 0.1  # noqa: E731
MIXED = lambda h: gc.tanh(h) * gc.exp(-h * h) + gc.log1p(h * h) - gc.cos(h) / 3  # noqa: E731


def _fused_and_replayed(function, shape, dtype=np.float64):
    rng = np.random.default_rng(5)
    tape = trace(function, rng.uniform(-1, 1, shape).astype(dtype))
    point = rng.uniform(-1, 1, shape).astype(dtype)
    fast = tape.fused()
    assert fast is not None
    return tape, fast(point), tape.replay(point)


@pytest.mark.parametrize("shape", [(4,), (3, 5), (1,)])
def test_fused_arithmetic_is_the_replays_bit_for_bit(shape):
    tape, got, want = _fused_and_replayed(_chain(30, ARITHMETIC), shape)
    assert _runs(tape)  # something was fused
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("body", [TRANSCENDENTAL, MIXED], ids=["sin chain", "mixed"])
def test_fused_transcendentals_round_within_a_few_units_in_the_last_place(body):
    """numba calls the C library's sin, exp, ...; numpy may use its own loops: a value may
    differ in its last places (a 100-step chain's gradient carries a few such roundings)."""
    tape, got, want = _fused_and_replayed(_chain(100, body), (4,))
    assert _runs(tape)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


def test_a_forward_and_backward_chain_fuse_into_one_run_with_few_registers():
    """The sum between the forward and the backward chain is moved after them: one kernel,
    whose registers are reused: a 500-step chain holds the 500 values its backward pass reads
    and a few more, not its 3,000 steps' values."""
    tape = trace(_chain(500, TRANSCENDENTAL), np.linspace(-1, 1, 4))
    (run,) = _runs(tape)
    assert len(run.program[0]) > 2900
    assert run.registers < 510
    source, _ = generated.source_and_globals(tape, fused.calls(tape, fused.kernel()))
    assert source.count("\n") < 10, source


def test_float32_and_short_runs_are_not_fused():
    tape, got, want = _fused_and_replayed(_chain(30, TRANSCENDENTAL), (4,), np.float32)
    assert not _runs(tape)  # the kernel computes float64 only
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    short = trace(lambda x: [gc.sin(x) * 2], np.ones(3))
    assert len(fused.calls(short, fused.kernel())) == len(short.steps)


def test_the_fused_source_holds_generated_identifiers_only():
    tape = trace(_chain(10, lambda h: gc.sin(h) * 123.456 + 7.5), np.ones(4))
    source, names = generated.source_and_globals(tape, fused.calls(tape, fused.kernel()))
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    assert not {tokenize.NUMBER, tokenize.STRING} & {t.type for t in tokens}
    words = {t.string for t in tokens if t.type == tokenize.NAME} - {
        "def",
        "replay",
        "return",
        "del",
    }
    assert all(re.fullmatch(r"[sf]\d+", w) for w in words), source


def _runs(tape):
    return [call for call, _, _ in fused.calls(tape, fused.kernel()) if isinstance(call, fused.Run)]
