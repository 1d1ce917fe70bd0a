"""The functions a program may call, by their PyTorch names, with their signatures.

The validator checks calls against these signatures (unknown functions and keywords are
errors); the interpreter calls ``function.call`` with the arguments in signature order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import engine as gc

REQUIRED = object()

# Parameter kinds: what an argument may be.
TENSOR = "tensor"  # any expression
TENSORS = "tensors"  # a list of expressions: stack([a, b])
INT = "int"  # a whole number, possibly negative (a dim)
OPT_INT = "int or None"
NUMBER = "number"
OPT_NUMBER = "number or None"
BOOL = "True or False"
REDUCTION = "'mean', 'sum' or 'none'"
SIZES = "sizes"  # the rest of the positional arguments, whole numbers: reshape(x, 2, 3)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: object = REQUIRED


@dataclass(frozen=True)
class Function:
    """A callable of the language: its name, parameters and the engine function behind it."""

    name: str
    params: tuple[Param, ...]
    call: Callable
    summary: str

    def signature(self) -> str:
        parts = []
        for p in self.params:
            if p.kind == SIZES:
                parts.append(f"*{p.name}")
            elif p.default is REQUIRED:
                parts.append(p.name)
            else:
                parts.append(f"{p.name}={p.default!r}")
        return f"{self.name}({', '.join(parts)})"


FUNCTIONS: dict[str, Function] = {}
ALIASES = {"bce_with_logits": "binary_cross_entropy_with_logits", "bce": "binary_cross_entropy"}


def _define(name: str, params: tuple[Param, ...], call: Callable, summary: str) -> None:
    FUNCTIONS[name] = Function(name, params, call, summary)


_X = (Param("input", TENSOR),)
_XY = (Param("input", TENSOR), Param("other", TENSOR))
_REDUCE = (Param("input", TENSOR), Param("dim", OPT_INT, None), Param("keepdim", BOOL, False))
_LOSS = (Param("input", TENSOR), Param("target", TENSOR), Param("reduction", REDUCTION, "mean"))

for _name, _summary in {
    "neg": "-x",
    "exp": "e to the x",
    "log": "natural logarithm",
    "log1p": "log(1 + x), accurate near 0",
    "expm1": "exp(x) - 1, accurate near 0",
    "sqrt": "square root",
    "abs": "absolute value (derivative 0 at 0)",
    "sign": "-1, 0 or 1",
    "sin": "sine",
    "cos": "cosine",
    "tan": "tangent",
    "asin": "arcsine",
    "acos": "arccosine",
    "atan": "arctangent",
    "sinh": "hyperbolic sine",
    "cosh": "hyperbolic cosine",
    "tanh": "hyperbolic tangent",
    "sigmoid": "1 / (1 + exp(-x))",
    "relu": "max(x, 0) (derivative 0 at 0)",
    "softplus": "log(1 + exp(x))",
    "erf": "error function",
    "reciprocal": "1 / x",
    "flatten": "all elements as a vector",
}.items():
    _define(_name, _X, getattr(gc, _name), _summary)

for _name, _summary in {
    "add": "a + b",
    "sub": "a - b",
    "mul": "a * b (element-wise)",
    "div": "a / b",
    "pow": "a ** b",
    "matmul": "a @ b, with PyTorch's rules for vectors",
    "maximum": "element-wise maximum (ties share the gradient)",
    "minimum": "element-wise minimum (ties share the gradient)",
    "dot": "inner product of two vectors",
}.items():
    _define(_name, _XY, getattr(gc, _name), _summary)

for _name, _summary in {
    "sum": "sum of all elements, or along dim",
    "mean": "mean of all elements, or along dim",
    "prod": "product of all elements, or along dim",
    "amax": "largest element (ties share the gradient)",
    "amin": "smallest element (ties share the gradient)",
    "logsumexp": "log(sum(exp(x))), computed stably",
}.items():
    _define(_name, _REDUCE, getattr(gc, _name), _summary)

_define(
    "norm",
    (
        Param("input", TENSOR),
        Param("p", NUMBER, 2),
        Param("dim", OPT_INT, None),
        Param("keepdim", BOOL, False),
    ),
    lambda x, p, dim, keepdim: gc.norm(x, p, dim, keepdim),
    "p-norm (2 by default)",
)
for _name in ("softmax", "log_softmax"):
    _define(
        _name,
        (Param("input", TENSOR), Param("dim", OPT_INT, None)),
        getattr(gc, _name),
        f"{_name.replace('_', ' ')} along dim (the only dim of a vector by default)",
    )
_define(
    "clamp",
    (Param("input", TENSOR), Param("min", OPT_NUMBER, None), Param("max", OPT_NUMBER, None)),
    gc.clamp,
    "limit to [min, max] (gradient 1 inside, bounds included)",
)
_define(
    "where",
    (Param("condition", TENSOR), Param("input", TENSOR), Param("other", TENSOR)),
    gc.where,
    "input where condition is non-zero, else other",
)
_define(
    "transpose",
    (Param("input", TENSOR), Param("dim0", OPT_INT, None), Param("dim1", OPT_INT, None)),
    gc.transpose,
    "matrix transpose, or swap dim0 and dim1",
)
_define(
    "reshape",
    (Param("input", TENSOR), Param("shape", SIZES)),
    lambda x, *shape: gc.reshape(x, *shape),
    "same elements, new shape (one size may be -1)",
)
_define(
    "unsqueeze",
    (Param("input", TENSOR), Param("dim", INT)),
    gc.unsqueeze,
    "insert a dimension of size 1",
)
_define(
    "squeeze",
    (Param("input", TENSOR), Param("dim", OPT_INT, None)),
    gc.squeeze,
    "remove dimensions of size 1",
)
_define(
    "stack",
    (Param("tensors", TENSORS), Param("dim", INT, 0)),
    gc.stack,
    "join along a new dimension: stack([a, b])",
)
_define(
    "cat",
    (Param("tensors", TENSORS), Param("dim", INT, 0)),
    gc.cat,
    "join along an existing dimension: cat([a, b])",
)
for _name, _summary in {
    "binary_cross_entropy_with_logits": "sigmoid + binary cross-entropy, stable "
    "(alias bce_with_logits)",
    "binary_cross_entropy": "binary cross-entropy of probabilities (alias bce)",
    "mse_loss": "mean squared error",
    "cross_entropy": "softmax cross-entropy; target: class indices or probabilities",
}.items():
    _define(_name, _LOSS, getattr(gc, _name), _summary)


def lookup(name: str) -> Function | None:
    """The function called ``name`` (or its alias), or None."""
    return FUNCTIONS.get(ALIASES.get(name, name))
