"""The matrix product (``matmul``, ``@``) with PyTorch's rules for 1-D operands and broadcast
batch dimensions: one entry of the op table, its rules written with the engine's functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import ShapeError
from ...engine.sizes import ROOM
from ...engine.tensor import Tensor, TensorLike, apply
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from .. import symbolic as S
from ..arrays.rearranging import reshape, transpose
from ..numerics.product_order import matmul_like_torch
from ..primitives import _XY, add, sum_to
from ..table import HOLOMORPHIC, Array, NumpyResult, Op, public, register

# -- matrix product ---------------------------------------------------------------------------


def _matmul_vjp(
    g: Tensor, out: Tensor, a: Tensor, b: Tensor, needs: tuple[bool, ...]
) -> tuple[Tensor | None, Tensor | None]:
    # PyTorch's 1-D rules: a vector operand is a matrix with a dimension added, then removed.
    a2 = reshape(a, 1, a.shape[0]) if a.ndim == 1 else a
    b2 = reshape(b, b.shape[0], 1) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = reshape(g2, g2.shape[:-1] + (1,) + g2.shape[-1:]) if b.ndim > 1 else reshape(g2, 1)
    if b.ndim == 1:
        g2 = reshape(g2, g2.shape + (1,))
    ga = gb = None
    if needs[0]:
        ga = reshape(sum_to(matmul(g2, transpose(b2, -1, -2)), a2.shape), a.shape)
    if needs[1]:
        gb = reshape(sum_to(matmul(transpose(a2, -1, -2), g2), b2.shape), b.shape)
    return ga, gb


def _matmul_on_arrays(
    g: Array, out: None, a: Array, b: Array, needs: tuple[bool, ...]
) -> tuple[Array | None, Array | None] | None:
    """``_matmul_vjp`` on float64 arrays (the reverse pass's rule on arrays, ``Op.vjp_arrays``)
    for two matrices: g @ b.T and a.T @ g, the very products its matmul and transpose make
    (float64: numpy's, see ``_matmul_forward``); None for other operands (vjp's reshapes and
    sums) and for cotangents over the room the engine checks a value against (vjp refuses)."""
    if a.ndim != 2 or b.ndim != 2 or a.size > ROOM[0] or b.size > ROOM[0]:
        return None
    return (np.matmul(g, b.T) if needs[0] else None, np.matmul(a.T, g) if needs[1] else None)


def _matmul_jvp(tangents: Sequence[Tensor | None], out: Tensor, a: Tensor, b: Tensor) -> Tensor:
    ta, tb = tangents
    terms = []
    if ta is not None:
        terms.append(matmul(ta, b))
    if tb is not None:
        terms.append(matmul(a, tb))
    return terms[0] if len(terms) == 1 else add(terms[0], terms[1])


def _matmul_name(node: Any) -> str:
    """torch's node of ``a @ b``, as its matmul dispatches on the ranks: dot, mv, a vector's
    mm squeezed, mm; a batch's product (bmm, or mm over folded rows) is viewed as the result
    (UnsafeViewBackward0), but for a matrix times a batch where the matrix needs a gradient:
    mm of the batch folded, transposed back and made contiguous (a copy: CloneBackward0, none
    where a side of the result is 1: TransposeBackward0)."""
    first, second = node.inputs
    a, b = first.ndim, second.ndim
    named = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4"}
    if (a, b) in named:
        return named[(a, b)]
    if a == 2 and b == 2:
        return "MmBackward0"
    if a == 2 and node.needs[0]:
        rows, columns = first.shape[0], second.shape[-1]
        return "TransposeBackward0" if 1 in (rows, columns) else "CloneBackward0"
    return "UnsafeViewBackward0"


def _matmul_forward(a: Array, b: Array) -> NumpyResult:
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(
            f"matmul: both operands need at least one dimension, got shapes {a.shape} and {b.shape}"
        )
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(
            f"matmul: shapes {a.shape} and {b.shape} cannot be multiplied ({k_a} != {k_b})"
        )
    ordered = matmul_like_torch(a, b)
    return np.matmul(a, b) if ordered is None else ordered


def _matmul_size(a: Array, b: Array) -> int:
    if not a.ndim or not b.ndim:  # refused by the forward
        return 0
    batch = a.shape[:-2]
    if batch != b.shape[:-2]:  # (equal ones, a matrix and a vector's (): no numpy call)
        try:
            batch = np.broadcast_shapes(batch, b.shape[:-2])
        except ValueError:
            return 0
    return (
        math.prod(batch) * (a.shape[-2] if a.ndim > 1 else 1) * (b.shape[-1] if b.ndim > 1 else 1)
    )


_MATMUL = register(
    Op(
        "matmul",
        "a @ b, with PyTorch's rules for vectors",
        forward=_matmul_forward,
        vjp=_matmul_vjp,
        jvp=_matmul_jvp,
        backward_name=_matmul_name,
        batch=B.matmul,
        pattern=R.matmul,
        params=_XY,
        methods=("matmul",),
        operator="@",
        symbolic=S.matmul,
        explain=X.matmul,
        size=_matmul_size,
        complex=HOLOMORPHIC,
        vjp_reads_out=False,  # (the rule reads the operands alone)
    )
)


_MATMUL.vjp_arrays = _MATMUL.vjp_arrays_any_shape = _matmul_on_arrays


@public("matmul")
def matmul(a: TensorLike, b: TensorLike) -> Tensor:
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dimensions."""
    return apply(_MATMUL, a, b)
