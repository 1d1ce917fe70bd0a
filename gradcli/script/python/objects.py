"""Attributes of every kind of value a script holds, from a whitelist per kind.

``get`` is the only way a script reads an attribute (``x.grad``, ``lst.append``,
``torch.sin``, ``s.upper``): a name beginning with two underscores is never one (the lowering
refuses it before the script runs; ``getattr`` refuses it here), and a name not listed for the
value's kind is Python's ``AttributeError``. The methods of Python's strings, lists, dicts and
sets are the real ones, wrapped as ``Builtin``; those that could build a huge value or reach
an attribute by name (``str.format``, ``ljust``, ``join``) are checked first.
"""

from __future__ import annotations

import collections
import string
from typing import TYPE_CHECKING, Any

import numpy as np

from ...base.errors import GradcliError
from ...engine.custom_function import FunctionCtx
from ...engine.forward_ad import UnpackedDualTensor
from ...engine.graph_hooks import RESULT
from ...ops import library as gc
from . import (
    autograd_graph,
    classes,
    custom_functions,
    library_objects,
    limits,
    numpy_values,
    printing,
    tensors,
)
from .calls import DType
from .printing import ReturnTypes, Size
from .runtime import Builtin, Function, Module, type_name

if TYPE_CHECKING:
    from .runtime import Run

_STR = (
    "capitalize casefold count endswith find index isalnum isalpha isdigit isidentifier "
    "islower isnumeric isspace istitle isupper lower lstrip partition removeprefix "
    "removesuffix rfind rindex rpartition rsplit rstrip split splitlines startswith strip "
    "swapcase title upper"
).split()
_LIST = "append clear copy count extend index insert pop remove reverse".split()
_TUPLE = ["count", "index"]
_DICT = "clear copy get items keys pop popitem setdefault update values".split()
_SET = (
    "add clear copy difference discard intersection isdisjoint issubset issuperset pop "
    "remove symmetric_difference union update"
).split()
_METHODS: dict[type, frozenset[str]] = {
    str: frozenset(_STR),
    list: frozenset(_LIST),
    tuple: frozenset(_TUPLE),
    dict: frozenset(_DICT),
    set: frozenset(_SET),
    frozenset: frozenset(_SET) - {"add", "clear", "discard", "pop", "remove", "update"},
    collections.OrderedDict: frozenset([*_DICT, "move_to_end"]),
}
_NUMBER_ATTRIBUTES = {
    int: {"real", "imag", "numerator", "denominator", "bit_length", "conjugate"},
    bool: {"real", "imag", "numerator", "denominator", "bit_length", "conjugate"},
    float: {"real", "imag", "is_integer", "conjugate", "hex", "as_integer_ratio"},
    complex: {"real", "imag", "conjugate"},
    range: {"start", "stop", "step", "count", "index"},
    slice: {"start", "stop", "step"},
}


#: the one attribute of Python's own (``__...``) a script may read, of a module alone
VERSION = "__version__"
#: Python's own attributes a script may read of any value: its class (``type(x)``) and, of a
#: class, a function or a module, its name (``self.__class__.__name__``)
DUNDERS = frozenset({VERSION, "__class__", "__name__"})


