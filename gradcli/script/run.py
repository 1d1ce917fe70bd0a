"""``gradcli run SCRIPT``: a PyTorch script, statement by statement, printing what torch prints.

The script is never executed as Python. ``ast`` splits it into statements (it only parses),
and each statement goes through the validator (``lang/validate.py``) and becomes a ``Step``:
plain data holding the typed IR of its expressions (``lang/parse.py``). The steps then run
in order on a live environment of engine tensors, with torch's defaults (float32 unless
``dtype=`` says otherwise) and what Python's interactive interpreter prints:

- ``print(a, b, sep=..., end=...)``, with Python's rules (``str`` of each value);
- the ``repr`` of every bare expression statement whose value is not None (``x.grad`` on a
  line of its own shows the gradient);
- tensors as torch prints them (``torchtext.tensor_repr``), with torch's node names in
  ``grad_fn=<...>``: where the engine builds an operation from others, its last node is named
  after the op table's ``backward_name`` of the operation (``y[0] = ...`` shows
  ``CopySlices``, not the engine's ``WhereBackward0``);
- torch's warnings on stderr in Python's format (``script.py:7: UserWarning: ...`` and the
  line), once per line as Python's warning filter shows them;
- torch's errors as Python reports an uncaught exception (the traceback's frame in the script,
  then ``RuntimeError: ...``), after everything printed before them; ``ScriptError`` carries
  them, and the command exits 1 as Python does.

What gradcli cannot take (a statement kind it does not have yet, text the validator refuses)
is a ``GradcliError`` before anything runs.
"""

from __future__ import annotations

import ast
import sys
import warnings
import weakref
from collections.abc import Callable
from dataclasses import asdict, astuple, dataclass, field, fields, replace
from typing import Any, NoReturn, TextIO

import numpy as np

from .. import engine as gc
from ..base import bounds
from ..base import torch_text as torchtext
from ..base.errors import GradcliError
from ..engine.selection import UnpackError
from ..lang import functions as F
from ..lang import pytorch
from ..lang.inline import Functions
from ..lang.ir import Call, Const, Index, Name, Node, from_json, names, to_json
from ..lang.program import Assignment, Numbers
from ..lang.validate import (
    Checked,
    Statement,
    check,
    check_all,
    check_characters,
    check_expression,
    check_results,
    grad_name,
    reserved,
)
from ..lang.values import (
    INTEGER_DTYPES,
    LIKE,
    existing_file,
    generator_for,
    parse_constructor,
    quiet_parse,
    whole_constructor,
)
from .format_size import TextBudget

# torch 2.13's words for what this module reproduces
NONLEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
    "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)
SCALAR_OUTPUTS = "grad can be implicitly created only for scalar outputs"
REAL_SCALAR_OUTPUTS = "grad can be implicitly created only for real scalar outputs"
FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
LEAF_WRITE = f"a view of {LEAF_INPLACE}"
ZERO_NODE = "ZeroBackward0"  # the node of y.zero_() on a tensor that requires grad
HESSIAN_SCALAR = (
    "The Tensor returned by the function given to hessian should contain a single element"
)
VJP_WITHOUT_V = (
    "The vector v can only be None if the user-provided function returns a single Tensor "
    "with a single element."
)
JVP_WITHOUT_V = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)
FUNC_GRAD_SCALAR = (
    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
    "{} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
)
NO_RETAIN = "can't retain_grad on Tensor that has requires_grad=False"
RANDOM = ("rand(", "randn(", "rand_like(", "randn_like(")  # the constructors that draw
SEEDED = 13  # with torch.manual_seed(n), gradcli draws from default_rng([SEEDED, n])

# What a shown value may be followed by: attributes, and methods called without arguments
ATTRIBUTES = ("grad", "shape", "dtype", "requires_grad", "is_leaf")
METHODS = ("item", "tolist", "numel", "size", "dim", "zero_")

# The statements gradcli run does not take yet, as a person names them
_NOT_YET = {
    ast.AsyncFor: "async for loops",
    ast.Break: "break",
    ast.Continue: "continue",
    ast.While: "while loops",
    ast.ClassDef: "classes",
    ast.If: "if statements",
    ast.With: "with blocks other than `with torch.no_grad():`",
    ast.AsyncWith: "with blocks other than `with torch.no_grad():`",
    ast.Try: "try blocks",
    ast.AnnAssign: "annotated assignments",
    ast.Delete: "del",
    ast.Assert: "assert",
    ast.Raise: "raise",
    ast.Return: "return outside a function",
    ast.Global: "global",
    ast.Nonlocal: "nonlocal",
}
_GRAD = grad_name("")  # the start of the name x.grad is read as
_STEP_HINT = "write the steps out one statement at a time, or see `gradcli --help`"


INTEGER_GRAD = "Only Tensors of floating point and complex dtype can require gradients"


def _created_dtype(node: ast.Call, dtype: str | None, default: np.dtype) -> np.dtype:
    """The dtype torch gives a constructor's tensor: its ``dtype=``, else int64 for whole
    numbers (``torch.tensor([0, 2])``, ``torch.arange(3)``), else the default dtype
    (float32, or what torch.set_default_dtype made it)."""
    if dtype in INTEGER_DTYPES:
        return INTEGER_DTYPES[dtype]
    if dtype is not None:
        return np.dtype(dtype)
    return np.dtype(np.int64) if whole_constructor(node) else default


class ScriptError(Exception):
    """An error torch (or Python) raises at a statement: the script stops there, as Python
    stops, with ``kind: message`` after the traceback's frame; exit 1."""

    def __init__(
        self, statement: Statement, kind: str, message: str, span: tuple[int, int] | None = None
    ):
        super().__init__(f"{kind}: {message}")
        self.statement, self.kind, self.message = statement, kind, message
        self.span = span  # the columns of the statement's text at fault: Python's carets


@dataclass(frozen=True)
class Shown:
    """One value a statement shows: a literal (a string, a number, None), or the value of
    ``ir`` followed by ``access`` (``x.grad.shape``: ``Name("x")``, ``("grad", "shape")``;
    a method as ``"item()"``). ``line`` is the script's line of the value."""

    line: int
    literal: str | int | float | bool | None = None
    ir: Node | None = None
    access: tuple[str, ...] = ()
    columns: dict[str, int] = field(default_factory=dict)
    several: bool = False  # ir is the first result of a call that gives several: show them all
    # an f-string: its ``pieces`` (literals, and values each with the ``spec`` and
    # ``conversion`` of its ``{value!r:spec}``), joined
    fstring: bool = False
    pieces: tuple[Shown, ...] = ()
    spec: str = ""
    conversion: int = -1  # Python's: -1 none, ord("r") !r, ord("s") !s, ord("a") !a
    span: tuple[int, int] | None = None  # an f-string's columns in the statement's text


@dataclass(frozen=True)
class Gradients:
    """A ``torch.autograd.grad`` call of an ``autograd`` step: the step's ``shown`` holds its
    ``outputs`` outputs, then its ``inputs`` inputs, then its ``grad_outputs`` gradients
    (None: not given; a literal None for an output left to its implicit 1)."""

    outputs: int
    inputs: int
    grad_outputs: int | None
    retain_graph: bool | None
    create_graph: bool
    allow_unused: bool
    unpack: bool = False


@dataclass(frozen=True)
class Functional:
    """A call of torch.autograd.functional's ``name`` (or ``grad``: torch.func.grad's): the
    step's ``shown`` holds its ``inputs`` inputs, then its ``vectors`` vectors v (None: no v);
    ``many``/``many_vectors``: given as a tuple; ``argnums``: torch.func.grad's."""

    name: str
    inputs: int
    many: bool
    vectors: int | None
    many_vectors: bool
    argnums: int = 0
    unpack: bool = False


