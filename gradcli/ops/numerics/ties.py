"""Which of several equal elements torch 2.13's CPU kernels select, by doing what they do.

Among ties, ``topk``, ``kthvalue``, ``mode`` and ``sort`` (stable=False) return the index
their CPU kernel's algorithm leaves in place, and the gradient goes to that element. topk runs
the C++ standard library's ``partial_sort`` (when ``k * 64 <= n``) or ``nth_element`` then
``sort`` of the first ``k - 1``; mode runs ``sort`` and takes the last of the longest run (the
smallest value of those as frequent); sort runs ``sort`` (an introsort: rows of up to 16 are
insertion-sorted, so stably); kthvalue runs torch's own quickselect (a median-of-three pivot,
Hoare's partition). max/min, argmax/argmin and median along a dim need no replay: their
kernels take the first of ties (median: orders ties by index).

The orderings below replay those algorithms (as libstdc++, which torch's Linux wheels are built
with, implements them) on a row of (value, index) pairs, step by step, so their permutation of
equal elements is the kernel's. Rows without equal elements have one answer, which numpy gives
faster (``distinct``): the replay runs only on rows with ties (topk with sorted=False: on
every row, its order is the selection's even without ties).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..table import Array

Pair = tuple[float, int]
Less = Callable[[Pair, Pair], bool]

_THRESHOLD = 16  # libstdc++'s introsort leaves runs this short to the final insertion sort


def greater_or_nan(a: Pair, b: Pair) -> bool:
    """topk(largest=True)'s order and kthvalue's test: nan first, then the larger."""
    return (math.isnan(a[0]) and not math.isnan(b[0])) or a[0] > b[0]


def less_or_number(a: Pair, b: Pair) -> bool:
    """topk(largest=False)'s order: the smaller first, nan last."""
    return (not math.isnan(a[0]) and math.isnan(b[0])) or a[0] < b[0]


def less(a: Pair, b: Pair) -> bool:
    """mode's order: by value alone."""
    return a[0] < b[0]


def _log2(n: int) -> int:
    return n.bit_length() - 1


# -- the standard library's heap, sort and selection (libstdc++'s steps) ----------------------


