"""The engine's errors: each kind of refusal is a class, so that callers tell them apart by type.

Every class is an ``EngineError`` and also the builtin exception PyTorch raises for the same
refusal (a ``ValueError``, ``IndexError``, ``RuntimeError`` or ``TypeError``), so that code
written against torch catches them as it would there. The messages follow PyTorch's. They
live in base, below the engine, so that ``errors.py`` gives each its hint without importing
the engine; ``gradcli.ops.library`` exports them (``gc.ShapeError``). The engine's refusals
of an operation's operands (``operand_refusal``, ``refuse_complex``) are written here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Reading .grad of a non-leaf: the engine's warning
NONLEAF_GRAD_WARNING = (
    "Reading .grad of a tensor that is not a leaf: backward() does not populate the .grad of "
    "non-leaf tensors, so it is None. Call .retain_grad() on the tensor before backward() to "
    "keep its gradient."
)

# torch's words: a second backward reached a node whose saved tensors the first one freed
FREED_GRAPH_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class EngineError(Exception):
    """An operation or an autograd call refused what it was given."""


class ShapeError(EngineError, ValueError):
    """An operation was given operands whose shapes do not fit together, a dimension or an
    index beyond a tensor's shape, or a size that does not fit its elements."""


class DomainError(EngineError, ValueError):
    """An operation was given a value outside what it accepts: a probability outside [0, 1],
    a zero step, an unknown reduction, a missing bound."""


class IndexDomainError(DomainError, IndexError):
    """An index that is not one: a class index outside [0, classes), a tensor of fractions used
    as indices. An ``IndexError``, as in PyTorch."""


class GradError(EngineError, RuntimeError):
    """An autograd call broke one of its rules: backward through a freed graph, grad of an input
    the outputs do not use or that does not require grad, requires_grad on a non-leaf."""


class SeedShapeError(GradError, ShapeError):
    """The gradient given to ``backward`` or ``grad`` for an output is not of its shape
    (torch's autograd engine refuses it with a ``RuntimeError``)."""


class ScalarOutputError(GradError):
    """A gradient was asked of a non-scalar output without the vector it needs
    (``backward()`` without ``gradient``), or a Hessian of a non-scalar output."""


class ComplexOutputError(ScalarOutputError):
    """A gradient was asked of a complex scalar without the vector it needs: torch creates
    the implicit gradient only for real outputs."""


class GradcheckError(GradError):
    """``gradcheck`` found gradients that differ from finite differences (torch's
    ``GradcheckError``, a RuntimeError)."""


class DtypeError(EngineError, TypeError):
    """A dtype the engine does not compute in, or a tensor of a non-floating dtype asked to
    require grad."""


class ValueKindError(EngineError, TypeError):
    """A function was given a value of a kind it does not take: not a tensor, or not a tuple of
    tensors, where torch's function asks for one. A ``TypeError``, as in PyTorch."""


class UnsupportedError(EngineError, NotImplementedError):
    """A combination of options that torch does not implement either (a
    ``NotImplementedError``, as in PyTorch): a forward-mode Jacobian with ``create_graph``."""


class AssertedError(EngineError, AssertionError):
    """An argument refused where torch's Python code refuses it with ``assert`` (an
    ``AssertionError``, as in PyTorch): an unknown Jacobian strategy."""


class SizeError(EngineError, RuntimeError):
    """An operation would make a value larger than --max-elements or --max-memory allow
    (checked before it is allocated). ``hint`` says which option raises the limit. A
    ``RuntimeError``, as torch's failure to allocate is."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


# The engine's refusals of an operation's operands (``engine/tensor.py``'s ``apply``): ``prim``
# an entry of the op table (its ``name`` and ``extra``), the operands tensors (their ``dtype``
# and ``shape``).


def operand_refusal(prim: Any, tensors: Sequence[Any], exc: Exception) -> EngineError:
    """The engine's error for numpy's refusal of an operation's operands."""
    if isinstance(exc, TypeError):  # of these dtypes (the negation of a boolean)
        dtypes = " and ".join(str(t.dtype) for t in tensors)
        refusal = prim.extra.get("booleans", f"{prim.name} is not defined for {dtypes}: {exc}")
        return DtypeError(refusal)
    shapes = " and ".join(str(t.shape) for t in tensors)
    return ShapeError(f"{prim.name}: cannot apply to shapes {shapes}: {exc}")


def refuse_complex(prim: Any, tensors: Sequence[Any]) -> None:
    """Refuse complex operands of an entry that is not defined for them."""
    for t in tensors:
        if t.dtype.kind == "c":
            raise DtypeError(complex_refusal(prim, t.dtype))


def complex_refusal(prim: Any, dtype: Any) -> str:
    """The refusal of a complex operand (of ``dtype``) by an entry not defined for them."""
    return (
        f"{prim.name} is not defined for complex tensors (got {dtype}), as in torch; take "
        ".real, .imag, .abs() or .angle() of the complex value first"
    )
