"""``torch.nn.MultiheadAttention``: queries, keys and values projected (one ``in_proj_weight``
or, with other key and value sizes, one weight each), split into heads, scaled dot-product
attention with torch's masks (``attn_mask``, boolean or additive; ``key_padding_mask``),
the heads joined and projected by ``out_proj``; the weights drawn as torch draws them
(``out_proj`` as a Linear, then ``xavier_uniform_`` of the input projection, zero biases)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base.engine_errors import DomainError
from ..engine.tensor import Tensor
from ..ops.library import chunk, linear, matmul, mean, softmax, squeeze, transpose, unsqueeze
from . import init
from .functional import dropout
from .layers import Linear, _empty
from .module import Module


class NonDynamicallyQuantizableLinear(Linear):
    """torch's name of MultiheadAttention's output projection: a Linear."""


def _additive(mask: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """A mask as the numbers torch adds to the scores: -inf where a boolean mask is True."""
    values = mask.data if isinstance(mask, Tensor) else np.asarray(mask)
    if values.dtype == np.bool_:
        return np.where(values, -np.inf, 0.0).astype(dtype)
    return values.astype(dtype)


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim // num_heads`` features each."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        if add_bias_kv or add_zero_attn:
            raise DomainError(
                "MultiheadAttention: add_bias_kv and add_zero_attn are not supported here"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _empty((3 * embed_dim, embed_dim), dtype)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = _empty((embed_dim, embed_dim), dtype)
            self.k_proj_weight = _empty((embed_dim, self.kdim), dtype)
            self.v_proj_weight = _empty((embed_dim, self.vdim), dtype)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = _empty((3 * embed_dim,), dtype)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _projections(self) -> tuple[list[Tensor], list[Tensor | None]]:
        if self._qkv_same_embed_dim:
            weights = list(chunk(self.in_proj_weight, 3, 0))
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        biases: list[Tensor | None] = [None, None, None]
        if self.in_proj_bias is not None:
            biases = list(chunk(self.in_proj_bias, 3, 0))
        return weights, biases

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Any = None,
        need_weights: bool = True,
        attn_mask: Any = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (transpose(t, 0, 1) for t in (query, key, value))
        if not batched:
            query, key, value = (unsqueeze(t, 1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = unsqueeze(_as_tensor(key_padding_mask), 0)
        target, batch, embed = query.shape
        source = key.shape[0]
        heads, head_dim = self.num_heads, self.head_dim
        (w_q, w_k, w_v), (b_q, b_k, b_v) = self._projections()
        q = transpose(linear(query, w_q, b_q).reshape(target, batch * heads, head_dim), 0, 1)
        k = transpose(linear(key, w_k, b_k).reshape(source, batch * heads, head_dim), 0, 1)
        v = transpose(linear(value, w_v, b_v).reshape(source, batch * heads, head_dim), 0, 1)
        mask = self._mask(attn_mask, key_padding_mask, batch, target, source, query.dtype)
        scores = matmul(q * math.sqrt(1.0 / head_dim), transpose(k, -2, -1))
        if mask is not None:
            scores = scores + Tensor(mask)
        weights = softmax(scores, -1)
        if self.dropout > 0 and self.training:
            weights = dropout(weights, self.dropout, True)
        out = transpose(matmul(weights, v), 0, 1).reshape(target * batch, embed)
        out = linear(out, self.out_proj.weight, self.out_proj.bias).reshape(target, batch, embed)
        found: Tensor | None = None
        if need_weights:
            found = weights.reshape(batch, heads, target, source)
            if average_attn_weights:
                found = mean(found, 1)
            if not batched:
                found = squeeze(found, 0)
        if self.batch_first and batched:
            out = transpose(out, 0, 1)
        if not batched:
            out = squeeze(out, 1)
        return out, found

    def _mask(
        self,
        attn_mask: Any,
        key_padding_mask: Any,
        batch: int,
        target: int,
        source: int,
        dtype: np.dtype[Any],
    ) -> np.ndarray | None:
        """The numbers added to the scores (batch * heads, target, source), or None."""
        total = None
        if attn_mask is not None:
            total = _additive(attn_mask, dtype)
            if total.ndim == 2:
                total = total[None]
        if key_padding_mask is not None:
            spread = np.broadcast_to(
                _additive(key_padding_mask, dtype).reshape(batch, 1, 1, source),
                (batch, self.num_heads, 1, source),
            )
            padding = spread.reshape(batch * self.num_heads, 1, source)
            total = padding if total is None else total + padding
        return total

    def extra_repr(self) -> str:
        return ""


def _as_tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(np.asarray(value))
