"""torch.nn's pooling modules: ``MaxPool2d`` and ``AvgPool2d`` over (N, C, H, W) (the
engine's ``max_pool2d``/``avg_pool2d``; each setting an int or one per dim), printed as torch
prints them: each setting as it was given."""

from __future__ import annotations

from typing import Any

from ..base.engine_errors import DomainError
from ..engine import avg_pool2d, max_pool2d
from ..engine.tensor import Tensor
from .module import Module


class MaxPool2d(Module):
    """The largest element of each window."""

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
            raise DomainError("MaxPool2d: return_indices is not supported here")
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return max_pool2d(  # type: ignore[no-any-return]
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class AvgPool2d(Module):
    """The mean of each window."""

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
            raise DomainError("AvgPool2d: divisor_override is not supported here")
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool2d(  # type: ignore[no-any-return]
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
