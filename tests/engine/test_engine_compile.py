"""Compiled and batched passes give the same numbers as the eager engine (not timings)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import gradcli as gc
from benchmarks.compiled import peak_bytes
from gradcli.engine.compile import NotBatchable, Tape, run_batched, trace
from gradcli.lang import parse_program

PROGRAMS = [
    ("y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1", {"x": (2,)}, "y"),
    ("y = x + 2; z = y*y*3; out = mean(z)", {"x": (2, 2)}, "out"),
    (
        "z = x @ W + b; loss = bce_with_logits(z, t)",
        {"x": (8,), "W": (8, 10), "b": (10,), "t": (10,)},
        "loss",
    ),
    (
        "z = W @ x; l = sum(softmax(z)*log_softmax(z, 0)) + amax(z) + norm(x) + prod(x)",
        {"x": (4,), "W": (3, 4)},
        "l",
    ),
    (
        "z = relu(x - 1) + abs(x - 1) + maximum(x, 1) + clamp(x, 0.8, 1.2); "
        "o = sum(z[1:3]) + sum(stack([x, x]))",
        {"x": (4,)},
        "o",
    ),
    ("l = cross_entropy(z, t)", {"z": (4, 3), "t": (4, 3)}, "l"),
    (
        "m = A @ B; o = sum(reshape(m, 6) * 2) + sum(cat([x, x])) + sum(transpose(A) @ A)",
        {"A": (2, 3), "B": (3, 3), "x": (2,)},
        "o",
    ),
    (
        "h = tanh(W @ x + b); o = logsumexp(h, 0) + sum(sigmoid(h) * softplus(h))",
        {"W": (5, 3), "x": (3,), "b": (5,)},
        "o",
    ),
]


def _pass(program, names, out_name):
    """The program's output and its gradient w.r.t. every input (v = ones for vectors)."""

    def run(*tensors):
        for t in tensors:
            t.requires_grad = True
        out = program.run(dict(zip(names, tensors)))[out_name]
        seed = None if out.numel() == 1 else gc.Tensor(np.ones(out.shape))
        return [out, *gc.grad(out, list(tensors), seed, allow_unused=True)]

    return run


@pytest.mark.parametrize("source, shapes, out_name", PROGRAMS, ids=[p[0][:30] for p in PROGRAMS])
def test_compiled_and_batched_passes_equal_the_eager_engine(source, shapes, out_name):
    program = parse_program(source)
    names = list(shapes)
    rng = np.random.default_rng(7)
    example = [rng.uniform(0.5, 1.5, s) for s in shapes.values()]
    function = _pass(program, names, out_name)
    tape = trace(function, *example)
    points = [rng.uniform(0.5, 1.5, (5, *s)) for s in shapes.values()]
    batched = run_batched(tape, points, [True] * len(points))
    for k in range(5):
        eager = [t.data for t in function(*[gc.Tensor(p[k]) for p in points])]
        replayed = tape.run(*[p[k] for p in points])
        for e, r, b in zip(eager, replayed, batched):
            np.testing.assert_allclose(r, e, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(b[k], e, rtol=1e-12, atol=1e-14)


def test_a_tape_recomputes_data_dependent_masks_at_new_points():
    """relu's mask is a traced step, not a constant of the traced point."""

    def relu_grad(x):
        x.requires_grad = True
        return [gc.grad(gc.relu(x).sum(), [x])[0]]

    tape = trace(relu_grad, np.array([1.0, -1.0]))
    np.testing.assert_array_equal(tape.run(np.array([-1.0, 1.0]))[0], [0.0, 1.0])


def test_only_some_inputs_batched():
    def run(x, w):
        x.requires_grad = True
        return [gc.grad((x * w).sum(), [x])[0]]

    tape = trace(run, np.ones(3), np.ones(3))
    w = np.arange(6.0).reshape(2, 3)
    (grads,) = run_batched(tape, [np.ones(3), w], [False, True])
    np.testing.assert_array_equal(grads, w)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_vectorized_jacobian_equals_the_looped_one(strategy):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((6, 4))

    def f(x, w):
        return gc.tanh(gc.matmul(gc.Tensor(A), x)) * w.sum() + gc.softmax(x)[0]

    inputs = (gc.Tensor(rng.standard_normal(4)), gc.Tensor(rng.standard_normal(2)))
    fast = gc.jacobian(f, inputs, strategy=strategy, vectorize=True)
    slow = gc.jacobian(f, inputs, strategy=strategy)
    for a, b in zip(fast, slow):
        assert a.shape == b.shape
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


def test_an_unbatchable_step_is_reported():
    tape = trace(lambda x: [gc.erf(x)], np.ones(2))
    name, function, args, params, out = tape.steps[0]
    broken = dataclasses.replace(tape, steps=(("unknown", function, args, params, out),))
    with pytest.raises(NotBatchable):
        run_batched(broken, [np.ones((2, 2))], [True])


@pytest.mark.parametrize("batched", [(True, False), (False, True)], ids=["left", "right"])
@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,))])
def test_matmul_with_one_batched_operand(batched, shapes):
    """The single-product rewrites of a batch against a fixed operand equal the plain rule."""
    rng = np.random.default_rng(5)

    def run(a, b):
        a.requires_grad = b.requires_grad = True
        out = gc.matmul(a, b)
        return [out, *gc.grad(gc.tanh(out).sum(), [a, b])]

    tape = trace(run, *[rng.standard_normal(s) for s in shapes])
    arrays = [
        rng.standard_normal((3, *s)) if b else rng.standard_normal(s)
        for s, b in zip(shapes, batched)
    ]
    results = run_batched(tape, arrays, list(batched))
    for k in range(3):
        point = [gc.Tensor(a[k] if b else a) for a, b in zip(arrays, batched)]
        for got, want in zip(results, run(*point)):
            np.testing.assert_allclose(got[k], want.data, rtol=1e-12, atol=1e-14)


