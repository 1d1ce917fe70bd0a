"""Matrix decompositions with several results, each an entry of the op table:
``torch.linalg``'s ``slogdet`` (sign, logabsdet), ``eigh`` (eigenvalues, eigenvectors),
``qr`` (Q, R) and ``svd`` (U, S, Vh); flat names in a program: ``L, V = eigh(A)``.

Each entry is one primitive whose ``output`` option says which result it computes (numpy's
linalg, on the last two dims), so every result is an ordinary tensor with its own reverse and
forward rule: torch's formulas, split by result (a decomposition's vjp is the sum of its
results' vjps, each linear in its own cotangent). The rules are written in engine operations
on the results themselves (recomputed from A where a rule needs another result), so they
differentiate again. Where torch's formulas divide by differences of eigenvalues (singular
values), repeated ones give inf or nan, as in torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, GradError, ShapeError
from ...engine.tensor import Tensor, apply
from .. import explaining as X
from .. import primitives as P
from ..arrays import rearranging as RA
from ..arrays.shapes import diagonal, tril
from ..reductions import reductions as RD
from ..table import (
    BOOL,
    OUTPUT,
    QR_MODE,
    QR_MODES,
    TENSOR,
    UPLO,
    UPLOS,
    Array,
    Objects,
    Op,
    Param,
    public,
    register,
)
from . import matrix_product as MM
from .linalg import _as_matrix_scalar, _differential, _linalg_batch, _mT, _square, cofactor, det
from .linalg import inv as _inv

Output = tuple[int, ...]
_FIRST: Output = (0, 0)
_PICK = Param("output", OUTPUT, _FIRST)


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x, dtype=np.float64))


def _which(output: Sequence[int], count: int, name: str) -> int:
    from ..reductions.selection import _which as which

    return which(output, count, name)


def _matrices(name: str, a: Tensor) -> None:
    if a.ndim < 2:
        raise ShapeError(f"{name}: A must have at least 2 dimensions, got shape {a.shape}")


def _identity(n: int, like: Tensor) -> Tensor:
    return Tensor(np.eye(n, dtype=like.dtype))


def _columns_scaled(x: Tensor, s: Tensor) -> Tensor:
    """x @ diag(s): column j of x times s[..., j]."""
    return P.mul(x, RA.reshape(s, (*s.shape[:-1], 1, s.shape[-1])))


def _rows_scaled(x: Tensor, s: Tensor) -> Tensor:
    """diag(s) @ x: row i of x times s[..., i]."""
    return P.mul(x, RA.reshape(s, (*s.shape, 1)))


def _gaps(values: Tensor, square: bool = False) -> Tensor:
    """E[..., i, j] = v_j - v_i (of their squares, ``square``) off the diagonal, 1 on it: the
    denominators of torch's eigh and svd rules (0 where values repeat)."""
    v = P.mul(values, values) if square else values
    n = values.shape[-1]
    row = RA.reshape(v, (*v.shape[:-1], 1, n))
    column = RA.reshape(v, (*v.shape, 1))
    return P.add(P.sub(row, column), _identity(n, values))


def _off_diagonal(x: Tensor) -> Tensor:
    n = x.shape[-1]
    return P.mul(x, Tensor((1 - np.eye(n)).astype(x.dtype)))


def _explain(formulas: Sequence[str]) -> Callable[[Any, Any], Any]:
    """A differential per result (``{A}``: the operand, ``{dA}``: its differential)."""

    def formula(slot: Any) -> str:
        k = slot.params.get("output", _FIRST)[0]
        text: str = formulas[k].format(A=slot.wrt, dA=X.d(slot.wrt))
        return text

    return _differential(formula)


# -- slogdet ----------------------------------------------------------------------------------


def _slogdet_forward(a: Array, output: int) -> Array:
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(logabsdet if output else sign)


def _inverse_transpose(a: Tensor) -> Tensor:
    """inv(A)^T as cofactor(A) / det(A): inf or nan at a singular matrix (torch's gradient of
    logabsdet is not finite there either), where inv would refuse."""
    return P.div(cofactor(a), _as_matrix_scalar(det(a)))


