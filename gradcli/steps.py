"""A statement as its operations: the steps that ``explain`` differentiates one at a time.

A statement's element-wise part (arithmetic and the functions sympy differentiates element by
element) stays one step. Every other operation (a sum, a matrix product, softmax, a loss,
indexing) becomes a step of its own, and so does an element-wise expression given to one as
an operand: ``z = x @ W + b`` is the steps ``x @ W`` and ``z = (x @ W) + b``. Each step reads
only names and numbers, so its local derivative is one formula.
"""

from __future__ import annotations

from dataclasses import dataclass

from .lang import functions as F
from .ops.explaining import number_text

# How tightly an operator binds, for parentheses; a name, number, call or index binds tightest.
_ATOM = 5
_BINDING = {
    "+": (" + ", 1),
    "-": (" - ", 1),
    "*": ("*", 2),
    "/": ("/", 2),
    "@": (" @ ", 2),
    "**": ("**", 4),
}
_NEG = 3
_RIGHT = {"**"}  # a ** b ** c is a ** (b ** c)
_KEEP_RIGHT = {"-", "/", "@"}  # a - (b - c) and a / (b * c) keep their parentheses


@dataclass(frozen=True)
class Step:
    """One operation of a statement: ``key`` names its value in the run (the statement's
    target for its last step), ``label`` is how it is shown, ``ir`` reads names only."""

    key: str
    label: str
    ir: list
    atom: bool = True  # whether the label needs no parentheses as an operand


def _text(ir) -> tuple[str, int]:
    """The program text of an IR tree, with the strength of its outermost operator."""
    kind = ir[0]
    if kind == "const":
        text = number_text(ir[1])
        return text, (_NEG if text.startswith("-") else _ATOM)
    if kind == "ref":
        return ir[1], _ATOM
    if kind == "index":
        base = _wrapped(ir[1], _ATOM)
        items = ", ".join(_index_item(i) for i in ir[2])
        return f"{base}[{items}]", _ATOM
    name, args = ir[1], ir[2]
    symbol = F.FUNCTIONS[name].operator
    if symbol in _BINDING:
        operator, level = _BINDING[symbol]
        left = _wrapped(args[0], level + (symbol in _RIGHT))
        right = _wrapped(args[1], level + (symbol in _KEEP_RIGHT))
        return f"{left}{operator}{right}", level
    if symbol == "-x":
        return "-" + _wrapped(args[0], _NEG), _NEG
    return f"{name}({', '.join(_arguments(name, args))})", _ATOM


def _wrapped(ir, level: int) -> str:
    text, own = _text(ir)
    return text if own >= level else f"({text})"


def ir_text(ir) -> str:
    """``x @ W + b``, ``sum(x, dim=0)``, ``x[0:2]``: an IR tree as program text."""
    return _text(ir)[0]


def _arguments(name: str, args: list) -> list[str]:
    """A call's arguments as written: operands in order, options only where not the default."""
    params = F.FUNCTIONS[name].params
    texts = []
    for i, arg in enumerate(args):
        param = params[min(i, len(params) - 1)]
        if arg[0] == "list":
            texts.append("[" + ", ".join(ir_text(item) for item in arg[1]) + "]")
        elif arg[0] != "lit":
            texts.append(ir_text(arg))
        elif param.kind == F.SIZES:
            texts.append(str(arg[1]))
        elif arg[1] != param.default:
            value = repr(arg[1]) if isinstance(arg[1], str) else arg[1]
            texts.append(f"{param.name}={value}")
    return texts


def _index_item(item) -> str:
    if isinstance(item, list):
        start, stop, step = ("" if v is None else str(v) for v in item)
        return f"{start}:{stop}" + (f":{step}" if step else "")
    return "None" if item is None else str(item)


def operand_name(step: Step) -> str:
    """A step as an operand in a formula: ``(x @ W)``, but ``sum(x)``, ``x[0]`` and ``z`` bare."""
    return step.label if step.atom else f"({step.label})"


def split(target: str, ir: list, elementwise) -> list[Step]:
    """The steps of ``target = ir`` in the order they run, the statement's own step last.

    ``elementwise(name)`` tells whether a function stays inside an element-wise step. A
    sub-expression written twice in one statement is one step.
    """
    steps: list[Step] = []

    def new_step(rewritten: list, original: list) -> list:
        label, level = _text(original)
        for step in steps:
            if step.label == label:
                return ["ref", step.key]
        key = f"{target}: {label}"  # no program name has a colon: no clash
        steps.append(Step(key, label, rewritten, level == _ATOM))
        return ["ref", key]

    def operand(node: list) -> list:
        """A name or a number for an operation to read."""
        return node if node[0] in ("const", "ref") else new_step(rewrite(node, True), node)

    def rewrite(node: list, own_step: bool) -> list:
        kind = node[0]
        if kind in ("const", "ref"):
            return node
        if kind == "call" and elementwise(node[1]):
            return ["call", node[1], [a if a[0] == "lit" else rewrite(a, False) for a in node[2]]]
        if kind == "index":
            rewritten = ["index", operand(node[1]), node[2]]
        else:
            rewritten = ["call", node[1], [_operands_of(a, operand) for a in node[2]]]
        return rewritten if own_step else new_step(rewritten, node)

    steps.append(Step(target, target, rewrite(ir, True)))
    return steps


def _operands_of(arg: list, operand) -> list:
    if arg[0] == "lit":
        return arg
    if arg[0] == "list":
        return ["list", [operand(item) for item in arg[1]]]
    return operand(arg)
