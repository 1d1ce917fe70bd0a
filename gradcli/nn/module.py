"""``torch.nn.Module`` and ``torch.nn.Parameter`` over the engine's tensors.

A module registers what is assigned to its attributes, as torch's does: a ``Parameter``
goes into ``_parameters``, a ``Module`` into ``_modules``, a tensor given to
``register_buffer`` into ``_buffers``; everything else is a plain attribute. Calling a module
calls its ``forward``. Walks over a module tree (``named_modules``, ``named_parameters``,
``state_dict``) go in torch's order: a module's own entries in the order they were assigned,
then each child's, depth first, each object once.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..base.engine_errors import DtypeError, ShapeError
from ..engine.creation import write
from ..engine.tensor import Tensor, default_floating, no_grad


class Parameter(Tensor):
    """A tensor that is a module's parameter (``torch.nn.Parameter``): a leaf that requires
    grad by default, sharing the values of the tensor it is made from."""

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            array = np.empty((0,), dtype=default_floating())
        else:
            array = data.data if isinstance(data, Tensor) else np.asarray(data)
        super().__init__(array, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


def retyped(tensor: Tensor, dtype: np.dtype[Any]) -> None:
    """Change ``tensor``'s dtype in place (what ``Module.to(dtype)`` does to each floating
    parameter, buffer and gradient)."""
    tensor.data = tensor.data.astype(dtype)
    tensor.dtype = tensor.data.dtype


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not know."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )


def add_indent(text: str, spaces: int) -> str:
    """torch's ``_addindent``: indent every line of ``text`` but the first (blank lines
    stay empty)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    rest = [" " * spaces + line if line.strip() else "" for line in lines[1:]]
    return "\n".join([lines[0], *rest])


class StateAndDtypes:
    """The state dict and the changes of dtype of a ``Module`` (its base)."""

    # -- state --------------------------------------------------------------------------------
    def state_dict(
        self: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict[str, Tensor]:
        """Every parameter and persistent buffer by dotted name (an ``OrderedDict``, torch's
        keys and order), detached unless ``keep_vars``; the values share the module's."""
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self.__dict__["_non_persistent"]:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination, prefix + name + ".", keep_vars)
        return destination  # type: ignore[no-any-return]

    def load_state_dict(
        self: Any, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> IncompatibleKeys:
        """Copy the values of ``state_dict`` into the parameters and buffers (torch's errors
        for a missing or unexpected key under ``strict``, and for a shape that differs)."""
        own = self.state_dict(keep_vars=True)
        missing = [key for key in own if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own]
        errors = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if value.shape != target.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_size(value.shape)} from checkpoint, the shape in current model is "
                    f"{_size(target.shape)}."
                )
                continue
            with no_grad():
                write(target, value.data)
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise ShapeError(
                f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors)
            )
        return IncompatibleKeys(missing, unexpected)

    # -- dtypes -------------------------------------------------------------------------------
    def to(self: Any, *args: Any, **kwargs: Any) -> Module:
        """``to(dtype)`` changes every floating parameter, buffer and gradient to ``dtype``
        in place; a device (``"cpu"``) is accepted and changes nothing."""
        dtype = kwargs.pop("dtype", None)
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif not _is_device(arg):
                dtype = arg
        kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected arguments: {', '.join(kwargs)}")
        if dtype is None:
            return self
        target = np.dtype(dtype)
        if target.kind not in "fc":
            raise DtypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={target}"
            )
        return self._retype(target)

    def _retype(self: Any, dtype: np.dtype[Any]) -> Module:
        for module in self.modules():
            for registry in ("_parameters", "_buffers"):
                for tensor in module.__dict__[registry].values():
                    if tensor is None or tensor.dtype.kind != "f":
                        continue
                    retyped(tensor, dtype)
                    gradient = tensor._grad
                    if gradient is not None:
                        retyped(gradient, dtype)
        return self

    def double(self: Any) -> Module:
        """Every floating parameter and buffer in float64."""
        return self._retype(np.dtype(np.float64))

    def float(self: Any) -> Module:
        """Every floating parameter and buffer in float32."""
        return self._retype(np.dtype(np.float32))

    def cpu(self: Any) -> Module:
        """The module itself: gradcli's tensors are on the CPU."""
        return self

    def type(self: Any, dst_type: Any) -> Module:
        """``to(dst_type)``."""
        return self.to(dst_type)


