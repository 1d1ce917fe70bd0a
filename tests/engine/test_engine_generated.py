"""A tape's generated function (engine/generated.py): the step-by-step replay's numbers, bit for
bit; source made of generated identifiers only; intermediates freed after their last reader."""

from __future__ import annotations

import io
import re
import tokenize

import numpy as np
import pytest

import gradcli as gc
from benchmarks.compiled import peak_bytes
from gradcli.engine import compile as compiled
from gradcli.engine import generated
from gradcli.engine.compile import trace
from gradcli.lang import parse_program

PROGRAMS = [
    ("y = x + 2; z = y*y*3; out = mean(z)", {"x": (2, 2)}),
    (
        "z = x @ W + b; out = bce_with_logits(z, t)",
        {"x": (8,), "W": (8, 10), "b": (10,), "t": (10,)},
    ),
    (
        "z = W @ x; out = sum(softmax(z)*log_softmax(z, 0)) + amax(z) + norm(x)",
        {"x": (4,), "W": (3, 4)},
    ),
    ("z = relu(x - 1) + maximum(x, 1) + clamp(x, 0.8, 1.2); out = sum(z[1:3])", {"x": (4,)}),
    ("out = cross_entropy(z, t, reduction='sum') + 1e300 * 0", {"z": (4, 3), "t": (4, 3)}),
    ("m = A @ B; out = sum(reshape(m, 6) * 2) + sum(transpose(A) @ A)", {"A": (2, 3), "B": (3, 3)}),
    (
        "h = tanh(W @ x + b); out = logsumexp(h, 0) + sum(sigmoid(h) * softplus(h))",
        {"W": (5, 3), "x": (3,), "b": (5,)},
    ),
    ("h = sin(x)*1.01 + 0.1; h2 = cos(h)*exp(h) - log1p(h*h); out = sum(h2)", {"x": (6,)}),
]


def _tape(source, shapes, dtype=np.float64):
    program = parse_program(source)
    names = list(shapes)

    def run(*tensors):
        for t in tensors:
            t.requires_grad = True
        out = program.run(dict(zip(names, tensors)))["out"]
        return [out, *gc.grad(out, list(tensors), allow_unused=True)]

    rng = np.random.default_rng(3)
    example = [rng.uniform(0.5, 1.5, s).astype(dtype) for s in shapes.values()]
    return trace(run, *example), rng


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("source, shapes", PROGRAMS, ids=[p[0][:30] for p in PROGRAMS])
def test_the_generated_function_gives_the_replays_numbers_bit_for_bit(source, shapes, dtype):
    tape, rng = _tape(source, shapes, dtype)
    function = tape.function()
    assert function is not None
    for _ in range(3):
        point = [rng.uniform(0.5, 1.5, s).astype(dtype) for s in shapes.values()]
        want = tape.replay(*point)
        got = function(*point)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(g, w)


def test_run_generates_after_some_replays_and_checks_the_inputs_dtypes(monkeypatch):
    tape, rng = _tape(*PROGRAMS[-1])
    point = rng.uniform(0.5, 1.5, 6)
    for _ in range(compiled.GENERATE_AFTER):
        tape.run(point)
    assert "_function" not in tape.__dict__  # a tape replayed a few times never generates
    calls = []
    real = generated.generate
    monkeypatch.setattr(generated, "generate", lambda *a: calls.append(1) or real(*a))
    want = tape.replay(point)
    for _ in range(3):
        for g, w in zip(tape.run(point), want):
            np.testing.assert_array_equal(g, w)
    assert calls == [1]  # generated once, then reused
    # float32 inputs on a float64 tape: the step-by-step replay, whose wrappers round as torch
    single = point.astype(np.float32)
    for g, w in zip(tape.run(single), tape.replay(single)):
        np.testing.assert_array_equal(g, w)


def test_generation_can_be_turned_off(monkeypatch):
    monkeypatch.setenv(generated.ENVIRONMENT, "0")
    tape, rng = _tape(*PROGRAMS[0])
    assert tape.function() is None
    point = rng.uniform(0.5, 1.5, (2, 2))
    for _ in range(compiled.GENERATE_AFTER + 2):
        got = tape.run(point)
    for g, w in zip(got, tape.replay(point)):
        np.testing.assert_array_equal(g, w)


def test_the_source_holds_generated_identifiers_only():
    """Constants, strings, parameters and the program's own names reach the function through
    its globals, never its source: the source has no number, no string, and no name but
    s<N>, f<N> and the keywords of a function definition."""
    source = (
        "os_system = x * 123.456 + 7e300 * 0; import_os = cross_entropy(z, t, reduction='sum'); "
        "eval_me = sum(reshape(os_system, 4)) * 1e-5; out = eval_me + import_os"
    )
    tape, _ = _tape(source, {"x": (2, 2), "z": (4, 3), "t": (4, 3)})
    text, names = generated.source_and_globals(tape)
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    kinds = {tokenize.NUMBER, tokenize.STRING} & {t.type for t in tokens}
    assert not kinds, text
    words = {t.string for t in tokens if t.type == tokenize.NAME}
    assert {"def", "replay", "return", "del"} <= words
    assert all(re.fullmatch(r"[sf]\d+", w) for w in words - {"def", "replay", "return", "del"})
    assert names["__builtins__"] == {}  # the function sees no builtins
    assert any(isinstance(v, np.ndarray) and v.shape == () and v == 123.456 for v in names.values())


