"""Explain rules: the local derivative of one operation by one operand, as ``explain`` shows it.

A rule is ``rule(slot, vary) -> (left side, formula, layout, value)``. ``slot`` (a ``Slot``)
describes the operand: the step's name ``node``, the operand names ``names`` and values
``arrays``, which one is ``position``, the options ``params``, the result ``out``;
``vary(v)`` gives J^T v for this operand alone. The layouts are those of ``local.Local``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base.records import record
from .table import Array


@record(kw_only=False, eq=True)
class Slot:
    """One tensor operand of an operation, and what its rule may read."""

    node: str  # the step's result as a formula names it: out, sum(x), (x @ W)
    op: str
    params: dict[str, Any]  # the options, by parameter name
    names: list[str]  # every tensor operand as the formula names it, in order
    arrays: list[Array]
    position: int  # which of them this slot is
    out: Array
    # the parameter each operand is given for (an operand left out has no slot: bias=None)
    operands: tuple[str, ...] = ()

    @property
    def wrt(self) -> str:
        return self.names[self.position]

    @property
    def parameter(self) -> str:
        """The name of the parameter this slot's operand is given for (``bias``)."""
        return self.operands[self.position]


Vary = Callable[[Array], Array]  # v -> J^T v, for the slot's operand alone
# (left side, formula, layout, value; None when too large to work out)
Explained = tuple[str, str, str, Array | None]
ExplainRule = Callable[[Slot, Vary], Explained]

BLOCK_ENTRIES = 1_000_000  # the most entries of softmax's Jacobian blocks worked out


def d(name: str) -> str:
    """``dz``, ``d(x @ W)``, ``d(sum(x))``: the differential of a named value."""
    return f"d{name}" if name.isidentifier() or name.startswith("(") else f"d({name})"


def number_text(value: complex) -> str:
    """A number as a program would write it: 2, 0.5, -3, (1+2j)."""
    if isinstance(value, complex):
        return repr(value)
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _at(name: str, index: str) -> str:
    """``x[i]``, or the number itself for a constant operand."""
    return name if _is_number(name) else f"{name}[{index}]"


def along(slot: Slot) -> str:
    dim = slot.params.get("dim")
    return "" if dim is None else f" along dim {dim}"


def per_element(formula: Callable[[Slot], str]) -> ExplainRule:
    """A rule whose formula gives d out / d w[i] for each element (``formula(slot)``), the
    value by the engine's reverse mode."""

    def rule(slot: Slot, vary: Vary) -> Explained:
        left = f"{d(slot.node)}/{d(slot.wrt)}[i]"
        return left, formula(slot), "per element", vary(np.ones(slot.out.shape))

    return rule


def mean(slot: Slot) -> str:
    x, dim = slot.arrays[0], slot.params.get("dim")
    count = x.size if dim is None else x.shape[dim]
    where = along(slot)
    return f"1/n = 1/{count}" + (f" (n: the elements{where})" if where else "")


def norm(slot: Slot) -> str:
    p, w, node = float(slot.params["p"]), slot.wrt, slot.node
    if p == 0:
        return "0 (the count of non-zero elements does not change)"
    if p == 1:
        return f"sign({w}[i])"
    if p == 2:
        return f"{w}[i]/{node} (0 where the norm is 0)"
    if math.isinf(p):
        extreme = "largest" if p > 0 else "smallest"
        return f"sign({w}[i])/k where |{w}[i]| is the {extreme}{along(slot)} (k of them), else 0"
    q = number_text(p - 1)
    return f"sign({w}[i])*|{w}[i]|**{q}/{node}**{q}"


MOVED = per_element(lambda slot: "1 (the same elements, moved)")
COPIED = per_element(lambda slot: f"1 ({slot.wrt} is copied into {slot.node})")
PICKED = per_element(
    lambda slot: f"1 where {slot.node} takes {slot.wrt}[i] (once for each time), else 0"
)


def _elements(slot: Slot) -> tuple[str, int]:
    """An element-wise loss: its index and how many elements the mean divides by."""
    return "i", slot.arrays[0].size


def _classes(slot: Slot) -> tuple[str, int]:
    """cross_entropy of (C) or (N, C) logits: the index, and the samples the mean divides by."""
    rows = slot.arrays[0].ndim == 2
    return ("n, c", slot.arrays[0].shape[0]) if rows else ("c", 1)


def loss(
    formula: Callable[[Slot, str, str, str], str],
    indexing: Callable[[Slot], tuple[str, int]] = _elements,
) -> ExplainRule:
    """A loss rule: ``formula(slot, x, t, index)`` with x and t the input's and target's
    element (``x[i]``), for the slot's position; the mean's 1/n is added here (not to a
    formula that says it is 0)."""

    def rule(slot: Slot, vary: Vary) -> Explained:
        (x, t), node = slot.names, slot.node
        index, n = indexing(slot)
        reduction = slot.params["reduction"]
        scale = f"/{n}" if reduction == "mean" and n != 1 else ""
        out_index = f"[{index[0]}]" if reduction == "none" else ""
        left = f"{d(node)}{out_index}/{d(slot.wrt)}[{index}]"
        text = formula(slot, _at(x, index), _at(t, index), index)
        if text.startswith("0 ("):
            scale = ""
        return left, text + scale, "per element", vary(np.ones(slot.out.shape))

    return rule


def mse(slot: Slot, x: str, t: str, index: str) -> str:
    return f"2*({x} - {t})" if slot.position == 0 else f"-2*({x} - {t})"


def bce_with_logits(slot: Slot, x: str, t: str, index: str) -> str:
    return f"(sigmoid({x}) - {t})" if slot.position == 0 else f"-{x}"


