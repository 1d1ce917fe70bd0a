"""Engine benchmarks: eager forward + backward with gradcli against numpy written by hand.

Two benchmarks, each run by every implementation that can be imported:

``chain``
    1,000 steps of ``h = sin(h) * 1.01 + 0.1`` on a seeded 4-element float64 vector, then the
    gradient of ``h.sum()`` with respect to the starting vector. Tiny arrays: this measures the
    per-operation overhead of the engine (graph building and the backward walk).
``layer``
    ``z = x @ W + b`` with x 512x1024, W 1024x1024, b 1024, then
    ``binary_cross_entropy_with_logits(z, y)`` (mean) against 0/1 targets, float64, and the
    gradients for W and b (x does not require grad). Large arrays: this measures how close the
    engine gets to the minimal numpy work.

``mlp``
    A two-layer perceptron, 784-512-10 at batch 64: ``cross_entropy(relu(x @ W1 + b1) @ W2 +
    b2, labels)`` (mean) and the gradients of W1, b1, W2 and b2, float64. Mid-sized arrays:
    the matrix products dominate, and what is left is the engine's time beyond numpy's.

Implementations: ``gradcli`` (the eager engine), ``numpy (hand)`` (forward keeping what the
backward needs, backward written out; the baseline of every ratio), and, when importable,
``torch`` (float64, CPU), ``autograd`` (HIPS autograd) and ``jax`` (float64, plain
``jax.value_and_grad``, not jitted). Every implementation returns (loss, gradients...); they must
all agree with the hand-written numpy to ``rtol=1e-10`` before anything is timed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import gradcli as gc

from .harness import (
    FULL,
    QUICK,
    Result,
    add_ratios,
    check_same,
    cpu_times,
    first_calls,
    optional_import,
    quick_skip,
    results_of,
)

TITLE = "eager forward + backward: gradcli vs hand-written numpy, torch, HIPS autograd, jax"

SUITE = "engine"
BASELINE = "numpy (hand)"
SUBJECT = "gradcli"
RTOL = 1e-10

#: The issues' targets for gradcli, as a ratio to hand-written numpy.
TARGETS = {"chain": 2.5, "layer": 1.15, "mlp": 1.2}

#: The issue's target for the eager engine's peak memory of the MLP's forward + backward at
#: batch 4,096, over hand-written numpy's that frees each array after its last use.
MLP_MEMORY_TARGET = 1.25
MLP_MEMORY_BATCH = 4096

#: Printed under the table: the targets and what the issues measured for the others.
STATIC_NOTES = (
    "targets (issue 32): gradcli chain <= 2.5x numpy and mlp <= 1.2x, both ahead of torch "
    "eager (which measured 8.0x and 1.43x there)",
    "                   (issue 15): gradcli layer <= 1.15x numpy (torch measures about 3x there)",
)
#: Filled by ``run``: the static notes, then the memory figures.
NOTES: list[str] = list(STATIC_NOTES)

SEED = 0
CHAIN_STEPS = 1000
CHAIN_SIZE = 4
LAYER_BATCH, LAYER_IN, LAYER_OUT = 512, 1024, 1024

#: A benchmark's implementation: given the inputs, build a function to time that returns
#: (loss, gradient, ...) in a form ``np.asarray`` accepts.
Implementation = Callable[..., Callable[[], Sequence[Any]]]


def _torch() -> Any:
    return optional_import("torch")


def _autograd() -> tuple[Any, Any] | None:
    """(autograd, autograd.numpy), or None when HIPS autograd is not installed."""
    autograd = optional_import("autograd")
    return None if autograd is None else (autograd, optional_import("autograd.numpy"))


def _jax() -> tuple[Any, Any] | None:
    """(jax, jax.numpy) with float64 enabled, or None when jax is not installed."""
    jax = optional_import("jax")
    if jax is None:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax, optional_import("jax.numpy")


# -- chain ---------------------------------------------------------------------------------


def chain_input() -> np.ndarray:
    """The seeded starting vector of the chain."""
    return np.random.default_rng(SEED).standard_normal(CHAIN_SIZE)


def chain_numpy(h0: np.ndarray) -> Callable[[], Sequence[Any]]:
    """Hand-written numpy: the forward keeps each step's input, the backward walks them back."""

    def run() -> tuple[Any, ...]:
        h = h0
        saved = []
        for _ in range(CHAIN_STEPS):
            saved.append(h)
            h = np.sin(h) * 1.01 + 0.1
        loss = h.sum()
        g = np.ones_like(h)
        for h_prev in reversed(saved):
            g = g * 1.01 * np.cos(h_prev)
        return loss, g

    return run


