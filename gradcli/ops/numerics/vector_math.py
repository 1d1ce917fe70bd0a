"""float32 exponentials and logarithms as torch's vectorised CPU kernels compute them, bit for
bit.

torch 2.13's float32 ``torch.exp``, ``log``, ``sin``, ``cos``, ``tan``, ``tanh`` and ``atan``
go to Intel MKL's vector math (``vmsExp``, ``vmsLn``, ... in its high-accuracy mode: the same
values at every size, layout and ATEN_CPU_CAPABILITY), whose algorithms are not published:
they are not reproduced here (``single_precision.rounded_once`` stays the closest, equal to
MKL for 82% (tan) to 99.9% (tanh) of arguments). The kernels that call ``Vectorized<float>``
run SLEEF's 1-ulp functions (``Sleef_*f16_u10`` with AVX-512, ``Sleef_*f8_u10`` with AVX2:
one algorithm, vectors of ``LANES`` float32s, which decide where a step ends and how a sum
is added: 16 or 8 by the CPU, as torch picks its kernels), reproduced here:

- ``sleef_exp`` (``expf``): ``sigmoid`` and ``silu`` over whole steps of two vectors (their
  leftover elements take the C library's ``expf``), softmax and log_softmax over the last
  dimension (their sums in the vector's lanes, ``lane_sum``);
- ``sleef_log`` (``logf``): log_softmax's logarithm of the sum (and ``sleef_exp`` again in
  its gradient; softmax's gradient needs no exponential, only the lanes' sum);
- ``sleef_expm1`` and ``sleef_log1p``: ``torch.expm1`` and ``torch.log1p`` (every element,
  every size);
- ``c_exp``: the C library's ``expf`` (glibc's, double precision inside), which torch's
  scalar loops call: the leftover elements of ``sigmoid``'s and ``silu``'s loops, strided
  input, softmax's leftover positions over another dimension (``softmax_inner``).

Each function is written from the algorithm's description: the argument reduction, the
polynomial evaluated with fused multiply-adds (emulated exactly by
``single_precision.fused_multiply_add``), SLEEF's double-float steps (a value carried as an
unevaluated sum of two float32s), the scaling by a power of two, every other step rounded to
float32 as the SIMD instruction rounds it. Checked bit for bit against SLEEF's own AVX-512
functions in torch's library (10**6 random float32 bit patterns: subnormals, huge and
negative values, infinities and NaNs, plus 1.3 * 10**6 values in the functions' working
ranges) and against torch's kernels (tests/ops/numerics/test_vector_math.py), on a machine
with AVX-512 and on one with AVX2 only. The emulation
costs 50 to 150 times ``rounded_once`` on 10**5 values (100 to 600 times numpy's float32
loop; about 0.1 ms a call on a few values), so the engine takes it only in
``summation.torch_order()`` (``gradcli run``), through ``in_torch_order``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .single_precision import fused_multiply_add
from .summation import in_force

_F = np.float32
_INT32_MIN = np.int32(-(2**31))


def _fma(a: Any, b: Any, c: Any) -> Any:
    return fused_multiply_add(a, b, c, _F)


def _round_half_even_to_int32(x: Any) -> Any:
    """``cvtps_epi32``: nearest int32, ties to even, INT32_MIN for NaN and out of range."""
    fits = np.abs(x) < _F(2**31)
    return np.where(fits, np.rint(np.where(fits, x, 0)), 0).astype(np.int32) | np.where(
        fits, np.int32(0), _INT32_MIN
    )


def _power_of_two(exponent: Any) -> Any:
    """``2**exponent`` for int32 exponents in [-126, 127], built from its bits as SIMD code
    builds it (``(exponent + 127) << 23``)."""
    return ((exponent.astype(np.int32) + np.int32(127)) << np.int32(23)).view(_F)


# SLEEF's expf: ln 2 split in two parts (the first with few bits, so q * L2U is exact).
_R_LN2 = _F(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U = _F(0.693145751953125)
_L2L = _F(1.428606765330187045e-06)
_SLEEF_EXP_POLYNOMIAL = tuple(
    _F(c)
    for c in (
        0.000198527617612853646278381,
        0.00139304355252534151077271,
        0.00833336077630519866943359,
        0.0416664853692054748535156,
        0.166666671633720397949219,
        0.5,
    )
)


def sleef_exp(x: Any) -> Any:
    """``exp`` of a float32 array as SLEEF's ``expf`` (1-ulp) computes it: ``q`` the nearest
    integer to ``x / ln 2``, ``s = x - q ln 2`` by two fused steps, a degree-7 polynomial in
    ``s`` by Horner's rule with fused multiply-adds, scaled by ``2**q`` in two halves; 0 below
    -104, inf above 100."""
    d = np.asarray(x, _F)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        q = _round_half_even_to_int32(d * _R_LN2)
        qf = q.astype(_F)
        s = _fma(qf, -_L2U, d)
        s = _fma(qf, -_L2L, s)
        u = np.full(d.shape, _SLEEF_EXP_POLYNOMIAL[0], _F)
        for c in _SLEEF_EXP_POLYNOMIAL[1:]:
            u = _fma(u, s, c)
        u = _F(1) + _fma(s * s, u, s)
        half = q >> np.int32(1)
        # q's halves stay within a float32 exponent wherever the thresholds below let u through
        u = (
            u
            * _power_of_two(np.clip(half, -126, 127))
            * _power_of_two(np.clip(q - half, -126, 127))
        )
        u = np.where(d < _F(-104), _F(0), u)
        u = np.where(d > _F(100), _F(np.inf), u)
    return u.astype(_F, copy=False)


# SLEEF's double-float ("df") arithmetic: a value carried as an unevaluated float32 sum hi + lo.
def _two_sum(x: Any, y: Any) -> tuple[Any, Any]:
    """``dfadd2(x, y)`` of two floats: their sum and its rounding error (Knuth)."""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def _df_add2(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """``dfadd2`` of two pairs: any magnitudes."""
    s, t = _two_sum(xh, yh)
    return s, t + (xl + yl)


def _df_add(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """``dfadd`` of two pairs, ``|x| >= |y|`` assumed (Fast2Sum)."""
    s = xh + yh
    return s, (((xh - s) + yh) + xl) + yl


def _df_mul_float(xh: Any, xl: Any, y: Any) -> tuple[Any, Any]:
    """``dfmul`` of a pair by a float, the product's error by a fused multiply-add."""
    s = xh * y
    return s, _fma(xl, y, _fma(xh, y, -s))


