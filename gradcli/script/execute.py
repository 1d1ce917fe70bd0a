"""Running a ``gradcli run`` script's steps: ``ScriptRun``, the live environment of tensors.

The steps run in order on engine tensors, with torch's defaults (float32 unless ``dtype=``
says otherwise). ``ScriptRun`` makes and writes the tensors, evaluates the IR of each step,
and reports to stderr as Python does:

- torch's warnings in Python's format (``script.py:7: UserWarning: ...`` and the line), once
  per line as Python's warning filter shows them;
- torch's errors as Python reports an uncaught exception (the traceback's frame in the
  script, then ``RuntimeError: ...``), after everything printed before them; ``ScriptError``
  carries them.

What a step shows is made by ``showing.py``, and the autograd calls (``backward``,
``torch.autograd.grad``, torch.autograd.functional) are run by ``gradients.py``.
"""

from __future__ import annotations

import ast
import sys
import warnings
import weakref
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from .. import engine as gc
from ..base import bounds
from ..base import torch_text as torchtext
from ..base.errors import GradcliError
from ..engine import torch_random
from ..engine.selection import UnpackError
from ..lang import functions as F
from ..lang.check_expressions import grad_name
from ..lang.ir import Call, Index, Name, Node, names
from ..lang.program import Assignment, Numbers
from ..lang.values import (
    INTEGER_DTYPES,
    LIKE,
    parse_constructor,
    quiet_parse,
    whole_constructor,
)
from . import gradients, showing
from .format_size import TextBudget
from .steps import ScriptError, Step

# torch 2.13's words for what this module reproduces
NONLEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
    "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
LEAF_WRITE = f"a view of {LEAF_INPLACE}"
NO_RETAIN = "can't retain_grad on Tensor that has requires_grad=False"
RANDOM = ("rand(", "randn(", "rand_like(", "randn_like(")  # the constructors that draw

_GRAD = grad_name("")  # the start of the name x.grad is read as
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


class _Values(Numbers):
    """The engine's domain, naming the last node of an operation the engine builds from
    others after torch's node for it (the op table's ``backward_name``)."""

    def __init__(self, env: dict[str, gc.Tensor], assignment: Assignment, run: ScriptRun):
        super().__init__(env, assignment, {}, None, run.default_dtype, run.tally)
        self.run = run

    def apply(self, function: str, call: Callable[..., Any], args: list[Any]) -> gc.Tensor:
        result = super().apply(function, _unpacking_as_python(call, self.assignment), args)
        op = F.OPS[function]
        warning = op.extra.get("warning")
        message = warning(args) if warning else None
        if message:  # torch's UserWarning for these arguments
            once = op.name if op.extra.get("warn_once") else None
            self.run.warn(self.assignment.statement.line, "UserWarning", message, once)
        node = result.grad_fn
        made_here = all(getattr(a, "grad_fn", None) is not node for a in args)
        if node is not None and made_here and node.prim is not op:  # built from others
            named = op.extra.get("built_name", op.backward_name)
            if callable(named):  # a composite's name of its arguments (a primitive's: of a node)
                named = named(args) if op.forward is None else None
            if named:
                self.run.node_names[node] = named
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


class ScriptRun:
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
        # torch's generator, which rand, randn and dropout draw from in statement order:
        # seeded with --seed until the script's torch.manual_seed(n) seeds it with n
        self.generator = torch_random.Generator().manual_seed(seed)
        self.drawn: list[np.ndarray] = []  # what rand and randn gave, in order

    def run(self, steps: list[Step]) -> None:
        with torch_random.using(self.generator):
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
                self.out.write(repr(showing.printable(self, self.env[step.target])) + "\n")
        elif step.kind == "backward":
            gradients.backward(self, step)
        elif step.kind == "autograd":
            gradients.autograd_grad(self, step)
        elif step.kind == "functional":
            gradients.functional(self, step)
        elif step.kind == "print":
            values = [showing.shown_value(self, step, s) for s in step.shown]
            self.out.write(step.sep.join(str(v) for v in values) + step.end)
        elif step.kind == "show":
            value = showing.shown_value(self, step, step.shown[0])
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
            try:
                self.generator.manual_seed(step.number)
            except gc.DomainError as exc:
                raise ScriptError(step.statement, "ValueError", str(exc)) from None
            # a bare torch.manual_seed(0) line: the interactive interpreter shows the generator
            self.out.write(f"<torch._C.Generator object at {hex(id(self.generator))}>\n")

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
        rng = torch_random.samplers.NumpyStyle(self.generator, dtype)
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
