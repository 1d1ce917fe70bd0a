"""Compiled-pass benchmarks: a computation traced once (``engine.compile.trace``), then replayed.

Two benchmarks, each checked against numpy written by hand before anything is timed:

``chain``
    The engine suite's chain, ``h = sin(h) * 1.01 + 0.1`` 1,000 times on a seeded 4-element
    float64 vector, then the gradient of ``sum(h)``, written as a gradcli *program*
    (``h1 = sin(h0)*1.01 + 0.1`` ... ``h1000 = ...``; ``out = sum(h1000)``) parsed with
    ``gradcli.lang.parse_program``. ``gradcli compiled`` is ``Tape.run`` of one trace of
    ``program.run`` + ``gc.grad(out, [h0])`` (its generated function, built before the timing:
    ``Tape.function``); ``gradcli compiled (fused)``, where numba is installed (the extra
    ``fast``), is ``Tape.fused()``, its element-wise runs fused into one kernel; ``gradcli
    eager`` runs the program and the backward pass on the engine every call. Anchors: the
    engine suite's hand-written numpy (the baseline), torch and HIPS autograd.
``layer``
    The engine suite's layer, ``binary_cross_entropy_with_logits(x @ W + b, y)`` (mean) with x
    512x1024, W 1024x1024, and the gradients for W and b, traced once with x, W, b and y all as
    inputs of the tape (so nothing about the data is folded into it). Anchors: hand-written
    numpy (the baseline), the eager engine and torch.

jax (when importable) is the compiled anchor of both: ``jax.jit`` of ``jax.value_and_grad``
(float64; the chain's 1,000 steps unrolled into one XLA program, the layer with x, W, b and y
all as arguments of the compiled function), each call ending with ``jax.block_until_ready``;
the compilation happens in the first call, which is never timed (its cost is printed beside
the trace's). Without jax there is no jax row.

Memory: tracemalloc's peak (numpy reports its buffers to tracemalloc) above what was allocated
before, for the layer's forward pass alone (the graph kept, as before a backward) and for the
forward and backward passes, on the eager engine; hand-written numpy and the compiled tapes
(a forward-only tape, and the forward + backward tape) are measured the same way as anchors.
And the peak of the engine suite's MLP (784-512-10) forward + backward at batch 4,096, eager
and compiled (the generated function, and the step-by-step replay), over hand-written numpy's
and over hand-written numpy that frees each array after its last use (``del``, the relu's
gradient masked in place): the arrays the pass needs.
"""

from __future__ import annotations

import gc as garbage
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import gradcli as gc
from gradcli.engine.compile import trace
from gradcli.lang import ParsedProgram, parse_program

from . import engine
from .harness import (
    FULL,
    QUICK,
    Result,
    add_ratios,
    check_same,
    cpu_times,
    first_calls,
    quick_skip,
    results_of,
)

TITLE = "compiled passes (trace once, Tape.run): 1,000-step program chain and 512x1024 layer"

SUITE = "compiled"
BASELINE = engine.BASELINE  # "numpy (hand)"
SUBJECT = "gradcli compiled"
JAX_JIT = "jax (jit)"
EAGER = "gradcli eager"
FUSED = "gradcli compiled (fused)"
STEPWISE = "gradcli compiled (step by step)"
FREEING = "numpy (hand, freeing)"
RTOL = 1e-10

#: The issue's targets for the compiled tapes, as a ratio to hand-written numpy.
TARGETS = {"chain": 1.0, "layer": 1.1}
#: Issue 32's target for the fused chain (the extra ``fast``).
FUSED_TARGETS = {"chain": 0.5}
#: The issue's target for the eager engine's memory: peak of forward + backward over forward.
MEMORY_TARGET = 2.0

#: The issue's target for the MLP's peak memory, eager and compiled, over hand numpy's.
MLP_MEMORY_TARGET = 1.25
MLP_MEMORY_BATCH = 4096

STATIC_NOTES = (
    "targets (issues 15, 32): compiled chain <= 1.0x numpy (hand), fused <= 0.5x; compiled "
    "layer <= 1.1x; eager layer peak memory (forward + backward) <= 2x the forward alone",
    f"target (issue 32): MLP peak memory at batch {MLP_MEMORY_BATCH:,}, eager and compiled, "
    f"<= {MLP_MEMORY_TARGET:g}x hand numpy's that frees as it goes",
)
#: Filled by ``run``: the static notes, then the memory figures and the one-off costs.
NOTES: list[str] = list(STATIC_NOTES)


# -- chain ---------------------------------------------------------------------------------


