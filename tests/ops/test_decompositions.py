"""Programs that take decompositions apart (``L, V = eigh(A)``, ``Q, R = qr(A)``,
``U, S, Vh = svd(A)``, ``slogdet(A).logabsdet``), in PyTorch's spellings too, through grad,
vjp, jvp and explain, against torch. Singular vectors enter through functions their signs do
not change."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

A = [[2.0, 0.5, -0.25], [0.5, 3.0, 1.0], [-0.25, 1.0, 5.0]]
A_TEXT = json.dumps(A)


def _a(requires_grad: bool = True):
    return torch.tensor(A, dtype=torch.float64, requires_grad=requires_grad)


PROGRAMS = [
    ("L, V = eigh(A); y = L[0] * L[2] + sum(V * V * A)",
     lambda a: (lambda L, V: L[0] * L[2] + (V * V * a).sum())(*torch.linalg.eigh(a))),
    ("y = sum(torch.linalg.eigh(A, UPLO='U').eigenvalues ** 2)",
     lambda a: (torch.linalg.eigh(a, UPLO="U").eigenvalues ** 2).sum()),
    ("s, l = torch.linalg.slogdet(A); y = s * l + torch.slogdet(A)[1]",
     lambda a: torch.linalg.slogdet(a)[0] * torch.linalg.slogdet(a)[1] + torch.slogdet(a)[1]),
    ("Q, R = qr(A); y = sum(R * R * A) + sum(Q * Q * A)",
     lambda a: (lambda Q, R: (R * R * a).sum() + (Q * Q * a).sum())(*torch.linalg.qr(a))),
    ("y = sum(torch.linalg.qr(A[:, 0:2]).R ** 2)",
     lambda a: (torch.linalg.qr(a[:, 0:2]).R ** 2).sum()),
    ("U, S, Vh = svd(A, full_matrices=False); y = sum(S * S) + sum(U * U * A) + sum(Vh * Vh * A)",
     lambda a: (lambda U, S, Vh: (S * S).sum() + (U * U * a).sum() + (Vh * Vh * a).sum())(
         *torch.linalg.svd(a, full_matrices=False))),
    ("y = sum(torch.linalg.svd(A).S)", lambda a: torch.linalg.svd(a).S.sum()),
]  # fmt: skip


@pytest.mark.parametrize(("source", "program"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_decomposition_programs_give_torchs_value_and_gradient(cli_json, source, program):
    document = cli_json("grad", "-e", source, "-i", f"A={A_TEXT}", "--no-cache")
    a = _a()
    out = program(a)
    out.backward()
    np.testing.assert_allclose(document["values"]["y"], out.item(), rtol=1e-10)
    np.testing.assert_allclose(document["grads"]["A"], a.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_a_vector_valued_decomposition_program_has_torchs_vjp_and_jvp(cli_json):
    source = "L, V = eigh(A); y = L + sum(V * V * A, 0)"
    v, t = [1.0, -2.0, 0.5], np.arange(9.0).reshape(3, 3).tolist()

    def function(a):
        values, vectors = torch.linalg.eigh(a)
        return values + (vectors * vectors * a).sum(0)

    vjp = cli_json("vjp", "-e", source, "-i", f"A={A_TEXT}", "--v", json.dumps(v), "--no-cache")
    _, expected = torch.autograd.functional.vjp(function, _a(False), torch.tensor(v).double())
    np.testing.assert_allclose(vjp["grads"]["A"], expected.numpy(), rtol=1e-9, atol=1e-12)
    tangent_text = f"A={json.dumps(t)}"
    jvp = cli_json("jvp", "-e", source, "-i", f"A={A_TEXT}", "--t", tangent_text, "--no-cache")
    _, tangent = torch.func.jvp(function, (_a(False),), (torch.tensor(t).double(),))
    np.testing.assert_allclose(jvp["jvp"]["y"], tangent.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("L, V = eigh(A); y = sum(V * V * A)", "F[i, j] = 1/(L[j] - L[i])"),
        ("y = slogdet(A).logabsdet", "inv(A)^T"),
        ("y = sum(qr(A)[1])", "X = Q^T @ dA @ inv(R)"),
        ("y = sum(svd(A)[1])", "diag(U^T @ dA @ V)"),
    ],
)
def test_explain_shows_each_results_derivative(cli_json, source, shown):
    document = cli_json("explain", "-e", source, "-i", f"A={A_TEXT}", "--no-cache")
    assert shown in json.dumps(document["explain"])


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("y = eigh(A)", "eigh(A) gives 2 tensors (eigenvalues, eigenvectors), not one tensor"),
        ("U, S = svd(A)", "too many values to unpack (expected 2)"),
        ("y = sum(qr(A).Z)", "qr(A) has no field 'Z'"),
        ("y = sum(qr(A, mode='raw')[0])", "mode of qr must be 'reduced', 'complete' or 'r'"),
        ("y = sum(eigh(A, 'X')[0])", "UPLO of eigh must be 'L' or 'U'"),
        ("y = sum(qr(A, mode='r').R)", "not computed when mode='r'"),
        ("U, S, V = torch.svd(A); y = sum(V)", "torch.svd gives (U, S, V) with V = Vh^T"),
    ],
)
def test_decompositions_refuse_clearly(cli, source, message):
    result = cli("grad", "-e", source, "-i", f"A={A_TEXT}", "--no-cache")
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr
    assert "Traceback" not in result.stderr
