"""gradcli.nn.MultiheadAttention against torch 2.13: the parameters bit for bit after
``manual_seed`` (torch's order of draws: out_proj as a Linear, then xavier_uniform_ of the
input projection), the repr, and the output, the attention weights and the gradients to
float32 rounding, with masks, batch_first, other key and value sizes and unbatched input."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.ops.library as E
from gradcli import nn
from gradcli.engine.tensor import default_dtype

# (keyword arguments, forward's keyword arguments, shapes of query, key and value)
CASES = [
    ({}, {}, [(4, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ({"batch_first": True}, {"average_attn_weights": False}, [(2, 4, 8), (2, 3, 8), (2, 3, 8)]),
    ({"kdim": 6, "vdim": 5}, {}, [(4, 2, 8), (3, 2, 6), (3, 2, 5)]),
    ({"bias": False}, {"attn_mask": "causal"}, [(4, 2, 8), (4, 2, 8), (4, 2, 8)]),
    ({}, {"key_padding_mask": "padding"}, [(4, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ({}, {"need_weights": False}, [(4, 8), (6, 8), (6, 8)]),
]


def _data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(("kwargs", "call", "shapes"), CASES)
def test_multihead_attention_is_torchs(kwargs, call, shapes):
    torch = pytest.importorskip("torch")
    with default_dtype(np.float32):
        E.manual_seed(3)
        ours = nn.MultiheadAttention(8, 2, **kwargs)
    torch.manual_seed(3)
    theirs = torch.nn.MultiheadAttention(8, 2, **kwargs)
    assert repr(ours) == repr(theirs)
    pairs = list(zip(ours.named_parameters(), theirs.named_parameters()))
    assert [a[0] for a, _ in pairs] == [b[0] for _, b in pairs]
    for (key, param), (_, expected) in pairs:
        assert np.array_equal(param.data, expected.detach().numpy()), key
    arrays = [_data(shape, seed) for seed, shape in enumerate(shapes)]
    inputs = [E.tensor(a, dtype=np.float32, requires_grad=True) for a in arrays]
    tinputs = [torch.from_numpy(a).requires_grad_() for a in arrays]
    ours_call, theirs_call = dict(call), dict(call)
    if call.get("attn_mask") == "causal":
        mask = np.triu(np.ones((4, 4), dtype=bool), 1)
        ours_call["attn_mask"], theirs_call["attn_mask"] = mask, torch.from_numpy(mask)
    if call.get("key_padding_mask") == "padding":
        mask = np.array([[False] * 5, [False, False, False, True, True]])
        ours_call["key_padding_mask"] = mask
        theirs_call["key_padding_mask"] = torch.from_numpy(mask)
    out, weights = ours(*inputs, **ours_call)
    tout, tweights = theirs(*tinputs, **theirs_call)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    if tweights is None:
        assert weights is None
    else:
        np.testing.assert_allclose(weights.data, tweights.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    tout.sum().backward()
    for mine, expected in zip(inputs, tinputs):
        np.testing.assert_allclose(mine.grad.data, expected.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (key, param), (_, expected) in pairs:
        np.testing.assert_allclose(
            param.grad.data, expected.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=key
        )


def test_multihead_attention_prints_and_names_as_torch_without_torch():
    layer = nn.MultiheadAttention(8, 2)
    assert repr(layer) == (
        "MultiheadAttention(\n"
        "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n"
        ")"
    )
    assert [name for name, _ in layer.named_parameters()] == [
        "in_proj_weight",
        "in_proj_bias",
        "out_proj.weight",
        "out_proj.bias",
    ]
    assert float(abs(layer.in_proj_bias.data).sum()) == 0.0
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(8, 3)
