"""Tensor operators and methods (``a + b``, ``x.sum()``, ``x[0]``), all through the primitives."""

from __future__ import annotations

from . import composites as C
from . import primitives as P
from .tensor import Tensor


def _swap(op):
    return lambda self, other: op(other, self)


_METHODS = {
    "__add__": P.add,
    "__radd__": _swap(P.add),
    "__sub__": P.sub,
    "__rsub__": _swap(P.sub),
    "__mul__": P.mul,
    "__rmul__": _swap(P.mul),
    "__truediv__": P.div,
    "__rtruediv__": _swap(P.div),
    "__pow__": P.pow,
    "__rpow__": _swap(P.pow),
    "__matmul__": P.matmul,
    "__rmatmul__": _swap(P.matmul),
    "__neg__": P.neg,
    "__pos__": lambda self: self,
    "__abs__": P.abs,
    "__getitem__": P.getitem,
    "add": P.add,
    "sub": P.sub,
    "mul": P.mul,
    "div": P.div,
    "pow": P.pow,
    "matmul": P.matmul,
    "neg": P.neg,
    "sum": P.sum,
    "mean": P.mean,
    "prod": P.prod,
    "amax": P.amax,
    "amin": P.amin,
    "logsumexp": P.logsumexp,
    "norm": P.norm,
    "softmax": P.softmax,
    "log_softmax": P.log_softmax,
    "transpose": P.transpose,
    "t": lambda self: P.transpose(self),
    "T": property(lambda self: P.transpose(self)),
    "reshape": P.reshape,
    "view": P.reshape,
    "expand": lambda self, *shape: P.expand(
        self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    ),
    "unsqueeze": C.unsqueeze,
    "squeeze": C.squeeze,
    "flatten": C.flatten,
    "clamp": P.clamp,
    "dot": C.dot,
}
for _name in (
    "exp log log1p expm1 sqrt abs sign sin cos tan asin acos atan sinh cosh tanh "
    "sigmoid relu softplus erf reciprocal"
).split():
    _METHODS[_name] = getattr(P, _name)

for _name, _function in _METHODS.items():
    setattr(Tensor, _name, _function)
