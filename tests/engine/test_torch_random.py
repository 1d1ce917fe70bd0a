"""torch's CPU random numbers, bit for bit (gradcli/engine/torch_random).

The table test draws every sampler at every size of the issue's list, for several seeds and
both float dtypes, from gradcli's generator and from torch 2.13's, and asks for the same
bits and the same generator state afterwards (each case draws twice, so that the normal a
scalar Box-Muller keeps is used). Without torch, the first numbers of a few seeds, copied
from torch, are checked instead.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from gradcli.base.engine_errors import DomainError
from gradcli.engine.torch_random import entered, get_rng_state, in_force, set_rng_state, using
from gradcli.engine.torch_random import init as I
from gradcli.engine.torch_random import samplers as S
from gradcli.engine.torch_random.fused import fma32, fma64
from gradcli.engine.torch_random.generator import STATE_BYTES, Generator

SIZES = (1, 7, 15, 16, 17, 100, 1000)
SEEDS = (0, 1, 123, 2**40 + 7)
DTYPES = ("float32", "float64")


def _seeded(seed: int = 0) -> Generator:
    return Generator().manual_seed(seed)


# -- the first numbers, copied from torch 2.13


def test_rand_of_seed_0_is_torchs():
    assert S.uniform(_seeded(), (3,)).tolist() == [
        0.49625658988952637,
        0.7682217955589294,
        0.08847743272781372,
    ]
    assert S.uniform(_seeded(), (2,), np.float64).tolist() == [
        0.9700530018065531,
        0.707819864399788,
    ]


def test_randn_of_seed_0_is_torchs_on_both_paths():
    scalar = [1.5409960746765137, -0.293428897857666, -2.1787893772125244]
    assert S.normal(_seeded(), (3,)).tolist() == scalar
    assert S.normal(_seeded(), (2,), np.float64).tolist() == [
        1.5409961082440433,
        -0.2934289057609464,
    ]
    generator = _seeded()
    first = S.normal(generator, (17,))
    second = S.normal(generator, (17,))
    assert first[:2].tolist() == [-1.1258398294448853, -1.6959311962127686]
    assert second[-1] == np.float32(0.1885535717010498)


def test_whole_numbers_of_seed_0_are_torchs():
    generator = _seeded()
    assert S.randint(generator, 0, 10, (6,)).tolist() == [4, 9, 3, 0, 3, 9]
    assert S.randperm(generator, 8).tolist() == [3, 4, 0, 6, 5, 7, 2, 1]
    generator = _seeded()
    assert S.multinomial(generator, np.array([0.1, 0.2, 0.7], np.float32), 4, True).tolist() == [
        2,
        2,
        2,
        2,
    ]
    assert S.bernoulli_tensor(generator, np.full(5, 0.5, np.float32)).tolist() == [1, 0, 1, 1, 1]


def test_the_state_is_laid_out_as_torchs():
    generator = _seeded(42)
    S.uniform(generator, (2,))
    state = generator.get_state()
    assert state.dtype == np.uint8 and state.size == STATE_BYTES == 5056
    # seed 42, left 623 (0x26f), seeded 1, next 2: torch's first 24 bytes after rand(2)
    assert state[:16].tolist() == [42, 0, 0, 0, 0, 0, 0, 0, 111, 2, 0, 0, 1, 0, 0, 0]
    assert state[16:24].tolist() == [2, 0, 0, 0, 0, 0, 0, 0]


def test_a_saved_state_replays_the_same_numbers_and_the_kept_normal():
    generator = _seeded(5)
    S.normal(generator, (3,))  # keeps the second normal of its last pair
    saved = generator.get_state()
    first = [S.normal(generator, (1,)), S.uniform(generator, (700,)), S.normal(generator, (20,))]
    generator.manual_seed(99)
    generator.set_state(saved)
    again = [S.normal(generator, (1,)), S.uniform(generator, (700,)), S.normal(generator, (20,))]
    for a, b in zip(first, again):
        assert np.array_equal(a, b)


def test_the_state_in_force_is_saved_and_restored():
    generator = _seeded(8)
    with using(generator):
        saved = get_rng_state()
        first = S.normal(in_force(), (5,))
        set_rng_state(saved)
        assert np.array_equal(S.normal(in_force(), (5,)), first)
    assert entered() is None


def test_a_bad_state_is_refused():
    with pytest.raises(DomainError, match="size 5056"):
        _seeded().set_state(np.zeros(10, np.uint8))
    with pytest.raises(DomainError, match="Invalid mt19937 state"):
        _seeded().set_state(np.zeros(STATE_BYTES, np.uint8))  # left 0


def test_seeds_are_taken_as_torch_takes_them():
    assert _seeded(-1).initial_seed() == 2**64 - 1
    assert _seeded(2**32 + 3).initial_seed() == 2**32 + 3
    # the twister takes the low 32 bits
    assert np.array_equal(S.uniform(_seeded(2**32 + 3), (5,)), S.uniform(_seeded(3), (5,)))
    with pytest.raises(DomainError, match="Overflow"):
        _seeded(2**64)
    with pytest.raises(DomainError, match="whole number"):
        _seeded("x")  # type: ignore[arg-type]


def test_samplers_refuse_what_torch_refuses():
    with pytest.raises(DomainError, match="from=3 >= to=3"):
        S.randint(_seeded(), 3, 3, (2,))
    with pytest.raises(DomainError, match="std >= 0.0"):
        S.normal(_seeded(), (2,), std=-1.0)
    with pytest.raises(DomainError, match="n_sample > prob_dist"):
        S.multinomial(_seeded(), np.ones(3), 4, replacement=False)
    with pytest.raises(DomainError, match="sum of probabilities"):
        S.multinomial(_seeded(), np.zeros(3), 1)


def test_dropout_draws_nothing_for_p_0_or_1():
    generator = _seeded()
    assert S.dropout_mask(generator, (4,), 0.0).tolist() == [1, 1, 1, 1]
    assert S.dropout_mask(generator, (4,), 1.0).tolist() == [0, 0, 0, 0]
    assert np.array_equal(generator.get_state(), _seeded().get_state())


def test_a_million_draws_match_one_at_a_time():
    """The block twist (227 words a step) agrees with drawing in small pieces."""
    generator, pieces = _seeded(7), _seeded(7)
    whole = generator.random(5000)
    parts = np.concatenate([pieces.random(n) for n in (1, 622, 1, 1, 1500, 2875)])
    assert np.array_equal(whole, parts)
    assert np.array_equal(generator.get_state(), pieces.get_state())


# -- the fused multiply-add, against exact arithmetic


def _exact_fma(a: float, b: float, c: float) -> Fraction:
    return Fraction(a) * Fraction(b) + Fraction(c)


def test_fma64_rounds_once():
    rng = random.Random(3)
    cases = [(rng.uniform(-2, 2), rng.uniform(-2, 2), rng.uniform(-2, 2)) for _ in range(3000)]
    # products whose low half decides a tie: (1 + 2^-30)(1 + 2^-23) and the like
    for k in range(1, 30):
        a = 1 + 2.0**-k
        b = 1 + 2.0 ** (k - 53)
        cases += [(a, b, -1.0), (a, b, 2.0**-60), (a, -b, 1.0), (a, b, -(2.0 ** (k - 53)))]
    # the last addition ties and the product's rounding error breaks the tie:
    # 2^-53 (1 - 2^-54) + 1 + 2^-52 is just below half-way, so it rounds down
    low, high = 2.0**-26 * (1 + 2.0**-27), 2.0**-27 * (1 - 2.0**-27)
    cases += [(low, high, 1 + 2.0**-52), (-low, high, -(1 + 2.0**-52))]
    a, b, c = (np.array(column) for column in zip(*cases))
    fused = fma64(a, b, c)
    expected = [float(_exact_fma(*case)) for case in cases]
    assert fused.tolist() == expected


def _to_float32(exact: Fraction) -> float:
    """``exact`` rounded once to the nearest float32 (ties to even)."""
    near = np.float32(float(exact))
    candidates = [near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, -np.inf)]
    best = min(abs(Fraction(float(c)) - exact) for c in candidates)
    closest = [c for c in candidates if abs(Fraction(float(c)) - exact) == best]
    even = [c for c in closest if int(np.array(c).view(np.uint32)) % 2 == 0]
    return float((even or closest)[0])


def test_fma32_rounds_once():
    rng = np.random.default_rng(4)
    a, b, c = (rng.uniform(-2, 2, 3000).astype(np.float32) for _ in range(3))
    # the double sum lands half-way between two floats and the product's lost low bits
    # decide: 1 + 2^-23 - (2^-24 - 2^-64) rounds down, 1 + 2^-23 - 2^-24 + 2^-64 up
    near = 2.0**-12 * (1 + 2.0**-20)
    other = 2.0**-12 * (1 - 2.0**-20)
    ties_a = np.array([near, -near, near, -near], np.float32)
    ties_b = np.array([other, other, -other, -other], np.float32)
    ties_c = np.array([1 + 2.0**-23, 1 + 2.0**-23, 1 + 2.0**-23, -(1 + 2.0**-23)], np.float32)
    a, b, c = (np.concatenate(pair) for pair in ((a, ties_a), (b, ties_b), (c, ties_c)))
    expected = [_to_float32(_exact_fma(float(x), float(y), float(z))) for x, y, z in zip(a, b, c)]
    assert fma32(a, b, c).tolist() == expected
    plain = (a.astype(np.float64) * b + c).astype(np.float32)  # rounded twice
    assert plain[-4:].tolist() != expected[-4:]  # the cases the correction is for


# -- the table against torch


def _table() -> dict:
    """sampler name: (gradcli's draw, torch's draw), each a function of (generator, size,
    dtype name)."""
    import torch

    def t(name: str):
        return getattr(torch, name)

    probabilities = lambda n, d: np.linspace(0, 1, n).astype(d)  # noqa: E731
    weights = lambda n, d: np.arange(1, n + 1).astype(d)  # noqa: E731
    return {
        "rand": (
            lambda g, n, d: S.uniform(g, (n,), d),
            lambda g, n, d: torch.rand(n, generator=g, dtype=t(d)),
        ),
        "uniform_": (
            lambda g, n, d: S.uniform(g, (n,), d, -0.37, 1.3),
            lambda g, n, d: torch.empty(n, dtype=t(d)).uniform_(-0.37, 1.3, generator=g),
        ),
        "randn": (
            lambda g, n, d: S.normal(g, (n,), d),
            lambda g, n, d: torch.randn(n, generator=g, dtype=t(d)),
        ),
        "normal_": (
            lambda g, n, d: S.normal(g, (n,), d, 0.3, 0.7),
            lambda g, n, d: torch.empty(n, dtype=t(d)).normal_(0.3, 0.7, generator=g),
        ),
        "randn 2-d": (
            lambda g, n, d: S.normal(g, (n, 3), d),
            lambda g, n, d: torch.randn(n, 3, generator=g, dtype=t(d)),
        ),
        "exponential_": (
            lambda g, n, d: S.exponential(g, (n,), d, 1.7),
            lambda g, n, d: torch.empty(n, dtype=t(d)).exponential_(1.7, generator=g),
        ),
        "bernoulli_(p)": (
            lambda g, n, d: S.bernoulli(g, (n,), 0.3, d),
            lambda g, n, d: torch.empty(n, dtype=t(d)).bernoulli_(0.3, generator=g),
        ),
        "bernoulli(tensor)": (
            lambda g, n, d: S.bernoulli_tensor(g, probabilities(n, d)),
            lambda g, n, d: torch.bernoulli(torch.linspace(0, 1, n, dtype=t(d)), generator=g),
        ),
        "randint": (
            lambda g, n, d: S.randint(g, -3, 10, (n,), d),
            lambda g, n, d: torch.randint(-3, 10, (n,), generator=g, dtype=t(d)),
        ),
        "randint int64 wide": (
            lambda g, n, d: S.randint(g, 0, 2**40, (n,)),
            lambda g, n, d: torch.randint(0, 2**40, (n,), generator=g),
        ),
        "randint int32": (
            lambda g, n, d: S.randint(g, 5, 17, (n,), np.int32),
            lambda g, n, d: torch.randint(5, 17, (n,), generator=g, dtype=torch.int32),
        ),
        "randperm": (
            lambda g, n, d: S.randperm(g, n),
            lambda g, n, d: torch.randperm(n, generator=g),
        ),
        "multinomial with replacement": (
            lambda g, n, d: S.multinomial(g, weights(7, d), n, True),
            lambda g, n, d: torch.multinomial(torch.arange(1, 8, dtype=t(d)), n, True, generator=g),
        ),
        "multinomial without replacement": (
            lambda g, n, d: S.multinomial(g, weights(n, d), min(n, 5)),
            lambda g, n, d: torch.multinomial(
                torch.arange(1, n + 1, dtype=t(d)), min(n, 5), generator=g
            ),
        ),
        "multinomial 2-d with replacement": (
            lambda g, n, d: S.multinomial(
                g, np.stack([weights(5, d), weights(5, d)[::-1]]), n, True
            ),
            lambda g, n, d: torch.multinomial(
                torch.stack([torch.arange(1, 6, dtype=t(d)), torch.arange(5, 0, -1, dtype=t(d))]),
                n,
                True,
                generator=g,
            ),
        ),
        "multinomial 2-d": (
            lambda g, n, d: S.multinomial(g, np.stack([weights(n, d)] * 2), 1),
            lambda g, n, d: torch.multinomial(
                torch.arange(1, n + 1, dtype=t(d)).repeat(2, 1), 1, generator=g
            ),
        ),
    }


TABLE_NAMES = (
    "rand",
    "uniform_",
    "randn",
    "normal_",
    "randn 2-d",
    "exponential_",
    "bernoulli_(p)",
    "bernoulli(tensor)",
    "randint",
    "randint int64 wide",
    "randint int32",
    "randperm",
    "multinomial with replacement",
    "multinomial without replacement",
    "multinomial 2-d",
    "multinomial 2-d with replacement",
)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sampler", TABLE_NAMES)
def test_every_sampler_draws_torchs_bits(sampler, dtype):
    torch = pytest.importorskip("torch")
    ours, theirs = _table()[sampler]
    for seed in SEEDS:
        for size in SIZES:
            mine, reference = Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
            for draw in (1, 2):  # the second draw uses what the first left (a kept normal)
                a, b = ours(mine, size, dtype), theirs(reference, size, dtype).numpy()
                where = f"{sampler} {dtype} seed {seed} size {size} draw {draw}"
                assert _same_bits(a, b), where
            assert np.array_equal(mine.get_state(), reference.get_state().numpy()), where


def _forms(torch, functional, size: int, dtype: str) -> dict:
    """Dropout and torch.normal's forms at one size: (gradcli's, torch's) draws."""
    kind = getattr(torch, dtype)
    x = torch.linspace(-1, 2, size, dtype=kind)
    mean = torch.linspace(-1, 1, size, dtype=kind)
    std = torch.linspace(0.1, 2, size, dtype=kind)
    return {
        "dropout": (
            lambda g: S.dropout(g, x.numpy(), 0.3),
            lambda: functional.dropout(x, 0.3, True),
        ),
        "normal(tensor, tensor)": (
            lambda g: S.normal_of_tensors(g, mean.numpy(), std.numpy(), dtype),
            lambda: torch.normal(mean, std),
        ),
        "normal(tensor, float)": (
            lambda g: S.normal_of_tensors(g, mean.numpy(), 0.7, dtype),
            lambda: torch.normal(mean, 0.7),
        ),
        "normal(float, tensor)": (
            lambda g: S.normal_of_tensors(g, 0.3, std.numpy(), dtype),
            lambda: torch.normal(0.3, std),
        ),
        "normal(float, float, size)": (
            lambda g: S.normal(g, (size,), dtype, 0.3, 0.7),
            lambda: torch.normal(0.3, 0.7, (size,), dtype=kind),
        ),
    }


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_and_the_normal_forms_are_torchs(dtype):
    torch = pytest.importorskip("torch")
    functional = pytest.importorskip("torch.nn.functional")
    for size in SIZES:
        for name, (ours, theirs) in _forms(torch, functional, size, dtype).items():
            torch.manual_seed(size)
            reference = theirs().numpy()
            generator = _seeded(size)
            assert _same_bits(ours(generator), reference), f"{name} {dtype} size {size}"
            assert np.array_equal(generator.get_state(), torch.get_rng_state().numpy())