def _slogdet_vjp(
    g: Tensor, out: Tensor, a: Tensor, needs: Sequence[bool], output: int
) -> tuple[Tensor | None]:
    if not output:  # the sign: no gradient (torch's is None for real matrices)
        return (None,)
    return (P.mul(_as_matrix_scalar(g), _inverse_transpose(a)),)


def _slogdet_jvp(tangents: Sequence[Tensor], out: Tensor, a: Tensor, output: int) -> Tensor:
    if not output:
        return P.zeros_like(out)
    return RD.sum(P.mul(_inverse_transpose(a), tangents[0]), (-2, -1))


def _slogdet_symbolic(x: Objects, output: Output = _FIRST) -> Objects:
    import sympy

    from .linalg import _no_symbolic_batch

    d = _no_symbolic_batch(x).det()
    return np.asarray(sympy.log(sympy.Abs(d)) if output[0] else sympy.sign(d), dtype=object)


_SLOGDET = register(
    Op(
        "slogdet",
        "(sign, logabsdet): the sign of det(A) and log|det(A)| (torch.linalg.slogdet)",
        forward=_slogdet_forward,
        vjp=_slogdet_vjp,
        jvp=_slogdet_jvp,
        backward_name="LinalgSlogdetBackward0",
        batch=_linalg_batch,
        params=(Param("A", TENSOR), _PICK),
        symbolic=_slogdet_symbolic,
        explain=_explain(("0 (the sign has no gradient)", "sum(inv({A})^T * {dA})")),
        nonfinite="a singular matrix: logabsdet is -inf (sign 0)",
        nonfinite_backward="a singular matrix: inv(A)^T does not exist",
        kink=(
            "the sign requires grad but carries no gradient (torch: None); logabsdet's gradient "
            "is inv(A)^T, not finite at a singular matrix (torch's: inf or nan too, as its LU "
            "gives them; gradcli's: cofactor(A) / det(A))"
        ),
        extra={"outputs": ("sign", "logabsdet"), "return_type": "linalg_slogdet"},
    )
)


@public("slogdet")
def slogdet(A: Any, output: Output = _FIRST) -> Tensor:  # noqa: N803 - torch's name
    """The sign of det(A) (output (0, ...)) or log|det(A)| (output (1, ...)), for a square
    matrix or each of a batch (torch.linalg.slogdet)."""
    a = _tensor(A)
    _square("linalg.slogdet", a)
    return apply(_SLOGDET, a, output=_which(output, 2, "slogdet"))


# -- eigh -------------------------------------------------------------------------------------


def _eigh_forward(a: Array, UPLO: str, output: int) -> Array:  # noqa: N803 - torch's name
    values, vectors = np.linalg.eigh(a, UPLO="U" if UPLO == "U" else "L")  # upper-cased
    return np.asarray(vectors if output else values)


def _eigh(a: Tensor, UPLO: str, output: int) -> Tensor:  # noqa: N803
    return apply(_EIGH, a, UPLO=UPLO, output=output)


def _eigh_vjp(
    g: Tensor,
    out: Tensor,
    a: Tensor,
    needs: Sequence[bool],
    UPLO: str,  # noqa: N803
    output: int,
) -> tuple[Tensor]:
    # torch's: gA = V (diag(gL) + skew(V^T gV) / E) V^T, skew(X) = (X - X^T) / 2, E_ij =
    # L_j - L_i: symmetric, whichever triangle was read.
    if not output:
        vectors = _eigh(a, UPLO, 1)
        return (MM.matmul(_columns_scaled(vectors, g), _mT(vectors)),)
    vectors, values = out, _eigh(a, UPLO, 0)
    projected = MM.matmul(_mT(vectors), g)
    skew = P.mul(P.sub(projected, _mT(projected)), 0.5)
    middle = P.div(skew, _gaps(values))
    return (MM.matmul(MM.matmul(vectors, middle), _mT(vectors)),)


