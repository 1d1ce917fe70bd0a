"""The library's objects as a script holds them: ``gradcli.nn``'s modules, ``gradcli.optim``'s
optimizers and schedulers (what ``torch.nn`` and ``torch.optim`` give a script).

``objects.get`` and ``objects.set_value`` send every attribute read and write of such an object
here. A script reads and writes only public names (no leading underscore): a method comes back
as a ``Builtin`` bound to the object; a module's registered parameters, buffers and submodules
are read by name as torch's ``__getattr__`` finds them; an assignment goes through the
object's own ``__setattr__``, so that a module registers a ``Parameter`` or a submodule
assigned to it as torch's does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import nn, optim
from ...optim import lr_scheduler
from .runtime import Builtin, type_name

if TYPE_CHECKING:
    from .runtime import Run

# The library's kinds of object a script may hold and reach into
KINDS: tuple[type, ...] = (nn.Module, optim.Optimizer, lr_scheduler.LRScheduler)


def is_library_object(value: Any) -> bool:
    """Whether ``value`` is one of the library's objects that this module reads and writes."""
    return isinstance(value, KINDS)


def attribute(run: Run, value: Any, name: str) -> Any:
    """``value.name`` as a script reads it: a public attribute, a bound method as a Builtin."""
    if name.startswith("_"):
        raise AttributeError(f"'{type_name(value)}' object has no attribute '{name}'")
    found = getattr(value, name)
    if callable(found) and not isinstance(found, KINDS) and not isinstance(found, type):
        return Builtin(name, found)
    return found


def set_attribute(run: Run, value: Any, name: str, new: Any) -> None:
    """``value.name = new`` as a script writes it: public names, through the object's own
    ``__setattr__`` (a module registers parameters and submodules)."""
    if name.startswith("_"):
        raise AttributeError(f"gradcli run does not write the attribute '{name}'")
    setattr(value, name, new)
