"""torch's CPU samplers, drawing from a ``Generator`` exactly as torch 2.13's kernels do.

Each function returns a numpy array of the dtype and shape asked for and advances the
generator by the draws torch's kernel makes, in the order it makes them:

- uniform numbers: a float32 takes the low 24 bits of one 32-bit draw times 2**-24, a
  float64 the low 53 bits of one 64-bit draw times 2**-53; ``low + u * (high - low)`` is
  one fused multiply-add in the tensor's dtype;
- normal numbers: 16 or more elements go through the vectorized Box-Muller of torch's
  ``normal_fill`` (uniforms for every element, blocks of 16, the last partial block redrawn
  over the final 16 elements); fewer go one at a time through the scalar Box-Muller in
  double precision, which keeps the pair's second number for the next call;
- whole numbers: ``draw % range + low``, a 64-bit draw where the range needs one;
- ``randperm``: the swaps of torch's Fisher-Yates for n below 2**32 / 20, the "inside-out"
  shuffle on 64-bit draws above;
- Bernoulli draws compare a uniform with p (torch's path on CPUs other than Intel's, where
  torch hands a scalar p to MKL instead); exponential numbers are ``-log1p(-u) / lambda``;
  ``multinomial`` samples with replacement by binary search in the cumulative distribution,
  and without replacement as the largest ``p / q`` for exponential q.

Logarithms, sines and cosines of doubles come from Python's ``math`` (the C library's, as
torch's kernels call them), since numpy's vectorized ones may differ in the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError
from . import box_muller
from .fused import fma32, fma64
from .generator import Generator

f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
_LOW24 = np.uint32(0xFFFFFF)
_LOW53 = np.uint64((1 << 53) - 1)
VECTOR_NORMAL = 16  # normal_ on this many elements or more takes the vectorized path
_RANDPERM_SMALL = (2**32 - 1) // 20  # below it randperm swaps with 32-bit draws
_log = np.frompyfunc(math.log, 1, 1)
_log1p = np.frompyfunc(math.log1p, 1, 1)
_cos = np.frompyfunc(math.cos, 1, 1)
_sin = np.frompyfunc(math.sin, 1, 1)


def _count(shape: Sequence[int]) -> int:
    return math.prod(shape)


def _libm(function: Any, x: np.ndarray) -> np.ndarray:
    """The C library's double ``function`` element by element (see the module's note)."""
    if x.size == 0:
        return np.zeros(x.shape)
    return np.asarray(function(x), dtype=np.float64)


def _floating(dtype: Any) -> np.dtype:
    resolved: np.dtype = np.dtype(dtype)
    if resolved not in (f32, f64):
        raise DomainError(f"torch's samplers here make float32 or float64, not {resolved}")
    return resolved


def unit_uniforms(generator: Generator, count: int, dtype: Any) -> np.ndarray:
    """``count`` uniforms on [0, 1) as torch's ``uniform_real_distribution`` makes them."""
    if _floating(dtype) == f32:
        return np.asarray((generator.random(count) & _LOW24).astype(f32) * np.float32(2.0**-24))
    return np.asarray((generator.random64(count) & _LOW53).astype(f64) * 2.0**-53)


def uniform(
    generator: Generator,
    shape: Sequence[int],
    dtype: Any = f32,
    low: float = 0.0,
    high: float = 1.0,
) -> np.ndarray:
    """``torch.rand`` (low 0, high 1) and ``uniform_(low, high)``."""
    dtype = _floating(dtype)
    if not low <= high:
        raise DomainError(
            f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}"
        )
    u = unit_uniforms(generator, _count(shape), dtype)
    if low == 0 and high == 1:  # torch.rand: u * 1 + 0 is u
        return u.reshape(shape)
    fma = fma32 if dtype == f32 else fma64
    low_, high_ = dtype.type(low), dtype.type(high)
    return fma(u, high_ - low_, low_).astype(dtype).reshape(shape)


def _scalar_normal(generator: Generator) -> float:
    """One standard normal of the scalar path, using the kept one if there is one."""
    if generator.next_double_normal is not None:
        kept, generator.next_double_normal = generator.next_double_normal, None
        return kept
    u1, u2 = unit_uniforms(generator, 2, f64)
    radius = math.sqrt(-2.0 * math.log1p(-float(u2)))
    theta = 2.0 * math.pi * float(u1)
    generator.next_double_normal = radius * math.sin(theta)
    return radius * math.cos(theta)


def _vector_normal_double(uniforms: np.ndarray, mean: float, std: float) -> np.ndarray:
    blocks = uniforms.reshape(-1, 2, 8)
    radius = np.sqrt(-2.0 * _libm(_log, 1.0 - blocks[:, 0]))
    theta = (2.0 * math.pi) * blocks[:, 1]
    first = fma64(radius * _libm(_cos, theta), std, mean)
    second = fma64(radius * _libm(_sin, theta), std, mean)
    return np.stack([first, second], axis=1).reshape(-1)


