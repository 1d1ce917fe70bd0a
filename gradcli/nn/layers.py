"""torch.nn's layers with parameters or modes: ``Linear``, ``Bilinear``, ``Conv1d``,
``Conv2d``, ``Conv3d``, ``ConvTranspose1d``/``2d``/``3d``, ``Embedding``, ``LayerNorm``,
``BatchNorm1d``/``BatchNorm2d``, ``Dropout``, ``Flatten``, ``Unflatten``, ``Identity``.

Each makes its parameters in the default floating dtype (or ``dtype=``) and initializes them
as torch does, drawing from the generator in force in torch's order, so that after
``manual_seed`` its weights are torch's; its forward is the engine's functional form.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base.engine_errors import DomainError, ShapeError
from ..engine import sizes
from ..engine.tensor import Tensor, default_floating, no_grad
from ..engine.torch_random import in_force, samplers
from ..ops.library import (
    batch_norm,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    embedding,
    flatten,
    group_norm,
    layer_norm,
    linear,
    unflatten,
)
from ..ops.linalg.einsum import einsum
from ..ops.nn.layers import update_running_statistics
from . import init
from .module import Module, Parameter, write


def _dtype(dtype: Any) -> np.dtype[Any]:
    return default_floating() if dtype is None else np.dtype(dtype)


def _filled(shape: Sequence[int], dtype: Any, fill: float = 0) -> np.ndarray:
    """An array of ``shape`` holding ``fill``, its size checked against the bounds in force
    (``--max-elements``, ``--max-memory``, the run's tally) before it is allocated."""
    kind = _dtype(dtype)
    count = math.prod(shape)
    sizes.refuse_over("making a layer's parameter", count, [np.empty(0, dtype=kind)])
    return np.full(tuple(shape), fill, dtype=kind)


def _empty(shape: Sequence[int], dtype: Any) -> Parameter:
    return Parameter(_filled(shape, dtype))


def _weight_and_bias(
    module: Any, shape: tuple[int, ...], bias: bool, dtype: Any, outputs: int | None = None
) -> None:
    """Give ``module`` a weight of ``shape`` and a bias of ``outputs`` elements (the weight's
    first dimension unless given), or None, then draw them as the layer draws them (its
    ``reset_parameters``)."""
    module.weight = _empty(shape, dtype)
    if bias:
        module.bias = _empty((shape[0] if outputs is None else outputs,), dtype)
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


def _affine(module: Any, shape: tuple[int, ...], affine: bool, bias: bool, dtype: Any) -> None:
    """A normalization's weight (ones) and bias (zeros, or None), or neither."""
    if affine:
        module.weight = Parameter(_filled(shape, dtype, 1))
        if bias:
            module.bias = Parameter(_filled(shape, dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


class Identity(Module):
    """The input, unchanged (any arguments are accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """``y = x W^T + b``: weight (out_features, in_features), bias (out_features)."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), bias, dtype)

    def reset_parameters(self) -> None:
        """torch's draw: the weight by kaiming_uniform_(a=sqrt(5)), then the bias uniform
        within 1/sqrt(in_features)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = init.default_bound(self.weight)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return linear(input, self.weight, self.bias)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1^T A x2 + b``: weight (out_features, in1_features, in2_features), bias
    (out_features), both drawn uniform within 1/sqrt(in1_features)."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, dtype)

    def reset_parameters(self) -> None:
        """torch's draw: the weight, then the bias, uniform within 1/sqrt(in1_features)."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        out = einsum("...i,oij,...j->...o", input1, self.weight, input2)
        return out if self.bias is None else out + self.bias  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


def _per_dim(value: Any, dims: int) -> Any:
    """torch's ``_ntuple``: an int repeated once per spatial dim, a sequence as a tuple (its
    length checked by the convolution, as torch checks it)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * dims
    return tuple(value)


class _ConvNd(Module):
    dims = 0
    transposed = False

    def __init__(
        self,
        in_channels: int,
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
        super().__init__()
        self._settings(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            padding_mode,
        )
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        _weight_and_bias(self, shape, bias, dtype, out_channels)

    def _settings(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        groups: int,
        padding_mode: str,
    ) -> None:
        """The layer's settings, checked as torch checks them (its weights aside)."""
        name = type(self).__name__
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise DomainError(f"{name}: only padding_mode='zeros' is supported here")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _per_dim(kernel_size, self.dims)
        self.stride = _per_dim(stride, self.dims)
        self.dilation = _per_dim(dilation, self.dims)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _per_dim(padding, self.dims)
        self.groups = groups
        self.padding_mode = padding_mode
        self.output_padding: Any = (0,) * self.dims

    def reset_parameters(self) -> None:
        """torch's draw, as Linear's: kaiming_uniform_(a=sqrt(5)), then the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = init.default_bound(self.weight)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        convolve = (conv1d, conv2d, conv3d)[self.dims - 1]
        return convolve(  # type: ignore[no-any-return]
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        """torch's: the settings that differ from their defaults, in torch's order."""
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
            f", stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):
            text += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    """1-D convolution of (N, C, L) (torch's cross-correlation)."""

    dims = 1


class Conv2d(_ConvNd):
    """2-D convolution of (N, C, H, W) (torch's cross-correlation)."""

    dims = 2


class Conv3d(_ConvNd):
    """3-D convolution of (N, C, D, H, W) (torch's cross-correlation)."""

    dims = 3


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution: conv's adjoint; weight (in_channels, out_channels / groups,
    *kernel_size)."""

    transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if isinstance(padding, str):
            raise ValueError(f'padding="{padding}" is not supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )
        self.output_padding = _per_dim(output_padding, self.dims)

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> Any:
        """torch's: the output_padding that makes the output ``output_size`` (its spatial
        dims, or all of its dims), or the layer's own without one."""
        if output_size is None:
            return self.output_padding
        dims = self.dims
        leading = 2 if input.ndim == dims + 2 else 1
        if len(output_size) == leading + dims:
            output_size = output_size[leading:]
        if len(output_size) != dims:
            raise ValueError(
                f"ConvTranspose{dims}D: for {input.ndim}D input, output_size must have {dims} "
                f"or {leading + dims} elements (got {len(output_size)})"
            )
        sizes = [int(s) for s in output_size]
        stride, padding, dilation = (
            _per_dim(v, dims) for v in (self.stride, self.padding, self.dilation)
        )
        smallest = [
            (input.shape[d + leading] - 1) * stride[d]
            - 2 * padding[d]
            + dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(dims)
        ]
        largest = [low + s - 1 for low, s in zip(smallest, stride)]
        if any(not low <= size <= high for size, low, high in zip(sizes, smallest, largest)):
            raise ValueError(  # torch's words, the sizes as given
                f"requested an output size of {output_size}, but valid sizes range from "
                f"{smallest} to {largest} (for an input of {_torch_size(input.shape[2:])})"
            )
        return tuple(size - low for size, low in zip(sizes, smallest))

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        convolve = (conv_transpose1d, conv_transpose2d, conv_transpose3d)[self.dims - 1]
        return convolve(  # type: ignore[no-any-return]
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self._output_padding(input, output_size),
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution of (N, C, L): conv1d's adjoint."""

    dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution of (N, C, H, W): conv2d's adjoint."""

    dims = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution of (N, C, D, H, W): conv3d's adjoint."""

    dims = 3


def _torch_size(shape: Sequence[int]) -> str:
    return f"torch.Size({list(shape)})"


class Embedding(Module):
    """A lookup table: row ``i`` of weight for index ``i``; weight drawn normal(0, 1)."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise DomainError(
                "Embedding: max_norm, scale_grad_by_freq and sparse are not supported here"
            )
        if padding_idx is not None:
            if padding_idx > 0 and padding_idx >= num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = _empty((num_embeddings, embedding_dim), dtype)
            self.weight.requires_grad_(not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(
        cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None
    ) -> Embedding:
        """An Embedding holding ``embeddings`` (2-D), frozen unless ``freeze=False``."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, _weight=embeddings, _freeze=freeze)

    def reset_parameters(self) -> None:
        """normal_(0, 1), then the padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight.data[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        return embedding(input, self.weight, self.padding_idx)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text


class LayerNorm(Module):
    """Normalize over the last dimensions (``normalized_shape``), then scale and shift."""

    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine(self, self.normalized_shape, elementwise_affine, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return layer_norm(  # type: ignore[no-any-return]
            input, self.normalized_shape, self.weight, self.bias, self.eps
        )

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalize (N, C, *) over groups of channels, then scale and shift per channel."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine(self, (num_channels,), affine, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(  # type: ignore[no-any-return]
            input, self.num_groups, self.weight, self.bias, self.eps
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class _BatchNorm(Module):
    ranks: tuple[int, ...] = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kind = _dtype(dtype)
        _affine(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(_filled((num_features,), kind)))
            self.register_buffer("running_var", Tensor(_filled((num_features,), kind, 1)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches counted."""
        if self.track_running_stats:
            write(self.running_mean, 0)
            write(self.running_var, 1)
            write(self.num_batches_tracked, 0)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self.ranks:
            wanted = " or ".join(f"{rank}D" for rank in self.ranks)
            raise ShapeError(f"expected {wanted} input (got {input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            write(self.num_batches_tracked, self.num_batches_tracked.data + 1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.data)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        channels = input.shape[1] if input.ndim > 1 else 0
        zeros = np.zeros(channels, dtype=input.dtype)
        mean = self.running_mean if self.running_mean is not None else Tensor(zeros)
        var = self.running_var if self.running_var is not None else Tensor(zeros + 1)
        out = batch_norm(input, mean, var, self.weight, self.bias, use_batch, factor, self.eps)
        if (
            use_batch
            and self.running_mean is not None
            and (self.training or not self.track_running_stats)
        ):
            update_running_statistics(input, self.running_mean, self.running_var, factor)
        return out  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L)."""

    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W)."""

    ranks = (4,)


class Dropout(Module):
    """In training, zero each element with probability p (torch's mask, from the generator
    in force) and scale the rest by 1/(1-p); in evaluation, the input."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        if not self.training or self.p == 0:
            return input
        mask = samplers.dropout_mask(in_force(), input.shape, float(self.p), input.dtype)
        return input * Tensor(mask)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    """Flatten dimensions start_dim..end_dim (default: all but the batch dimension)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return flatten(input, self.start_dim, self.end_dim)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return unflatten(input, self.dim, self.unflattened_size)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
