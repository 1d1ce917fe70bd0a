"""The PyTorch tutorials' two-layer network ("Learning PyTorch with Examples": N, D_in, H,
D_out = 64, 1000, 100, 10; ``nn.Sequential(Linear, ReLU, Linear)``, ``MSELoss(reduction=
'sum')``, ``optim.SGD(lr=1e-4)``) trained 200 steps in float32 from ``torch.manual_seed(0)``'s
data and weights, compared with torch 2.13 step by step.

The data and the initial weights are torch's bit for bit and SGD's update is torch's, but
the matrix products sum in another order than torch's MKL kernels, so the losses agree to
float32 rounding (about 1e-6 relative), not to the last bit.
"""

from __future__ import annotations

import functools
import types

import numpy as np
import pytest

import gradcli.engine as E
from gradcli import nn, optim
from gradcli.engine.tensor import default_dtype

STEPS = 200


def _train(torch, torch_nn, torch_optim):
    torch.manual_seed(0)
    n, d_in, hidden, d_out = 64, 1000, 100, 10
    x = torch.randn(n, d_in)
    y = torch.randn(n, d_out)
    model = torch_nn.Sequential(
        torch_nn.Linear(d_in, hidden), torch_nn.ReLU(), torch_nn.Linear(hidden, d_out)
    )
    loss_fn = torch_nn.MSELoss(reduction="sum")
    optimizer = torch_optim.SGD(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(STEPS):
        loss = loss_fn(model(x), y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses


@functools.cache  # one training serves both tests
def _ours():
    engine = types.SimpleNamespace(
        manual_seed=E.manual_seed, randn=lambda *shape: E.randn(*shape, dtype=np.float32)
    )
    with default_dtype(np.float32):
        return tuple(_train(engine, nn, optim))


def test_the_tutorials_two_layer_network_trains_as_in_torch():
    torch = pytest.importorskip("torch")
    ours = _ours()
    theirs = _train(torch, torch.nn, torch.optim)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    assert theirs[-1] < theirs[0] / 100  # it learned: the comparison is not of constants


def test_the_first_losses_are_torchs_without_torch():
    losses = _ours()
    # torch 2.13's losses at steps 0, 10 and 99
    np.testing.assert_allclose(
        [losses[0], losses[10], losses[99]],
        [628.283935546875, 345.3865661621094, 3.5698509216308594],
        rtol=1e-5,
    )
