"""Sparsity patterns: which input elements each element of a traced value depends on.

A ``Pattern`` is a boolean matrix in compressed rows: one row per element of a value (in C
order), one column per element of the inputs the Jacobian is taken with respect to. A step's
pattern rule (the op table's ``pattern``) gives its result's pattern from its arguments':

``rule(step)``, a ``PatternStep``: the arguments' patterns (None for an argument that depends on no
input: a constant), their traced values, the shape of the result, the step's parameters and
the entry's numpy function. It returns the result's pattern (None: it depends on no input).

A rule may only ever add dependencies (a pattern covers its Jacobian's non-zeros: the sweep
test checks every entry's rule against its true Jacobian); an entry that declares none gets
``dense``: every element of the result depends on everything its arguments depend on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from .table import Array

Ints = npt.NDArray[np.int64]
# the most (row, column) pairs a rule may build before the pattern counts as too dense to use
MOST_PAIRS = 5_000_000


class TooDense(Exception):
    """A pattern that would have more entries than ``MOST_PAIRS``: the Jacobian is computed
    dense instead."""


class Pattern:
    """Compressed rows: row ``r`` depends on the columns ``indices[indptr[r]:indptr[r + 1]]``
    (sorted, each once) of ``width`` columns.

    A band (``Pattern.band``: row r depends on the columns r + d for each offset d, those
    within the width) is kept as its offsets until its rows are read: slices, shifts and
    element-wise steps of an input (a stencil) stay bands, which cost nothing to combine."""

    def __init__(self, indptr: Ints, indices: Ints, width: int):
        self._indptr: Ints | None = indptr
        self._indices: Ints | None = indices
        self.width = width
        self.rows = len(indptr) - 1
        self.offsets: tuple[int, ...] | None = None

    @staticmethod
    def band(rows: int, offsets: Sequence[int], width: int) -> Pattern:
        pattern = Pattern.__new__(Pattern)
        pattern._indptr = pattern._indices = None
        pattern.width, pattern.rows = width, rows
        pattern.offsets = tuple(sorted(set(int(o) for o in offsets)))
        return pattern

    def _materialize(self) -> tuple[Ints, Ints]:
        if self._indptr is None or self._indices is None:
            assert self.offsets is not None
            r = np.arange(self.rows, dtype=np.int64)[:, None]
            columns = r + np.asarray(self.offsets, dtype=np.int64)[None, :]
            inside = (columns >= 0) & (columns < self.width)
            indptr = np.zeros(self.rows + 1, dtype=np.int64)
            np.cumsum(inside.sum(axis=1), out=indptr[1:])
            self._indptr = indptr
            self._indices = columns.reshape(-1) if inside.all() else columns[inside]
        return self._indptr, self._indices

    @property
    def indptr(self) -> Ints:
        return self._materialize()[0]

    @property
    def indices(self) -> Ints:
        return self._materialize()[1]

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @staticmethod
    def identity(size: int, offset: int, width: int) -> Pattern:
        """Element k of an input depends on column ``offset + k`` alone."""
        return Pattern.band(size, (offset,), width)

    def take(self, rows: Ints) -> Pattern:
        """The rows at ``rows`` (a row index of -1 is an empty row)."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if len(rows) == self.rows and np.array_equal(rows, np.arange(self.rows)):
            return self
        if self.offsets is not None and len(rows) and rows[0] >= 0:
            shift = int(rows[0])
            if np.array_equal(rows, np.arange(shift, shift + len(rows))):  # a slice of a band
                return Pattern.band(len(rows), [o + shift for o in self.offsets], self.width)
        lengths = np.diff(self.indptr)
        if self.nnz == self.rows and not (lengths - 1).any():  # one entry a row
            if rows.min(initial=0) >= 0:
                indptr = np.arange(len(rows) + 1, dtype=np.int64)
                return Pattern(indptr, self.indices[rows], self.width)
        present = rows >= 0
        counts = np.where(present, lengths[np.where(present, rows, 0)], 0)
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        _check(int(indptr[-1]))
        starts = np.where(present, self.indptr[np.where(present, rows, 0)], 0)
        positions = np.repeat(starts - indptr[:-1], counts) + np.arange(indptr[-1])
        return Pattern(indptr, self.indices[positions], self.width)

    def columns(self) -> Ints:
        """Every column some row depends on, once."""
        return np.unique(self.indices)

    def row_of_each(self) -> Ints:
        """The row of each entry."""
        lengths = np.diff(self.indptr)
        if self.nnz == self.rows and not (lengths - 1).any():
            return np.arange(self.rows, dtype=np.int64)
        return np.repeat(np.arange(self.rows, dtype=np.int64), lengths)

    def transposed(self) -> Pattern:
        order = np.argsort(self.indices, kind="stable")
        counts = np.bincount(self.indices, minlength=self.width)
        indptr = np.zeros(self.width + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return Pattern(indptr, self.row_of_each()[order], self.rows)

    def pairs(self) -> tuple[Ints, Ints]:
        """(row, column) of every entry, by rows."""
        return self.row_of_each(), self.indices

    def padded(self) -> Ints:
        """The columns of each row, in a matrix padded with -1 (one row per row)."""
        lengths = np.diff(self.indptr)
        most = int(lengths.max(initial=0))
        if self.nnz == self.rows * most:
            return self.indices.reshape(self.rows, most)
        out = np.full((self.rows, most), -1, dtype=np.int64)
        place = np.arange(self.nnz) - np.repeat(self.indptr[:-1], lengths)
        out[self.row_of_each(), place] = self.indices
        return out


def _check(pairs: int) -> None:
    if pairs > MOST_PAIRS:
        raise TooDense(f"{pairs} dependencies")


def _from_pairs(rows: Ints, cols: Ints, n_rows: int, width: int) -> Pattern:
    """The pattern with an entry at every (row, column) pair (repeats counted once)."""
    keys = np.sort(rows.astype(np.int64) * max(width, 1) + cols)
    if len(keys):
        keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    counts = np.bincount(keys // max(width, 1), minlength=n_rows)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return Pattern(indptr, keys % max(width, 1), width)


def _from_padded(columns: Ints, width: int) -> Pattern:
    """The pattern of a matrix of columns per row (-1: none; repeats counted once)."""
    columns = _sorted_rows(columns)
    keep = columns >= 0
    keep[:, 1:] &= columns[:, 1:] != columns[:, :-1]
    if keep.all():
        step = columns.shape[1]
        return Pattern(np.arange(len(columns) + 1) * step, columns.reshape(-1), width)
    indptr = np.zeros(len(columns) + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=indptr[1:])
    return Pattern(indptr, columns[keep], width)


def _sorted_rows(columns: Ints) -> Ints:
    """Each row sorted: a few columns by odd-even transposition (numpy sorts each short row
    at a cost of its own), more by ``np.sort``."""
    k = columns.shape[1]
    if k > 8:
        return np.sort(columns, axis=1)
    parts = [columns[:, i].copy() for i in range(k)]
    for sweep in range(k):
        for i in range(sweep % 2, k - 1, 2):
            low = np.minimum(parts[i], parts[i + 1])
            np.maximum(parts[i], parts[i + 1], out=parts[i + 1])
            parts[i] = low
    return np.stack(parts, axis=1) if parts else columns


def union(patterns: Sequence[Pattern]) -> Pattern | None:
    """Row by row, every column any of ``patterns`` (of one number of rows) has."""
    distinct = list({id(p): p for p in patterns}.values())
    if not distinct:
        return None
    if len(distinct) == 1:
        return distinct[0]
    first = distinct[0]
    bands = [p.offsets for p in distinct if p.offsets is not None]
    if len(bands) == len(distinct):
        return Pattern.band(first.rows, [o for b in bands for o in b], first.width)
    if all(
        np.array_equal(p.indptr, first.indptr) and np.array_equal(p.indices, first.indices)
        for p in distinct[1:]
    ):
        return first
    total = sum(p.nnz for p in distinct)
    _check(total)
    most = sum(int(np.diff(p.indptr).max(initial=0)) for p in distinct)
    if first.rows * most <= 4 * total:  # rows of like lengths: sorted row by row
        return _from_padded(np.concatenate([p.padded() for p in distinct], axis=1), first.width)
    rows, cols = zip(*(p.pairs() for p in distinct))
    return _from_pairs(np.concatenate(rows), np.concatenate(cols), first.rows, first.width)


def gathered(pattern: Pattern, out_rows: Ints, arg_rows: Ints, n_out: int) -> Pattern:
    """Row r of the result depends on every row ``arg_rows[k]`` of ``pattern`` where
    ``out_rows[k] == r``."""
    lengths = np.diff(pattern.indptr)[arg_rows]
    total = int(lengths.sum())
    _check(total)
    starts = pattern.indptr[arg_rows]
    ends = np.cumsum(lengths)
    positions = np.repeat(starts - (ends - lengths), lengths) + np.arange(total)
    return _from_pairs(
        np.repeat(out_rows, lengths), pattern.indices[positions], n_out, pattern.width
    )


def _positions(shape: Sequence[int]) -> Ints:
    """Each element's flat position, laid out in ``shape``."""
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(tuple(shape))


def _width(patterns: Sequence[Pattern | None]) -> int:
    return next(p.width for p in patterns if p is not None)


class PatternStep(NamedTuple):
    """What a pattern rule reads of one traced step."""

    patterns: Sequence[Pattern | None]  # the arguments' (None: depends on no input)
    values: Sequence[Array]  # the arguments' traced values (or arrays of their shapes)
    shape: tuple[int, ...]  # the result's shape
    params: dict[str, Any]  # the step's parameters
    forward: Callable[..., Array]  # the entry's numpy function


PatternRule = Callable[[PatternStep], "Pattern | None"]


def _one_operand(
    body: Callable[[Pattern, tuple[int, ...], PatternStep], Pattern],
) -> PatternRule:
    """A rule of one operand: no pattern where the operand depends on no input, else
    ``body(its pattern, its shape, step)``."""

    def rule(step: PatternStep) -> Pattern | None:
        (p,) = step.patterns
        return None if p is None else body(p, np.shape(step.values[0]), step)

    rule.__name__, rule.__doc__ = body.__name__, body.__doc__
    return rule


# -- the rules ------------------------------------------------------------------------------------


def dense(step: PatternStep) -> Pattern | None:
    """Every element of the result depends on everything the arguments depend on (the
    default of an entry that declares no rule)."""
    present = [p for p in step.patterns if p is not None]
    if not present:
        return None
    columns = np.unique(np.concatenate([p.indices for p in present]))
    rows = int(np.prod(step.shape, dtype=np.int64))
    _check(rows * len(columns))
    indptr = np.arange(rows + 1, dtype=np.int64) * len(columns)
    return Pattern(indptr, np.tile(columns, rows), present[0].width)


def nothing(step: PatternStep) -> Pattern | None:
    """A result without a derivative (a mask, a comparison): it depends on no input."""
    return None


def elementwise(step: PatternStep) -> Pattern | None:
    """Broadcasting element-wise steps: an element depends on the elements it is made of."""
    taken = []
    for p, v in zip(step.patterns, step.values):
        if p is None:
            continue
        if np.shape(v) == step.shape:
            taken.append(p)
        else:
            positions = np.broadcast_to(_positions(np.shape(v)), step.shape)
            taken.append(p.take(positions.reshape(-1)))
    return union(taken)


def moved(step: PatternStep) -> Pattern | None:
    """Steps that only move, copy or select elements (reshape, transpose, indexing, stack,
    cat): the step itself, run on the arguments' element positions, says where each element
    of the result comes from."""
    patterns, values = step.patterns, step.values
    width = _width(patterns)
    offsets = np.cumsum([0] + [int(np.size(v)) for v in values])
    sources = [_positions(np.shape(v)) + offset for v, offset in zip(values, offsets)]
    where = np.asarray(step.forward(*sources, **step.params)).reshape(-1)
    if len(values) == 1:
        assert patterns[0] is not None
        return patterns[0].take(where)
    joined = [_empty(int(np.size(v)), width) if p is None else p for p, v in zip(patterns, values)]
    indptr = np.concatenate([[0]] + [p.indptr[1:] + n for p, n in zip(joined, _starts(joined))])
    stacked = Pattern(indptr, np.concatenate([p.indices for p in joined]), width)
    return stacked.take(where)


def _empty(rows: int, width: int) -> Pattern:
    """``rows`` rows that depend on nothing."""
    return Pattern(np.zeros(rows + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), width)


def _starts(patterns: Sequence[Pattern]) -> list[int]:
    return list(np.cumsum([0] + [p.nnz for p in patterns])[:-1])


def _reduced(pattern: Pattern, shape: Sequence[int], kept: Sequence[int]) -> Pattern:
    """Each element of ``kept`` (``shape`` with some sizes made 1) depends on the elements of
    ``shape`` that broadcasting it would cover."""
    groups = np.broadcast_to(_positions(kept), tuple(shape)).reshape(-1)
    every = np.arange(len(groups), dtype=np.int64)
    return gathered(pattern, groups, every, int(np.prod(kept, dtype=np.int64)))


@_one_operand
def reduction(p: Pattern, in_shape: tuple[int, ...], step: PatternStep) -> Pattern:
    """A reduction over ``dim`` (a tuple of axes): an element depends on its group."""
    axes = {d % max(len(in_shape), 1) for d in step.params["dim"]}
    kept = [1 if i in axes else n for i, n in enumerate(in_shape)]
    return _reduced(p, in_shape, kept)


@_one_operand
def summed_to(p: Pattern, in_shape: tuple[int, ...], step: PatternStep) -> Pattern:
    """sum_to, the reverse of broadcasting: an element depends on the copies it sums."""
    kept = (1,) * (len(in_shape) - len(step.shape)) + tuple(step.params["shape"])
    kept = tuple(1 if k == 1 else n for k, n in zip(kept, in_shape))
    return _reduced(p, in_shape, kept)


@_one_operand
def along_dim(p: Pattern, in_shape: tuple[int, ...], step: PatternStep) -> Pattern:
    """An operation along one ``dim`` (softmax, cumsum): an element depends on its line."""
    dim = step.params.get("dim")
    if dim is None or not in_shape:
        kept = [1] * len(in_shape)
    else:
        kept = [1 if i == dim % len(in_shape) else n for i, n in enumerate(in_shape)]
    lines = _reduced(p, in_shape, kept)
    return lines.take(np.broadcast_to(_positions(kept), in_shape).reshape(-1))


def matmul(step: PatternStep) -> Pattern | None:
    """torch.matmul: out[..., i, k] depends on a[..., i, j] and b[..., j, k] for every j; an
    operand that depends on no input contributes its non-zero entries only (a constant
    banded matrix makes a banded pattern)."""
    patterns, values = step.patterns, step.values
    shape_a, shape_b = np.shape(values[0]), np.shape(values[1])
    a2 = (1, *shape_a) if len(shape_a) == 1 else shape_a
    b2 = (*shape_b, 1) if len(shape_b) == 1 else shape_b
    m, n, k = a2[-2], a2[-1], b2[-1]
    lead = np.broadcast_shapes(a2[:-2], b2[:-2])
    full = (*lead, m, n, k)
    _check(int(np.prod(full, dtype=np.int64)))
    out = np.broadcast_to(_positions((*lead, m, k))[..., :, None, :], full).reshape(-1)
    ia = np.broadcast_to(_positions(a2)[..., :, :, None], full).reshape(-1)
    ib = np.broadcast_to(_positions(b2)[..., None, :, :], full).reshape(-1)
    n_out = int(np.prod(step.shape, dtype=np.int64))
    parts = []
    # a constant operand's zeros cut the other operand's dependencies
    for p, index, other, at in ((patterns[0], ia, 1, ib), (patterns[1], ib, 0, ia)):
        if p is None:
            continue
        if patterns[other] is None:
            keep = np.asarray(values[other]).reshape(-1)[at] != 0
            parts.append(gathered(p, out[keep], index[keep], n_out))
        else:
            parts.append(gathered(p, out, index, n_out))
    return union(parts)
