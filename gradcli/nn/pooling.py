"""torch.nn's pooling modules: ``MaxPool1d``/``2d``/``3d`` and ``AvgPool1d``/``2d``/``3d``
(the engine's ``max_pool*d``/``avg_pool*d``; each setting an int or one per dim), printed as
torch prints them: each setting as it was given (AvgPool1d's as a tuple, as torch keeps them)."""

from __future__ import annotations

from typing import Any

from ..base.engine_errors import DomainError
from ..engine.tensor import Tensor
from ..ops.library import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d
from .module import Module


class _MaxPoolNd(Module):
    """The largest element of each window."""

    dims = 0

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        if return_indices:
            raise DomainError(f"{type(self).__name__}: return_indices is not supported here")
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        pool = (max_pool1d, max_pool2d, max_pool3d)[self.dims - 1]
        return pool(  # type: ignore[no-any-return]
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """The largest element of each window of (N, C, L)."""

    dims = 1


class MaxPool2d(_MaxPoolNd):
    """The largest element of each window of (N, C, H, W)."""

    dims = 2


class MaxPool3d(_MaxPoolNd):
    """The largest element of each window of (N, C, D, H, W)."""

    dims = 3


def _single(value: Any) -> Any:
    """torch's ``_single``: a sequence as a tuple, a number as a tuple of it."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class _AvgPoolNd(Module):
    """The mean of each window."""

    dims = 0

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        if divisor_override is not None:
            raise DomainError(f"{type(self).__name__}: divisor_override is not supported here")
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        if self.dims == 1:  # torch's AvgPool1d keeps its settings as tuples
            self.kernel_size, self.stride = _single(kernel_size), _single(self.stride)
            self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        pool = (avg_pool1d, avg_pool2d, avg_pool3d)[self.dims - 1]
        return pool(  # type: ignore[no-any-return]
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """The mean of each window of (N, C, L)."""

    dims = 1


class AvgPool2d(_AvgPoolNd):
    """The mean of each window of (N, C, H, W)."""

    dims = 2


class AvgPool3d(_AvgPoolNd):
    """The mean of each window of (N, C, D, H, W)."""

    dims = 3
