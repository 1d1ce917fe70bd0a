"""Linear algebra and shape operations in a user's program, through the CLI, against torch."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

A = [[2.0, 1.0, 0.5], [0.5, 3.0, -1.0], [1.0, 0.0, 4.0]]
B = [1.0, -2.0, 0.5]


def _torch_program(a, b):
    spd = a @ a.mT
    return (
        torch.linalg.solve(a, b).sum()
        + torch.linalg.det(a)
        + torch.trace(torch.linalg.inv(a))
        + torch.linalg.cholesky(spd, upper=True).sum()
        + torch.linalg.matrix_norm(a, 1)
        + torch.linalg.vector_norm(b, 3)
        + torch.kron(torch.triu(a, 1), torch.outer(b, b)).sum()
        + (torch.cross(a, torch.roll(a, 1, 0), dim=1) * torch.flip(a, (0,))).sum()
        + torch.tensordot(torch.diagonal(a, 1), torch.narrow(b, 0, 1, 2), 1)
        + torch.hstack([a, torch.movedim(a, 0, 1)]).pow(2).sum()
    )


PROGRAM = (
    "y = sum(solve(A, b)) + det(A) + trace(inv(A)) + sum(cholesky(A @ transpose(A), upper=True))"
    " + matrix_norm(A, 1) + vector_norm(b, 3) + sum(kron(triu(A, 1), outer(b, b)))"
    " + sum(cross(A, roll(A, 1, 0), dim=1) * flip(A, 0))"
    " + tensordot(diagonal(A, 1), narrow(b, 0, 1, 2), 1) + sum(hstack([A, movedim(A, 0, 1)]) ** 2)"
)


def test_a_program_of_linear_algebra_gives_torchs_value_and_gradients(cli_json):
    document = cli_json("grad", "-e", PROGRAM, "-i", f"A={A}", "-i", f"b={B}")
    a = torch.tensor(A, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(B, dtype=torch.float64, requires_grad=True)
    y = _torch_program(a, b)
    y.backward()
    np.testing.assert_allclose(document["values"]["y"], y.item(), rtol=1e-10)
    np.testing.assert_allclose(document["grads"]["A"], a.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(document["grads"]["b"], b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_hessian_of_det_matches_torch(cli_json):
    document = cli_json("hessian", "-e", "y = det(A)", "-i", f"A={A}")
    expected = torch.autograd.functional.hessian(
        torch.linalg.det, torch.tensor(A, dtype=torch.float64)
    )
    (block,) = document["hessian"].values() if "hessian" in document else [None]
    assert block is not None, document.keys()
    np.testing.assert_allclose(np.asarray(block).reshape(9, 9), expected.reshape(9, 9), atol=1e-10)


def test_det_of_a_singular_matrix_has_the_cofactor_gradient(cli_json):
    singular = [[1.0, 2.0], [2.0, 4.0]]
    document = cli_json("grad", "-e", "y = det(A)", "-i", f"A={singular}")
    a = torch.tensor(singular, dtype=torch.float64, requires_grad=True)
    (expected,) = torch.autograd.grad(torch.linalg.det(a), a, create_graph=True)
    assert document["values"]["y"] == 0
    np.testing.assert_allclose(document["grads"]["A"], expected.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ("y = sum(inv(A))", "linalg.inv: the matrix is singular"),
        ("y = sum(solve(A, A))", "linalg.solve: A is singular"),
        ("y = sum(cholesky(A))", "linalg.cholesky: the input is not positive-definite"),
        ("y = matrix_norm(A, 3)", "ord must be 'fro', 'nuc', 2, -2, 1, -1, inf or -inf"),
        ("y = det(A[0])", "linalg.det: A must have at least 2 dimensions"),
        ("y = trace(A[0])", "trace: expected a matrix"),
    ],
)
def test_linear_algebra_refusals_are_clear(cli, program, message):
    result = cli("grad", "-e", program, "-i", "A=[[1,2],[2,4]]")
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_functions_lists_the_linear_algebra_and_shape_operations(cli):
    result = cli("functions")
    assert result.exit_code == 0
    for signature in (
        "det(A)",
        "solve(A, B)",
        "cholesky(A, upper=False)",
        "vector_norm(x, ord=2, dim=None, keepdim=False)",
        "matrix_norm(A, ord='fro', keepdim=False)",
        "tensordot(a, b, dims=2)",
        "triu(input, diagonal=0)",
        "diagonal(input, offset=0, dim1=0, dim2=1)",
        "roll(input, shifts, dims=None)",
        "column_stack(tensors)",
        "meshgrid(*tensors, indexing=None)",
    ):
        assert signature in result.stdout
