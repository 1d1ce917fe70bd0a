"""``gradcli explain``: the chain rule with numbers, statement by statement.

Runs the program once, each statement split into its operations (``steps.py``), with every
intermediate keeping its gradient, then reports the forward pass (each statement's operation
and value) and the backward pass in reverse order: the gradient arriving at each step, its
local derivative by each operand (formula and value, ``local.py``), and what it passes on to
each operand, ending with the leaf gradients. For small programs it also shows the symbolic
J^T, v and J^T v, as the seed post does, and says when the Jacobian is diagonal. Values are
kept as arrays: the renderers round them.
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import replace

import numpy as np

from ...base import bounds
from ...domains.symbolic import elementwise
from ...lang import ir
from ...lang.ir import Call, Const, Index, Name, Node
from ...lang.program import Assignment, Numbers
from ...lang.validate import element_of
from ...ops import library as gc
from ...results import Backward, Explanation, Forward, Passed, SymbolicJT
from ..compute import Bound, _cotangent, _function_of, no_gradient, output_of
from .local import step_locals
from .steps import operand_name, split


def _operands(expression: Node, env: dict) -> list[str]:
    """The names a statement reads, elements (x0) mapped to their vector (x)."""
    names = []
    for name in ir.names(expression):
        if name not in env:
            parts = element_of(name)
            name = parts[0] if parts and parts[0] in env else name
        if name in env and name not in names:
            names.append(name)
    return names


def explain(bound: Bound, of: str | None = None, v: np.ndarray | None = None) -> Explanation:
    """The forward and backward passes of ``out.backward(v)``, step by step."""
    from ...domains.symbolic import symbolic_values

    if bound.program.TRACED:  # no statements: its graph, node by node
        from .graph_walk import explain_graph

        return explain_graph(bound, of, v)
    leaves = bound.leaves()
    statements = [a for a in bound.program.assignments if a.ir is not None]
    irs = {a.target: a.ir for a in statements if a.ir is not None}
    steps = {target: split(target, ir, elementwise) for target, ir in irs.items()}
    env = _run_steps(bound, leaves, steps)
    name, out = output_of(bound, env, of)
    if not out.requires_grad:
        raise no_gradient(name, out)
    for step in (step for a in statements for step in steps[a.target]):
        tensor = env[step.key]
        if tensor.requires_grad and not tensor.is_leaf:
            tensor.retain_grad()
    if not out.is_leaf:
        out.retain_grad()
    if of is None and v is None and bound.program.passes:  # the script's y.backward(v)
        given = bound.program.passes[-1].gradient
        v = None if given is None else env[given].data
    gradient = _cotangent(v, out, name, bound.dtype)
    bound.engine(lambda: out.backward(gradient, retain_graph=True))

    forward = tuple(
        Forward(
            statement=a.statement.text,
            operation=_operation(irs[a.target]),
            value=env[a.target].data,
        )
        for a in statements
    )
    names = {s.key: operand_name(s) for a in statements for s in steps[a.target][:-1]}
    labels = {s.key: s.label for a in statements for s in steps[a.target]}
    backward: list[Backward] = []
    output_locals: tuple = ()
    # the run's values detached from its graph, once: a step's local derivative holds its
    # other operands fixed, and leaves the run's graph as it was
    fixed = {name: tensor.detach() for name, tensor in env.items()}
    groups = bound.program.groups()
    for done, a in enumerate(reversed(statements)):
        bounds.tick(f"the backward pass, {done} of {len(statements)} statements explained")
        run = _step_runner(bound, a, fixed, groups)
        for step in reversed(steps[a.target]):
            row = _backward_row(bound, step, env, names, labels, run)
            if row is None:
                continue
            backward.append(row)
            if step.key == name:
                output_locals = row.local
    return Explanation(
        output=name,
        value=out.data,
        grads={
            n: (None if t._grad is None else t._grad.data)
            for n, t in leaves.items()
            if not ir.unseen(n)
        },
        forward=forward,
        backward=tuple(backward),
        notes=tuple(_notes(bound, name, out, leaves, gradient, output_locals)),
        symbolic=_symbolic_jt(bound, name, out, leaves, gradient, symbolic_values),
        warnings=bound.messages(),
    )


def _operation(expression: Node) -> str:
    """What a statement does at its top: an operation's name, ``index``, ``ref`` or ``const``."""
    if isinstance(expression, Call):
        return expression.op
    return {Index: "index", Name: "ref", Const: "const"}[type(expression)]


def _run_steps(bound: Bound, leaves: dict, steps: dict) -> dict:
    """Run the program with each step of a statement as an assignment of its own, so that
    every step's value is a node of the graph."""
    assignments = []
    for a in bound.program.assignments:
        if a.ir is None:
            assignments.append(a)
            continue
        assignments.extend(
            Assignment(s.key, a.statement, s.ir, columns=a.columns) for s in steps[a.target]
        )
    program = replace(bound.program, assignments=tuple(assignments))
    return program.run(leaves, bound.log)