def normal(
    generator: Generator,
    shape: Sequence[int],
    dtype: Any = f32,
    mean: float = 0.0,
    std: float = 1.0,
) -> np.ndarray:
    """``torch.randn`` (mean 0, std 1) and ``normal_(mean, std)``."""
    dtype = _floating(dtype)
    if not std >= 0:
        raise DomainError(f"normal expects std >= 0.0, but found std {std}")
    count = _count(shape)
    if count < VECTOR_NORMAL:
        values = [_scalar_normal(generator) for _ in range(count)]
        drawn = fma64(np.array(values, dtype=f64), float(std), float(mean))
        return drawn.astype(dtype).reshape(shape)
    mean_, std_ = dtype.type(mean), dtype.type(std)
    fill = box_muller.normals_from_blocks if dtype == f32 else _vector_normal_double
    uniforms = unit_uniforms(generator, count, dtype)
    whole = count - count % VECTOR_NORMAL
    out = np.empty(count, dtype=dtype)
    out[:whole] = fill(uniforms[:whole], mean_, std_)
    if whole < count:  # torch redraws the last 16 elements and turns them whole
        out[whole:] = uniforms[whole:]
        out[-VECTOR_NORMAL:] = fill(unit_uniforms(generator, VECTOR_NORMAL, dtype), mean_, std_)
    return out.reshape(shape)


def normal_of_tensors(generator: Generator, mean: Any, std: Any, dtype: Any = f32) -> np.ndarray:
    """``torch.normal(mean, std)`` where mean or std (or both) is a tensor: standard normals
    of the broadcast shape, then ``* std`` and ``+ mean`` as two roundings in the dtype (a
    tensor mean with a number std draws with that std and adds the mean)."""
    dtype = _floating(dtype)
    mean_is_tensor, std_is_tensor = isinstance(mean, np.ndarray), isinstance(std, np.ndarray)
    if not (mean_is_tensor or std_is_tensor):
        raise DomainError("normal: give a tensor mean or std, or a size")
    if std_is_tensor and std.size and not (std >= 0).all():
        raise DomainError("normal expects all elements of std >= 0.0")
    if not std_is_tensor:
        drawn = normal(generator, mean.shape, dtype, 0.0, float(std))
        return np.asarray(drawn + mean.astype(dtype))
    shape = np.broadcast_shapes(np.shape(mean), std.shape)
    scaled = normal(generator, shape, dtype) * std.astype(dtype)
    return np.asarray(scaled + np.asarray(mean, dtype=dtype))


def _whole_numbers(generator: Generator, count: int, span: int, low: int, wide: bool) -> np.ndarray:
    """``count`` numbers ``draw % span + low`` as int64; ``wide``: 64-bit draws."""
    if wide:
        drawn = generator.random64(count) % np.uint64(span)
        return np.asarray(drawn.astype(np.int64) + np.int64(low))
    return np.asarray((generator.random(count) % np.uint32(span)).astype(np.int64) + np.int64(low))


def randint(
    generator: Generator, low: int, high: int, shape: Sequence[int], dtype: Any = np.int64
) -> np.ndarray:
    """``torch.randint(low, high, shape)``: whole numbers in [low, high)."""
    dtype = np.dtype(dtype)
    low, high = int(low), int(high)
    if not low < high:
        raise DomainError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    span = high - low
    wide = span >= 2**32 and dtype in (np.dtype(np.int64), f32, f64)
    return _whole_numbers(generator, _count(shape), span, low, wide).astype(dtype).reshape(shape)


def randperm(generator: Generator, n: int, dtype: Any = np.int64) -> np.ndarray:
    """``torch.randperm(n)``: a permutation of 0..n-1."""
    n = int(n)
    if n < 0:
        raise DomainError(f"n must be non-negative, got{n}")
    order = np.arange(n, dtype=np.int64)
    if n < _RANDPERM_SMALL:
        if n > 1:
            spans = np.arange(n, 1, -1, dtype=np.uint32)  # n - i for i in 0..n-2
            picks = (generator.random(n - 1) % spans).astype(np.int64) + np.arange(n - 1)
            listed = order.tolist()
            for i, z in enumerate(picks.tolist()):
                listed[i], listed[z] = listed[z], listed[i]
            order = np.array(listed, dtype=np.int64)
    else:
        picks = generator.random64(n) % (np.arange(n, dtype=np.uint64) + np.uint64(1))
        listed = [0] * n
        for i, z in enumerate(picks.tolist()):
            listed[i] = listed[z]
            listed[z] = i
        order = np.array(listed, dtype=np.int64)
    return order.astype(dtype)


