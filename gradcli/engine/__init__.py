"""gradcli's autograd engine: numpy tensors with PyTorch's autograd semantics.

Every operation of the op table (``gradcli/ops``) with a call is a function of this module
under its own name (``gc.sin``, ``gc.matmul``, ``gc.cross_entropy``) and, where the table
says so, a method and an operator of ``Tensor``. One with several results returns them all,
as torch's does (``values, indices = gc.max(x, 1)``: ``several.py``).
"""

from typing import Any as _Any

from ..base.engine_errors import (
    ComplexOutputError,
    DomainError,
    DtypeError,
    EngineError,
    GradcheckError,
    GradError,
    IndexDomainError,
    ScalarOutputError,
    ShapeError,
    SizeError,
    UnsupportedError,
    ValueKindError,
)
from ..ops.table import OPS
from . import activations as _activations  # noqa: F401 - declares relu, gelu, softplus, ...
from . import array_rules as _array_rules  # noqa: F401 - the reverse rules on float64 arrays
from . import complexes as _complexes  # noqa: F401 - declares complex, real, imag, conj, ...
from . import composites as _composites  # noqa: F401 - declares the composite operations
from . import convolution as _convolution  # noqa: F401 - declares conv1d, conv2d, ...
from . import decompositions as _decompositions  # noqa: F401 - declares eigh, qr, svd, slogdet
from . import dropout as _dropout  # noqa: F401 - declares dropout
from . import dtypes as _dtypes  # noqa: F401 - declares the changes of dtype (x.long(), x.to(...))
from . import einsum as _einsum  # noqa: F401 - declares einsum
from . import indexing as _indexing  # noqa: F401 - declares indexing by tensors, gather, scatter
from . import layers as _layers  # noqa: F401 - declares the layers (linear, layer_norm, ...)
from . import likes as _likes  # noqa: F401 - declares zeros_like, ones_like, full_like
from . import linalg as _linalg  # noqa: F401 - declares the linear algebra operations
from . import logical as _logical  # noqa: F401 - declares comparisons, logical operations, masks
from . import losses as _losses  # noqa: F401 - declares the losses
from . import matrix_power as _matrix_power  # noqa: F401 - declares matrix_power
from . import methods as _methods
from . import naming as _naming
from . import pointwise as _pointwise  # noqa: F401 - declares the element-wise functions
from . import pooling as _pooling  # noqa: F401 - declares max_pool2d, avg_pool2d, ...
from . import repeating as _repeating  # noqa: F401 - declares repeat, tile, pad, unflatten, ...
from . import selection as _selection  # noqa: F401 - declares max/min, sort, split, ...
from . import several as _several
from . import shapes as _shapes  # noqa: F401 - declares the shape operations
from . import spectra as _spectra  # noqa: F401 - declares svdvals, eigvalsh, pinv
from . import statistics as _statistics  # noqa: F401 - declares the statistics and scans
from .creation import (
    arange,
    complex64,
    complex128,
    eye,
    float32,
    float64,
    full,
    int32,
    int64,
    linspace,
    long,
    manual_seed,
    ones,
    rand,
    randn,
    tensor,
    zeros,
)
from .dropout import dropout_seed
from .functional import hessian, hvp, jacobian, jvp, vjp
from .tensor import (
    NonfiniteTangent,
    Tensor,
    backward,
    default_dtype,
    grad,
    no_grad,
    set_grad_enabled,
    watch_nonfinite,
    watched_nonfinite,
)

_naming.name_calls()
_methods.attach()
globals().update({name: op.call for name, op in OPS.items() if op.call is not None})
# torch's other names of an operation (gc.clip, gc.arctan2), as the language takes them
_ALIASES = {alias: op.call for op in OPS.values() if op.call is not None for alias in op.aliases}
globals().update(_ALIASES)
for _op in OPS.values():  # values, indices = gc.max(x, 1), as torch's
    if _several.several(_op):
        globals()[_op.name] = _several.torch_like(_op)
        for _method in _op.methods:
            setattr(Tensor, _method, _several.torch_like(_op))
# the entries the engine applies itself (those with a forward), by name
PRIMITIVES = {name: op for name, op in OPS.items() if op.forward is not None}


def __getattr__(name: str) -> _Any:  # the table's functions are set above; tell type checkers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# What the package exports: a static list, so that type checkers see it, and the table's
# functions. (Not every name of the module: its submodules, `errors` among them, would be
# star-imported into `gradcli` and shadow `gradcli.base.errors`.)
__all__ = [
    "OPS",
    "PRIMITIVES",
    "DomainError",
    "DtypeError",
    "EngineError",
    "GradError",
    "GradcheckError",
    "IndexDomainError",
    "ScalarOutputError",
    "ComplexOutputError",
    "ShapeError",
    "SizeError",
    "UnsupportedError",
    "ValueKindError",
    "NonfiniteTangent",
    "Tensor",
    "arange",
    "backward",
    "dropout_seed",
    "default_dtype",
    "eye",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "int32",
    "int64",
    "long",
    "full",
    "grad",
    "hessian",
    "hvp",
    "jacobian",
    "jvp",
    "linspace",
    "manual_seed",
    "no_grad",
    "ones",
    "rand",
    "randn",
    "set_grad_enabled",
    "tensor",
    "vjp",
    "watch_nonfinite",
    "watched_nonfinite",
    "zeros",
]
__all__ += [name for name, op in OPS.items() if op.call is not None]
__all__ += list(_ALIASES)
