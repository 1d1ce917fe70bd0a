"""torch's row-wise mean and variance on the CPU (its ``RowwiseMoments``), and the forward
values of layer_norm, group_norm, var, std, var_mean and std_mean as torch computes them, to
the last bit.

torch 2.13's CPU layer_norm does not take a mean and then the mean of squared deviations, as
numpy (and the engine's composite) does: it runs Welford's update over the row, vectorized,
and merges partial moments with Chan's formula. Where a normalized value lies near 0, x - mean
cancels and the other order shows in the 4th or 5th significant digit of a float32 (1.8629e-04
against torch's 1.8622e-04). The order, read from torch's public kernel (``moments_utils.h``,
``layer_norm_kernel.cpp``) and then pinned down bit for bit against torch itself, one thread,
this CPU (torch runs its AVX2 kernel here: 8 float32 or 4 float64 lanes, ``LANES``):

- The row's whole vectors (``n = N // LANES``) are cut into chunks of 16. In each chunk every
  lane runs Welford's update over its 16 values: ``d = x - m1``, ``m1 += d * (1/j)``,
  ``m2 += d * (x - m1)``, both updates fused multiply-adds.
- The chunks' moments are merged pairwise, as a binary tree (torch keeps a stack indexed by
  the binary digits of the chunk count: the same tree), the left block the accumulator; the
  blocks a level leaves over are merged at the end, the lowest level's first, each higher one
  merged into it. A merge of ``(k, m1', m2')`` into ``(m0, m1, m2)``: ``c = k / (m0 + k)``,
  ``d = m1' - m1``, ``m1 + c*d`` (not fused), ``m2`` the fused ``(d*c) * (d*m0) + (m2 + m2')``.
- The elements after the last whole vector run Welford's update one by one (``m1 += d / k``,
  ``m2 += d * (x - m1)``, neither fused), then each lane's moments are merged into them in
  lane order: ``m1`` fused (``c*d + m1``), ``m2 + ((d*d*c) * m0 + m2')`` the inner one fused.
- The variance is ``m2 / (N - correction)``; layer_norm's ``rstd = 1 / sqrt(var + eps)`` and
  its output ``((x - mean) * rstd) * weight + bias``, the last step fused (torch's vectorized
  loop); without a weight ``(x - mean) * rstd + bias`` fused (its scalar loop, where the
  compiler drops the ``* 1``); without a bias two products.

group_norm takes each group's moments the same way (``group_norm_like_torch``); var and std
are another kernel, Welford in double (``spread_like_torch``).

Checked against ``torch.ops.aten.native_layer_norm`` (its mean, rstd and output) on float32
and float64 rows of every length 1..70, 100, 255..257, 500, 1000, 4096, 5000 and 20000 and on
tens of thousands of random rows (tests/engine/test_engine_moments.py keeps a share of that).
Everything is numpy on whole arrays: the Python loops run over the algorithm's steps (16 per
chunk, one per tree level, one per lane and leftover element), never over elements or rows.
It costs several times numpy's ``mean``/``var`` (about 10-20 numpy calls per step), so it is
used only inside ``summation.torch_order()`` (``gradcli run``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import summation
from .single_precision import fused_multiply_add

Array = np.ndarray[Any, Any]

CHUNK = 16  # vectors per chunk of Welford's update


def supported(*arrays: Array | None) -> bool:
    """Whether torch's order is in force and every array given is of one dtype it is known
    for (float32, float64)."""
    present = [a for a in arrays if a is not None]
    if not summation.in_force() or not present:
        return False
    dtype = present[0].dtype
    return dtype in summation.LANES and all(a.dtype == dtype for a in present)


def row_moments(rows: Array, correction: int = 0) -> tuple[Array, Array]:
    """The mean and the variance (``m2 / (N - correction)``) of each row of ``rows`` (M, N)
    of float32 or float64, as torch's ``RowwiseMoments`` computes them."""
    dtype = rows.dtype
    lanes = summation.LANES[dtype]
    batch, size = rows.shape
    whole = size // lanes
    count, m1, m2 = 0, np.zeros(batch, dtype), np.zeros(batch, dtype)
    for k in range(whole * lanes, size):  # the leftover elements, one by one
        x = rows[:, k]
        count += 1
        d = x - m1
        m1 = m1 + d / dtype.type(count)
        m2 = m2 + d * (x - m1)
    if whole:
        vectors = rows[:, : whole * lanes].reshape(batch, whole, lanes)
        lane_m1, lane_m2 = _merged(*_chunks(vectors))
        for lane in range(lanes):
            c, d = _merge_weight(count, whole, dtype), lane_m1[:, lane] - m1
            inner = fused_multiply_add(d * d * c, dtype.type(count), lane_m2[:, lane], dtype)
            m1 = fused_multiply_add(c, d, m1, dtype)
            m2 = m2 + inner
            count += whole
    return m1, m2 / dtype.type(size - correction)


