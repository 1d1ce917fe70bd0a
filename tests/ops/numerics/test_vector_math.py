"""float32 exponentials and logarithms as torch's vector kernels compute them
(ops/numerics/vector_math.py): SLEEF's expf, logf, expm1f and log1pf, and the kernels built on them
(sigmoid, softmax and log_softmax over the last dimension), bit for bit against torch where
it is importable, and on hand-computed values without it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli.ops import library as gc
from gradcli.ops.numerics import vector_math as vm
from gradcli.ops.numerics.summation import torch_order

F = np.float32
SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, -1e-40, 1.0, -1.0]
    + [88.72, 88.73, -87.33, -87.34, 100.0, 100.1, -103.9, -104.0, -104.1, 3.4e38, -3.4e38],
    F,
)


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(threads)


def _sample(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [rng.uniform(-110, 110, n // 2), rng.standard_normal(n - n // 2) * 4]
    ).astype(F)


def _same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two float32 arrays differ (every NaN equal to every NaN)."""
    a, b = np.asarray(a, F), np.asarray(b, F)
    return (a.view(np.int32) != b.view(np.int32)) & ~(np.isnan(a) & np.isnan(b))


def _assert_bits(got: np.ndarray, want: np.ndarray, x: np.ndarray) -> None:
    bad = _same_bits(got, want).ravel()
    assert not bad.any(), f"{bad.sum()} of {bad.size} differ, first at {x.ravel()[bad][:5]}"


# -- against torch ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [200_000 + 17, *range(1, 70, 3)])
def test_sigmoid_matches_torch(torch, n):
    x = np.concatenate([SPECIAL, _sample(n, n)])[:n] if n < 100 else _sample(n, n)
    _assert_bits(vm.sigmoid(x), torch.sigmoid(torch.from_numpy(x)).numpy(), x)


def test_sigmoid_special_values_in_the_vector_path(torch):
    x = np.resize(SPECIAL, 64)  # whole 32-element steps: every value through SLEEF's exp
    _assert_bits(vm.sigmoid(x), torch.sigmoid(torch.from_numpy(x)).numpy(), x)


def test_sigmoid_follows_memory_order(torch):
    x = _sample(48 * 35, 3).reshape(48, 35)
    t = torch.from_numpy(x.T.copy()).T  # transposed: a tail of 32-element steps in memory
    _assert_bits(vm.sigmoid(np.asfortranarray(x)), torch.sigmoid(t).numpy(), x.ravel())


@pytest.mark.parametrize("n", [1000, 100_037])
def test_silu_matches_torch(torch, n):
    x = _sample(n, n)
    _assert_bits(vm.silu(x), torch.nn.functional.silu(torch.from_numpy(x)).numpy(), x)


def test_sigmoid_of_a_strided_view_takes_the_scalar_path(torch):
    # every element through the C library's expf (c_exp)
    x = np.concatenate([np.repeat(SPECIAL, 3), _sample(3 * 100_000, 5)])
    _assert_bits(vm.sigmoid(x[::3]), torch.sigmoid(torch.from_numpy(x)[::3]).numpy(), x[::3])


def test_engine_sigmoid_and_silu_are_torchs_in_torch_order(torch):
    x = _sample(1000, 4)
    with torch_order():
        got = gc.sigmoid(gc.tensor(x, dtype=gc.float32)).data
        silu = gc.silu(gc.tensor(x, dtype=gc.float32)).data
    _assert_bits(got, torch.sigmoid(torch.from_numpy(x)).numpy(), x)
    _assert_bits(silu, torch.nn.functional.silu(torch.from_numpy(x)).numpy(), x)


