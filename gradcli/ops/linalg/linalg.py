"""Linear algebra, each operation an entry of the op table: products (``trace``, ``outer``,
``inner``, ``kron``, ``cross``, ``tensordot``, ``mm``, ``mv``, ``bmm``) and ``torch.linalg``'s
``det``, ``inv``, ``solve``, ``cholesky``, ``vector_norm`` and ``matrix_norm`` (flat names in
a program: ``det(A)``).

``det``, ``inv``, ``solve`` and ``cholesky`` are primitives with torch's derivative formulas,
written in engine operations so that they differentiate again; det's gradient is the cofactor
matrix (an internal primitive, exact for singular matrices too, as torch's). The products and
norms are composites of matmul, reshape, indexing and the reductions. The batch, symbolic and
explain rules of these entries are in this module, beside them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, ShapeError
from ...engine.tensor import Tensor, apply
from .. import batching as B
from .. import explaining as X
from .. import primitives as P
from .. import symbolic as S
from ..arrays import rearranging as RA
from ..arrays.shapes import diagonal, permute, tril
from ..elementwise import elementary as EL
from ..nn.composites import _composite
from ..reductions import reductions as RD
from ..rules.dims import _axes, as_tensor_pair
from ..table import (
    BOOL,
    DIMS,
    INT,
    NORM_ORD,
    NUMBER,
    OPT_INT,
    TENSOR,
    Array,
    NumpyResult,
    Objects,
    Op,
    Param,
    call_of,
    public,
    register,
)
from . import matrix_product as MM

BatchRule = Callable[..., Array]


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _mT(x: Tensor) -> Tensor:  # noqa: N802 - torch's name
    return RA.transpose(x, -2, -1)


def _square(name: str, a: Tensor) -> None:
    if a.ndim < 2:
        raise ShapeError(f"{name}: A must have at least 2 dimensions, got shape {a.shape}")
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"{name}: A must be square matrices (or a batch of them), but they are "
            f"{a.shape[-2]} by {a.shape[-1]}"
        )


def _matrix_sum(x: Tensor) -> Tensor:
    """The sum over the last two dims, kept as dims of size 1."""
    return RD.sum(x, (-2, -1), keepdim=True)


def _as_matrix_scalar(x: Tensor) -> Tensor:
    """A batch of numbers (...) as (..., 1, 1), to scale a batch of matrices."""
    return RA.reshape(x, (*x.shape, 1, 1))


def _linalg_batch(
    forward: Callable[..., Array],
    params: dict[str, Any],
    values: list[Array],
    batched: list[bool],
    ranks: list[int],
    size: int,
) -> Array:
    """det, inv, cholesky, the cofactors: numpy's linalg acts on the last two dims."""
    return forward(B.with_batch(values[0], batched[0], size), **params)


def _no_symbolic_batch(x: Objects) -> Any:
    import sympy

    from ..symbolic import NotSymbolic

    if x.ndim != 2:
        raise NotSymbolic("a batch of matrices")
    return sympy.Matrix(x.tolist())


def _objects(matrix: Any) -> Objects:
    return np.asarray(np.array(matrix.tolist(), dtype=object), dtype=object)


# An explain rule for an operation whose Jacobian is best said as a differential (inv's)
_differential = X.jacobian


# -- the cofactor matrix and det --------------------------------------------------------------


def _cofactor_forward(a: Array) -> NumpyResult:
    """det(A) * inv(A)^T, computed for singular matrices too: exactly for 2x2, else from the
    SVD A = U diag(s) Vh as det(U) det(Vh) U diag(prod of the other s) Vh."""
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    if n == 1:
        return np.ones_like(a)
    if n == 2:
        out = np.empty_like(a)
        out[..., 0, 0], out[..., 1, 1] = a[..., 1, 1], a[..., 0, 0]
        out[..., 0, 1], out[..., 1, 0] = -a[..., 1, 0], -a[..., 0, 1]
        return out
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return np.asarray(sign[..., None, None] * ((u * (before * after)[..., None, :]) @ vh))


