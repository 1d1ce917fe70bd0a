"""A PyTorch script as a command's program: run once by the script interpreter, recording, and
the autograd graph of its last backward pass turned into a program the commands evaluate.

``grad``, ``vjp``, ``jacobian``, ``hessian``, ``check``, ``graph`` and ``explain`` take what
``gradcli run`` takes: the script runs (never as Python: through ``python/``'s interpreter,
within the command's limits, its printing discarded), and where it calls ``y.backward(v)``,
``torch.autograd.backward`` or ``torch.autograd.grad(y, inputs, v)`` the graph torch would
differentiate is copied before the pass runs (``Trace``): its nodes (the primitive, its
parameters, the name of its ``grad_fn``), its leaves that require grad (the inputs), and the
tensors that require none (constants, kept as they were). The command's program is that graph
(``Traced``): run at the inputs' recorded values, or at others (--x, -i, a Jacobian's basis, a
finite difference), every node applied again by the engine, so that each command computes as
it computes on a program of its own.

What torch would take: the output is the tensor backward is called on (of the script's last
pass), the cotangent the ``gradient=`` (``grad_outputs=``) passed, the inputs the leaves that
require grad, each named by the script's name that holds it (``w``; ``model_fc1_weight`` for a
module's parameter ``model.fc1.weight``). Control flow is fixed at the path the run took: a
branch or a loop count that depends on values is not taken again at another point.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..base.errors import GradcliError
from ..base.records import record
from ..engine import graph_hooks
from ..engine.tensor import apply
from ..lang.program import Assignment, ParsedProgram, RunLog
from ..lang.statement import BackwardCall, Statement
from ..nn.module import Module
from ..ops import library as gc
from ..ops.table import Op


@dataclass(frozen=True)
class GraphStep:
    """One node of the graph: its primitive applied to earlier slots, with its parameters;
    ``name`` is its ``grad_fn``'s, as the script saw it."""

    prim: Op
    operands: tuple[int, ...]
    params: dict[str, Any]
    name: str


@dataclass(frozen=True)
class Trace:
    """The graph of one backward pass of the script, as slots: the leaves (by name), then the
    constants, then the steps, in the order the script made them."""

    leaves: tuple[tuple[str, np.ndarray], ...]
    constants: tuple[np.ndarray, ...]
    steps: tuple[GraphStep, ...]
    named: dict[str, int]  # the script's names of intermediate values and outputs: their slot
    outputs: tuple[str, ...]
    gradients: dict[str, np.ndarray]  # the cotangents passed, by the name the program gives
    cotangents: tuple[str | None, ...]  # each output's, by that name (None: none passed)
    inputs: tuple[str, ...] | None  # torch.autograd.grad's inputs; None: a backward
    line: int  # the script's line of the pass
    notes: tuple[str, ...] = ()  # what the commands tell of the trace (hooks left out)

    def replay(self, leaves: dict[str, gc.Tensor]) -> dict[str, gc.Tensor]:
        """The graph at the values of ``leaves``: every named value and output, the leaves,
        and the cotangents."""
        floating = next((t.dtype for t in leaves.values() if t.dtype.kind in "fc"), None)
        slots: list[gc.Tensor] = [leaves[name] for name, _ in self.leaves]
        slots += [gc.Tensor(_like(array, floating)) for array in self.constants]
        for step in self.steps:
            out = apply(step.prim, *[slots[i] for i in step.operands], **step.params)
            if out._op is not None:  # torch's name for the spelling the script used
                out._name = step.name
            slots.append(out)
        env = dict(leaves)
        env.update((name, slots[slot]) for name, slot in self.named.items())
        env.update((name, gc.Tensor(_like(g, floating))) for name, g in self.gradients.items())
        return env


def _like(array: np.ndarray, floating: np.dtype | None) -> np.ndarray:
    """A constant in the run's floating dtype (an integer or boolean one as it is), as a
    program's constants take its inputs' dtype."""
    if floating is None or array.dtype.kind not in "fc" or array.dtype == floating:
        return array
    if array.dtype.kind == "c" and floating.kind == "f":
        return array.astype(np.complex64 if floating.itemsize <= 4 else np.complex128)
    return array.astype(floating)


