"""PyTorch's statements that a program may hold beside its assignments.

A PyTorch snippet pasted as a program means what it means in torch:

- ``import torch``, ``import torch.nn.functional as F``, ``from torch import nn``: nothing to
  run (the language knows torch's module prefixes, see ``functions.TORCH_MODULES``);
- ``x = torch.ones(2, 2, requires_grad=True)``, ``torch.tensor([1., 2])``, ``torch.rand(3)``,
  ``torch.empty(3)``, ``torch.zeros(2).requires_grad_()``: an input declared with that
  default (a constructor, as ``x = ones(2, 2)`` is);
- ``out.backward()``, ``y.backward(v)``, ``y.backward(gradient=v, retain_graph=True)``: the
  output and its cotangent, for ``grad``, ``vjp`` and ``jacobian``;
- ``x.grad``, ``print(x.grad)``, ``print('x:', x)``: what the snippet shows; the command
  shows its own answer, so these run nothing.

Each function reads one statement's ``ast`` (never runs it) and returns None when the
statement is not of its kind.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..values import CONSTRUCTORS
from .functions import TORCH_MODULES

# What PyTorch code imports: torch and its parts, under any name
_IMPORTABLE = ("torch",)


@dataclass(frozen=True)
class Backward:
    """``output.backward(gradient, retain_graph=...)``: ``gradient`` names the cotangent
    (None: the output is a scalar, or torch's error says it is not)."""

    output: str
    gradient: str | None
    retain_graph: bool


class Refused(Exception):
    """A statement of one of these kinds, written in a way gradcli does not take: the
    message, the node at fault and a hint."""

    def __init__(self, node: ast.AST, message: str, hint: str | None = None):
        super().__init__(message)
        self.node, self.message, self.hint = node, message, hint


def is_import(node: ast.stmt) -> bool:
    """Whether ``node`` imports torch or a part of it; Refused for any other import."""
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        modules = [node.module or ""]
    else:
        return False
    for module in modules:
        if module.split(".")[0] not in _IMPORTABLE:
            raise Refused(
                node,
                f"gradcli reads PyTorch code: it does not import {module!r}",
                "keep only the torch imports (import torch, import torch.nn.functional as F)",
            )
    return True


def dotted(node: ast.expr) -> str | None:
    """``torch.nn.functional`` for that chain of names, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def constructor(value: ast.expr, text: str) -> str | None:
    """``torch.ones(2, requires_grad=True)`` as the language's constructor text
    (``ones(2, requires_grad=True)``), ``.requires_grad_()`` as ``requires_grad=True``; None
    when ``value`` is not a torch constructor. ``text`` is the statement."""
    grad_after = False
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "requires_grad_"
        and not value.keywords
        and len(value.args) <= 1
    ):
        if value.args and not (
            isinstance(value.args[0], ast.Constant) and value.args[0].value is True
        ):
            raise Refused(value, "requires_grad_ takes True here", "write x.requires_grad_()")
        grad_after, value = True, value.func.value
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    if dotted(value.func.value) != "torch" or value.func.attr not in CONSTRUCTORS:
        return None
    arguments = [ast.get_source_segment(text, a) or "" for a in value.args]
    for keyword in value.keywords:
        if keyword.arg != "dtype":  # see dtype()
            arguments.append(ast.get_source_segment(text, keyword) or "")
    if grad_after:
        arguments.append("requires_grad=True")
    return f"{value.func.attr}({', '.join(arguments)})"


# torch's dtypes, by the names a script may give them (dtype=torch.float64, torch.long)
DTYPES = {
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "int64": "int64",
    "long": "int64",
    "int32": "int32",
    "int": "int32",
    "bool": "bool",
}
FLOATING = ("float32", "float64")  # the dtypes of a floating run


def dtype(value: ast.expr) -> str | None:
    """The dtype a torch constructor call is given (``dtype=torch.float64``: "float64"), or
    None; Refused for a dtype gradcli does not have."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr == "requires_grad_":
            value = value.func.value
    if not isinstance(value, ast.Call):
        return None
    for keyword in value.keywords:
        if keyword.arg == "dtype":
            name = dotted(keyword.value) or ""
            module, _, attr = name.rpartition(".")
            if module != "torch" or attr not in DTYPES:
                raise Refused(
                    keyword.value,
                    f"gradcli has no dtype {ast.unparse(keyword.value)!r} for a tensor",
                    "write dtype=torch.float32 (the default), torch.float64, torch.long, "
                    "torch.int32 or torch.bool",
                )
            return DTYPES[attr]
    return None


def backward(node: ast.stmt) -> Backward | None:
    """``y.backward(...)`` as a statement of its own, or None."""
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return None
    call = node.value
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "backward":
        return None
    if not isinstance(call.func.value, ast.Name):
        raise Refused(call.func, "backward is called on a name here", "write y = ...; y.backward()")
    given: dict[str, ast.expr] = dict(zip(("gradient", "retain_graph"), call.args))
    for keyword in call.keywords:
        if keyword.arg not in ("gradient", "retain_graph") or keyword.arg in given:
            raise Refused(
                keyword,
                f"backward takes gradient and retain_graph here, not {keyword.arg!r}",
                "write y.backward(v) or y.backward(gradient=v, retain_graph=True)",
            )
        given[keyword.arg] = keyword.value
    if len(call.args) > 2:
        raise Refused(call.args[2], "backward takes gradient and retain_graph here")
    gradient, retain = given.get("gradient"), given.get("retain_graph", ast.Constant(False))
    if gradient is not None and not isinstance(gradient, ast.Name):
        raise Refused(
            gradient,
            "the gradient given to backward must be a name here",
            "give it a name first: v = torch.ones(3); y.backward(v)",
        )
    if not isinstance(retain, ast.Constant) or not isinstance(retain.value, bool):
        raise Refused(retain, "retain_graph must be True or False")
    return Backward(call.func.value.id, None if gradient is None else gradient.id, retain.value)


def shows(node: ast.stmt) -> bool:
    """Whether ``node`` only shows values, as ``x.grad`` or ``print('x:', x)`` do: names,
    their ``.grad``, ``.shape`` and ``.item()``, and text. Anything else is not of this
    kind, and is checked as the language's."""
    if not isinstance(node, ast.Expr):
        return False
    value = node.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "print"
    ):
        return not value.keywords and all(_shown(a) for a in value.args)
    return _shown(value) and not isinstance(value, ast.Constant)


def _shown(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func  # x.item()
        if not isinstance(node, ast.Attribute) or node.attr not in ("item", "tolist"):
            return False
    if isinstance(node, ast.Attribute) and node.attr in ("grad", "shape", "item", "tolist"):
        node = node.value
    return isinstance(node, ast.Name) and dotted(node) not in TORCH_MODULES