def _df_div(nh: Any, nl: Any, dh: Any, dl: Any) -> tuple[Any, Any]:
    """``dfdiv`` of two pairs: a reciprocal of ``dh`` corrected by fused steps."""
    t = _F(1) / dh
    s = nh * t
    u = _fma(t, nh, -s)
    v = _fma(-dl, t, _fma(-dh, t, _F(1)))
    return s, _fma(s, v, _fma(nl, t, u))


def _df_add2_float(xh: Any, xl: Any, y: Any) -> tuple[Any, Any]:
    """``dfadd2`` of a pair and a float: any magnitudes."""
    s, t = _two_sum(xh, y)
    return s, t + xl


def _df_mul(xh: Any, xl: Any, yh: Any, yl: Any) -> tuple[Any, Any]:
    """``dfmul`` of two pairs, the cross terms by fused multiply-adds."""
    s = xh * yh
    return s, _fma(xh, yl, _fma(xl, yh, _fma(xh, yh, -s)))


def _df_square(xh: Any, xl: Any) -> tuple[Any, Any]:
    """``dfsqu``: a pair squared."""
    s = xh * xh
    return s, _fma(xh + xh, xl, _fma(xh, xh, -s))


def _df_reciprocal(dh: Any, dl: Any) -> tuple[Any, Any]:
    """``dfrec``: 1 over a pair, the float reciprocal corrected by fused steps."""
    s = _F(1) / dh
    return s, s * _fma(-dl, s, _fma(-dh, s, _F(1)))


def _exponent(v: Any) -> Any:
    """``getexp``: floor(log2 |v|) as a float32 (-inf at 0), 128 where ``v`` is infinite (as
    SLEEF replaces getexp's inf)."""
    _, exponent = np.frexp(v)
    e = (exponent - 1).astype(_F)
    e = np.where(v == 0, _F(-np.inf), e)
    return np.where(np.isinf(v), _F(128), np.where(np.isnan(v), _F(np.nan), e))