def _cofactor_rule(direction: Tensor, out: Tensor, a: Tensor) -> Tensor:
    """d cofactor(A) along ``direction``; the same map is its own adjoint (it is the Hessian
    of det), so it is both rules. 2x2 cofactors are linear in A;
    for larger matrices (tr(C^T T) C - C T^T C) / det(A), from C = det(A) inv(A)^T, which is
    nan at a singular matrix."""
    n = a.shape[-1]
    if n <= 1:
        return P.zeros_like(direction)
    if n == 2:
        return cofactor(direction)
    scale = _matrix_sum(P.mul(out, direction))
    middle = MM.matmul(MM.matmul(out, _mT(direction)), out)
    return P.div(P.sub(P.mul(scale, out), middle), _as_matrix_scalar(det(a)))


_COFACTOR = register(
    Op(
        "cofactor",
        "the cofactor matrix det(A) * inv(A)^T, also of singular matrices: det's gradient",
        forward=_cofactor_forward,
        vjp=lambda g, out, a, needs: (_cofactor_rule(g, out, a),),
        jvp=lambda tangents, out, a: _cofactor_rule(tangents[0], out, a),
        backward_name="LinalgDetBackwardBackward0",
        batch=_linalg_batch,
        nonfinite_backward="the second derivative of det at a singular matrix larger than 2x2",
    )
)


def cofactor(a: Tensor) -> Tensor:
    """det(A) * inv(A)^T for each matrix of ``a``, singular ones included."""
    return apply(_COFACTOR, a)


def _det_symbolic(x: Objects) -> Objects:
    return np.asarray(_no_symbolic_batch(x).det(), dtype=object)


_DET = register(
    Op(
        "det",
        "determinant of a square matrix, or of each of a batch (torch.linalg.det)",
        forward=lambda a: np.asarray(np.linalg.det(a)),
        vjp=lambda g, out, a, needs: (P.mul(_as_matrix_scalar(g), cofactor(a)),),
        jvp=lambda tangents, out, a: RD.sum(P.mul(cofactor(a), tangents[0]), (-2, -1)),
        backward_name="LinalgDetBackward0",
        batch=_linalg_batch,
        params=(Param("A", TENSOR),),
        methods=("det",),
        symbolic=_det_symbolic,
        explain=X.per_element(
            lambda s: f"its cofactor, the element of det({s.wrt}) * inv({s.wrt})^T"
        ),
        nonfinite="overflow",
        kink=(
            "the gradient is the cofactor matrix det(A) inv(A)^T, also at a singular matrix "
            "(as torch's grad with create_graph=True; torch's plain backward() gives 0 at an "
            "exactly singular matrix); forward mode gives the same derivative (torch's: 0 "
            "there); second derivatives at a singular matrix larger than 2x2 are nan"
        ),
    )
)


@public("det")
def det(a: Any) -> Tensor:
    """The determinant of a square matrix (or of each of a batch): torch.linalg.det."""
    a = _tensor(a)
    _square("linalg.det", a)
    return apply(_DET, a)


# -- inv, solve -------------------------------------------------------------------------------


def _inv_forward(a: Array) -> Array:
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise DomainError(
            "linalg.inv: the matrix is singular (its determinant is 0), so it has no inverse"
        ) from None


def _solve_forward(a: Array, b: Array, vector: bool) -> Array:
    try:
        return np.linalg.solve(a, b[..., None])[..., 0] if vector else np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise DomainError(
            "linalg.solve: A is singular (its determinant is 0), so A @ X = B has no unique "
            "solution"
        ) from None


_INV = register(
    Op(
        "inv",
        "inverse of a square matrix, or of each of a batch (torch.linalg.inv)",
        forward=_inv_forward,
        vjp=lambda g, out, a, needs: (P.neg(MM.matmul(MM.matmul(_mT(out), g), _mT(out))),),
        jvp=lambda tangents, out, a: P.neg(MM.matmul(MM.matmul(out, tangents[0]), out)),
        backward_name="LinalgInvExBackward0",
        batch=_linalg_batch,
        params=(Param("A", TENSOR),),
        symbolic=lambda x: _objects(_no_symbolic_batch(x).inv()),
        explain=_differential(lambda s: f"-{s.node} @ {X.d(s.wrt)} @ {s.node}"),
        nonfinite="an ill-conditioned matrix",
        nonfinite_backward="an ill-conditioned matrix",
    )
)