def chain_gradcli(h0: np.ndarray) -> Callable[[], Sequence[Any]]:
    """gradcli's eager engine, written as one would with torch."""

    def run() -> tuple[Any, ...]:
        x = gc.tensor(h0, requires_grad=True)
        h = x
        for _ in range(CHAIN_STEPS):
            h = gc.sin(h) * 1.01 + 0.1
        loss = h.sum()
        loss.backward()
        return loss.numpy(), x.grad.numpy()

    return run


def chain_torch(h0: np.ndarray) -> Callable[[], Sequence[Any]]:
    """torch, float64 on the CPU."""
    torch = _torch()

    def run() -> tuple[Any, ...]:
        x = torch.tensor(h0, dtype=torch.float64, requires_grad=True)
        h = x
        for _ in range(CHAIN_STEPS):
            h = torch.sin(h) * 1.01 + 0.1
        loss = h.sum()
        loss.backward()
        return loss.detach().numpy(), x.grad.numpy()

    return run


def chain_autograd(h0: np.ndarray) -> Callable[[], Sequence[Any]]:
    """HIPS autograd's ``value_and_grad``."""
    autograd, anp = _autograd()

    def forward(h):
        for _ in range(CHAIN_STEPS):
            h = anp.sin(h) * 1.01 + 0.1
        return anp.sum(h)

    value_and_grad = autograd.value_and_grad(forward)
    return lambda: value_and_grad(h0)


def chain_jax(h0: np.ndarray) -> Callable[[], Sequence[Any]]:
    """jax's ``value_and_grad``, not jitted: every operation is dispatched one by one."""
    jax, jnp = _jax()

    def forward(h):
        for _ in range(CHAIN_STEPS):
            h = jnp.sin(h) * 1.01 + 0.1
        return jnp.sum(h)

    value_and_grad = jax.value_and_grad(forward)
    start = jnp.asarray(h0)
    return lambda: jax.block_until_ready(value_and_grad(start))


# -- layer ---------------------------------------------------------------------------------


def layer_inputs() -> dict[str, np.ndarray]:
    """Seeded x, W, b and 0/1 targets y, all float64."""
    rng = np.random.default_rng(SEED)
    return {
        "x": rng.standard_normal((LAYER_BATCH, LAYER_IN)),
        "W": rng.standard_normal((LAYER_IN, LAYER_OUT)) / np.sqrt(LAYER_IN),
        "b": rng.standard_normal(LAYER_OUT) * 0.1,
        "y": (rng.random((LAYER_BATCH, LAYER_OUT)) < 0.5).astype(np.float64),
    }


def layer_numpy(x, W, b, y) -> Callable[[], Sequence[Any]]:
    """Hand-written numpy doing the minimal work, with the numerically stable formulas."""

    def run() -> tuple[Any, ...]:
        z = x @ W + b
        e = np.exp(-np.abs(z))
        loss = np.mean(np.maximum(z, 0.0) - z * y + np.log1p(e))
        p = 1.0 / (1.0 + e)  # sigmoid(|z|); sigmoid(z) = e * p where z < 0
        p = np.where(z >= 0, p, e * p)
        gz = (p - y) / z.size
        return loss, x.T @ gz, gz.sum(0)

    return run


def layer_gradcli(x, W, b, y) -> Callable[[], Sequence[Any]]:
    """gradcli's eager engine, written as one would with torch."""
    xt, yt = gc.tensor(x), gc.tensor(y)
    Wt, bt = gc.tensor(W, requires_grad=True), gc.tensor(b, requires_grad=True)

    def run() -> tuple[Any, ...]:
        Wt.grad = bt.grad = None
        loss = gc.binary_cross_entropy_with_logits(gc.matmul(xt, Wt) + bt, yt)
        loss.backward()
        return loss.numpy(), Wt.grad.numpy(), bt.grad.numpy()

    return run


def layer_torch(x, W, b, y) -> Callable[[], Sequence[Any]]:
    """torch, float64 on the CPU, with ``torch.nn.functional.binary_cross_entropy_with_logits``."""
    torch = _torch()
    F = torch.nn.functional
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    Wt = torch.from_numpy(W.copy()).requires_grad_()
    bt = torch.from_numpy(b.copy()).requires_grad_()

    def run() -> tuple[Any, ...]:
        Wt.grad = bt.grad = None
        loss = F.binary_cross_entropy_with_logits(xt @ Wt + bt, yt)
        loss.backward()
        return loss.detach().numpy(), Wt.grad.numpy(), bt.grad.numpy()

    return run


def _stable_bce_with_logits(xp, z, y):
    """Mean binary cross-entropy on logits, ``max(z, 0) - z*y + log1p(exp(-|z|))``, in ``xp``."""
    return xp.mean(xp.maximum(z, 0.0) - z * y + xp.log1p(xp.exp(-xp.abs(z))))