@dataclass(frozen=True)
class Step:
    """One statement, ready to run.

    ``kind`` is ``assign`` (``target = ir``), ``number`` (``target = number``, a Python
    number), ``create`` (``target`` made by a torch
    constructor, ``constructor`` its text, ``dtype`` given or None), ``write`` (``y[0] = ...``:
    ``ir`` is the setitem of ``target``), ``backward``, ``print`` (``shown`` joined by ``sep``,
    then ``end``), ``show`` (a bare expression: its repr unless None), ``nothing`` (an import).
    ``autograd`` (``torch.autograd.grad``: ``shown`` its outputs, inputs and grad_outputs,
    ``grad`` what they are; its tuple goes to ``target``, or its item ``item`` does, or it is
    unpacked into ``targets``, or shown when the statement is the call alone).
    ``update`` (``y += e``, ``y.add_(e)``, ``y.zero_()``: ``ir`` the new value of
    ``target``, written into it as torch does; ``node_name`` the name of its node where
    torch's differs from the operation's; ``shows``: a method, whose value is shown).
    ``functional`` (torch.autograd.functional's jacobian, hessian, vjp, jvp, or
    torch.func.grad: ``ir`` the function's result over its ``parameters``, ``shown`` its
    inputs and vectors; the result placed as an ``autograd`` step's is).
    ``no_grad``: inside ``with torch.no_grad():``. ``retain`` (``target.retain_grad()``),
    ``default_dtype`` (``torch.set_default_dtype``: ``dtype``), ``seed``
    (``torch.manual_seed``: ``number``). ``raise``: Python's ``error`` (its kind, message and
    the columns of its carets) when the script gets there (``torch.cbrt``: torch has none).
    """

    kind: str
    statement: Statement
    target: str | None = None
    ir: Node | None = None
    constructor: str | None = None
    dtype: str | None = None
    backward: pytorch.Backward | None = None
    shown: tuple[Shown, ...] = ()
    sep: str = " "
    end: str = "\n"
    columns: dict[str, int] = field(default_factory=dict)
    no_grad: bool = False
    number: int | float | None = None
    targets: tuple[str, ...] = ()
    item: int | None = None
    grad: Gradients | None = None
    node_name: str | None = None
    shows: bool = False
    parameters: tuple[str, ...] = ()
    functional: Functional | None = None
    error: tuple[str, str, int, int] | None = None


# -- the parse cache -----------------------------------------------------------------------------


def load_steps(source: str, use_cache: bool = True) -> list[Step]:
    """The steps of a script, from the parse cache when it holds them (a script run again
    needs neither sympy nor the validator); an entry that does not read back is made again."""
    from ..lang.cache import read_entry, write_entry

    if use_cache:
        data = read_entry(source, "script")
        try:
            if isinstance(data, dict) and data["source"] == source:
                return [_step_from_json(step) for step in data["steps"]]
        except Exception:  # noqa: BLE001 - an entry not of the compiler's steps: made again
            pass
    steps = compile_script(source)
    if use_cache:
        write_entry(source, "script", {"source": source, "steps": [_step_json(s) for s in steps]})
    return steps


def _step_json(step: Step) -> dict[str, Any]:
    data = {f.name: getattr(step, f.name) for f in fields(step)}
    data["statement"] = [step.statement.number, step.statement.line, step.statement.text]
    data["ir"] = None if step.ir is None else to_json(step.ir)
    data["backward"] = None if step.backward is None else list(astuple(step.backward))
    data["grad"] = None if step.grad is None else asdict(step.grad)
    data["functional"] = None if step.functional is None else asdict(step.functional)
    data["shown"] = [_shown_json(s) for s in step.shown]
    return data


def _shown_json(shown: Shown) -> dict[str, Any]:
    data = {f.name: getattr(shown, f.name) for f in fields(shown)}
    data["ir"] = None if shown.ir is None else to_json(shown.ir)
    data["pieces"] = [_shown_json(p) for p in shown.pieces]
    return data


def _shown_from_json(data: dict[str, Any]) -> Shown:
    """The shown item ``_shown_json`` wrote; an error for anything else."""
    shown = Shown(
        **{
            **data,
            "ir": None if data["ir"] is None else from_json(data["ir"], F.PROGRAM_OPS),
            "access": tuple(data["access"]),
            "pieces": tuple(_shown_from_json(p) for p in data["pieces"]),
            "span": None if data["span"] is None else tuple(data["span"]),
        }
    )
    known = {*ATTRIBUTES, *(f"{m}()" for m in METHODS)}
    if not isinstance(shown.literal, (str, int, float, type(None))):
        raise ValueError("not a literal")
    if not set(shown.access) <= known:
        raise ValueError(f"not an attribute shown: {shown.access}")
    if not isinstance(shown.spec, str) or shown.conversion not in _CONVERSIONS:
        raise ValueError("not a format")
    return shown


def _step_from_json(data: dict[str, Any]) -> Step:
    """The step ``_step_json`` wrote; an error for anything else (an IR calling an operation
    the language does not have, a kind no step has)."""
    if data["kind"] not in _KINDS:
        raise ValueError(f"not a step: {data['kind']!r}")
    if data["dtype"] not in (None, *pytorch.DTYPES.values()):
        raise ValueError(f"not a dtype: {data['dtype']!r}")
    given = dict(data)
    given["statement"] = Statement(*data["statement"])
    given["ir"] = None if data["ir"] is None else from_json(data["ir"], F.PROGRAM_OPS)
    output, gradient, retain, inputs, zero = data["backward"] or (None,) * 5
    given["backward"] = (
        None
        if output is None
        else pytorch.Backward(
            output, gradient, bool(retain), None if inputs is None else tuple(inputs), bool(zero)
        )
    )
    given["grad"] = None if data["grad"] is None else Gradients(**data["grad"])
    given["functional"] = None if data["functional"] is None else Functional(**data["functional"])
    given["targets"] = tuple(data["targets"])
    given["parameters"] = tuple(data["parameters"])
    given["error"] = None if data["error"] is None else tuple(data["error"])
    given["shown"] = tuple(_shown_from_json(s) for s in data["shown"])
    return Step(**given)


_KINDS = (
    "assign",
    "number",
    "create",
    "write",
    "backward",
    "print",
    "show",
    "nothing",
    "autograd",
    "update",
    "functional",
    "retain",
    "default_dtype",
    "seed",
    "raise",
)
_CONVERSIONS: dict[int, Callable[[Any], str]] = {
    -1: format,
    ord("s"): str,
    ord("r"): repr,
    ord("a"): ascii,
}


# -- from text to steps ------------------------------------------------------------------------


def compile_script(source: str) -> list[Step]:
    """The steps of a script; ``GradcliError`` for anything gradcli does not take."""
    check_characters(source)
    try:
        module = quiet_parse(source, "exec")
    except SyntaxError as exc:
        line = (exc.text or "").rstrip("\n")
        raise GradcliError(
            f"Python cannot parse the script: {exc.msg}",
            where=f"line {exc.lineno}",
            source=line or None,
            column=None if exc.offset is None or not line else max(exc.offset - 1, 0),
            hint="check the brackets and quotes of that line",
        ) from None
    except (RecursionError, MemoryError):
        raise GradcliError("the script is nested too deeply to parse") from None
    steps: list[Step] = []
    _compile_block(module.body, source, steps, _Context(Functions(), {}), no_grad=False)
    return steps


@dataclass
class _Context:
    """What compiling a script knows beyond each statement: its functions, and the names
    bound to whole numbers written out (``n = 5``), which ``range(n)`` may use."""

    functions: Functions
    whole: dict[str, int]
    # a torch module's name in the script -> the module (``import torch as T``: T -> torch)
    aliases: dict[str, str] = field(default_factory=dict)


def _compile_block(
    body: list[ast.stmt], source: str, steps: list[Step], context: _Context, no_grad: bool
) -> None:
    functions = context.functions
    for node in body:
        text = ast.get_source_segment(source, node) or ""
        statement = Statement(len(steps) + 1, node.lineno, text)
        as_written = statement
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            context.aliases.update(pytorch.aliases(node))
        elif context.aliases:  # T.sin(x), after import torch as T: torch.sin(x)
            written = pytorch.unaliased(node, context.aliases)
            if written is not node:
                node = written
                statement = Statement(statement.number, statement.line, ast.unparse(node))
        if isinstance(node, ast.With) and _is_no_grad(node):
            _compile_block(node.body, source, steps, context, no_grad=True)
            continue
        if isinstance(node, ast.For):
            _unroll(node, statement, source, steps, context, no_grad)
            continue
        if functions.define(node, statement):
            continue
        expanded = functions.expand(node, statement)
        if expanded is not node:  # a call of the script's function, written out
            node = expanded
            statement = Statement(statement.number, statement.line, ast.unparse(node))
        try:
            made = _compile_node(node, statement, functions)
        except pytorch.Missing as missing:  # torch.cbrt: Python raises it when it gets there
            span = missing.span_in(as_written.text, context.aliases) or (-1, -1)  # no carets
            error = (missing.kind, missing.message, *span)
            made = [Step("raise", as_written, error=error)]
        steps.extend(step if not no_grad else _under_no_grad(step) for step in made)
        for step in made:
            for name in (step.target, *step.targets):
                context.whole.pop(name or "", None)
            if step.kind == "number" and type(step.number) is int and step.target:
                context.whole[step.target] = step.number


def _compile_node(node: ast.stmt, statement: Statement, functions: Functions) -> list[Step]:
    if isinstance(node, (ast.Assign, ast.Expr)) and _calls_grad(node.value):
        return _gradients(statement)
    if isinstance(node, (ast.Assign, ast.Expr)) and _calls_functional(node.value):
        return _functional(statement, functions)
    if isinstance(node, (ast.AugAssign, ast.Expr)) and (update := _update(statement)):
        return update
    return _compile_statement(node, statement)


MAX_UNROLLED = 20_000  # the steps of a script whose loops are unrolled