def bernoulli(generator: Generator, shape: Sequence[int], p: float, dtype: Any = f32) -> np.ndarray:
    """``bernoulli_(p)`` for a number p: 1 where a double uniform falls below p."""
    if not 0 <= p <= 1:
        raise DomainError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    u = unit_uniforms(generator, _count(shape), f64)
    return (u < float(p)).astype(dtype).reshape(shape)


def bernoulli_tensor(generator: Generator, p: np.ndarray, dtype: Any = None) -> np.ndarray:
    """``torch.bernoulli(p)`` for a tensor of probabilities (a float64 p compares double
    uniforms, any other float32 ones); the result has p's dtype unless told."""
    p = np.asarray(p)
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise DomainError("bernoulli: all the probabilities must be in [0, 1]")
    wide = p.dtype == f64
    u = unit_uniforms(generator, p.size, f64 if wide else f32).reshape(p.shape)
    threshold = p if wide else p.astype(f32)
    return (u < threshold).astype(dtype or p.dtype)


def exponential(
    generator: Generator, shape: Sequence[int], dtype: Any = f32, rate: float = 1.0
) -> np.ndarray:
    """``exponential_(lambd)``: ``-1 / lambd * log1p(-u)`` from double uniforms."""
    if not rate > 0:
        raise DomainError(f"exponential_ expects lambda > 0.0, but found lambda={rate}")
    u = unit_uniforms(generator, _count(shape), f64)
    return ((-1.0 / rate) * _libm(_log1p, -u)).astype(_floating(dtype)).reshape(shape)


def multinomial(
    generator: Generator, probabilities: np.ndarray, samples: int, replacement: bool = False
) -> np.ndarray:
    """``torch.multinomial(p, samples, replacement)``: int64 indices, a row per row of p."""
    p = np.asarray(probabilities)
    if p.ndim not in (1, 2):
        raise DomainError("prob_dist must be 1 or 2 dim")
    if p.dtype not in (f32, f64):
        p = p.astype(f32)
    rows = p.reshape(-1, p.shape[-1])
    categories = rows.shape[1]
    if not replacement and samples > categories:
        raise DomainError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if (rows < 0).any() or not np.isfinite(rows).all():
        raise DomainError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) == 0).any():
        raise DomainError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement or samples == 1:
        # torch's Gumbel trick: the largest p / q for exponential q (topk, largest first)
        q = exponential(generator, rows.shape, p.dtype)
        with np.errstate(divide="ignore"):
            keys = rows / q
        order = np.argsort(-keys, axis=1, kind="stable")[:, :samples]
        return order.astype(np.int64).reshape(*p.shape[:-1], samples)
    result = np.empty((rows.shape[0], samples), dtype=np.int64)
    for index, row in enumerate(rows):
        cumulative = np.cumsum(row, dtype=row.dtype)
        cumulative = cumulative / cumulative[-1]
        cumulative[-1] = 1
        u = unit_uniforms(generator, samples, f64)
        result[index] = np.searchsorted(cumulative.astype(f64), u, side="left")
    return result.reshape(*p.shape[:-1], samples)


def dropout(generator: Generator, x: np.ndarray, p: float) -> np.ndarray:
    """``F.dropout(x, p, training=True)`` on an array: x times ``dropout_mask``."""
    return np.asarray(x * dropout_mask(generator, x.shape, p, x.dtype))


def dropout_mask(
    generator: Generator, shape: Sequence[int], p: float, dtype: Any = f32
) -> np.ndarray:
    """The factor torch's ``F.dropout(x, p)`` multiplies x by: ``bernoulli_(1 - p)`` divided
    by ``1 - p`` in x's dtype; p of 0 or 1 draws nothing."""
    dtype = _floating(dtype)
    if p == 0:
        return np.ones(shape, dtype=dtype)
    if p == 1:
        return np.zeros(shape, dtype=dtype)
    kept = bernoulli(generator, shape, 1.0 - p, dtype)
    return np.asarray(kept / dtype.type(1.0 - p)).astype(dtype)


class NumpyStyle:
    """torch's draws for one dtype behind numpy's ``Generator`` methods (``random(shape)``,
    ``standard_normal(shape)``), for the code that makes values through that interface
    (the constructors of ``lang/values.py``)."""

    def __init__(self, generator: Generator, dtype: Any):
        self.generator = generator
        resolved = np.dtype(dtype)
        self.dtype = resolved if resolved in (f32, f64) else f64

    def random(self, shape: Sequence[int]) -> np.ndarray:
        """``torch.rand(*shape)`` in the dtype."""
        return uniform(self.generator, tuple(shape), self.dtype)

    def standard_normal(self, shape: Sequence[int]) -> np.ndarray:
        """``torch.randn(*shape)`` in the dtype."""
        return normal(self.generator, tuple(shape), self.dtype)