def test_states_pass_between_torch_and_gradcli():
    torch = pytest.importorskip("torch")
    reference = torch.Generator().manual_seed(11)
    torch.randn(5, generator=reference)  # a kept normal in the state
    mine = Generator().set_state(reference.get_state().numpy())
    assert _same_bits(S.normal(mine, (3,)), torch.randn(3, generator=reference).numpy())
    back = torch.Generator().set_state(torch.from_numpy(mine.get_state()))
    assert _same_bits(S.uniform(mine, (9,)), torch.rand(9, generator=back).numpy())


def test_mixed_sequences_follow_torch():
    """Scalar and vector normals, uniforms and integers interleaved on one generator."""
    torch = pytest.importorskip("torch")
    mine, reference = _seeded(2024), torch.Generator().manual_seed(2024)
    steps = [
        (lambda g: S.normal(g, (3,)), lambda g: torch.randn(3, generator=g)),
        (lambda g: S.uniform(g, (5,)), lambda g: torch.rand(5, generator=g)),
        (lambda g: S.normal(g, (33,)), lambda g: torch.randn(33, generator=g)),
        (
            lambda g: S.normal(g, (1,), "float64"),
            lambda g: torch.randn(1, generator=g, dtype=torch.float64),
        ),
        (lambda g: S.randperm(g, 30), lambda g: torch.randperm(30, generator=g)),
    ]
    for ours, theirs in steps:
        a = ours(mine)
        b = theirs(reference).numpy()
        assert _same_bits(a, b)
    assert np.array_equal(mine.get_state(), reference.get_state().numpy())


