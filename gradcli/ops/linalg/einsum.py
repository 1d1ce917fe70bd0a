"""``einsum(equation, *operands)``: Einstein summation, one entry of the op table.

The call reads the equation as torch does (spaces ignored, ``...`` for the dims the letters
do not name, right-aligned and broadcast; without ``->`` the output is the ellipsis dims and
then the letters that appear once, in alphabetical order, upper case first), expands the
operands whose dims of size 1 meet a larger size, and applies the primitive with an explicit
equation of letters alone. The primitive's derivative for one operand is itself an einsum:
of the cotangent with the other operands (and a vector of ones for each letter only that
operand has), over the operand's distinct letters, then written onto the diagonals of its
repeated letters with zeros elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import ShapeError
from ...engine.tensor import Tensor, apply
from .. import batching as B
from .. import explaining as X
from .. import primitives as P
from ..arrays import rearranging as RA
from ..table import EQUATION, VAR_TENSORS, Array, NumpyResult, Op, Param, public, register

# torch's order of the letters (written out: the string module compiles a pattern as it is
# imported, and a command's start-up would pay for it)
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _fresh(equation: str) -> Iterator[str]:
    """Letters the equation does not use, for the ellipsis dims and the rules' own dims."""
    return iter(c for c in _LETTERS if c not in equation)


def _split(equation: str) -> tuple[list[str], str]:
    """The operands' subscripts and the output's of an explicit equation ('ij,jk->ik')."""
    inputs, output = equation.split("->")
    return inputs.split(","), output


def explicit(equation: str, shapes: Sequence[tuple[int, ...]]) -> tuple[str, list[tuple[int, ...]]]:
    """The equation with letters alone and an explicit output, and the shape each operand is
    expanded to (its dims of size 1 broadcast to the other operands' sizes), checked as
    torch checks them."""
    text = equation.replace(" ", "")
    if text.count("->") > 1 or any(
        c not in _LETTERS + "," for c in text.replace("->", "").replace("...", "")
    ):
        raise ShapeError(
            f"einsum: the equation {equation!r} must be letters, ',', one '->' and '...' "
            "(spaces are ignored)"
        )
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(
            f"einsum: the equation {equation!r} has {len(terms)} operand(s) but "
            f"{len(shapes)} tensor(s) were given"
        )
    fresh = _fresh(text)
    named = []  # each term's letters count, the ellipsis apart
    for term, shape in zip(terms, shapes):
        if term.count("...") > 1:
            raise ShapeError(f"einsum: the subscripts {term!r} may hold one '...' only")
        letters = len(term.replace("...", ""))
        if letters > len(shape) or ("..." not in term and letters != len(shape)):
            raise ShapeError(
                f"einsum: the subscripts {term!r} name {letters} dims, but the operand has "
                f"shape {shape}"
            )
        named.append(letters)
    ellipsis_rank = max(
        [len(s) - n for t, s, n in zip(terms, shapes, named) if "..." in t], default=0
    )
    dots = "".join(next(fresh) for _ in range(ellipsis_rank))
    inputs = [
        t.replace("...", dots[ellipsis_rank - (len(s) - n) :])
        for t, s, n in zip(terms, shapes, named)
    ]
    if arrow:
        if rhs.count("...") > 1:
            raise ShapeError(f"einsum: the output {rhs!r} may hold one '...' only")
        output = rhs.replace("...", dots)
        for c in output:
            if output.count(c) > 1:
                raise ShapeError(f"einsum: the output subscript {c} appears more than once")
            if not any(c in term for term in inputs):
                raise ShapeError(
                    f"einsum: the output subscript {c} does not appear in any operand's subscripts"
                )
    else:
        joined = "".join(terms)
        once = sorted(c for c in set(joined) if joined.count(c) == 1 and c != ".")
        output = dots + "".join(once)
    sizes: dict[str, int] = {}
    for term, shape in zip(inputs, shapes):
        own: dict[str, int] = {}
        for c, n in zip(term, shape):
            if own.setdefault(c, n) != n:
                raise ShapeError(
                    f"einsum: the subscript {c} is repeated in an operand of shape {shape} with "
                    f"sizes that differ ({own[c]} and {n})"
                )
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise ShapeError(
                    f"einsum: the subscript {c} has size {n} in an operand of shape {shape}, "
                    f"which does not broadcast with the size {sizes[c]} seen before"
                )
            sizes[c] = max(sizes.get(c, 1), n)
    targets = [tuple(sizes[c] for c in term) for term in inputs]
    return ",".join(inputs) + "->" + output, targets


