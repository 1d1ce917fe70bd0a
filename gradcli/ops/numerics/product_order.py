"""torch's order of multiplying and adding in a float32 matrix product on the CPU, so that a
training loop's ``loss.item()`` ends in torch's last bits (the sums' counterpart is
``summation``; both are on only inside ``summation.torch_order()``, as in ``gradcli run``).

torch 2.13 hands every float32 ``a @ b`` of two matrices to MKL's sgemm. What sgemm does with
each output element was measured against torch on this project's x86 machines (AVX-512;
tests/engine/test_engine_product_order.py checks it bit for bit), by the number ``n`` of the
product's columns:

- ``n`` of 12 or more: each element is a chain of fused multiply-adds (one rounding a step)
  over ``k``, cut into blocks: the whole of ``k`` up to 192, two halves of ``k // 2`` up to
  384 (and the leftover element, if ``k`` is odd, a block of its own), else blocks of 192 and
  the rest. Each block starts from zero and is added to the output, block by block.
- ``n`` of 2, 3, 4 or 8, ``b`` not transposed (or ``k`` of 3 or less): a plain chain over
  the whole of ``k``, each product rounded, then added (no fused multiply-add, no blocks).
- ``n`` of 1, ``a`` transposed (its columns contiguous): the plain chain.
- ``n`` of 1, ``a`` not transposed (torch then asks sgemm for dot products of ``a``'s rows):
  rows four at a time, each a dot product in four lanes without fused multiply-adds: the first
  ``(k - 1) % 4 + 1`` products added one by one into lane 0, then the rest four at a time lane
  by lane, then the lanes as ``(l0 + l2) + (l1 + l3)``. With ``k`` of 4 or less that is the
  plain chain for every row; otherwise the last ``m % 4`` rows go through another kernel, so
  the product is followed only when ``m`` is a multiple of 4.
- ``m`` of 1 (a row times a matrix): the plain chain, or with ``b`` transposed (a layer's
  weight), the dot products above with ``b``'s columns as the rows (``n`` a multiple of 4, or
  ``k`` of 4 or less).
- anything else (``n`` of 5 to 7 and 9 to 11, whose leftover columns MKL rounds in places not
  read off yet; the layouts above excluded): numpy's product, whose last bits may differ from
  torch's.

Products of other dtypes, of vectors and of batches are numpy's as well, and so are products
of more than a million multiply-adds (``_MOST_WORK``) or a ``k`` over 4,096: a fused step is a
few numpy operations over the ``m x n`` output, so following ``k`` steps costs ``k`` times several
microseconds, some 30 to 100 times numpy's product (a 64 x 1,000 @ 1,000 x 100 layer: 15 ms
against 0.2 ms), which would make a mid-sized network's training loop several times slower
than torch for its last bits. Tutorials' small products (a polynomial fit, a layer of a few
units, one sample at a time) are within the bound. The plain chain and the dot kernel's lanes
make their products at once, then add them in order (``_chained``): a step costs one numpy call
where the output is wide, and a long chain of a narrow output is one ``np.add.accumulate``.

``nn.Linear``'s product with a bias is torch's ``addmm``, whose fused kernels start from the
bias and add each block of ``k`` to it: ``addmm_like_torch`` gives that value where it differs
from the product's plus the bias (more than one block).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import summation
from .single_precision import MANTISSA_TAIL, MIDPOINT, float32_sum

Array = np.ndarray[Any, Any]

_FUSED_FROM = 12  # columns from which sgemm's kernels fuse multiply and add
_PLAIN = frozenset({2, 3, 4, 8})  # columns whose kernel rounds each product, then adds
_SHORT = 3  # a k this short is a plain chain whatever b's layout
_BLOCK = 192  # sgemm's block of k (fused kernels)
_MOST_STEPS = 4096  # a longer k is numpy's: a Python loop over it would cost too much
_MOST_WORK = 1_000_000  # m * n * k beyond which the product is numpy's (see the text)


def matmul_like_torch(a: Array, b: Array) -> Array | None:
    """``a @ b`` rounded as torch's CPU product rounds it, or None where that is numpy's (or
    not known)."""
    if not _followed(a, b):
        return None
    m, k = a.shape
    n = b.shape[1]
    if m == 1:  # a row times a matrix: sgemm's matrix-vector kernels
        if not _transposed(b):
            return _plain_chain(a, b)
        if k <= _LANES or n % _LANES == 0:
            return _dot_lanes(b.T, a[0])[None, :]
        return None
    if n >= _FUSED_FROM:
        out = np.zeros((m, n), np.float32)
        for start, stop in _blocks(k):
            out += _fused_chain(a[:, start:stop], b[start:stop])
        return out
    if (n in _PLAIN and (k <= _SHORT or not _transposed(b))) or (n == 1 and _transposed(a)):
        return _plain_chain(a, b)
    if n == 1 and (k <= _LANES or m % _LANES == 0):
        return _dot_lanes(a, b[:, 0])[:, None]
    return None


def addmm_like_torch(bias: Array, a: Array, b: Array) -> Array | None:
    """``bias + a @ b`` rounded as torch's addmm rounds it where that differs from the product
    then the bias added (the fused kernels over more than one block of ``k``), else None."""
    if not _followed(a, b) or bias.dtype != np.float32:
        return None
    m, k = a.shape
    if m == 1 or b.shape[1] < _FUSED_FROM or k <= _BLOCK:
        return None  # not the fused kernels, or one block: the same value either way
    out = np.array(np.broadcast_to(bias, (m, b.shape[1])), np.float32)
    for start, stop in _blocks(k):
        out += _fused_chain(a[:, start:stop], b[start:stop])
    return out


def _followed(a: Array, b: Array) -> bool:
    """Whether ``a @ b`` is one this module follows: gradcli run's torch order in force, two
    float32 matrices, at most ``_MOST_STEPS`` terms and ``_MOST_WORK`` multiply-adds."""
    if not summation.in_force() or a.ndim != 2 or b.ndim != 2:
        return False
    if a.dtype != np.float32 or b.dtype != np.float32:
        return False
    m, k = a.shape
    return bool(0 < k <= _MOST_STEPS and 0 < m and m * b.shape[1] * k <= _MOST_WORK)


def _transposed(x: Array) -> bool:
    """Whether a matrix is laid out column by column (torch passes it to sgemm transposed)."""
    return x.shape[0] > 1 and x.shape[1] > 1 and x.strides[0] < x.strides[1]


def _blocks(k: int) -> list[tuple[int, int]]:
    """The runs of ``k`` that sgemm's fused kernels add up separately."""
    width = k if k <= _BLOCK else (k // 2 if k <= 2 * _BLOCK else _BLOCK)
    return [(start, min(k, start + width)) for start in range(0, k, width)]


_LANES = 4  # lanes of the dot-product kernel (n = 1)


def rows_like_torch(rows: Array, b: Array) -> Array | None:
    """Each row of ``rows`` times ``b``, rounded as ``matmul_like_torch(row[None, :], b)``
    rounds that one row's product, for all the rows at once (a Jacobian's passes, one per basis
    vector, replayed together: each keeps the bits of its own pass); None where a row's product
    is numpy's. Every kernel of a row times a matrix rounds each output element on its own, in
    an order that does not depend on the other rows, so the rows computed together are the rows
    computed apart."""
    if not len(rows) or not _followed(rows[:1], b):
        return None
    if not _transposed(b):
        return _plain_chain(rows, b)
    count, k = rows.shape
    n = b.shape[1]
    if k <= _LANES or n % _LANES == 0:  # each row's dot products with b's columns
        products = rows[:, None, :] * b.T  # float32 products, each rounded
        return _lanes(products.reshape(count * n, k)).reshape(count, n)
    return None


def _dot_lanes(a: Array, v: Array) -> Array:
    """Each row's dot product with ``v`` as sgemm's dot kernel adds it (the module's text)."""
    return _lanes(a * v)  # float32 products, each rounded


def _lanes(products: Array) -> Array:
    """The sums of each row of ``products`` as sgemm's dot kernel adds a row's products."""
    m, k = products.shape
    head = (k - 1) % _LANES + 1
    # steps[0]: the lanes after the head's products; steps[b]: the b-th block's four products
    steps = np.zeros(((k - head) // _LANES + 1, m, _LANES), np.float32)
    for i in range(head):
        steps[0, :, 0] += products[:, i]
    steps[1:] = products[:, head:].reshape(m, -1, _LANES).transpose(1, 0, 2)
    lanes = _chained(steps)
    summed: Array = (lanes[:, 0] + lanes[:, 2]) + (lanes[:, 1] + lanes[:, 3])
    return summed


def _plain_chain(a: Array, b: Array) -> Array:
    """Each element ``((0 + a0 b0) + a1 b1) + ...``, every product and sum rounded."""
    m, k = a.shape
    steps = np.zeros((k + 1, m, b.shape[1]), np.float32)  # steps[0]: the chain's zero
    np.multiply(a.T[:, :, None], b[:, None, :], out=steps[1:])
    return _chained(steps)


def _chained(steps: Array) -> Array:
    """``((steps[0] + steps[1]) + steps[2]) + ...``, strictly in order, each sum rounded: a
    numpy call a step where the steps are wide, else one ``np.add.accumulate`` (which adds in
    order, an inner loop per element: slow over wide steps, quick over many narrow ones)."""
    if steps[0].size >= len(steps):
        out: Array = steps[0].copy()
        for step in steps[1:]:
            out += step
        return out
    np.add.accumulate(steps, axis=0, out=steps)
    last: Array = steps[-1].copy()  # not a view holding every step
    return last


def _fused_chain(a: Array, b: Array) -> Array:
    """Each element ``fma(a2, b2, fma(a1, b1, a0 b0))``, each step rounded once: a product of
    two float32s is exact in float64, so a step is a float64 sum rounded to float32, but where
    that sum landed on a float32 midpoint (``float32_sum`` settles those few). The buffers are
    made once: a step is a handful of numpy passes over the output and no allocation."""
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    shape = (a.shape[0], b.shape[1])
    out = np.zeros(shape, np.float32)
    acc = np.zeros(shape, np.float64)  # out's values, in float64
    product = np.empty(shape, np.float64)
    wide = np.empty(shape, np.float64)
    tail = np.empty(shape, np.int64)
    tie = np.empty(shape, bool)
    for i in range(a.shape[1]):
        np.multiply(a64[:, i : i + 1], b64[i : i + 1], out=product)
        np.add(acc, product, out=wide)
        np.bitwise_and(wide.view(np.int64), MANTISSA_TAIL, out=tail)
        np.equal(tail, MIDPOINT, out=tie)
        if tie.any():
            out[...] = float32_sum(acc, product)
        else:
            np.copyto(out, wide, casting="same_kind")
        np.copyto(acc, out)
    return out
