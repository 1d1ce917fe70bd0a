"""The library's objects as a script holds them: ``gradcli.nn``'s modules, ``gradcli.optim``'s
optimizers and schedulers (what ``torch.nn`` and ``torch.optim`` give a script).

``objects.get`` and ``objects.set_value`` send every attribute read and write of such an object
here. A script reads and writes only public names (no leading underscore): a method comes back
as a ``Builtin`` bound to the object; a module's registered parameters, buffers and submodules
are read by name as torch's ``__getattr__`` finds them; an assignment goes through the
object's own ``__setattr__``, so that a module registers a ``Parameter`` or a submodule
assigned to it as torch's does.

A class of the library is a ``LibraryClass`` in the script (``torch.nn.Linear``,
``torch.optim.SGD``): calling it makes an instance, ``isinstance`` and ``type`` name it, and
it prints as torch's class (``<class 'torch.nn.modules.linear.Linear'>``); a ``class``
statement finds the Python class to derive from in its ``kind``. Every call into the library
(a constructor, a method, a module's forward) goes through ``guarded``: the script's dtypes
and devices given as the library takes them, the run's memory tally engaged, the engine's
refusals turned into torch's errors (``RuntimeError``) or gradcli's (exit 2).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import nn, optim
from ...base import bounds
from ...base.errors import GradcliError, engine_hint
from ...engine import torch_random
from ...engine.sizes import stored
from ...nn.module import RemovableHandle
from ...ops import library as gc
from ...optim import lr_scheduler
from ...utils import data
from . import printing
from .calls import DType
from .runtime import Builtin, type_name
from .tensors import CPU, Device

if TYPE_CHECKING:
    from .runtime import Run

# The library's kinds of object a script may hold and reach into
KINDS: tuple[type, ...] = (
    nn.Module,
    optim.Optimizer,
    lr_scheduler.LRScheduler,
    RemovableHandle,  # what a module's register_forward_hook returns
    data.Dataset,
    data.DataLoader,
    data.DataLoaderIterator,
    data.Sampler,
    torch_random.Generator,  # torch.Generator()
)


# What a script iterates through ``iterated`` (a batch collated is a call into the library)
LOADERS = (data.DataLoader, data.DataLoaderIterator)


def is_library_object(value: Any) -> bool:
    """Whether ``value`` is one of the library's objects that this module reads and writes."""
    return isinstance(value, KINDS)


_OTHER_DEVICES = ("cuda", "mps", "xpu", "meta")


def _given(value: Any) -> Any:
    """A script's argument as the library takes it: a torch dtype as numpy's, the device
    as its name."""
    if isinstance(value, DType):
        return np.dtype(value.numpy)
    if isinstance(value, Device):
        return "cpu"
    if isinstance(value, str) and value.split(":")[0] in _OTHER_DEVICES:
        raise GradcliError(
            f"gradcli computes on the CPU only: the device {value!r} is not taken",
            hint="leave the device out, or give 'cpu'",
        )
    return value