def layer_autograd(x, W, b, y) -> Callable[[], Sequence[Any]]:
    """HIPS autograd's ``value_and_grad`` over the (W, b) pair."""
    autograd, anp = _autograd()

    def forward(params):
        weight, bias = params
        return _stable_bce_with_logits(anp, anp.dot(x, weight) + bias, y)

    value_and_grad = autograd.value_and_grad(forward)

    def run() -> tuple[Any, ...]:
        loss, (gW, gb) = value_and_grad((W, b))
        return loss, gW, gb

    return run


def layer_jax(x, W, b, y) -> Callable[[], Sequence[Any]]:
    """jax's ``value_and_grad`` over W and b, not jitted."""
    jax, jnp = _jax()
    xj, Wj, bj, yj = (jnp.asarray(a) for a in (x, W, b, y))

    def forward(weight, bias):
        return _stable_bce_with_logits(jnp, xj @ weight + bias, yj)

    value_and_grad = jax.value_and_grad(forward, argnums=(0, 1))

    def run() -> tuple[Any, ...]:
        loss, (gW, gb) = jax.block_until_ready(value_and_grad(Wj, bj))
        return loss, gW, gb

    return run


# -- mlp -----------------------------------------------------------------------------------

MLP_IN, MLP_HIDDEN, MLP_OUT, MLP_BATCH = 784, 512, 10, 64


def mlp_inputs(batch: int = MLP_BATCH) -> dict[str, np.ndarray]:
    """Seeded x, the integer labels y, and the weights W1, b1, W2, b2 (float64)."""
    rng = np.random.default_rng(SEED)
    return {
        "x": rng.standard_normal((batch, MLP_IN)),
        "y": rng.integers(0, MLP_OUT, batch),
        "W1": rng.standard_normal((MLP_IN, MLP_HIDDEN)) / np.sqrt(MLP_IN),
        "b1": rng.standard_normal(MLP_HIDDEN) * 0.1,
        "W2": rng.standard_normal((MLP_HIDDEN, MLP_OUT)) / np.sqrt(MLP_HIDDEN),
        "b2": rng.standard_normal(MLP_OUT) * 0.1,
    }


def mlp_numpy(x, y, W1, b1, W2, b2) -> Callable[[], Sequence[Any]]:
    """Hand-written numpy, written plainly: the forward keeps what the backward reads, the
    backward is the textbook one (softmax minus the one-hot labels)."""
    rows = np.arange(len(y))

    def run() -> tuple[Any, ...]:
        z1 = x @ W1 + b1
        h = np.maximum(z1, 0.0)
        z2 = h @ W2 + b2
        shifted = z2 - z2.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - shifted[rows, y])
        g2 = e / total
        g2[rows, y] -= 1.0
        g2 /= len(y)
        gh = g2 @ W2.T
        g1 = gh * (z1 > 0)
        return loss, x.T @ g1, g1.sum(axis=0), h.T @ g2, g2.sum(axis=0)

    return run


def mlp_numpy_freeing(x, y, W1, b1, W2, b2) -> Callable[[], Sequence[Any]]:
    """Hand-written numpy that keeps only what the backward reads and lets each array go after
    its last use (what the pass needs: the memory row's baseline), with ``mlp_numpy``'s
    results."""
    rows = np.arange(len(y))

    def run() -> tuple[Any, ...]:
        z1 = x @ W1
        z1 += b1
        h = np.maximum(z1, 0.0)
        z2 = h @ W2
        z2 += b2
        shifted = z2 - z2.max(axis=1, keepdims=True)
        del z2
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - shifted[rows, y])
        del shifted
        g2 = e / total
        del e, total
        g2[rows, y] -= 1.0
        g2 /= len(y)
        gW2, gb2 = h.T @ g2, g2.sum(axis=0)
        del h
        gh = g2 @ W2.T
        del g2
        gh *= z1 > 0
        del z1
        return loss, x.T @ gh, gh.sum(axis=0), gW2, gb2

    return run


def mlp_gradcli(x, y, W1, b1, W2, b2) -> Callable[[], Sequence[Any]]:
    """gradcli's eager engine, written as one would with torch."""
    xt, yt = gc.tensor(x), gc.tensor(y)
    weights = [gc.tensor(w, requires_grad=True) for w in (W1, b1, W2, b2)]

    def run() -> tuple[Any, ...]:
        for w in weights:
            w.grad = None
        w1, c1, w2, c2 = weights
        loss = gc.cross_entropy(gc.matmul(gc.relu(gc.matmul(xt, w1) + c1), w2) + c2, yt)
        loss.backward()
        return (loss.numpy(), *(w.grad.numpy() for w in weights))

    return run