def _unroll(
    node: ast.For,
    statement: Statement,
    source: str,
    steps: list[Step],
    context: _Context,
    no_grad: bool,
) -> None:
    """``for i in range(...):`` with whole numbers: its body's steps once per iteration, each
    after a step binding ``i`` to its number."""
    if not isinstance(node.target, ast.Name) or node.orelse:
        raise statement.error(
            "gradcli run takes a loop for NAME in range(...): without else",
            0,
            "write for i in range(10):",
        )
    iterations = range(*_range_arguments(node.iter, statement, context.whole))
    body: list[Step] = []
    _compile_block(node.body, source, body, context, no_grad)
    total = len(steps) + len(iterations) * (len(body) + 1)
    if total > MAX_UNROLLED:
        raise statement.error(
            f"the script's loops make {total} steps (iterations times statements), more "
            f"than the {MAX_UNROLLED} gradcli run takes",
            0,
            "run fewer iterations",
        )
    target = node.target.id
    for number in iterations:
        steps.append(Step("number", statement, target, number=number))
        steps.extend(body)
    context.whole.pop(target, None)
    if iterations:
        context.whole[target] = iterations[-1]


def _range_arguments(node: ast.expr, statement: Statement, whole: dict[str, int]) -> list[int]:
    """The whole numbers of ``range(...)`` (written out, or names bound to them)."""
    hint = "write range(10), or range(n) after n = 10"
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and 1 <= len(node.args) <= 3
        and not node.keywords
    ):
        raise statement.error("gradcli run takes a loop over range(...) only", 0, hint)
    numbers = []
    for argument in node.args:
        value = _number(argument)
        if isinstance(argument, ast.Name) and argument.id in whole:
            value = whole[argument.id]
        if type(value) is not int:
            raise statement.error(
                "range(...) takes whole numbers written out, or names bound to them, here",
                argument.col_offset,
                hint,
            )
        numbers.append(value)
    if len(numbers) == 3 and numbers[2] == 0:
        raise statement.error("range() arg 3 must not be zero", 0, hint)
    return numbers


def _under_no_grad(step: Step) -> Step:
    return replace(step, no_grad=True)


def _is_no_grad(node: ast.With) -> bool:
    return len(node.items) == 1 and (
        isinstance(call := node.items[0].context_expr, ast.Call)
        and not call.args
        and not call.keywords
        and pytorch.dotted(call.func) == "torch.no_grad"
        and node.items[0].optional_vars is None
    )


def _compile_statement(node: ast.stmt, statement: Statement) -> list[Step]:
    """The steps of one statement: the constants its constructors make first (see
    ``_constants``), then the statement's own."""
    if isinstance(node, ast.Pass):
        return []
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        try:
            pytorch.is_import(node)
        except pytorch.Refused as exc:
            raise statement.error(exc.message, 0, exc.hint) from None
        return [Step("nothing", statement)]
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], (ast.Tuple, ast.List)):
        return _unpacking(check_all(statement, grads=True))
    if isinstance(node, ast.Assign):
        checked = check(statement, grads=True)
        number = _number(node.value)
        if number is not None and not checked.rebinds:  # lr = 0.1: a Python number
            return [Step("number", statement, checked.target, number=number)]
        return [*_constants(checked), _assignment(checked)]
    if isinstance(node, ast.Expr):
        made: list[Step] = []
        step = _expression(statement, made)
        return [*made, step]
    what = _NOT_YET.get(type(node), f"a '{type(node).__name__}' statement")
    raise statement.error(f"gradcli run does not take {what} yet", 0, _STEP_HINT)


def _unpacking(checked: list[Checked]) -> list[Step]:
    """``values, indices = max(x, 1)``: a step per name, in order; a name that a later one
    reads (``x, i = max(x, 1)``) would be read after it changed, so it is refused. The
    constants the call makes (``torch.tensor(2.0)``) are made once, first: every name's call
    reads them."""
    for k, each in enumerate(checked[:-1]):
        if any(each.target in later.names for later in checked[k + 1 :]):
            raise each.statement.error(
                f"{each.target!r} is unpacked into and read by the same statement",
                0,
                "give the results new names, e.g. values, indices = ...",
            )
    return [*_constants(checked[0]), *(_assignment(each) for each in checked)]


def _constants(checked: Checked) -> list[Step]:
    """The create steps of the constants ``checked``'s constructors make
    (``x + torch.eye(2)``), each under its name (see ``validate.Made``)."""
    steps = []
    for made in checked.made:
        steps.append(
            Step(
                "create",
                checked.statement,
                made.name,
                constructor=made.constructor,
                dtype=made.dtype,
            )
        )
    return steps


def _update(statement: Statement) -> list[Step] | None:
    """``y += e``, ``y.mul_(e)``, ``y.zero_()`` (an ``update`` step, after the constants
    its operand makes), or None."""
    node = quiet_parse(statement.text, "exec").body[0]
    try:
        change = pytorch.in_place(node)
    except pytorch.Refused as exc:
        raise _refusal(statement, exc) from None
    if change is None:
        return None
    target = Name(_variable(statement, change.target.id, "name"))
    made: list[Step] = []
    if change.symbol is None:  # zero_(): every element written, as y[...] = 0 writes
        setitem = F.OPERATORS["[]="].name
        ir: Node = Call(setitem, (target, Const(0.0)), (Ellipsis,))
        columns = {setitem: 0}
    else:
        assert change.operand is not None  # an operator's operand
        checked = check_expression(statement, change.operand)
        made = _constants(checked)
        function = F.OPERATORS[change.symbol].name
        ir = Call(function, (target, _ir(checked)), ())
        columns = {**checked.columns, function: 0}
    return [
        *made,
        Step(
            "update",
            statement,
            target.name,
            ir,
            columns=columns,
            node_name=ZERO_NODE if change.symbol is None else None,
            shows=change.method,
        ),
    ]


def _refusal(statement: Statement, refused: pytorch.Refused) -> GradcliError:
    """The error for what pytorch.py refuses in ``statement`` (its nodes parsed from the
    statement's own text)."""
    column = _characters(statement.text, getattr(refused.node, "col_offset", 0))
    return statement.error(refused.message, column, refused.hint)


def _characters(text: str, column: int) -> int:
    """The characters of ``text`` before Python's ``column`` (which counts UTF-8 bytes): the
    column carets count."""
    return len(text.encode()[:column].decode(errors="ignore"))


def _calls_grad(value: ast.expr) -> bool:
    """Whether ``value`` is ``torch.autograd.grad(...)``, or an item of its tuple."""
    return pytorch.is_grad_call(value.value if isinstance(value, ast.Subscript) else value)


def _gradients(statement: Statement) -> list[Step]:
    """``g = torch.autograd.grad(...)`` (its tuple), ``g = torch.autograd.grad(...)[0]``,
    ``g, = ...`` and ``gx, gw = ...`` (unpacked), or the call alone (shown); a
    ``grad_outputs=torch.ones(3)`` is made by a step of its own first."""
    node = quiet_parse(statement.text, "exec").body[0]
    assert isinstance(node, (ast.Assign, ast.Expr))  # see _compile_statement
    value, item = node.value, None
    if isinstance(value, ast.Subscript):
        index = value.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            raise statement.error(
                "an item of torch.autograd.grad's tuple is taken by a whole number here",
                index.col_offset,
                "write torch.autograd.grad(y, x)[0]",
            )
        value, item = value.value, index.value
    assert isinstance(value, ast.Call)  # see _calls_grad
    try:
        call = pytorch.grad_call(value)
    except pytorch.Refused as exc:
        raise _refusal(statement, exc) from None
    line = statement.line
    made: list[Step] = []
    shown = [_shown(statement, output, made) for output in call.outputs]
    shown += [Shown(line, ir=Name(_variable(statement, i.id, "tensor"))) for i in call.inputs]
    shown += [_operand(statement, g, made) for g in call.grad_outputs or ()]
    target, targets, unpack = _results(statement, node, item is None)
    grad = Gradients(
        len(call.outputs),
        len(call.inputs),
        None if call.grad_outputs is None else len(call.grad_outputs),
        call.retain_graph,
        call.create_graph,
        call.allow_unused,
        unpack,
    )
    step = Step("autograd", statement, target, shown=tuple(shown), item=item, grad=grad)
    return [*made, replace(step, targets=targets)]


# torch's functions that take a function, by the name gradcli run calls each
FUNCTIONALS = {f"torch.autograd.functional.{n}": n for n in ("jacobian", "hessian", "vjp", "jvp")}
FUNC_GRAD = "torch.func.grad"
_VECTORS = ("vjp", "jvp")  # the functions that take a vector v


def _calls_functional(value: ast.expr) -> bool:
    """Whether ``value`` is ``torch.autograd.functional.jacobian(f, x)`` (hessian, vjp, jvp),
    or ``torch.func.grad(f)(x)``."""
    if not isinstance(value, ast.Call):
        return False
    maker = value.func
    return pytorch.dotted(maker) in FUNCTIONALS or (
        isinstance(maker, ast.Call) and pytorch.dotted(maker.func) == FUNC_GRAD
    )


