"""The functions a program may call: the entries of the op table that have a signature.

The validator checks calls against their signatures (unknown functions and keywords are
errors); the interpreter calls ``function.call`` with the arguments in signature order.
"""

from __future__ import annotations

from ..ops import library as _engine  # noqa: F401 - importing the engine fills the op table
from ..ops.table import (  # noqa: F401 - the parameter kinds, for the validator and parser
    APPROXIMATE,
    APPROXIMATIONS,
    BOOL,
    DIMS,
    DTYPE,
    DTYPE_NAMES,
    ELEMENTS,
    EQUATION,
    INDEXING,
    INDEXINGS,
    INT,
    INTS,
    KL_REDUCTION,
    KL_REDUCTIONS,
    NORM_ORD,
    NUMBER,
    OPERAND_KINDS,
    OPS,
    OPT_DTYPE,
    OPT_INT,
    OPT_NUMBER,
    OPT_TENSOR,
    OUTPUT,
    PAD_MODE,
    PAD_MODES,
    QR_MODE,
    QR_MODES,
    REDUCTION,
    REDUCTIONS,
    REQUIRED,
    ROUNDING_MODE,
    ROUNDING_MODES,
    SECTIONS,
    SIZES,
    TENSOR,
    TENSORS,
    UPLO,
    UPLOS,
    VAR_TENSORS,
    Op,
    Param,
)

Function = Op

FUNCTIONS: dict[str, Op] = {name: op for name, op in OPS.items() if op.in_language}
ALIASES: dict[str, str] = {alias: op.name for op in FUNCTIONS.values() for alias in op.aliases}
# The operators, as the table writes them (+, **, -x for negation, [] for indexing).
OPERATORS: dict[str, Op] = {op.operator: op for op in OPS.values() if op.operator is not None}
# What a program's IR may call: the functions, and the operations the language writes
# another way (y[0] = ... is setitem).
PROGRAM_OPS = frozenset(FUNCTIONS) | {op.name for op in OPERATORS.values()}
# PyTorch's tensor methods (x.sum(0) is sum(x, 0)) and properties (x.T), by name.
METHODS: dict[str, Op] = {m: op for op in FUNCTIONS.values() for m in op.methods if m[:2] != "__"}
# methods that are a call with a fixed last argument: x.long() is to(x, 'int64')
METHODS.update({m: op for op in FUNCTIONS.values() for m in op.extra.get("dtype_methods", {})})
PROPERTIES: dict[str, Op] = {
    op.extra["property"]: op for op in FUNCTIONS.values() if "property" in op.extra
}
# PyTorch's modules whose functions are the language's: torch.sin(x) and F.relu(x) are sin(x)
# and relu(x), as the usual imports name them.
TORCH_MODULES = frozenset(
    {"torch", "torch.nn.functional", "nn.functional", "F", "torch.special", "torch.linalg"}
)


def lookup(name: str) -> Op | None:
    """The function called ``name`` (or its alias), or None."""
    return FUNCTIONS.get(ALIASES.get(name, name))