def chain_source(steps: int) -> str:
    """The chain as a program: ``h1 = sin(h0)*1.01 + 0.1`` ... ``out = sum(h<steps>)``."""
    lines = [f"h{i + 1} = sin(h{i})*1.01 + 0.1" for i in range(steps)]
    return "\n".join([*lines, f"out = sum(h{steps})"])


def program_pass(program: ParsedProgram) -> Callable[[gc.Tensor], list[gc.Tensor]]:
    """``h0 -> [out, d out / d h0]`` through ``program.run``, to be traced."""

    def one_pass(h0: gc.Tensor) -> list[gc.Tensor]:
        h0.requires_grad = True
        out = program.run({"h0": h0})["out"]
        (gradient,) = gc.grad(out, [h0])
        return [out, gradient]

    return one_pass


def chain_eager(program: ParsedProgram, h0: np.ndarray) -> Callable[[], tuple[Any, ...]]:
    """The program and its backward pass on the eager engine, every call."""

    def run() -> tuple[Any, ...]:
        x = gc.tensor(h0, requires_grad=True)
        out = program.run({"h0": x})["out"]
        out.backward()
        return out.numpy(), x.grad.numpy()

    return run


# -- layer ---------------------------------------------------------------------------------


def layer_pass(x: gc.Tensor, W: gc.Tensor, b: gc.Tensor, y: gc.Tensor) -> list[gc.Tensor]:
    """``[loss, dW, db]`` of the layer, to be traced (x, W, b and y are all tape inputs)."""
    W.requires_grad = b.requires_grad = True
    loss = gc.binary_cross_entropy_with_logits(gc.matmul(x, W) + b, y)
    return [loss, *gc.grad(loss, [W, b])]


def layer_forward(x: gc.Tensor, W: gc.Tensor, b: gc.Tensor, y: gc.Tensor) -> list[gc.Tensor]:
    """The layer's loss alone, to be traced into a forward-only tape."""
    return [gc.binary_cross_entropy_with_logits(gc.matmul(x, W) + b, y)]


def chain_jax_jit(h0: np.ndarray) -> Callable[[], Any]:
    """``jax.jit`` of ``jax.value_and_grad`` of the chain (jax's own trace once, then replay)."""
    jax, jnp = engine._jax()

    def forward(h: Any) -> Any:
        for _ in range(engine.CHAIN_STEPS):
            h = jnp.sin(h) * 1.01 + 0.1
        return jnp.sum(h)

    compiled = jax.jit(jax.value_and_grad(forward))
    start = jnp.asarray(h0)
    return lambda: jax.block_until_ready(compiled(start))


def layer_jax_jit(x, W, b, y) -> Callable[[], Any]:
    """``jax.jit`` of ``jax.value_and_grad`` of the layer over W and b, x and y arguments too."""
    jax, jnp = engine._jax()

    def forward(weight: Any, bias: Any, inputs: Any, targets: Any) -> Any:
        return engine._stable_bce_with_logits(jnp, inputs @ weight + bias, targets)

    compiled = jax.jit(jax.value_and_grad(forward, argnums=(0, 1)))
    arrays = [jnp.asarray(a) for a in (W, b, x, y)]

    def run() -> tuple[Any, ...]:
        loss, (gW, gb) = jax.block_until_ready(compiled(*arrays))
        return loss, gW, gb

    return run


def _with_jax(
    runs: dict[str, Callable[[], Any]],
    make: Callable[..., Callable[[], Any]],
    *inputs: Any,
    quick: bool = False,
) -> list[str]:
    """Add the jax row (when jax is importable, and not with ``quick``), its first call (the
    compilation) made here and untimed; the note of what that first call cost."""
    if quick or engine._jax() is None:
        return []
    run = make(*inputs)
    _, seconds = _timed(run)
    runs[JAX_JIT] = run
    return [f"jax.jit's first call (tracing and XLA compilation) {seconds * 1e3:.0f} ms"]


def layer_numpy_forward(x, W, b, y) -> Callable[[], Any]:
    """Hand-written numpy's forward pass, keeping what its backward needs (z and e)."""

    def run() -> tuple[Any, ...]:
        z = x @ W + b
        e = np.exp(-np.abs(z))
        return np.mean(np.maximum(z, 0.0) - z * y + np.log1p(e)), z, e

    return run


def peak_bytes(fn: Callable[[], Any]) -> int:
    """tracemalloc's peak while ``fn()`` runs (its result kept), above the memory before it."""
    garbage.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        tracemalloc.stop()
    return peak - before


