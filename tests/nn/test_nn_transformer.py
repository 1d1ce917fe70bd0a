"""gradcli.nn's TransformerEncoderLayer and TransformerEncoder against torch 2.13: the
parameters bit for bit after ``manual_seed`` (the copies of the encoder's layers alike), the
reprs, torch's warning about nested tensors, and the outputs and gradients to float32
rounding (dropout 0 in training, or evaluation mode)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli.ops.library as E
from gradcli import nn
from gradcli.engine.tensor import default_dtype

# (layer's keyword arguments, whether in training, input shape, with a causal mask)
CASES = [
    ({"dim_feedforward": 16, "dropout": 0.0}, True, (5, 2, 8), False),
    ({"dim_feedforward": 16}, False, (5, 2, 8), True),
    (
        {"dim_feedforward": 12, "dropout": 0.0, "norm_first": True, "activation": "gelu"},
        True,
        (4, 3, 8),
        False,
    ),
    ({"dim_feedforward": 16, "batch_first": True}, False, (2, 5, 8), False),
]


def _make(module, layer_kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer = module.TransformerEncoderLayer(8, 2, **layer_kwargs)
        encoder = module.TransformerEncoder(layer, 2, norm=module.LayerNorm(8))
    return encoder, [str(w.message) for w in caught]


@pytest.mark.parametrize(("layer_kwargs", "training", "shape", "causal"), CASES)
def test_transformer_encoder_is_torchs(layer_kwargs, training, shape, causal):
    torch = pytest.importorskip("torch")
    with default_dtype(np.float32):
        E.manual_seed(4)
        ours, our_warnings = _make(nn, layer_kwargs)
    torch.manual_seed(4)
    theirs, their_warnings = _make(torch.nn, layer_kwargs)
    assert repr(ours) == repr(theirs)
    assert our_warnings == [w for w in their_warnings if "nested" in w]
    pairs = list(zip(ours.named_parameters(), theirs.named_parameters()))
    assert [a[0] for a, _ in pairs] == [b[0] for _, b in pairs]
    for (key, param), (_, expected) in pairs:
        assert np.array_equal(param.data, expected.detach().numpy()), key
    ours.train(training)
    theirs.train(training)
    data = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    x = E.tensor(data, dtype=np.float32, requires_grad=True)
    tx = torch.from_numpy(data).requires_grad_()
    mask = tmask = None
    if causal:
        boolean = np.triu(np.ones((shape[0], shape[0]), dtype=bool), 1)
        mask, tmask = boolean, torch.from_numpy(boolean)
    out = ours(x, mask=mask)
    tout = theirs(tx, mask=tmask)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-4, atol=1e-5)
    weights = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    (out * E.tensor(weights, dtype=np.float32)).sum().backward()
    (tout * torch.from_numpy(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (key, param), (_, expected) in pairs:
        np.testing.assert_allclose(
            param.grad.data, expected.grad.numpy(), rtol=1e-3, atol=1e-5, err_msg=key
        )


def test_encoder_copies_its_layer_and_warns_as_torch_without_torch():
    encoder, caught = _make(nn, {"dim_feedforward": 16})
    assert caught == [
        "enable_nested_tensor is True, but self.use_nested_tensor is False because "
        "encoder_layer.self_attn.batch_first was not True(use batch_first for better "
        "inference performance)"
    ]
    first, second = encoder.layers
    assert first is not second
    assert np.array_equal(first.linear1.weight.data, second.linear1.weight.data)
    assert first.linear1.weight is not second.linear1.weight
    assert repr(encoder).startswith(
        "TransformerEncoder(\n  (layers): ModuleList(\n    (0-1): 2 x TransformerEncoderLayer("
    )


@pytest.mark.parametrize(
    ("kwargs", "training"),
    [
        ({"dim_feedforward": 16, "dropout": 0.0}, True),
        ({"dim_feedforward": 12, "norm_first": True, "activation": "gelu"}, False),
        ({"dim_feedforward": 16, "batch_first": True}, False),
    ],
)
def test_transformer_is_torchs(kwargs, training):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with default_dtype(np.float32):
            E.manual_seed(8)
            ours = nn.Transformer(8, 2, 2, 2, **kwargs)
        torch.manual_seed(8)
        theirs = torch.nn.Transformer(8, 2, 2, 2, **kwargs)
    assert repr(ours) == repr(theirs)
    pairs = list(zip(ours.named_parameters(), theirs.named_parameters()))
    assert [a[0] for a, _ in pairs] == [b[0] for _, b in pairs]
    for (key, param), (_, expected) in pairs:
        assert np.array_equal(param.data, expected.detach().numpy()), key
    ours.train(training)
    theirs.train(training)
    batch_first = kwargs.get("batch_first", False)
    src = np.random.default_rng(1).standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    tgt = np.random.default_rng(2).standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    src, tgt = src.astype(np.float32), tgt.astype(np.float32)
    with default_dtype(np.float32):
        mask = nn.Transformer.generate_square_subsequent_mask(4)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert np.array_equal(mask.data, tmask.numpy())
    x = E.tensor(src, dtype=np.float32, requires_grad=True)
    tx = torch.from_numpy(src).requires_grad_()
    out = ours(x, E.tensor(tgt, dtype=np.float32), tgt_mask=mask)
    tout = theirs(tx, torch.from_numpy(tgt), tgt_mask=tmask)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-4, atol=1e-5)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-3, atol=1e-5)
