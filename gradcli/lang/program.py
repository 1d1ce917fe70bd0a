"""A parsed program: ordered assignments of IR trees (``ir.py``), its inputs, and the
engine's domain of the interpreter, which runs it on numbers.

``ParsedProgram`` is plain data (it round-trips through JSON for the parse cache), so running a
cached program needs neither sympy nor the validator.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import astuple, field
from typing import ClassVar

import numpy as np

from ..base import bounds
from ..base.errors import GradcliError, engine_hint, listing
from ..base.records import record
from ..engine.sizes import stored
from ..ops import library as gc
from . import diagnose
from . import functions as F
from .ir import (
    Call,
    Const,
    Index,
    Name,
    Node,
    evaluate,
    from_json,
    is_version,
    names,
    to_json,
    version,
)
from .statement import BackwardCall, Statement, element_of
from .values import constructor_dtype, generator_for, parse_constructor

MAX_GAP = 64  # missing elements a vector y0, y1, ... may have (each taken as 0)
# why a traced program (``ParsedProgram.TRACED``) has no symbolic form
NO_FORMULAS = "a PyTorch script's program is its traced graph, which has no formulas"


@record(kw_only=False, frozen=False, eq=True)
class RunLog:
    """What runs tell the user besides their values: notes (a gap in an element vector),
    where non-finite values appeared, and the statement that made each graph node."""

    notes: list[str] = field(default_factory=list)
    nonfinite: list[str] = field(default_factory=list)
    origins: dict[int, Statement] = field(default_factory=dict)


@record(kw_only=False, eq=True)
class Assignment:
    """``target = expression`` (``ir``), or an input declared with a constructor."""

    target: str
    statement: Statement
    ir: Node | None = None
    constructor: str | None = None
    columns: dict = field(default_factory=dict)


@record(kw_only=False, eq=True)
class ParsedProgram:
    """The statements in order; everything else is derived from them. ``backward`` holds
    the PyTorch code's ``y.backward(v)`` calls, in order."""

    source: str
    assignments: tuple[Assignment, ...]
    backward: tuple[BackwardCall, ...] = ()

    # whether the program is a PyTorch script's traced graph (``script.traced``), which has
    # no statements of IR: no formulas (``NO_FORMULAS``), and explain walks the graph
    TRACED: ClassVar[bool] = False

    @property
    def targets(self) -> list[str]:
        return [a.target for a in self.assignments if a.ir is not None]

    @property
    def declared(self) -> dict[str, Assignment]:
        """Inputs given a default by a constructor, e.g. ``W = randn(8, 10)``."""
        return {a.target: a for a in self.assignments if a.constructor is not None}

    def groups(self) -> dict[str, list[str | None]]:
        """Vectors built from element assignments: ``y0 = ...; y2 = ...`` gives ``y``.

        A vector needs its element 0 and at most ``MAX_GAP`` missing elements, so that names
        such as ``h0, h1`` or ``y1000000`` are not taken for a vector of mostly zeros. Worked
        out once a program (every run reads them): the same dict each time, read, never
        written.
        """
        return self._groups

    @functools.cached_property
    def _groups(self) -> dict[str, list[str | None]]:
        assigned = set(self.targets) | set(self.declared)
        found: dict[str, dict[int, str]] = {}
        for target in self.targets:
            parts = element_of(target)
            if parts and parts[0] not in assigned:
                found.setdefault(parts[0], {})[parts[1]] = target
        return {
            base: [elements.get(i) for i in range(max(elements) + 1)]
            for base, elements in found.items()
            if 0 in elements and max(elements) + 1 - len(elements) <= MAX_GAP
        }

    @property
    def passes(self) -> list[BackwardCall]:
        """The backward passes the program asks for (not its ``x.grad.zero_()``)."""
        return [b for b in self.backward if not b.zero_grad]

    def default_output(self) -> str:
        """What the last ``backward`` is called on, else the last assigned name, or the
        vector its element belongs to (worked out once a program: every run asks)."""
        return self._default_output

    @functools.cached_property
    def _default_output(self) -> str:
        if self.passes:
            return self.passes[-1].output
        if not self.targets:
            return self.assignments[-1].target
        last = self.targets[-1]
        for base, elements in self.groups().items():
            if last in elements:
                return base
        return last

    def free_names(self) -> list[str]:
        """Names used but never assigned, in order of first use."""
        assigned = set(self.targets) | set(self.declared) | set(self.groups())
        seen: list[str] = []
        for a in self.assignments:
            for name in names(a.ir) if a.ir is not None else ():
                if name not in assigned and name not in seen:
                    seen.append(name)
        return seen

    def inputs(self, given: set[str]) -> list[str]:
        """The program's inputs when values are given for ``given``.

        ``x0`` stands for ``x[0]`` where ``x`` is given (or declared) and ``x0`` itself is not.
        A given name the program never uses is not an input (``bind`` reports it).
        """
        names = []
        for name in [*self.declared, *self.free_names()]:
            parts = element_of(name)
            if (
                parts is not None
                and name not in given
                and name not in self.declared
                and (parts[0] in given or parts[0] in self.declared)
            ):
                name = parts[0]
            if name not in names:
                names.append(name)
        return names

    def input_name(self, name: str) -> str:
        """The input a user's name gives: ``x#0`` for ``x`` where the program declares ``x``
        and then writes into it, else the name itself."""
        first = version(name, 0)
        return first if first in self.declared else name

    def declared_value(
        self, name: str, seed: int, build: bool = True
    ) -> tuple[np.ndarray | None, bool]:
        """The default of a declared input (None unless ``build``), and whether it requires
        grad. An input given on the command line needs only the flag: its default is never
        built, however large."""
        import ast

        assignment = self.declared[name]
        constructor = assignment.constructor
        assert constructor is not None  # what makes an input declared
        node = ast.parse(constructor, mode="eval").body
        assert isinstance(node, ast.Call)  # a constructor is a call (checked by the validator)
        try:
            array, keywords = parse_constructor(
                node, constructor, generator_for(name, seed), build=build
            )
        except GradcliError as exc:
            raise assignment.statement.error(exc.message, hint=exc.hint) from None
        requires_grad = keywords.get("requires_grad", False)
        if not isinstance(requires_grad, bool):
            raise assignment.statement.error(
                "requires_grad must be True or False", hint="e.g. randn(3, requires_grad=True)"
            )
        return array, requires_grad

    def declared_dtype(self, name: str) -> tuple[np.dtype | None, bool]:
        """The integer or boolean dtype of a declared input (``tensor([0, 2])`` is int64, as
        in torch), or None for a floating one, which takes the run's dtype; and whether the
        dtype is written (``dtype=``, torch's spelling) rather than read from whole numbers."""
        import ast

        constructor = self.declared[name].constructor
        assert constructor is not None  # what makes an input declared
        node = ast.parse(constructor, mode="eval").body
        assert isinstance(node, ast.Call)  # a constructor is a call (checked by the validator)
        return constructor_dtype(node)

    def run(self, inputs: dict[str, gc.Tensor], log: RunLog | None = None) -> dict[str, gc.Tensor]:
        """Evaluate every assignment in order; returns inputs, assigned names and vectors.

        ``log``, when given, collects notes for the user, where non-finite values first
        appear and which statement made each graph node.
        """
        env = dict(inputs)
        groups = self.groups()
        self.check_writes(inputs)
        # Constants take the dtype of the inputs, so a float32 run stays float32 throughout.
        dtype = next((t.dtype for t in inputs.values() if t.dtype.kind == "f"), np.float64)
        tally = bounds.Tally(sum(t.data.nbytes for t in inputs.values()))
        taken: dict[str, tuple[gc.Tensor, gc.Tensor]] = {}  # Numbers.ref's, for the whole run
        statements = len(self.assignments)
        with quiet():  # once for the statements, not once each
            for number, a in enumerate(self.assignments, start=1):
                if a.ir is None:
                    continue
                bounds.tick(f"statement {number} of {statements}")
                watch = gc.watched_nonfinite()
                seen = 0 if watch is None else len(watch)
                if log is not None:  # a number written beyond float range: inf from the start
                    diagnose.note_overflow(a.statement, log)
                numbers = Numbers(env, a, groups, log, dtype, tally, taken)
                env[a.target] = numbers.evaluated(a.ir)
                if log is not None:
                    diagnose.tag_origins(env[a.target], a.statement, log.origins)
                    diagnose.tag_tangents(watch, seen, a.statement)
        for base, elements in groups.items():
            # Elements of different shapes (h0 = x*2; h1 = sum(h0)) are not a vector: such a
            # group exists only when a statement uses it, and then its shapes are an error.
            if base not in env and len({env[e].shape for e in elements if e is not None}) == 1:
                env[base] = _stack_group(base, elements, env, log)
        return env

    @functools.cached_property
    def writes(self) -> tuple[tuple[Assignment, str], ...]:
        """The statements that write into a name (``check_writes``) and the version of it
        each writes into, found once a program (every run checks them): () for most."""
        found = []
        for a in self.assignments:
            if isinstance(a.ir, Call) and a.ir.args:
                base = a.ir.args[0]
                own = f"{a.target.split('#')[0]}#"
                if isinstance(base, Name) and base.name.startswith(own) and is_version(base.name):
                    found.append((a, base.name))
        return tuple(found)

    def check_writes(self, inputs: dict[str, gc.Tensor]) -> None:
        """PyTorch's rule: a leaf that requires grad cannot be written into (y[0] = ...,
        y += 1, y.zero_(): a value of a name made from that name's earlier value)."""
        for a, name in self.writes:
            if name in inputs and inputs[name].requires_grad:
                raise a.statement.error(
                    "a leaf Variable that requires grad is being used in an in-place operation.",
                    0,
                    f"write into a copy, y_copy = {a.target} * 1, or make "
                    f"{a.target} without requires_grad=True",
                )

    # -- caching ------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "source": self.source,
            "assignments": [
                {
                    "target": a.target,
                    "statement": [a.statement.number, a.statement.line, a.statement.text],
                    "ir": None if a.ir is None else to_json(a.ir),
                    "constructor": a.constructor,
                    "columns": a.columns,
                }
                for a in self.assignments
            ],
            "backward": [astuple(b) for b in self.backward],
        }

    @classmethod
    def from_json(cls, data: dict) -> ParsedProgram:
        """The program ``to_json`` wrote; ValueError (or KeyError, TypeError) for anything
        else, such as an IR tree that calls an operation the language does not have."""
        return cls(
            data["source"],
            tuple(
                Assignment(
                    a["target"],
                    Statement(*a["statement"]),
                    None if a["ir"] is None else from_json(a["ir"], F.PROGRAM_OPS),
                    a["constructor"],
                    a["columns"],
                )
                for a in data["assignments"]
            ),
            tuple(
                BackwardCall(
                    output,
                    gradient,
                    bool(retain),
                    None if inputs is None else tuple(inputs),
                    bool(zero),
                )
                for output, gradient, retain, inputs, zero in data["backward"]
            ),
        )