def _long_chain(x: gc.Tensor) -> list[gc.Tensor]:
    """Twelve steps of the engine suite's chain on x, and the reverse pass."""
    x.requires_grad = True
    h = x
    for _ in range(12):
        h = gc.sin(h) * 1.01 + 0.1
    return [gc.grad(h.sum(), [x])[0]]


@pytest.mark.parametrize("batched", [False, True], ids=["run", "run_batched"])
def test_a_replay_frees_each_large_intermediate_after_its_last_step(batched):
    """A tape's replay holds what the rest of the pass needs, not every intermediate: the
    twelve inputs of sin that the reverse pass reads, and a few more (a step's operands and
    result); the replay that held every slot until it returned peaked at 68."""
    rng = np.random.default_rng(11)
    example = rng.standard_normal(50_000)
    tape = trace(_long_chain, example)
    point = rng.standard_normal((2, 50_000)) if batched else rng.standard_normal(50_000)
    if batched:
        replay = lambda: run_batched(tape, [point], [True])  # noqa: E731
        want = np.stack([_long_chain(gc.Tensor(p))[0].data for p in point])
    else:
        replay = lambda: tape.run(point)  # noqa: E731
        want = _long_chain(gc.Tensor(point))[0].data
    np.testing.assert_allclose(replay()[0], want, rtol=1e-12)
    replay()  # lazily built programs are not counted below
    assert peak_bytes(replay) < 20 * point.nbytes


def test_a_traced_tape_has_every_field_as_the_dataclass_makes_it():
    """``_simplify`` fills a Tape's dict without its ``__init__``: every field, and the same
    tape as ``Tape(...)`` of those fields."""
    tape = trace(lambda v: [gc.tanh(v) * 2.0], np.arange(3.0))
    fields = {f.name: getattr(tape, f.name) for f in dataclasses.fields(Tape)}
    assert set(fields) == set(tape.__dict__)
    assert Tape(**fields) == tape


def _same_bits(replayed, eager) -> None:
    np.testing.assert_array_equal(replayed, eager)  # nan where nan
    np.testing.assert_array_equal(np.signbit(replayed), np.signbit(eager))
    assert replayed.dtype == eager.dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("exponent", [2.0, 3.0, -1.5])
def test_a_traced_power_of_a_constant_replays_the_eager_numbers(dtype, exponent):
    """Under a trace, pow's derivative makes b - 1 as a constant and a ** 1 as a itself:
    forward mode and a second derivative replay what the eager engine computes (its rule
    with the masks of a zero exponent), at zeros of both signs, infinities and nan too."""
    values = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], dtype)

    def second(x):
        x.requires_grad = True
        (g,) = gc.grad((x**exponent).sum(), [x], create_graph=True)
        return [g, *gc.grad(g.sum(), [x])]

    def forward(x):
        return list(gc.jvp(lambda v: v**exponent, (x,), (gc.Tensor(np.ones_like(values)),)))

    for function in (second, forward):
        tape = trace(function, values)
        shifted = values[::-1].copy()
        with np.errstate(all="ignore"):
            eager = [t.data for t in function(gc.Tensor(shifted))]
            replayed = tape.run(shifted)
        for r, e in zip(replayed, eager):
            _same_bits(r, e)
