"""The PyTorch tutorials' two-layer network ("Learning PyTorch with Examples": N, D_in, H,
D_out = 64, 1000, 100, 10; ``nn.Sequential(Linear, ReLU, Linear)``, ``MSELoss(reduction=
'sum')``, ``optim.SGD(lr=1e-4)``) trained 200 steps in float32 from ``torch.manual_seed(0)``'s
data and weights, compared with torch 2.13 step by step.

The data and the initial weights are torch's bit for bit and SGD's update is torch's, but
the matrix products sum in another order than torch's MKL kernels, so the losses agree to
float32 rounding (about 1e-6 relative), not to the last bit. The CIFAR-10 tutorial's
convolutional network is compared the same way over five SGD steps with momentum.
"""

from __future__ import annotations

import functools
import types

import numpy as np
import pytest

import gradcli.ops.library as E
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


def _cifar_net(torch, torch_nn, torch_optim, functional, labels):
    """The CIFAR-10 tutorial's network (two Conv2d and MaxPool2d, three Linear), five SGD
    steps with momentum on one batch of 4 random images: its losses."""

    class Net(torch_nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch_nn.Conv2d(3, 6, 5)
            self.pool = torch_nn.MaxPool2d(2, 2)
            self.conv2 = torch_nn.Conv2d(6, 16, 5)
            self.fc1 = torch_nn.Linear(16 * 5 * 5, 120)
            self.fc2 = torch_nn.Linear(120, 84)
            self.fc3 = torch_nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(functional.relu(self.conv1(x)))
            x = self.pool(functional.relu(self.conv2(x)))
            x = x.flatten(1)
            x = functional.relu(self.fc1(x))
            x = functional.relu(self.fc2(x))
            return self.fc3(x)

    torch.manual_seed(0)
    net = Net()
    criterion = torch_nn.CrossEntropyLoss()
    optimizer = torch_optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(4, 3, 32, 32)
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = criterion(net(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return repr(net), losses


def test_the_cifar_tutorials_network_trains_as_in_torch():
    torch = pytest.importorskip("torch")
    labels = [3, 8, 0, 5]
    theirs = _cifar_net(torch, torch.nn, torch.optim, torch.nn.functional, torch.tensor(labels))
    engine = types.SimpleNamespace(
        manual_seed=E.manual_seed, randn=lambda *shape: E.randn(*shape, dtype=np.float32)
    )
    with default_dtype(np.float32):
        ours = _cifar_net(engine, nn, optim, nn.functional, E.tensor(labels, dtype=np.int64))
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)
    assert theirs[1][-1] < theirs[1][0]