@public("inv")
def inv(a: Any) -> Tensor:
    """The inverse of a square matrix (or of each of a batch): torch.linalg.inv. A singular
    matrix is refused, as torch refuses it."""
    a = _tensor(a)
    _square("linalg.inv", a)
    return apply(_INV, a)


def _column(v: Tensor) -> Tensor:
    return RA.reshape(v, (*v.shape, 1))


def _solve_vjp(
    g: Tensor, out: Tensor, a: Tensor, b: Tensor, needs: Sequence[bool], vector: bool
) -> tuple[Tensor | None, Tensor | None]:
    # X = A^-1 B: gB = A^-T g, gA = -gB X^T, each summed down to its operand's shape.
    gb = solve_with(_mT(a), g, vector)
    ga = None
    if needs[0]:
        outer = MM.matmul(_column(gb), RA.reshape(out, (*out.shape[:-1], 1, out.shape[-1])))
        ga = P.sum_to(P.neg(outer if vector else MM.matmul(gb, _mT(out))), a.shape)
    return ga, P.sum_to(gb, b.shape) if needs[1] else None


def _solve_jvp(
    tangents: Sequence[Tensor | None], out: Tensor, a: Tensor, b: Tensor, vector: bool
) -> Tensor:
    # dX = A^-1 (dB - dA X)
    ta, tb = tangents
    terms = [] if tb is None else [tb]
    if ta is not None:
        moved = MM.matmul(ta, _column(out)) if vector else MM.matmul(ta, out)
        terms.append(P.neg(RA.reshape(moved, out.shape) if vector else moved))
    rhs = terms[0] if len(terms) == 1 else P.add(terms[0], terms[1])
    return P.expand(solve_with(a, rhs, vector), out.shape)


def _solve_batch(
    forward: Callable[..., Array],
    params: dict[str, Any],
    values: list[Array],
    batched: list[bool],
    ranks: list[int],
    size: int,
) -> Array:
    """A and B aligned as batches of matrices (B a batch of vectors when ``vector``)."""
    a, b = values
    vector = 1 if params["vector"] else 0
    target = max(ranks[0], ranks[1] + vector)
    a = B.aligned(a, batched[0], ranks[0], size, target)
    b = B.aligned(b, batched[1], ranks[1], size, target - vector)
    return forward(a, b, **params)


def _solve_symbolic(a: Objects, b: Objects) -> NumpyResult:
    import sympy

    from ..symbolic import NotSymbolic

    if a.ndim != 2 or b.ndim > 2:
        raise NotSymbolic("a batch of matrices")
    column = b.reshape(-1, 1) if b.ndim == 1 else b
    x = _objects(sympy.Matrix(a.tolist()).LUsolve(sympy.Matrix(column.tolist())))
    return x.reshape(b.shape)


_SOLVE = register(
    Op(
        "solve",
        "X with A @ X = B, for a square A (torch.linalg.solve; B a vector or matrices)",
        forward=_solve_forward,
        vjp=_solve_vjp,
        jvp=_solve_jvp,
        backward_name="LinalgSolveExBackward0",
        batch=_solve_batch,
        params=(Param("A", TENSOR), Param("B", TENSOR)),
        symbolic=_solve_symbolic,
        explain=_differential(
            lambda s: f"solve({s.names[0]}, {X.d(s.names[1])} - {X.d(s.names[0])} @ {s.node})"
        ),
        nonfinite="an ill-conditioned A",
        nonfinite_backward="an ill-conditioned A",
    )
)


def solve_with(a: Tensor, b: Tensor, vector: bool) -> Tensor:
    return apply(_SOLVE, a, b, vector=vector)