class Module(StateAndDtypes):
    """The base of every layer and model (``torch.nn.Module``).

    A subclass calls ``super().__init__()`` before it assigns parameters or submodules, and
    defines ``forward``; ``module(x)`` calls ``module.forward(x)``.
    """

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, Module | None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            given = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments: {given} "
                "(Module.__init__ takes none)"
            )
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_hooks", {})
        object.__setattr__(self, "_forward_pre_hooks", {})

    # -- attributes ---------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        fields = self.__dict__
        params = fields.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            params[name] = None
            return
        modules = fields.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = None
            return
        buffers = fields.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                    "(torch.Tensor or None expected)"
                )
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Remove ``name`` from the plain attributes and every registry but ``keep`` (where
        a new value takes the old one's place, as torch's ``__setattr__`` keeps the order)."""
        self.__dict__.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        self.__dict__["_non_persistent"].discard(name)

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            found = fields.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry)
            if found is not None and name in found:
                del found[name]
                self.__dict__["_non_persistent"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        for registry in ("_parameters", "_buffers", "_modules"):
            names.update(self.__dict__.get(registry, {}))
        return sorted(names)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a slot left empty) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self, "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (BatchNorm's running mean);
        ``persistent=False`` leaves it out of the state dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self, "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self.__dict__["_non_persistent"].discard(name)
        else:
            self.__dict__["_non_persistent"].add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (what assigning it to an attribute does)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        _check_name("module", name, self, "_modules")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path (``"features.0"``); ``""`` is the module itself."""
        module: Module = self
        if not target:
            return module
        for item in target.split("."):
            child = module._modules.get(item)
            if child is None:
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path (``"0.weight"``)."""
        owner, _, name = target.rpartition(".")
        module = self.get_submodule(owner)
        param = module._parameters.get(name)
        if param is None:
            raise AttributeError(f"{module._get_name()} has no parameter `{name}`")
        return param

    # -- calling ------------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """What the module computes; every module defines its own."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        result = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            changed = hook(self, args, result)
            if changed is not None:
                result = changed
        return result

    def register_forward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward (a result not None
        replaces the output)."""
        return RemovableHandle(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward (a result not None replaces the
        arguments)."""
        return RemovableHandle(self._forward_pre_hooks, hook)

    # -- walks --------------------------------------------------------------------------------
    def named_modules(
        self, memo: set[int] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) of this module and every module below it, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(
                memo, prefix + ("." if prefix else "") + name, remove_duplicate
            )

    def modules(self) -> Iterator[Module]:
        """This module and every module below it, depth first, each once."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) of the direct children, each once."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children, each once."""
        for _, module in self.named_children():
            yield module

    def _named_members(
        self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        owners = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for owner_prefix, module in owners:
            for name, value in module.__dict__[registry].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield owner_prefix + ("." if owner_prefix else "") + name, value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) in torch's order, each parameter once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters in torch's order, each once (what an optimizer is given)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer), each once."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers, each once."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every child (depth first), then on this module; returns the module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout drops, batch norm uses the batch's statistics)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient (``set_to_none=False``: zero it in place)."""
        for param in self.parameters():
            zero_grad_of(param, set_to_none)

    # -- text ---------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module's own settings, inside the parentheses of its repr."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): " + add_indent(repr(module), 2) for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


class RemovableHandle:
    """What registering a hook returns: ``remove()`` takes the hook off again."""

    _next_id = 0

    def __init__(self, hooks: dict[int, Any], hook: Callable[..., Any]) -> None:
        RemovableHandle._next_id += 1
        self.id = RemovableHandle._next_id
        self._hooks = hooks
        hooks[self.id] = hook

    def remove(self) -> None:
        """Take the hook off."""
        self._hooks.pop(self.id, None)


def zero_grad_of(param: Tensor, set_to_none: bool) -> None:
    """Forget ``param``'s gradient, or zero it in place (cut from any graph)."""
    gradient = param._grad
    if gradient is None:
        return
    if set_to_none:
        param._grad = None
    elif gradient._op is not None:  # a gradient with a graph (create_graph): a zero leaf
        param._grad = Tensor(np.zeros_like(gradient.data))
    else:
        write(gradient, 0)


def _check_name(kind: str, name: Any, module: Module, registry: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_type_name(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if name in module.__dict__ and name not in module.__dict__[registry]:
        raise KeyError(f"attribute '{name}' already exists")


# torch's type names of tensors, by dtype (its error messages name a tensor so)
TYPENAMES = {
    "float32": "torch.FloatTensor",
    "float64": "torch.DoubleTensor",
    "int64": "torch.LongTensor",
    "int32": "torch.IntTensor",
    "bool": "torch.BoolTensor",
    "complex64": "torch.ComplexFloatTensor",
    "complex128": "torch.ComplexDoubleTensor",
}


def _type_name(value: Any) -> str:
    """torch's name of a value's type in its messages (``torch.FloatTensor``, ``int``)."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return TYPENAMES.get(str(value.dtype), "torch.Tensor")
    kind = type(value)
    if kind.__module__ in ("builtins",):
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def _size(shape: tuple[int, ...]) -> str:
    return f"torch.Size([{', '.join(map(str, shape))}])"


def _is_device(value: Any) -> bool:
    return (isinstance(value, str) and value.split(":")[0] in ("cpu", "cuda", "mps", "meta")) or (
        type(value).__name__ == "device"
    )