def _functional(statement: Statement, functions: Functions) -> list[Step]:
    """A call of a function of torch.autograd.functional, or of ``torch.func.grad(f)``: the
    function handed on is the script's (or a lambda), inlined over its parameters."""
    node = quiet_parse(statement.text, "exec").body[0]
    assert isinstance(node, (ast.Assign, ast.Expr))  # see _calls_functional
    call = node.value
    assert isinstance(call, ast.Call)  # see _calls_functional
    if isinstance(call.func, ast.Call):  # torch.func.grad(f, argnums=k)(x, ...)
        name, func, inputs, argnums = "grad", *_func_grad(statement, call.func, call)
        many = many_vectors = False
        vectors: list[ast.expr | None] | None = None
    else:
        name = FUNCTIONALS[str(pytorch.dotted(call.func))]
        given = _functional_arguments(statement, name, call)
        func, argnums = given["func"], 0
        many = isinstance(given["inputs"], (ast.Tuple, ast.List))
        inputs = _listed(given["inputs"])
        v = given.get("v")
        many_vectors = isinstance(v, (ast.Tuple, ast.List))
        vectors = None if v is None or _is_none(v) else list(_listed(v))
    function = functions.given(func, statement)
    if len(function.parameters) != len(inputs):
        raise statement.error(
            f"{function.name} takes {len(function.parameters)} arguments, and {name} gives it "
            f"{len(inputs)}",
            0,
            "give the inputs as a tuple: jacobian(f, (x, w)) for def f(x, w)",
        )
    text = ast.unparse(functions.body(function, statement))
    inner = Statement(statement.number, statement.line, text)  # what carets point into
    ir = _ir(check_expression(inner, quiet_parse(text, "eval").body))
    made: list[Step] = []
    shown = [_operand(statement, i, made) for i in inputs]
    shown += [_operand(statement, v, made) for v in vectors or ()]
    target, targets, unpack = _results(statement, node, True)
    spec = Functional(
        name,
        len(inputs),
        many,
        None if vectors is None else len(vectors),
        many_vectors,
        argnums,
        unpack,
    )
    step = Step("functional", statement, target, ir, shown=tuple(shown), targets=targets)
    return [*made, replace(step, parameters=function.parameters, functional=spec)]


def _func_grad(
    statement: Statement, maker: ast.Call, call: ast.Call
) -> tuple[ast.expr, list[ast.expr], int]:
    """The function, the arguments and argnums of ``torch.func.grad(f, argnums=k)(x, ...)``."""
    hint = "write torch.func.grad(f)(x), or torch.func.grad(f, argnums=1)(x, w)"
    if len(maker.args) != 1 or call.keywords or not call.args:
        raise statement.error("gradcli run takes torch.func.grad(f)(arguments) here", 0, hint)
    argnums = 0
    for keyword in maker.keywords:
        value = keyword.value
        if keyword.arg != "argnums" or not (
            isinstance(value, ast.Constant) and type(value.value) is int
        ):
            raise statement.error("torch.func.grad takes argnums=<whole number> here", 0, hint)
        argnums = value.value
    if not -len(call.args) <= argnums < len(call.args):
        raise statement.error(
            f"argnums={argnums} of torch.func.grad, for {len(call.args)} arguments", 0, hint
        )
    return maker.args[0], list(call.args), argnums % len(call.args)


def _functional_arguments(statement: Statement, name: str, call: ast.Call) -> dict[str, ast.expr]:
    """The arguments of torch.autograd.functional's ``name``, by parameter."""
    parameters = ("func", "inputs", "v") if name in _VECTORS else ("func", "inputs")
    hint = f"write torch.autograd.functional.{name}({', '.join(parameters)})"
    if len(call.args) > len(parameters) or any(isinstance(a, ast.Starred) for a in call.args):
        raise statement.error(f"{name} takes {', '.join(parameters)} here", 0, hint)
    given = dict(zip(parameters, call.args))
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg is not None and keyword.arg in parameters and keyword.arg not in given:
            given[keyword.arg] = value
        elif not (
            keyword.arg in ("create_graph", "strict")
            and isinstance(value, ast.Constant)
            and value.value is False
        ):
            raise statement.error(
                f"{name} takes {', '.join(parameters)} here (create_graph and strict left False)",
                0,
                hint,
            )
    for needed in ("func", "inputs"):
        if needed not in given:
            raise statement.error(f"{name} needs {needed}", 0, hint)
    return given


def _listed(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, (ast.Tuple, ast.List)) else [node]


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _operand(statement: Statement, node: ast.expr | None, made: list[Step]) -> Shown:
    """An argument's value: an expression, None, or a torch constructor (``torch.ones(3)``),
    which a step of its own (added to ``made``) makes first."""
    if node is None:
        return Shown(statement.line)
    constructor = _constructor(statement, node)
    if constructor is None:
        return _shown(statement, node, made)
    name = f"_made_{statement.number}_{len(made)}"  # a name no script can write
    made.append(replace(constructor, target=name))
    return Shown(statement.line, ir=Name(name))


def _results(
    statement: Statement, node: ast.Assign | ast.Expr, may_unpack: bool
) -> tuple[str | None, tuple[str, ...], bool]:
    """Where a statement puts the value it computes: (the name, or None for a statement
    that shows it; the names it is unpacked into; whether it is unpacked)."""
    if isinstance(node, ast.Expr):
        return None, (), False
    if len(node.targets) != 1:
        raise statement.error("assign the result to one name here", 0)
    place = node.targets[0]
    unpack = isinstance(place, (ast.Tuple, ast.List)) and may_unpack
    elements = place.elts if isinstance(place, (ast.Tuple, ast.List)) and unpack else [place]
    targets: tuple[str, ...] = ()
    for element in elements:
        if not isinstance(element, ast.Name):
            raise statement.error(
                "the tensors are assigned to names here",
                element.col_offset,
                "write g, = torch.autograd.grad(y, x) or gx, gw = ...",
            )
        targets += (_variable(statement, element.id, "name"),)
    return (None if unpack else targets[0]), (targets if unpack else ()), unpack


def _constructor(statement: Statement, node: ast.expr) -> Step | None:
    """The create step of a torch constructor written as an argument, or None."""
    try:
        made = pytorch.constructor(node, statement.text)
        dtype = None if made is None else pytorch.dtype(node)
    except pytorch.Refused as exc:
        raise _refusal(statement, exc) from None
    if made is None:
        return None
    return Step("create", statement, constructor=made, dtype=dtype)


def _variable(statement: Statement, name: str, what: str) -> str:
    """``name``, a variable a script may write and read, or the error saying why not."""
    if name.startswith("_") or reserved(name):
        raise statement.error(
            f"{name!r} cannot be a {what} here: "
            + ("names may not start with '_'" if name.startswith("_") else "it is a built-in name"),
            0,
            "choose another name, e.g. g or w_2",
        )
    return name


def _number(node: ast.expr) -> int | float | None:
    """The value of a number written as it is (``3``, ``-0.5``), else None."""
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    inner = node.operand if isinstance(node, ast.UnaryOp) and negative else node
    if not isinstance(inner, ast.Constant):
        return None
    value = inner.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return -value if negative else value
    return None


def _assignment(checked: Checked) -> Step:
    statement = checked.statement
    target = checked.target
    if checked.constructor is not None:
        return Step(
            "create", statement, target, constructor=checked.constructor, dtype=checked.dtype
        )
    kind = "write" if checked.rebinds else "assign"
    ir = _ir(checked)
    if not names(ir):
        raise statement.error(
            "this computes a Python number, which gradcli run does not do yet",
            0,
            "write the number itself (lr = 0.01), or compute with tensors",
        )
    return Step(kind, statement, target, ir, columns=checked.columns)


def _ir(checked: Checked) -> Node:
    from ..lang.parse import to_ir, to_sympy  # imports sympy: only for expressions

    try:
        return to_ir(to_sympy(checked))
    except (SyntaxError, RecursionError, MemoryError):
        raise checked.statement.error(
            "the expression is nested too deeply or is too long to parse",
            hint="split it into several statements",
        ) from None