@public("solve")
def solve(a: Any, b: Any) -> Tensor:
    """X with A @ X = B (torch.linalg.solve): B is a vector (or a batch of them) when it has
    one dim, or one dim less than A with A's leading shape; else a batch of matrices."""
    a, b = as_tensor_pair(a, b)
    _square("linalg.solve", a)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    rows = b.shape[-1] if vector else (b.shape[-2] if b.ndim >= 2 else None)
    if rows != a.shape[-1]:
        raise ShapeError(
            f"linalg.solve: incompatible shapes of A {a.shape} and B {b.shape}: B needs "
            f"{a.shape[-1]} rows"
        )
    try:
        if vector:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-1])
        else:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ShapeError(
            f"linalg.solve: the batch dims of A {a.shape} and B {b.shape} do not broadcast"
        ) from None
    return apply(_SOLVE, a, b, vector=vector)


# -- cholesky ---------------------------------------------------------------------------------


def _cholesky_forward(a: Array) -> Array:
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise DomainError(
            "linalg.cholesky: the input is not positive-definite, so it has no Cholesky "
            "factor (A must be symmetric with positive eigenvalues; its lower triangle is read)"
        ) from None


def _halved_diagonal(n: int, dtype: np.dtype[Any]) -> Tensor:
    """The lower triangle's weights of Φ: 1 below the diagonal, 1/2 on it."""
    return Tensor((np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(dtype))


def _cholesky_vjp(g: Tensor, out: Tensor, a: Tensor, needs: Sequence[bool]) -> tuple[Tensor]:
    # torch's: gA = L^-T Φ L^-1 with Φ = (P + tril(P, -1)^T) / 2, P = tril(L^T gL): symmetric.
    lower = tril(MM.matmul(_mT(out), g))
    phi = P.mul(P.add(lower, _mT(tril(lower, -1))), 0.5)
    inverse = inv(out)
    return (MM.matmul(MM.matmul(_mT(inverse), phi), inverse),)


def _cholesky_jvp(tangents: Sequence[Tensor], out: Tensor, a: Tensor) -> Tensor:
    # dL = L Φ(L^-1 dA L^-T), Φ: the lower triangle with its diagonal halved.
    inverse = inv(out)
    inner = MM.matmul(MM.matmul(inverse, tangents[0]), _mT(inverse))
    return MM.matmul(out, P.mul(inner, _halved_diagonal(a.shape[-1], inner.dtype)))


def _cholesky_symbolic(x: Objects, upper: bool = False) -> Objects:
    lower = _objects(_no_symbolic_batch(x).cholesky(hermitian=False))
    return lower.T if upper else lower


_CHOLESKY = register(
    Op(
        "cholesky",
        "the lower triangular L with L @ L^T = A, A symmetric positive-definite "
        "(torch.linalg.cholesky; upper=True gives L^T)",
        forward=_cholesky_forward,
        vjp=_cholesky_vjp,
        jvp=_cholesky_jvp,
        backward_name="LinalgCholeskyExBackward0",
        batch=_linalg_batch,
        params=(Param("A", TENSOR), Param("upper", BOOL, False)),
        symbolic=_cholesky_symbolic,
        explain=_differential(
            lambda s: (
                f"L @ Φ(inv(L) @ {X.d(s.wrt)} @ inv(L)^T), L = {s.node}, Φ: the lower "
                "triangle with its diagonal halved"
            )
        ),
        nonfinite="overflow",
        kink=(
            "only the lower triangle of A is read, but the gradient is symmetrized, as torch's "
            "(it is the gradient for symmetric changes of A)"
        ),
    )
)


@public("cholesky")
def cholesky(a: Any, upper: bool = False) -> Tensor:
    """The Cholesky factor of a symmetric positive-definite matrix (torch.linalg.cholesky):
    lower triangular L with L @ L^T = A, or L^T with upper=True. Only A's lower triangle is
    read."""
    a = _tensor(a)
    _square("linalg.cholesky", a)
    lower = apply(_CHOLESKY, a)
    return _mT(lower) if upper else lower


# -- products ---------------------------------------------------------------------------------

_PRODUCT = (Param("input", TENSOR), Param("other", TENSOR))


def _matrices(name: str, a: Tensor, b: Tensor, ndims: tuple[int, int]) -> None:
    if (a.ndim, b.ndim) != ndims:
        raise ShapeError(
            f"{name}: expected operands of {ndims[0]} and {ndims[1]} dimensions, got shapes "
            f"{a.shape} and {b.shape}"
        )


def _bilinear(formula: str) -> X.ExplainRule:
    """The differential of a product of two operands, ``formula`` with {a}, {b}, {da}, {db}."""

    def text(slot: Any) -> str:
        a, b = slot.names
        da, db = (X.d(a), b) if slot.position == 0 else (a, X.d(b))
        return formula.format(a=da, b=db)

    return _differential(text)


_composite(
    "mm",
    "matrix product of two matrices",
    (Param("input", TENSOR), Param("mat2", TENSOR)),
    methods=("mm",),
    symbolic=S.matmul,
    explain=X.matmul,
)
_composite(
    "mv",
    "product of a matrix and a vector",
    (Param("input", TENSOR), Param("vec", TENSOR)),
    methods=("mv",),
    symbolic=S.matmul,
    explain=X.matmul,
)
_composite(
    "bmm",
    "batch matrix product: (b, n, m) @ (b, m, p), no broadcasting",
    (Param("input", TENSOR), Param("mat2", TENSOR)),
    methods=("bmm",),
    backward_name="BmmBackward0",
    symbolic=lambda a, b: np.asarray(np.matmul(a, b), dtype=object),
    explain=_bilinear("bmm({a}, {b})"),
)


@public("mm")
def mm(a: Any, b: Any) -> Tensor:
    """The product of two matrices (no broadcasting, no vectors)."""
    a, b = as_tensor_pair(a, b)
    _matrices("mm", a, b, (2, 2))
    return MM.matmul(a, b)


@public("mv")
def mv(a: Any, v: Any) -> Tensor:
    """The product of a matrix and a vector."""
    a, v = as_tensor_pair(a, v)
    _matrices("mv", a, v, (2, 1))
    return MM.matmul(a, v)


@public("bmm")
def bmm(a: Any, b: Any) -> Tensor:
    """The product of each pair of matrices of two batches of the same size."""
    a, b = as_tensor_pair(a, b)
    _matrices("bmm", a, b, (3, 3))
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"bmm: the batch sizes differ: shapes {a.shape} and {b.shape}")
    return MM.matmul(a, b)


