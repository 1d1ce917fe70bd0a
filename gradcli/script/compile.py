"""Compiling a ``gradcli run`` script into steps, over Python's ``ast``.

The script is never executed as Python. ``ast`` splits it into statements (it only parses),
and each statement goes through the validator (``lang/validate.py``) and becomes a ``Step``
(``steps.py``): plain data holding the typed IR of its expressions (``lang/parse.py``).
Loops over ``range`` are unrolled, ``with torch.no_grad():`` marks its steps, the script's
own functions are written out where they are called (``lang/inline.py``), and
``torch.autograd.grad``, torch.autograd.functional's functions and ``torch.func.grad`` become
steps of their own. What gradcli cannot take (a statement kind it does not have yet, text the
validator refuses) is a ``GradcliError`` before anything runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from ..base.errors import GradcliError
from ..lang import functions as F
from ..lang import pytorch
from ..lang.inline import Functions
from ..lang.ir import Call, Const, Name, Node, names
from ..lang.validate import (
    Checked,
    Statement,
    check,
    check_all,
    check_characters,
    check_expression,
    check_results,
    reserved,
)
from ..lang.values import quiet_parse
from .steps import ATTRIBUTES, METHODS, Functional, Gradients, Shown, Step

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
_STEP_HINT = "write the steps out one statement at a time, or see `gradcli --help`"

ZERO_NODE = "ZeroBackward0"  # the node of y.zero_() on a tensor that requires grad


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
    (``x + torch.eye(2)``), each under its name (see ``check_expressions.Made``)."""
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
        raise exc.error(statement) from None
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
        raise exc.error(statement) from None
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
        raise exc.error(statement) from None
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
        raise exc.error(statement) from None
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
