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
import json
import sys
import warnings
import weakref
from collections.abc import Callable
from dataclasses import asdict, astuple, dataclass, field, fields, replace
from typing import Any, TextIO, TypeGuard

import numpy as np

from . import engine as gc
from . import torchtext
from .errors import GradcliError
from .lang import functions as F
from .lang import pytorch
from .lang.ir import Call, Name, Node, Operand, from_json, names, to_json
from .lang.program import Assignment, Numbers
from .lang.validate import (
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
from .values import existing_file, generator_for, parse_constructor, quiet_parse

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
FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"
LEAF_WRITE = "a view of a leaf Variable that requires grad is being used in an in-place operation."

# What a shown value may be followed by: attributes, and methods called without arguments
ATTRIBUTES = ("grad", "shape", "dtype", "requires_grad", "is_leaf")
METHODS = ("item", "tolist", "numel", "size", "dim", "zero_")

# The statements gradcli run does not take yet, as a person names them
_NOT_YET = {
    ast.For: "for loops",
    ast.AsyncFor: "for loops",
    ast.While: "while loops",
    ast.FunctionDef: "function definitions (def)",
    ast.AsyncFunctionDef: "function definitions (def)",
    ast.ClassDef: "classes",
    ast.If: "if statements",
    ast.With: "with blocks other than `with torch.no_grad():`",
    ast.AsyncWith: "with blocks other than `with torch.no_grad():`",
    ast.Try: "try blocks",
    ast.AugAssign: "in-place operators (+=, -=, ...)",
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


class ScriptError(Exception):
    """An error torch (or Python) raises at a statement: the script stops there, as Python
    stops, with ``kind: message`` after the traceback's frame; exit 1."""

    def __init__(self, statement: Statement, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.statement, self.kind, self.message = statement, kind, message


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


@dataclass(frozen=True)
class Step:
    """One statement, ready to run.

    ``kind`` is ``assign`` (``target = ir``), ``number`` (``target = number``, a Python
    number), ``create`` (``target`` made by a torch
    constructor, ``constructor`` its text, ``dtype`` given or None), ``write`` (``y[0] = ...``:
    ``ir`` is the setitem of ``target``), ``backward``, ``print`` (``shown`` joined by ``sep``,
    then ``end``), ``show`` (a bare expression: its repr unless None), ``nothing`` (an import).
    ``no_grad``: inside ``with torch.no_grad():``.
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


# -- the parse cache -----------------------------------------------------------------------------


def load_steps(source: str, use_cache: bool = True) -> list[Step]:
    """The steps of a script, from the parse cache when it holds them (a script run again
    needs neither sympy nor the validator); an entry that does not read back is made again."""
    from .lang.cache import entry_path, store

    path = entry_path(source, "script")
    if use_cache:
        try:
            data = json.loads(path.read_text())
            if data["source"] == source:
                return [_step_from_json(step) for step in data["steps"]]
        except Exception:  # noqa: BLE001 - any unreadable entry is simply parsed afresh
            pass
    steps = compile_script(source)
    if use_cache:
        store(path, {"source": source, "steps": [_step_json(step) for step in steps]})
    return steps


def _step_json(step: Step) -> dict[str, Any]:
    data = {f.name: getattr(step, f.name) for f in fields(step)}
    data["statement"] = [step.statement.number, step.statement.line, step.statement.text]
    data["ir"] = None if step.ir is None else to_json(step.ir)
    data["backward"] = None if step.backward is None else list(astuple(step.backward))
    data["shown"] = [
        {**asdict(s), "ir": None if s.ir is None else to_json(s.ir)} for s in step.shown
    ]
    return data


def _step_from_json(data: dict[str, Any]) -> Step:
    """The step ``_step_json`` wrote; an error for anything else (an IR calling an operation
    the language does not have, a kind no step has)."""
    if data["kind"] not in _KINDS:
        raise ValueError(f"not a step: {data['kind']!r}")
    given = dict(data)
    given["statement"] = Statement(*data["statement"])
    given["ir"] = None if data["ir"] is None else from_json(data["ir"], F.PROGRAM_OPS)
    output, gradient, retain = data["backward"] or (None, None, False)
    given["backward"] = None if output is None else pytorch.Backward(output, gradient, retain)
    given["shown"] = tuple(
        Shown(
            **{
                **s,
                "ir": None if s["ir"] is None else from_json(s["ir"], F.PROGRAM_OPS),
                "access": tuple(s["access"]),
            }
        )
        for s in data["shown"]
    )
    known = {*ATTRIBUTES, *(f"{m}()" for m in METHODS)}
    for shown in given["shown"]:
        if not isinstance(shown.literal, (str, int, float, type(None))):
            raise ValueError("not a literal")
        if not set(shown.access) <= known:
            raise ValueError(f"not an attribute shown: {shown.access}")
    return Step(**given)


_KINDS = ("assign", "number", "create", "write", "backward", "print", "show", "nothing")


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
    _compile_block(module.body, source, steps, no_grad=False)
    return steps


def _compile_block(body: list[ast.stmt], source: str, steps: list[Step], no_grad: bool) -> None:
    for node in body:
        text = ast.get_source_segment(source, node) or ""
        statement = Statement(len(steps) + 1, node.lineno, text)
        if isinstance(node, ast.With) and _is_no_grad(node):
            _compile_block(node.body, source, steps, no_grad=True)
            continue
        step = _compile_statement(node, statement)
        for made in step if isinstance(step, list) else [] if step is None else [step]:
            steps.append(made if not no_grad else _under_no_grad(made))


def _under_no_grad(step: Step) -> Step:
    from dataclasses import replace

    return replace(step, no_grad=True)


def _is_no_grad(node: ast.With) -> bool:
    return len(node.items) == 1 and (
        isinstance(call := node.items[0].context_expr, ast.Call)
        and not call.args
        and not call.keywords
        and pytorch.dotted(call.func) == "torch.no_grad"
        and node.items[0].optional_vars is None
    )


def _compile_statement(node: ast.stmt, statement: Statement) -> Step | list[Step] | None:
    if isinstance(node, ast.Pass):
        return None
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        try:
            pytorch.is_import(node)
        except pytorch.Refused as exc:
            raise statement.error(exc.message, 0, exc.hint) from None
        return Step("nothing", statement)
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], (ast.Tuple, ast.List)):
        return _unpacking(check_all(statement, grads=True))
    if isinstance(node, ast.Assign):
        checked = check(statement, grads=True)
        number = _number(node.value)
        if number is not None and not checked.rebinds:  # lr = 0.1: a Python number
            return Step("number", statement, checked.target, number=number)
        return _assignment(checked)
    if isinstance(node, ast.Expr):
        return _expression(statement)
    what = _NOT_YET.get(type(node), f"a '{type(node).__name__}' statement")
    raise statement.error(f"gradcli run does not take {what} yet", 0, _STEP_HINT)


def _single(operand: Operand) -> TypeGuard[Node]:
    """Whether a call's operand is one node (not a list argument, nor left out)."""
    return operand is not None and not isinstance(operand, tuple)


def _unpacking(checked: list[Checked]) -> list[Step]:
    """``values, indices = max(x, 1)``: a step per name, in order; a name that a later one
    reads (``x, i = max(x, 1)``) would be read after it changed, so it is refused."""
    for k, each in enumerate(checked[:-1]):
        if any(each.target in later.names for later in checked[k + 1 :]):
            raise each.statement.error(
                f"{each.target!r} is unpacked into and read by the same statement",
                0,
                "give the results new names, e.g. values, indices = ...",
            )
    return [_assignment(each) for each in checked]


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
        _check_floating(statement, checked.constructor, checked.dtype)
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
    from .lang.parse import to_ir, to_sympy  # imports sympy: only for expressions

    try:
        return to_ir(to_sympy(checked))
    except (SyntaxError, RecursionError, MemoryError):
        raise checked.statement.error(
            "the expression is nested too deeply or is too long to parse",
            hint="split it into several statements",
        ) from None


def _check_floating(statement: Statement, constructor: str, dtype: str | None) -> None:
    """torch makes an integer tensor of ``torch.tensor([1, 2])``, ``torch.arange(3)`` and
    ``torch.full((2,), 1)``: gradcli run has floating tensors only, and says so."""
    call = ast.parse(constructor, mode="eval").body
    if dtype is not None or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return
    numbers = {"tensor": call.args, "arange": call.args, "full": call.args[-1:]}
    given = numbers.get(call.func.id)
    if not given:
        return
    constants = [n for a in given for n in ast.walk(a) if isinstance(n, (ast.Constant, ast.Name))]
    if all(isinstance(n, ast.Constant) and type(n.value) is int for n in constants):
        raise statement.error(
            f"torch makes an integer tensor (int64) of torch.{constructor.split('(')[0]}(...) "
            "with whole numbers, and gradcli run has floating tensors only",
            0,
            "write the numbers as floats (torch.tensor([1., 2.])) or give dtype=torch.float32",
        )


def _expression(statement: Statement) -> Step:
    """A statement that is an expression: ``y.backward(...)``, ``print(...)`` or a value
    (which the interactive interpreter shows)."""
    tree = quiet_parse(statement.text, "exec").body[0]
    assert isinstance(tree, ast.Expr)  # the statement's own text, an expression
    value = tree.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "backward"
    ):
        checked = check(statement)
        return Step("backward", statement, backward=checked.backward)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "print"
    ):
        shown = tuple(_shown(statement, a) for a in value.args)
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
    return Step("show", statement, shown=(_shown(statement, value),))


def _shown(statement: Statement, node: ast.expr) -> Shown:
    line = statement.line + node.lineno - 1
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, type(None))):
        return Shown(line, literal=node.value)
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
        return Shown(line, ir=_ir(results), columns=results.columns, several=True)
    checked = check_expression(statement, node)
    return Shown(line, ir=_ir(checked), access=tuple(access), columns=checked.columns)