@pytest.mark.parametrize("width", [1, 2, 5, 15, 16, 17, 31, 32, 37, 100, 257])
def test_softmax_and_log_softmax_last_dim_match_torch(torch, width):
    x = (np.random.default_rng(width).standard_normal((40_000 // width + 3, width)) * 5).astype(F)
    t = torch.from_numpy(x)
    _assert_bits(vm.softmax_last(x), torch.softmax(t, -1).numpy(), x)
    _assert_bits(vm.log_softmax_last(x), torch.log_softmax(t, -1).numpy(), x)
    with torch_order():
        _assert_bits(
            gc.log_softmax(gc.tensor(x, dtype=gc.float32), -1).data,
            torch.log_softmax(t, -1).numpy(),
            x,
        )


@pytest.mark.parametrize("width", [3, 16, 17, 33, 48, 100])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_gradients_match_torch(torch, width, name):
    rng = np.random.default_rng(width)
    x = (rng.standard_normal((30_000 // width, width)) * 3).astype(F)
    g = rng.standard_normal(x.shape).astype(F)
    t = torch.from_numpy(x).requires_grad_()
    getattr(torch, name)(t, 1).backward(torch.from_numpy(g))
    with torch_order():
        ours = gc.tensor(x, dtype=gc.float32, requires_grad=True)
        getattr(gc, name)(ours, 1).backward(gc.tensor(g, dtype=gc.float32))
        # a recorded gradient (create_graph) stays differentiable: the same values to float32
        again = gc.tensor(x, dtype=gc.float32, requires_grad=True)
        (first,) = gc.grad(getattr(gc, name)(again, 1), again, gc.tensor(g), create_graph=True)
    _assert_bits(ours.grad.data, t.grad.numpy(), x)
    assert first.requires_grad
    np.testing.assert_allclose(first.data, t.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("shape", "dim"),
    [((30, 16), 0), ((5, 40), 0), ((3, 7, 20), 1), ((6, 30, 2, 9), 1), ((50, 1), 0)],
)
def test_softmax_over_another_dim_matches_torch(torch, shape, dim):
    x = (np.random.default_rng(len(shape) + dim).standard_normal(shape) * 4).astype(F)
    want = torch.softmax(torch.from_numpy(x), dim).numpy()
    _assert_bits(vm.softmax_inner(x, dim), want, x.ravel())
    with torch_order():
        _assert_bits(gc.softmax(gc.tensor(x, dtype=gc.float32), dim).data, want, x.ravel())


def test_softmax_rows_with_special_values(torch):
    x = np.array([[0.0, -np.inf, 1.0, 3e38], [-np.inf, 2.0, -1e-40, 5.0], [1e-45, 0, -0.0, 80]], F)
    x = np.tile(x, (1, 5))
    t = torch.from_numpy(x)
    _assert_bits(vm.softmax_last(x), torch.softmax(t, -1).numpy(), x)
    _assert_bits(vm.log_softmax_last(x), torch.log_softmax(t, -1).numpy(), x)


@pytest.mark.parametrize("name", ["expm1", "log1p"])
def test_expm1_and_log1p_match_torch(torch, name):
    rng = np.random.default_rng(11)
    x = np.concatenate(
        [
            _sample(200_000, 12),
            rng.uniform(-1, 3, 50_000).astype(F),
            (rng.standard_normal(50_000) * 1e-4).astype(F),
            rng.integers(0, 2**32, 50_000, dtype=np.uint64).astype(np.uint32).view(F),
            SPECIAL,
            np.array([-0.99999994, 1e38, 2e38, -16.6, -16.7], F),
        ]
    )
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    _assert_bits(getattr(vm, f"sleef_{name}")(x), want, x)
    for n in (1, 7, 33):  # small tensors take the same (vector) path in torch
        _assert_bits(getattr(vm, f"sleef_{name}")(x[:n]), want[:n], x[:n])
    with torch_order():
        got = getattr(gc, name)(gc.tensor(x, dtype=gc.float32)).data
    _assert_bits(got, want, x)


def test_cross_entropy_with_probabilities_sums_as_torch(torch):
    torch.manual_seed(283)
    x, target = torch.randn(3, 5), torch.randn(3, 5)
    with torch_order():
        got = gc.cross_entropy(
            gc.tensor(x.numpy(), dtype=gc.float32), gc.tensor(target.numpy(), dtype=gc.float32)
        )
    assert got.item() == torch.nn.functional.cross_entropy(x, target).item()


# -- without torch: hand-computed values -----------------------------------------------------


def test_exponentials_at_exact_points():
    assert vm.sleef_exp(np.array([0.0, -0.0], F)).tolist() == [1.0, 1.0]
    assert vm.sleef_exp(np.array([-200.0], F))[0] == 0.0
    assert vm.sleef_exp(np.array([np.inf, 100.5, -np.inf, -104.5], F)).tolist() == [
        math.inf,
        math.inf,
        0.0,
        0.0,
    ]
    assert np.isnan(vm.sleef_exp(np.array([np.nan], F))[0])


def test_c_exp_at_exact_points_and_within_its_bound():
    x = np.array([0.0, -0.0, np.inf, -np.inf, 88.73, -104.0, 1.0], F)
    assert vm.c_exp(x).tolist() == [1.0, 1.0, math.inf, 0.0, math.inf, 0.0, F(math.e)]
    assert np.isnan(vm.c_exp(np.array([np.nan], F))[0])
    y = _sample(50_000, 8)
    exact = np.exp(y.astype(np.float64))
    finite = (exact < 3e38) & (exact > 1e-37)
    ulps = np.spacing(exact[finite].astype(F)).astype(np.float64)
    assert np.all(np.abs(vm.c_exp(y)[finite] - exact[finite]) <= 0.502 * ulps)


def test_logarithm_at_exact_points():
    x = np.array([1.0, 0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 2.0**-149, 2.0**127], F)
    got = vm.sleef_log(x)
    assert got[0] == 0.0 and got[1] == got[2] == -math.inf and got[4] == math.inf
    assert np.isnan(got[[3, 5, 6]]).all()
    assert got[7] == F(-149 * math.log(2)) and got[8] == F(127 * math.log(2))


def test_expm1_and_log1p_at_exact_points():
    x = np.array([0.0, -0.0, np.inf, -20.0, -np.inf, 100.0], F)
    assert vm.sleef_expm1(x).tolist() == [0.0, 0.0, math.inf, -1.0, -1.0, math.inf]
    assert np.signbit(vm.sleef_expm1(x))[1]
    y = np.array([0.0, -0.0, -1.0, np.inf, 1.0, 2.0**-30], F)
    got = vm.sleef_log1p(y)
    assert got[:4].tolist() == [0.0, 0.0, -math.inf, math.inf] and np.signbit(got[1])
    assert got[4] == F(math.log(2)) and got[5] == F(2.0**-30)  # log1p(t) = t - t*t/2 + ...
    assert np.isnan(vm.sleef_log1p(np.array([-2.0, np.nan], F))).all()


def test_within_an_ulp_of_the_exact_values():
    x = _sample(20_000, 9)
    exact = np.exp(x.astype(np.float64))
    finite = (exact < 3e38) & (exact > 1e-37)
    ulps = np.spacing(exact[finite].astype(F)).astype(np.float64)
    assert np.all(np.abs(vm.sleef_exp(x)[finite] - exact[finite]) <= ulps)
    y = np.abs(x) + F(1e-3)
    ulps = np.spacing(np.log(y.astype(np.float64)).astype(F)).astype(np.float64)
    assert np.all(np.abs(vm.sleef_log(y) - np.log(y.astype(np.float64))) <= np.abs(ulps))


def test_lane_sum_order():
    # a vector's lanes (1e8 in lane 0, 1 in the others; float32's spacing at 1e8 is 8) folded
    # in halves: lane 0 meets 1 (lost), then 2 (lost), then 4 (a tie, to even: lost), then,
    # with 16 lanes, 8
    row = np.array([[1e8] + [1.0] * (vm.LANES - 1)], F)
    assert vm.lane_sum(row)[0, 0] == F(1e8 + 8 if vm.LANES == 16 else 1e8)
    short = np.array([[1e8] + [1.0] * (vm.LANES - 2)], F)  # under a vector: one after another
    assert vm.lane_sum(short)[0, 0] == F(1e8)  # every 1 lost
    # a vector and a half: the half left over goes into the first lanes (1e8 + 1, lost; 2 in
    # the others), then the folds: 1 (lost), 3 (lost), 6 (to 1e8 + 8) and, with 16 lanes, 12
    # (1e8 + 20, a tie, to even: 1e8 + 16)
    longer = np.array([[1e8] + [1.0] * (vm.LANES + vm.LANES // 2 - 1)], F)
    assert vm.lane_sum(longer)[0, 0] == F(1e8 + 16 if vm.LANES == 16 else 1e8 + 8)


def test_the_lanes_are_torchs_on_this_cpu():
    assert vm.torch_lanes(None, frozenset({"avx2", "fma"})) == 8
    assert vm.torch_lanes(None, vm.AVX512_FLAGS | {"avx2"}) == 16
    assert vm.torch_lanes(None, frozenset({"avx512f", "avx2"})) == 8  # ATen asks for all four
    assert vm.torch_lanes("avx2", vm.AVX512_FLAGS) == 8  # torch's own override
    assert vm.torch_lanes("AVX512", frozenset()) == 16
    assert vm.torch_lanes("default", vm.AVX512_FLAGS) == 8
    assert vm.torch_lanes(None, frozenset()) == 8


@pytest.mark.torch
def test_the_lanes_are_the_ones_torch_picked(torch):
    picked = torch.backends.cpu.get_cpu_capability()
    assert vm.LANES == (16 if picked == "AVX512" else 8), picked


def test_sigmoid_steps_and_tail():
    # below a step (two vectors: 32 elements with AVX-512, 16 with AVX2) every value takes the
    # scalar formula with a correctly rounded exp
    step = 2 * vm.LANES
    x = np.linspace(-30, 30, step - 1, dtype=F)
    want = F(1) / (F(1) + vm.c_exp(-x))
    assert np.array_equal(vm.sigmoid(x), want)
    z = np.concatenate([x, x[:2]])  # one step through SLEEF's exp, then one left
    assert np.array_equal(vm.sigmoid(z)[:step], F(1) / (F(1) + vm.sleef_exp(-z[:step])))
    assert vm.sigmoid(z)[step] == want[1]
    assert vm.sigmoid(np.array([0.0], F))[0] == 0.5