@record(kw_only=False, eq=True)
class Traced(ParsedProgram):
    """A script's traced graph as a command's program (see the module's docstring): its inputs
    are the leaves, each declared with the value it had, its passes the script's last one."""

    TRACED: ClassVar[bool] = True

    trace: Trace | None = None

    @classmethod
    def of(cls, source: str, trace: Trace) -> Traced:
        line = Statement(1, trace.line, source.split("\n")[trace.line - 1].strip())
        retained = len(trace.outputs) - 1  # one graph for the outputs of one pass
        passes = tuple(
            BackwardCall(output, cotangent, k < retained, trace.inputs)
            for k, (output, cotangent) in enumerate(zip(trace.outputs, trace.cotangents))
        )
        return cls(source, tuple(Assignment(name, line) for name in trace.named), passes, trace)

    @property
    def traced(self) -> Trace:
        assert self.trace is not None  # made by ``of``
        return self.trace

    @property
    def targets(self) -> list[str]:
        return list(self.traced.named)

    @property
    def declared(self) -> dict[str, Assignment]:
        statement = Statement(1, self.traced.line, self.source_line)
        return {
            name: Assignment(name, statement, constructor="the script's value")
            for name, _ in self.traced.leaves
        }

    @property
    def source_line(self) -> str:
        return self.source.split("\n")[self.traced.line - 1].strip()

    def groups(self) -> dict[str, list[str | None]]:
        return {}

    def default_output(self) -> str:
        return self.traced.outputs[-1]

    def free_names(self) -> list[str]:
        return []

    def inputs(self, given: set[str]) -> list[str]:
        return [name for name, _ in self.traced.leaves]

    def input_name(self, name: str) -> str:
        return name

    def declared_value(
        self, name: str, seed: int, build: bool = True
    ) -> tuple[np.ndarray | None, bool]:
        value = dict(self.traced.leaves)[name]
        return (value.copy() if build else None), True

    def declared_dtype(self, name: str) -> tuple[np.dtype | None, bool]:
        return None, False

    def run(self, inputs: dict[str, gc.Tensor], log: RunLog | None = None) -> dict[str, gc.Tensor]:
        if log is not None:
            log.notes.extend(note for note in self.traced.notes if note not in log.notes)
        return self.traced.replay(inputs)

    def to_json(self) -> dict:
        raise TypeError("a traced script is not cached: it is traced at each command")


HOOKS_LEFT_OUT = (
    "the script's hooks on its graph (register_hook and the like) are not applied: the "
    "gradients are those of the graph alone"
)


# -- the recording ------------------------------------------------------------------------------
class _Released(Exception):
    """The graph holds a node whose saved tensors a pass freed: the pass itself raises
    torch's error, and nothing is recorded."""


class Recorder:
    """What a run records, at each backward pass of the script (``Run.record``): the last
    pass's trace, named by the names the script holds its tensors by at that moment."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self.trace: Trace | None = None
        self.refused: str | None = None

    def __call__(self, outputs: list[Any], gradients: list[Any] | None, inputs: Any) -> None:
        if not all(isinstance(t, gc.Tensor) and t.requires_grad for t in outputs):
            return  # torch's error follows
        try:
            self.trace = self._trace(outputs, gradients, inputs)
        except _Released:
            return

    def _trace(self, outputs: list[gc.Tensor], gradients: list[Any] | None, inputs: Any) -> Trace:
        names = _script_names(self.run)
        leaves: list[gc.Tensor] = []
        constants: list[gc.Tensor] = []
        made: list[gc.Tensor] = []
        seen: set[int] = set()
        pending = list(outputs)
        while pending:
            tensor = pending.pop()
            if id(tensor) in seen:
                continue
            seen.add(id(tensor))
            if tensor._op is None:
                (leaves if tensor.requires_grad else constants).append(tensor)
                continue
            if tensor._inputs is None:
                raise _Released
            custom = tensor._op.extra.get("custom_function")
            if custom is not None:
                self.refused = (
                    f"line {self.run.line}: the graph holds a custom autograd.Function "
                    f"({getattr(custom, '__name__', 'Function')}), which the commands do not "
                    "replay yet"
                )
            made.append(tensor)
            pending.extend(tensor._inputs)
        made.sort(key=lambda t: t._order)
        order = {key: k for k, key in enumerate(names)}  # the script's order of its names
        leaves.sort(key=lambda t: order.get(id(t), len(order)))
        leaf_names = _unique_names(leaves, names, "leaf")
        slot = {id(t): k for k, t in enumerate(leaves)}
        for t in constants:
            slot[id(t)] = len(slot)
        steps = []
        for t in made:
            node, op, operands = t.grad_fn, t._op, t._inputs
            assert node is not None and op is not None and operands is not None  # a node's
            name = self.run.node_names.get(node) or node.name()
            steps.append(GraphStep(op, tuple(slot[id(i)] for i in operands), t._params, name))
            slot[id(t)] = len(slot)
        taken = set(leaf_names)
        named: dict[str, int] = {}
        for t in made:
            name = names.get(id(t))
            if name is not None and name not in taken:
                named[name] = slot[id(t)]
                taken.add(name)
        out_names = []
        for t in outputs:
            name = next((n for n, s in named.items() if s == slot[id(t)]), None)
            if name is None:
                name = _fresh("output", taken)
                named[name] = slot[id(t)]
                taken.add(name)
            out_names.append(name)
        given: dict[str, np.ndarray] = {}
        cotangents: list[str | None] = []
        for g in gradients or [None] * len(outputs):
            if g is None:
                cotangents.append(None)
                continue
            name = names.get(id(g))
            name = name if name is not None and name not in taken else _fresh("v", taken)
            taken.add(name)
            given[name] = np.array(g.data)
            cotangents.append(name)
        hooked = any(graph_hooks.HOOKED.of(t) is not None for t in made) or any(
            self.run.hooks.get(t) or self.run.post_hooks.get(t) for t in leaves
        )
        notes = (HOOKS_LEFT_OUT,) if hooked else ()
        wrt = None
        if inputs is not None:
            by_id = {id(t): n for t, n in zip(leaves, leaf_names)}
            wrt = tuple(by_id[id(t)] for t in _listed(inputs) if id(t) in by_id)
        return Trace(
            leaves=tuple((n, np.array(t.data)) for t, n in zip(leaves, leaf_names)),
            constants=tuple(np.array(t.data) for t in constants),
            steps=tuple(steps),
            named=named,
            outputs=tuple(out_names),
            gradients=given,
            cotangents=tuple(cotangents),
            inputs=wrt,
            line=self.run.line,
            notes=notes,
        )


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _fresh(base: str, taken: set[str]) -> str:
    """``base``, or ``base_1``, ``base_2``, ... where it is taken."""
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    return name


def _unique_names(tensors: list[gc.Tensor], names: dict[int, str], base: str) -> list[str]:
    """A name for each tensor: the script's, else ``base0``, ``base1``, ..."""
    found = [names.get(id(t)) for t in tensors]
    taken = {n for n in found if n is not None}
    result = []
    for k, name in enumerate(found):
        if name is None:
            name = _fresh(f"{base}{k}", taken)
            taken.add(name)
        result.append(name)
    return result