_composite(
    "trace",
    "the sum of the diagonal of a matrix",
    (Param("input", TENSOR),),
    methods=("trace",),
    symbolic=lambda x: np.asarray(np.trace(x), dtype=object),
    explain=X.per_element(lambda s: f"1 on the diagonal of {s.wrt}, else 0"),
    backward_name="TraceBackward0",
)


@public("trace")
def trace(x: Any) -> Tensor:
    """The sum of the main diagonal of a matrix."""
    x = _tensor(x)
    if x.ndim != 2:
        raise ShapeError(f"trace: expected a matrix, got shape {x.shape}")
    return RD.sum(diagonal(x))


_composite(
    "outer",
    "outer product of two vectors: out[i, j] = input[i] * vec2[j]",
    (Param("input", TENSOR), Param("vec2", TENSOR)),
    aliases=("ger",),
    methods=("outer", "ger"),
    symbolic=lambda a, b: np.asarray(np.multiply.outer(a, b), dtype=object),
    explain=_bilinear("outer({a}, {b})"),
)


@public("outer")
def outer(a: Any, b: Any) -> Tensor:
    """The outer product of two vectors."""
    a, b = as_tensor_pair(a, b)
    _matrices("outer", a, b, (1, 1))
    return P.mul(RA.reshape(a, a.shape[0], 1), RA.reshape(b, 1, b.shape[0]))


_composite(
    "inner",
    "sum over the last dims: out[..., ...] = sum_k input[..., k] * other[..., k]",
    _PRODUCT,
    methods=("inner",),
    symbolic=lambda a, b: np.asarray(np.inner(a, b) if a.ndim and b.ndim else a * b, dtype=object),
    explain=_bilinear("inner({a}, {b})"),
    backward_name="ViewBackward0",
)


