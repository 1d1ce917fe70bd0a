"""The local derivative of one step of ``explain``: its formula, and its value at the point.

An element-wise step (see ``steps.py``) gets sympy's formula for each operand. Every other
operation has its rule in its op-table entry (``explain``, see ``ops/explaining.py``): a
formula for each element where one exists (sum: 1, mean: 1/n, prod: the product of the
others, matmul: the other operand) and, for softmax and log_softmax, the Jacobian of each
slice. The value comes from the run, in one of four
layouts (see ``Local``): the engine's forward mode gives J 1 for an element-wise step, its
reverse mode J^T 1 where each element of the operand reaches one element of the result; the
Jacobian blocks and the other operand of a matrix product are read off the values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...domains.symbolic import elementwise, local_derivatives
from ...lang import functions as F
from ...lang import ir
from ...lang.ir import Call, Const, Index, Name, Node
from ...lang.validate import element_of
from ...ops import library as gc
from ...ops.explaining import Slot, d
from .steps import ir_text

_PLACE = "\0operand"  # the name an operand slot is read under when it alone is varied


@dataclass(frozen=True)
class Local:
    """d (step) / d (operand): the left side as text, its formula, and its value laid out as
    ``layout`` says, with out the step's result and w the operand:

    - ``element-wise``: value[i] is d out[i] / d w, at the element of w that out[i] uses;
    - ``per element``: value[i] is d out / d w[i], for the one element of out w[i] reaches;
    - ``jacobian blocks``: value[..., i, j] is d out[..., i] / d w[..., j] along dim;
    - ``other operand``: value is the other operand of a matrix product, as the formula
      indexes it;
    - ``jacobian``: value is the whole Jacobian d out / d w, out.shape + w.shape (an operation
      said by its differential, as inv's). None when too large to work out.
    """

    wrt: str
    derivative: str
    formula: str
    layout: str
    value: np.ndarray | None


def operation_local(slot: Slot, vary) -> Local:
    """The local derivative of an operation by one operand slot, by the op table's explain
    rule. ``vary(v)`` runs the step with this slot alone given the cotangent v, and returns
    J^T v for it."""
    rule = F.OPS[slot.op].explain
    assert rule is not None  # the sweep test holds every operation that is not element-wise
    left, formula, layout, value = rule(slot, vary)
    return Local(slot.wrt, left, formula, layout, value)


def parameters(node: Node) -> dict:
    """The options of a call, by parameter name (dims, p, reduction)."""
    if not isinstance(node, Call):
        return {}
    params = F.OPS[node.op].options
    if not F.OPS[node.op].params:  # y[index] = value: its options are the index
        return {"index": node.params}
    return {params[min(i, len(params) - 1)].name: v for i, v in enumerate(node.params)}


def operand_parameters(node: Call | Index) -> tuple[str, ...]:
    """The parameter each operand slot of ``node`` is given for, in the order of ``slots``."""
    if isinstance(node, Index) or not F.OPS[node.op].params:
        return ("input",) * (1 if isinstance(node, Index) else len(node.args))
    kinds = [p for p in F.OPS[node.op].params if p.kind in F.OPERAND_KINDS]
    found: list[str] = []
    for param, arg in zip(kinds, node.args):
        if arg is not None:
            found.extend([param.name] * (len(arg) if isinstance(arg, tuple) else 1))
    return tuple(found)


def slots(node: Call | Index) -> list[tuple[Node, Node]]:
    """(operand, the step with that operand read from _PLACE) for each tensor operand of an
    operation, in order."""
    place = Name(_PLACE)
    if isinstance(node, Index):
        return [(node.base, replace(node, base=place))]
    found: list[tuple[Node, Node]] = []
    for i, arg in enumerate(node.args):
        if arg is None:  # an operand left out (bias=None)
            continue
        if isinstance(arg, tuple):
            for j, item in enumerate(arg):
                found.append((item, _replaced(node, i, (*arg[:j], place, *arg[j + 1 :]))))
        else:
            found.append((arg, _replaced(node, i, place)))
    return found


def _replaced(node: Call, i: int, arg) -> Call:
    return replace(node, args=(*node.args[:i], arg, *node.args[i + 1 :]))


def step_locals(expression: Node, node: str, env: dict, names: dict, run) -> list[Local]:
    """The local derivatives of a step (``node`` names its result) by each of its operands
    that requires grad; ``names`` says how a step's value is shown as an operand, ``run(expression,
    given)`` evaluates IR with some names given values."""
    if isinstance(expression, (Const, Name)) or (
        isinstance(expression, Call) and elementwise(expression.op)
    ):
        return _element_wise_locals(expression, node, env, names, run)
    operands = slots(expression)
    texts = [names.get(o.name, o.name) if isinstance(o, Name) else ir_text(o) for o, _ in operands]
    arrays = [run(o, {}).data for o, _ in operands]
    op = expression.op if isinstance(expression, Call) else F.OPERATORS["[]"].name
    params, out = parameters(expression), run(expression, {}).data
    found = []
    for position, (operand, placed) in enumerate(operands):
        if not isinstance(operand, Name) or not _requires_grad(operand.name, env):
            continue
        slot = Slot(node, op, params, texts, arrays, position, out, operand_parameters(expression))
        local = operation_local(slot, _varied(run, placed, run(operand, {})))
        if texts.count(texts[position]) > 1:  # the same name twice: one slot at a time
            local = replace(local, formula=f"{local.formula} (as operand {position + 1})")
        found.append(local)
    return found


def _element_wise_locals(expression: Node, node: str, env: dict, names, run) -> list[Local]:
    """sympy's formula by each operand, and J 1 by the engine's forward mode: one value per
    element of the result."""
    formulas = local_derivatives(expression, names)
    found = []
    for key in ir.names(expression):
        if not _requires_grad(key, env):
            continue
        shown = names.get(key, key)
        formula = (
            "no formula: sympy ran out of time" if formulas is None else formulas.get(key, "0")
        )
        at = run(Name(key), {})
        ones = gc.Tensor(np.ones(at.shape, dtype=at.dtype))
        value = gc.jvp(lambda v, k=key: run(expression, {k: v}), at, ones)[1].data
        found.append(Local(shown, f"{d(node)}/{d(shown)}", formula, "element-wise", value))
    return found


def _varied(run, placed_ir, at: gc.Tensor):
    """``vary(v)``: J^T v of ``placed_ir`` by its _PLACE operand alone, at ``at``."""

    def vary(v):
        return gc.vjp(lambda value: run(placed_ir, {_PLACE: value}), at, v)[1].data

    return vary


def _requires_grad(name: str, env: dict) -> bool:
    """Whether a name (or the vector an element name ``x0`` belongs to) requires grad."""
    if name in env:
        return env[name].requires_grad
    parts = element_of(name)
    return parts is not None and parts[0] in env and env[parts[0]].requires_grad