def bce(slot: Slot, x: str, t: str, index: str) -> str:
    if slot.position == 0:
        return f"({x} - {t})/max({x}*(1 - {x}), 1e-12)"
    return f"(log(1 - {x}) - log({x}))"


def _cross_entropy(slot: Slot, x: str, t: str, index: str) -> str:
    """cross_entropy by its logits, or by target probabilities (or class indices: none)."""
    logits, target = slot.names
    classes = slot.arrays[1].shape != slot.arrays[0].shape
    rows = slot.arrays[0].ndim == 2
    row = f"{target}[n]" if rows else target
    if slot.position == 1:
        if classes:
            return "0 (class indices are not differentiable)"
        return f"-log_softmax({logits})[{index}]"
    if classes:
        return f"(softmax({logits})[{index}] - (1 if c = {row} else 0))"
    return f"(softmax({logits})[{index}]*sum({row}) - {target}[{index}])"


def matmul(slot: Slot, vary: Vary) -> Explained:
    """d (a @ b)[i, j] / d a[i, k] = b[k, j], and the like for vectors: the other operand."""
    (a, b), (da, db) = slot.names, (x.ndim for x in slot.arrays)
    batch = ["..."] if max(da, db) > 2 else []
    index_a = (["..."] if da > 2 else []) + (["i"] if da > 1 else []) + ["k"]
    index_b = (["..."] if db > 2 else []) + ["k"] + (["j"] if db > 1 else [])
    index_out = batch + (["i"] if da > 1 else []) + (["j"] if db > 1 else [])

    def at(name: str, parts: list[str]) -> str:
        return f"{name}[{', '.join(parts)}]" if parts else name

    (mine, mine_index), other = ((a, index_a), (b, index_b))[:: 1 if slot.position == 0 else -1]
    left = f"{at(d(slot.node), index_out)}/{at(d(mine), mine_index)}"
    return left, at(*other), "other operand", slot.arrays[1 - slot.position]


def blocks(log: bool) -> ExplainRule:
    """softmax (or log_softmax): the formula, and the n x n Jacobian of each slice along dim."""

    def rule(slot: Slot, vary: Vary) -> Explained:
        from ..base import bounds

        dim = slot.params["dim"]
        dim = 0 if dim is None else dim
        s = np.exp(slot.out) if log else slot.out
        s = np.moveaxis(s, dim, -1) if s.ndim else s.reshape(1)
        eye = np.eye(s.shape[-1])
        if log:
            formula = f"δij - s[j] = I - 1 s^T (s = softmax({slot.wrt}){along(slot)})"
        else:
            formula = f"s[i]*(δij - s[j]) = diag(s) - s s^T (s = {slot.node}{along(slot)})"
        left = f"{d(slot.node)}[i]/{d(slot.wrt)}[j]"
        entries = s.size * s.shape[-1]
        if entries > min(BLOCK_ENTRIES, bounds.limits().max_elements):
            shape = (*s.shape, s.shape[-1])
            formula += f"; its blocks, shape {shape}, are too large to show"
            return left, formula, "jacobian blocks", None
        value = eye - s[..., None, :] if log else s[..., :, None] * (eye - s[..., None, :])
        return left, formula, "jacobian blocks", value

    return rule


def slices(formula: Callable[[Slot], str]) -> ExplainRule:
    """An operation of each slice along dim on its own (normalize): the formula of
    d out[i]/d w[j] within a slice, and each slice's n x n Jacobian (one reverse pass for each
    position along dim, all slices at once)."""

    def rule(slot: Slot, vary: Vary) -> Explained:
        from ..base import bounds

        left = f"{d(slot.node)}[i]/{d(slot.wrt)}[j]"
        out = slot.out if slot.out.ndim else slot.out.reshape(1)
        dim = slot.params["dim"] if slot.out.ndim else 0
        n = out.shape[dim]
        if out.size * n > min(BLOCK_ENTRIES, bounds.limits().max_elements):
            shape = (*np.moveaxis(out, dim, -1).shape, n)
            return (
                left,
                f"{formula(slot)}; its blocks, shape {shape}, are too large to show",
                ("jacobian blocks"),
                None,
            )
        rows = []
        for j in range(n):
            cotangent = np.zeros(out.shape)
            np.moveaxis(cotangent, dim, -1)[..., j] = 1
            rows.append(
                np.moveaxis(vary(cotangent.reshape(slot.out.shape)).reshape(out.shape), dim, -1)
            )
        return left, formula(slot), "jacobian blocks", np.stack(rows, axis=-2)

    return rule


cross_entropy = loss(_cross_entropy, _classes)


def jacobian(formula: Callable[[Slot], str]) -> ExplainRule:
    """An explain rule for an operation whose Jacobian is best said as a differential:
    ``d(inv(A)) = -inv(A) @ dA @ inv(A)``, or one that copies elements more than once
    (``repeat``, ``pad``); the value is the whole Jacobian, out.shape +
    operand.shape, row by row from J^T e_k (None when it is too large to show)."""

    def rule(slot: Slot, vary: Vary) -> Explained:
        from ..base import bounds

        out, operand = np.shape(slot.out), np.shape(slot.arrays[slot.position])
        entries = math.prod(out) * math.prod(operand)
        if entries > min(BLOCK_ENTRIES, bounds.limits().max_elements):
            return (
                d(slot.node),
                f"{formula(slot)}; its Jacobian is too large to show",
                "jacobian",
                None,
            )
        rows = []
        for k in range(math.prod(out)):
            unit = np.zeros(math.prod(out))
            unit[k] = 1.0
            rows.append(np.asarray(vary(unit.reshape(out))).reshape(-1))
        value = np.array(rows).reshape(out + operand) if rows else np.zeros(out + operand)
        return d(slot.node), formula(slot), "jacobian", value

    return rule