# -- nn.init


def test_init_bounds_follow_torchs_formulas():
    assert I.fans((10, 8)) == (8, 10) and I.fans((6, 2, 3, 3)) == (18, 54)
    assert I.gain("leaky_relu", math.sqrt(5)) == math.sqrt(2.0 / 6)
    assert I.gain("tanh") == 5.0 / 3 and I.gain("conv2d") == 1
    with pytest.raises(DomainError, match="fewer than 2 dimensions"):
        I.kaiming(_seeded(), (3,), np.float32)
    with pytest.raises(DomainError, match="Unsupported nonlinearity"):
        I.gain("swish")
    with pytest.raises(DomainError, match="Mode fan_both not supported"):
        I.kaiming(_seeded(), (3, 2), np.float32, "normal", mode="fan_both")
    # what nn.Linear(3, 1) holds after torch.manual_seed(0), copied from torch
    weight, bias = I.linear_default(_seeded(), (1, 3), np.float32)
    assert weight.tolist() == [[-0.004322517663240433, 0.3097158372402191, -0.4751853346824646]]
    assert bias.tolist() == [-0.4248946011066437]


INIT_SHAPES = ((3, 1), (1, 3), (10, 8), (4, 3, 5), (6, 2, 3, 3), (17, 16), (40, 25))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nn_init_draws_torchs_numbers(dtype):
    torch = pytest.importorskip("torch")
    init, kind = torch.nn.init, getattr(torch, dtype)
    cases = {
        "xavier_uniform_": (
            lambda g, s: I.xavier_uniform(g, s, dtype, 1.3),
            lambda g, s: init.xavier_uniform_(torch.empty(s, dtype=kind), 1.3, generator=g),
        ),
        "xavier_normal_": (
            lambda g, s: I.xavier_normal(g, s, dtype),
            lambda g, s: init.xavier_normal_(torch.empty(s, dtype=kind), generator=g),
        ),
        "kaiming_uniform_": (
            lambda g, s: I.kaiming(g, s, dtype, a=math.sqrt(5)),
            lambda g, s: init.kaiming_uniform_(
                torch.empty(s, dtype=kind), a=math.sqrt(5), generator=g
            ),
        ),
        "kaiming_normal_": (
            lambda g, s: I.kaiming(g, s, dtype, "normal", mode="fan_out", nonlinearity="relu"),
            lambda g, s: init.kaiming_normal_(
                torch.empty(s, dtype=kind), mode="fan_out", nonlinearity="relu", generator=g
            ),
        ),
    }
    for shape in INIT_SHAPES:
        for seed in SEEDS:
            for name, (ours, theirs) in cases.items():
                a = ours(Generator().manual_seed(seed), shape)
                b = theirs(torch.Generator().manual_seed(seed), shape).numpy()
                assert _same_bits(a, b), f"{name} {dtype} {shape} seed {seed}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_layers_are_made_with_torchs_numbers(dtype):
    torch = pytest.importorskip("torch")
    kind = getattr(torch, dtype)
    for seed in SEEDS[:2]:
        layers = {
            (1, 3): lambda: torch.nn.Linear(3, 1, dtype=kind),
            (20, 17): lambda: torch.nn.Linear(17, 20, dtype=kind),
            (4, 2, 3): lambda: torch.nn.Conv1d(2, 4, 3, dtype=kind),
            (5, 3, 2, 2): lambda: torch.nn.Conv2d(3, 5, 2, dtype=kind),
        }
        for shape, make in layers.items():
            torch.manual_seed(seed)
            layer = make()
            weight, bias = I.linear_default(_seeded(seed), shape, dtype)
            assert _same_bits(weight, layer.weight.detach().numpy()), (shape, seed)
            assert _same_bits(bias, layer.bias.detach().numpy()), (shape, seed)
