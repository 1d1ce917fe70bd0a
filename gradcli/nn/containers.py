"""torch.nn's containers: ``Sequential`` (its modules run in turn), ``ModuleList`` and
``ModuleDict`` (modules held by index or by key, registered so that their parameters are
the container's), ``ParameterList`` and ``ParameterDict`` (parameters so held)."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..engine.tensor import Tensor
from .module import TYPENAMES, Module, Parameter, add_indent


def _index(index: Any, length: int) -> int:
    index = operator.index(index)
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range")
    return index % length


def _delete(container: Module, idx: Any) -> None:
    """Remove the modules at ``idx`` (an index or a slice) and number the rest anew."""
    keys = list(container._modules)
    chosen = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]
    for key in chosen:
        del container._modules[key]
    kept = list(container._modules.values())
    container._modules.clear()
    for i, module in enumerate(kept):
        container._modules[str(i)] = module


class Sequential(Module):
    """Modules run one after the other, the output of each the input of the next;
    ``Sequential(a, b)`` names them "0", "1", ``Sequential(OrderedDict(...))`` by key."""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self._modules))]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self._modules))]
        setattr(self, key, module)

    def __delitem__(self, idx: Any) -> None:
        _delete(self, idx)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Add each module at the end."""
        for module in sequential:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put ``module`` at ``index``, the later ones moved up."""
        modules = list(self._modules.values())
        n = len(modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules.insert(index if index >= 0 else index + n, module)
        self._modules.clear()
        for i, item in enumerate(modules):
            self.add_module(str(i), item)
        return self

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """Modules by index, registered (``self.layers = nn.ModuleList([...])``)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])  # type: ignore[arg-type]
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self))), module)

    def __delitem__(self, idx: Any) -> None:
        _delete(self, idx)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each module at the end."""
        if isinstance(modules, (str, bytes)) or not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before ``index``."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, item in enumerate(modules):
            self.add_module(str(i), item)

    def __repr__(self) -> str:
        """torch's: a run of modules with one repr is written once, ``(0-2): 3 x Linear(...)``."""
        texts = [repr(module) for module in self]
        if not texts:
            return self._get_name() + "()"
        runs: list[list[Any]] = []  # [first, last, text]
        for i, text in enumerate(texts):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = []
        for first, last, text in runs:
            line = f"({first}): {text}"
            if first != last:
                line = f"({first}-{last}): {last - first + 1} x {text}"
            lines.append(add_indent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Modules by key, registered, in the order they were added."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[Any] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]  # type: ignore[return-value]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module under ``key`` and return it."""
        module = self[key]
        del self[key]
        return module

    def keys(self) -> Iterable[str]:
        """The keys, in order."""
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        """(key, module), in order."""
        return self._modules.items()  # type: ignore[return-value]

    def values(self) -> Iterable[Module]:
        """The modules, in order."""
        return self._modules.values()  # type: ignore[return-value]

    def update(self, modules: Mapping[str, Module] | Iterable[Any]) -> None:
        """Add (or replace) modules from a mapping or from (key, module) pairs."""
        pairs: Iterable[Any] = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in pairs:
            self[key] = module


def _entry_line(key: Any, value: Any, kind: str) -> str:
    """torch's line for a tensor of a ParameterList/ParameterDict (``kind``: its dtype as
    torch.float32 or its type name as torch.FloatTensor), or the repr of anything else."""
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    size = "x".join(str(n) for n in value.shape)
    name = "Parameter" if isinstance(value, Parameter) else "Tensor"
    of = f"torch.{value.dtype}" if kind == "dtype" else TYPENAMES.get(str(value.dtype), "?")
    return f"  ({key}): {name} containing: [{of} of size {size}]"


def _as_parameter(value: Any) -> Any:
    """A tensor made a Parameter (sharing its values), as torch's containers make it."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """Parameters by index, registered (``self.weights = nn.ParameterList([...])``)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, str(_index(idx, len(self))), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` (a tensor becomes a Parameter) at the end."""
        self._size += 1
        setattr(self, str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add each value at the end."""
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_line(i, value, "dtype") for i, value in enumerate(self))


class ParameterDict(Module):
    """Parameters by key, registered, in the order they were added."""

    def __init__(self, parameters: Mapping[str, Any] | Iterable[Any] | None = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Iterable[str]:
        """The keys, in order."""
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """(key, parameter), in order."""
        return [(key, self[key]) for key in self._keys]

    def values(self) -> Iterable[Any]:
        """The parameters, in order."""
        return [self[key] for key in self._keys]

    def update(self, parameters: Mapping[str, Any] | Iterable[Any]) -> None:
        """Add (or replace) parameters from a mapping or from (key, value) pairs."""
        pairs: Iterable[Any] = parameters.items() if isinstance(parameters, Mapping) else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_entry_line(key, value, "type") for key, value in self.items())
