"""torch's row-wise moments (ops/numerics/moments.py): layer_norm's mean, rstd and output in torch's
last bits inside torch's order (gradcli run), numpy's composite outside it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli.ops import library as gc
from gradcli.ops.numerics import moments
from gradcli.ops.numerics.summation import torch_order

# row lengths through every path: the leftover elements alone (< 8), whole vectors of one
# chunk, several chunks (128 float32s a chunk) with a partial last one, a deep cascade
LENGTHS = [1, 2, 3, 5, 7, 8, 9, 10, 15, 16, 17, 31, 33, 64, 100, 127, 128, 136, 255, 257]
LENGTHS += [500, 1000, 4099]


def _rows(shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * rng.uniform(0.5, 4) + rng.uniform(-3, 3)).astype(dtype)


def test_hand_worked_moments() -> None:
    # 0..15 in float32: each of the 8 lanes holds (k, k + 8), mean k + 4, m2 32; every merge
    # is exact, so the mean is 7.5 and the variance (16 * 16 - 1) / 12 = 21.25
    mean, var = moments.row_moments(np.arange(16, dtype=np.float32)[None])
    assert mean.tolist() == [7.5] and var.tolist() == [21.25]
    mean, var = moments.row_moments(np.array([[1, 2, 3, 4]], np.float64), correction=1)
    assert mean.tolist() == [2.5] and var.tolist() == [5 / 3]
    # three float32s near 1000, by Welford's update one by one: m1 = x0; then
    # d = x1 - m1, m1 += d / 2, m2 += d * (x1 - m1); then d = x2 - m1, m1 += d / 3, ...
    f = np.float32
    x = np.array([1000.1, 1000.2, 1000.4], f)
    m1, m2 = x[0], f(0)
    for k in (1, 2):
        d = x[k] - m1
        m1 = m1 + d / f(k + 1)
        m2 = m2 + d * (x[k] - m1)
    mean, var = moments.row_moments(x[None])
    assert mean[0] == m1 and var[0] == m2 / f(3)
    # numpy's two passes give another float32 here: the order is the point
    assert var[0] != np.var(x)


def test_outside_torch_order_layer_norm_is_numpys_composite() -> None:
    x = _rows((4, 10), np.float32, 1)
    assert not moments.supported(x)
    out = gc.layer_norm(gc.Tensor(x), 10).data
    centered = x - x.mean(-1, keepdims=True)
    want = centered / np.sqrt((centered * centered).mean(-1, keepdims=True) + np.float32(1e-5))
    assert np.array_equal(out, want)
    with torch_order():
        assert moments.supported(x) and not moments.supported(x, x.astype(np.float64))
        assert not moments.supported(x.astype(np.float16))


torch = pytest.importorskip("torch")


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_moments_are_torchs_mean_and_rstd(dtype: type) -> None:
    for n in LENGTHS:
        x = _rows((30, n), dtype, n)
        _, mean, rstd = torch.ops.aten.native_layer_norm(torch.from_numpy(x), [n], None, None, 1e-5)
        ours_mean, var = moments.row_moments(x)
        ours_rstd = dtype(1) / np.sqrt(var + dtype(1e-5))
        assert np.array_equal(ours_mean, mean.numpy().ravel()), n
        assert np.array_equal(ours_rstd, rstd.numpy().ravel()), n


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_in_torch_order_is_torchs_to_the_bit(dtype: type, affine: str) -> None:
    for n in LENGTHS[1:]:
        x = _rows((3, 5, n), dtype, 7 * n)
        w = _rows((n,), dtype, n + 1) if affine in ("weight", "both") else None
        b = _rows((n,), dtype, n + 2) if affine in ("bias", "both") else None
        want = torch.nn.functional.layer_norm(
            torch.from_numpy(x), [n], *(None if a is None else torch.from_numpy(a) for a in (w, b))
        ).numpy()
        with torch_order():
            ours = gc.layer_norm(
                gc.Tensor(x), n, *(None if a is None else gc.Tensor(a) for a in (w, b))
            )
        assert ours.data.dtype == want.dtype and np.array_equal(ours.data, want), n


@pytest.mark.usefixtures("one_thread")
def test_layer_norm_over_several_dims_and_its_gradient() -> None:
    x = _rows((4, 5, 6, 7), np.float32, 3)
    w, b = _rows((6, 7), np.float32, 4), _rows((6, 7), np.float32, 5)
    tx = torch.from_numpy(x).requires_grad_()
    tw = torch.from_numpy(w).requires_grad_()
    out = torch.nn.functional.layer_norm(tx, [6, 7], tw, torch.from_numpy(b), 1e-3)
    (out * out).sum().backward()
    with torch_order():
        gx, gw = gc.Tensor(x, requires_grad=True), gc.Tensor(w, requires_grad=True)
        ours = gc.layer_norm(gx, [6, 7], gw, gc.Tensor(b), 1e-3)
        (ours * ours).sum().backward()
    assert np.array_equal(ours.data, out.detach().numpy())
    # the gradients are the composite's: torch's to rounding
    np.testing.assert_allclose(gx.grad.data, tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gw.grad.data, tw.grad.numpy(), rtol=1e-4, atol=1e-4)


SPREAD_SHAPES = [(5,), (1000,), (3, 7), (40, 33), (4, 5, 6), (2, 3, 70)]


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_var_std_and_their_means_in_torch_order_are_torchs(dtype: type, name: str) -> None:
    for shape in SPREAD_SHAPES:
        x = _rows(shape, dtype, sum(shape))
        views = [(x, torch.from_numpy(x))]
        if x.ndim > 1:  # a transposed view: its elements taken in memory order
            views.append((x.T, torch.from_numpy(x).permute(*reversed(range(x.ndim)))))
        for a, t in views:
            dims = [None, 0, -1] + ([(0, a.ndim - 1)] if a.ndim > 1 else [])
            for dim in dims:
                for keyword in ({}, {"correction": 0}, {"unbiased": False, "keepdim": True}):
                    want = getattr(torch, name)(t, dim, **keyword)
                    with torch_order():
                        got = getattr(gc, name)(gc.Tensor(a), dim, **keyword)
                    pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
                    for ours, theirs in pairs:
                        assert np.array_equal(ours.data, theirs.numpy()), (shape, dim, keyword)


@pytest.mark.usefixtures("one_thread")
def test_a_float32_std_is_the_double_square_root_rounded_once() -> None:
    # sqrt of the float32 var is another float32 for some of these: torch's is sqrt in double
    x = _rows((4000, 6), np.float32, 11)
    want = torch.from_numpy(x).std(1).numpy()
    with torch_order():
        ours = gc.std(gc.Tensor(x), 1).data
        var = gc.var(gc.Tensor(x), 1).data
    assert np.array_equal(ours, want)
    assert not np.array_equal(np.sqrt(var), want)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_group_norm_in_torch_order_is_torchs_to_the_bit(dtype: type, affine: str) -> None:
    cases = [((4, 6, 5), 3), ((2, 4, 8, 8), 2), ((3, 6, 7, 3), 6), ((2, 8, 100), 4), ((5, 4), 2)]
    for shape, groups in cases + [((2, 6, 300), 1), ((3, 4, 9, 9), 4)]:
        x = _rows(shape, dtype, sum(shape))
        c = shape[1]
        w = _rows((c,), dtype, c + 1) if affine in ("weight", "both") else None
        b = _rows((c,), dtype, c + 2) if affine in ("bias", "both") else None
        want = torch.nn.functional.group_norm(
            torch.from_numpy(x),
            groups,
            *(None if a is None else torch.from_numpy(a) for a in (w, b)),
        ).numpy()
        with torch_order():
            operands = (None if a is None else gc.Tensor(a) for a in (w, b))
            ours = gc.group_norm(gc.Tensor(x), groups, *operands)
        assert np.array_equal(ours.data, want), (shape, groups)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_in_torch_order_is_torchs_to_the_bit(dtype: type, training: bool) -> None:
    shapes = [(8, 5), (3, 20), (64, 10), (4, 3, 7), (5, 2, 4, 4), (3, 4, 1), (2, 3, 300)]
    for shape in shapes:
        if training and dtype == np.float64 and len(shape) > 2 and math.prod(shape[2:]) > 1:
            continue  # not pinned down: numpy's composite (see moments.batch_norm_like_torch)
        x = _rows(shape, dtype, sum(shape))
        c = shape[1]
        w, b, mean = (_rows((c,), dtype, c + k) for k in (1, 2, 3))
        var = np.random.default_rng(c).uniform(0.5, 2, c).astype(dtype)
        for weight, bias in ((w, b), (None, None), (w, None)):
            want = torch.nn.functional.batch_norm(
                *(None if a is None else torch.from_numpy(a.copy()) for a in (x, mean, var)),
                *(None if a is None else torch.from_numpy(a) for a in (weight, bias)),
                training,
            ).numpy()
            with torch_order():
                operands = (None if a is None else gc.Tensor(a) for a in (weight, bias))
                ours = gc.batch_norm(
                    gc.Tensor(x), gc.Tensor(mean), gc.Tensor(var), *operands, training
                )
            assert np.array_equal(ours.data, want), (shape, weight is None, bias is None)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("kind, shape", [("BatchNorm1d", (8, 5)), ("BatchNorm1d", (6, 3, 11)),
                                         ("BatchNorm2d", (4, 3, 5, 5))])  # fmt: skip
def test_batch_norm_modules_running_statistics_are_torchs(kind: str, shape: tuple) -> None:
    from gradcli import nn

    ours = getattr(nn, kind)(shape[1], dtype=np.float32)
    theirs = getattr(torch.nn, kind)(shape[1])
    for step in range(3):
        x = _rows(shape, np.float32, step)
        want = theirs(torch.from_numpy(x)).detach().numpy()
        with torch_order():
            got = ours(gc.Tensor(x)).data
        assert np.array_equal(got, want), step
        assert np.array_equal(ours.running_mean.data, theirs.running_mean.numpy()), step
        assert np.array_equal(ours.running_var.data, theirs.running_var.numpy()), step
    ours.eval()
    theirs.eval()
    x = _rows(shape, np.float32, 9)
    with torch_order():
        got = ours(gc.Tensor(x)).data
    assert np.array_equal(got, theirs(torch.from_numpy(x)).detach().numpy())
