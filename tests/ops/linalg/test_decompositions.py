"""The decompositions' conventions against torch where the test table's rows do not reach:
slogdet's sign (no gradient) and singular matrices, eigh and svd at repeated values, qr's
modes, svd's full_matrices=True, the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
WELL = RNG.uniform(-0.5, 0.5, (3, 3)) + 3 * np.eye(3)


def _pair(a: np.ndarray):
    return gc.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("flip", [1.0, -1.0])
def test_slogdet_sign_requires_grad_but_carries_no_gradient(flip):
    a = WELL * np.array([[flip], [1.0], [1.0]])
    x, t = _pair(a)
    sign, ours = gc.slogdet(x, output=(0, 0)), torch.linalg.slogdet(t).sign
    assert sign.item() == ours.item() == flip
    assert sign.requires_grad and ours.requires_grad
    (gradient,) = gc.grad(sign, [x], allow_unused=True)
    (expected,) = torch.autograd.grad(ours, t, allow_unused=True)
    assert gradient is None and expected is None
    _, tangent = gc.jvp(lambda z: gc.slogdet(z, output=(0, 0)), (gc.tensor(a),), (gc.ones(3, 3),))
    assert tangent.item() == 0


def test_slogdet_of_a_singular_matrix():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    x, t = _pair(a)
    logabsdet = gc.slogdet(x, output=(1, 0))
    expected = torch.linalg.slogdet(t)
    assert gc.slogdet(x, output=(0, 0)).item() == 0 == abs(expected.sign.item())
    assert logabsdet.item() == -np.inf == expected.logabsdet.item()
    (gradient,) = gc.grad(logabsdet, [x])
    (oracle,) = torch.autograd.grad(expected.logabsdet, t)
    assert not np.isfinite(gradient.numpy()).any() and not torch.isfinite(oracle).any()


def test_eigh_at_repeated_eigenvalues_as_torch():
    """The eigenvalues' gradient stays finite; the eigenvectors' is not (torch's neither)."""
    x, t = _pair(np.diag([1.0, 1.0, 2.0]))
    w = RNG.standard_normal((3, 3))
    (values,) = gc.grad(gc.sum(gc.eigh(x, output=(0, 0)) * gc.tensor([1.0, 2.0, 3.0])), [x])
    (expected,) = torch.autograd.grad(
        (torch.linalg.eigh(t).eigenvalues * torch.tensor([1.0, 2.0, 3.0])).sum(), t
    )
    np.testing.assert_allclose(values.numpy(), expected.numpy(), atol=1e-12)
    (vectors,) = gc.grad(gc.sum(gc.eigh(x, output=(1, 0)) * gc.tensor(w)), [x])
    (oracle,) = torch.autograd.grad((torch.linalg.eigh(t).eigenvectors * torch.tensor(w)).sum(), t)
    assert not np.isfinite(vectors.numpy()).all() and not torch.isfinite(oracle).all()


def test_eigh_reads_one_triangle_and_its_gradient_is_symmetric():
    a = RNG.standard_normal((3, 3))
    for uplo in ("L", "U", "u"):
        x, t = _pair(a)
        values = gc.eigh(x, uplo, output=(0, 0))
        expected = torch.linalg.eigh(t, UPLO=uplo).eigenvalues
        np.testing.assert_allclose(values.numpy(), expected.detach().numpy(), atol=1e-12)
        (gradient,) = gc.grad(gc.sum(values * values), [x])
        (oracle,) = torch.autograd.grad((expected * expected).sum(), t)
        np.testing.assert_allclose(gradient.numpy(), oracle.numpy(), atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes_as_torch(shape, mode):
    a = RNG.standard_normal(shape)
    x, t = _pair(a)
    expected = torch.linalg.qr(t, mode=mode)
    for k in range(2):
        ours = gc.qr(x, mode, output=(k, 0))
        assert ours.shape == tuple(expected[k].shape)
        np.testing.assert_allclose(ours.numpy(), expected[k].detach().numpy(), atol=1e-12)
    r = gc.qr(x, mode, output=(1, 0))
    try:
        (oracle,) = torch.autograd.grad(expected.R.sum(), t)
    except RuntimeError as refusal:
        with pytest.raises(gc.GradError) as raised:
            gc.grad(gc.sum(r), [x])
        assert str(raised.value) == str(refusal)
        return
    (gradient,) = gc.grad(gc.sum(r), [x])
    np.testing.assert_allclose(gradient.numpy(), oracle.numpy(), atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (2, 2, 3)])
def test_svd_with_full_matrices_differentiates_the_first_columns_as_torch(shape):
    """The extra singular vectors get no gradient (reverse) and a zero tangent (forward)."""
    a = RNG.standard_normal(shape)
    x, t = _pair(a)
    expected = torch.linalg.svd(t)
    tangent = RNG.standard_normal(shape)
    for k in range(3):
        ours = gc.svd(x, output=(k, 0))
        w = RNG.standard_normal(ours.shape)
        (gradient,) = gc.grad(gc.sum(ours * ours * gc.tensor(w)), [x])
        (oracle,) = torch.autograd.grad(
            (expected[k] ** 2 * torch.tensor(w)).sum(), t, retain_graph=True
        )
        np.testing.assert_allclose(gradient.numpy(), oracle.numpy(), atol=1e-10)
        _, ours_tangent = gc.jvp(
            lambda z, k=k: gc.svd(z, output=(k, 0)) ** 2, (gc.tensor(a),), (gc.tensor(tangent),)
        )
        _, torch_tangent = torch.func.jvp(
            lambda z, k=k: torch.linalg.svd(z)[k] ** 2,
            (torch.tensor(a),),
            (torch.tensor(tangent),),
        )
        np.testing.assert_allclose(ours_tangent.numpy(), torch_tangent.numpy(), atol=1e-10)


def test_svd_at_repeated_singular_values_as_torch():
    x, t = _pair(np.eye(2))
    (values,) = gc.grad(gc.sum(gc.svd(x, False, output=(1, 0))), [x])
    np.testing.assert_allclose(values.numpy(), np.eye(2))
    u = gc.svd(x, False, output=(0, 0))
    (vectors,) = gc.grad(gc.sum(u * u) + gc.sum(u), [x])
    expected = torch.linalg.svd(t, full_matrices=False).U
    (oracle,) = torch.autograd.grad((expected * expected).sum() + expected.sum(), t)
    assert not np.isfinite(vectors.numpy()).all() and not torch.isfinite(oracle).all()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: gc.eigh(gc.ones(2, 3)), gc.ShapeError, "linalg.eigh: A must be square"),
        (lambda: gc.slogdet(gc.ones(3)), gc.ShapeError, "at least 2 dimensions"),
        (lambda: gc.qr(gc.ones(3)), gc.ShapeError, "linalg.qr: A must have at least 2"),
        (lambda: gc.svd(gc.ones(3)), gc.ShapeError, "linalg.svd: A must have at least 2"),
        (lambda: gc.eigh(gc.eye(2), "X"), gc.DomainError, "Expected UPLO argument to be 'L'"),
        (lambda: gc.qr(gc.eye(2), "raw"), gc.DomainError, "qr received unrecognized mode 'raw'"),
        (lambda: gc.svd(gc.eye(2), output=(3, 0)), gc.ShapeError, "svd gives 3 tensors"),
    ],
)
def test_refusals(call, error, message):
    with pytest.raises(error, match=message):
        call()
