"""``torch.func.functional_call``: call a module with some of its parameters and buffers
replaced by the tensors given (for the call only), as ``torch.nn.utils.stateless`` does.

A name is the module's own (``weight``) or a path through its submodules (``0.weight``); the
tensor takes the parameter's place in its module's registry for the call, so a dual tensor or
any other tensor computes the output, and the module is as it was afterwards, whatever
happens. Weights tied (one tensor under several names) are replaced together (``tie_weights``). A
name the module does not have is set as a plain attribute for the call (torch's
``strict=False``), or refused with ``strict=True``, as torch refuses it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..engine.tensor import Tensor
from .module import Module

_REGISTRIES = ("_parameters", "_buffers")


def _merged(dicts: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One mapping of name to tensor from one dict or several (a name in two is refused)."""
    if isinstance(dicts, Mapping):
        return dict(dicts)
    merged: dict[str, Any] = {}
    repeated: list[str] = []
    for given in dicts:
        for name, value in given.items():
            if name in merged:
                repeated.append(name)
            merged[name] = value
    if repeated:
        raise ValueError(
            f"{sorted(set(repeated))} appeared in multiple dictionaries; behavior of "
            "functional call is ambiguous"
        )
    return merged


def _strict_check(module: Module, names: dict[str, Any]) -> None:
    """torch's refusal, with ``strict=True``, of names the module lacks or leaves out (each
    name of a tensor, tied weights under all of theirs)."""
    own = [
        *(n for n, _ in module.named_parameters(remove_duplicate=False)),
        *(n for n, _ in module.named_buffers(remove_duplicate=False)),
    ]
    unexpected = sorted(n for n in names if n not in own)
    missing = sorted(n for n in own if n not in names)
    messages = []
    if unexpected:
        messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if messages:
        raise RuntimeError(
            f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(messages)
        )


def _tied(module: Module, names: dict[str, Any]) -> dict[str, Any]:
    """``names`` and, for each tensor it replaces, the other names the module has for that
    same tensor (weights tied), replaced by the same value; torch's refusal of different
    values given for names of one tensor."""
    every = [
        *module.named_parameters(remove_duplicate=False),
        *module.named_buffers(remove_duplicate=False),
    ]
    given: dict[int, list[str]] = {}
    for n, t in every:
        if n in names:
            given.setdefault(id(t), []).append(n)
    for keys in given.values():
        if len({id(names[k]) for k in keys}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(keys)}, which are tied. "
                "Consider using tie_weights=False"
            )
    tied = {n: names[given[id(t)][0]] for n, t in every if n not in names and id(t) in given}
    return names | tied


@contextmanager
def _reparametrized(module: Module, names: dict[str, Any]) -> Iterator[None]:
    """``module`` with the tensors of ``names`` in place of its own, put back afterwards."""
    restore: list[tuple[dict[str, Any], str, Any]] = []
    plain: list[tuple[Module, str]] = []
    try:
        for path, value in names.items():
            owner_path, _, name = path.rpartition(".")
            owner = module.get_submodule(owner_path) if owner_path else module
            registry = next((vars(owner)[r] for r in _REGISTRIES if name in vars(owner)[r]), None)
            if registry is not None:
                restore.append((registry, name, registry[name]))
                registry[name] = value
            else:
                object.__setattr__(owner, name, value)
                plain.append((owner, name))
        yield
    finally:
        for registry, name, old in reversed(restore):
            registry[name] = old
        for owner, name in plain:
            vars(owner).pop(name, None)


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` replaced by the tensors given, for this call only."""
    if not isinstance(module, Module):
        raise TypeError(f"functional_call expects a torch.nn.Module, got {type(module).__name__}")
    names = _merged(parameter_and_buffer_dicts)
    if tie_weights:
        names = _tied(module, names)
    if strict:
        _strict_check(module, names)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrized(module, names):
        return module(*args, **(kwargs or {}))