def _eigh_jvp(
    tangents: Sequence[Tensor],
    out: Tensor,
    a: Tensor,
    UPLO: str,  # noqa: N803
    output: int,
) -> Tensor:
    # dL = diag(V^T dA V); dV = V (F * (V^T dA V)), F_ij = 1 / (L_j - L_i), 0 on the diagonal.
    vectors = out if output else _eigh(a, UPLO, 1)
    inner = MM.matmul(MM.matmul(_mT(vectors), tangents[0]), vectors)
    if not output:
        return diagonal(inner, 0, -2, -1)
    values = _eigh(a, UPLO, 0)
    return MM.matmul(vectors, _off_diagonal(P.div(inner, _gaps(values))))


_EIGH = register(
    Op(
        "eigh",
        "(eigenvalues, eigenvectors) of a symmetric matrix, eigenvalues ascending "
        "(torch.linalg.eigh; UPLO: the triangle read)",
        forward=_eigh_forward,
        vjp=_eigh_vjp,
        jvp=_eigh_jvp,
        backward_name="LinalgEighBackward0",
        batch=_linalg_batch,
        params=(Param("A", TENSOR), Param("UPLO", UPLO, "L"), _PICK),
        symbolic="eigenvalues and eigenvectors have no closed form beyond small matrices",
        explain=_explain(
            (
                "diag(V^T @ {dA} @ V), V the eigenvectors of {A}",
                "V @ (F * (V^T @ {dA} @ V)), V and L the eigenvectors and eigenvalues of {A}, "
                "F[i, j] = 1/(L[j] - L[i]) off the diagonal, 0 on it",
            )
        ),
        nonfinite="overflow",
        nonfinite_backward="repeated eigenvalues: the eigenvectors' derivative divides by "
        "their differences",
        kink=(
            "only the triangle UPLO of A is read, but the gradient is symmetric, as torch's; "
            "eigenvectors are defined up to sign (as LAPACK gives them, torch's too); at "
            "repeated eigenvalues the eigenvectors' gradient is inf or nan (torch's: the same, "
            "it divides by L[j] - L[i]), the eigenvalues' stays finite"
        ),
        extra={"outputs": ("eigenvalues", "eigenvectors"), "return_type": "linalg_eigh"},
    )
)


@public("eigh")
def eigh(A: Any, UPLO: str = "L", output: Output = _FIRST) -> Tensor:  # noqa: N803
    """The eigenvalues in ascending order (output (0, ...)) or the eigenvectors, as columns
    (output (1, ...)), of a symmetric matrix or of each of a batch (torch.linalg.eigh)."""
    a = _tensor(A)
    _square("linalg.eigh", a)
    if UPLO not in UPLOS:
        raise DomainError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _eigh(a, UPLO.upper(), _which(output, 2, "eigh"))


# -- qr ---------------------------------------------------------------------------------------


def _qr_forward(a: Array, mode: str, output: int) -> Array:
    if mode == "r":
        return np.asarray(np.linalg.qr(a, mode="r")) if output else np.zeros((0,), a.dtype)
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    return np.asarray(r if output else q)


def _qr_refusal(a: Tensor, mode: str) -> None:
    if mode == "r":
        raise GradError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
            "through linalg.qr."
        )
    if mode == "complete" and a.shape[-2] > a.shape[-1]:
        raise GradError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )


def _copyltu(m: Tensor) -> Tensor:
    """The symmetric matrix whose lower triangle is m's."""
    return P.add(tril(m), _mT(tril(m, -1)))


def _qr_square_vjp(g_q: Tensor | None, g_r: Tensor | None, q: Tensor, r: Tensor) -> Tensor:
    """The gradient of A = Q R (R square, A at least as tall as wide): torch's
    (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q, either cotangent missing."""
    terms = []
    if g_r is not None:
        terms.append(MM.matmul(r, _mT(g_r)))
    if g_q is not None:
        terms.append(P.neg(MM.matmul(_mT(g_q), q)))
    m = terms[0] if len(terms) == 1 else P.add(terms[0], terms[1])
    left = MM.matmul(q, _copyltu(m))
    if g_q is not None:
        left = P.add(g_q, left)
    return MM.matmul(left, _mT(_inv(r)))


