"""torch.nn's lazy layers: ``LazyLinear`` takes its ``in_features`` from the first input it
sees, then draws its weights as ``Linear`` does and becomes a ``Linear`` (its class
changes, as torch's does), so that the draws come in torch's order: at the first call."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.engine_errors import GradError
from ..engine.tensor import Tensor
from .layers import Linear, _dtype
from .module import Module, Parameter

_SHAPELESS = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually "
    "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
    "initialized one. Call `forward` to initialize the parameters before accessing their "
    "attributes."
)


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet; ``materialize(shape)`` makes it a
    ``Parameter`` of that shape (zeros until drawn)."""

    def __init__(self, requires_grad: bool = True, dtype: Any = None) -> None:
        super().__init__(np.zeros(0, dtype=_dtype(dtype)), requires_grad)

    @property
    def shape(self) -> tuple[int, ...]:
        raise GradError(_SHAPELESS)

    def materialize(self, shape: tuple[int, ...]) -> None:
        """Become a Parameter of ``shape`` (zeros, in the dtype given when made)."""
        self.data = np.zeros(shape, dtype=self.dtype)
        self.__class__ = Parameter  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


class LazyLinear(Linear):
    """A Linear whose ``in_features`` is the last size of its first input."""

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """Draw as Linear does, once the shapes are known."""
        if self.in_features != 0:
            super().reset_parameters()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if isinstance(self.weight, UninitializedParameter) and args:
            self._materialize(args[0])  # now a Linear
        return Module.__call__(self, *args, **kwargs)

    def _materialize(self, input: Tensor) -> None:
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()
        self.__class__ = Linear  # type: ignore[assignment]
