"""gradcli.nn's layers, activations and losses against torch 2.13.

Each row makes the layer in gradcli and in torch after ``manual_seed`` with the same seed:
the parameters must be torch's bit for bit (the initial draws are torch's), the repr torch's
text, and the output and the gradients of the input and of every parameter torch's to
float32 rounding (the engine's arithmetic — matmul's order of summation, libm — is not
torch's kernels'). Without torch, a few first weights copied from torch are checked.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.ops.library as E
from gradcli import nn
from gradcli.engine.tensor import default_dtype


@pytest.fixture
def float32():
    with default_dtype(np.float32):
        yield


def _input(shape, kind, seed=7):
    rng = np.random.default_rng(seed)
    if kind == "index":
        return rng.integers(0, 10, size=shape).astype(np.int64)
    if kind == "prob":
        return rng.uniform(0.05, 0.95, size=shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


# (name, gradcli's layer of the module, torch's of torch.nn, arguments, input shape, kind)
LAYERS = [
    ("Linear", "Linear", (3, 2), (4, 3), "float"),
    ("Linear no bias", "Linear", (5, 3, False), (2, 5), "float"),
    ("Conv1d", "Conv1d", (2, 3, 3), (2, 2, 7), "float"),
    ("Conv1d stride padding", "Conv1d", (2, 4, 3, 2, 1), (1, 2, 9), "float"),
    ("Conv2d", "Conv2d", (2, 3, 3), (2, 2, 5, 5), "float"),
    ("Conv2d padding same", "Conv2d", (1, 2, 3, 1, "same"), (1, 1, 4, 4), "float"),
    ("ConvTranspose2d", "ConvTranspose2d", (2, 3, 3, 2, 1, 1), (1, 2, 4, 4), "float"),
    (
        "ConvTranspose2d groups",
        "ConvTranspose2d",
        (4, 2, 2, 1, 0, 0, 2, False),
        (2, 4, 3, 3),
        "float",
    ),
    ("MaxPool2d", "MaxPool2d", (2,), (2, 3, 6, 6), "float"),
    ("MaxPool2d stride padding", "MaxPool2d", (3, 2, 1), (1, 2, 7, 7), "float"),
    ("AvgPool2d", "AvgPool2d", (2,), (2, 3, 6, 6), "float"),
    ("AvgPool2d padding", "AvgPool2d", (3, 1, 1, False, False), (1, 2, 5, 5), "float"),
    ("AvgPool2d ceil_mode", "AvgPool2d", (2, 2, 0, True), (1, 2, 5, 5), "float"),
    ("MaxPool2d ceil_mode", "MaxPool2d", (2, 2, 0, 1, False, True), (1, 2, 5, 5), "float"),
    # a setting per spatial dim (issue 30)
    ("Conv1d tuples", "Conv1d", (2, 3, (3,), (2,), [1]), (1, 2, 9), "float"),
    ("Conv2d per dim", "Conv2d", (2, 3, (3, 5), (2, 1), (4, 2), (3, 1)), (2, 2, 9, 10), "float"),
    ("Conv3d per dim", "Conv3d", (2, 3, (2, 3, 2), (1, 2, 1), (1, 0, 1)), (1, 2, 4, 5, 4), "float"),
    (
        "ConvTranspose2d per dim",
        "ConvTranspose2d",
        (2, 3, (3, 5), (2, 1), (4, 2)),
        (2, 2, 5, 6),
        "float",
    ),
    (
        "ConvTranspose2d output_padding per dim",
        "ConvTranspose2d",
        (2, 3, (3, 2), (2, 3), (1, 0), (1, 2), 1, True, (1, 2)),
        (1, 2, 3, 3),
        "float",
    ),
    ("MaxPool2d per dim", "MaxPool2d", ((3, 2), (2, 1), (1, 0), (1, 2)), (2, 3, 7, 6), "float"),
    ("AvgPool2d per dim", "AvgPool2d", ((3, 2), (2, 1)), (2, 3, 7, 6), "float"),
    ("AvgPool2d lists", "AvgPool2d", ([3, 2], [2, 3], [1, 1], True, False), (1, 2, 6, 7), "float"),
    ("ConvTranspose1d", "ConvTranspose1d", (2, 3, 3, 2, 1, 1), (2, 2, 5), "float"),
    (
        "ConvTranspose3d",
        "ConvTranspose3d",
        (2, 3, (2, 3, 2), (1, 2, 1), (0, 1, 0)),
        (1, 2, 3, 3, 4),
        "float",
    ),
    ("MaxPool1d", "MaxPool1d", (3, 2, 1), (2, 3, 8), "float"),
    ("MaxPool3d", "MaxPool3d", ((2, 3, 2), (1, 2, 2), (1, 1, 0)), (1, 2, 4, 5, 6), "float"),
    ("AvgPool1d", "AvgPool1d", (3, 2, 1, True, False), (2, 3, 8), "float"),
    ("AvgPool3d", "AvgPool3d", ((2, 3, 2), (1, 2, 2), (1, 1, 0)), (1, 2, 4, 5, 6), "float"),
    ("GroupNorm", "GroupNorm", (2, 4), (3, 4, 5), "float"),
    ("Embedding", "Embedding", (10, 3), (2, 4), "index"),
    ("Embedding padding_idx", "Embedding", (10, 3, 2), (5,), "index"),
    ("LayerNorm", "LayerNorm", (4,), (3, 4), "float"),
    ("BatchNorm1d", "BatchNorm1d", (3,), (5, 3), "float"),
    ("BatchNorm1d 3-D", "BatchNorm1d", (2,), (4, 2, 3), "float"),
    ("Flatten", "Flatten", (), (2, 3, 4), "float"),
    ("Identity", "Identity", (), (2, 3), "float"),
    ("ReLU", "ReLU", (), (3, 4), "float"),
    ("LeakyReLU", "LeakyReLU", (0.2,), (3, 4), "float"),
    ("Tanh", "Tanh", (), (3, 4), "float"),
    ("Sigmoid", "Sigmoid", (), (3, 4), "float"),
    ("GELU", "GELU", (), (3, 4), "float"),
    ("GELU tanh", "GELU", ("tanh",), (3, 4), "float"),
    ("SiLU", "SiLU", (), (3, 4), "float"),
    ("Softmax", "Softmax", (1,), (3, 4), "float"),
    ("LogSoftmax", "LogSoftmax", (-1,), (3, 4), "float"),
    ("ELU", "ELU", (0.5,), (3, 4), "float"),
    ("Softplus", "Softplus", (2.0, 10.0), (3, 4), "float"),
    ("Hardtanh", "Hardtanh", (-0.5, 0.5), (3, 4), "float"),
    ("ReLU6", "ReLU6", (), (3, 4), "float"),
    ("Mish", "Mish", (), (3, 4), "float"),
    ("LogSigmoid", "LogSigmoid", (), (3, 4), "float"),
    ("Softsign", "Softsign", (), (3, 4), "float"),
    ("CELU", "CELU", (0.7,), (3, 4), "float"),
    ("SELU", "SELU", (), (3, 4), "float"),
    ("GLU", "GLU", (), (3, 4), "float"),
]


def _torch_value(torch, array):
    return torch.from_numpy(np.array(array))


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize(
    ("label", "name", "args", "shape", "kind"), LAYERS, ids=[r[0] for r in LAYERS]
)
def test_layer_is_torchs(float32, label, name, args, shape, kind, seed):
    torch = pytest.importorskip("torch")
    E.manual_seed(seed)
    ours = getattr(nn, name)(*args)
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    ours_params = dict(ours.named_parameters())
    theirs_params = dict(theirs.named_parameters())
    assert list(ours_params) == list(theirs_params)
    for key, param in ours_params.items():
        assert param.dtype == np.float32
        assert np.array_equal(param.data, theirs_params[key].detach().numpy()), key
    data = _input(shape, kind)
    x = E.tensor(data, dtype=data.dtype, requires_grad=kind == "float")
    tx = _torch_value(torch, data).requires_grad_(kind == "float")
    out, tout = ours(x), theirs(tx)
    assert out.dtype == np.float32 and out.shape == tuple(tout.shape)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=2e-5, atol=2e-6)
    weights = _input(out.shape, "float", seed=11)
    (out * E.tensor(weights, dtype=np.float32)).sum().backward()
    (tout * _torch_value(torch, weights)).sum().backward()
    if kind == "float":
        np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=2e-5, atol=2e-6)
    for key, param in ours_params.items():
        np.testing.assert_allclose(
            param.grad.data, theirs_params[key].grad.numpy(), rtol=2e-5, atol=2e-5
        )
    buffers = dict(ours.named_buffers())
    for key, buffer in theirs.named_buffers():
        np.testing.assert_allclose(buffers[key].data, buffer.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_is_torchs(float32, bias):
    torch = pytest.importorskip("torch")
    E.manual_seed(2)
    ours = nn.Bilinear(3, 4, 2, bias=bias)
    torch.manual_seed(2)
    theirs = torch.nn.Bilinear(3, 4, 2, bias=bias)
    assert repr(ours) == repr(theirs)
    for (name, param), (_, expected) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert np.array_equal(param.data, expected.detach().numpy()), name
    a, b = _input((5, 3), "float", 1), _input((5, 4), "float", 2)
    x1, x2 = E.tensor(a, dtype=np.float32, requires_grad=True), E.tensor(b, dtype=np.float32)
    out = ours(x1, x2)
    tx1 = torch.from_numpy(a).requires_grad_()
    tout = theirs(tx1, torch.from_numpy(b))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=2e-5, atol=2e-6)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(x1.grad.data, tx1.grad.numpy(), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(ours.weight.grad.data, theirs.weight.grad.numpy(), rtol=2e-5)


def test_functional_dropout_and_names_are_torchs(float32):
    torch = pytest.importorskip("torch")
    data = _input((3, 40), "float")
    E.manual_seed(4)
    torch.manual_seed(4)
    out = nn.functional.dropout(E.tensor(data, dtype=np.float32), 0.3)
    expected = torch.nn.functional.dropout(torch.from_numpy(data), 0.3)
    assert np.array_equal(out.data, expected.numpy())
    assert len(nn.functional.__all__) >= 40
    for name in nn.functional.__all__:
        assert hasattr(torch.nn.functional, name), name
        if name not in ("dropout", "batch_norm"):  # these two do what torch does besides
            assert getattr(nn.functional, name) is getattr(E, name)


def test_batch_norm_in_eval_uses_the_running_statistics(float32):
    torch = pytest.importorskip("torch")
    ours, theirs = nn.BatchNorm1d(3, momentum=None), torch.nn.BatchNorm1d(3, momentum=None)
    for seed in (1, 2):
        data = _input((6, 3), "float", seed)
        ours(E.tensor(data, dtype=np.float32))
        theirs(torch.from_numpy(data))
    assert int(ours.num_batches_tracked.data) == 2
    np.testing.assert_allclose(ours.running_var.data, theirs.running_var.numpy(), rtol=1e-6)
    ours.eval()
    theirs.eval()
    data = _input((4, 3), "float", 5)
    out = ours(E.tensor(data, dtype=np.float32))
    np.testing.assert_allclose(out.data, theirs(torch.from_numpy(data)).detach().numpy(), rtol=1e-5)
    assert [k for k in ours.state_dict()] == [k for k in theirs.state_dict()]


def test_functional_batch_norm_in_training_updates_the_statistics_given(float32):
    torch = pytest.importorskip("torch")
    data = _input((6, 3), "float", 3)
    ours = E.zeros(3), E.ones(3)
    theirs = torch.zeros(3), torch.ones(3)
    out = nn.functional.batch_norm(E.tensor(data), *ours, training=True, momentum=0.3)
    expected = torch.nn.functional.batch_norm(
        torch.from_numpy(data), *theirs, training=True, momentum=0.3
    )
    np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-5, atol=1e-6)
    for mine, torchs in zip(ours, theirs):
        assert np.any(mine.data != np.array([0, 0, 0]) + (mine is ours[1]))  # moved
        np.testing.assert_allclose(mine.data, torchs.numpy(), rtol=1e-6)
    before = [t.data.copy() for t in ours]
    nn.functional.batch_norm(E.tensor(data), *ours)  # evaluation: the statistics stay
    assert all(np.array_equal(a, t.data) for a, t in zip(before, ours))


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_dropout_drops_what_torch_drops(float32, seed, p):
    torch = pytest.importorskip("torch")
    data = _input((4, 25), "float")
    E.manual_seed(seed)
    torch.manual_seed(seed)
    layer, theirs = nn.Dropout(p), torch.nn.Dropout(p)
    x = E.tensor(data, dtype=np.float32, requires_grad=True)
    out = layer(x)
    expected = theirs(torch.from_numpy(data))
    assert np.array_equal(out.data, expected.numpy())
    assert out.grad_fn.name() == "MulBackward0"
    # a second draw continues torch's generator
    assert np.array_equal(layer(x).data, theirs(torch.from_numpy(data)).numpy())
    layer.eval()
    assert layer(x) is x
    assert repr(layer) == repr(theirs)


# (loss name, arguments, input kind, target kind, target shape, classes of the target)
LOSSES = [
    ("MSELoss", {}, "float", "float"),
    ("MSELoss", {"reduction": "sum"}, "float", "float"),
    ("L1Loss", {}, "float", "float"),
    ("L1Loss", {"reduction": "none"}, "float", "float"),
    ("CrossEntropyLoss", {}, "float", "class"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}, "float", "class"),
    ("CrossEntropyLoss", {"reduction": "sum", "ignore_index": 1}, "float", "class"),
    ("NLLLoss", {}, "logprob", "class"),
    ("BCELoss", {}, "prob", "prob"),
    ("BCEWithLogitsLoss", {}, "float", "prob"),
    ("HuberLoss", {"delta": 0.5}, "float", "float"),
    ("SmoothL1Loss", {"beta": 0.5}, "float", "float"),
    ("KLDivLoss", {"reduction": "batchmean"}, "logprob", "prob"),
    ("KLDivLoss", {"reduction": "sum", "log_target": True}, "logprob", "logprob"),
]


def _loss_value(kind, seed):
    if kind == "class":
        return np.random.default_rng(seed).integers(0, 5, size=(6,)).astype(np.int64)
    data = _input((6, 5), "prob" if kind == "prob" else "float", seed)
    if kind == "logprob":
        data = data - np.log(np.exp(data).sum(axis=1, keepdims=True))
    return data.astype(np.float32)


@pytest.mark.parametrize(("name", "kwargs", "input_kind", "target_kind"), LOSSES)
def test_loss_is_torchs(float32, name, kwargs, input_kind, target_kind):
    torch = pytest.importorskip("torch")
    data, target = _loss_value(input_kind, 1), _loss_value(target_kind, 2)
    ours, theirs = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(ours) == repr(theirs)
    x = E.tensor(data, dtype=np.float32, requires_grad=True)
    tx = torch.from_numpy(data).requires_grad_()
    out = ours(x, E.tensor(target, dtype=target.dtype))
    tout = theirs(tx, torch.from_numpy(target))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=2e-6, atol=1e-7)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=2e-6, atol=1e-7)


def _sign(seed):
    return np.where(np.random.default_rng(seed).random(6) < 0.5, -1.0, 1.0).astype(np.float32)


# (module name, keyword arguments, its operands: (kind, shape, seed, differentiable))
SEVERAL = [
    (
        "CosineEmbeddingLoss",
        {"margin": 0.2},
        [("float", (6, 5), 1, True), ("float", (6, 5), 2, True), ("sign", 3)],
    ),
    (
        "MarginRankingLoss",
        {"margin": 0.1},
        [("float", (6,), 1, True), ("float", (6,), 2, True), ("sign", 3)],
    ),
    ("HingeEmbeddingLoss", {"reduction": "sum"}, [("float", (6,), 1, True), ("sign", 3)]),
    ("SoftMarginLoss", {}, [("float", (6,), 1, True), ("sign", 3)]),
    (
        "TripletMarginLoss",
        {"margin": 0.5, "swap": True},
        [("float", (6, 5), s, True) for s in (1, 2, 3)],
    ),
    ("PoissonNLLLoss", {}, [("float", (6, 5), 1, True), ("prob", (6, 5), 2, False)]),
    (
        "PoissonNLLLoss",
        {"log_input": False, "full": True},
        [("prob", (6, 5), 1, True), ("prob", (6, 5), 2, False)],
    ),
    (
        "GaussianNLLLoss",
        {"full": True},
        [("float", (6, 5), 1, True), ("float", (6, 5), 2, False), ("prob", (6, 5), 3, True)],
    ),
    ("PairwiseDistance", {"p": 1.5}, [("float", (6, 5), 1, True), ("float", (6, 5), 2, True)]),
    ("CosineSimilarity", {"dim": 0}, [("float", (6, 5), 1, True), ("float", (6, 5), 2, True)]),
    ("Softmin", {"dim": 1}, [("float", (6, 5), 1, True)]),
]


@pytest.mark.parametrize(("name", "kwargs", "operands"), SEVERAL, ids=[r[0] for r in SEVERAL])
def test_modules_of_several_operands_are_torchs(float32, name, kwargs, operands):
    torch = pytest.importorskip("torch")
    ours_module, theirs_module = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(ours_module) == repr(theirs_module)
    ours, theirs = [], []
    for operand in operands:
        if operand[0] == "sign":
            data, grad = _sign(operand[1]), False
        else:
            kind, shape, seed, grad = operand
            data = _input(shape, kind, seed)
        ours.append(E.tensor(data, dtype=np.float32, requires_grad=grad))
        theirs.append(torch.from_numpy(data).requires_grad_(grad))
    out, expected = ours_module(*ours), theirs_module(*theirs)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    expected.sum().backward()
    for mine, torch_operand in zip(ours, theirs):
        if torch_operand.requires_grad:
            np.testing.assert_allclose(
                mine.grad.data, torch_operand.grad.numpy(), rtol=1e-5, atol=1e-6
            )


def test_first_weights_of_a_linear_are_torchs_without_torch(float32):
    # torch 2.13: torch.manual_seed(0); torch.nn.Linear(3, 1)
    E.manual_seed(0)
    layer = nn.Linear(3, 1)
    assert layer.weight.data.tolist() == [
        [-0.004322517663240433, 0.3097158372402191, -0.4751853346824646]
    ]
    assert layer.bias.data.tolist() == [-0.4248946011066437]
    assert str(layer.weight.dtype) == "float32"


def test_layers_take_the_default_dtype_or_the_one_given():
    E.manual_seed(0)
    assert nn.Linear(2, 2).weight.dtype == np.float64  # the library's default
    assert nn.Linear(2, 2, dtype=np.float32).weight.dtype == np.float32
    with default_dtype(np.float32):
        assert nn.Conv1d(1, 1, 2).weight.dtype == np.float32
