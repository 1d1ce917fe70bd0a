"""The values no reverse rule reads, released as the graph is built (``released.let_go``) and
reused in the pass (``Op.vjp_arrays_into``): a graph keeps only what its rules read, as
torch's does, and nothing a user can still reach changes."""

from __future__ import annotations

import gc as collector

import numpy as np
import pytest

import gradcli as gc
from gradcli.engine import graph_hooks, released
from gradcli.engine import tensor as tensor_module
from gradcli.engine.released import LARGE

ROWS, INNER, COLUMNS = 64, 32, LARGE // 64  # a product of LARGE elements


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = gc.tensor(rng.standard_normal((ROWS, INNER)))
    w = gc.tensor(rng.standard_normal((INNER, COLUMNS)), requires_grad=True)
    c = gc.tensor(rng.standard_normal(COLUMNS), requires_grad=True)
    return x, w, c


@pytest.fixture(autouse=True)
def _collected():
    """No hook's entry outlives its test (a graph a node keeps lives until collected), since a
    hook or a saved-tensor hook about keeps every later pass off its rules on arrays."""
    collector.collect()  # nor one of an earlier test's garbage
    yield
    collector.collect()
    assert not graph_hooks.HOOKED and not graph_hooks.PACKED


def _released(tensor):
    return tensor.data.strides == (0,) * tensor.ndim


def _gradients(keep):
    """relu(x @ w + c).sum()'s gradients, the product kept by a name or not."""
    x, w, c = _inputs()
    product = gc.matmul(x, w)
    total = product + c
    if not keep:
        del product
    h = gc.relu(total)
    below = total._inputs[0]
    was_released = _released(below)
    del total, below
    (h * 2.0).sum().backward()
    return was_released, w.grad.numpy(), c.grad.numpy()


def test_a_product_under_an_add_goes_where_nothing_else_holds_it_and_the_gradients_stay():
    released, gw, gc_ = _gradients(keep=False)
    kept, gw_kept, gc_kept = _gradients(keep=True)
    assert released and not kept
    assert gw.tobytes() == gw_kept.tobytes() and gc_.tobytes() == gc_kept.tobytes()


def test_a_released_tensor_keeps_its_shape_and_dtype():
    x, w, c = _inputs()
    total = gc.matmul(x, w) + c
    gc.relu(total)
    below = total._inputs[0]
    assert _released(below)
    assert below.shape == (ROWS, COLUMNS) and below.dtype == np.float64
    assert below.grad_fn.name() == "MmBackward0"
    del below


def test_nothing_goes_where_a_rule_reads_it_or_a_hook_may():
    x, w, c = _inputs()
    scaled = gc.matmul(x, w) * c  # mul's rule reads its operands
    gc.relu(scaled)
    assert not _released(scaled._inputs[0])
    x, w, c = _inputs()
    total = gc.matmul(x, w) + c
    handle = graph_hooks.register_hook(total, lambda grad_inputs, grad_outputs: None)
    gc.relu(total)
    assert not _released(total._inputs[0])
    handle.remove()
    x, w, c = _inputs()
    # (a pack hook that returned relu's output itself would keep it, and its entry, for good)
    with graph_hooks.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        total = gc.matmul(x, w) + c
        gc.relu(total)
    assert not _released(total._inputs[0])


def test_nothing_goes_inside_a_keeping_block():
    x, w, c = _inputs()
    with released.keeping():
        total = gc.matmul(x, w) + c
        gc.relu(total)
    assert not _released(total._inputs[0])
    np.testing.assert_array_equal(total._inputs[0].data, x.numpy() @ w.detach().numpy())


def test_a_second_backward_of_a_retained_graph_gives_the_same_gradients():
    x, w, c = _inputs()
    loss = (gc.relu(gc.matmul(x, w) + c) * 2.0).sum()
    loss.backward(retain_graph=True)
    first = w.grad.numpy().copy()
    w.grad = None
    loss.backward()
    assert w.grad.numpy().tobytes() == first.tobytes()


def test_relu_reuses_its_output_only_where_no_one_holds_it(monkeypatch):
    monkeypatch.setattr(tensor_module, "REUSED", 0)  # (large arrays alone, else)
    x, w, c = _inputs()
    h = gc.relu(gc.matmul(x, w) + c)
    before = h.numpy().copy() if not h.requires_grad else h.detach().numpy().copy()
    (h * 3.0).sum().backward()
    assert h.detach().numpy().tobytes() == before.tobytes()  # held by a name: not written
    held = c.grad.numpy().copy()
    c.grad = None
    (gc.relu(gc.matmul(x, w) + c) * 3.0).sum().backward()  # not held: its array is reused
    assert c.grad.numpy().tobytes() == held.tobytes()


def test_torch_agrees():
    torch = pytest.importorskip("torch")
    x, w, c = _inputs()
    loss = (gc.relu(gc.matmul(x, w) + c) * 2.0).sum()
    loss.backward()
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    tc = torch.tensor(c.detach().numpy(), requires_grad=True)
    (torch.relu(torch.tensor(x.numpy()) @ tw + tc) * 2.0).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(c.grad.numpy(), tc.grad.numpy(), rtol=1e-12)