_LN2_HIGH = _F(0.69314718246459960938)
_LN2_LOW = _F(-1.904654323148236017e-09)
_SLEEF_LOG_POLYNOMIAL = tuple(_F(c) for c in (0.3027294874, 0.3996108174, 0.6666694880))


def _log_from_reduced(e: Any, yh: Any, yl: Any) -> Any:
    """``e ln 2 + 2y + y**3 P(y**2)`` summed in double-float, ``y`` the pair (yh, yl)."""
    y2 = yh * yh
    t = np.full(np.shape(yh), _SLEEF_LOG_POLYNOMIAL[0], _F)
    for c in _SLEEF_LOG_POLYNOMIAL[1:]:
        t = _fma(t, y2, c)
    sh, sl = _df_mul_float(_LN2_HIGH, _LN2_LOW, e)
    sh, sl = _df_add(sh, sl, yh * _F(2), yl * _F(2))
    sh, sl = _df_add(sh, sl, y2 * yh * t, _F(0))
    return sh + sl


def sleef_log(x: Any) -> Any:
    """``log`` of a float32 array as SLEEF's 1-ulp ``logf`` computes it on AVX-512 (torch's
    ``Vectorized<float>::log()``, its log_softmax kernel): ``x = m 2**e`` with ``m`` in
    [0.75, 1.5) (``getmant``) and ``e`` the exponent of ``x / 0.75`` (``getexp``),
    ``y = (m - 1) / (m + 1)`` in double-float, ``log x = e ln 2 + 2y + y**3 P(y**2)``
    summed in double-float; -inf at 0, nan below 0, inf at inf."""
    d = np.asarray(x, _F)
    with np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore"):
        e = _exponent(d * _F(1 / 0.75))
        half, _ = np.frexp(d)
        m = np.where(half >= _F(0.75), half, half * _F(2))  # getmant to [0.75, 1.5)
        yh, yl = _df_div(*_two_sum(_F(-1), m), *_two_sum(_F(1), m))
        r = _log_from_reduced(e, yh, yl)
        r = np.where(d == _F(0), _F(-np.inf), r)
        r = np.where(d < _F(0), _F(np.nan), r)
        r = np.where(np.isposinf(d), _F(np.inf), r)
    return np.asarray(r, _F)


#: What a CPU must announce for torch to run its AVX-512 kernels (ATen's check).
AVX512_FLAGS = frozenset({"avx512f", "avx512bw", "avx512vl", "avx512dq"})


def torch_lanes(capability: str | None, cpu_flags: frozenset[str]) -> int:
    """The float32 lanes of the vectors torch's kernels here run in: 16 where it picks its
    AVX-512 kernels, 8 where AVX2 or none. ``capability`` is torch's own override
    (``ATEN_CPU_CAPABILITY``: ``avx512``, ``avx2``, ``default``), else the CPU decides."""
    if capability:
        return 16 if capability.lower() == "avx512" else 8
    return 16 if AVX512_FLAGS <= cpu_flags else 8