@public("inner")
def inner(a: Any, b: Any) -> Tensor:
    """The inner product over the last dims of both (a product when either is a number)."""
    a, b = as_tensor_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return P.mul(a, b)
    k = a.shape[-1]
    if b.shape[-1] != k:
        raise ShapeError(
            f"inner: the last dims must match, got shapes {a.shape} and {b.shape} "
            f"({k} != {b.shape[-1]})"
        )
    rows = RA.reshape(a, math.prod(a.shape[:-1]), k)
    columns = RA.transpose(RA.reshape(b, math.prod(b.shape[:-1]), k))
    return RA.reshape(MM.matmul(rows, columns), a.shape[:-1] + b.shape[:-1])


_composite(
    "tensordot",
    "sum over the last dims of a and the first dims of b (dims: how many)",
    (Param("a", TENSOR), Param("b", TENSOR), Param("dims", INT, 2)),
    symbolic=lambda a, b, dims=2: np.asarray(np.tensordot(a, b, dims), dtype=object),
    explain=_bilinear("tensordot({a}, {b})"),
    backward_name="ViewBackward0",
)


@public("tensordot")
def tensordot(a: Any, b: Any, dims: int = 2) -> Tensor:
    """Contract the last ``dims`` dims of ``a`` with the first ``dims`` of ``b``."""
    a, b = as_tensor_pair(a, b)
    dims = int(dims)
    if dims < 0:
        raise DomainError(f"tensordot: dims must be a non-negative whole number, got {dims}")
    if dims > min(a.ndim, b.ndim):
        raise ShapeError(
            f"tensordot: cannot contract {dims} dims of shapes {a.shape} and {b.shape}"
        )
    kept_a, summed = a.shape[: a.ndim - dims], a.shape[a.ndim - dims :]
    if summed != b.shape[:dims]:
        raise ShapeError(
            f"tensordot: the contracted dims differ: {summed} of {a.shape} and "
            f"{b.shape[:dims]} of {b.shape}"
        )
    k = math.prod(summed)
    left = RA.reshape(a, math.prod(kept_a), k)
    right = RA.reshape(b, k, math.prod(b.shape[dims:]))
    return RA.reshape(MM.matmul(left, right), kept_a + b.shape[dims:])


_composite(
    "kron",
    "Kronecker product: every element of input times the whole of other, in blocks",
    _PRODUCT,
    methods=("kron",),
    symbolic=lambda a, b: np.asarray(np.kron(a, b), dtype=object),
    explain=_bilinear("kron({a}, {b})"),
    backward_name="UnsafeViewBackward0",
)


@public("kron")
def kron(a: Any, b: Any) -> Tensor:
    """The Kronecker product: block (i, j, ...) is a[i, j, ...] * b."""
    a, b = as_tensor_pair(a, b)
    ndim = max(a.ndim, b.ndim)
    shape_a = (1,) * (ndim - a.ndim) + a.shape
    shape_b = (1,) * (ndim - b.ndim) + b.shape
    spread_a = [n for m in shape_a for n in (m, 1)]
    spread_b = [n for m in shape_b for n in (1, m)]
    blocks = P.mul(RA.reshape(a, tuple(spread_a)), RA.reshape(b, tuple(spread_b)))
    return RA.reshape(blocks, tuple(m * n for m, n in zip(shape_a, shape_b)))


def _cross_dim(shape: tuple[int, ...], dim: int | None) -> int:
    if dim is None:
        found = [d for d, n in enumerate(shape) if n == 3]
        if not found:
            raise ShapeError(f"cross: no dimension of size 3 in input, shape {shape}")
        return found[0]
    d = _axes(int(dim), len(shape))[0]
    if shape[d] != 3:
        raise ShapeError(f"cross: dimension {dim} does not have size 3, shape {shape}")
    return d


