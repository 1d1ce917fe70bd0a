"""A statement as its operations: the steps that ``explain`` differentiates one at a time.

A statement's element-wise part (arithmetic and the functions sympy differentiates element by
element) stays one step. Every other operation (a sum, a matrix product, softmax, a loss,
indexing) becomes a step of its own, and so does an element-wise expression given to one as
an operand: ``z = x @ W + b`` is the steps ``x @ W`` and ``z = (x @ W) + b``. Each step reads
only names and numbers, so its local derivative is one formula.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lang import functions as F
from ...lang.ir import Call, Const, Index, Name, Node, evaluate
from ...ops.explaining import number_text

# How tightly an operator binds, for parentheses; a name, number, call or index binds tightest.
# As in Python: comparisons bind loosest, then | ^ &, then arithmetic.
_ATOM = 5
_BINDING = {
    "==": (" == ", -3),
    "!=": (" != ", -3),
    "<": (" < ", -3),
    "<=": (" <= ", -3),
    ">": (" > ", -3),
    ">=": (" >= ", -3),
    "|": (" | ", -2),
    "^": (" ^ ", -1),
    "&": (" & ", 0),
    "+": (" + ", 1),
    "-": (" - ", 1),
    "*": ("*", 2),
    "/": ("/", 2),
    "@": (" @ ", 2),
    "%": (" % ", 2),
    "//": (" // ", 2),
    "**": ("**", 4),
}
_NEG = 3
_RIGHT = {"**", "==", "!=", "<", "<=", ">", ">="}  # a ** b ** c is a ** (b ** c); (a < b) < c
# is not a chain a < b < c
_KEEP_RIGHT = {
    "-",
    "/",
    "@",
    "%",
    "//",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
}  # a - (b - c) and a / (b * c) keep their parentheses
# c*(a % b) is not c*a % b: as an operand, a remainder binds as loosely as a sum (it keeps
# its parentheses beside * and /, and gains some harmless ones: a - (b % c))
_LOOSE = {"%", "//"}


@dataclass(frozen=True)
class ExplainStep:
    """One operation of a statement: ``key`` names its value in the run (the statement's
    target for its last step), ``label`` is how it is shown, ``ir`` reads names only."""

    key: str
    label: str
    ir: Node
    atom: bool = True  # whether the label needs no parentheses as an operand


Text = tuple[str, int]  # program text, and the strength of its outermost operator


class Texts:
    """The interpreter's domain of program text: ``x @ W + b``, ``sum(x, dim=0)``, ``x[0:2]``,
    with parentheses only where the operators' strengths need them."""

    def const(self, node: Const) -> Text:
        text = number_text(node.value)
        return text, (_NEG if text.startswith("-") else _ATOM)

    def name(self, node: Name) -> Text:
        return node.name.split("#")[0], _ATOM  # y#1, an earlier value of y, is shown as y

    def index(self, node: Index, base: Text) -> Text:
        items = ", ".join(_index_item(i) for i in node.items)
        return f"{_wrapped(base, _ATOM)}[{items}]", _ATOM

    def call(self, node: Call, args: list) -> Text:
        symbol = F.OPS[node.op].operator
        if symbol == "[]=":  # y[0] = value, y[x > 0] = value: a statement's own step
            items = _index_items(node, args[2:])
            return f"{_wrapped(args[0], _ATOM)}[{items}] = {args[1][0]}", 0
        if symbol == "[tensor]":  # x[idx], x[x > 0], x[:, [0, 2]]
            return f"{_wrapped(args[0], _ATOM)}[{_index_items(node, args[1:])}]", _ATOM
        if symbol in _BINDING:
            operator, level = _BINDING[symbol]
            left = _wrapped(args[0], level + (symbol in _RIGHT))
            right = _wrapped(args[1], level + (symbol in _KEEP_RIGHT))
            return f"{left}{operator}{right}", (_BINDING["+"][1] if symbol in _LOOSE else level)
        if symbol in ("-x", "~"):
            return symbol[0] + _wrapped(args[0], _NEG), _NEG
        return f"{node.op}({', '.join(_arguments(node, args))}){_picked(node)}", _ATOM


def _index_items(node: Call, tensors: list) -> str:
    """An index as written, each tensor's slot in its layout (``node.params``) taking the
    next of ``tensors``."""
    given = iter(tensors)
    slot = F.OPERATORS["[tensor]"].extra["slot"]
    return ", ".join(
        next(given)[0] if isinstance(item, str) and item == slot else _index_item(item)
        for item in node.params
    )


def _picked(node: Call) -> str:
    """The result a call of an operation with several takes, as written after it:
    ``.indices`` (torch's named fields), ``[1]``."""
    op = F.OPS[node.op]
    output = node.params[-1] if op.params and op.params[-1].kind == F.OUTPUT else None
    if not isinstance(output, tuple) or not _takes_several(node):
        return ""
    k = output[0]
    return f".{op.outputs[k]}" if op.outputs and not op.extra.get("plain") else f"[{k}]"


def _takes_several(node: Call) -> bool:
    """Whether the call gives several results (max(x) gives one, max(x, 1) two)."""
    unless = F.OPS[node.op].extra.get("several_unless_none")
    if unless is None:
        return True
    names = [p.name for p in F.OPS[node.op].options]
    return node.params[names.index(unless)] is not None