def get(run: Run, value: Any, name: str) -> Any:
    """``value.name`` as a script reads it."""
    if name == "__class__":
        return run.builtins["type"](value)
    if name == "__name__":
        return _name_of(value)
    if classes.is_scripted(value):  # the script's classes and instances, super()
        return classes.get(run, value, name)
    if name == VERSION and type(value) is Module:  # torch.__version__: a module's version
        if VERSION in value.attributes:
            return value.attributes[VERSION]
        raise AttributeError(f"module '{value.name}' has no attribute '{name}'")
    if name.startswith("__"):
        raise GradcliError(
            f"gradcli run does not read attributes whose names start with '__' ({name!r})",
            hint="scripts read torch's attributes (x.grad, x.shape), not Python's internals",
        )
    kind = type(value)
    if kind is gc.Tensor or isinstance(value, gc.Tensor):  # a Parameter too
        return tensors.attribute(run, value, name)
    if kind is Module:
        if name in value.attributes:
            return value.attributes[name]
        missing = value.attributes.get("__missing__")
        if missing is not None:
            return missing(name)
        raise AttributeError(f"module '{value.name}' has no attribute '{name}'")
    if kind is not str and kind in _METHODS:
        if name in _METHODS[kind]:
            return _method(run, value, name)
    elif kind is str:
        if name in _METHODS[str]:
            return Builtin(name, getattr(value, name))
        special = _STRING_SPECIAL.get(name)
        if special is not None:
            return Builtin(name, lambda *a, **k: special(run, value, *a, **k))
    elif kind is Size:
        if name in ("count", "index"):
            return Builtin(name, getattr(value, name))
        if name == "numel":
            return Builtin(name, value.numel)
    elif kind is ReturnTypes:
        if name in value.fields:
            return value.field(name)
    elif kind is UnpackedDualTensor:  # forward_ad.unpack_dual's
        if name in value._fields:
            return getattr(value, name)
    elif kind in _NUMBER_ATTRIBUTES:
        if name in _NUMBER_ATTRIBUTES[kind]:
            found = getattr(value, name)
            return Builtin(name, found) if callable(found) else found
    elif kind is tensors.GradFn:
        return _grad_fn(value, name)
    elif kind is tensors.AccumulateGrad:
        if name == "variable":
            return value.variable
        if name == "name":
            return Builtin(name, value.name)
        if name == "next_functions":
            return ()
    elif kind is DType:
        if name in ("is_floating_point", "is_complex", "itemsize"):
            return getattr(value, name)
    elif kind is tensors.Device:
        if name == "type":
            return "cpu"
    elif kind is tensors.Handle or kind is autograd_graph.MultiHandle:
        if name == "remove":
            return Builtin(name, value.remove)
    elif kind is Function:
        if name == "name":
            pass
    elif isinstance(value, BaseException):
        if name == "args":
            return value.args
    elif kind is np.ndarray or isinstance(value, np.generic):
        return numpy_values.attribute(run, value, name)
    elif library_objects.is_library_object(value):
        return library_objects.attribute(run, value, name)
    elif kind is library_objects.LibraryClass:
        return library_objects.class_attribute(run, value, name)
    elif kind is FunctionCtx:
        return custom_functions.ctx_attribute(value, name)
    raise AttributeError(f"'{type_name(value)}' object has no attribute '{name}'")


def set_value(run: Run, value: Any, name: str, new: Any) -> None:
    """``value.name = new``: tensors' ``grad``, ``requires_grad`` and ``data``; the library's
    objects' public attributes (``library_objects``)."""
    if name.startswith("__"):
        raise AttributeError(f"gradcli run does not write the attribute '{name}'")
    if classes.is_scripted(value):
        classes.set_attribute(run, value, name, new)
        return
    if isinstance(value, gc.Tensor):
        tensors.set_attribute(run, value, name, new)
        return
    if isinstance(value, FunctionCtx):
        custom_functions.set_ctx_attribute(value, name, new)
        return
    if library_objects.is_library_object(value):
        library_objects.set_attribute(run, value, name, new)
        return
    raise AttributeError(f"'{type_name(value)}' object attribute '{name}' is read-only")


def delete_value(run: Run, value: Any, name: str) -> None:
    """``del value.name`` (and ``delattr``): an attribute of the script's own objects, one the
    script set on a custom function's ctx, a module's registered parameter, buffer or
    submodule; refused for anything else."""
    if name.startswith("__"):
        raise GradcliError(
            f"gradcli run does not delete attributes whose names start with '__' ({name!r})"
        )
    if classes.is_scripted(value):
        classes.delete_attribute(run, value, name)
    elif isinstance(value, FunctionCtx):
        custom_functions.delete_ctx_attribute(value, name)
    elif library_objects.is_library_object(value):
        library_objects.delete_attribute(run, value, name)
    else:
        raise GradcliError(
            "gradcli run deletes the attributes of the script's own objects only",
            hint="set it to None instead",
        )


