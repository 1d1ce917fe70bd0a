"""torch.linalg's ``svdvals``, ``eigvalsh`` and ``pinv``, each an entry of the op table.

``svdvals`` and ``eigvalsh`` are the singular values of ``svd`` and the eigenvalues of
``eigh`` (whose rules stay finite at repeated values, as torch's); ``pinv`` is a primitive: the
pseudoinverse by the SVD (or, ``hermitian``, the eigendecomposition of the lower triangle),
singular values at or below ``max(atol, rtol * largest)`` taken as 0 as torch does, with the
derivative of the pseudoinverse at a fixed rank (torch's formula), written in engine
operations so that it differentiates again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...engine.tensor import Tensor, apply
from .. import primitives as P
from ..table import BOOL, OPT_NUMBER, TENSOR, UPLO, Array, Op, Param, public, register
from . import matrix_product as MM
from .decompositions import _explain, _matrices, _tensor, eigh, svd
from .linalg import _linalg_batch, _mT, _square

# -- svdvals, eigvalsh ------------------------------------------------------------------------

register(
    Op(
        "svdvals",
        "the singular values of a matrix (or of each of a batch), descending "
        "(torch.linalg.svdvals)",
        params=(Param("A", TENSOR),),
        backward_name="LinalgSvdBackward0",
        symbolic="singular values have no closed form beyond small matrices",
        explain=_explain(("diag(U^T @ {dA} @ V), U and V the singular vectors of {A}",)),
        nonfinite="overflow",
        kink="the gradient U diag(gS) Vh of svd's S (finite also at repeated singular values; "
        "at a zero one, the direction its singular vectors give, as torch's)",
    )
)


@public("svdvals")
def svdvals(A: Any) -> Tensor:  # noqa: N803 - torch's name
    """The singular values of ``A``, descending (torch.linalg.svdvals)."""
    a = _tensor(A)
    _matrices("linalg.svdvals", a)
    return svd(a, False, output=(1, 0))


register(
    Op(
        "eigvalsh",
        "the eigenvalues of a symmetric matrix (or of each of a batch), ascending "
        "(torch.linalg.eigvalsh; UPLO: the triangle read)",
        params=(Param("A", TENSOR), Param("UPLO", UPLO, "L")),
        backward_name="LinalgEighBackward0",
        symbolic="eigenvalues have no closed form beyond small matrices",
        explain=_explain(("diag(V^T @ {dA} @ V), V the eigenvectors of {A}",)),
        nonfinite="overflow",
        kink="only the triangle UPLO of A is read, but the gradient V diag(gL) V^T is "
        "symmetric, as torch's; finite also at repeated eigenvalues",
    )
)


@public("eigvalsh")
def eigvalsh(A: Any, UPLO: str = "L") -> Tensor:  # noqa: N803 - torch's names
    """The eigenvalues of a symmetric ``A``, ascending (torch.linalg.eigvalsh)."""
    a = _tensor(A)
    _square("linalg.eigvalsh", a)
    return eigh(a, UPLO, output=(0, 0))


# -- pinv ---------------------------------------------------------------------------------------


def _cutoff(s: Array, m: int, n: int, atol: float | None, rtol: float | None) -> Array:
    """torch's: max(atol, rtol * the largest singular value), rtol max(m, n) * eps when
    neither is given, 0 when only atol is (a batch: one cut-off per matrix, dim kept)."""
    if rtol is None:
        rtol = max(m, n) * float(np.finfo(s.dtype).eps) if atol is None or atol <= 0 else 0.0
    largest = s[..., :1] if s.shape[-1] else np.zeros((*s.shape[:-1], 1), s.dtype)
    return np.maximum(0.0 if atol is None else atol, rtol * largest)


def _pinv_forward(a: Array, atol: float | None, rtol: float | None, hermitian: bool) -> Array:
    m, n = a.shape[-2:]
    if hermitian:
        values, vectors = np.linalg.eigh(a, UPLO="L")
        size = np.abs(values)
        order = np.argsort(-size, axis=-1, kind="stable")  # the cut-off is of the largest |L|
        kept = size > _cutoff(np.take_along_axis(size, order, -1), m, n, atol, rtol)
        with np.errstate(divide="ignore"):
            scale = np.where(kept, 1.0 / np.where(kept, values, 1.0), 0.0)
        return np.asarray((vectors * scale[..., None, :]) @ np.swapaxes(vectors, -1, -2))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    kept = s > _cutoff(s, m, n, atol, rtol)
    scale = np.where(kept, 1.0 / np.where(kept, s, 1.0), 0.0)
    return np.asarray((np.swapaxes(vh, -1, -2) * scale[..., None, :]) @ np.swapaxes(u, -1, -2))


def _projections(a: Tensor, pinv: Tensor) -> tuple[Tensor, Tensor]:
    """I - A A+ (onto the complement of A's range) and I - A+ A (of its row space)."""
    m, n = a.shape[-2:]
    onto_range = P.sub(Tensor(np.eye(m, dtype=a.dtype)), MM.matmul(a, pinv))
    onto_rows = P.sub(Tensor(np.eye(n, dtype=a.dtype)), MM.matmul(pinv, a))
    return onto_range, onto_rows


def _pinv_vjp(
    g: Tensor,
    out: Tensor,
    a: Tensor,
    needs: Sequence[bool],
    atol: float | None,
    rtol: float | None,
    hermitian: bool,
) -> tuple[Tensor]:
    # d(A+) = -A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A) dA^T A+^T A+ (at a fixed rank),
    # so gA = -A+^T g A+^T + (I - A A+) g^T A+ A+^T + A+^T A+ g^T (I - A+ A).
    pinv_t, g_t = _mT(out), _mT(g)
    onto_range, onto_rows = _projections(a, out)
    first = P.neg(MM.matmul(MM.matmul(pinv_t, g), pinv_t))
    second = MM.matmul(MM.matmul(onto_range, g_t), MM.matmul(out, pinv_t))
    third = MM.matmul(MM.matmul(pinv_t, out), MM.matmul(g_t, onto_rows))
    return (P.add(P.add(first, second), third),)


def _pinv_jvp(
    tangents: Sequence[Tensor],
    out: Tensor,
    a: Tensor,
    atol: float | None,
    rtol: float | None,
    hermitian: bool,
) -> Tensor:
    t, pinv_t = tangents[0], _mT(out)
    onto_range, onto_rows = _projections(a, out)
    first = P.neg(MM.matmul(MM.matmul(out, t), out))
    second = MM.matmul(MM.matmul(out, pinv_t), MM.matmul(_mT(t), onto_range))
    third = MM.matmul(MM.matmul(onto_rows, _mT(t)), MM.matmul(pinv_t, out))
    return P.add(P.add(first, second), third)


_PINV = register(
    Op(
        "pinv",
        "the pseudoinverse (Moore-Penrose) of a matrix or of each of a batch "
        "(torch.linalg.pinv; hermitian: of the symmetric matrix the lower triangle makes)",
        forward=_pinv_forward,
        vjp=_pinv_vjp,
        jvp=_pinv_jvp,
        backward_name="LinalgPinvBackward0",
        batch=_linalg_batch,
        params=(
            Param("A", TENSOR),
            Param("atol", OPT_NUMBER, None),
            Param("rtol", OPT_NUMBER, None),
            Param("hermitian", BOOL, False),
        ),
        symbolic="the pseudoinverse's rank depends on a cut-off of the singular values, which "
        "has no formula",
        explain=_explain(
            (
                "-P @ {dA} @ P + P @ P^T @ {dA}^T @ (I - {A} @ P) + (I - P @ {A}) @ {dA}^T @ "
                "P^T @ P, P = pinv({A}) (at a fixed rank)",
            )
        ),
        nonfinite="overflow",
        kink="singular values at or below max(atol, rtol * the largest) count as 0 (rtol "
        "max(m, n) * eps when neither is given, 0 when only atol is, as torch's); the "
        "derivative is the pseudoinverse's at its rank (torch's formula), which jumps where "
        "a singular value crosses the cut-off; with hermitian=True only the lower triangle "
        "is read but the gradient is the same formula's (not symmetrized), as torch's",
    )
)


@public("pinv")
def pinv(
    A: Any,  # noqa: N803 - torch's name
    atol: float | None = None,
    rtol: float | None = None,
    hermitian: bool = False,
) -> Tensor:
    """The pseudoinverse of ``A`` (torch.linalg.pinv), of shape (..., n, m)."""
    a = _tensor(A)
    (_square if hermitian else _matrices)("linalg.pinv", a)
    return apply(
        _PINV,
        a,
        atol=None if atol is None else float(atol),
        rtol=None if rtol is None else float(rtol),
        hermitian=bool(hermitian),
    )