def layer_memory(inputs: dict[str, np.ndarray]) -> list[str]:
    """Peak memory of forward alone vs forward + backward: eager engine, hand numpy, tapes."""
    x, W, b, y = (inputs[k] for k in ("x", "W", "b", "y"))
    xt, yt = gc.tensor(x), gc.tensor(y)
    Wt, bt = gc.tensor(W, requires_grad=True), gc.tensor(b, requires_grad=True)

    def eager_forward():
        return gc.binary_cross_entropy_with_logits(gc.matmul(xt, Wt) + bt, yt)  # graph kept

    def eager_both():
        Wt.grad = bt.grad = None
        loss = eager_forward()
        loss.backward()
        return loss, Wt.grad, bt.grad

    forward_tape = trace(layer_forward, x, W, b, y)
    full_tape = trace(layer_pass, x, W, b, y)
    pairs = {
        EAGER: (eager_forward, eager_both),
        BASELINE: (layer_numpy_forward(x, W, b, y), engine.layer_numpy(x, W, b, y)),
        SUBJECT: (lambda: forward_tape.run(x, W, b, y), lambda: full_tape.run(x, W, b, y)),
    }
    lines = [
        "compiled.layer peak memory (tracemalloc, above the inputs): forward -> forward + backward"
    ]
    for name, (forward, both) in pairs.items():
        forward()
        both()  # warm-up: caches and lazily built programs are not counted below
        f, fb = peak_bytes(forward), peak_bytes(both)
        line = f"  {name:<18} {f / 2**20:8.1f} MB -> {fb / 2**20:8.1f} MB  = {fb / f:.2f}x"
        if name == EAGER:
            status = "PASS" if fb / f <= MEMORY_TARGET else "MISS"
            line += f"   target <= {MEMORY_TARGET:g}x  {status}"
        lines.append(line)
    return lines


def mlp_pass(x, y, W1, b1, W2, b2) -> list[gc.Tensor]:
    """``[loss, dW1, db1, dW2, db2]`` of the engine suite's MLP, to be traced (all inputs)."""
    weights = [W1, b1, W2, b2]
    for w in weights:
        w.requires_grad = True
    loss = gc.cross_entropy(gc.matmul(gc.relu(gc.matmul(x, W1) + b1), W2) + b2, y)
    return [loss, *gc.grad(loss, weights)]


def mlp_numpy_freeing(x, y, W1, b1, W2, b2) -> Callable[[], tuple[Any, ...]]:
    """Hand-written numpy that holds what the pass needs: each array deleted after its last
    use, the second layer's gradients before the hidden one's, relu's gradient masked in
    place (by the activation, as torch's relu saves it)."""
    rows = np.arange(len(y))

    def run() -> tuple[Any, ...]:
        z1 = x @ W1 + b1
        h = np.maximum(z1, 0.0)
        del z1
        z2 = h @ W2 + b2
        shifted = z2 - z2.max(axis=1, keepdims=True)
        del z2
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - shifted[rows, y])
        del shifted
        g2 = e / total
        del e
        g2[rows, y] -= 1.0
        g2 /= len(y)
        dW2, db2 = h.T @ g2, g2.sum(axis=0)
        gh = g2 @ W2.T
        del g2
        gh *= h > 0
        del h
        return loss, x.T @ gh, gh.sum(axis=0), dW2, db2

    return run


def mlp_memory(batch: int = MLP_MEMORY_BATCH) -> list[str]:
    """Peak memory of the MLP's forward + backward, eager and compiled, over hand numpy's and
    over hand numpy's that frees as it goes (the target's measure)."""
    inputs = engine.mlp_inputs(batch)
    arrays = list(inputs.values())
    tape = trace(mlp_pass, *arrays)
    tape.function()  # tape.run calls it from now on
    runs = {
        BASELINE: engine.mlp_numpy(**inputs),
        FREEING: mlp_numpy_freeing(**inputs),
        EAGER: engine.mlp_gradcli(**inputs),
        SUBJECT: lambda: tape.run(*arrays),
        STEPWISE: lambda: tape.replay(*arrays),
    }
    check_same(f"{SUITE}.mlp", {name: fn() for name, fn in runs.items()}, BASELINE, RTOL)
    peaks = {name: peak_bytes(fn) for name, fn in runs.items()}  # each warmed up by the check
    lines = [
        f"compiled.mlp peak memory of forward + backward at batch {batch:,} (tracemalloc, "
        f"above the inputs), over hand numpy's and over {FREEING}'s"
    ]
    for name, peak in peaks.items():
        ratio = peak / peaks[FREEING]
        line = (
            f"  {name:<31} {peak / 2**20:8.1f} MB  = {peak / peaks[BASELINE]:.2f}x, "
            f"{ratio:.2f}x freeing"
        )
        if name not in (BASELINE, FREEING):
            status = "PASS" if ratio <= MLP_MEMORY_TARGET else "MISS"
            line += f"   target <= {MLP_MEMORY_TARGET:g}x  {status}"
        lines.append(line)
    return lines


