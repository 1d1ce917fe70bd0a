"""A second backward through a graph after the first freed it, as torch 2.13 runs it: torch
frees the tensors each node saved for its backward, so a second pass runs through nodes that
saved none (``x + 2``, ``x.sum()``, ``x.t()``) and raises, with torch's words, at the first
node that needs a tensor it freed (``x * x``, ``x.exp()``)."""

from __future__ import annotations

import gc as garbage
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcli as gc
from gradcli.engine.tensor import _FREED_GRAPH_ERROR

torch = pytest.importorskip("torch")

_X = np.array([[1.2, 2.3], [3.1, 0.7]])
_C = np.array([[1.5, 2.5], [0.5, 3.0]])


def _constant(m: Any) -> Any:
    return m.tensor(_C, dtype=m.float64)


# each: the module (gradcli's engine or torch) and x, a leaf that requires grad -> y
GRAPHS: dict[str, Callable[[Any, Any], Any]] = {
    # nodes that save no tensor
    "add a number": lambda m, x: x + 2,
    "add itself": lambda m, x: x + x,
    "sub": lambda m, x: x - _constant(m),
    "rsub": lambda m, x: 1 - x,
    "neg": lambda m, x: -x,
    "sum": lambda m, x: x.sum(),
    "sum along a dim": lambda m, x: x.sum(0),
    "mean": lambda m, x: x.mean(),
    "expand": lambda m, x: x[0].expand(3, 2),
    "reshape": lambda m, x: x.reshape(4),
    "view": lambda m, x: x.view(4),
    "transpose": lambda m, x: x.transpose(0, 1),
    "t": lambda m, x: x.t(),
    "T": lambda m, x: x.T,
    "mT": lambda m, x: x.mT,
    "permute": lambda m, x: x.permute(1, 0),
    "movedim": lambda m, x: x.movedim(0, 1),
    "select": lambda m, x: x[0],
    "slice": lambda m, x: x[:, 1:],
    "unsqueeze by None": lambda m, x: x[None],
    "cat": lambda m, x: m.cat([x, x]),
    "stack": lambda m, x: m.stack([x, x]),
    "cumsum": lambda m, x: x.cumsum(0),
    "tril": lambda m, x: x.tril(),
    "diagonal": lambda m, x: x.diagonal(),
    "diag_embed": lambda m, x: m.diag_embed(x),
    "floor": lambda m, x: x.floor(),
    "sign": lambda m, x: x.sign(),
    "deg2rad": lambda m, x: x.deg2rad(),
    "to float32": lambda m, x: x.to(m.float32),
    "remainder by a constant": lambda m, x: x.remainder(_constant(m)),
    "lerp by a number": lambda m, x: m.lerp(x, _constant(m), 0.25),
    "a chain of them": lambda m, x: (x.t() + 1).reshape(4).sum(),
    # nodes that save one
    "mul": lambda m, x: x * x,
    "mul by a number": lambda m, x: x * 2,
    "div by a number": lambda m, x: x / 2,
    "exp": lambda m, x: x.exp(),
    "pow": lambda m, x: x**2,
    "matmul": lambda m, x: x @ x,
    "sigmoid": lambda m, x: x.sigmoid(),
    "sin": lambda m, x: x.sin(),
    "relu": lambda m, x: x.relu(),
    "softmax": lambda m, x: x.softmax(0),
    "index by a list": lambda m, x: x[m.tensor([0, 1, 1])],
    "remainder of two that require grad": lambda m, x: x.remainder(x.detach() + x),
    "lerp by a tensor": lambda m, x: m.lerp(x, _constant(m), _constant(m) / 4),
    "add after a mul": lambda m, x: (x * x) + 2,
}


def _second_backward(m: Any, graph: str) -> tuple[str | None, np.ndarray]:
    """Run backward twice through one graph: the error's text of the second (None: it ran),
    and x.grad after it."""
    x = m.tensor(_X, dtype=m.float64, requires_grad=True)
    y = GRAPHS[graph](m, x)
    v = m.ones(tuple(y.shape), dtype=y.dtype)
    y.backward(v)
    try:
        y.backward(v)
    except RuntimeError as exc:
        return str(exc), np.asarray(x.grad.detach())
    return None, np.asarray(x.grad.detach())


@pytest.mark.parametrize("graph", list(GRAPHS))
def test_a_second_backward_runs_or_raises_as_in_torch(graph):
    error, grad = _second_backward(gc, graph)
    expected_error, expected_grad = _second_backward(torch, graph)
    assert error == expected_error
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-6)


def test_the_error_is_torchs_text():
    error, _ = _second_backward(torch, "mul")
    assert error == _FREED_GRAPH_ERROR


def test_grad_after_backward_runs_through_a_graph_that_saved_nothing():
    """The issue's example: y.backward(v), then torch.autograd.grad(y, x, v)."""
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    y = x + 2
    v = gc.tensor([1.0, 0.5])
    y.backward(v)
    (again,) = gc.grad(y, x, v)
    np.testing.assert_array_equal(again.numpy(), [1.0, 0.5])
    z = x * x
    z.backward(v)
    with pytest.raises(gc.GradError, match="second time"):
        gc.grad(z, x, v)


def _freed_by_backward(retain_graph: bool) -> tuple[bool, str | None]:
    """``loss = sin(x @ w).sum()``, ``x @ w`` printed (its grad_fn read) and not kept: whether
    its array outlived ``loss.backward()`` (Python's cyclic collector off, so that only what
    the pass dropped is gone), and the error of a second backward (None: it ran)."""
    rng = np.random.default_rng(5)
    x = gc.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = gc.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    y = x @ w
    repr(y)
    kept = weakref.ref(y.data)
    loss = y.sin().sum()
    del y
    collecting = garbage.isenabled()
    garbage.disable()
    try:
        loss.backward(retain_graph=retain_graph)
        alive = kept() is not None
    finally:
        if collecting:
            garbage.enable()
    try:
        loss.backward()
    except RuntimeError as exc:
        return alive, str(exc)
    return alive, None


@pytest.mark.parametrize("retain_graph", [False, True])
def test_backward_frees_the_saved_intermediates_at_once(retain_graph):
    """The saved ``x @ w`` goes with the pass, as torch frees it (kept with retain_graph): no
    cycle of a tensor and its grad_fn holds it for the cyclic collector; a second pass then
    raises torch's error (``test_the_error_is_torchs_text``)."""
    expected_error = None if retain_graph else _FREED_GRAPH_ERROR
    assert _freed_by_backward(retain_graph) == (retain_graph, expected_error)