def _cpu_flags() -> frozenset[str]:
    """The instruction sets the CPU announces (Linux's /proc/cpuinfo; none elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


# torch's element-wise and softmax kernels over float32 in vectors of LANES (16 with AVX-512,
# 8 with AVX2: the same SLEEF functions at either width), its element-wise loops two vectors
# a step, the leftover elements by the scalar function. (Its sums' kernels run AVX2 vectors on
# both: summation.LANES.)
LANES = torch_lanes(os.environ.get("ATEN_CPU_CAPABILITY"), _cpu_flags())
_LOOP_STEP = 2 * LANES


# The C library's expf (glibc 2.28 on, from Arm's optimized routines): x / ln 2 split into
# k / 32 + r in double precision, 2**(k / 32) from a table of 32 doubles, a cubic in r.
_EXPF_STEPS = 32
_INV_LN2_STEPS = float.fromhex("0x1.71547652b82fep+0") * _EXPF_STEPS
_ROUNDING_SHIFT = float.fromhex("0x1.8p+52")
_EXPF_CUBIC = (
    float.fromhex("0x1.c6af84b912394p-5") / _EXPF_STEPS**3,
    float.fromhex("0x1.ebfce50fac4f3p-3") / _EXPF_STEPS**2,
    float.fromhex("0x1.62e42ff0c52d6p-1") / _EXPF_STEPS,
)
_EXPF_TABLE = np.exp2(np.arange(_EXPF_STEPS) / _EXPF_STEPS).view(np.uint64) - (
    np.arange(_EXPF_STEPS, dtype=np.uint64) << np.uint64(47)
)


def c_exp(x: Any) -> Any:
    """``expf`` of a float32 array as the C library computes it (torch's scalar loops:
    within 0.502 ulp, not always correctly rounded): in double precision, ``k`` the nearest
    integer to ``32 x / ln 2`` (by adding 1.5 * 2**52), ``r`` the rest, ``2**(k / 32)`` built
    from the table entry of ``k mod 32`` and ``k``'s high bits in the exponent, times
    ``1 + c2 r + (c1 + c0 r) r**2``, rounded once to float32; inf above 88.72283 (log
    2**128), 0 below -103.97208 (log 2**-150)."""
    d = np.asarray(x, _F)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        z = _INV_LN2_STEPS * d.astype(np.float64)
        shifted = z + _ROUNDING_SHIFT
        k = shifted.view(np.uint64)
        r = z - (shifted - _ROUNDING_SHIFT)
        scale = (_EXPF_TABLE[k % np.uint64(_EXPF_STEPS)] + (k << np.uint64(47))).view(np.float64)
        c0, c1, c2 = _EXPF_CUBIC
        y = ((c0 * r + c1) * (r * r) + (c2 * r + 1)) * scale
        out = y.astype(_F)
    out = np.where(d > _F(float.fromhex("0x1.62e42ep6")), _F(np.inf), out)
    out = np.where(d < _F(-float.fromhex("0x1.9fe368p6")), _F(0), out)
    return np.where(np.isnan(d), d, out)


def in_torch_order(exact: Callable[[Any], Any], usual: Callable[[Any], Any]) -> Callable[..., Any]:
    """``exact`` (one of this module's functions) for a float32 array where sums follow
    torch's order (``summation.torch_order()``: it costs tens of times numpy's function),
    ``usual`` otherwise."""

    def forward(x: Any) -> Any:
        if getattr(x, "dtype", None) == _F and in_force():
            return exact(x)
        return usual(x)

    forward.__name__ = getattr(usual, "__name__", exact.__name__)
    return forward


def logistic(x: Any) -> Any:
    """sigmoid of any array: torch's float32 bits (``sigmoid``) where sums follow torch's
    order (``summation.torch_order()``: it costs several times numpy's exp), else numpy's
    exp without overflow (``exp(-|x|)``) and the sign's formula."""
    if x.dtype == _F and in_force():
        return sigmoid(x)
    if x.dtype.kind == "c":  # no overflow to avoid by the sign of a complex number
        return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def sigmoid(x: Any) -> Any:
    """torch's float32 sigmoid, element for element: ``1 / (1 + exp(-x))`` with SLEEF's
    ``exp`` over the whole steps of two vectors of the array in memory order, and with the C
    library's ``expf`` (``c_exp``) over the leftover elements."""
    return _over_steps(x, lambda d, e: _F(1) / (_F(1) + e))


def silu(x: Any) -> Any:
    """torch's float32 silu: ``x / (1 + exp(-x))``, the exponentials as ``sigmoid``'s."""
    return _over_steps(x, lambda d, e: d / (_F(1) + e))


def _over_steps(x: Any, finish: Any) -> Any:
    """``finish(x, exp(-x))`` over a float32 array as torch's element-wise loop runs it: in
    memory order, SLEEF's ``exp`` over whole steps of two vectors, ``expf`` over the rest; where
    the array is not dense (a strided view), ``expf`` everywhere, as torch's loop takes its
    scalar path over strided input."""
    d = np.asarray(x, _F)
    dense = d.flags.c_contiguous or d.flags.f_contiguous
    flat = d.ravel(order="K" if dense else "C")
    vectorised = flat.size - flat.size % _LOOP_STEP if dense else 0
    e = np.empty_like(flat)
    with np.errstate(over="ignore", invalid="ignore"):
        e[:vectorised] = sleef_exp(_F(0) - flat[:vectorised])
        e[vectorised:] = c_exp(-flat[vectorised:])
        values = np.asarray(finish(flat, e), _F)
    if not dense:
        return values.reshape(d.shape)
    out = np.empty_like(d)
    out.ravel(order="K")[...] = values
    return out


def lane_sum(rows: Any, weights: Any = None) -> Any:
    """The sums of a float32 array's last dimension (kept, as a dimension of 1) in the order
    of torch's ``vec::map_reduce_all``: under a vector's width, the elements one after
    another; else the whole vectors added lane by lane, the leftover elements into the first
    lanes, then the lanes folded in halves (lane i plus lane i + LANES / 2, then half that,
    down to + 1).

    With ``weights``, the sums of ``rows * weights`` as ``map2_reduce_all`` adds them on one
    thread: each product rounded, but the leftover elements' products added to their lanes
    in one fused step (the compiler contracts that one; with several threads torch's build
    rounds it too)."""
    n = rows.shape[-1]
    products = rows if weights is None else rows * weights
    if n < LANES:
        total = products[..., :1].copy()
        for j in range(1, n):
            total += products[..., j : j + 1]
        return total
    whole = n - n % LANES
    acc = products[..., :LANES].copy()
    for start in range(LANES, whole, LANES):
        acc += products[..., start : start + LANES]
    if weights is None:
        acc[..., : n - whole] += rows[..., whole:]
    else:
        acc[..., : n - whole] = _fma(rows[..., whole:], weights[..., whole:], acc[..., : n - whole])
    half = LANES // 2
    while half:
        acc = acc + acc[..., np.arange(LANES) ^ half]
        half //= 2
    return acc[..., :1]


def softmax_last(x: Any) -> Any:
    """torch's float32 softmax over the last dimension (its ``_vec_softmax_lastdim``):
    ``e = exp(x - max)`` by SLEEF's ``exp``, summed in vector lanes (``lane_sum``), each ``e``
    times the sum's reciprocal."""
    shifted = x - np.max(x, axis=-1, keepdims=True)
    e = sleef_exp(shifted)
    return e * (_F(1) / lane_sum(e))


def softmax_inner(x: Any, dim: int) -> Any:
    """torch's float32 softmax over a dimension that is not the last (its ``_vec_softmax``,
    one thread): each run of ``LANES`` positions of the dimensions after ``dim`` in a vector,
    ``exp(x - max)`` by SLEEF's ``exp``, summed along ``dim`` one after another from 0, each
    divided by the sum; the leftover positions (under ``LANES``) the same with the C library's
    ``expf`` (``c_exp``)."""
    d = np.moveaxis(np.asarray(x, _F), dim, -1)  # (..., inner..., n): positions then dim
    inner = int(np.prod(np.shape(x)[dim + 1 :], dtype=np.int64))
    shifted = d - np.max(d, axis=-1, keepdims=True)
    rows = shifted.reshape(-1, inner, d.shape[-1])
    vectorised = inner - inner % LANES
    e = np.empty_like(rows)
    e[:, :vectorised] = sleef_exp(rows[:, :vectorised])
    e[:, vectorised:] = c_exp(rows[:, vectorised:])
    total = np.zeros(rows.shape[:2] + (1,), _F)
    for k in range(rows.shape[-1]):
        total += e[..., k : k + 1]
    return np.moveaxis((e / total).reshape(d.shape), -1, dim)


def softmax_backward_last(grad: Any, out: Any) -> Any:
    """The gradient of torch's float32 softmax over the last dimension (its
    ``_vec_softmax_backward``, one thread): ``(grad - sum(grad * out)) * out``, the sum in
    vector lanes (``lane_sum`` with weights)."""
    return (grad - lane_sum(grad, out)) * out


def log_softmax_backward_last(grad: Any, out: Any) -> Any:
    """The gradient of torch's float32 log_softmax over the last dimension (its
    ``_vec_log_softmax_backward``): ``grad - exp(out) * sum(grad)``, the sum in vector lanes,
    the exponential SLEEF's, the product and difference one fused step (the compiler
    contracts them)."""
    return _fma(-sleef_exp(out), lane_sum(grad), grad)


def log_softmax_last(x: Any) -> Any:
    """torch's float32 log_softmax over the last dimension (its ``_vec_log_softmax_lastdim``):
    ``(x - max) - log(sum(exp(x - max)))``, the exponentials and the logarithm SLEEF's, the
    sum in vector lanes (``lane_sum``)."""
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - sleef_log(lane_sum(sleef_exp(shifted)))


_EXPK2_POLYNOMIAL = tuple(_F(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2))


def _scaled(v: Any, q: Any) -> Any:
    """``ldexp2``: ``v * 2**q`` as two multiplications by ``2**(q // 2)`` and the rest."""
    half = q >> np.int32(1)
    return v * _power_of_two(np.clip(half, -126, 127)) * _power_of_two(np.clip(q - half, -126, 127))


def _exp_pair(d: Any) -> tuple[Any, Any]:
    """SLEEF's ``expk2f``: ``exp(d)`` of a float32 as a double-float pair (``d`` reduced by
    ``q ln 2`` in double-float, the polynomial's low terms in floats, its high ones in
    pairs), both parts scaled by ``2**q``; (0, 0) below -104."""
    q = _round_half_even_to_int32(d * _R_LN2)
    qf = q.astype(_F)
    sh, sl = _df_add2_float(d, _F(0), qf * -_L2U)
    sh, sl = _df_add2_float(sh, sl, qf * -_L2L)
    u = np.full(d.shape, _EXPK2_POLYNOMIAL[0], _F)
    for c in (*_EXPK2_POLYNOMIAL[1:], _F(0.4166637361e-1)):
        u = _fma(u, sh, c)
    th, tl = _df_add2_float(*_df_mul_float(sh, sl, u), _F(0.166666659414234244790680580464))
    th, tl = _df_add2_float(*_df_mul(sh, sl, th, tl), _F(0.5))
    th, tl = _df_add2(sh, sl, *_df_mul(*_df_square(sh, sl), th, tl))
    one = _F(1) + th
    th, tl = one, ((_F(1) - one) + th) + tl
    th, tl = _scaled(th, q), _scaled(tl, q)
    gone = d < _F(-104)
    return np.where(gone, _F(0), th), np.where(gone, _F(0), tl)


def sleef_expm1(x: Any) -> Any:
    """``exp(x) - 1`` of a float32 array as SLEEF's 1-ulp ``expm1f`` computes it (torch's
    float32 ``expm1``): ``expk2f``'s pair minus 1 in double-float, summed; inf above
    88.72283, -1 below -16.635532, -0 at -0."""
    d = np.asarray(x, _F)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        h, lo = _df_add2_float(*_exp_pair(d), _F(-1))
        r = h + lo
        r = np.where(d > _F(88.72283172607421875), _F(np.inf), r)
        r = np.where(d < _F(-16.635532333438687426013570), _F(-1), r)
        r = np.where((d == 0) & np.signbit(d), _F(-0.0), r)
    return np.asarray(r, _F)


def sleef_log1p(x: Any) -> Any:
    """``log(1 + x)`` of a float32 array as SLEEF's 1-ulp ``log1pf`` computes it on AVX-512
    (torch's float32 ``log1p``): ``e`` the exponent of ``(x + 1) / 0.75``, ``m = x 2**-e +
    (2**-e - 1)`` fused, ``y = m / (2 + m)`` in double-float, then as ``sleef_log``; nan
    below -1, -inf at -1, -0 at -0, inf at inf (and finite up to FLT_MAX: torch's SLEEF has
    no cut at 1e38)."""
    d = np.asarray(x, _F)
    with np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore"):
        e = _exponent((d + _F(1)) * _F(1 / 0.75))
        t = np.ldexp(_F(1), np.where(np.isfinite(e), -e, 0).astype(np.int32)).astype(_F)
        m = _fma(d, t, t - _F(1))
        two_m = _F(2) + m
        yh, yl = _df_div(m, _F(0), two_m, (_F(2) - two_m) + m)
        r = _log_from_reduced(e, yh, yl)
        r = np.where(np.isposinf(d), _F(np.inf), r)
        r = np.where(d < _F(-1), _F(np.nan), r)
        r = np.where(d == _F(-1), _F(-np.inf), r)
        r = np.where((d == 0) & np.signbit(d), _F(-0.0), r)
    return np.asarray(r, _F)
