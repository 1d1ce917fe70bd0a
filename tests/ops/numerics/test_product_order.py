"""torch's rounding of float32 matrix products and of linspace, in gradcli run's torch order
(gradcli/ops/numerics/product_order.py, creation.linspace_like_torch): bit for bit against torch
where it is installed, and against exact arithmetic (fractions) everywhere."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gradcli.engine import creation
from gradcli.ops.numerics import product_order, summation
from gradcli.ops.numerics.single_precision import fused_multiply_add

# (m, k, n, a transposed, b transposed): each kernel and block rule of the module's text
SHAPES = [
    (8, 1000, 100, False, False),  # fused, blocks of 192
    (16, 300, 16, False, False),  # fused, two halves
    (16, 257, 16, True, False),  # fused, halves and the odd element, a transposed
    (20, 150, 13, False, True),  # fused, one block, b transposed
    (64, 100, 3, False, False),  # plain chain
    (10, 3, 2, False, True),  # plain chain, short k, b transposed
    (37, 2000, 8, True, False),  # plain chain, long k
    (64, 100, 1, False, False),  # dot lanes
    (12, 2001, 1, False, False),  # dot lanes, odd head
    (5, 3, 1, False, False),  # dot lanes, short k, m not a multiple of 4
    (3, 2000, 1, True, False),  # one column, a transposed: plain chain
    (1, 1000, 100, False, False),  # one row: plain chain, even with 12+ columns
    (1, 300, 16, False, True),  # one row, b transposed: dot lanes over b's columns
]


def _operands(
    m: int, k: int, n: int, ta: bool, tb: bool, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    return (a.T if ta else a), (b.T if tb else b)


@pytest.mark.parametrize("shape", SHAPES)
def test_products_are_torchs_to_the_bit(shape: tuple[int, int, int, bool, bool]) -> None:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    for seed in range(3):
        a, b = _operands(*shape, seed)
        with summation.torch_order():
            ours = product_order.matmul_like_torch(a, b)
        assert ours is not None
        expected = (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()
        assert np.array_equal(ours, expected), f"{shape} seed {seed}"


@pytest.mark.parametrize(
    "k, n, transposed",
    [(33, 31, False), (32, 512, False), (512, 32, True), (3, 7, True), (300, 16, True)],
)
def test_rows_together_are_each_rows_own_product_to_the_bit(
    k: int, n: int, transposed: bool
) -> None:
    rows, b = _operands(40, k, n, False, transposed, 0)
    rows[3] = 0.0
    rows[5, ::2] = -0.0
    with summation.torch_order():
        together = product_order.rows_like_torch(rows, b)
        apart = [product_order.matmul_like_torch(row[None, :], b) for row in rows]
    assert together is not None and all(row is not None for row in apart)
    expected = np.concatenate(apart)
    assert together.tobytes() == expected.tobytes()


def test_rows_whose_own_product_is_numpys_are_not_taken_together() -> None:
    rows, b = _operands(8, 31, 33, False, True, 0)  # a weight's 33 columns: numpy's kernel
    with summation.torch_order():
        assert product_order.matmul_like_torch(rows[:1], b) is None
        assert product_order.rows_like_torch(rows, b) is None
    assert product_order.rows_like_torch(*_operands(8, 20, 16, False, False, 0)) is None


def test_a_product_outside_torch_order_or_of_unknown_kernels_is_numpys() -> None:
    a, b = _operands(8, 20, 16, False, False, 0)
    assert product_order.matmul_like_torch(a, b) is None  # mode off
    with summation.torch_order():
        assert product_order.matmul_like_torch(*_operands(8, 20, 10, False, False, 0)) is None
        assert product_order.matmul_like_torch(*_operands(7, 20, 1, False, False, 0)) is None
        assert product_order.matmul_like_torch(a.astype(np.float64), b.astype(np.float64)) is None


def test_the_plain_chain_and_the_blocks_are_what_the_text_says() -> None:
    """Without torch: each element against the chain written out in exact fractions."""
    a, b = _operands(3, 400, 12, False, False, 1)
    with summation.torch_order():
        fused = product_order.matmul_like_torch(a, b)
    assert fused is not None
    i, j = 2, 5
    total = np.float32(0)
    for start, stop in ((0, 192), (192, 384), (384, 400)):
        block = np.float32(0)
        for t in range(start, stop):
            exact = Fraction(float(a[i, t])) * Fraction(float(b[t, j])) + Fraction(float(block))
            block = np.float32(_round32(exact))
        total = np.float32(total + block)
    assert fused[i, j] == total
    a, b = _operands(3, 50, 4, False, False, 2)
    with summation.torch_order():
        plain = product_order.matmul_like_torch(a, b)
    chain = np.float32(0)
    for t in range(50):
        chain = np.float32(chain + np.float32(a[1, t] * b[t, 3]))
    assert plain is not None and plain[1, 3] == chain


@pytest.mark.parametrize("shape", [(8, 5, 3), (8, 9, 1), (1, 7, 4), (1, 9, 8), (5, 3, 2)])
def test_a_chain_of_negative_zeros_starts_from_zero(shape: tuple[int, int, int]) -> None:
    """The chains start from +0 (as sgemm's): products that are all -0 sum to +0, not -0."""
    m, k, n = shape
    a = -np.ones((m, k), np.float32)
    with summation.torch_order():
        ours = product_order.matmul_like_torch(a, np.zeros((k, n), np.float32))
    assert ours is not None and ours.shape == (m, n)
    assert not np.signbit(ours).any() and not ours.any()


def _round32(exact: Fraction) -> float:
    """The float32 nearest ``exact`` (ties to even), found from its float64 neighbours."""
    near = np.float32(float(exact))
    candidates = [
        np.nextafter(near, np.float32(-np.inf)),
        near,
        np.nextafter(near, np.float32(np.inf)),
    ]
    best = min(
        candidates, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.int32)) & 1)
    )
    return float(best)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_multiply_add_rounds_once(dtype: type) -> None:
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(2000).astype(dtype) for _ in range(3))
    ours = fused_multiply_add(a, b, c, dtype)
    for x, y, z, r in zip(a[:300], b[:300], c[:300], ours[:300], strict=True):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        expected = _round32(exact) if dtype == np.float32 else float(exact)
        assert float(r) == expected


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "args", [(-3.141592653589793, 3.141592653589793, 2000), (-5, 3, 1001), (0, 1, 7)]
)
def test_linspace_is_torchs_to_the_bit(dtype: str, args: tuple[float, float, int]) -> None:
    torch = pytest.importorskip("torch")
    ours = creation.linspace_like_torch(*args, np.dtype(dtype))
    expected = torch.linspace(*args, dtype=getattr(torch, dtype)).numpy()
    assert ours.dtype == expected.dtype and np.array_equal(ours, expected)


def test_a_layer_with_a_bias_is_torchs_addmm() -> None:
    """Over more than one block of k, torch's addmm adds each block to the bias: F.linear's
    value in gradcli run's torch order is that, bit for bit, and so is the weight's gradient."""
    torch = pytest.importorskip("torch")
    from gradcli.ops import library as gc

    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 400)).astype(np.float32)
    w = (rng.standard_normal((20, 400)) * 0.05).astype(np.float32)
    b = rng.standard_normal(20).astype(np.float32)
    tw = torch.from_numpy(w.copy()).requires_grad_()
    expected = torch.nn.functional.linear(torch.from_numpy(x), tw, torch.from_numpy(b))
    (expected * expected).sum().backward()
    with summation.torch_order():
        weight = gc.Tensor(w, requires_grad=True)
        ours = gc.linear(gc.Tensor(x), weight, gc.Tensor(b))
        assert np.array_equal(ours.data, expected.detach().numpy())
        (ours * ours).sum().backward()
    assert weight.grad is not None
    np.testing.assert_allclose(weight.grad.data, tw.grad.numpy(), rtol=1e-5)
