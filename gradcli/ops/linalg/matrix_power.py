"""``torch.linalg.matrix_power(A, n)``, an entry of the op table: A @ A @ ... (n times) by
repeated squaring, the identity for n = 0 and powers of inv(A) for n < 0; a composite of
matmul and inv, so its derivatives are theirs."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.tensor import Tensor
from .. import explaining as X
from .. import primitives as P
from ..nn.composites import _composite
from ..table import INT, TENSOR, Objects, Param, public
from . import matrix_product as MM
from .linalg import _square, inv


def _power(a: Any, n: int, product: Any, identity: Any) -> Any:
    """a ** n for n >= 0 by repeated squaring, with ``product`` the matrix product."""
    out = None
    while n:
        if n & 1:
            out = a if out is None else product(out, a)
        n >>= 1
        if n:
            a = product(a, a)
    return identity if out is None else out


def _power_symbolic(a: Objects, n: int) -> Objects:
    if n < 0:
        from ..symbolic import NotSymbolic

        raise NotSymbolic("a negative power is a power of the inverse, which sympy is not given")
    import sympy

    identity = np.broadcast_to(np.eye(a.shape[-1], dtype=int), a.shape)
    ones = np.vectorize(sympy.Integer, otypes=[object])(identity)
    return np.asarray(_power(a, n, np.matmul, ones), dtype=object)


_composite(
    "matrix_power",
    "A @ A @ ... n times, for a square A (or a batch); n = 0: the identity, n < 0: inv(A)^-n",
    (Param("A", TENSOR), Param("n", INT)),
    methods=("matrix_power",),
    symbolic=_power_symbolic,
    explain=X.jacobian(
        lambda s: f"sum over k of {s.wrt}^k @ {X.d(s.wrt)} @ {s.wrt}^(n-1-k) (n >= 0)"
    ),
    kink="smooth; n = 0 gives the identity, whose gradient is 0; a negative n needs an "
    "invertible A (torch refuses a singular one, as does inv)",
)


@public("matrix_power")
def matrix_power(a: Any, n: int) -> Tensor:
    """torch.linalg.matrix_power: the n-th power of a square matrix (or of each of a batch)."""
    t = a if isinstance(a, Tensor) else Tensor(a)
    _square("linalg.matrix_power", t)
    n = int(n)
    base = inv(t) if n < 0 else t
    # the identity, still a function of A whose gradient is 0 (selected, so an infinite
    # cotangent gives 0 too), as torch's result requires grad
    eye = Tensor(np.broadcast_to(np.eye(t.shape[-1], dtype=t.dtype), t.shape).copy())
    identity = P.where(np.zeros(t.shape, dtype=bool), t, eye)
    out: Tensor = _power(base, abs(n), MM.matmul, identity)
    return out