def mlp_torch(x, y, W1, b1, W2, b2) -> Callable[[], Sequence[Any]]:
    """torch, float64 on the CPU, with ``torch.nn.functional.cross_entropy``."""
    torch = _torch()
    F = torch.nn.functional
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    weights = [torch.from_numpy(w.copy()).requires_grad_() for w in (W1, b1, W2, b2)]

    def run() -> tuple[Any, ...]:
        for w in weights:
            w.grad = None
        w1, c1, w2, c2 = weights
        loss = F.cross_entropy(torch.relu(xt @ w1 + c1) @ w2 + c2, yt)
        loss.backward()
        return (loss.detach().numpy(), *(w.grad.numpy() for w in weights))

    return run


# -- running -------------------------------------------------------------------------------


#: What ``--quick`` leaves out of every suite: jax (its import, 1.4 s of CPU, its chain
#: without jit, 1.4 s a call, and jax.jit's compilation of the compiled chain, 10 s).
QUICK_WITHOUT_JAX = "the jax rows (jax's import, eager calls and jax.jit's compilations: tens of s)"


def _available(
    implementations: dict[str, Implementation], quick: bool = False
) -> dict[str, Implementation]:
    """Drop the optional implementations whose library is not installed (and jax's with
    ``quick``)."""
    missing = {
        "torch": _torch() is None,
        "autograd": _autograd() is None,
        "jax": quick or _jax() is None,
    }
    return {name: make for name, make in implementations.items() if not missing.get(name)}


#: Each benchmark: its inputs (keyword arguments of its implementations) and implementations.
BENCHMARKS: dict[str, tuple[Callable[[], dict[str, Any]], dict[str, Implementation]]] = {
    "chain": (
        lambda: {"h0": chain_input()},
        {
            BASELINE: chain_numpy,
            SUBJECT: chain_gradcli,
            "torch": chain_torch,
            "autograd": chain_autograd,
            "jax": chain_jax,
        },
    ),
    "layer": (
        layer_inputs,
        {
            BASELINE: layer_numpy,
            SUBJECT: layer_gradcli,
            "torch": layer_torch,
            "autograd": layer_autograd,
            "jax": layer_jax,
        },
    ),
    "mlp": (
        mlp_inputs,
        {BASELINE: mlp_numpy, SUBJECT: mlp_gradcli, "torch": mlp_torch},
    ),
}


def run_benchmark(name: str, quick: bool = False) -> list[Result]:
    """Check that every implementation of benchmark ``name`` agrees, then time each one."""
    make_inputs, implementations = BENCHMARKS[name]
    inputs = make_inputs()
    runs = {impl: make(**inputs) for impl, make in _available(implementations, quick).items()}
    outputs, first = first_calls(runs)
    check_same(f"{SUITE}.{name}", outputs, BASELINE, RTOL)
    times = cpu_times(runs, QUICK if quick else FULL, first)
    return results_of(SUITE, name, times, BASELINE)


def mlp_memory(batch: int = MLP_MEMORY_BATCH) -> list[str]:
    """The eager engine's peak memory of the MLP's forward + backward (tracemalloc, above the
    inputs) over hand-written numpy's that frees as it goes; hand numpy written plainly (which
    keeps its forward's arrays to the end) beside it."""
    from .compiled import peak_bytes  # compiled imports this module

    inputs = mlp_inputs(batch)
    runs = {
        "numpy (hand, freeing)": mlp_numpy_freeing(**inputs),
        BASELINE: mlp_numpy(**inputs),
        SUBJECT: mlp_gradcli(**inputs),
    }
    check_same(f"{SUITE}.mlp memory", {name: fn() for name, fn in runs.items()}, BASELINE, RTOL)
    peaks = {name: peak_bytes(fn) for name, fn in runs.items()}  # each warmed up by the check
    least = peaks["numpy (hand, freeing)"]
    status = "PASS" if peaks[SUBJECT] / least <= MLP_MEMORY_TARGET else "MISS"
    return [
        f"engine.mlp peak memory of forward + backward at batch {batch:,} (tracemalloc, above "
        "the inputs), over hand numpy's that frees each array after its last use",
        *(
            f"  {name:<22} {peak / 2**20:8.1f} MB  = {peak / least:.2f}x"
            for name, peak in peaks.items()
        ),
        f"  target for {SUBJECT} <= {MLP_MEMORY_TARGET:g}x: {status}",
    ]


def run(quick: bool = False) -> list[Result]:
    """Run every engine benchmark; gradcli's ratios are marked PASS/MISS against TARGETS; the
    MLP's peak memory goes to the notes."""
    results = []
    if quick:
        quick_skip(SUITE, QUICK_WITHOUT_JAX)
        quick_skip(SUITE, "the MLP's peak memory (compiled.mlp's measures the eager engine's too)")
    for name in BENCHMARKS:
        results += run_benchmark(name, quick)
    NOTES[:] = [*STATIC_NOTES, *([] if quick else mlp_memory())]
    return add_ratios(results, SUBJECT, TARGETS)
