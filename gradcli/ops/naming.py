"""The names torch gives the nodes of calls that the engine's primitives do not name alone.

torch names a node by the function a program called, where the engine records the node of
the primitive that computed the result: ``x.t()``, ``x.T`` and ``x.transpose(0, 1)`` are one
primitive (transpose) but three nodes in torch (``TBackward0``, ``PermuteBackward0``,
``TransposeBackward0``), and an operation built from others (``flip``, ``cummax``) ends in the
node of its last primitive. Two fields of an entry say torch's name, and this module makes the
calls give it to the node they make:

- ``backward_name`` of an entry built from others (no forward) or reduced by others (a loss's
  ``reduction``), and ``extra["built_name"]`` of a primitive whose call builds some results
  from other primitives (clamp's tensor bounds):
  the library's function, the entry's ``call`` and its methods name the node they end in;
- ``extra["spellings"]``: a method or property -> torch's node for that spelling
  (``{"t": "TBackward0", "T": "PermuteBackward0"}``).

Only a node made by the call is named: ``x.flatten()`` of a vector makes none and leaves
``x``'s own. Where torch's call makes a view even of an input it leaves as it is
(``x.reshape(x.shape)``, ``x.squeeze()`` of no dim of size 1, ``v.t()`` of a vector),
``extra["view"]`` says so, and the call gives a new node there too, as torch's does (the
engine's own uses of these operations, in the rules, make none).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ..engine import tensor as _tensor
from ..engine.tensor import Tensor
from .arrays.rearranging import view
from .table import OPS, Op


def name_calls() -> None:
    """Make the call of every entry that names its node by its arguments name it (see the
    module); run once, before the calls become the library's functions and methods."""
    for op in OPS.values():
        if op.call is None:
            continue
        namer = op.extra["built_name"] if "built_name" in op.extra else None
        if any(p.name == "reduction" for p in op.params):  # bce's: the mean of its elements'
            namer = op.backward_name
        if op.forward is None and op.backward_name:
            namer = op.backward_name
        if op.extra.get("view"):
            namer = op.backward_name if namer is None else namer
        if namer is not None:
            op.call = _naming(op, op.call, namer)


def spelled(op: Op, spelling: str) -> Callable[..., Any]:
    """``op``'s call as the method or property ``spelling`` (``x.t()``, ``x.T``), naming the
    node it makes as torch names that spelling's where the entry says it differs."""
    call = op.call
    assert call is not None  # only entries with a call are methods
    name = op.extra.get("spellings", {}).get(spelling)
    if name is None:
        return call
    return _naming(op, call, name, always=True)


def _naming(
    op: Op, call: Callable[..., Any], namer: str | Callable[[list[Any]], str], always: bool = False
) -> Callable[..., Any]:
    """``call``, giving the node its result ends in (each, for several results) the name
    ``namer`` gives for the call's arguments (all of them, in the signature's order, defaults
    filled in), where the call made that node and (unless ``always``) a primitive other than
    ``op``'s made it; an empty name leaves the primitive's."""
    # the signature is read at the first call that needs the arguments (a name given by a
    # function of them), not as gradcli starts: most entries' names are fixed strings
    arguments: Arguments | None = None
    viewing = bool(op.extra.get("view"))

    @functools.wraps(call)
    def function(*args: Any, **kwargs: Any) -> Any:
        start = next(_tensor._ORDER)  # every node made from here on comes later
        result = call(*args, **kwargs)
        if viewing and args and result is args[0] and result.requires_grad:
            result = view(result)
        made = [
            t
            for t in (result if isinstance(result, (tuple, list)) else (result,))
            if isinstance(t, Tensor) and t._op is not None and t._order > start
        ]
        made = [t for t in made if always or t._op is not op]
        if made:
            if isinstance(namer, str):
                name = namer
            else:
                nonlocal arguments
                if arguments is None:
                    arguments = _arguments(inspect.signature(call))
                name = namer(arguments(args, kwargs))
            for tensor in made if name else ():
                tensor._name = name
        return result

    return function


Arguments = Callable[[tuple[Any, ...], dict[str, Any]], list[Any]]


def _arguments(signature: inspect.Signature) -> Arguments:
    """What gives a call's arguments from its ``args`` and ``kwargs``: all of them, in the
    signature's order, defaults filled in. Without ``*args`` or ``**kwargs`` in the signature,
    read off by hand (the call took them, so they fit it; ``Signature.bind`` costs some
    microseconds a call: cross_entropy's name was one a step of an MLP), else bound."""
    parameters = signature.parameters.values()
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):

        def bound(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return list(bound.arguments.values())

        return bound
    defaults = [(p.name, p.default) for p in parameters]

    def read(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        rest = defaults[len(args) :]
        return [*args, *(kwargs.get(name, default) for name, default in rest)]

    return read