# -- running the steps ---------------------------------------------------------------------------


class _Size(tuple[int, ...]):
    """``torch.Size``: a tuple that prints as torch prints it."""

    def __repr__(self) -> str:
        return torchtext.size_repr(self)

    __str__ = __repr__


class _Printed:
    """A value that prints as ``text`` (a tensor, a dtype)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


class _Values(Numbers):
    """The engine's domain, naming the last node of an operation the engine builds from
    others after torch's node for it (the op table's ``backward_name``)."""

    def __init__(self, env: dict[str, gc.Tensor], assignment: Assignment, session: Session):
        super().__init__(env, assignment, {}, None, np.float32)
        self.session = session

    def apply(self, function: str, call: Callable[..., Any], args: list[Any]) -> gc.Tensor:
        result = super().apply(function, call, args)
        op = F.OPS[function]
        named = op.backward_name
        if callable(named) and op.forward is None:  # a composite's node named by its arguments
            named = named(args)
        node = result.grad_fn
        made_here = all(getattr(a, "grad_fn", None) is not node for a in args)
        if isinstance(named, str) and named and node is not None and made_here:
            self.session.node_names[node] = named
        return result


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
        self.warned: set[int] = set()

    def run(self, steps: list[Step]) -> None:
        for step in steps:
            if step.no_grad:
                with gc.no_grad():
                    self.step(step)
            else:
                self.step(step)
        self.out.flush()

    def step(self, step: Step) -> None:
        if step.kind == "create":
            self.create(step)
        elif step.kind == "number":
            assert step.target is not None  # a number step
            self.env[step.target] = step.number
        elif step.kind in ("assign", "write"):
            assert step.target is not None and step.ir is not None  # see _assignment
            if step.kind == "write":
                self.check_write(step)
            value = self.value(step, step.ir, step.columns)
            if step.kind == "write":
                self.rebind(step, value)
            else:
                self.env[step.target] = value
        elif step.kind == "backward":
            self.backward(step)
        elif step.kind == "print":
            values = [self.shown(step, s) for s in step.shown]
            self.out.write(step.sep.join(str(v) for v in values) + step.end)
        elif step.kind == "show":
            value = self.shown(step, step.shown[0])
            if value is not None:
                self.out.write(repr(value) + "\n")

    # -- statements
    def create(self, step: Step) -> None:
        assert step.target is not None and step.constructor is not None  # a create step
        node = ast.parse(step.constructor, mode="eval").body
        assert isinstance(node, ast.Call)  # a constructor is a call (checked by the validator)
        try:
            array, keywords = parse_constructor(
                node, step.constructor, generator_for(step.target, self.seed)
            )
        except GradcliError as exc:
            raise step.statement.error(exc.message, hint=exc.hint) from None
        requires_grad = keywords.get("requires_grad", False)
        if not isinstance(requires_grad, bool):
            raise step.statement.error(
                "requires_grad must be True or False", hint="e.g. torch.rand(3, requires_grad=True)"
            )
        dtype = gc.float64 if step.dtype == "float64" else gc.float32
        self.env[step.target] = gc.tensor(array, requires_grad=requires_grad, dtype=dtype)

    def check_write(self, step: Step) -> None:
        """torch's error for writing into a leaf that requires grad; gradcli's refusal of a
        write into a tensor whose elements another tensor shares (a view), which gradcli's
        tensors do not follow yet."""
        assert step.target is not None  # a write step
        written = self.tensor(step, step.target, "does not support item assignment", "TypeError")
        if written.is_leaf and written.requires_grad and not step.no_grad:
            raise ScriptError(step.statement, "RuntimeError", LEAF_WRITE)
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

    def value(self, step: Step, node: Node, columns: dict[str, int]) -> Any:
        env = self.env
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
            else:
                self.lookup(step, name)
        if isinstance(node, Name):
            return env[node.name]
        assignment = Assignment(step.target or "", step.statement, node, None, columns)
        return _Values(env, assignment, self).tensor(node)

    def grad(self, tensor: gc.Tensor, line: int) -> gc.Tensor | None:
        """``tensor.grad``, with torch's warning for a non-leaf."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grad = tensor.grad
        if caught:
            self.warn(line, "UserWarning", NONLEAF_GRAD)
        return grad

    def shown(self, step: Step, shown: Shown) -> Any:
        """The Python value a shown item has: a literal, a tensor (as ``_Printed``), None, a
        number, a list, a ``torch.Size``."""
        if shown.ir is None:
            return shown.literal
        if shown.several:
            assert isinstance(shown.ir, Call)  # see check_results
            return self.results(step, shown.ir, shown.columns)
        value: Any = self.value(step, shown.ir, shown.columns)
        for access in shown.access:
            value = self.access(step, shown, value, access)
        return self.printable(value)

    def results(self, step: Step, call: Call, columns: dict[str, int]) -> _Printed:
        """Every result of ``call`` (its first), printed as torch prints them: a named
        tuple of torch.return_types, or a tuple."""
        op = F.OPS[call.op]
        options = call.params[:-1]
        if "count" in op.extra:  # split: as many as its input's shape makes
            operands = [self.value(step, a, columns) for a in call.args if _single(a)]
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
        if access == "zero_()":
            value.data[...] = 0
            return value
        simple: dict[str, Callable[[gc.Tensor], Any]] = {
            "requires_grad": lambda t: t.requires_grad,
            "is_leaf": lambda t: t.is_leaf,
            "tolist()": lambda t: torchtext.tolist(t.data),
            "numel()": lambda t: t.numel(),
            "dim()": lambda t: t.dim(),
        }
        return simple[access](value)

    def printable(self, value: Any) -> Any:
        if isinstance(value, gc.Tensor):
            return _Printed(self.tensor_text(value))
        return value

    def tensor_text(self, tensor: gc.Tensor) -> str:
        node = tensor.grad_fn
        name = None if node is None else self.node_names.get(node) or node.name()
        return torchtext.tensor_repr(tensor.data, requires_grad=tensor.requires_grad, grad_fn=name)

    # -- stderr
    def warn(self, line: int, category: str, message: str) -> None:
        """A warning as Python's default filter shows it: once per line of the script."""
        if line in self.warned:
            return
        self.warned.add(line)
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
            text += f"    {self.lines[line - 1].strip()}\n"
        return text + f"{error.kind}: {error.message}\n"


def read_script(script: str) -> str:
    """The text of the script at this path (``-``: stdin), within ``--max-length``."""
    from .lang.source import read_source

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
        session.run(steps)
    except ScriptError as error:
        session.out.flush()
        session.err.write(session.traceback(error))
        session.err.flush()
        return 1
    return 0
