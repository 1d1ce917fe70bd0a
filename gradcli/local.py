"""The local derivative of one step of ``explain``: its formula, and its value at the point.

An element-wise step (see ``steps.py``) gets sympy's formula for each operand. Every other
operation has its rule here: a formula for each element where one exists (sum: 1, mean: 1/n,
prod: the product of the others, matmul: the other operand) and, for softmax and
log_softmax, the Jacobian of each slice. The value comes from the run, in one of four
layouts (see ``Local``): the engine's forward mode gives J 1 for an element-wise step, its
reverse mode J^T 1 where each element of the operand reaches one element of the result; the
Jacobian blocks and the other operand of a matrix product are read off the values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from . import engine as gc
from . import limits
from .lang import functions as F
from .lang.program import _refs
from .lang.validate import element_of
from .steps import ir_text, number_text
from .symbolic import ELEMENTWISE, local_derivatives

BLOCK_ENTRIES = 1_000_000  # the most entries of softmax's Jacobian blocks worked out
_PLACE = "\0operand"  # the name an operand slot is read under when it alone is varied


@dataclass(frozen=True)
class Local:
    """d (step) / d (operand): the left side as text, its formula, and its value laid out as
    ``layout`` says, with out the step's result and w the operand:

    - ``element-wise``: value[i] is d out[i] / d w, at the element of w that out[i] uses;
    - ``per element``: value[i] is d out / d w[i], for the one element of out w[i] reaches;
    - ``jacobian blocks``: value[..., i, j] is d out[..., i] / d w[..., j] along dim;
    - ``other operand``: value is the other operand of a matrix product, as the formula
      indexes it. None when too large to work out.
    """

    wrt: str
    derivative: str
    formula: str
    layout: str
    value: np.ndarray | None


@dataclass(frozen=True)
class Slot:
    """One tensor operand of an operation, and what its rule may read."""

    node: str  # the step's result as a formula names it: out, sum(x), (x @ W)
    op: str
    params: dict  # the options, by parameter name
    names: list[str]  # every tensor operand as the formula names it, in order
    arrays: list[np.ndarray]
    position: int  # which of them this slot is
    out: np.ndarray

    @property
    def wrt(self) -> str:
        return self.names[self.position]


def d(name: str) -> str:
    """``dz``, ``d(x @ W)``, ``d(sum(x))``: the differential of a named value."""
    return f"d{name}" if name.isidentifier() or name.startswith("(") else f"d({name})"


def _at(name: str, index: str) -> str:
    """``x[i]``, or the number itself for a constant operand."""
    return name if _is_number(name) else f"{name}[{index}]"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _along(slot: Slot) -> str:
    dim = slot.params.get("dim")
    return "" if dim is None else f" along dim {dim}"


def _count(slot: Slot) -> int:
    x, dim = slot.arrays[0], slot.params.get("dim")
    return x.size if dim is None else x.shape[dim]


def _mean(slot: Slot) -> str:
    along = _along(slot)
    return f"1/n = 1/{_count(slot)}" + (f" (n: the elements{along})" if along else "")


def _norm(slot: Slot) -> str:
    p, w, node = float(slot.params["p"]), slot.wrt, slot.node
    if p == 0:
        return "0 (the count of non-zero elements does not change)"
    if p == 1:
        return f"sign({w}[i])"
    if p == 2:
        return f"{w}[i]/{node} (0 where the norm is 0)"
    if math.isinf(p):
        return f"sign({w}[i])/k where |{w}[i]| is the largest{_along(slot)} (k of them), else 0"
    q = number_text(p - 1)
    return f"sign({w}[i])*|{w}[i]|**{q}/{node}**{q}"


# Reductions and norm: d out / d w[i] for each element, one formula each.
_REDUCTIONS = {
    "sum": lambda s: "1",
    "mean": _mean,
    "prod": lambda s: f"{s.node}/{s.wrt}[i] (the product of the other elements{_along(s)})",
    "amax": lambda s: f"1/k where {s.wrt}[i] is the largest{_along(s)} (k of them), else 0",
    "amin": lambda s: f"1/k where {s.wrt}[i] is the smallest{_along(s)} (k of them), else 0",
    "logsumexp": lambda s: f"exp({s.wrt}[i] - {s.node}) = softmax({s.wrt})[i]{_along(s)}",
    "norm": _norm,
}
_MOVES = ("transpose", "reshape", "unsqueeze", "squeeze", "flatten")


def _loss(slot: Slot) -> tuple[str, str]:
    """(left side, formula) of a loss by its input (position 0) or target (1)."""
    (x, t), node, op = slot.names, slot.node, slot.op
    reduction = slot.params["reduction"]
    if op == "cross_entropy":
        rows = slot.arrays[0].ndim == 2
        index = "n, c" if rows else "c"
        n = slot.arrays[0].shape[0] if rows else 1
    else:
        index, n = "i", slot.arrays[0].size
    scale = f"/{n}" if reduction == "mean" and n != 1 else ""
    out_index = f"[{index[0]}]" if reduction == "none" else ""
    left = f"{d(node)}{out_index}/{d(slot.wrt)}[{index}]"
    xi, ti = _at(x, index), _at(t, index)
    if op == "mse_loss":
        formula = f"2*({xi} - {ti})" if slot.position == 0 else f"-2*({xi} - {ti})"
    elif op == "binary_cross_entropy_with_logits":
        formula = f"(sigmoid({xi}) - {ti})" if slot.position == 0 else f"-{xi}"
    elif op == "binary_cross_entropy":
        formula = (
            f"({xi} - {ti})/max({xi}*(1 - {xi}), 1e-12)"
            if slot.position == 0
            else f"(log(1 - {xi}) - log({xi}))"
        )
    elif slot.position == 1 and slot.arrays[1].shape != slot.arrays[0].shape:
        return left, "0 (class indices are not differentiable)"
    else:
        formula = _cross_entropy(slot, x, t, index, rows)
    return left, formula + scale


def _cross_entropy(slot: Slot, x: str, t: str, index: str, rows: bool) -> str:
    """cross_entropy by its logits, or by target probabilities."""
    row = f"{t}[n]" if rows else t
    if slot.position == 1:
        return f"-log_softmax({x})[{index}]"
    if slot.arrays[1].shape != slot.arrays[0].shape:  # class indices
        return f"(softmax({x})[{index}] - (1 if c = {row} else 0))"
    return f"(softmax({x})[{index}]*sum({row}) - {t}[{index}])"


def _matmul(slot: Slot) -> tuple[str, str]:
    """(left side, formula): d (a @ b)[i, j] / d a[i, k] = b[k, j], and the like for vectors."""
    (a, b), (da, db) = slot.names, (x.ndim for x in slot.arrays)
    batch = ["..."] if max(da, db) > 2 else []
    index_a = (["..."] if da > 2 else []) + (["i"] if da > 1 else []) + ["k"]
    index_b = (["..."] if db > 2 else []) + ["k"] + (["j"] if db > 1 else [])
    index_out = batch + (["i"] if da > 1 else []) + (["j"] if db > 1 else [])

    def at(name, parts):
        return f"{name}[{', '.join(parts)}]" if parts else name

    (mine, mine_index), other = ((a, index_a), (b, index_b))[:: 1 if slot.position == 0 else -1]
    return f"{at(d(slot.node), index_out)}/{at(d(mine), mine_index)}", at(*other)


def _blocks(slot: Slot) -> tuple[str, np.ndarray | None]:
    """softmax and log_softmax: the formula, and the n x n Jacobian of each slice along dim."""
    dim = slot.params["dim"]
    dim = 0 if dim is None else dim
    s = slot.out if slot.op == "softmax" else np.exp(slot.out)
    s = np.moveaxis(s, dim, -1) if s.ndim else s.reshape(1)
    eye = np.eye(s.shape[-1])
    if slot.op == "softmax":
        formula = f"s[i]*(δij - s[j]) = diag(s) - s s^T (s = {slot.node}{_along(slot)})"
    else:
        formula = f"δij - s[j] = I - 1 s^T (s = softmax({slot.wrt}){_along(slot)})"
    entries = s.size * s.shape[-1]
    if entries > min(BLOCK_ENTRIES, limits.current().max_elements):
        shape = (*s.shape, s.shape[-1])
        return f"{formula}; its blocks, shape {shape}, are too large to show", None
    if slot.op == "softmax":
        return formula, s[..., :, None] * (eye - s[..., None, :])
    return formula, eye - s[..., None, :]


def operation_local(slot: Slot, vary) -> Local:
    """The local derivative of an operation by one operand slot. ``vary(v)`` runs the step
    with this slot alone given the cotangent v, and returns J^T v for it."""
    op, w, node = slot.op, slot.wrt, slot.node
    if op in ("softmax", "log_softmax"):
        formula, value = _blocks(slot)
        return Local(w, f"{d(node)}[i]/{d(w)}[j]", formula, "jacobian blocks", value)
    if op in ("matmul", "dot"):
        left, formula = _matmul(slot)
        other = slot.arrays[1 - slot.position]
        return Local(w, left, formula, "other operand", other)
    left = f"{d(node)}/{d(w)}[i]"
    if op in _REDUCTIONS:
        formula = _REDUCTIONS[op](slot)
    elif op in _MOVES:
        formula = "1 (the same elements, moved)"
    elif op in ("stack", "cat"):
        formula = f"1 ({w} is copied into {node})"
    elif op == "index":
        formula = f"1 where {node} takes {w}[i] (once for each time), else 0"
    else:
        left, formula = _loss(slot)
    return Local(w, left, formula, "per element", vary(np.ones(slot.out.shape)))


def parameters(ir) -> dict:
    """The options of a call, by parameter name (dims, p, reduction)."""
    if ir[0] != "call":
        return {}
    params = F.FUNCTIONS[ir[1]].params
    return {
        params[min(i, len(params) - 1)].name: a[1] for i, a in enumerate(ir[2]) if a[0] == "lit"
    }


def slots(ir) -> list[tuple[list, list]]:
    """(operand IR, the step's IR with that operand read from _PLACE) for each tensor operand
    of an operation, in order."""
    if ir[0] == "index":
        return [(ir[1], ["index", ["ref", _PLACE], ir[2]])]
    found = []
    for i, arg in enumerate(ir[2]):
        if arg[0] == "list":
            for j, item in enumerate(arg[1]):
                items = [*arg[1][:j], ["ref", _PLACE], *arg[1][j + 1 :]]
                found.append((item, _replaced(ir, i, ["list", items])))
        elif arg[0] != "lit":
            found.append((arg, _replaced(ir, i, ["ref", _PLACE])))
    return found


def _replaced(ir, i: int, arg) -> list:
    return ["call", ir[1], [*ir[2][:i], arg, *ir[2][i + 1 :]]]


def step_locals(ir, node: str, env: dict, names: dict, run) -> list[Local]:
    """The local derivatives of a step (``node`` names its result) by each of its operands
    that requires grad; ``names`` says how a step's value is shown as an operand, ``run(ir,
    given)`` evaluates IR with some names given values."""
    if ir[0] in ("const", "ref") or (ir[0] == "call" and ir[1] in ELEMENTWISE):
        return _element_wise_locals(ir, node, env, names, run)
    operands = slots(ir)
    texts = [names.get(o[1], o[1]) if o[0] == "ref" else ir_text(o) for o, _ in operands]
    arrays = [run(o, {}).data for o, _ in operands]
    op, params, out = (ir[1] if ir[0] == "call" else "index"), parameters(ir), run(ir, {}).data
    found = []
    for position, (operand, placed) in enumerate(operands):
        if operand[0] != "ref" or not _requires_grad(operand[1], env):
            continue
        slot = Slot(node, op, params, texts, arrays, position, out)
        local = operation_local(slot, _varied(run, placed, run(operand, {})))
        if texts.count(texts[position]) > 1:  # the same name twice: one slot at a time
            local = replace(local, formula=f"{local.formula} (as operand {position + 1})")
        found.append(local)
    return found


def _element_wise_locals(ir, node: str, env: dict, names: dict, run) -> list[Local]:
    """sympy's formula by each operand, and J 1 by the engine's forward mode: one value per
    element of the result."""
    formulas = local_derivatives(ir, names)
    found = []
    for key in dict.fromkeys(_refs(ir)):
        if not _requires_grad(key, env):
            continue
        shown = names.get(key, key)
        formula = (
            "no formula: sympy ran out of time" if formulas is None else formulas.get(key, "0")
        )
        at = run(["ref", key], {})
        ones = gc.Tensor(np.ones(at.shape, dtype=at.dtype))
        value = gc.jvp(lambda v, k=key: run(ir, {k: v}), at, ones)[1].data
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