def test_the_generated_function_frees_each_intermediate_after_its_last_reader():
    """As the step-by-step replay (test_engine_compile): a twelve-step chain on 50,000
    elements holds its twelve saved inputs of sin and a few more, not all its slots."""
    rng = np.random.default_rng(11)

    def chain(x):
        x.requires_grad = True
        h = x
        for _ in range(12):
            h = gc.sin(h) * 1.01 + 0.1
        return [gc.grad(h.sum(), [x])[0]]

    tape = trace(chain, rng.standard_normal(50_000))
    point = rng.standard_normal(50_000)
    function = tape.function()
    np.testing.assert_array_equal(function(point)[0], tape.replay(point)[0])
    assert peak_bytes(lambda: function(point)) < 20 * point.nbytes


def test_without_numba_a_tape_has_no_fused_function(monkeypatch):
    """The extra ``fast`` is optional: without numba, ``Tape.fused()`` is None and the tape
    replays as before."""
    from gradcli.engine import fused

    monkeypatch.setattr(fused, "kernel", lambda: None)
    tape, rng = _tape(*PROGRAMS[-1])
    assert tape.fused() is None
    point = rng.uniform(0.5, 1.5, 6)
    for g, w in zip(tape.function()(point), tape.replay(point)):
        np.testing.assert_array_equal(g, w)


def test_an_mlps_generated_pass_holds_what_hand_numpy_freeing_as_it_goes_holds():
    """Issue 32: the MLP's pass at most 1.25x the peak of hand numpy that frees each array
    after its last use, and no more than the step-by-step replay's. The replay, in the traced
    order, held the hidden activations beside their gradient (1.4x) while relu's rule read
    its input; it reads relu's output now, which the second weight's gradient reads too, and
    the generated function makes that gradient after the second weight's, which frees them
    (``generated.schedule``)."""
    from benchmarks.compiled import mlp_numpy_freeing, mlp_pass
    from benchmarks.engine import mlp_inputs

    inputs = mlp_inputs(1024)
    arrays = list(inputs.values())
    tape = trace(mlp_pass, *arrays)
    function = tape.function()
    hand = mlp_numpy_freeing(**inputs)
    for got, want, by_hand in zip(function(*arrays), tape.replay(*arrays), hand()):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, by_hand, rtol=1e-10, atol=1e-12)
    generated_peak = peak_bytes(lambda: function(*arrays))
    replay_peak = peak_bytes(lambda: tape.replay(*arrays))
    assert generated_peak <= 1.25 * peak_bytes(hand)
    assert replay_peak <= 1.25 * peak_bytes(hand)
    assert generated_peak <= replay_peak


def test_a_tape_with_its_generated_function_pickles_without_it():
    """A batch's plan is pickled to Dask's workers: the generated function (made by exec)
    stays behind, and the receiving process generates its own. (Dask pickles with cloudpickle:
    a tape's functions include closures, which pickle refuses.)"""
    cloudpickle = pytest.importorskip("cloudpickle")
    tape, rng = _tape(*PROGRAMS[-1])
    assert tape.function() is not None
    copy = cloudpickle.loads(cloudpickle.dumps(tape))
    assert "_function" not in copy.__dict__
    point = rng.uniform(0.5, 1.5, 6)
    for g, w in zip(copy.function()(point), tape.replay(point)):
        np.testing.assert_array_equal(g, w)


def test_steps_moved_towards_their_readers_give_the_same_numbers():
    """``schedule`` holds back large results (an output nothing else reads, a product read
    late): the generated function's numbers are the replay's, bit for bit."""

    def function(x, y):
        x.requires_grad = True
        a = x * 2  # an output, read by nothing else: held to the end
        b = gc.sin(x) * y
        c = gc.exp(-x) + y  # read only by the last step
        out = (b * b).sum() + gc.tanh(x).sum()
        return [a, out, gc.grad(out, [x])[0], (c * out).sum()]

    rng = np.random.default_rng(9)
    shape = (80, 100)
    tape = trace(function, rng.standard_normal(shape), rng.standard_normal(shape))
    order = generated.schedule(tape, generated.SCHEDULED_ELEMENTS)
    assert sorted(order) == list(range(len(tape.steps)))
    assert order != sorted(order)  # something was moved
    point = [rng.standard_normal(shape), rng.standard_normal(shape)]
    for got, want in zip(tape.function()(*point), tape.replay(*point)):
        np.testing.assert_array_equal(got, want)
