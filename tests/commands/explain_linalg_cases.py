"""explain's cases (test_explain's CASES) of the linear algebra and shape operations: a
program's right-hand side, its inputs, and the same in torch."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

M = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]  # 2 x 3
N = [[1.0, 0.3, -0.5], [0.2, -1.5, 0.8]]  # 2 x 3
K = [[1.0, 2.0], [-1.0, 0.5], [0.3, -2.0]]  # 3 x 2
S = [[2.0, 1.0], [0.5, 3.0]]  # invertible
Q = [[4.0, 1.0], [1.0, 3.0]]  # symmetric positive-definite
X = [0.5, -1.2, 2.0, 0.3]
V = [0.4, -0.6, 1.1]
U = [1.2, 0.7, -0.3]
B1 = [[[1.0, 0.5], [-0.5, 2.0]], [[0.3, -1.0], [1.5, 0.2]]]
B2 = [[[0.2, 1.0, -1.0], [0.5, 0.3, 2.0]], [[1.0, -0.4, 0.6], [0.1, 0.9, -0.2]]]
L = torch.linalg


def _case(text: str, inputs: dict[str, Any], function: Any) -> tuple[str, dict[str, Any], Any]:
    return text, inputs, lambda t: function(*t.values())


CASES = {
    "triu": _case("triu(m, 1)", {"m": M}, lambda m: torch.triu(m, 1)),
    "tril": _case("tril(m)", {"m": M}, torch.tril),
    "diagonal": _case("diagonal(m, 1)", {"m": M}, lambda m: torch.diagonal(m, 1)),
    "diag_embed": _case("diag_embed(v, 1)", {"v": V}, lambda v: torch.diag_embed(v, 1)),
    "diag": _case("diag(v)", {"v": V}, torch.diag),
    "movedim": _case("movedim(m, 0, 1)", {"m": M}, lambda m: torch.movedim(m, 0, 1)),
    "permute": _case("m.permute(1, 0)", {"m": M}, lambda m: m.permute(1, 0)),
    "adjoint": _case("adjoint(m)", {"m": M}, torch.adjoint),
    "flip": _case("flip(m, 1)", {"m": M}, lambda m: torch.flip(m, (1,))),
    "fliplr": _case("fliplr(m)", {"m": M}, torch.fliplr),
    "flipud": _case("flipud(m)", {"m": M}, torch.flipud),
    "roll": _case("roll(m, 1, 1)", {"m": M}, lambda m: torch.roll(m, 1, 1)),
    "narrow": _case("narrow(m, 1, 1, 2)", {"m": M}, lambda m: torch.narrow(m, 1, 1, 2)),
    "atleast_1d": _case("atleast_1d(x)", {"x": X}, torch.atleast_1d),
    "atleast_2d": _case("atleast_2d(x)", {"x": X}, torch.atleast_2d),
    "atleast_3d": _case("atleast_3d(x)", {"x": X}, torch.atleast_3d),
    "hstack": _case("hstack([x, v])", {"x": X, "v": V}, lambda x, v: torch.hstack([x, v])),
    "vstack": _case("vstack([m, v])", {"m": M, "v": V}, lambda m, v: torch.vstack([m, v])),
    "column_stack": _case(
        "column_stack([k, u])", {"k": K, "u": U}, lambda k, u: torch.column_stack([k, u])
    ),
    "meshgrid": _case(
        "meshgrid(x, v, indexing='xy')[1]",
        {"x": X, "v": V},
        lambda x, v: torch.meshgrid(x, v, indexing="xy")[1],
    ),
    "mm": _case("mm(m, k)", {"m": M, "k": K}, torch.mm),
    "mv": _case("mv(m, v)", {"m": M, "v": V}, torch.mv),
    "bmm": _case("bmm(b, c)", {"b": B1, "c": B2}, torch.bmm),
    "trace": _case("trace(s)", {"s": S}, torch.trace),
    "outer": _case("outer(x, v)", {"x": X, "v": V}, torch.outer),
    "inner": _case("inner(m, n)", {"m": M, "n": N}, torch.inner),
    "tensordot": _case(
        "tensordot(m, k, 1)", {"m": M, "k": K}, lambda m, k: torch.tensordot(m, k, 1)
    ),
    "kron": _case("kron(s, v)", {"s": S, "v": V}, torch.kron),
    "cross": _case("cross(v, u)", {"v": V, "u": U}, lambda v, u: torch.cross(v, u, dim=0)),
    "det": _case("det(s)", {"s": S}, L.det),
    "inv": _case("inv(s)", {"s": S}, L.inv),
    "solve": _case("solve(s, w)", {"s": S, "w": [1.0, -2.0]}, L.solve),
    "cholesky": _case("cholesky(q)", {"q": Q}, L.cholesky),
    "vector_norm": _case("vector_norm(m, 3, 1)", {"m": M}, lambda m: L.vector_norm(m, 3, 1)),
    "matrix_norm": _case("matrix_norm(m, 1)", {"m": M}, lambda m: L.matrix_norm(m, 1)),
    # decompositions: one result each (the singular vectors' signs are LAPACK's, torch's too)
    "slogdet": _case("slogdet(s).logabsdet", {"s": S}, lambda s: L.slogdet(s).logabsdet),
    "eigh": _case("eigh(q)[1]", {"q": Q}, lambda q: L.eigh(q).eigenvectors),
    "qr": _case("qr(k).Q", {"k": K}, lambda k: L.qr(k).Q),
    "svd": _case(
        "svd(k, full_matrices=False).Vh", {"k": K}, lambda k: L.svd(k, full_matrices=False).Vh
    ),
    "svdvals": _case("svdvals(k)", {"k": K}, L.svdvals),
    "eigvalsh": _case("eigvalsh(q)", {"q": Q}, L.eigvalsh),
    "pinv": _case("pinv(k)", {"k": K}, L.pinv),
}