def _split_columns(x: Tensor, k: int) -> tuple[Tensor, Tensor]:
    lead = (Ellipsis, slice(None))
    return RA.getitem(x, (*lead, slice(0, k))), RA.getitem(x, (*lead, slice(k, None)))


def _qr_vjp(
    g: Tensor, out: Tensor, a: Tensor, needs: Sequence[bool], mode: str, output: int
) -> tuple[Tensor]:
    _qr_refusal(a, mode)
    m, n = a.shape[-2:]
    k = min(m, n)
    q = out if not output else apply(_QR, a, mode=mode, output=0)
    r = out if output else apply(_QR, a, mode=mode, output=1)
    r_square, _ = _split_columns(r, k)
    if m >= n:
        return (_qr_square_vjp(None if output else g, g if output else None, q, r_square),)
    # wide A = [X Y]: Q, R1 = qr(X), R2 = Q^T Y
    x_part, y_part = _split_columns(a, k)
    if not output:
        g_x = _qr_square_vjp(g, None, q, r_square)
        return (RA.cat([g_x, P.zeros_like(y_part)], -1),)
    g_r1, g_r2 = _split_columns(g, k)
    g_x = _qr_square_vjp(MM.matmul(y_part, _mT(g_r2)), g_r1, q, r_square)
    return (RA.cat([g_x, MM.matmul(q, g_r2)], -1),)


def _qr_square_jvp(t: Tensor, q: Tensor, r: Tensor) -> tuple[Tensor, Tensor]:
    """(dQ, dR) of A = Q R (R square) along dA = t: X = Q^T dA R^-1, dR = (X - W) R with W
    the skew matrix of X's strict lower triangle, dQ = (dA - Q dR) R^-1."""
    inverse = _inv(r)
    x = MM.matmul(MM.matmul(_mT(q), t), inverse)
    lower = tril(x, -1)
    d_r = MM.matmul(P.add(P.sub(x, lower), _mT(lower)), r)
    d_q = MM.matmul(P.sub(t, MM.matmul(q, d_r)), inverse)
    return d_q, d_r


def _qr_jvp(tangents: Sequence[Tensor], out: Tensor, a: Tensor, mode: str, output: int) -> Tensor:
    _qr_refusal(a, mode)
    m, n = a.shape[-2:]
    k = min(m, n)
    q = out if not output else apply(_QR, a, mode=mode, output=0)
    r = out if output else apply(_QR, a, mode=mode, output=1)
    r_square, _ = _split_columns(r, k)
    t = tangents[0]
    if m >= n:
        return _qr_square_jvp(t, q, r_square)[output]
    t_x, t_y = _split_columns(t, k)
    d_q, d_r1 = _qr_square_jvp(t_x, q, r_square)
    if not output:
        return d_q
    _, y_part = _split_columns(a, k)
    d_r2 = P.add(MM.matmul(_mT(d_q), y_part), MM.matmul(_mT(q), t_y))
    return RA.cat([d_r1, d_r2], -1)


_QR = register(
    Op(
        "qr",
        "(Q, R): A = Q R, Q with orthonormal columns, R upper triangular (torch.linalg.qr; "
        "mode 'reduced', 'complete' or 'r')",
        forward=_qr_forward,
        vjp=_qr_vjp,
        jvp=_qr_jvp,
        backward_name="LinalgQrBackward0",
        batch=_linalg_batch,
        params=(Param("A", TENSOR), Param("mode", QR_MODE, "reduced"), _PICK),
        symbolic="the QR decomposition is computed by Householder reflections, with no formula "
        "here",
        explain=_explain(
            (
                "({dA} - Q @ dR) @ inv(R), Q, R = qr({A}), dR = (X - W) @ R, X = Q^T @ {dA} @ "
                "inv(R), W: X's strict lower triangle minus its transpose",
                "(X - W) @ R, Q, R = qr({A}), X = Q^T @ {dA} @ inv(R), W: X's strict lower "
                "triangle minus its transpose",
            )
        ),
        nonfinite="overflow",
        nonfinite_backward="A whose first min(m, n) columns are linearly dependent (R singular)",
        kink=(
            "Q and R as LAPACK's Householder QR gives them (R's diagonal may be negative, as "
            "torch's); the gradient needs R invertible; mode='r' gives an empty Q and no "
            "gradient, mode='complete' of a tall A no gradient (torch's errors)"
        ),
        extra={"outputs": ("Q", "R"), "return_type": "linalg_qr"},
    )
)