def _expression(statement: Statement, made: list[Step]) -> Step:
    """A statement that is an expression: ``y.backward(...)``, ``print(...)`` or a value
    (which the interactive interpreter shows); the constants its expressions make go to
    ``made``."""
    tree = quiet_parse(statement.text, "exec").body[0]
    assert isinstance(tree, ast.Expr)  # the statement's own text, an expression
    value = tree.value
    setting = _setting(statement, value)
    if setting is not None:
        return setting
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "backward"
    ):
        if not isinstance(value.func.value, ast.Name):  # (x * x).sum().backward()
            return _backward_of(statement, value, value.func, made)
        checked = check(statement)
        return Step("backward", statement, backward=checked.backward)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "print"
    ):
        shown = tuple(_shown(statement, a, made) for a in value.args)
        options = {"sep": " ", "end": "\n"}
        for keyword in value.keywords:
            given = keyword.value
            if keyword.arg not in options or not (
                isinstance(given, ast.Constant) and isinstance(given.value, str)
            ):
                raise statement.error(
                    "print takes sep= and end= strings here",
                    keyword.value.col_offset,
                    "e.g. print(x, y, sep=', ')",
                )
            options[keyword.arg] = given.value
        return Step("print", statement, shown=shown, sep=options["sep"], end=options["end"])
    return Step("show", statement, shown=(_shown(statement, value, made),))


def _setting(statement: Statement, value: ast.expr) -> Step | None:
    """``y.retain_grad()``, ``torch.set_default_dtype(torch.float64)`` or
    ``torch.manual_seed(0)`` as a step, else None."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    func, called = value.func, pytorch.dotted(value.func)
    arguments = len(value.args) + len(value.keywords)
    if func.attr == "retain_grad" and called != "torch.retain_grad":
        if not isinstance(func.value, ast.Name) or arguments:
            raise statement.error(
                "retain_grad() is called on a name here, without arguments", 0, "y.retain_grad()"
            )
        return Step("retain", statement, _variable(statement, func.value.id, "name"))
    if called == "torch.set_default_dtype":
        given = value.args[0] if len(value.args) == 1 and not value.keywords else None
        name = "" if given is None else pytorch.dotted(given) or ""
        module, _, attr = name.rpartition(".")
        if module != "torch" or pytorch.DTYPES.get(attr) not in pytorch.FLOATING:
            raise statement.error(
                "torch.set_default_dtype takes torch.float32 or torch.float64 here",
                0,
                "write torch.set_default_dtype(torch.float64)",
            )
        return Step("default_dtype", statement, dtype=pytorch.DTYPES[attr])
    if called == "torch.manual_seed":
        number = _number(value.args[0]) if len(value.args) == 1 and not value.keywords else None
        if type(number) is not int:
            raise statement.error(
                "torch.manual_seed takes a whole number written out here",
                0,
                "write torch.manual_seed(0)",
            )
        return Step("seed", statement, number=number)
    return None


def _backward_of(
    statement: Statement, call: ast.Call, func: ast.Attribute, made: list[Step]
) -> Step:
    """``(x * x).sum().backward(...)``: the tensor, made by a step of its own (under a name
    no script can write), then its backward."""
    output = f"_b{statement.number}"
    checked = check_expression(statement, func.value)
    made.extend(_constants(checked))
    made.append(Step("assign", statement, output, _ir(checked), columns=checked.columns))
    named = ast.Call(
        ast.Attribute(ast.Name(output, ast.Load()), "backward"), call.args, call.keywords
    )
    try:
        backward = pytorch.backward(ast.Expr(named))
    except pytorch.Refused as exc:
        raise _refusal(statement, exc) from None
    return Step("backward", statement, backward=backward)


def _fstring(statement: Statement, node: ast.JoinedStr, made: list[Step]) -> Shown:
    """``f"loss {y.item():.4f}"``: its pieces, each value shown as ``print`` shows one (never
    evaluated as Python), with a format spec written out."""
    line = statement.line + node.lineno - 1
    pieces = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            pieces.append(Shown(line, literal=str(value.value)))
            continue
        assert isinstance(value, ast.FormattedValue)  # what an f-string holds besides text
        parts = [] if value.format_spec is None else list(ast.iter_child_nodes(value.format_spec))
        if not all(isinstance(v, ast.Constant) for v in parts):
            raise statement.error(
                "gradcli run takes a format spec written out in an f-string, as {x:.4f}",
                0,
                "write the width and precision themselves",
            )
        written = "".join(str(getattr(v, "value", "")) for v in parts)
        shown = _shown(statement, value.value, made)
        pieces.append(replace(shown, spec=written, conversion=value.conversion))
    span = None
    if node.lineno == node.end_lineno == 1 and node.end_col_offset is not None:
        text = statement.text
        span = (_characters(text, node.col_offset), _characters(text, node.end_col_offset))
    return Shown(line, fstring=True, pieces=tuple(pieces), span=span)


def _shown(statement: Statement, node: ast.expr, made: list[Step]) -> Shown:
    """What ``node`` shows; the constants its expression makes go to ``made``."""
    line = statement.line + node.lineno - 1
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, type(None))):
        return Shown(line, literal=node.value)
    if isinstance(node, ast.JoinedStr):
        return _fstring(statement, node, made)
    access: list[str] = []
    while True:
        if isinstance(node, ast.Attribute) and node.attr in ATTRIBUTES:
            access.insert(0, node.attr)
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and not node.args
            and not node.keywords
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in METHODS
        ):
            access.insert(0, node.func.attr + "()")
            node = node.func.value
        else:
            break
    if "zero_()" in access and access.index("zero_()") != access.index("grad") + 1:
        raise statement.error(
            "gradcli run takes zero_() on a .grad only", 0, "write x.grad.zero_()"
        )
    if isinstance(node, ast.Name) and not reserved(node.id):
        if pytorch.dotted(node) in F.TORCH_MODULES:
            raise statement.error(f"gradcli run does not show the module {node.id!r}", 0)
        return Shown(line, ir=Name(node.id), access=tuple(access))
    results = check_results(statement, node) if not access else None
    if results is not None:  # torch.max(x, 1): torch.return_types.max(values=..., ...)
        made.extend(_constants(results))
        return Shown(line, ir=_ir(results), columns=results.columns, several=True)
    checked = check_expression(statement, node)
    made.extend(_constants(checked))
    return Shown(line, ir=_ir(checked), access=tuple(access), columns=checked.columns)


# -- running the steps ---------------------------------------------------------------------------


class _Size(tuple[int, ...]):
    """``torch.Size``: a tuple that prints as torch prints it."""

    def __repr__(self) -> str:
        return torchtext.size_repr(self)

    __str__ = __repr__


class _Printed:
    """A value that prints as ``text`` (a tensor, a dtype); ``kind`` is its type's name as
    Python's format() names it, ``item`` a one-element tensor's number, which an f-string
    formats (``f"{loss:.4f}"``) as torch's ``Tensor.__format__`` does."""

    def __init__(self, text: str, kind: str = "torch.dtype", item: Any = None):
        self.text, self.kind, self.item = text, kind, item

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


class _Values(Numbers):
    """The engine's domain, naming the last node of an operation the engine builds from
    others after torch's node for it (the op table's ``backward_name``)."""

    def __init__(self, env: dict[str, gc.Tensor], assignment: Assignment, session: Session):
        super().__init__(env, assignment, {}, None, session.default_dtype, session.tally)
        self.session = session

    def apply(self, function: str, call: Callable[..., Any], args: list[Any]) -> gc.Tensor:
        result = super().apply(function, _unpacking_as_python(call, self.assignment), args)
        op = F.OPS[function]
        warning = op.extra.get("warning")
        message = warning(args) if warning else None
        if message:  # torch's UserWarning for these arguments
            once = op.name if op.extra.get("warn_once") else None
            self.session.warn(self.assignment.statement.line, "UserWarning", message, once)
        node = result.grad_fn
        made_here = all(getattr(a, "grad_fn", None) is not node for a in args)
        if node is not None and made_here and node.prim is not op:  # built from others
            named = op.extra.get("built_name", op.backward_name)
            if callable(named):  # a composite's name of its arguments (a primitive's: of a node)
                named = named(args) if op.forward is None else None
            if named:
                self.session.node_names[node] = named
        return result


def _unpacking_as_python(call: Callable[..., Any], assignment: Assignment) -> Callable[..., Any]:
    """``call``, where ``a, b = x.split(1)`` does not fit stopping the script with Python's
    ValueError (exit 1), as Python does."""

    def run(*args: Any) -> Any:
        try:
            return call(*args)
        except UnpackError as exc:
            statement = assignment.statement
            assign = ast.parse(statement.text).body[0]
            assert isinstance(assign, ast.Assign)  # an unpacking statement
            target = assign.targets[0]
            span = (target.col_offset, target.end_col_offset or target.col_offset)
            raise ScriptError(statement, "ValueError", exc.python, span) from None

    return run


