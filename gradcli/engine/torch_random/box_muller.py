"""torch's vectorized normal numbers for float32: Box-Muller on blocks of 16 uniforms.

For a float32 tensor of 16 or more elements torch fills it with uniforms and turns each
block of 16 into normals, the first 8 uniforms giving the radius (through a logarithm) and
the last 8 the angle (through a sine and cosine). On x86 CPUs the logarithm, sine and
cosine are the Cephes-style polynomials of torch's ``avx_mathfun.h``, evaluated 8 at a
time, compiled with fused multiply-adds where a product feeds a sum. The functions here
evaluate the same polynomials in the same order, each fused step rounded once
(``fused.fma32``), so the results agree bit for bit.
"""

from __future__ import annotations

import numpy as np

from .fused import fma32

f32 = np.float32
_MIN_NORMAL = np.array(0x00800000, np.int32).view(f32)  # the smallest normal float
_EXPONENT_BITS = np.int32(0x7F800000)
_HALF_BITS = np.array(0.5, f32).view(np.int32)
_SQRT_HALF = f32(0.707106781186547524)
_LOG_POLYNOMIAL = tuple(
    f32(c)
    for c in (
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    )
)
_LOG_Q1 = f32(-2.12194440e-4)
_LOG_Q2 = f32(0.693359375)
_FOUR_OVER_PI = f32(1.27323954473516)
_PI_PARTS = (f32(-0.78515625), f32(-2.4187564849853515625e-4), f32(-3.77489497744594108e-8))
_COS_POLYNOMIAL = (f32(2.443315711809948e-005), f32(-1.388731625493765e-003))
_COS_LAST = f32(4.166664568298827e-002)
_SIN_POLYNOMIAL = (f32(-1.9515295891e-4), f32(8.3321608736e-3))
_SIN_LAST = f32(-1.6666654611e-1)
_TWO_PI = f32(2.0 * np.pi)  # 2 pi rounded as a double, then to a float


def log(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's natural logarithm of positive float32 numbers."""
    x = np.maximum(x.astype(f32), _MIN_NORMAL)
    bits = x.view(np.int32)
    exponent = ((bits.view(np.uint32) >> np.uint32(23)).astype(np.int32) - 0x7F).astype(f32)
    exponent = exponent + f32(1)
    x = ((bits & ~_EXPONENT_BITS) | _HALF_BITS).view(f32)  # the mantissa, in [0.5, 1)
    small = x < _SQRT_HALF
    x = (x - f32(1)) + np.where(small, x, f32(0))
    exponent = exponent - np.where(small, f32(1), f32(0))
    square = x * x
    y = np.full_like(x, _LOG_POLYNOMIAL[0])
    for coefficient in _LOG_POLYNOMIAL[1:]:
        y = fma32(y, x, coefficient)
    y = fma32(y * x, square, exponent * _LOG_Q1)
    y = fma32(-square, f32(0.5), y)
    return fma32(exponent, _LOG_Q2, x + y)


def sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's sine and cosine of float32 numbers (one reduction for both)."""
    x = x.astype(f32)
    sine_negative = np.signbit(x)
    x = np.abs(x)
    octant = (x * _FOUR_OVER_PI).astype(np.int32)
    octant = (octant + 1) & ~1
    y = octant.astype(f32)
    for part in _PI_PARTS:  # x - y * pi / 4, in three pieces
        x = fma32(y, part, x)
    sine_negative ^= (octant & 4) != 0
    cosine_negative = (~(octant - 2) & 4) != 0
    use_sine_polynomial = (octant & 2) == 0
    square = x * x
    near_cosine = np.full_like(x, _COS_POLYNOMIAL[0])
    near_cosine = fma32(near_cosine, square, _COS_POLYNOMIAL[1])
    near_cosine = fma32(near_cosine, square, _COS_LAST) * square
    near_cosine = fma32(near_cosine, square, -(square * f32(0.5))) + f32(1)
    near_sine = np.full_like(x, _SIN_POLYNOMIAL[0])
    near_sine = fma32(near_sine, square, _SIN_POLYNOMIAL[1])
    near_sine = fma32(near_sine, square, _SIN_LAST)
    near_sine = fma32(near_sine * square, x, x)
    sine = np.where(use_sine_polynomial, near_sine, near_cosine)
    cosine = np.where(use_sine_polynomial, near_cosine, near_sine)
    return np.where(sine_negative, -sine, sine), np.where(cosine_negative, -cosine, cosine)


def normals_from_blocks(uniforms: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Blocks of 16 float32 uniforms (a multiple of 16 of them) to as many normals."""
    blocks = uniforms.astype(f32).reshape(-1, 2, 8)
    radius = np.sqrt(f32(-2) * log(f32(1) - blocks[:, 0]))
    sine, cosine = sincos(_TWO_PI * blocks[:, 1])
    mean32, std32 = f32(mean), f32(std)
    first = fma32(radius * cosine, std32, mean32)
    second = fma32(radius * sine, std32, mean32)
    return np.stack([first, second], axis=1).reshape(-1)