def _sift(row: list[Pair], first: int, hole: int, length: int, value: Pair, lt: Less) -> None:
    """Move the hole at ``hole`` of the heap ``row[first:first + length]`` down to a leaf by
    the larger child, then push ``value`` up from there (libstdc++'s __adjust_heap)."""
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if lt(row[first + child], row[first + child - 1]):
            child -= 1
        row[first + hole] = row[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        row[first + hole] = row[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and lt(row[first + parent], value):
        row[first + hole] = row[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    row[first + hole] = value


def _make_heap(row: list[Pair], first: int, last: int, lt: Less) -> None:
    length = last - first
    if length < 2:
        return
    for parent in range((length - 2) // 2, -1, -1):
        _sift(row, first, parent, length, row[first + parent], lt)


def _pop_heap(row: list[Pair], first: int, last: int, result: int, lt: Less) -> None:
    """The heap's top to ``result``; ``result``'s element into the heap ``[first, last)``."""
    value = row[result]
    row[result] = row[first]
    _sift(row, first, 0, last - first, value, lt)


def _heap_select(row: list[Pair], first: int, middle: int, last: int, lt: Less) -> None:
    _make_heap(row, first, middle, lt)
    for i in range(middle, last):
        if lt(row[i], row[first]):
            _pop_heap(row, first, middle, i, lt)


def _sort_heap(row: list[Pair], first: int, last: int, lt: Less) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(row, first, last, last, lt)


def partial_sort(row: list[Pair], middle: int, lt: Less) -> None:
    """The ``middle`` first elements in order, the rest in the order the heap leaves them."""
    _heap_select(row, 0, middle, len(row), lt)
    _sort_heap(row, 0, middle, lt)


def _insertion_sort(row: list[Pair], first: int, last: int, lt: Less) -> None:
    """Stable: an element moves only past elements it is less than."""
    for i in range(first + 1, last):
        value, j = row[i], i
        if lt(value, row[first]):
            row[first + 1 : i + 1] = row[first:i]
            row[first] = value
            continue
        while lt(value, row[j - 1]):
            row[j] = row[j - 1]
            j -= 1
        row[j] = value


def _median_to_first(row: list[Pair], result: int, a: int, b: int, c: int, lt: Less) -> None:
    if lt(row[a], row[b]):
        if lt(row[b], row[c]):
            chosen = b
        elif lt(row[a], row[c]):
            chosen = c
        else:
            chosen = a
    elif lt(row[a], row[c]):
        chosen = a
    elif lt(row[b], row[c]):
        chosen = c
    else:
        chosen = b
    row[result], row[chosen] = row[chosen], row[result]


def _partition(row: list[Pair], first: int, last: int, lt: Less) -> int:
    """The median of three to ``first``, then Hoare's partition of the rest around it; the
    start of the upper part."""
    _median_to_first(row, first, first + 1, first + (last - first) // 2, last - 1, lt)
    pivot = row[first]
    low, high = first + 1, last
    while True:
        while lt(row[low], pivot):
            low += 1
        high -= 1
        while lt(pivot, row[high]):
            high -= 1
        if low >= high:
            return low
        row[low], row[high] = row[high], row[low]
        low += 1


def _introsort(row: list[Pair], first: int, last: int, depth: int, lt: Less) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_select(row, first, last, last, lt)
            _sort_heap(row, first, last, lt)
            return
        depth -= 1
        cut = _partition(row, first, last, lt)
        _introsort(row, cut, last, depth, lt)
        last = cut


def sort(row: list[Pair], lt: Less, last: int | None = None) -> None:
    """``row[:last]`` in order (an introsort, then an insertion sort of what it left)."""
    end = len(row) if last is None else last
    if end <= 0:
        return
    _introsort(row, 0, end, 2 * _log2(end), lt)
    _insertion_sort(row, 0, end, lt)  # the same steps as libstdc++'s guarded/unguarded halves


def nth_element(row: list[Pair], nth: int, lt: Less) -> None:
    """The element of rank ``nth`` at ``nth``, those before it not greater, those after not
    less (an introselect)."""
    first, last = 0, len(row)
    if first == last or nth == last:
        return
    depth = 2 * _log2(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(row, first, nth + 1, last, lt)
            row[first], row[nth] = row[nth], row[first]
            return
        depth -= 1
        cut = _partition(row, first, last, lt)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(row, first, last, lt)


# -- torch's own quickselect (kthvalue) --------------------------------------------------------


def quickselect(row: list[Pair], k: int) -> None:
    """Torch's quickselect: the element of rank ``k`` (from 0) at ``k``."""
    gt = greater_or_nan
    left, right = 0, len(row) - 1

    def swap(i: int, j: int) -> None:
        row[i], row[j] = row[j], row[i]

    while right > left:
        if right == left + 1:
            if gt(row[left], row[right]):
                swap(left, right)
            return
        swap(left + (right - left) // 2, left + 1)
        if gt(row[left + 1], row[right]):
            swap(left + 1, right)
        if gt(row[left], row[right]):
            swap(left, right)
        if gt(row[left + 1], row[left]):
            swap(left + 1, left)
        i, j, pivot = left + 1, right, row[left]
        while True:
            i += 1
            while gt(pivot, row[i]):
                i += 1
            j -= 1
            while gt(row[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(left, j)
        if j <= k:
            left = i
        if j >= k:
            right = j - 1


# -- the kernels' indices, row by row ----------------------------------------------------------


def _pairs(values: Array) -> list[Pair]:
    return [(float(v), i) for i, v in enumerate(values.tolist())]


def sorted_row(values: Array, less: Less) -> list[int]:
    """The indices torch's sort (stable=False) gives for one row."""
    row = _pairs(values)
    sort(row, less)
    return [i for _, i in row]


def topk_row(values: Array, k: int, largest: bool, ordered: bool) -> list[int]:
    """The indices torch's topk gives for one row."""
    row, lt = _pairs(values), greater_or_nan if largest else less_or_number
    if k == 0:
        return []
    if k * 64 <= len(row):
        partial_sort(row, k, lt)
    else:
        nth_element(row, k - 1, lt)
        if ordered:
            sort(row, lt, k - 1)
    return [i for _, i in row[:k]]


def kthvalue_row(values: Array, k: int) -> int:
    """The index torch's kthvalue gives for one row (k from 1)."""
    row = _pairs(values)
    quickselect(row, k - 1)
    return row[k - 1][1]


def mode_row(values: Array) -> tuple[float, int]:
    """The value and index torch's mode gives for one (non-empty) row: of the most frequent
    values the smallest (a strictly longer run replaces the one found), and the index of the
    last element of its run in the sorted row. A nan equals nothing, so each is a run of 1."""
    row = _pairs(values)
    sort(row, less)
    best, best_count, count = row[0], 0, 0
    for j, pair in enumerate(row):
        count += 1
        if j == len(row) - 1 or pair[0] != row[j + 1][0]:
            if count > best_count:
                best, best_count = pair, count
            count = 0
    return best


def distinct(rows: Array, nan: bool = False) -> Array:
    """Whether each row (the last axis) of a 2-d array holds no two equal values (nor two nan,
    which a kernel may also reorder; with ``nan``, no nan at all)."""
    if nan and rows.shape[-1]:
        return np.asarray(distinct(rows) & ~np.any(np.isnan(rows), axis=-1))
    if rows.shape[-1] < 2:
        return np.ones(rows.shape[0], dtype=bool)
    ordered = np.sort(rows, axis=-1)
    same = (ordered[:, 1:] == ordered[:, :-1]) | (
        np.isnan(ordered[:, 1:]) & np.isnan(ordered[:, :-1])
    )
    return np.asarray(~np.any(same, axis=-1))


def along(
    x: Array,
    axis: int,
    fast: Array,
    row: Callable[[Array], list[int]],
    nan: bool = False,
    every: bool = False,
) -> Array:
    """The indices ``fast`` (numpy's, along ``axis`` of ``x``, int64), with those of each row
    of ``x`` along ``axis`` that holds equal values (or a nan, for ``mode``'s order, which
    nan breaks; or of every row, where the kernel's order is not numpy's even without ties)
    replaced by ``row(values)``, the kernel's."""
    rows = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis]) if x.size else None
    if rows is None:
        return fast
    out = np.moveaxis(fast, axis, -1).reshape(rows.shape[0], -1).copy()
    for r in range(rows.shape[0]) if every else np.flatnonzero(~distinct(rows, nan)):
        out[r] = row(rows[r])
    moved = out.reshape(np.moveaxis(fast, axis, -1).shape)
    return np.asarray(np.moveaxis(moved, -1, axis), dtype=np.int64)
