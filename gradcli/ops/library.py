"""The library: what ``import gradcli as gc`` gives, the engine (``gradcli/engine``: numpy
tensors with PyTorch's autograd semantics) and the operations (``gradcli/ops``) in one
namespace. Importing it fills the op table, the family modules declaring their entries.

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
from ..engine import borrowed as _borrowed
from ..engine.creation import (
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
from ..engine.functional import hessian, hvp, jacobian, jvp, vjp
from ..engine.tensor import (
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
from .table import OPS

# The op table is filled in the order the families are first imported (each after those it
# imports): this order, which the entries had when they were declared in gradcli/engine.
# isort: off
from . import primitives as _primitives
from .elementwise import elementary as _elementary  # noqa: F401
from .arrays import rearranging as _rearranging
from .elementwise import dtypes as _dtypes  # noqa: F401 - declares the changes of dtype (x.long(), x.to(...))
from .reductions import reductions as _reductions  # noqa: F401
from .numerics import special as _special  # noqa: F401
from .elementwise import pointwise as _pointwise  # noqa: F401 - declares the element-wise functions
from .elementwise import activations as _activations  # noqa: F401 - declares relu, gelu, softplus, ...
from .rules import array_rules as _array_rules  # noqa: F401 - the reverse rules on float64 arrays
from .elementwise import complexes as _complexes  # noqa: F401 - declares complex, real, imag, conj, ...
from .numerics import product_order as _product_order  # noqa: F401
from .linalg import matrix_product as _matrix_product  # noqa: F401
from .nn import composites as _composites  # noqa: F401 - declares the composite operations
from .numerics import moments as _moments  # noqa: F401
from .arrays import repeating as _repeating  # noqa: F401 - declares repeat, tile, pad, unflatten, ...
from .reductions import statistics as _statistics  # noqa: F401 - declares the statistics and scans
from .numerics import ties as _ties  # noqa: F401
from .reductions import selection as _selection  # noqa: F401 - declares max/min, sort, split, ...
from .arrays import shapes as _shapes  # noqa: F401 - declares the shape operations
from .linalg import linalg as _linalg  # noqa: F401 - declares the linear algebra operations
from .nn import layers as _layers  # noqa: F401 - declares the layers (linear, layer_norm, ...)
from .nn import convolution as _convolution  # noqa: F401 - declares conv1d, conv2d, ...
from .linalg import decompositions as _decompositions  # noqa: F401 - declares eigh, qr, svd, slogdet
from .nn import dropout as _dropout  # declares dropout
from .linalg import einsum as _einsum  # noqa: F401 - declares einsum
from .arrays import indexing as _indexing  # noqa: F401 - declares indexing by tensors, gather, scatter
from .arrays import likes as _likes  # noqa: F401 - declares zeros_like, ones_like, full_like
from .elementwise import logical as _logical  # noqa: F401 - declares comparisons, logical operations, masks
from .nn import losses as _losses  # noqa: F401 - declares the losses
from .linalg import matrix_power as _matrix_power  # noqa: F401 - declares matrix_power
from . import naming as _naming
from . import methods as _methods
from .nn import pooling as _pooling  # noqa: F401 - declares max_pool2d, avg_pool2d, ...
from . import several as _several
from .linalg import spectra as _spectra  # noqa: F401 - declares svdvals, eigvalsh, pinv
# isort: on

dropout_seed = _dropout.dropout_seed


_borrowed.lend(stack=_rearranging.stack, cat=_rearranging.cat, sum_to=_primitives.sum_to)
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