def layer_norm_like_torch(
    x: Array, normalized: int, weight: Array | None, bias: Array | None, eps: float
) -> Array:
    """torch's layer_norm of ``x`` over its trailing elements, ``normalized`` of them (the
    normalized shape's size), ``weight`` and ``bias`` of that size or None."""
    dtype = x.dtype
    rows = x.reshape(-1, normalized)
    mean, var = row_moments(rows)
    rstd = dtype.type(1) / np.sqrt(var + dtype.type(eps))
    centered = rows - mean[:, None]
    w = None if weight is None else weight.reshape(-1)
    b = None if bias is None else bias.reshape(-1)
    if b is None:
        y = centered * rstd[:, None]
        y = y if w is None else y * w
    elif w is None:  # the scalar loop's * 1 folded away: (x - mean) * rstd + bias fused
        y = fused_multiply_add(centered, rstd[:, None], b, dtype)
    else:
        y = fused_multiply_add(centered * rstd[:, None], w, b, dtype)
    out: Array = np.asarray(y, dtype).reshape(x.shape)
    return out


def group_norm_like_torch(
    x: Array, groups: int, weight: Array | None, bias: Array | None, eps: float
) -> Array:
    """torch's group_norm of ``x`` (N, C, *) in ``groups`` groups, ``weight`` and ``bias``
    (C,) or None: each group's moments as layer_norm's (``row_moments``), ``rstd`` in double
    (``1 / sqrt(var + eps)``, rounded once), then per channel ``scale = rstd * weight`` and
    ``shift = bias - scale * mean`` (fused), and ``x * scale + shift`` (fused); without a
    weight and a bias ``(x - mean) * rstd``."""
    dtype = x.dtype
    batch, channels = x.shape[:2]
    rows = x.reshape(batch, groups, channels // groups, -1)
    mean, var = row_moments(rows.reshape(batch * groups, -1))
    rstd = (1.0 / np.sqrt(var.astype(np.float64) + eps)).astype(dtype)
    if weight is None and bias is None:  # torch's other loop: (x - mean) * rstd
        flat = rows.reshape(batch * groups, -1)
        plain: Array = ((flat - mean[:, None]) * rstd[:, None]).reshape(x.shape)
        return plain
    w = np.ones(channels, dtype) if weight is None else weight.reshape(-1)
    b = np.zeros(channels, dtype) if bias is None else bias.reshape(-1)
    scale = rstd.reshape(batch, groups, 1) * w.reshape(groups, -1)  # (N, G, C / G)
    shift = fused_multiply_add(-scale, mean.reshape(batch, groups, 1), b.reshape(groups, -1), dtype)
    y = fused_multiply_add(rows, scale[..., None], shift[..., None], dtype)
    out: Array = np.asarray(y, dtype).reshape(x.shape)
    return out


def batch_norm_like_torch(
    x: Array,
    running_mean: Array,
    running_var: Array,
    weight: Array | None,
    bias: Array | None,
    training: bool,
    eps: float,
) -> Array | None:
    """torch's batch_norm of ``x`` (N, C, *), contiguous, or None where its order is not
    pinned down here (a float64 input's batch statistics over more than one value per sample
    and channel: the sequential double sums below match torch's but for about 1 channel in
    150).

    Per channel ``invstd``: from the running variance, ``1 / sqrt(var + eps)`` in the dtype;
    from the batch (training), the channel's sum and then its squared deviations from the
    mean, ``invstd = 1 / sqrt(m2 / n + eps)``, ``m2 / n`` in the dtype, the rest in double.
    An input of one value per sample and channel ((N, C), torch's channels-last kernel) adds
    the values one by one in the dtype and accumulates the squares by fused multiply-adds;
    any other adds both in double, the squares rounded to the dtype first. The mean is the
    double sum over n, rounded. Then ``alpha = invstd * weight``, ``beta = bias - mean * alpha``
    (fused) and the output ``x * alpha + beta`` (fused)."""
    dtype = x.dtype
    channels = x.shape[1]
    if training:
        moments = batch_moments(x)
        if moments is None:
            return None
        mean, m2, count = moments
        var = (m2 / dtype.type(count)).astype(np.float64)
        invstd = (1.0 / np.sqrt(var + eps)).astype(dtype)
    else:
        mean = running_mean.reshape(-1)
        invstd = dtype.type(1) / np.sqrt(running_var.reshape(-1) + dtype.type(eps))
    alpha = invstd if weight is None else invstd * weight.reshape(-1)
    b = np.zeros(channels, dtype) if bias is None else bias.reshape(-1)
    beta = fused_multiply_add(-mean, alpha, b, dtype)
    shape = (1, channels) + (1,) * (x.ndim - 2)
    y = fused_multiply_add(x, alpha.reshape(shape), beta.reshape(shape), dtype)
    out: Array = np.asarray(y, dtype)
    return out


def batch_moments(x: Array) -> tuple[Array, Array, int] | None:
    """The batch's mean and sum of squared deviations per channel of ``x`` (N, C, *), and the
    count of values per channel, as torch's batch_norm collects them (see
    ``batch_norm_like_torch``), or None where not pinned down (a float64 input of more than
    one value per sample and channel)."""
    dtype = x.dtype
    batch, channels = x.shape[:2]
    if dtype == np.float64 and x.size > batch * channels:
        return None
    values = np.moveaxis(x.reshape(batch, channels, -1), 1, 0).reshape(channels, -1)
    count = values.shape[1]
    if x.size == batch * channels:  # the channels-last kernel
        total = np.cumsum(values, axis=1)[:, -1].astype(np.float64)
        mean = (total / count).astype(dtype)
        m2 = np.zeros(channels, dtype)
        for k in range(count):  # the batch's rows in order, each channel its own sum
            deviation = values[:, k] - mean
            m2 = fused_multiply_add(deviation, deviation, m2, dtype)
    else:
        total = np.cumsum(values.astype(np.float64), axis=1)[:, -1]
        mean = (total / count).astype(dtype)
        deviation = values - mean[:, None]
        squares = (deviation * deviation).astype(np.float64)
        m2 = np.cumsum(squares, axis=1)[:, -1].astype(dtype)
    return mean, m2, count


def running_statistics_like_torch(
    x: Array, running_mean: Array, running_var: Array, momentum: float
) -> tuple[Array, Array] | None:
    """torch's running mean and variance after batch_norm in training on ``x`` (N, C, *):
    ``momentum * mean + (1 - momentum) * running_mean`` in the dtype (not fused), and the
    unbiased variance (``m2 / (n - 1)`` in the dtype) times the momentum in double, plus
    ``(1 - momentum) * running_var`` in the dtype, rounded once; None where torch's order is
    off or not known."""
    if not supported(x, running_mean, running_var):
        return None
    moments = batch_moments(x)
    if moments is None:
        return None
    mean, m2, count = moments
    dtype = x.dtype
    weight = dtype.type(momentum)
    rest = dtype.type(1) - weight
    new_mean = weight * mean + rest * running_mean
    unbiased = (m2 / dtype.type(count - 1)).astype(np.float64)
    new_var = np.float64(weight) * unbiased + (rest * running_var).astype(np.float64)
    return np.asarray(new_mean, dtype), new_var.astype(dtype)


def _merge_weight(count: int, added: int, dtype: np.dtype[Any]) -> Any:
    """torch's ``c``: the share of the added moments in the merged ones, rounded to ``dtype``."""
    return dtype.type(added) / dtype.type(count + added)


def _chunks(vectors: Array) -> tuple[Array, Array, Array]:
    """Welford's moments of each chunk of 16 vectors of ``vectors`` (M, n, lanes), each lane
    apart: the counts (chunks,) and the means and m2s (M, chunks, lanes)."""
    batch, n, lanes = vectors.shape
    dtype = vectors.dtype
    full, rest = divmod(n, CHUNK)
    chunks = full + (rest > 0)
    padded = np.zeros((batch, chunks * CHUNK, lanes), dtype)
    padded[:, :n] = vectors
    padded = padded.reshape(batch, chunks, CHUNK, lanes)
    m1 = np.zeros((batch, chunks, lanes), dtype)
    m2 = np.zeros((batch, chunks, lanes), dtype)
    for j in range(CHUNK):
        k = chunks if rest == 0 or j < rest else full  # the chunks that have a vector j
        if k == 0:
            break
        x = padded[:, :k, j]
        d = x - m1[:, :k]
        m1[:, :k] = fused_multiply_add(d, dtype.type(1) / dtype.type(j + 1), m1[:, :k], dtype)
        m2[:, :k] = fused_multiply_add(d, x - m1[:, :k], m2[:, :k], dtype)
    counts = np.full(chunks, CHUNK, np.int64)
    if rest:
        counts[-1] = rest
    return counts, m1, m2


def _merged(counts: Array, m1: Array, m2: Array) -> tuple[Array, Array]:
    """The chunks' moments merged as torch's cascade merges them: (M, lanes) each."""
    left_over: list[tuple[Array, Array, Array]] = []
    while counts.shape[0] > 1:
        if counts.shape[0] % 2:
            left_over.append((counts[-1:], m1[:, -1:], m2[:, -1:]))
            counts, m1, m2 = counts[:-1], m1[:, :-1], m2[:, :-1]
        counts, m1, m2 = _merge(
            (counts[0::2], m1[:, 0::2], m2[:, 0::2]), (counts[1::2], m1[:, 1::2], m2[:, 1::2])
        )
    # the blocks left over, the lowest level's first, then the top one, merged in that order
    total, *higher_levels = [*left_over, (counts, m1, m2)]
    for higher in higher_levels:
        total = _merge(total, higher)
    return total[1][:, 0], total[2][:, 0]


def _merge(
    into: tuple[Array, Array, Array], added: tuple[Array, Array, Array]
) -> tuple[Array, Array, Array]:
    """Chan's merge of the blocks ``added`` into the blocks ``into``, block by block, as
    torch's vectorized ``AddMomentsVec`` rounds it: (counts, m1s, m2s) each."""
    count, m1, m2 = into
    count_added, m1_added, m2_added = added
    dtype = m1.dtype
    c = (count_added.astype(dtype) / (count + count_added).astype(dtype))[:, None]
    d = m1_added - m1
    merged_m2 = fused_multiply_add(d * c, d * count.astype(dtype)[:, None], m2 + m2_added, dtype)
    return count + count_added, m1 + c * d, merged_m2


# -- var, std, var_mean ------------------------------------------------------------------------

WELFORD_STEPS = 1 << 14  # longer reductions: the double two-pass value (see spread_like_torch)


def spread_like_torch(
    x: Array, dim: tuple[int, ...], keepdim: bool, correction: float, root: bool, paired: bool
) -> tuple[Array, Array] | None:
    """torch's var (``root``: std) of ``x`` over ``dim`` and the mean beside it, or None where
    torch's order is off, the dtype is not float32/float64 or the layout is not read off.

    torch's CPU var and std are computed in double whatever the dtype, then rounded once: a
    reduction to a single value (``paired`` False: not var_mean) is its ``std_var_all_cpu``,
    torch's own mean (its sum's order, rounded to the dtype) then the squared deviations from
    it added one by one in memory order; any other (and var_mean) is Welford's update in
    double (``WelfordOps``), the reduced elements one by one in memory order, neither update
    fused. Beyond ``WELFORD_STEPS`` steps a float32 gets the exact two-pass value in double
    (the same float32 but where the double lands within a few units of a float32 midpoint) and
    a float64 numpy's value (None)."""
    if not supported(x) or x.size == 0 or x.ndim == 0 or not dim:
        return None
    dtype = x.dtype
    axes = tuple(d % x.ndim for d in dim)
    shape = [1 if d in axes else n for d, n in enumerate(x.shape)]
    if not keepdim:
        shape = [n for d, n in enumerate(x.shape) if d not in axes]
    # the kept dims, then the reduced ones, each group in memory order (outermost first)
    order = sorted(range(x.ndim), key=lambda d: (d in axes, -abs(x.strides[d])))
    steps = math.prod(x.shape[d] for d in axes)
    rows = np.transpose(x, order).reshape(-1, steps).astype(np.float64)
    freedom = max(0.0, steps - correction)
    if not paired and rows.shape[0] == 1:
        mean = np.float64(summation.sum_like_torch(x, tuple(range(x.ndim))) / dtype.type(x.size))
        deviation = rows[0] - mean
        m2 = np.cumsum(deviation * deviation)[-1:]
    elif steps <= WELFORD_STEPS:
        mean, m2 = np.zeros(rows.shape[0]), np.zeros(rows.shape[0])
        for k in range(steps):
            value = rows[:, k]
            delta = value - mean
            mean = mean + delta / np.float64(k + 1)
            m2 = m2 + delta * (value - mean)
    elif dtype == np.float32:
        mean = rows.mean(axis=1)
        deviation = rows - mean[:, None]
        m2 = (deviation * deviation).sum(axis=1)
    else:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):  # no freedom: inf or nan, as torch
        spread = m2 / np.float64(freedom)
    if root:
        spread = np.sqrt(spread)
    kept = order[: x.ndim - len(axes)]  # the kept dims in memory order: back to their own
    back = np.argsort(kept)
    shaped = [
        np.transpose(np.reshape(v, [x.shape[d] for d in kept]), back).astype(dtype).reshape(shape)
        for v in (spread, mean)
    ]
    return shaped[0], shaped[1]
