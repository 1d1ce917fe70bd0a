"""PyTorch's statements that a program may hold beside its assignments.

A PyTorch snippet pasted as a program means what it means in torch:

- ``import torch``, ``import torch.nn.functional as F``, ``from torch import nn``: nothing to
  run (the language knows torch's module prefixes, see ``functions.TORCH_MODULES``);
- ``x = torch.ones(2, 2, requires_grad=True)``, ``torch.tensor([1., 2])``, ``torch.rand(3)``,
  ``torch.empty(3)``, ``torch.zeros(2).requires_grad_()``: an input declared with that
  default (a constructor, as ``x = ones(2, 2)`` is);
- ``out.backward()``, ``y.backward(v)``, ``y.backward(gradient=v, retain_graph=True)``: the
  output and its cotangent, for ``grad``, ``vjp`` and ``jacobian``;
- ``g, = torch.autograd.grad(y, x, grad_outputs=v)``, ``gx, gw = ...``: the output, its
  cotangent and the inputs whose gradients are asked for (see ``grad_of``);
- ``x.grad``, ``print(x.grad)``, ``print('x:', x)``: what the snippet shows; the command
  shows its own answer, so these run nothing.

Each function reads one statement's ``ast`` (never runs it) and returns None when the
statement is not of its kind.
"""

from __future__ import annotations

import ast
import functools
import json
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import GradcliError
from .functions import DTYPE_NAMES, TORCH_MODULES
from .statement import BackwardCall, Statement
from .values import CONSTRUCTORS, LIKE

# What PyTorch code imports: torch and its parts, under any name
_IMPORTABLE = ("torch",)


class Refused(Exception):
    """A statement of one of these kinds, written in a way gradcli does not take: the
    message, the node at fault and a hint."""

    def __init__(self, node: ast.AST, message: str, hint: str | None = None):
        super().__init__(message)
        self.node, self.message, self.hint = node, message, hint

    def error(self, statement: Statement) -> GradcliError:
        """The error for this refusal in ``statement`` (its nodes parsed from the statement's
        own text), its caret under the node at fault."""
        column = getattr(self.node, "col_offset", 0)  # UTF-8 bytes; carets count characters
        characters = len(statement.text.encode()[:column].decode(errors="ignore"))
        return statement.error(self.message, characters, self.hint)


class Missing(Exception):
    """A name the script takes from a torch module that PyTorch 2.13 does not have there
    (``torch.cbrt``, ``F.sin``): ``gradcli run`` raises Python's ``kind: message`` when it
    reaches the statement, as Python would; ``span`` the columns of the name."""

    def __init__(self, kind: str, message: str, node: ast.AST):
        super().__init__(f"{kind}: {message}")
        self.kind, self.message = kind, message
        start = getattr(node, "col_offset", 0)
        self.span = (start, getattr(node, "end_col_offset", None) or start)


# the module each spelling of a torch module names
MODULE_OF = {"F": "torch.nn.functional", "nn.functional": "torch.nn.functional"}


@functools.cache
def torch_has() -> dict[str, frozenset[str]]:
    """Each torch module's names among the language's functions (``torch_names.json``,
    written by ``docs/write_torch_names.py`` from torch 2.13)."""
    document = json.loads((Path(__file__).parent / "torch_names.json").read_text())
    return {module: frozenset(names) for module, names in document["has"].items()}


def torch_in_place() -> frozenset[str]:
    """The language's tensor methods whose in-place form torch 2.13's Tensor has (``sin``
    for ``x.sin_()``; ``torch_names.json``)."""
    document = json.loads((Path(__file__).parent / "torch_names.json").read_text())
    return frozenset(document["in_place"])


def where_torch_has(name: str) -> list[str]:
    """The torch modules that have the function ``name`` (``torch.nn.functional`` for
    gelu), in ``torch_has()``'s order."""
    return [module for module, names in torch_has().items() if name in names]


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
    if dotted(value.func.value) != "torch" or not is_constructor(value.func.attr):
        return None
    arguments = [ast.get_source_segment(text, a) or "" for a in value.args]
    for keyword in value.keywords:
        if keyword.arg != "dtype":  # see dtype()
            arguments.append(ast.get_source_segment(text, keyword) or "")
    if grad_after:
        arguments.append("requires_grad=True")
    return f"{value.func.attr}({', '.join(arguments)})"


def is_constructor(name: str) -> bool:
    """Whether torch's function ``name`` makes a tensor from numbers (``ones``), or shaped as
    another tensor (``zeros_like``)."""
    return name in CONSTRUCTORS or name in LIKE


