"""torch.nn's ``TransformerEncoderLayer`` (self-attention and a feed-forward block, each
with dropout, a residual and a LayerNorm, after or before: ``norm_first``) and
``TransformerEncoder`` (copies of one layer, then an optional norm), with torch's
submodules, names, order of draws and printed forms."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from ..base.engine_errors import DomainError
from ..engine import gelu, relu
from ..engine.tensor import Tensor
from .attention import MultiheadAttention
from .containers import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module

# the activations torch names by a string
_ACTIVATIONS: dict[str, Callable[..., Tensor]] = {"relu": relu, "gelu": gelu}


class TransformerEncoderLayer(Module):
    """x + dropout(self_attn(x)) then x + dropout(linear2(dropout(act(linear1(x))))), each
    normalized after (or, with ``norm_first``, before)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[..., Tensor] = relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise DomainError(f"activation should be relu/gelu, not {activation}")
            activation = _ACTIVATIONS[activation]
        self.activation_relu_or_gelu = activation in _ACTIVATIONS.values()
        self.activation = activation

    def forward(
        self,
        src: Tensor,
        src_mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool = False,
    ) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._attention(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._feed_forward(self.norm2(x))  # type: ignore[no-any-return]
        x = self.norm1(x + self._attention(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._feed_forward(x))  # type: ignore[no-any-return]

    def _attention(self, x: Tensor, mask: Any, padding: Any) -> Tensor:
        out, _ = self.self_attn(
            x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False
        )
        return self.dropout1(out)  # type: ignore[no-any-return]

    def _feed_forward(self, x: Tensor) -> Tensor:
        hidden = self.dropout(self.activation(self.linear1(x)))
        return self.dropout2(self.linear2(hidden))  # type: ignore[no-any-return]


def _why_not_nested(layer: Any) -> str:
    """torch's reason (in its warning) why a TransformerEncoder of ``layer`` does not use
    nested tensors ("" if it would)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attention = layer.self_attn
    reasons = [
        (layer.norm_first, f"{name}.norm_first was True"),
        (
            not attention.batch_first,
            f"{name}.self_attn.batch_first was not True"
            "(use batch_first for better inference performance)",
        ),
        (
            not attention._qkv_same_embed_dim,
            f"{name}.self_attn._qkv_same_embed_dim was not True",
        ),
        (attention.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (
            layer.norm1.eps != layer.norm2.eps,
            f"{name}.norm1.eps was not equal to {name}.norm2.eps",
        ),
        (attention.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    ]
    return next((reason for found, reason in reasons if found), "")


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (the same initial weights), run in turn,
    then ``norm`` if given."""

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        reason = _why_not_nested(encoder_layer)
        if enable_nested_tensor and reason:
            warnings.warn(
                f"enable_nested_tensor is True, but self.use_nested_tensor is False because "
                f"{reason}",
                UserWarning,
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output
