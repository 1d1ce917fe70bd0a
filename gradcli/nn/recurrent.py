"""torch.nn's recurrent layers: ``RNN``, ``LSTM``, ``GRU`` (stacked, batch_first,
bidirectional, dropout between layers) and their cells ``RNNCell``, ``LSTMCell``,
``GRUCell``.

Each draws its weights as torch does (every parameter, in torch's order, uniform within
1/sqrt(hidden_size)), so that after ``manual_seed`` they are torch's; the steps are the
engine's operations (``linear``, ``sigmoid``, ``tanh``), differentiable to any order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base.engine_errors import DomainError, ShapeError
from ..engine.tensor import Tensor
from ..ops.library import (
    cat,
    chunk,
    linear,
    relu,
    sigmoid,
    squeeze,
    stack,
    tanh,
    transpose,
    unsqueeze,
)
from . import init
from .functional import dropout
from .layers import _empty
from .module import Module

# how many blocks of hidden_size the gates of each kind of cell stack
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
# an RNN's cell by its nonlinearity
_CELLS = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}


def _step(cell: str, x: Tensor, state: Any, weights: Sequence[Tensor | None]) -> Any:
    """One step of a cell: the new state (``(h, c)`` for an LSTM) from input ``x``."""
    w_ih, w_hh, b_ih, b_hh = weights
    if cell == "LSTM":
        h, c = state
        gates = linear(x, w_ih, b_ih) + linear(h, w_hh, b_hh)
        i, f, g, o = chunk(gates, 4, -1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        return sigmoid(o) * tanh(c), c
    if cell == "GRU":
        r_i, z_i, n_i = chunk(linear(x, w_ih, b_ih), 3, -1)
        r_h, z_h, n_h = chunk(linear(state, w_hh, b_hh), 3, -1)
        r = sigmoid(r_i + r_h)
        z = sigmoid(z_i + z_h)
        n = tanh(n_i + r * n_h)
        return (1 - z) * n + z * state
    pre = linear(x, w_ih, b_ih) + linear(state, w_hh, b_hh)
    return relu(pre) if cell == "RNN_RELU" else tanh(pre)


def _draw_all(module: Module, hidden_size: int) -> None:
    """torch's draw of a recurrent layer: every parameter uniform within 1/sqrt(hidden)."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for param in module.parameters():
        init.uniform_(param, -bound, bound)


class _RNNBase(Module):
    cell = "RNN_TANH"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if proj_size != 0:
            raise DomainError(f"{type(self).__name__}: proj_size is not supported here")
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of "
                "an element being zeroed"
            )
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = GATES[self.cell] * hidden_size
        self._names: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                size = input_size if layer == 0 else hidden_size * directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {
                    "weight_ih": (gate_size, size),
                    "weight_hh": (gate_size, hidden_size),
                    "bias_ih": (gate_size,),
                    "bias_hh": (gate_size,),
                }
                names = []
                for kind, shape in shapes.items():
                    if kind.startswith("bias") and not bias:
                        continue
                    setattr(self, kind + suffix, _empty(shape, dtype))
                    names.append(kind + suffix)
                self._names.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter uniform within 1/sqrt(hidden_size), in torch's order."""
        _draw_all(self, self.hidden_size)

    def _weights(self, index: int) -> list[Tensor | None]:
        names = self._names[index]
        found = [getattr(self, name) for name in names]
        return found if self.bias else [*found, None, None]

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Any]:
        lstm = self.cell == "LSTM"
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ShapeError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead"
            )
        x = input if batched else unsqueeze(input, 1)
        if self.batch_first and batched:
            x = transpose(x, 0, 1)
        directions = 2 if self.bidirectional else 1
        count = self.num_layers * directions
        h0, c0 = (hx if lstm else (hx, None)) if hx is not None else (None, None)
        zeros = Tensor(np.zeros((count, x.shape[1], self.hidden_size), dtype=x.dtype))
        if h0 is None:
            h0 = zeros
            c0 = zeros if lstm else None
        elif not batched:
            h0 = unsqueeze(h0, 1)
            c0 = unsqueeze(c0, 1) if c0 is not None else None
        finals_h, finals_c = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                state: Any = (h0[index], c0[index]) if c0 is not None else h0[index]
                steps = range(x.shape[0])
                if direction == 1:
                    steps = range(x.shape[0] - 1, -1, -1)
                sequence: list[Tensor] = [None] * x.shape[0]  # type: ignore[list-item]
                for t in steps:
                    state = _step(self.cell, layer_input[t], state, self._weights(index))
                    sequence[t] = state[0] if lstm else state
                outputs.append(_layer_output(stack(sequence, 0), lstm and directions == 1))
                finals_h.append(state[0] if lstm else state)
                if lstm:
                    finals_c.append(state[1])
            layer_input = outputs[0] if directions == 1 else _cat_last(outputs)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = dropout(layer_input, self.dropout, True)
        output = layer_input
        h_n = stack(finals_h, 0)
        c_n = stack(finals_c, 0) if lstm else None
        if self.batch_first and batched:
            output = transpose(output, 0, 1)
        if not batched:
            output = squeeze(output, 1)
            h_n = squeeze(h_n, 1)
            c_n = squeeze(c_n, 1) if c_n is not None else None
        return output, ((h_n, c_n) if lstm else h_n)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text