@public("qr")
def qr(A: Any, mode: str = "reduced", output: Output = _FIRST) -> Tensor:  # noqa: N803
    """Q (output (0, ...)) or R (output (1, ...)) of the QR decomposition of a matrix or of
    each of a batch (torch.linalg.qr)."""
    a = _tensor(A)
    _matrices("linalg.qr", a)
    if mode not in QR_MODES:
        raise DomainError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    return apply(_QR, a, mode=mode, output=_which(output, 2, "qr"))


# -- svd --------------------------------------------------------------------------------------


def _svd_forward(a: Array, full_matrices: bool, output: int) -> Array:
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return np.asarray((u, s, vh)[output])


def _svd_reduced(a: Tensor, full_matrices: bool) -> tuple[Tensor, Tensor, Tensor]:
    """U, S, Vh with U's first k columns and Vh's first k rows (k = min(m, n)): torch
    differentiates full_matrices=True so, the other singular vectors dropped."""
    u, s, vh = (apply(_SVD, a, full_matrices=full_matrices, output=k) for k in range(3))
    if full_matrices:
        k = s.shape[-1]
        u = _split_columns(u, k)[0]
        vh = _mT(_split_columns(_mT(vh), k)[0])
    return u, s, vh


def _svd_vjp(
    g: Tensor, out: Tensor, a: Tensor, needs: Sequence[bool], full_matrices: bool, output: int
) -> tuple[Tensor]:
    # torch's: gA = U [(skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS)] Vh
    # + (I - U U^T) gU S^-1 Vh + U S^-1 gVh (I - V Vh), skew(X) = X - X^T, E_ij = S_j^2 - S_i^2.
    u, s, vh = _svd_reduced(a, full_matrices)
    k = s.shape[-1]
    if output == 1:
        return (MM.matmul(_columns_scaled(u, g), vh),)
    if output == 0:
        g_u = _split_columns(g, k)[0] if full_matrices else g
        projected = MM.matmul(_mT(u), g_u)
        middle = _columns_scaled(P.div(P.sub(projected, _mT(projected)), _gaps(s, True)), s)
        rest = P.sub(g_u, MM.matmul(u, projected))
        left = P.add(MM.matmul(u, middle), _columns_scaled(rest, P.reciprocal(s)))
        return (MM.matmul(left, vh),)
    g_vh = _mT(_split_columns(_mT(g), k)[0]) if full_matrices else g
    projected = MM.matmul(vh, _mT(g_vh))  # V^T gV
    middle = _rows_scaled(P.div(P.sub(projected, _mT(projected)), _gaps(s, True)), s)
    rest = P.sub(g_vh, MM.matmul(_mT(projected), vh))  # gVh (I - V Vh)
    right = P.add(MM.matmul(middle, vh), _rows_scaled(rest, P.reciprocal(s)))
    return (MM.matmul(u, right),)