def guarded(run: Run, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, a call into the library (see the module docstring)."""
    args = tuple(_given(a) for a in args)
    kwargs = {key: _given(value) for key, value in kwargs.items()}
    engaged = bounds.engage(run.tally)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            found = fn(*args, **kwargs)
        for warning in caught:  # torch's warnings (a scheduler stepped first), as the script's
            run.warn(warning.category.__name__, str(warning.message))
        return found
    except gc.SizeError as exc:
        raise GradcliError(str(exc), hint=exc.hint) from None
    except (gc.ShapeError, gc.GradError, gc.IndexDomainError, gc.DtypeError) as exc:
        raise RuntimeError(str(exc)) from None
    except gc.EngineError as exc:
        raise GradcliError(str(exc), hint=engine_hint(exc)) from None
    finally:
        bounds.engage(engaged)


def iterated(run: Run, value: Any) -> Iterator[Any]:
    """The items of a library object (a ``DataLoader``'s batches), each made through
    ``guarded``."""
    items = guarded(run, iter, value)
    while True:
        try:
            item = guarded(run, next, items)
        except StopIteration:
            return
        yield item


def charge(run: Run, module: Any) -> None:
    """Count a new module's parameters and buffers in the run's memory."""
    if not isinstance(module, nn.Module):
        return
    for tensor in (*module.parameters(), *module.buffers()):
        run.tally.charge(stored(tensor.data) * tensor.data.itemsize, f"{type(module).__name__}")


class LibraryClass:
    """A class of the library as a script names and calls it (see the module docstring)."""

    python_name = "type"

    def __init__(self, run: Run, kind: type, path: str):
        self.run, self.kind, self.path = run, kind, path

    def script_call(self, *args: Any, **kwargs: Any) -> Any:
        made = guarded(self.run, self.kind, *args, **kwargs)
        charge(self.run, made)
        return made

    def __repr__(self) -> str:
        return f"<class '{self.path}'>"


def class_attribute(run: Run, made: LibraryClass, name: str) -> Any:
    """``nn.Transformer.generate_square_subsequent_mask``, ``nn.Embedding.from_pretrained``:
    a public static or class method of a library class, as a Builtin."""
    found = None if name.startswith("_") else made.kind.__dict__.get(name)
    if not isinstance(found, (staticmethod, classmethod)):
        raise AttributeError(f"type object '{made.kind.__name__}' has no attribute '{name}'")
    method = getattr(made.kind, name)
    return Builtin(name, lambda *a, **k: guarded(run, method, *a, **k))


def class_of(run: Run, value: Any) -> LibraryClass | None:
    """The script's class of a library object or a ``Parameter`` (what ``type(x)`` gives),
    or None for a value of another kind."""
    return run.library_classes.get(type(value))  # type: ignore[no-any-return]


# what a script reads of a torch.Generator: torch's methods (not the engine's own)
_GENERATOR = ("manual_seed", "seed", "initial_seed", "get_state", "set_state", "device")


def _generator_attribute(run: Run, generator: torch_random.Generator, name: str) -> Any:
    """``g.name`` of a ``torch.Generator``: its state a uint8 tensor, as torch's."""
    if name not in _GENERATOR:
        raise AttributeError(f"'torch._C.Generator' object has no attribute '{name}'")
    if name == "device":
        return CPU
    if name == "get_state":
        return Builtin(name, lambda: gc.Tensor(generator.get_state()))
    if name == "set_state":

        def set_state(state: Any) -> Any:
            record = state.data if isinstance(state, gc.Tensor) else state
            try:
                return generator.set_state(record)
            except gc.DomainError as exc:  # a state torch refuses: its RuntimeError
                raise RuntimeError(str(exc)) from None

        return Builtin(name, set_state)
    return BoundMethod(run, generator, name, getattr(generator, name))


def attribute(run: Run, value: Any, name: str) -> Any:
    """``value.name`` as a script reads it: a public attribute, a bound method as a Builtin."""
    if isinstance(value, torch_random.Generator):
        return _generator_attribute(run, value, name)
    if name.startswith("_"):
        raise _private(value, name)
    found = getattr(value, name)
    if isinstance(found, type) or type(found).__name__ == "module":
        raise AttributeError(f"gradcli run does not read the attribute '{name}'")
    if callable(found) and not isinstance(found, KINDS) and not isinstance(found, type):
        return BoundMethod(run, value, name, found)
    return found


class BoundMethod(Builtin):
    """A method of a library object (``model.parameters``), called through ``guarded``,
    shown as torch's bound method (``<bound method Module.parameters of Linear(...)>``)."""

    __slots__ = ("run", "owner")

    def __init__(self, run: Run, owner: Any, name: str, method: Callable[..., Any]):
        super().__init__(name, lambda *a, **k: guarded(run, method, *a, **k))
        self.run, self.owner = run, owner

    def __repr__(self) -> str:
        if self.name == "step" and isinstance(self.owner, optim.Optimizer):
            # torch wraps each optimizer's step (its hooks): a function of the class
            return f"<function {type(self.owner).__name__}.step at 0x{id(self):x}>"
        defined = next(k for k in type(self.owner).__mro__ if self.name in k.__dict__)
        kind = "Module" if defined is nn.module.StateAndDtypes else defined.__name__
        return f"<bound method {kind}.{self.name} of {printing.show(self.run, self.owner)}>"


def _private(value: Any, name: str) -> GradcliError:
    """The refusal of a name of the library's internals (``model._parameters``)."""
    return GradcliError(
        f"gradcli run reads and writes the public attributes of a {type_name(value)}, not "
        f"{name!r} (its internals)",
        hint="use its methods: named_parameters(), named_children(), state_dict()",
    )


def set_attribute(run: Run, value: Any, name: str, new: Any) -> None:
    """``value.name = new`` as a script writes it: public names, through the object's own
    ``__setattr__`` (a module registers parameters and submodules)."""
    if name.startswith("_"):
        raise _private(value, name)
    guarded(run, setattr, value, name, new)
    charge(run, new)


def delete_attribute(run: Run, value: Any, name: str) -> None:
    """``del module.name`` as a script writes it: a registered parameter, buffer or submodule
    of a module, as torch's ``__delattr__`` takes it away."""
    if name.startswith("_"):
        raise _private(value, name)
    if not isinstance(value, nn.Module):
        raise GradcliError(
            f"gradcli run does not delete the attributes of a {type_name(value)}",
            hint="set it to None instead",
        )
    registries = (value._parameters, value._buffers, value._modules)
    if not any(name in registry for registry in registries):
        if hasattr(value, name):
            raise GradcliError(
                f"gradcli run deletes a module's registered parameters, buffers and "
                f"submodules only, not {name!r}"
            )
        raise AttributeError(f"'{type(value).__name__}' object has no attribute '{name}'")
    delattr(value, name)


def call(run: Run, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``value(*args, **kwargs)``: a module's forward; Python's TypeError for another
    object of the library (an optimizer is not callable)."""
    if isinstance(value, nn.Module):
        return guarded(run, value, *args, **kwargs)
    raise TypeError(f"'{type_name(value)}' object is not callable")