def like_source(call: ast.Call) -> ast.Name | None:
    """The tensor ``x`` of ``zeros_like(x)`` (None for another constructor); Refused where
    it is not a name."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name not in LIKE:
        return None
    source = call.args[0] if call.args else None
    if not isinstance(source, ast.Name):
        raise Refused(
            source or call,
            f"{name} takes a tensor by its name here",
            f"give it a name first: t = ...; torch.{name}(t)",
        )
    return source


# torch's dtypes, by the names a script may give them (dtype=torch.float64, torch.long): the
# op table's, which the dtype= argument of an operation (x.to(torch.long)) takes too
DTYPES = DTYPE_NAMES
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


def backward(node: ast.stmt) -> BackwardCall | None:
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
    return BackwardCall(call.func.value.id, None if gradient is None else gradient.id, retain.value)


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
    if isinstance(node, ast.JoinedStr):  # f"loss {y.item():.4f}"
        return all(
            isinstance(v, ast.Constant) or (isinstance(v, ast.FormattedValue) and _shown(v.value))
            for v in node.values
        )
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func  # x.item()
        if not isinstance(node, ast.Attribute) or node.attr not in ("item", "tolist"):
            return False
    if isinstance(node, ast.Attribute) and node.attr in ("grad", "shape", "item", "tolist"):
        node = node.value
    return isinstance(node, ast.Name) and dotted(node) not in TORCH_MODULES


# torch.autograd.grad's parameters, in its signature's order (only_inputs is deprecated and
# changes nothing; is_grads_batched and materialize_grads are not taken)
GRAD_PARAMETERS = (
    "outputs",
    "inputs",
    "grad_outputs",
    "retain_graph",
    "create_graph",
    "only_inputs",
    "allow_unused",
)
_GRAD_FLAGS = {
    "retain_graph": None,
    "create_graph": False,
    "only_inputs": True,
    "allow_unused": False,
}


@dataclass(frozen=True)
class GradCall:
    """``torch.autograd.grad(outputs, inputs, grad_outputs, ...)`` as written: the nodes of
    its outputs, its inputs (names) and its grad_outputs (None: not given; a ``None`` item
    for an output left to its implicit 1), and its flags."""

    outputs: tuple[ast.expr, ...]
    inputs: tuple[ast.Name, ...]
    grad_outputs: tuple[ast.expr | None, ...] | None
    retain_graph: bool | None
    create_graph: bool
    allow_unused: bool


def is_grad_call(node: ast.AST) -> bool:
    """Whether ``node`` calls ``torch.autograd.grad``."""
    return isinstance(node, ast.Call) and dotted(node.func) == "torch.autograd.grad"


def grad_call(call: ast.Call) -> GradCall:
    """The parts of a ``torch.autograd.grad`` call; Refused for what gradcli does not take."""
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(GRAD_PARAMETERS):
        raise Refused(call, "torch.autograd.grad takes at most 7 arguments, none starred")
    given: dict[str, ast.expr] = dict(zip(GRAD_PARAMETERS, call.args))
    for keyword in call.keywords:
        if keyword.arg not in GRAD_PARAMETERS or keyword.arg in given:
            raise Refused(
                keyword,
                f"torch.autograd.grad takes {', '.join(GRAD_PARAMETERS)} here, not {keyword.arg!r}"
                if keyword.arg not in given
                else f"torch.autograd.grad got {keyword.arg} twice",
                "e.g. torch.autograd.grad(outputs=y, inputs=x, grad_outputs=v)",
            )
        given[keyword.arg] = keyword.value
    for needed in ("outputs", "inputs"):
        if needed not in given:
            raise Refused(
                call,
                f"torch.autograd.grad needs {needed}",
                "e.g. torch.autograd.grad(outputs=y, inputs=x)",
            )
    flags = {}
    for name, default in _GRAD_FLAGS.items():
        value = given.get(name)
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            flags[name] = default
        elif isinstance(value, ast.Constant) and isinstance(value.value, bool):
            flags[name] = value.value
        else:
            raise Refused(value, f"{name} of torch.autograd.grad must be True or False")
    inputs = _items(given["inputs"])
    for item in inputs:
        if not isinstance(item, ast.Name):
            raise Refused(
                item,
                "the inputs of torch.autograd.grad must be names here",
                "name each tensor first: w = ...; torch.autograd.grad(y, [x, w])",
            )
    outputs = _items(given["outputs"])
    for item in outputs:
        if _constant_none(item):
            raise Refused(item, "an output of torch.autograd.grad cannot be None")
    grad_outputs = given.get("grad_outputs")
    gradients = None
    if grad_outputs is not None and not _constant_none(grad_outputs):
        gradients = tuple(None if _constant_none(i) else i for i in _items(grad_outputs))
    return GradCall(
        tuple(outputs),
        tuple(i for i in inputs if isinstance(i, ast.Name)),
        gradients,
        flags["retain_graph"],
        bool(flags["create_graph"]),
        bool(flags["allow_unused"]),
    )


def _items(node: ast.expr) -> list[ast.expr]:
    """The items of a list or tuple written out, else ``node`` alone."""
    if isinstance(node, (ast.List, ast.Tuple)):
        if not node.elts:
            raise Refused(node, "torch.autograd.grad needs at least one tensor here")
        return list(node.elts)
    return [node]


def _constant_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def grad_of(node: ast.stmt) -> tuple[BackwardCall, tuple[str, ...]] | None:
    """``g, = torch.autograd.grad(y, [x, w], grad_outputs=v)`` (or ``g = ...``, ``...[0]``,
    the call alone) as a statement of its own: the pass it asks for, and the names it binds;
    None for any other statement. Refused for what a program does not take: outputs and
    grad_outputs are one name each here."""
    if not isinstance(node, (ast.Assign, ast.Expr)):
        return None
    value = node.value.value if isinstance(node.value, ast.Subscript) else node.value
    if not is_grad_call(value):
        return None
    assert isinstance(value, ast.Call)  # see is_grad_call
    call = grad_call(value)
    name_first = "give it a name first: v = torch.ones(3); torch.autograd.grad(y, x, v)"
    if len(call.outputs) != 1 or not isinstance(call.outputs[0], ast.Name):
        raise Refused(
            call.outputs[0], "torch.autograd.grad takes one output, a name, here", name_first
        )
    gradients = call.grad_outputs or (None,)
    if len(gradients) != 1 or not (gradients[0] is None or isinstance(gradients[0], ast.Name)):
        raise Refused(
            value, "the grad_outputs of torch.autograd.grad must be one name here", name_first
        )
    gradient = gradients[0].id if isinstance(gradients[0], ast.Name) else None
    retain = call.create_graph if call.retain_graph is None else call.retain_graph
    bound: list[str] = []
    for target in node.targets if isinstance(node, ast.Assign) else ():
        for element in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
            if not isinstance(element, ast.Name):
                raise Refused(element, "torch.autograd.grad's tensors are assigned to names here")
            bound.append(element.id)
    inputs = tuple(i.id for i in call.inputs)
    return BackwardCall(call.outputs[0].id, gradient, retain, inputs), tuple(bound)


# torch's in-place operators and methods, and the operator of the language each applies
_IN_PLACE_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
IN_PLACE_METHODS = {"add_": "+", "sub_": "-", "mul_": "*", "div_": "/", "pow_": "**"}
ZERO = "zero_"


@dataclass(frozen=True)
class InPlace:
    """``y += e`` (``symbol`` "+", ``operand`` e), ``y.mul_(e)`` or ``y.zero_()`` (symbol
    and operand None): torch writes into ``target``; ``method`` whether the statement is a
    method call, whose value (``y`` itself) the interactive interpreter shows."""

    target: ast.Name
    symbol: str | None
    operand: ast.expr | None
    method: bool


def in_place(node: ast.stmt) -> InPlace | None:
    """``node`` as an in-place operation on a name, or None; Refused for one gradcli does not
    take."""
    if isinstance(node, ast.AugAssign):
        symbol = _IN_PLACE_OPERATORS.get(type(node.op))
        if not isinstance(node.target, ast.Name):
            raise Refused(
                node,
                "an in-place operator (+=, -=, *=, /=) takes a name here",
                "write y = y.clone(); then y += ... on the name",
            )
        if symbol is None:
            raise Refused(node, "the in-place operators taken are +=, -=, *=, /= and **=")
        return InPlace(node.target, symbol, node.value, method=False)
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return None
    call = node.value
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in (*IN_PLACE_METHODS, ZERO):
        return None
    if not isinstance(func.value, ast.Name):
        if func.attr == ZERO and dotted(func.value) is not None:
            return None  # x.grad.zero_()
        raise Refused(func, f"{func.attr} is called on a name here", f"write y.{func.attr}(...)")
    wanted = 0 if func.attr == ZERO else 1
    if call.keywords or len(call.args) != wanted:
        raise Refused(
            call,
            f"{func.attr} takes "
            + ("no argument" if not wanted else "one argument, and no keywords")
            + " here",
            f"write y.{func.attr}({'' if not wanted else 'e'})",
        )
    operand = call.args[0] if call.args else None
    return InPlace(func.value, IN_PLACE_METHODS.get(func.attr), operand, method=True)


def retains(node: ast.stmt) -> bool:
    """Whether ``node`` is ``y.retain_grad()``: a program's commands show the gradients they
    are asked for (``grad --retain-grad y``), so it runs nothing there."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "retain_grad"
        and isinstance(node.value.func.value, ast.Name)
        and not node.value.args
        and not node.value.keywords
    )


# torch's settings of a session, and what a program's commands take instead
SETTINGS = {
    "torch.manual_seed": "give --seed N (gradcli's generator is not torch's)",
    "torch.set_default_dtype": "give --dtype float32 or --dtype float64 (the default)",
}


def setting(node: ast.stmt) -> None:
    """Refused for ``torch.manual_seed(0)`` and ``torch.set_default_dtype(...)``, which
    ``gradcli run`` takes, and a program's commands take as an option."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        called = dotted(node.value.func) or ""
        if called in SETTINGS:
            raise Refused(
                node,
                f"a program takes {called} as an option of the command (gradcli run takes it "
                "in the script)",
                SETTINGS[called],
            )


def zero_grad(node: ast.stmt) -> str | None:
    """The name ``x`` of a statement ``x.grad.zero_()``, or None."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        if not call.args and not call.keywords and isinstance(call.func, ast.Attribute):
            owner = dotted(call.func.value) or ""
            if call.func.attr == ZERO and owner.endswith(".grad") and owner.count(".") == 1:
                return owner.removesuffix(".grad")
    return None
