"""gradcli.optim against torch 2.13: the parameters after 5 steps of the same gradients.

SGD's and Adamax's updates are torch's bit for bit in both dtypes. Adam, AdamW, RMSprop,
Adagrad and Adadelta divide by a square root, and torch's CPU ``sqrt`` is MKL's vectorized
one, which is not correctly rounded (near half-way, about one float32 element in five is
1 ulp from the IEEE root numpy computes): those rows are checked to float rounding, and bit
for bit once torch's square root is handed in; the kernels they are built of (``add`` with
alpha, ``addcmul``, ``addcdiv``, ``lerp``) are checked bit for bit on their own. Without
torch, the numbers of 3 steps copied from torch are checked.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli.ops.library as E
from gradcli import nn, optim
from gradcli.ops.library import Tensor
from gradcli.optim import kernels as K

# (name, keyword arguments, whether torch's result is reached bit for bit)
ROWS = [
    ("SGD", {"lr": 0.1}, True),
    ("SGD", {"lr": 0.1, "momentum": 0.9}, True),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.2, "weight_decay": 0.01}, True),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "maximize": True}, True),
    ("Adam", {"lr": 0.01}, False),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True, "maximize": True}, False),
    ("AdamW", {"lr": 0.01}, False),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "betas": (0.8, 0.9)}, False),
    ("RMSprop", {"lr": 0.01}, False),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}, False),
    ("Adagrad", {"lr": 0.1}, False),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}, False),
    ("Adamax", {}, True),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1, "maximize": True}, True),
    ("Adadelta", {}, False),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.01}, False),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3,), (37, 5)])
@pytest.mark.parametrize(("name", "kwargs", "bitwise"), ROWS)
def test_optimizer_steps_are_torchs(name, kwargs, bitwise, shape, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(shape))
    start = rng.standard_normal(shape).astype(dtype)
    grads = [rng.standard_normal(shape).astype(dtype) for _ in range(5)]
    ours_param = Tensor(start.copy(), requires_grad=True)
    theirs_param = torch.nn.Parameter(torch.from_numpy(start.copy()))
    ours = getattr(optim, name)([ours_param], **kwargs)
    theirs = getattr(torch.optim, name)([theirs_param], **kwargs)
    assert repr(ours) == repr(theirs)
    for grad in grads:
        ours_param.grad = Tensor(grad.copy())
        theirs_param.grad = torch.from_numpy(grad.copy())
        ours.step()
        theirs.step()
    expected = theirs_param.detach().numpy()
    assert ours_param.dtype == dtype
    if bitwise:
        assert np.array_equal(ours_param.data, expected)
    else:  # MKL's sqrt (see the module): within float rounding, amplified by the steps
        rtol = 1e-5 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(ours_param.data, expected, rtol=rtol, atol=rtol)
    for key, value in theirs.state[theirs_param].items():
        np.testing.assert_allclose(ours.state[ours_param][key].data, value.numpy(), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kwargs", "bitwise"), [row for row in ROWS if not row[2]])
def test_with_torchs_sqrt_every_optimizer_is_torchs_bit_for_bit(
    monkeypatch, name, kwargs, bitwise, dtype
):
    """The rows above that are not bitwise differ by torch's square root alone: given
    torch's, each update is torch's to the last bit (the order of operations is torch's)."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(K, "sqrt", lambda a: torch.from_numpy(np.array(a)).sqrt().numpy())
    rng = np.random.default_rng(3)
    start = rng.standard_normal((37, 5)).astype(dtype)
    ours_param = Tensor(start.copy(), requires_grad=True)
    theirs_param = torch.nn.Parameter(torch.from_numpy(start.copy()))
    ours = getattr(optim, name)([ours_param], **kwargs)
    theirs = getattr(torch.optim, name)([theirs_param], **kwargs)
    for _ in range(5):
        grad = rng.standard_normal((37, 5)).astype(dtype)
        ours_param.grad = Tensor(grad.copy())
        theirs_param.grad = torch.from_numpy(grad)
        ours.step()
        theirs.step()
    assert np.array_equal(ours_param.data, theirs_param.detach().numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [7, 40, 1000])
def test_kernels_round_as_torchs(dtype, size):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(size)
    a, b = rng.standard_normal((2, size)).astype(dtype)
    c = (rng.random(size) + 0.1).astype(dtype)

    def t(x):
        return torch.from_numpy(x.copy())

    for value in (0.0123, -0.1, 1.0):
        assert np.array_equal(K.add(a, b, value), t(a).add(t(b), alpha=value).numpy())
        assert np.array_equal(
            K.addcmul(a, b, c, value), t(a).addcmul(t(b), t(c), value=value).numpy()
        )
        assert np.array_equal(
            K.addcdiv(a, b, c, value), t(a).addcdiv(t(b), t(c), value=value).numpy()
        )
    for weight in (0.001, 0.1, 0.9):
        assert np.array_equal(K.lerp(a, b, weight), t(a).lerp(t(b), weight).numpy())
    assert np.array_equal(K.mul(a, 0.999), t(a).mul(0.999).numpy())
    assert np.array_equal(K.div_scalar(c, 0.3), (t(c) / 0.3).numpy())


def test_fused_kernels_differ_from_a_multiply_then_an_add():
    # torch 2.13: torch.tensor([0.1]).add(torch.tensor([0.3]), alpha=0.1) is 0.13000001 (the
    # fused result), where a multiply and then an add give 0.13
    a, b = np.array([0.1], dtype=np.float32), np.array([0.3], dtype=np.float32)
    assert K.add(a, b, 0.1).tolist() == [0.1300000101327896]
    assert (a + np.float32(0.1) * b).tolist() != K.add(a, b, 0.1).tolist()
    assert K.add(a, b, 1 / 3).tolist() == [0.20000000298023224]


# torch 2.13 on [0.1, -0.2, 0.3] (float32) after the three gradients below
GRADS = ([0.5, -1.5, 0.25], [-0.3, 0.7, 1.1], [0.05, 0.4, -0.9])
COPIED = [
    (
        "SGD",
        {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
        [-0.0005472413613460958, 0.05046603083610535, 0.08516886830329895],
    ),
    (
        "Adam",
        {"lr": 0.01, "amsgrad": True},
        [0.086063914000988, -0.18638214468955994, 0.27996399998664856],
    ),
    (
        "RMSprop",
        {"lr": 0.01, "centered": True},
        [0.04253975301980972, -0.16570623219013214, 0.1638508439064026],
    ),
    ("Adagrad", {"lr": 0.1}, [0.04290600121021271, -0.16577735543251038, 0.1648530215024948]),
]


@pytest.mark.parametrize(("name", "kwargs", "expected"), COPIED)
def test_three_steps_give_torchs_numbers_without_torch(name, kwargs, expected):
    param = Tensor(np.array([0.1, -0.2, 0.3], dtype=np.float32), requires_grad=True)
    optimizer = getattr(optim, name)([param], **kwargs)
    for grad in GRADS:
        param.grad = Tensor(np.array(grad, dtype=np.float32))
        optimizer.step()
    if name == "SGD":
        assert param.data.tolist() == expected
    else:
        np.testing.assert_allclose(param.data, expected, rtol=3e-7)


def test_groups_zero_grad_state_and_schedulers():
    E.manual_seed(0)
    first, second = nn.Linear(2, 2), nn.Linear(2, 1)
    optimizer = optim.SGD(
        [{"params": first.parameters()}, {"params": second.parameters(), "lr": 0.5}],
        lr=0.1,
        momentum=0.9,
    )
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]
    assert optimizer.param_groups[1]["momentum"] == 0.9
    out = second(first(E.ones(3, 2))).sum()
    out.backward()
    optimizer.step()
    assert set(optimizer.state) == set(first.parameters()) | set(second.parameters())
    optimizer.zero_grad(set_to_none=False)
    assert float(first.weight.grad.data.sum()) == 0.0
    optimizer.zero_grad()
    assert first.weight.grad is None
    saved = optimizer.state_dict()
    assert saved["param_groups"][1]["params"] == [2, 3]
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    rates = []
    for _ in range(4):
        optimizer.step()
        scheduler.step()
        rates.append(scheduler.get_last_lr())
    assert rates == [[0.1, 0.5], [0.05, 0.25], [0.05, 0.25], [0.025, 0.125]]
    exponential = optim.lr_scheduler.ExponentialLR(optim.SGD([first.weight], lr=1.0), 0.5)
    assert exponential.get_last_lr() == [1.0]


SCHEDULERS = [
    ("StepLR", (3, 0.7), {}),
    ("MultiStepLR", ([2, 5, 5, 9],), {"gamma": 0.3}),
    ("ExponentialLR", (0.9,), {}),
    ("LambdaLR", (lambda epoch: 0.95**epoch + 0.01 * epoch,), {}),
    ("CosineAnnealingLR", (4,), {"eta_min": 0.01}),
    ("CosineAnnealingLR", (7,), {}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), SCHEDULERS, ids=[r[0] for r in SCHEDULERS])
def test_scheduler_schedules_as_torch(name, args, kwargs):
    torch = pytest.importorskip("torch")
    groups = [{"params": [Tensor(np.zeros(1), requires_grad=True)]}, {"params": [], "lr": 0.05}]
    ours = optim.SGD(groups, lr=0.3)
    theirs = torch.optim.SGD(
        [{"params": [torch.nn.Parameter(torch.zeros(1))]}, {"params": [], "lr": 0.05}], lr=0.3
    )
    mine = getattr(optim.lr_scheduler, name)(ours, *args, **kwargs)
    torch_scheduler = getattr(torch.optim.lr_scheduler, name)(theirs, *args, **kwargs)
    assert mine.get_last_lr() == torch_scheduler.get_last_lr()
    for _ in range(25):  # several of the cosine's periods
        ours.step()
        theirs.step()
        mine.step()
        torch_scheduler.step()
        assert mine.get_last_lr() == torch_scheduler.get_last_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine.step(6)
        torch_scheduler.step(6)
    assert mine.get_last_lr() == torch_scheduler.get_last_lr()


def test_scheduler_before_optimizer_warns_as_torch():
    optimizer = optim.SGD([Tensor(np.zeros(1), requires_grad=True)], lr=0.3)
    scheduler = optim.lr_scheduler.ExponentialLR(optimizer, 0.9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler.step()
    assert "before `optimizer.step()`" in str(caught[0].message)


def test_bad_settings_are_refused_with_torchs_messages():
    param = Tensor(np.zeros(2), requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([param], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum"):
        optim.SGD([param], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([param], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([param * 2], lr=0.1)
