"""The library's functions of the operations with several results, as torch's return them.

A program picks one result of such an operation per name (its ``output`` parameter, see
``selection``); a library caller writes PyTorch: ``values, indices = gc.max(x, 1)``,
``gc.split(x, 2)`` a tuple, ``gc.meshgrid(a, b)``. ``torch_like(op)`` is the entry's call
that way: without ``output`` it gives every result, a tuple, or a named tuple (``.values``,
``.indices``) where torch's is one; with ``output`` it is the entry's call.
"""

from __future__ import annotations

import functools
import inspect
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from .reductions.selection import results
from .table import Op


def several(op: Op) -> bool:
    """Whether ``op`` has several results (in some of its forms)."""
    return op.call is not None and ("count" in op.extra or bool(op.extra.get("outputs")))


def torch_like(op: Op) -> Callable[..., Any]:
    """``op``'s call, returning every result of a call that has several (see the module)."""
    call = op.call
    assert call is not None  # see several()

    @functools.wraps(call)
    def function(*args: Any, **kwargs: Any) -> Any:
        if "output" in kwargs:
            return call(*args, **kwargs)
        signature, names, named = _form(op)
        if op.extra.get("varargs") and args and not isinstance(args[0], (list, tuple)):
            args = (list(args),)  # meshgrid(a, b) is meshgrid([a, b])
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        unless = op.extra.get("several_unless_none")  # max(x) is one tensor, max(x, 1) two
        if unless is not None:
            given = bound.arguments[unless]
            if given is None or isinstance(given, bool) or not isinstance(given, int):
                return call(*bound.args, **bound.kwargs)  # one result (or max(x, other))
        found = results(op, [bound.arguments[name] for name in names])
        return tuple(found) if named is None else named(*found)

    return function


@functools.cache
def _form(op: Op) -> tuple[inspect.Signature, list[str], Any]:
    """The signature of ``op``'s call, its parameters but ``output``, and the named tuple of
    its results (None: a plain tuple); made at the first call, not as gradcli starts."""
    assert op.call is not None  # see several()
    signature = inspect.signature(op.call)
    names = [name for name in signature.parameters if name != "output"]
    fields = op.extra.get("outputs") or ()
    plain = not fields or op.extra.get("plain")
    named = None if plain else namedtuple(op.extra.get("return_type", op.name), fields)
    return signature, names, named
