"""The functions a program may call: the entries of the op table that have a signature.

The validator checks calls against their signatures (unknown functions and keywords are
errors); the interpreter calls ``function.call`` with the arguments in signature order.
"""

from __future__ import annotations

from .. import engine as _engine  # noqa: F401 - importing the engine fills the op table
from ..ops.table import (  # noqa: F401 - the parameter kinds, for the validator and parser
    BOOL,
    INT,
    KL_REDUCTION,
    NUMBER,
    OPS,
    OPT_INT,
    OPT_NUMBER,
    REDUCTION,
    REQUIRED,
    SIZES,
    TENSOR,
    TENSORS,
    Op,
    Param,
)

Function = Op

FUNCTIONS: dict[str, Op] = {name: op for name, op in OPS.items() if op.in_language}
ALIASES: dict[str, str] = {alias: op.name for op in FUNCTIONS.values() for alias in op.aliases}
# The operators, as the table writes them (+, **, -x for negation, [] for indexing).
OPERATORS: dict[str, Op] = {op.operator: op for op in OPS.values() if op.operator is not None}


def lookup(name: str) -> Op | None:
    """The function called ``name`` (or its alias), or None."""
    return FUNCTIONS.get(ALIASES.get(name, name))