def _operand_gradient(g: Tensor, equation: str, operands: Sequence[Tensor], i: int) -> Tensor:
    """The cotangent of operand ``i``: an einsum of ``g`` with the other operands over the
    operand's distinct letters, written onto the diagonals of its repeated ones (zeros off
    them, as torch's rule writes into zeros: an infinite cotangent stays on the diagonal)."""
    inputs, output = _split(equation)
    terms = [output] + [s for j, s in enumerate(inputs) if j != i]
    tensors: list[Tensor] = [g] + [t for j, t in enumerate(operands) if j != i]
    present = set("".join(terms))
    shape = operands[i].shape
    letters = ""
    for c, n in zip(inputs[i], shape):
        if c in letters:  # a repeated letter: its diagonal, written below
            continue
        if c not in present:  # a letter summed by this operand alone: each gets g
            terms.append(c)
            tensors.append(Tensor(np.ones(n, dtype=g.dtype)))
            present.add(c)
        letters += c
    gradient = apply(_EINSUM, *tensors, equation=",".join(terms) + "->" + letters)
    if letters == inputs[i]:
        return gradient
    first = [inputs[i].index(c) == p for p, c in enumerate(inputs[i])]
    spread = RA.reshape(gradient, tuple(n if f else 1 for n, f in zip(shape, first)))
    return P.where(_diagonals(inputs[i], shape), P.expand(spread, shape), 0.0)


def _diagonals(term: str, shape: tuple[int, ...]) -> Array:
    """Where every repeated letter of ``term`` indexes the same place as its first."""
    grids = np.indices(shape, sparse=True)
    on = np.ones(shape, dtype=bool)
    for p, c in enumerate(term):
        q = term.index(c)
        if q != p:
            on &= grids[p] == grids[q]
    return on


def _einsum_vjp(
    g: Tensor, out: Tensor, *operands: Tensor, needs: Sequence[bool], equation: str
) -> tuple[Tensor | None, ...]:
    return tuple(
        _operand_gradient(g, equation, operands, i) if needed else None
        for i, needed in enumerate(needs)
    )


def _einsum_jvp(
    tangents: Sequence[Tensor | None], out: Tensor, *operands: Tensor, equation: str
) -> Tensor:
    total: Tensor | None = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        swapped = [t if j == i else x for j, x in enumerate(operands)]
        term = apply(_EINSUM, *swapped, equation=equation)
        total = term if total is None else P.add(total, term)
    return P.zeros_like(out) if total is None else total


def _einsum_forward(*arrays: Array, equation: str) -> NumpyResult:
    return np.einsum(equation, *arrays, optimize=len(arrays) > 2)


def _einsum_size(*arrays: Array, equation: str) -> int:
    """The elements of the result (the equation is explicit: letters and an output)."""
    terms, output = _split(equation)
    sizes = {c: n for term, a in zip(terms, arrays) for c, n in zip(term, a.shape)}
    return math.prod(sizes.get(c, 1) for c in output)


def _einsum_batch(
    forward: Callable[..., Array],
    params: dict[str, Any],
    values: list[Array],
    batched: list[bool],
    ranks: list[int],
    size: int,
) -> NumpyResult:
    equation = params["equation"]
    inputs, output = _split(equation)
    b = next(_fresh(equation))
    lifted = ",".join(b + s for s in inputs) + "->" + b + output
    arrays = [B.with_batch(v, flag, size) for v, flag in zip(values, batched)]
    return np.einsum(lifted, *arrays, optimize=len(arrays) > 2)


def _einsum_name(node: Any) -> str:
    """torch's node for the common cases: a sum of one operand, a permutation or diagonal of
    one, a product of several (which torch ends with a view, or a mul if nothing is summed)."""
    inputs, output = _split(node.params["equation"])
    if len(inputs) > 1:
        return "MulBackward0" if set(output) == set("".join(inputs)) else "ViewBackward0"
    return "PermuteBackward0" if set(output) == set(inputs[0]) else "SumBackward1"


def _einsum_symbolic(equation: str, *arrays: Any) -> NumpyResult:
    written, targets = explicit(equation, [a.shape for a in arrays])
    expanded = [np.broadcast_to(a, t) for a, t in zip(arrays, targets)]
    return np.asarray(np.einsum(written, *expanded), dtype=object)


def _einsum_text(slot: Any) -> str:
    equation = slot.params.get("equation", "")
    return f"the product of the other operands at the matching indices (einsum {equation!r})"


_EINSUM = register(
    Op(
        "einsum",
        "Einstein summation: einsum('ij,jk->ik', a, b) is a @ b; '...' for the dims left",
        forward=_einsum_forward,
        size=_einsum_size,
        vjp=_einsum_vjp,
        jvp=_einsum_jvp,
        backward_name=_einsum_name,
        batch=_einsum_batch,
        params=(Param("equation", EQUATION), Param("operands", VAR_TENSORS)),
        symbolic=_einsum_symbolic,
        explain=X.jacobian(_einsum_text),
        kink=(
            "smooth (multilinear); an operand's gradient is the einsum of the cotangent with "
            "the other operands, summed over the dims it broadcast"
        ),
    )
)


@public("einsum")
def einsum(equation: str, *operands: Any) -> Tensor:
    """torch.einsum: the operands as positional arguments, or one list of them."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ShapeError("einsum: give at least one tensor after the equation")
    tensors = [x if isinstance(x, Tensor) else Tensor(x) for x in operands]
    written, targets = explicit(str(equation), [t.shape for t in tensors])
    expanded = [P.expand(t, shape=s) for t, s in zip(tensors, targets)]
    return apply(_EINSUM, *expanded, equation=written)