class Session:
    """A script's run: the live environment of tensors, and where the output goes.

    ``filename`` is the script's name as Python would report it (``<stdin>`` for ``-``);
    ``lines`` its source lines, which warnings and tracebacks quote (None for stdin: Python
    cannot quote those).
    """

    def __init__(
        self,
        filename: str,
        lines: list[str] | None,
        seed: int = 0,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ):
        self.filename, self.lines, self.seed = filename, lines, seed
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.env: dict[str, Any] = {}  # tensors, and Python numbers (lr = 0.1)
        self.node_names: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.warned: set[int | str] = set()  # lines, and the warnings given once in a run
        self.tally = bounds.Tally()  # the bytes of the script's values (--max-memory)
        self.text = TextBudget(self.tally)  # the text a statement builds, beside them
        self.default_dtype: np.dtype[Any] = np.dtype(np.float32)  # torch.set_default_dtype
        # after torch.manual_seed(n), what rand and randn draw from, in statement order
        # (before it, each name's own generator: values.generator_for)
        self.rng: np.random.Generator | None = None
        self.drawn: list[np.ndarray] = []  # what rand and randn gave, in order

    def run(self, steps: list[Step]) -> None:
        for number, step in enumerate(steps, start=1):
            bounds.tick(f"statement {number} of {len(steps)}")
            if step.no_grad:
                with gc.no_grad():
                    self.step(step)
            else:
                self.step(step)
        self.out.flush()

    def step(self, step: Step) -> None:
        self.text.restart()
        if step.kind == "create":
            self.create(step)
        elif step.kind == "number":
            assert step.target is not None  # a number step
            self.env[step.target] = step.number
        elif step.kind in ("assign", "write", "update"):
            assert step.target is not None and step.ir is not None  # see _assignment
            if step.kind != "assign":
                self.check_write(step)
            value = self.value(step, step.ir, step.columns)
            if step.kind == "assign":
                self.env[step.target] = value
                return
            if step.node_name is not None and value.grad_fn is not None:
                self.node_names[value.grad_fn] = step.node_name
            self.rebind(step, value)
            if step.shows:
                self.out.write(repr(self.printable(self.env[step.target])) + "\n")
        elif step.kind == "backward":
            self.backward(step)
        elif step.kind == "autograd":
            self.autograd(step)
        elif step.kind == "functional":
            self.functional(step)
        elif step.kind == "print":
            values = [self.shown(step, s) for s in step.shown]
            self.out.write(step.sep.join(str(v) for v in values) + step.end)
        elif step.kind == "show":
            value = self.shown(step, step.shown[0])
            if value is not None:
                self.out.write(repr(value) + "\n")
        elif step.kind == "retain":
            assert step.target is not None  # a retain step
            tensor = self.tensor(step, step.target, "has no attribute 'retain_grad'")
            if not tensor.requires_grad:
                raise ScriptError(step.statement, "RuntimeError", NO_RETAIN)
            tensor.retain_grad()
        elif step.kind == "default_dtype":
            self.default_dtype = np.dtype(step.dtype)
        elif step.kind == "raise":
            assert step.error is not None  # a raise step
            kind, message, start, end = step.error
            raise ScriptError(step.statement, kind, message, None if start < 0 else (start, end))
        elif step.kind == "seed":
            assert step.number is not None  # a seed step
            self.rng = np.random.default_rng([SEEDED, int(step.number) % 2**64])

    # -- statements
    def create(self, step: Step) -> None:
        assert step.target is not None and step.constructor is not None  # a create step
        node = ast.parse(step.constructor, mode="eval").body
        assert isinstance(node, ast.Call)  # a constructor is a call (checked by the validator)
        dtype = _created_dtype(node, step.dtype, self.default_dtype)
        like = None
        if isinstance(node.func, ast.Name) and node.func.id in LIKE:  # zeros_like(x)
            assert node.args and isinstance(node.args[0], ast.Name)  # see pytorch.like_source
            source = self.tensor(step, node.args[0].id, "has no attribute 'shape'", "TypeError")
            like = source.shape
            dtype = dtype if step.dtype is not None else source.dtype
        rng = self.rng or generator_for(step.target, self.seed)
        try:
            with bounds.charging(self.tally):
                array, keywords = parse_constructor(node, step.constructor, rng, like=like)
        except GradcliError as exc:
            raise step.statement.error(exc.message, hint=exc.hint) from None
        assert array is not None  # built: parse_constructor's build is True
        if np.asarray(array).dtype.kind == "c" and dtype.kind == "f":  # tensor([1+2j])
            dtype = np.dtype(np.complex64 if dtype.itemsize <= 4 else np.complex128)
        if step.constructor.startswith(RANDOM):
            self.drawn.append(array.astype(dtype))
        requires_grad = keywords.get("requires_grad", False)
        if not isinstance(requires_grad, bool):
            raise step.statement.error(
                "requires_grad must be True or False", hint="e.g. torch.rand(3, requires_grad=True)"
            )
        if requires_grad and dtype.kind not in "fc":
            value = quiet_parse(step.statement.text.strip(), "exec").body[0]
            assert isinstance(value, ast.Assign)  # a create step assigns its constructor
            span = (value.value.col_offset, value.value.end_col_offset or 0)
            raise ScriptError(step.statement, "RuntimeError", INTEGER_GRAD, span)
        self.env[step.target] = gc.Tensor(np.asarray(array).astype(dtype), requires_grad)

    def check_write(self, step: Step) -> None:
        """torch's error for writing into a leaf that requires grad; gradcli's refusal of a
        write into a tensor whose elements another tensor shares (a view), which gradcli's
        tensors do not follow yet."""
        assert step.target is not None  # a write step
        if step.kind == "update" and not isinstance(self.lookup(step, step.target), gc.Tensor):
            raise step.statement.error(
                f"{step.target} is a Python number: gradcli run does not compute with Python "
                "numbers yet",
                0,
                f"write the new number itself ({step.target} = 0.5)",
            )
        written = self.tensor(step, step.target, "does not support item assignment", "TypeError")
        if written.is_leaf and written.requires_grad and not step.no_grad:
            message = LEAF_INPLACE if step.kind == "update" else LEAF_WRITE
            raise ScriptError(step.statement, "RuntimeError", message)
        for name, other in self.env.items():
            if not isinstance(other, gc.Tensor) or other is written:
                continue
            if np.may_share_memory(other.data, written.data):
                raise step.statement.error(
                    f"{step.target} shares its elements with {name} (one is a view of the "
                    "other): gradcli run does not write into views yet",
                    0,
                    f"make a copy first: {step.target} = {step.target} * 1",
                )

    def rebind(self, step: Step, value: gc.Tensor) -> None:
        """``y[...] = v`` writes into y: every name of that tensor now has the new value."""
        assert step.target is not None  # a write step
        old = self.env[step.target]
        if value.dtype != old.dtype:
            raise step.statement.error(
                f"the value written has dtype {torchtext.dtype_repr(value.dtype)}, and "
                f"{step.target} {torchtext.dtype_repr(old.dtype)}: gradcli run does not "
                "convert it yet",
                0,
                "make both with the same dtype=",
            )
        if step.no_grad:  # torch writes into the tensor itself: it keeps its .grad
            old.data = value.data
            return
        for name, tensor in list(self.env.items()):
            if tensor is old:
                self.env[name] = value

    def backward(self, step: Step) -> None:
        call = step.backward
        assert call is not None  # a backward step
        output = self.tensor(step, call.output, "has no attribute 'backward'")
        gradient = None if call.gradient is None else self.lookup(step, call.gradient)
        try:
            output.backward(gradient, retain_graph=call.retain_graph)
        except gc.ComplexOutputError as exc:  # torch's words, with the dtype
            raise ScriptError(step.statement, "RuntimeError", str(exc)) from None
        except gc.ScalarOutputError:
            raise ScriptError(step.statement, "RuntimeError", SCALAR_OUTPUTS) from None
        except gc.ShapeError:
            assert gradient is not None  # only a given gradient can mismatch
            raise ScriptError(
                step.statement,
                "RuntimeError",
                f"Mismatch in shape: grad_output[0] has a shape of "
                f"{torchtext.size_repr(gradient.shape)} and output[0] has a shape of "
                f"{torchtext.size_repr(output.shape)}.",
            ) from None
        except gc.GradError as exc:
            if str(exc).startswith("Trying to backward through the graph a second time"):
                raise ScriptError(step.statement, "RuntimeError", FREED_GRAPH) from None
            if not output.requires_grad:
                raise ScriptError(step.statement, "RuntimeError", NO_GRAD_FN) from None
            raise

    def autograd(self, step: Step) -> None:
        """``torch.autograd.grad``: its checks in torch's order, with torch's words."""
        spec = step.grad
        assert spec is not None  # an autograd step
        values = [self.raw(step, shown) for shown in step.shown]
        outputs = self.tensors(step, values[: spec.outputs], "outputs of torch.autograd.grad")
        listed = values[spec.outputs : spec.outputs + spec.inputs]
        inputs = self.tensors(step, listed, "inputs of torch.autograd.grad")
        given = values[spec.outputs + spec.inputs :]
        gradients = None if spec.grad_outputs is None else given
        fail = self.fails(step)
        if gradients is not None and len(gradients) != len(outputs):
            fail(f"got {len(outputs)} tensors and {len(gradients)} gradients")
        for i, output in enumerate(outputs):
            gradient = None if gradients is None else gradients[i]
            if gradient is None:
                if output.requires_grad and output.numel() != 1:
                    fail(SCALAR_OUTPUTS)
                if output.requires_grad and output.dtype.kind == "c":
                    fail(f"{REAL_SCALAR_OUTPUTS} but got torch.{output.dtype}")
            elif not isinstance(gradient, gc.Tensor):
                raise step.statement.error(
                    f"grad_outputs of torch.autograd.grad must be tensors, not "
                    f"{type(gradient).__name__}",
                    hint="e.g. grad_outputs=torch.ones(3)",
                )
            elif gradient.shape != output.shape:
                fail(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{torchtext.size_repr(gradient.shape)} and output[{i}] has a shape of "
                    f"{torchtext.size_repr(output.shape)}."
                )
        for i, output in enumerate(outputs):
            if not output.requires_grad:
                fail(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if not all(t.requires_grad for t in inputs):
            fail("One of the differentiated Tensors does not require grad")
        try:
            found = gc.grad(
                outputs,
                inputs,
                gradients,
                retain_graph=spec.retain_graph,
                create_graph=spec.create_graph,
                allow_unused=True,
            )
        except gc.GradError as exc:
            if str(exc).startswith("Trying to backward through the graph a second time"):
                fail(FREED_GRAPH)
            raise
        for i, result in enumerate(found):
            if result is None and not spec.allow_unused:
                fail(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        self.bind(step, found, spec.unpack)

    def functional(self, step: Step) -> None:
        """torch.autograd.functional's jacobian, hessian, vjp, jvp, or torch.func.grad, of
        the script's function; torch's errors in torch's words."""
        spec, ir = step.functional, step.ir
        assert spec is not None and ir is not None  # a functional step
        values = [self.raw(step, shown) for shown in step.shown]
        inputs = self.tensors(step, values[: spec.inputs], f"inputs of {spec.name}")
        given = values[spec.inputs :]
        vectors = None if spec.vectors is None else given if spec.many_vectors else given[0]

        def func(*xs: gc.Tensor) -> gc.Tensor:
            value = self.value(step, ir, step.columns, dict(zip(step.parameters, xs)))
            return value if isinstance(value, gc.Tensor) else gc.tensor(value, dtype=gc.float32)

        arguments: Any = tuple(inputs) if spec.many else inputs[0]
        fail = self.fails(step)
        result: Any
        try:
            if spec.name == "grad":
                result = self.func_grad(step, func, inputs, spec.argnums)
            elif spec.name == "jacobian":
                result = gc.jacobian(func, arguments)
            elif spec.name == "hessian":
                result = gc.hessian(func, arguments)
            elif spec.name == "vjp":
                result = gc.vjp(func, arguments, vectors)
            else:
                result = gc.jvp(func, arguments, vectors)
        except gc.ScalarOutputError:
            fail(HESSIAN_SCALAR if spec.name == "hessian" else VJP_WITHOUT_V)
        except gc.GradError:
            if spec.name != "jvp" or vectors is not None:
                raise
            fail(JVP_WITHOUT_V)
        self.bind(step, result, spec.unpack)

    def func_grad(
        self, step: Step, func: Callable[..., gc.Tensor], inputs: list[gc.Tensor], k: int
    ) -> gc.Tensor:
        """``torch.func.grad(func, argnums=k)(*inputs)``: differentiable where an input that
        requires grad makes it so, as torch's is."""
        xs = list(inputs)
        if not xs[k].requires_grad:  # differentiated all the same, by a leaf of its own
            xs[k] = gc.Tensor(xs[k].data, requires_grad=True)
        out = func(*xs)
        if out.ndim != 0:
            self.fails(step)(FUNC_GRAD_SCALAR.format(out.ndim))
        found = (
            gc.grad(out, [xs[k]], create_graph=True, allow_unused=True)[0]
            if out.requires_grad
            else None
        )
        if found is None:
            return gc.Tensor(np.zeros_like(xs[k].data))
        if xs[k] is not inputs[k] and not _reaches_a_leaf(found, xs[k]):
            return found.detach()
        return found

    def bind(self, step: Step, found: Any, unpack: bool) -> None:
        """What ``torch.autograd.grad`` (or a function of torch.autograd.functional)
        returned, where the statement puts it."""
        if unpack:
            if not isinstance(found, tuple):
                raise step.statement.error(
                    "gradcli run unpacks a tuple only (this is a tensor)",
                    0,
                    "assign it to one name",
                )
            if len(step.targets) != len(found):
                expected = f"expected {len(step.targets)}"
                raise ScriptError(
                    step.statement,
                    "ValueError",
                    f"too many values to unpack ({expected})"
                    if len(step.targets) < len(found)
                    else f"not enough values to unpack ({expected}, got {len(found)})",
                )
            self.env.update(zip(step.targets, found))
            return
        value: Any = found
        if step.item is not None:
            if not -len(found) <= step.item < len(found):
                raise ScriptError(step.statement, "IndexError", "tuple index out of range")
            value = found[step.item]
        if step.target is not None:
            self.env[step.target] = value
        elif value is not None:
            self.out.write(repr(self.printable(value)) + "\n")

    def tensors(self, step: Step, values: list[Any], what: str) -> list[gc.Tensor]:
        for value in values:
            if not isinstance(value, gc.Tensor):
                raise step.statement.error(
                    f"the {what} must be tensors, not {type(value).__name__}",
                    hint="e.g. torch.autograd.grad(outputs=y, inputs=x)",
                )
        return values

    def fails(self, step: Step) -> Callable[[str], NoReturn]:
        """What raises torch's RuntimeError ``message`` at ``step``."""

        def fail(message: str) -> NoReturn:
            raise ScriptError(step.statement, "RuntimeError", message)

        return fail

    # -- values
    def lookup(self, step: Step, name: str) -> Any:
        """The value of ``name``: a tensor or a Python number."""
        if name not in self.env:
            raise ScriptError(step.statement, "NameError", f"name {name!r} is not defined")
        return self.env[name]

    def tensor(self, step: Step, name: str, lacks: str, kind: str = "AttributeError") -> gc.Tensor:
        """The tensor ``name`` holds; Python's error (``'float' object {lacks}``) for a
        number."""
        value = self.lookup(step, name)
        if not isinstance(value, gc.Tensor):
            raise ScriptError(step.statement, kind, f"'{type(value).__name__}' object {lacks}")
        return value

    def value(
        self, step: Step, node: Node, columns: dict[str, int], bound: dict[str, Any] | None = None
    ) -> Any:
        """The value of ``node`` (``bound``: a function's parameters, over the script's
        names)."""
        env = self.env if bound is None else {**self.env, **bound}
        for name in names(node):
            if name.startswith(_GRAD):  # x.grad in an expression
                base = self.tensor(step, name[len(_GRAD) :], "has no attribute 'grad'")
                grad = self.grad(base, step.statement.line)
                if grad is None:
                    raise step.statement.error(
                        f"{name[len(_GRAD) :]}.grad is None here: no backward() has reached it",
                        hint="call backward() on an output of it first",
                    )
                env = {**env, name: grad}
            elif name not in env:
                self.lookup(step, name)  # Python's NameError
        if isinstance(node, Name):
            return env[node.name]
        if all(isinstance(env[n], (int, float)) for n in names(node)):  # i * 2, in a loop
            raise step.statement.error(
                "this computes a Python number, which gradcli run does not do yet",
                0,
                "compute with tensors (torch.tensor(2.) * i), or print the numbers themselves",
            )
        tuples = {n: v for n, v in env.items() if isinstance(v, tuple) and n in names(node)}
        if tuples:  # g[0], where g holds what torch.autograd.grad returned
            items: dict[str, Any] = {}
            node = self.take_items(step, node, tuples, items)
            env = {**env, **items}
            if isinstance(node, Name):
                return env[node.name]
        assignment = Assignment(step.target or "", step.statement, node, None, columns)
        return _Values(env, assignment, self).tensor(node)

    def take_items(
        self, step: Step, node: Node, tuples: dict[str, tuple], items: dict[str, Any]
    ) -> Node:
        """``node`` with each ``g[k]`` of a tuple ``g`` read as a name of its own (in
        ``items``); an error for any other use of a tuple."""
        if isinstance(node, Index) and isinstance(node.base, Name) and node.base.name in tuples:
            held = tuples[node.base.name]
            if len(node.items) != 1 or not isinstance(node.items[0], int):
                raise step.statement.error(
                    f"{node.base.name} is a tuple: an item of it is taken by one whole number",
                    hint=f"write {node.base.name}[0]",
                )
            k = node.items[0]
            if not -len(held) <= k < len(held):
                raise ScriptError(step.statement, "IndexError", "tuple index out of range")
            name = f"_item_{node.base.name}_{k % len(held)}"
            items[name] = held[k]
            return Name(name)
        if isinstance(node, Name) and node.name in tuples:
            raise step.statement.error(
                f"{node.name} is a tuple (what torch.autograd.grad returns), which gradcli "
                "run computes with only item by item",
                hint=f"write {node.name}[0], or unpack it: {node.name}, = torch.autograd.grad(...)",
            )
        if isinstance(node, Index):
            return Index(self.take_items(step, node.base, tuples, items), node.items)
        if isinstance(node, Call):
            args = tuple(
                tuple(self.take_items(step, a, tuples, items) for a in arg)
                if isinstance(arg, tuple)
                else None
                if arg is None
                else self.take_items(step, arg, tuples, items)
                for arg in node.args
            )
            return Call(node.op, args, node.params)
        return node

    def grad(self, tensor: gc.Tensor, line: int) -> gc.Tensor | None:
        """``tensor.grad``, with torch's warning for a non-leaf."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grad = tensor.grad
        if caught:
            self.warn(line, "UserWarning", NONLEAF_GRAD)
        return grad

    def shown(self, step: Step, shown: Shown, span: tuple[int, int] | None = None) -> Any:
        """The Python value a shown item has: a literal, a tensor (as ``_Printed``), None, a
        number, a list, a ``torch.Size``, an f-string's text (``span``: the columns of the
        f-string it is in)."""
        if shown.fstring:
            span = span or shown.span
            return "".join(self.formatted(step, piece, span) for piece in shown.pieces)
        return self.printable(self.raw(step, shown))

    def formatted(self, step: Step, piece: Shown, span: tuple[int, int] | None) -> str:
        """One piece of an f-string: ``{value!r:spec}`` as Python formats it, a tensor as
        torch's ``Tensor.__format__`` (a one-element tensor as its number), its text charged
        to the budget before it is made; Python's errors with carets under ``span``, the
        f-string's columns."""
        value = self.shown(step, piece, span)
        if piece.conversion != -1:
            value = _CONVERSIONS[piece.conversion](value)
        elif isinstance(value, _Printed) and value.item is not None:
            value = value.item
        if isinstance(value, (_Printed, _Size)) and piece.spec:
            kind = value.kind if isinstance(value, _Printed) else "torch.Size"
            raise ScriptError(
                step.statement,
                "TypeError",
                f"unsupported format string passed to {kind}.__format__",
                span,
            )
        self.text.formatted((step.statement, None if span is None else span[0]), value, piece.spec)
        try:
            return format(value, piece.spec)
        except (ValueError, TypeError) as exc:  # Python's, for this value and spec
            raise ScriptError(step.statement, type(exc).__name__, str(exc), span) from None

    def raw(self, step: Step, shown: Shown) -> Any:
        """The value of a shown item, as the engine has it."""
        if shown.ir is None:
            return shown.literal
        if shown.several:
            assert isinstance(shown.ir, Call)  # see check_results
            return self.results(step, shown.ir, shown.columns)
        value: Any = self.value(step, shown.ir, shown.columns)
        for access in shown.access:
            value = self.access(step, shown, value, access)
        return value

    def results(self, step: Step, call: Call, columns: dict[str, int]) -> _Printed:
        """Every result of ``call`` (its first), printed as torch prints them: a named
        tuple of torch.return_types, or a tuple."""
        op = F.OPS[call.op]
        options = call.params[:-1]
        if "count" in op.extra:  # split: as many as its input's shape makes
            operands = [
                [self.value(step, e, columns) for e in a]
                if isinstance(a, tuple)
                else self.value(step, a, columns)
                for a in call.args
                if a is not None
            ]
            count = op.extra["count"](*op.arranged(operands, options))
        else:
            count = len(op.outputs)
        texts = [
            self.printable(self.value(step, replace(call, params=(*options, (k, 0))), columns)).text
            for k in range(count)
        ]
        if op.extra.get("plain"):
            return _Printed(f"({', '.join(texts)}{',' if len(texts) == 1 else ''})")
        named = ",\n".join(f"{name}={text}" for name, text in zip(op.outputs, texts))
        return _Printed(f"torch.return_types.{op.extra.get('return_type', op.name)}(\n{named})")

    def access(self, step: Step, shown: Shown, value: Any, access: str) -> Any:
        if not isinstance(value, gc.Tensor):
            attribute = access.removesuffix("()")
            raise ScriptError(
                step.statement,
                "AttributeError",
                f"'{type(value).__name__}' object has no attribute '{attribute}'",
            )
        if access == "grad":
            return self.grad(value, shown.line)
        if access in ("shape", "size()"):
            return _Size(value.shape)
        if access == "dtype":
            return _Printed(torchtext.dtype_repr(value.dtype))
        if access == "item()":
            try:
                return torchtext.item(value.data)
            except ValueError as exc:
                raise ScriptError(step.statement, "RuntimeError", str(exc)) from None
        if access == "tolist()":
            return self.tolist(step, value)
        if access == "zero_()":
            value.data[...] = 0
            return value
        simple: dict[str, Callable[[gc.Tensor], Any]] = {
            "requires_grad": lambda t: t.requires_grad,
            "is_leaf": lambda t: t.is_leaf,
            "numel()": lambda t: t.numel(),
            "dim()": lambda t: t.dim(),
        }
        return simple[access](value)

    def tolist(self, step: Step, tensor: gc.Tensor) -> Any:
        """``tensor.tolist()``, charged with its text before it is made."""
        self.text.listed((step.statement, None), tensor.numel(), tensor.dtype.kind == "c")
        return torchtext.tolist(tensor.data)

    def printable(self, value: Any) -> Any:
        if isinstance(value, gc.Tensor):
            item = torchtext.item(value.data) if value.dim() == 0 else None
            return _Printed(self.tensor_text(value), "Tensor", item)
        if isinstance(value, tuple) and not isinstance(value, _Size):
            return tuple(self.printable(v) for v in value)
        return value

    def tensor_text(self, tensor: gc.Tensor) -> str:
        node = tensor.grad_fn
        name = None if node is None else self.node_names.get(node) or node.name()
        return torchtext.tensor_repr(
            tensor.data,
            requires_grad=tensor.requires_grad,
            grad_fn=name,
            default_dtype=self.default_dtype,
        )

    # -- stderr
    def warn(self, line: int, category: str, message: str, once: str | None = None) -> None:
        """A warning as Python's default filter shows it: once per line of the script, or
        once in the run where ``once`` names it (torch's TORCH_WARN_ONCE: once a process)."""
        key = line if once is None else once
        if key in self.warned:
            return
        self.warned.add(key)
        self.out.flush()
        text = f"{self.filename}:{line}: {category}: {message}\n"
        if self.lines is not None and 0 < line <= len(self.lines):
            text += f"  {self.lines[line - 1].strip()}\n"
        self.err.write(text)
        self.err.flush()

    def traceback(self, error: ScriptError) -> str:
        """What Python prints for an uncaught exception at ``error``'s statement (its frame in
        the script; torch's own frames are not the user's)."""
        line = error.statement.line
        text = "Traceback (most recent call last):\n"
        text += f'  File "{self.filename}", line {line}, in <module>\n'
        if self.lines is not None and 0 < line <= len(self.lines):
            shown = self.lines[line - 1].strip()
            text += f"    {shown}\n"
            if error.span is not None and shown == error.statement.text.strip():
                start, end = error.span
                if end - start < len(shown):  # Python marks a part of the line
                    text += "    " + " " * start + "^" * (end - start) + "\n"
        return text + f"{error.kind}: {error.message}\n"


def _reaches_a_leaf(tensor: gc.Tensor, besides: gc.Tensor) -> bool:
    """Whether ``tensor``'s graph reaches a leaf that requires grad other than ``besides``."""
    seen: set[int] = set()
    stack = [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for operand in node.inputs or ():
            if operand.grad_fn is None and operand.requires_grad and operand is not besides:
                return True
            stack.append(operand.grad_fn)
    return False


def read_script(script: str) -> str:
    """The text of the script at this path (``-``: stdin), within ``--max-length``."""
    from ..lang.source import read_source

    if script != "-":
        existing_file(script, "gradcli run", "check the path of the script (- reads stdin)")
    return read_source(None, None, script)


def run_script(
    source: str,
    filename: str,
    seed: int = 0,
    out: TextIO | None = None,
    err: TextIO | None = None,
    use_cache: bool = True,
) -> int:
    """Run a script, printing to ``out`` and ``err``; the exit status Python would have (0,
    or 1 after torch's error). ``GradcliError`` for text gradcli does not take."""
    steps = load_steps(source, use_cache)
    lines = None if filename == "<stdin>" else source.split("\n")
    session = Session(filename, lines, seed, out, err)
    try:
        with gc.default_dtype(np.float32):  # torch's default floating dtype
            session.run(steps)
    except ScriptError as error:
        session.out.flush()
        session.err.write(session.traceback(error))
        session.err.flush()
        return 1
    return 0