def _cross_symbolic(a: Objects, b: Objects, dim: int | None = None) -> Objects:
    a, b = np.broadcast_arrays(a, b)
    return np.asarray(np.cross(a, b, axis=_cross_dim(a.shape, dim)), dtype=object)


_composite(
    "cross",
    "cross product of 3-vectors along dim (None: the first dim of size 3)",
    (Param("input", TENSOR), Param("other", TENSOR), Param("dim", OPT_INT, None)),
    methods=("cross",),
    symbolic=_cross_symbolic,
    explain=_bilinear("cross({a}, {b})"),
    backward_name="LinalgCrossBackward0",
)


@public("cross")
def cross(a: Any, b: Any, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcasting); without ``dim``, the first
    dim of size 3 (torch's deprecated default)."""
    a, b = as_tensor_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"cross: expected tensors of vectors, got shapes {a.shape} and {b.shape}")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ShapeError(f"cross: shapes {a.shape} and {b.shape} do not broadcast") from None
    d = _cross_dim(tuple(shape), dim)
    lead = (slice(None),) * d
    a, b = P.expand(a, tuple(shape)), P.expand(b, tuple(shape))
    ai = [RA.getitem(a, lead + (i,)) for i in range(3)]
    bi = [RA.getitem(b, lead + (i,)) for i in range(3)]
    parts = [
        P.sub(P.mul(ai[(i + 1) % 3], bi[(i + 2) % 3]), P.mul(ai[(i + 2) % 3], bi[(i + 1) % 3]))
        for i in range(3)
    ]
    return RA.stack(parts, d)


# -- norms ------------------------------------------------------------------------------------


def _vector_norm_explain(slot: Any, vary: Any) -> X.Explained:
    from dataclasses import replace

    return X.per_element(X.norm)(
        replace(slot, params={**slot.params, "p": slot.params["ord"]}), vary
    )


_composite(
    "vector_norm",
    "the ord-norm of the elements, or along dim (torch.linalg.vector_norm; 2 by default)",
    (
        Param("x", TENSOR),
        Param("ord", NUMBER, 2),
        Param("dim", DIMS, None),
        Param("keepdim", BOOL, False),
    ),
    symbolic=lambda x, ord=2, dim=None, keepdim=False: S.norm(x, ord, dim, keepdim),  # noqa: A002
    explain=_vector_norm_explain,
    kink=(
        "the gradient at a zero norm is 0; at a zero element 0 (1-norm: sign); inf and -inf: "
        "ties share the gradient evenly; ord 0 counts the non-zero elements, gradient 0"
    ),
    backward_name="LinalgVectorNormBackward0",
)


@public("vector_norm")
def vector_norm(
    x: Any,
    ord: float = 2,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,  # noqa: A002
) -> Tensor:
    """The ``ord``-norm of all elements of ``x`` or along ``dim`` (torch.linalg.vector_norm):
    (sum |x|^ord)^(1/ord); inf and -inf the largest and smallest |x|, 0 the count of
    non-zero elements."""
    if ord == 0:  # as torch: the count requires grad when x does, and its gradient is 0
        x = _tensor(x)
        counted = P.where(P.mask(_nonzero, x), 1.0, P.mul(x, 0.0))
        return RD.sum(counted, dim, keepdim)
    return RD.norm(x, ord, dim, keepdim)


def _nonzero(x: Array) -> Array:
    return np.asarray(x != 0)


_SVD_ORDS = ("nuc", 2, -2)


def _matrix_norm_symbolic(x: Objects, ord: str | float = "fro", keepdim: bool = False) -> Objects:  # noqa: A002
    from ..symbolic import NotSymbolic

    if ord != "fro":
        raise NotSymbolic(f"the matrix {ord}-norm has no symbolic form here (only 'fro')")
    return S.norm(x, 2, (x.ndim - 2, x.ndim - 1), keepdim)