@contextmanager
def quiet() -> Iterator[None]:
    """numpy's warnings of overflow and invalid values silenced, for statements (entering the
    contexts costs more than a small operation, so it is done once for all of a run's):
    ``diagnose`` finds and names the non-finite values instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with np.errstate(all="ignore"):
            yield


def _stack_group(base: str, elements: list, env: dict, log: RunLog | None) -> gc.Tensor:
    values = []
    template = next(env[e] for e in elements if e is not None and e in env)
    for i, element in enumerate(elements):
        if element is None or element not in env:
            if log is not None:
                message = f"{base}{i} is not assigned: {base}[{i}] is taken as 0"
                if message not in log.notes:
                    log.notes.append(message)
            values.append(gc.zeros(*template.shape, dtype=template.dtype))
        else:
            values.append(env[element])
    shapes = {v.shape for v in values}
    if len(shapes) > 1:
        raise GradcliError(
            f"the elements of {base} have different shapes {listing(sorted(shapes))}",
            hint=f"each of {listing(e for e in elements if e)} must have the same shape",
        )
    return _operator(F.ELEMENTS)(values)


def _operator(symbol: str) -> Callable[..., gc.Tensor]:
    """The function of an operator of the language (``[]``, the element vector)."""
    call = F.OPERATORS[symbol].call
    assert call is not None  # every operator is a function of the language
    return call


class Numbers:
    """The engine's domain of the interpreter: a value is a tensor, or a number until an
    operation makes it a tensor of the run's dtype. Runs one assignment; errors name its
    statement and the column of the function at fault."""

    def __init__(
        self,
        env,
        assignment: Assignment,
        groups,
        log=None,
        dtype=np.float64,
        tally: bounds.Tally | None = None,
        taken: dict[str, tuple[gc.Tensor, gc.Tensor]] | None = None,
    ):
        self.env = env
        self.assignment = assignment
        self.groups = groups
        self.log = log
        self.dtype = dtype
        # the bytes of the run's values so far (--max-memory); a step alone has its own
        self.tally = bounds.Tally() if tally is None else tally
        # the elements ``x0`` taken from their vector, by name, with the vector taken from
        self.taken = {} if taken is None else taken

    def tensor(self, node: Node) -> gc.Tensor:
        """``node``'s value as a tensor (a constant right-hand side, ``y = 2*3``, too), numpy's
        warnings silenced (``quiet``)."""
        with quiet():
            return self.evaluated(node)

    def evaluated(self, node: Node) -> gc.Tensor:
        """``tensor``, where numpy's warnings are silenced already (``quiet``)."""
        return self._tensor(evaluate(node, self))

    def const(self, node: Const) -> complex:
        return node.value

    def name(self, node: Name) -> gc.Tensor:
        return self.ref(node.name)

    def index(self, node: Index, base) -> gc.Tensor:
        indexing = F.OPERATORS["[]"]
        return self.apply(indexing.name, indexing.call, [self._tensor(base), node.items])

    def call(self, node: Call, args: list) -> gc.Tensor:
        operands = args  # (a list of its own, ``evaluate``'s: a list argument's made anew)
        for i, arg in enumerate(node.args):
            if isinstance(arg, tuple):
                operands[i] = [self._tensor(item) for item in args[i]]
        for a in operands:  # (a loop: no generator's frame)
            if isinstance(a, (gc.Tensor, list)):
                break
        else:
            # A function of numbers only, like sin(1): its number gets the run's dtype (its
            # complex kind for a complex number: inf * 1j, which the parser leaves unfolded).
            operands = [None if a is None else self._number(a) for a in operands]
        op = F.OPS[node.op]
        return self.apply(node.op, op.call, op.arranged(operands, node.params))

    def _number(self, value) -> gc.Tensor:
        if isinstance(value, complex):  # the run's dtype's complex kind, as x * 2j gives
            return gc.tensor(0.0, dtype=self.dtype) + value
        return gc.tensor(value, dtype=self.dtype)

    def _tensor(self, value) -> gc.Tensor:
        return value if isinstance(value, gc.Tensor) else gc.tensor(value, dtype=self.dtype)

    def fail(self, message: str, function: str | None = None, hint: str | None = None):
        column = self.assignment.columns.get(function) if function else None
        return self.assignment.statement.error(message, column, hint)

    def ref(self, name: str) -> gc.Tensor:
        if name in self.env:
            return self.env[name]
        if name in self.groups:
            self.env[name] = _stack_group(name, self.groups[name], self.env, self.log)
            return self.env[name]
        parts = element_of(name)
        if parts and parts[0] in self.env:
            base, i = parts
            vector = self.env[base]
            taken = self.taken.get(name)
            if taken is not None and taken[0] is vector:
                return taken[1]
            if vector.ndim == 0 or i >= vector.shape[0]:
                raise self.fail(
                    f"{name} means {base}[{i}], but {base} has shape {vector.shape}",
                    hint=f"give {base} at least {i + 1} elements",
                )
            element = _operator("[]")(vector, (i,))
            if not element.requires_grad:
                # no graph node: a later use takes the same value again (x0 in two statements
                # of a forward-mode pass), so it is taken once; one with a node is taken anew
                # at each use, as torch's graph of x[0] in each statement has a node each
                self.taken[name] = (vector, element)
            return element
        raise self.fail(f"{name!r} has no value", hint=f"give it with -i {name}=VALUE")

    def apply(self, function: str, call, args: list):
        # The engine checks each value it makes, before it is allocated, against the limits
        # and what the run's tally leaves (engine.sizes); the result is charged to the tally
        # once made, as what it holds (a broadcast view holds what it was made from).
        engaged = bounds.engage(self.tally)
        try:
            result = call(*args)  # numpy's warnings are silenced (``tensor``)
        except gc.SizeError as exc:  # a value too large for the limits, refused unmade
            raise self.fail(_in(function, exc), function, exc.hint) from None
        except gc.EngineError as exc:  # the engine refused these operands
            if F.OPS[function].operator == "[]":  # x[...]
                raise self.fail(
                    f"the index does not fit the shape {args[0].shape}: "
                    + str(exc).split(": ", 2)[-1],
                    function,
                    "indices count from 0 (or from -1 at the end), below each axis's length",
                ) from None
            raise self.fail(str(exc), function, engine_hint(exc)) from None
        finally:
            bounds.engage(engaged)
        for value in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(value, gc.Tensor):
                try:
                    self.tally.charge(
                        stored(value.data) * value.data.itemsize, f"the result of {function}"
                    )
                except GradcliError as exc:
                    raise self.fail(exc.message, function, exc.hint) from None
        if self.log is not None:
            found = diagnose.new_kinds(result, args)
            if found:
                self.log.nonfinite.append(
                    diagnose.forward_message(self.assignment.statement, function, found)
                )
        return result


def _in(function: str, exc: gc.SizeError) -> str:
    """The message of a value too large, naming the operation of the program that made it
    where the engine's step has another name (pad makes its result by cat)."""
    message = str(exc)
    return message if f"the result of {function} " in message else f"{function}: {message}"