def _script_names(run: Any) -> dict[int, str]:
    """The name by which the script holds each tensor now: a variable of the running call,
    else of the calls around it, else a global; a module's parameter as ``model_fc_weight``
    (``model.fc.weight``); a tensor in a list or tuple as ``w_0``."""
    names: dict[int, str] = {}
    scopes = [frame.names for frame in reversed(run.frames)] + [run.globals]
    for scope in scopes:
        for name, value in list(scope.items()):
            if name.startswith("_") or not name.isidentifier():
                continue
            for held, tensor in _tensors_of(name, value):
                names.setdefault(id(tensor), held)
    return names


def _tensors_of(name: str, value: Any) -> Iterator[tuple[str, gc.Tensor]]:
    if isinstance(value, gc.Tensor):
        yield name, value
    elif isinstance(value, Module):
        for dotted, parameter in value.named_parameters():
            yield f"{name}_{dotted.replace('.', '_')}", parameter
    elif isinstance(value, (list, tuple)) and len(value) <= 64:
        for k, item in enumerate(value):
            if isinstance(item, gc.Tensor):
                yield f"{name}_{k}", item


# -- the script's run ---------------------------------------------------------------------------
def trace_script(source: str, filename: str, seed: int = 0) -> Traced:
    """Run ``source`` (a PyTorch script) recording its backward passes: the program of its last
    (see the module's docstring). ``GradcliError`` (exit 2) where gradcli does not take the
    script, where it raises, or where it never calls backward."""
    from .python.interpreter import lower, new_run, run_program, session

    program = lower(source)
    out, err = io.StringIO(), io.StringIO()
    run = new_run(source, filename, seed, out, err)
    recorder = Recorder(run)
    run.record = recorder
    with session(run):
        status = run_program(run, program)
    if status:  # an exception the script did not catch: its traceback's last frame
        text = err.getvalue().rstrip("\n")
        lines = re.findall(r"^  File .*, line (\d+), in ", text, re.MULTILINE)
        raise GradcliError(
            f"the script stopped with {text.split(chr(10))[-1]}",
            where=f"line {lines[-1]}" if lines else None,
            hint="run it with gradcli run to see its output and traceback",
        )
    if recorder.refused is not None:
        raise GradcliError(recorder.refused, hint="differentiate the script with gradcli run")
    if recorder.trace is None:
        raise GradcliError(
            "the script calls no backward pass: the command differentiates the tensor that "
            ".backward() (or torch.autograd.grad) is called on",
            hint="end the script with loss.backward() (y.backward(v) for a tensor y), or give "
            "a program of gradcli's own notation",
        )
    return Traced.of(source, recorder.trace)
