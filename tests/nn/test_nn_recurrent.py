"""gradcli.nn's recurrent layers against torch 2.13: the parameters bit for bit after
``manual_seed`` (names and order torch's), the repr, and the outputs, final states and
gradients to float32 rounding, for stacked, batch_first, bidirectional, unbatched and given
initial states, and the cells."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.ops.library as E
from gradcli import nn
from gradcli.engine.tensor import default_dtype

# (layer, keyword arguments, input shape, whether an initial state is given)
LAYERS = [
    ("RNN", {}, (5, 2, 3), False),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}, (4, 2, 3), True),
    ("LSTM", {}, (5, 2, 3), False),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 5, 3), True),
    ("LSTM", {"bias": False}, (6, 3), False),
    ("GRU", {}, (5, 2, 3), True),
    ("GRU", {"bidirectional": True, "num_layers": 2}, (4, 1, 3), False),
]


def _data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(("name", "kwargs", "shape", "given"), LAYERS)
def test_recurrent_layer_is_torchs(name, kwargs, shape, given):
    torch = pytest.importorskip("torch")
    with default_dtype(np.float32):
        E.manual_seed(1)
        ours = getattr(nn, name)(3, 4, **kwargs)
    torch.manual_seed(1)
    theirs = getattr(torch.nn, name)(3, 4, **kwargs)
    assert repr(ours) == repr(theirs)
    pairs = list(zip(ours.named_parameters(), theirs.named_parameters()))
    assert [a[0] for a, _ in pairs] == [b[0] for _, b in pairs]
    for (key, param), (_, expected) in pairs:
        assert np.array_equal(param.data, expected.detach().numpy()), key
    data = _data(shape, 2)
    x = E.tensor(data, dtype=np.float32, requires_grad=True)
    tx = torch.from_numpy(data).requires_grad_()
    args, targs = [x], [tx]
    if given:
        layers = ours.num_layers * (2 if ours.bidirectional else 1)
        batch = shape[0] if kwargs.get("batch_first") else shape[1]
        h0 = _data((layers, batch, 4), 3)
        state = E.tensor(h0, dtype=np.float32)
        tstate = torch.from_numpy(h0)
        if name == "LSTM":
            c0 = _data((layers, batch, 4), 4)
            state, tstate = (state, E.tensor(c0, dtype=np.float32)), (tstate, torch.from_numpy(c0))
        args.append(state)
        targs.append(tstate)
    out, final = ours(*args)
    tout, tfinal = theirs(*targs)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    finals = final if name == "LSTM" else (final,)
    tfinals = tfinal if name == "LSTM" else (tfinal,)
    for mine, expected in zip(finals, tfinals):
        np.testing.assert_allclose(mine.data, expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    weights = _data(out.shape, 5)
    ((out * E.tensor(weights, dtype=np.float32)).sum() + finals[0].sum()).backward()
    ((tout * torch.from_numpy(weights)).sum() + tfinals[0].sum()).backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (key, param), (_, expected) in pairs:
        np.testing.assert_allclose(
            param.grad.data, expected.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=key
        )


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_are_torchs(name, batched):
    torch = pytest.importorskip("torch")
    with default_dtype(np.float32):
        E.manual_seed(2)
        ours = getattr(nn, name)(3, 5)
    torch.manual_seed(2)
    theirs = getattr(torch.nn, name)(3, 5)
    assert repr(ours) == repr(theirs)
    for param, expected in zip(ours.parameters(), theirs.parameters()):
        assert np.array_equal(param.data, expected.detach().numpy())
    data = _data((2, 3) if batched else (3,), 6)
    state = ours(E.tensor(data, dtype=np.float32))
    expected = theirs(torch.from_numpy(data))
    if name == "LSTMCell":
        state, expected = state[0] + state[1], expected[0] + expected[1]
    np.testing.assert_allclose(state.data, expected.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_recurrent_reprs_and_first_weights_without_torch():
    with default_dtype(np.float32):
        E.manual_seed(0)
        layer = nn.LSTM(10, 20, num_layers=2, dropout=0.5)
    assert repr(layer) == "LSTM(10, 20, num_layers=2, dropout=0.5)"
    assert [name for name, _ in layer.named_parameters()][:4] == [
        "weight_ih_l0",
        "weight_hh_l0",
        "bias_ih_l0",
        "bias_hh_l0",
    ]
    assert layer.weight_ih_l0.shape == (80, 10)
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"
    # torch 2.13: torch.manual_seed(0); torch.nn.LSTM(10, 20).weight_ih_l0[0, :2]
    with default_dtype(np.float32):
        E.manual_seed(0)
        first = nn.LSTM(10, 20).weight_ih_l0.data[0, :2]
    assert first.tolist() == [-0.001674103899858892, 0.11995243281126022]
