"""Which arguments a rule reads, from its CPython bytecode.

The element-wise factories (``primitives.py``) ask it whether a rule reads ``out``, so that the
reverse pass makes no tensor of an output that no rule needs.
"""

from __future__ import annotations

import dis
from collections.abc import Callable
from typing import Any


def reads_argument(function: Callable[..., Any], name: str) -> bool:
    """Whether ``function``'s code reads its argument ``name`` (or a function it defines
    does): the factories tell the engine which rules never read ``out``, so that the reverse
    pass makes no tensor of it. A function without code of its own is taken to read it.

    It runs for every element-wise entry as gradcli starts, so it reads the bytecode's
    (operation, argument) pairs itself rather than through ``dis.get_instructions`` (a tenth
    of the time), and where no argument is extended finds each pair with ``bytes.find``
    rather than by a loop over the operations. Any access to the local ``name`` counts, and
    so does a pair of locals that may pack it (Python 3.13's LOAD_FAST_LOAD_FAST): a rule
    taken to read ``out`` only gets a tensor it may not need."""
    code = getattr(function, "__code__", None)
    if code is None or name in code.co_cellvars:
        return True
    if name not in code.co_varnames:
        return False
    index = code.co_varnames.index(name)
    raw = code.co_code
    if index < 256 and not _PACKED_LOCALS and _EXTENDED_ARG not in raw[::2]:
        # every argument is its one byte: look for the pairs themselves, at even offsets
        return any(_has_instruction(raw, operation, index) for operation in _LOCAL_ACCESS)
    extended = 0  # the high bits EXTENDED_ARG gives the next operation's argument
    for operation, byte in zip(raw[::2], raw[1::2]):
        if operation == _EXTENDED_ARG:
            extended = (extended | byte) << 8
            continue
        argument, extended = extended | byte, 0
        if operation in _LOCAL_ACCESS and argument == index:
            return True
        if operation in _PACKED_LOCALS and index in (argument >> 4, argument & 15):
            return True
    return False


def _has_instruction(raw: bytes, operation: int, argument: int) -> bool:
    """Whether the bytecode ``raw``, which has no EXTENDED_ARG, holds the instruction
    (``operation``, ``argument``)."""
    pair = bytes((operation, argument))
    at = raw.find(pair)
    while at != -1:
        if at % 2 == 0:
            return True
        at = raw.find(pair, at + 1)
    return False


_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
# the operations on a local variable, by the variable's index; and those on two, packed
_LOCAL_ACCESS = frozenset(dis.haslocal)
_PACKED_LOCALS = frozenset(
    dis.opmap[name]
    for name in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST")
    if name in dis.opmap
)
