"""torch.nn's lazy layers: ``LazyLinear`` takes its ``in_features`` from the first input it
sees, then draws its weights as ``Linear`` does and becomes a ``Linear`` (its class
changes, as torch's does), so that the draws come in torch's order: at the first call.
``LazyConv1d``, ``LazyConv2d`` and ``LazyConv3d`` take their ``in_channels`` so (dim 1 of a
batch, dim 0 of one unbatched input) and become ``Conv1d``, ``Conv2d`` and ``Conv3d``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.engine_errors import GradError
from ..engine.tensor import Tensor
from .layers import Conv1d, Conv2d, Conv3d, Linear, _ConvNd, _dtype
from .module import Module, Parameter, _size

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


class _Lazy(Module):
    """What the lazy layers share: a weight (and bias) of no shape until the first call, whose
    input gives their shapes (``_materialize``, which draws them and makes the layer the one
    it stands for)."""

    weight: Any

    def _uninitialized(self, bias: bool, dtype: Any) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if isinstance(self.weight, UninitializedParameter) and args:
            self._materialize(args[0])  # now the layer it stands for
        return Module.__call__(self, *args, **kwargs)

    def _materialize(self, input: Tensor) -> None:
        raise NotImplementedError


class LazyLinear(_Lazy, Linear):
    """A Linear whose ``in_features`` is the last size of its first input."""

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self._uninitialized(bias, dtype)

    def reset_parameters(self) -> None:
        """Draw as Linear does, once the shapes are known."""
        if self.in_features != 0:
            super().reset_parameters()

    def _materialize(self, input: Tensor) -> None:
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()
        self.__class__ = Linear  # type: ignore[assignment]


class _LazyConvNd(_Lazy, _ConvNd):
    """A convolution whose ``in_channels`` is that of its first input (0 until then)."""

    becomes: type[_ConvNd] = _ConvNd

    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        Module.__init__(self)
        # torch's: the settings of a layer of 0 channels in and out, then its out_channels
        self._settings(0, 0, kernel_size, stride, padding, dilation, groups, padding_mode)
        self.out_channels = out_channels
        self._uninitialized(bias, dtype)

    def reset_parameters(self) -> None:
        """Draw as the convolution does, once the shapes are known."""
        if self.in_channels != 0 and not isinstance(self.weight, UninitializedParameter):
            super().reset_parameters()

    def _materialize(self, input: Tensor) -> None:
        batched = self.dims + 2
        if input.ndim not in (batched - 1, batched):
            raise RuntimeError(
                f"Expected {batched - 1}D (unbatched) or {batched}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {_size(input.shape)}"
            )
        self.in_channels = input.shape[1] if input.ndim == batched else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        per_group = self.in_channels // self.groups
        self.weight.materialize((self.out_channels, per_group, *self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()
        self.__class__ = self.becomes  # type: ignore[assignment]


class LazyConv1d(_LazyConvNd):
    """A Conv1d whose ``in_channels`` is that of its first input."""

    dims = 1
    becomes = Conv1d


class LazyConv2d(_LazyConvNd):
    """A Conv2d whose ``in_channels`` is that of its first input."""

    dims = 2
    becomes = Conv2d


class LazyConv3d(_LazyConvNd):
    """A Conv3d whose ``in_channels`` is that of its first input."""

    dims = 3
    becomes = Conv3d
