"""torch.nn's ``TransformerEncoderLayer`` (self-attention and a feed-forward block, each
with dropout, a residual and a LayerNorm, after or before: ``norm_first``),
``TransformerEncoder`` (copies of one layer, then an optional norm), their decoder
counterparts (attention to the encoder's output besides) and ``Transformer``, with torch's
submodules, names, order of draws and printed forms."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base.engine_errors import DomainError, ShapeError
from ..engine import sizes
from ..engine.tensor import Tensor, default_floating
from ..ops.library import gelu, relu
from . import init
from .attention import MultiheadAttention
from .containers import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module

# the activations torch names by a string
_ACTIVATIONS: dict[str, Callable[..., Tensor]] = {"relu": relu, "gelu": gelu}


def _activation(activation: str | Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The function of a layer's ``activation`` ("relu", "gelu" or a function)."""
    if not isinstance(activation, str):
        return activation
    if activation not in _ACTIVATIONS:
        raise DomainError(f"activation should be relu/gelu, not {activation}")
    return _ACTIVATIONS[activation]


class _TransformerLayer(Module):
    """What an encoder and a decoder layer share: their settings and submodules, in torch's
    order (a decoder's ``multihead_attn``, ``norm3`` and ``dropout3`` besides)."""

    cross = False  # whether the layer also attends to the encoder's output

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
        # MultiheadAttention(d_model, nhead, dropout, bias, add_bias_kv, add_zero_attn, kdim,
        # vdim, batch_first)
        attention = (dropout, bias, False, False, None, None, batch_first)
        self.self_attn = MultiheadAttention(d_model, nhead, *attention, dtype=dtype)
        if self.cross:
            self.multihead_attn = MultiheadAttention(d_model, nhead, *attention, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        count = 3 if self.cross else 2
        for index in range(1, count + 1):
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            setattr(self, f"norm{index}", norm)
        for index in range(1, count + 1):
            setattr(self, f"dropout{index}", Dropout(dropout))
        self.activation = _activation(activation)
        self.activation_relu_or_gelu = self.activation in _ACTIVATIONS.values()

    def _attend(
        self, attention: Module, x: Tensor, source: Tensor, mask: Any, padding: Any, which: int
    ) -> Tensor:
        out, _ = attention(
            x, source, source, attn_mask=mask, key_padding_mask=padding, need_weights=False
        )
        return getattr(self, f"dropout{which}")(out)  # type: ignore[no-any-return]

    def _residuals(self, x: Tensor, blocks: Sequence[Callable[[Tensor], Tensor]]) -> Tensor:
        """Each block with its residual and its norm (after it, or before with
        ``norm_first``), in turn."""
        for index, block in enumerate(blocks, 1):
            norm = getattr(self, f"norm{index}")
            x = x + block(norm(x)) if self.norm_first else norm(x + block(x))
        return x

    def _feed_forward(self, x: Tensor) -> Tensor:
        hidden = self.dropout(self.activation(self.linear1(x)))
        last: Module = getattr(self, f"dropout{3 if self.cross else 2}")
        return last(self.linear2(hidden))  # type: ignore[no-any-return]


class TransformerEncoderLayer(_TransformerLayer):
    """x + dropout(self_attn(x)) then x + dropout(linear2(dropout(act(linear1(x))))), each
    normalized after (or, with ``norm_first``, before)."""

    def forward(
        self,
        src: Tensor,
        src_mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool = False,
    ) -> Tensor:
        blocks = [
            lambda x: self._attend(self.self_attn, x, x, src_mask, src_key_padding_mask, 1),
            self._feed_forward,
        ]
        return self._residuals(src, blocks)


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


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention over the target, attention to the encoder's output (``memory``) and a
    feed-forward block, each with dropout, a residual and a LayerNorm."""

    cross = True

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        blocks = [
            lambda x: self._attend(self.self_attn, x, x, tgt_mask, tgt_key_padding_mask, 1),
            lambda x: self._attend(
                self.multihead_attn, x, memory, memory_mask, memory_key_padding_mask, 2
            ),
            self._feed_forward,
        ]
        return self._residuals(tgt, blocks)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, run in turn over the target with the
    encoder's output, then ``norm`` if given."""

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        output = tgt
        for layer in self.layers:
            output = layer(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder and a decoder of the layers above, each with a final LayerNorm; every
    weight matrix then drawn again by ``xavier_uniform_``, as torch draws it."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[..., Tensor] = relu,
        custom_encoder: Any = None,
        custom_decoder: Any = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        settings = (
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, *settings, dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, *settings, dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, norm)
        for param in self.parameters():
            if param.ndim > 1:
                init.xavier_uniform_(param)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Any = None,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        src_key_padding_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise ShapeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ShapeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(  # type: ignore[no-any-return]
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask of ``sz`` positions: 0 on and below the diagonal, -inf above."""
        kind = default_floating() if dtype is None else np.dtype(dtype)
        sizes.refuse_over("generate_square_subsequent_mask", sz * sz, [np.empty(0, dtype=kind)])
        return Tensor(np.triu(np.full((sz, sz), -np.inf, dtype=kind), 1))
