"""A script's custom autograd functions: ``class Exp(torch.autograd.Function)`` with static
``forward(ctx, ...)`` and ``backward(ctx, grad_output)``, applied by the engine's
``custom_function`` (the class's host, ``classes.py``, carries the script's methods to it).

What a script reaches here: ``torch.autograd.Function`` (the base), the module
``torch.autograd.function`` (``Function``, ``FunctionCtx``, ``once_differentiable``), and the
``ctx`` its methods are given: ``save_for_backward``, ``save_for_forward``, ``saved_tensors``,
``needs_input_grad``, ``mark_non_differentiable``, ``mark_dirty``,
``set_materialize_grads``, and any attribute the script sets on it (``ctx.constant = c``);
the engine's own bookkeeping on the ctx stays out of reach.
"""

from __future__ import annotations

from typing import Any

from ... import autograd
from ...engine.custom_function import FunctionCtx
from ...engine.graph_hooks import succeeds
from ...ops import library as gc
from .classes import LibraryBase, library_base
from .runtime import RUNNING, Builtin, Function, Module
from .tensors import rename

# What torch's ctx offers a script, beside the attributes the script sets
_CTX_METHODS = (
    "save_for_backward",
    "save_for_forward",
    "mark_non_differentiable",
    "mark_dirty",
    "set_materialize_grads",
)
_CTX_VALUES = ("saved_tensors", "needs_input_grad")
_CTX_INTERNAL = frozenset(vars(FunctionCtx())) | frozenset(dir(FunctionCtx))


def ctx_attribute(ctx: FunctionCtx, name: str) -> Any:
    """``ctx.name`` as a script reads it."""
    if name in _CTX_METHODS:
        return Builtin(name, getattr(ctx, name))
    if name in _CTX_VALUES or name == "saved_variables":
        return getattr(ctx, "saved_tensors" if name == "saved_variables" else name)
    if name not in _CTX_INTERNAL and name in vars(ctx):
        return vars(ctx)[name]
    raise AttributeError(f"'{ctx.node_name}' object has no attribute '{name}'")


def set_ctx_attribute(ctx: FunctionCtx, name: str, value: Any) -> None:
    """``ctx.name = value``: an attribute of the script's own (torch's ctx takes any)."""
    if name in _CTX_INTERNAL or name.startswith("__"):
        raise AttributeError(f"gradcli run does not write the ctx's attribute '{name}'")
    setattr(ctx, name, value)


def delete_ctx_attribute(ctx: FunctionCtx, name: str) -> None:
    """``del ctx.name``: an attribute the script set on it."""
    if name in _CTX_INTERNAL or name.startswith("__") or name not in vars(ctx):
        raise AttributeError(f"'{ctx.node_name}' object has no attribute '{name}'")
    delattr(ctx, name)


def once_differentiable(function: Any) -> Any:
    """``@once_differentiable`` on a script's backward: it runs without recording."""
    if not isinstance(function, Function):
        raise TypeError("once_differentiable decorates a function of the script")
    made = Function(
        function.name, function.parameters, function.body, function.closure, line=function.line
    )
    made.doc, made.qualname = function.doc, function.qualname
    made.wrapped = lambda: gc.set_grad_enabled(False)
    return made


def function_class() -> LibraryBase:
    """``torch.autograd.Function``, the base a script's custom function derives from."""
    base = library_base(autograd.Function, "torch.autograd.function.Function")
    base.members["apply"] = _applying
    return base


def _applying(apply: Any) -> Builtin:
    """``F.apply`` for the script: an input the forward wrote in place (``ctx.mark_dirty``)
    is, as in torch, the very tensor returned, its ``grad_fn`` the function's node; the
    engine returns a new tensor holding its values, which the script's names follow."""

    def call(*args: Any, **kwargs: Any) -> Any:
        found = apply(*args, **kwargs)
        outputs = found if isinstance(found, tuple) else (found,)
        for given in args:
            if not isinstance(given, gc.Tensor):
                continue
            for output in outputs:
                if isinstance(output, gc.Tensor) and output is not given:
                    if succeeds(output, given):
                        rename(RUNNING[-1], given, output)
        return found

    return Builtin("apply", call)


def function_module(base: LibraryBase, missing: Any) -> Module:
    """``torch.autograd.function``."""
    return Module(
        "torch.autograd.function",
        {
            "Function": base,
            "once_differentiable": Builtin("once_differentiable", once_differentiable),
            "__missing__": missing,
        },
    )