def _svd_jvp(
    tangents: Sequence[Tensor], out: Tensor, a: Tensor, full_matrices: bool, output: int
) -> Tensor:
    # dP = U^T dA V: dS = diag(dP); dU = U (F * (dP S + S dP^T)) + (I - U U^T) dA V S^-1;
    # dV = V (F * (S dP + dP^T S)) + (I - V V^T) dA^T U S^-1, F_ij = 1 / (S_j^2 - S_i^2), 0
    # on the diagonal.
    u, s, vh = _svd_reduced(a, full_matrices)
    t = tangents[0]
    v = _mT(vh)
    d_p = MM.matmul(MM.matmul(_mT(u), t), v)
    if output == 1:
        return diagonal(d_p, 0, -2, -1)
    gaps = _gaps(s, True)
    if output == 0:
        mixed = P.add(_columns_scaled(d_p, s), _rows_scaled(_mT(d_p), s))
        moved = MM.matmul(t, v)
        rest = P.sub(moved, MM.matmul(u, MM.matmul(_mT(u), moved)))
        d_u = P.add(
            MM.matmul(u, _off_diagonal(P.div(mixed, gaps))),
            _columns_scaled(rest, P.reciprocal(s)),
        )
        return _padded(d_u, out.shape[-1]) if full_matrices else d_u
    mixed = P.add(_rows_scaled(d_p, s), _columns_scaled(_mT(d_p), s))
    moved = MM.matmul(_mT(t), u)
    rest = P.sub(moved, MM.matmul(v, MM.matmul(vh, moved)))
    d_v = P.add(
        MM.matmul(v, _off_diagonal(P.div(mixed, gaps))), _columns_scaled(rest, P.reciprocal(s))
    )
    return _mT(_padded(d_v, out.shape[-2]) if full_matrices else d_v)


def _padded(x: Tensor, columns: int) -> Tensor:
    """x with zero columns added up to ``columns``: torch's tangent of the singular vectors
    that full_matrices=True adds (they are not differentiated)."""
    extra = columns - x.shape[-1]
    if not extra:
        return x
    return RA.cat([x, Tensor(np.zeros((*x.shape[:-1], extra), dtype=x.dtype))], -1)


_SVD = register(
    Op(
        "svd",
        "(U, S, Vh): A = U diag(S) Vh, singular values descending (torch.linalg.svd)",
        forward=_svd_forward,
        vjp=_svd_vjp,
        jvp=_svd_jvp,
        backward_name="LinalgSvdBackward0",
        batch=_linalg_batch,
        params=(Param("A", TENSOR), Param("full_matrices", BOOL, True), _PICK),
        symbolic="singular values and vectors have no closed form beyond small matrices",
        explain=_explain(
            (
                "U @ (F * (dP @ S + S @ dP^T)) + (I - U @ U^T) @ {dA} @ V @ inv(S), dP = U^T @ "
                "{dA} @ V, F[i, j] = 1/(S[j]^2 - S[i]^2) off the diagonal, 0 on it",
                "diag(U^T @ {dA} @ V)",
                "(V @ (F * (S @ dP + dP^T @ S)) + (I - V @ V^T) @ {dA}^T @ U @ inv(S))^T, dP = "
                "U^T @ {dA} @ V, F[i, j] = 1/(S[j]^2 - S[i]^2) off the diagonal, 0 on it",
            )
        ),
        nonfinite="overflow",
        nonfinite_backward="repeated singular values (the singular vectors' derivative divides "
        "by the differences of their squares), or a zero one",
        kink=(
            "singular vectors are defined up to sign (as numpy's LAPACK gives them; torch's "
            "agree for square and tall matrices, its LAPACK may flip some of a wide one's); with "
            "full_matrices=True the gradient of U and Vh is that of their first min(m, n) "
            "columns and rows (torch's: the others get none); at repeated singular values the "
            "singular vectors' gradient is inf or nan (torch's: the same), S's stays finite"
        ),
        extra={
            "outputs": ("U", "S", "Vh"),
            "return_type": "linalg_svd",
            # torch.svd(A, some=True) gives V, not Vh, and the reduced matrices: refused
            "linalg_only": (
                "gives (U, S, V) with V = Vh^T, which gradcli does not have",
                "write torch.linalg.svd(A, full_matrices=False) and take Vh.mT for V",
            ),
        },
    )
)


@public("svd")
def svd(A: Any, full_matrices: bool = True, output: Output = _FIRST) -> Tensor:  # noqa: N803
    """U (output (0, ...)), S (1) or Vh (2) of the singular value decomposition of a matrix or
    of each of a batch (torch.linalg.svd)."""
    a = _tensor(A)
    _matrices("linalg.svd", a)
    return apply(_SVD, a, full_matrices=bool(full_matrices), output=_which(output, 3, "svd"))
