"""Every entry that takes complex operands, on complex inputs: PyTorch's gradient of a real
function of the result (dL/dx + i dL/dy for z = x + iy: L = |z|^2 gives 2z) against torch
2.13 and against central finite differences along the real and the imaginary parts; forward
mode (J t, complex t) against torch.func.jvp and finite differences along t; a second
backward pass through the first (create_graph) against torch."""

from __future__ import annotations

import numpy as np
import pytest
from optable_complex import COMPLEX_ROWS, ComplexRow, torch_module

import gradcli as gc
from gradcli.ops.table import OPS

ROWS = {row.name: row for row in COMPLEX_ROWS}
STEP = 1e-6


def _inputs(row: ComplexRow, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for shape in row.shapes:
        real = rng.uniform(0.3, 1.5, shape) if row.right else rng.uniform(-1.5, 1.5, shape)
        imag = rng.uniform(-1.5, 1.5, shape)
        arrays.append(real + 1j * imag)
    return arrays


def _weights(shape: tuple[int, ...], seed: int, complex_: bool) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    w = rng.normal(size=shape)
    return w + 1j * rng.normal(size=shape) if complex_ else w


def _loss(m, row: ComplexRow, w, *zs):
    """A real function of the result: Re(sum(conj(w) * f)) for a complex f, sum(w * f) else."""
    out = row.fn(m, *zs)
    if "complex" in str(out.dtype):
        return m.sum(m.real(m.conj(w) * out))
    return m.sum(w * out)


def _case(row: ComplexRow, seed: int):
    zs = _inputs(row, seed)
    out = row.fn(gc, *[gc.Tensor(z) for z in zs])
    w = _weights(out.shape, seed, out.dtype.kind == "c")
    return zs, w


def test_every_entry_that_takes_complex_numbers_has_a_complex_row():
    takes = {name for name, op in OPS.items() if op.complex and op.in_language}
    missing = sorted(takes - set(ROWS))
    assert not missing, f"complex entries without a row in optable_complex: {missing}"


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(ROWS))
@pytest.mark.parametrize("seed", [0, 1])
def test_complex_gradient_matches_torch_and_finite_differences(name, seed):
    torch = torch_module()
    row = ROWS[name]
    zs, w = _case(row, seed)
    leaves = [gc.Tensor(z, requires_grad=True) for z in zs]
    _loss(gc, row, gc.Tensor(w), *leaves).backward()
    ours = [leaf.grad.numpy() for leaf in leaves]

    theirs = [torch.tensor(z, requires_grad=True) for z in zs]
    _loss(torch, row, torch.tensor(w), *theirs).backward()
    for mine, t in zip(ours, theirs):
        assert mine.dtype == np.complex128
        np.testing.assert_allclose(mine, t.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)
    if OPS[name].extra.get("cuts_gradient"):
        return  # finite differences see through detach, as torch's gradcheck would not

    def loss_at(values):
        return _loss(gc, row, gc.Tensor(w), *[gc.Tensor(v) for v in values]).item()

    for k, z in enumerate(zs):
        fd = np.zeros(z.shape, dtype=complex)
        for index in np.ndindex(z.shape):
            for direction in (1, 1j):  # the real part, then the imaginary part
                up, down = [v.copy() for v in zs], [v.copy() for v in zs]
                up[k][index] += STEP * direction
                down[k][index] -= STEP * direction
                slope = (loss_at(up) - loss_at(down)) / (2 * STEP)
                fd[index] += slope * direction  # dL/dx + i dL/dy
        np.testing.assert_allclose(ours[k], fd, rtol=1e-5, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(ROWS))
def test_complex_forward_mode_matches_torch_and_finite_differences(name):
    torch = torch_module()
    row = ROWS[name]
    zs, _ = _case(row, 2)
    tangents = _inputs(row, 3)
    _, ours = gc.jvp(
        lambda *xs: row.fn(gc, *xs),
        tuple(gc.Tensor(z) for z in zs),
        tuple(gc.Tensor(t) for t in tangents),
    )
    _, theirs = torch.func.jvp(
        lambda *xs: row.fn(torch, *xs),
        tuple(torch.tensor(z) for z in zs),
        tuple(torch.tensor(t) for t in tangents),
    )
    np.testing.assert_allclose(ours.numpy(), theirs.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)

    if OPS[name].extra.get("cuts_gradient"):
        return

    def at(step):
        return row.fn(gc, *[gc.Tensor(z + step * t) for z, t in zip(zs, tangents)]).numpy()

    fd = (at(STEP) - at(-STEP)) / (2 * STEP)
    np.testing.assert_allclose(ours.numpy(), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(ROWS))
def test_complex_second_order_matches_torch(name):
    """The squared size of the gradient, differentiated again (create_graph=True)."""
    torch = torch_module()
    row = ROWS[name]
    zs, w = _case(row, 4)

    def twice(m, grad, leaves, weights):
        grads = grad(_loss(m, row, weights, *leaves), leaves, create_graph=True)
        total = sum(m.sum(m.real(g * m.conj(g))) for g in grads)
        if not total.requires_grad:  # a gradient that is constant (add, neg): as in torch
            return None
        return grad(total, leaves)

    leaves = [gc.Tensor(z, requires_grad=True) for z in zs]
    ours = twice(gc, gc.grad, leaves, gc.Tensor(w))
    leaves_t = [torch.tensor(z, requires_grad=True) for z in zs]
    theirs = twice(torch, torch.autograd.grad, leaves_t, torch.tensor(w))
    if ours is None or theirs is None:
        assert ours is None and theirs is None
        return
    for mine, t in zip(ours, theirs):
        np.testing.assert_allclose(mine.numpy(), t.resolve_conj().numpy(), rtol=1e-9, atol=1e-10)
