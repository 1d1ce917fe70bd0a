"""Floats added in torch's order (ops/numerics/summation.py): sums and means of float32 and float64
tensors end in torch's last bits, for every size and layout the module reads off."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gradcli.ops import library as gc
from gradcli.ops.numerics.summation import sum_like_torch, torch_order

torch = pytest.importorskip("torch")

SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 255, 256, 1000, 4097]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # torch splits a big sum between threads: the corpus runs one
    with torch_order():  # the mode gradcli run sums in
        yield
    torch.set_num_threads(threads)


def _values(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_whole_sum_is_torchs_to_the_bit(dtype):
    for n in SIZES + [65536, 100_003, 1 << 20]:
        a = _values(n, dtype, n)
        assert sum_like_torch(a, (0,)) == torch.from_numpy(a).sum().item(), n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [1, 3, 5, 8, 13, 17, 64, 100, 1000])
@pytest.mark.parametrize("columns", [1, 3, 4, 7, 8, 9, 16, 31, 32, 33, 40, 100])
def test_sums_along_each_dimension_of_a_matrix_are_torchs(dtype, rows, columns):
    a = _values((rows, columns), dtype, rows * 1000 + columns)
    t = torch.from_numpy(a)
    for axis in [(0,), (1,), (0, 1)]:
        for keepdim in (False, True):
            want = t.sum(dim=axis, keepdim=keepdim).numpy()
            got = sum_like_torch(a, axis, keepdim)
            assert np.shape(got) == want.shape and np.array_equal(got, want), (axis, keepdim)
    # transposed (a view whose memory order is the other one), as x.T.sum(0) reads it
    for axis in [(0,), (1,)]:
        want = t.T.sum(dim=axis).numpy()
        assert np.array_equal(sum_like_torch(a.T, axis), want), ("T", axis)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_over_dimensions_of_higher_tensors_are_torchs(dtype):
    shapes = [(3, 5, 7), (2, 17, 9), (4, 1, 33), (5, 6, 2, 8), (2, 40, 3, 5)]
    for shape in shapes:
        a = _values(shape, dtype, sum(shape))
        t = torch.from_numpy(a)
        for count in range(1, len(shape) + 1):
            for axis in itertools.combinations(range(len(shape)), count):
                want = t.sum(dim=axis).numpy()
                got = sum_like_torch(a, axis)
                assert np.shape(got) == want.shape, (shape, axis)
                # dimensions apart in memory fall back on numpy: near torch's, not always equal
                tolerance = 1e-5 if dtype == np.float32 else 1e-12
                close = np.allclose(got, want, rtol=tolerance, atol=tolerance)
                assert close, (shape, axis)
                apart = any(b - a > 1 for a, b in zip(axis, axis[1:]))
                if not apart:
                    assert np.array_equal(got, want), (shape, axis)


def test_the_engines_sum_and_mean_of_float32_are_torchs():
    for n in [5, 20, 100, 2000]:
        a = _values(n, np.float32, n)
        x = gc.Tensor(a)
        t = torch.from_numpy(a)
        assert gc.sum(x).item() == t.sum().item()
        assert gc.mean(x).item() == t.mean().item()
        m = a.reshape(-1, 5) if n % 5 == 0 else a[None]
        assert np.array_equal(gc.sum(gc.Tensor(m), 0).data, torch.from_numpy(m).sum(0).numpy())
        assert np.array_equal(gc.mean(gc.Tensor(m), 1).data, torch.from_numpy(m).mean(1).numpy())


def test_other_dtypes_and_broadcast_views_are_numpys_sum():
    ints = np.arange(10)
    assert sum_like_torch(ints, (0,)) == 45
    wide = np.broadcast_to(np.float32(0.1), (1000,))
    assert sum_like_torch(wide, (0,)) == np.sum(wide)
    empty = np.zeros((0, 3), np.float32)
    assert np.array_equal(sum_like_torch(empty, (0,)), np.zeros(3, np.float32))


def test_outside_the_mode_a_sum_is_numpys():
    a = _values(1000, np.float32, 7)
    with torch_order(False):
        assert sum_like_torch(a, (0,)) == np.sum(a)