def _name_of(value: Any) -> str:
    """``value.__name__``: the name of a class (the script's, the library's, Python's), of a
    function or of a module; AttributeError for other values, as Python's."""
    if isinstance(value, (classes.Class, classes.LibraryBase)):
        return str(value.name)
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, library_objects.LibraryClass):
        return value.path.rsplit(".", 1)[-1]
    if isinstance(value, (Builtin, Function)):  # a torch function, a Python type, a def
        return str(value.name)
    if isinstance(value, Module):
        return value.name
    if type(value).__name__ == "TypeName":  # type(None) and the like
        return str(value.name).rsplit(".", 1)[-1]
    raise AttributeError(f"'{type_name(value)}' object has no attribute '__name__'")


def _grad_fn(node: tensors.GradFn, name: str) -> Any:
    if name == "name":
        return Builtin(name, node.name)
    if name == "next_functions":
        return node.next_functions()
    saved = {"_saved_self": 0, "_saved_other": 1, "_saved_result": RESULT}
    if name in saved:
        return node.saved(saved[name])
    if name == "metadata":
        return node.metadata
    registering = autograd_graph.node_attribute(node, name)
    if registering is not None:
        return registering
    raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")


def _method(run: Run, value: Any, name: str) -> Builtin:
    bound = getattr(value, name)
    if name in ("extend", "update") or (name in ("union", "difference") and type(value) is set):

        def growing(*args: Any, **kwargs: Any) -> Any:
            items = [list(run.steps.ticking(a)) if not isinstance(a, dict) else a for a in args]
            extra = sum(len(i) for i in items)
            limits.check_items(len(value) + extra, limits.POINTER, f"{type(value).__name__}")
            return bound(*items, **kwargs)

        return Builtin(name, growing)
    if name == "append" or name == "insert" or name == "add":

        def adding(*args: Any) -> Any:
            limits.check_items(len(value) + 1, limits.POINTER, type(value).__name__)
            return bound(*args)

        return Builtin(name, adding)
    return Builtin(name, bound)


def _join(run: Run, separator: str, items: Any) -> str:
    parts = list(run.steps.ticking(items))
    for part in parts:
        if not isinstance(part, str):
            raise TypeError(
                f"sequence item {parts.index(part)}: expected str instance, {type_name(part)} found"
            )
    total = sum(len(p) for p in parts) + len(separator) * max(len(parts) - 1, 0)
    limits.check_items(total, 1, "the joined string")
    return separator.join(parts)


def _padded(method: str) -> Any:
    def pad(run: Run, text: str, width: int, *fill: str) -> str:
        limits.check_items(width, limits.char_bytes(text + "".join(fill)), f"str.{method}")
        return getattr(text, method)(width, *fill)

    return pad


def _replace(run: Run, text: str, old: str, new: str, count: int = -1) -> str:
    times = text.count(old) if old else len(text) + 1
    limits.check_items(len(text) + times * len(new), limits.char_bytes(new + text), "replace")
    return text.replace(old, new, count)


def _format(run: Run, text: str, *args: Any, **kwargs: Any) -> str:
    """``str.format``: fields by position or name only (no ``.attribute`` or ``[key]``)."""
    parts: list[str] = []
    automatic = 0
    for literal, field, spec, conversion in string.Formatter().parse(text):
        parts.append(literal)
        if field is None:
            continue
        if "." in field or "[" in field:
            raise GradcliError(
                f"gradcli run takes a format field by position or name only, not {field!r}",
                hint="format the attribute itself: '{}'.format(x.shape)",
            )
        if field == "":
            value = args[automatic]
            automatic += 1
        elif field.isdigit():
            value = args[int(field)]
        else:
            value = kwargs[field]
        if spec and "{" in spec:
            spec = _format(run, spec, *args, **kwargs)
        if conversion == "r":
            value = printing.show(run, value)
        elif conversion == "s":
            value = printing.text(run, value)
        elif conversion == "a":
            value = ascii(printing.show(run, value))
        parts.append(printing.formatted(run, value, spec or ""))
    return "".join(parts)


_STRING_SPECIAL = {
    "join": _join,
    "ljust": _padded("ljust"),
    "rjust": _padded("rjust"),
    "center": _padded("center"),
    "zfill": lambda run, text, width: _padded("zfill")(run, text, width),
    "replace": _replace,
    "format": _format,
}