def _matrix_norm_explain(slot: Any, vary: Any) -> X.Explained:
    ord_ = slot.params["ord"]  # noqa: A001
    w, node = slot.wrt, slot.node
    if ord_ == "fro":
        formula = f"{w}[i, j]/{node} (0 where the norm is 0)"
    elif ord_ == "nuc":
        formula = f"(U @ Vh)[i, j], U, S, Vh = svd({w}, full_matrices=False)"
    elif abs(ord_) == 2:
        extreme = "largest" if ord_ > 0 else "smallest"
        formula = f"u[i] * v[j], u and v the singular vectors of {w}'s {extreme} singular value"
    else:
        extreme = "largest" if ord_ > 0 else "smallest"
        line = "column" if abs(ord_) == 1 else "row"
        formula = (
            f"sign({w}[i, j])/k where the {line} of {w}[i, j] has the {extreme} sum of |{w}| "
            "(k of them), else 0"
        )
    return X.per_element(lambda s: formula)(slot, vary)


_composite(
    "matrix_norm",
    "a matrix norm of the last two dims (torch.linalg.matrix_norm): ord 'fro' (default), "
    "'nuc' (sum of the singular values), 2, -2 (largest, smallest), 1, -1 (column sums), inf, "
    "-inf (row sums)",
    (Param("A", TENSOR), Param("ord", NORM_ORD, "fro"), Param("keepdim", BOOL, False)),
    symbolic=_matrix_norm_symbolic,
    explain=_matrix_norm_explain,
    kink=(
        "'fro': the gradient at a zero matrix is 0; 1, -1, inf, -inf: sums of |A| (gradient "
        "sign(A), 0 at 0), ties between columns (rows) share the gradient evenly; 'nuc', 2, "
        "-2: of the singular values (gradient U diag(g) Vh, as torch's svdvals), ties of the "
        "largest (smallest) share the gradient evenly"
    ),
)


@public("matrix_norm")
def matrix_norm(
    a: Any,
    ord: str | float = "fro",  # noqa: A002
    keepdim: bool = False,
    dim: tuple[int, int] = (-2, -1),
) -> Tensor:
    """A matrix norm over the dims ``dim`` (the last two): 'fro' the square root of the sum of
    squares, 1 and -1 the largest and smallest column sum of |A|, inf and -inf those of the
    row sums, 'nuc' the sum of the singular values, 2 and -2 the largest and smallest."""
    a = _tensor(a)
    if a.ndim < 2:
        raise ShapeError(f"linalg.matrix_norm: A must have at least 2 dimensions, got {a.shape}")
    rows, columns = (_axes(int(d), a.ndim)[0] for d in dim)
    if rows == columns:
        raise ShapeError(f"linalg.matrix_norm: dim must name two different dims, got {dim}")
    if ord == "fro":
        return RD.norm(a, 2, (rows, columns), keepdim)
    if ord in _SVD_ORDS:
        return _singular_norm(a, ord, keepdim, rows, columns)
    if not isinstance(ord, (int, float)) or abs(ord) not in (1, math.inf):
        raise DomainError(
            f"linalg.matrix_norm: ord must be 'fro', 'nuc', 2, -2, 1, -1, inf or -inf, got {ord!r}"
        )
    summed, across = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = RD.sum(EL.abs(a), summed, keepdim=True)
    extreme = RD.amax if ord > 0 else RD.amin
    norm = extreme(sums, across, keepdim=True)
    return (
        norm
        if keepdim
        else RA.reshape(norm, [n for i, n in enumerate(a.shape) if i not in (rows, columns)])
    )


def _singular_norm(a: Tensor, ord: str | float, keepdim: bool, rows: int, columns: int) -> Tensor:  # noqa: A002
    """'nuc', 2 or -2: the sum, the largest or the smallest singular value of the matrices
    over the dims ``rows`` and ``columns`` (torch's, from linalg.svdvals)."""
    order = [d for d in range(a.ndim) if d not in (rows, columns)] + [rows, columns]
    values = call_of("svd")(permute(a, *order), False, output=(1, 0))
    norm = RD.sum(values, -1) if ord == "nuc" else (RD.amax if ord == 2 else RD.amin)(values, -1)
    if not keepdim:
        return norm
    return RA.reshape(norm, [1 if i in (rows, columns) else n for i, n in enumerate(a.shape)])