def _wrapped(value: Text, level: int) -> str:
    text, own = value
    return text if own >= level else f"({text})"


def ir_text(node: Node) -> str:
    """``x @ W + b``, ``sum(x, dim=0)``, ``x[0:2]``: an IR tree as program text."""
    return evaluate(node, Texts())[0]


def _arguments(node: Call, args: list) -> list[str]:
    """A call's arguments as written, in signature order: operands, options only where not
    the default, by keyword (and so every operand after one, or after an operand left out)."""
    texts: list[str] = []
    operands, options = iter(zip(node.args, args)), iter(node.params)
    keyword = False
    for param in F.FUNCTIONS[node.op].params:
        if param.kind == F.SIZES:
            texts.extend(str(value) for value in options)
        elif param.kind == F.VAR_TENSORS:  # einsum(equation, a, b): the rest of the operands
            texts.extend(value[0] for _, value in operands)
        elif param.kind == F.EQUATION:  # before the operands, so never by keyword
            texts.append(repr(next(options)))
        elif param.kind in F.OPERAND_KINDS:
            arg, value = next(operands)
            if arg is None:  # left out: None, its default
                keyword = True
                continue
            listed = isinstance(arg, tuple)
            text = "[" + ", ".join(t for t, _ in value) + "]" if listed else value[0]
            texts.append(f"{param.name}={text}" if keyword else text)
        elif param.kind == F.OUTPUT:  # shown after the call (see _picked)
            next(options)
        else:
            value = next(options)
            keyword = True
            if value != param.default:
                texts.append(
                    f"{param.name}={value!r}" if isinstance(value, str) else f"{param.name}={value}"
                )
    return texts


def _index_item(item) -> str:
    if isinstance(item, slice):
        start, stop, step = (
            "" if v is None else str(v) for v in (item.start, item.stop, item.step)
        )
        return f"{start}:{stop}" + (f":{step}" if step else "")
    if item is Ellipsis:
        return "..."
    if isinstance(item, tuple):  # a list of whole numbers: x[:, [0, 2]]
        return "[" + ", ".join(map(str, item)) + "]"
    return "None" if item is None else str(item)


def operand_name(step: ExplainStep) -> str:
    """A step as an operand in a formula: ``(x @ W)``, but ``sum(x)``, ``x[0]`` and ``z`` bare."""
    return step.label if step.atom else f"({step.label})"


Piece = tuple[Node, tuple[ExplainStep, ...]]  # a rewritten tree, and the steps it reads, in order


class Splits:
    """The interpreter's domain of ``split``: a value is the tree rewritten to read the steps
    below it, with those steps. An element-wise call keeps element-wise operands inline;
    any other operand becomes a step, and so does every operand of any other operation that
    is not a name or a number."""

    def __init__(self, target: str, elementwise):
        self.target = target
        self.elementwise = elementwise

    def const(self, node: Const) -> Piece:
        return node, ()

    def name(self, node: Name) -> Piece:
        return node, ()

    def index(self, node: Index, base: Piece) -> Piece:
        (rewritten,), steps = self._operands([(node.base, base)], inline=False)
        return Index(rewritten, node.items), steps

    def call(self, node: Call, args: list) -> Piece:
        inline = self.elementwise(node.op)
        operands: list = []
        steps: tuple[ExplainStep, ...] = ()
        for arg, value in zip(node.args, args):
            if arg is None:  # an operand left out
                operands.append(None)
                continue
            if isinstance(arg, tuple):
                items, found = self._operands(list(zip(arg, value)), inline)
                operands.append(tuple(items))
            else:
                (item,), found = self._operands([(arg, value)], inline)
                operands.append(item)
            steps = _joined(steps, found)
        return Call(node.op, tuple(operands), node.params), steps

    def _operands(self, pairs: list[tuple[Node, Piece]], inline: bool):
        """The operands as the operation reads them, and the steps they take, in order."""
        nodes = []
        steps: tuple[ExplainStep, ...] = ()
        for original, (rewritten, found) in pairs:
            steps = _joined(steps, found)
            if isinstance(rewritten, (Const, Name)) or (inline and self._inline(rewritten)):
                nodes.append(rewritten)
                continue
            label, level = evaluate(original, Texts())
            key = f"{self.target}: {label}"  # no program name has a colon: no clash
            steps = _joined(steps, (ExplainStep(key, label, rewritten, level == _ATOM),))
            nodes.append(Name(key))
        return nodes, steps

    def _inline(self, node: Node) -> bool:
        return isinstance(node, Call) and self.elementwise(node.op)


def _joined(
    steps: tuple[ExplainStep, ...], more: tuple[ExplainStep, ...]
) -> tuple[ExplainStep, ...]:
    """``steps`` then those of ``more`` not among them: a sub-expression written twice in a
    statement is one step."""
    keys = {step.key for step in steps}
    return steps + tuple(step for step in more if step.key not in keys)


def split(target: str, node: Node, elementwise) -> list[ExplainStep]:
    """The steps of ``target = node`` in the order they run, the statement's own step last.

    ``elementwise(name)`` tells whether a function stays inside an element-wise step. A
    sub-expression written twice in one statement is one step.
    """
    rewritten, steps = evaluate(node, Splits(target, elementwise))
    return [*steps, ExplainStep(target, target, rewritten)]
