"""torch.nn's activation modules: each the engine's function of the same name, with its
settings as attributes and torch's repr (``ReLU()``, ``LeakyReLU(negative_slope=0.01)``,
``Softmax(dim=1)``)."""

from __future__ import annotations

from ..engine.tensor import Tensor
from ..ops.library import (
    celu,
    elu,
    gelu,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softsign,
    tanh,
)
from .module import Module


def _inplace(inplace: bool, first: bool = False) -> str:
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class _Plain(Module):
    """An activation without settings but ``inplace`` (which computes the same here)."""

    function = staticmethod(relu)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return _inplace(self.inplace, first=True)


class ReLU(_Plain):
    """max(0, x)."""

    function = staticmethod(relu)


class ReLU6(_Plain):
    """min(max(0, x), 6)."""

    function = staticmethod(relu6)


class SiLU(_Plain):
    """x * sigmoid(x)."""

    function = staticmethod(silu)


class Mish(_Plain):
    """x * tanh(softplus(x))."""

    function = staticmethod(mish)


class Hardswish(_Plain):
    """x * relu6(x + 3) / 6."""

    function = staticmethod(hardswish)


class Hardsigmoid(_Plain):
    """relu6(x + 3) / 6."""

    function = staticmethod(hardsigmoid)


class SELU(_Plain):
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))."""

    function = staticmethod(selu)


class _Stateless(Module):
    """An activation without any settings."""

    function = staticmethod(tanh)

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input)  # type: ignore[no-any-return]


class Tanh(_Stateless):
    """tanh(x)."""

    function = staticmethod(tanh)


class Sigmoid(_Stateless):
    """1 / (1 + exp(-x))."""

    function = staticmethod(sigmoid)


class LogSigmoid(_Stateless):
    """log(sigmoid(x))."""

    function = staticmethod(logsigmoid)


class Softsign(_Stateless):
    """x / (1 + |x|)."""

    function = staticmethod(softsign)


class LeakyReLU(Module):
    """x where positive, negative_slope * x elsewhere."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return leaky_relu(input, self.negative_slope)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace(self.inplace)}"


class ELU(Module):
    """x where positive, alpha * (exp(x) - 1) elsewhere."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return elu(input, self.alpha)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace)}"


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def forward(self, input: Tensor) -> Tensor:
        return celu(input, self.alpha)  # type: ignore[no-any-return]


class GELU(Module):
    """x * Phi(x) (approximate='tanh': its tanh approximation)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return gelu(input, approximate=self.approximate)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta (linear above threshold)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return softplus(input, self.beta, self.threshold)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return hardtanh(input, self.min_val, self.max_val)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace(self.inplace)}"


class _AlongDim(Module):
    function = staticmethod(softmax)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        dim = self.dim
        if dim is None:  # torch's legacy choice of a dimension, with its warning
            dim = 0 if input.ndim in (0, 1, 3) else 1
        return self.function(input, dim)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    """exp(x) / sum(exp(x)) along ``dim``."""

    function = staticmethod(softmax)


class Softmin(_AlongDim):
    """softmax(-x) along ``dim``."""

    function = staticmethod(softmin)


class LogSoftmax(_AlongDim):
    """log(softmax(x)) along ``dim``."""

    function = staticmethod(log_softmax)


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return glu(input, self.dim)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