def _step_runner(bound: Bound, assignment, fixed: dict, groups: dict):
    """``run(ir, names)``: the value of a step's IR with some names given other values, on
    the run's values detached from its graph (``fixed``). The names given are looked up
    before the rest, not copied in with them: a copy of every value for each step would make
    explain quadratic in the program's length."""

    def run(expression: Node, given: dict) -> gc.Tensor:
        values = ChainMap(dict(given), fixed)
        return Numbers(values, assignment, groups, dtype=bound.dtype).tensor(expression)

    return run


def _backward_row(bound, step, env, names, labels, run) -> Backward | None:
    """What reaches one step and what it passes on, with its local derivatives; None when no
    gradient reaches it."""
    tensor = env[step.key]
    incoming = tensor._grad
    if incoming is None:
        return None
    passes = []
    for operand in _operands(step.ir, env):
        if not env[operand].requires_grad:
            continue
        part = bound.engine(lambda o=operand: _passed(step.ir, o, env, incoming, run))
        if part is not None:
            passes.append(Passed(labels.get(operand, operand), part.data))
    found = bound.engine(lambda: step_locals(step.ir, operand_name(step), env, names, run))
    return Backward(step.label, tuple(found), incoming.data, tuple(passes))


def _passed(expression: Node, operand: str, env: dict, incoming, run) -> gc.Tensor | None:
    """What a step passes on to one operand: J^T of the step alone by that operand, times the
    incoming gradient (None when the step does not depend on it differentiably). The step is
    re-run on its operands' values, so the reverse pass is the step's own few nodes: a
    backward pass from the step's tensor in the run's graph would walk every node below it,
    each statement's, making explain quadratic in the program's length (and would count the
    paths that reach the operand through other operands as well)."""
    value = env[operand].detach().requires_grad_()
    out = run(expression, {operand: value})
    if not out.requires_grad:
        return None
    (part,) = gc.grad(out, [value], incoming.detach(), allow_unused=True)
    return part


def _notes(bound, name, out, leaves, gradient, output_locals) -> list[str]:
    """Say when an output's Jacobian is diagonal: the vjp is then v times dy/dx entry-wise."""
    notes = []
    formulas = {
        local.wrt: local.formula for local in output_locals if local.layout == "element-wise"
    }
    targets = [n for n, t in leaves.items() if t.requires_grad and t.shape == out.shape]
    for target in targets:
        n = out.numel()
        if n < 2:
            continue
        function = _function_of(bound, name, [target])
        matrix = gc.jacobian(function, gc.Tensor(bound.arrays[target])).data.reshape(n, n)
        if np.count_nonzero(matrix - np.diag(np.diag(matrix))) == 0:
            formula = f" = {formulas[target]}" if target in formulas else ""
            v = "v" if gradient is not None else "1"
            notes.append(
                f"d{name}/d{target} is diagonal: of its {n}x{n} = {n * n} entries only the {n} on "
                f"the diagonal can be non-zero, so J^T {v} = {v} * d{name}/d{target}{formula}, "
                "entry by entry"
            )
    return notes


def _symbolic_jt(bound, name, out, leaves, gradient, symbolic_values) -> SymbolicJT | None:
    """J^T as formulas, v, and J^T v, for a 1-D output of few elements and 1-D inputs."""
    import sympy as sp

    from ...domains.symbolic import NotSymbolic, formula_text, time_budget

    targets = [n for n, t in leaves.items() if t.requires_grad]
    if (
        out.ndim != 1
        or out.numel() > 8
        or any(leaves[t].ndim != 1 or leaves[t].numel() > 8 for t in targets)
    ):
        return None

    def formulas() -> tuple[dict, dict]:
        expressions, symbols = symbolic_values(bound.program, bound.arrays, targets, name)
        rows = {
            t: [
                [formula_text(sp.diff(sp.sympify(e), s)) for e in expressions.reshape(-1)]
                for s in symbols[t].reshape(-1)
            ]
            for t in targets
        }
        return rows, symbols

    try:
        rows, symbols = time_budget(formulas)
    except NotSymbolic:  # not symbolic here, or too slow: no formulas
        return None
    except bounds.TimedOut:  # --timeout's deadline: the command stops
        raise
    except Exception:  # noqa: BLE001 - a program sympy cannot follow simply gets no formulas
        return None
    v = np.ones(out.shape) if gradient is None else gradient.data
    return SymbolicJT(
        jacobian_t=rows,
        symbols={t: [str(s) for s in symbols[t].reshape(-1)] for t in targets},
        v=v.reshape(-1),
        jt_v={t: leaves[t]._grad.data for t in targets if leaves[t]._grad is not None},
    )