# -- running -------------------------------------------------------------------------------


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def run_chain(quick: bool) -> tuple[list[Result], list[str]]:
    """Parse and trace the chain program once, check every implementation, time them."""
    h0 = engine.chain_input()
    program, parse_seconds = _timed(lambda: parse_program(chain_source(engine.CHAIN_STEPS)))
    tape, trace_seconds = _timed(lambda: trace(program_pass(program), h0))
    _, generate_seconds = _timed(tape.function)  # tape.run calls it from now on
    fused, fuse_seconds = _timed(tape.fused)
    runs = {
        BASELINE: engine.chain_numpy(h0),
        SUBJECT: lambda: tape.run(h0),
        STEPWISE: lambda: tape.replay(h0),  # Tape.run before the generated functions
        EAGER: chain_eager(program, h0),
    }
    if fused is not None:
        _, first_seconds = _timed(lambda: fused(h0))  # numba compiles (or loads) its kernel
        fuse_seconds += first_seconds
        runs[FUSED] = lambda: fused(h0)
    if engine._torch() is not None:
        runs["torch"] = engine.chain_torch(h0)
    if engine._autograd() is not None:
        runs["autograd"] = engine.chain_autograd(h0)
    compiling = _with_jax(runs, chain_jax_jit, h0, quick=quick)
    outputs, first = first_calls(runs)
    check_same(f"{SUITE}.chain", outputs, BASELINE, RTOL)
    times = cpu_times(runs, QUICK if quick else FULL, first)
    results = results_of(SUITE, "chain", times, BASELINE)
    replay = times[SUBJECT].median
    notes = [
        f"compiled.chain one-off costs: parse_program {parse_seconds * 1e3:.0f} ms "
        f"(= {parse_seconds / replay:.0f} replays), trace {trace_seconds * 1e3:.0f} ms "
        f"(= {trace_seconds / replay:.0f} replays); the tape has {len(tape.steps)} steps "
        f"(hand numpy makes {6 * engine.CHAIN_STEPS} numpy calls); generating its function "
        f"{generate_seconds * 1e3:.0f} ms"
        + (
            f", fusing it {fuse_seconds * 1e3:.0f} ms (numba's import and kernel included)"
            if fused is not None
            else "; numba is not installed: no fused row (pip install gradcli[fast])"
        )
    ]
    return results, notes + [f"compiled.chain {line}" for line in compiling]


def run_layer(quick: bool) -> tuple[list[Result], list[str]]:
    """Trace the layer once, check every implementation, time them, measure memory."""
    inputs = engine.layer_inputs()
    x, W, b, y = (inputs[k] for k in ("x", "W", "b", "y"))
    tape, trace_seconds = _timed(lambda: trace(layer_pass, x, W, b, y))
    tape.function()  # tape.run calls it from now on
    runs = {
        BASELINE: engine.layer_numpy(x, W, b, y),
        SUBJECT: lambda: tape.run(x, W, b, y),
        EAGER: engine.layer_gradcli(x, W, b, y),
    }
    if engine._torch() is not None:
        runs["torch"] = engine.layer_torch(x, W, b, y)
    compiling = _with_jax(runs, layer_jax_jit, x, W, b, y, quick=quick)
    outputs, first = first_calls(runs)
    check_same(f"{SUITE}.layer", outputs, BASELINE, RTOL)
    times = cpu_times(runs, QUICK if quick else FULL, first)
    results = results_of(SUITE, "layer", times, BASELINE)
    notes = [
        f"compiled.layer one-off cost: trace {trace_seconds * 1e3:.0f} ms "
        f"(= {trace_seconds / times[SUBJECT].median:.1f} replays); the tape has {len(tape.steps)} "
        f"steps: {', '.join(step[0] for step in tape.steps)}"
    ]
    notes += [f"compiled.layer {line}" for line in compiling]
    return results, notes + layer_memory(inputs)


def run(quick: bool = False) -> list[Result]:
    """Both benchmarks; the compiled tapes' ratios are marked PASS/MISS against TARGETS."""
    if quick:
        quick_skip(SUITE, engine.QUICK_WITHOUT_JAX)
    chain_results, chain_notes = run_chain(quick)
    layer_results, layer_notes = run_layer(quick)
    NOTES[:] = [*STATIC_NOTES, *chain_notes, *layer_notes, *mlp_memory()]
    results = add_ratios(chain_results + layer_results, SUBJECT, TARGETS)
    return add_ratios(results, FUSED, FUSED_TARGETS)