def _cat_last(tensors: list[Tensor]) -> Tensor:
    return cat(tensors, -1)  # type: ignore[no-any-return]


def _layer_output(output: Tensor, one_layer_node: bool) -> Tensor:
    """A layer's output (its steps' states stacked): torch's LSTM on the CPU runs a layer of
    one direction over float32 values as one oneDNN operation, whose node is the output's
    (MkldnnRnnLayerBackward0; a bidirectional layer's is the cat of its two)."""
    if one_layer_node and output.dtype == np.float32 and output._op is not None:
        output._name = "MkldnnRnnLayerBackward0"
    return output


class RNN(_RNNBase):
    """An Elman network: h = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args: Any, nonlinearity: str = "tanh", **kwargs: Any) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        self.cell = _CELLS[nonlinearity]
        self.nonlinearity = nonlinearity
        super().__init__(*args, **kwargs)  # (torch's repr leaves the nonlinearity out)


class LSTM(_RNNBase):
    """Long short-term memory: input, forget, cell and output gates; returns
    ``output, (h_n, c_n)``."""

    cell = "LSTM"


class GRU(_RNNBase):
    """Gated recurrent units: reset and update gates."""

    cell = "GRU"


class _CellBase(Module):
    cell = "RNN_TANH"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gate_size = GATES[self.cell] * hidden_size
        self.weight_ih = _empty((gate_size, input_size), dtype)
        self.weight_hh = _empty((gate_size, hidden_size), dtype)
        if bias:
            self.bias_ih = _empty((gate_size,), dtype)
            self.bias_hh = _empty((gate_size,), dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter uniform within 1/sqrt(hidden_size), in torch's order."""
        _draw_all(self, self.hidden_size)

    def forward(self, input: Tensor, hx: Any = None) -> Any:
        lstm = self.cell == "LSTM"
        batched = input.ndim == 2
        x = input if batched else unsqueeze(input, 0)
        if hx is None:
            zeros = Tensor(np.zeros((x.shape[0], self.hidden_size), dtype=x.dtype))
            hx = (zeros, zeros) if lstm else zeros
        elif not batched:
            hx = tuple(unsqueeze(h, 0) for h in hx) if lstm else unsqueeze(hx, 0)
        weights = [self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh]
        state = _step(self.cell, x, hx, weights)
        if not batched:
            state = tuple(squeeze(s, 0) for s in state) if lstm else squeeze(state, 0)
        return state

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        return text


class RNNCell(_CellBase):
    """One step of an Elman network."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in _CELLS:  # torch refuses it at the first call; here, at once
            raise DomainError(f"Unknown nonlinearity: {nonlinearity}")
        self.cell = _CELLS[nonlinearity]
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def extra_repr(self) -> str:
        text = super().extra_repr()
        if self.nonlinearity != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class LSTMCell(_CellBase):
    """One step of an LSTM: returns ``(h, c)``."""

    cell = "LSTM"


class GRUCell(_CellBase):
    """One step of a GRU."""

    cell = "GRU"
