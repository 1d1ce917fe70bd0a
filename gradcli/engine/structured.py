"""Structured Jacobians: as few passes as the Jacobian's sparsity pattern allows.

The function is traced once (``compile.trace``); the sparsity pattern of its output (which
input elements each output element depends on) is propagated through the tape by each step's
pattern rule (the op table's ``pattern``, see ``ops.patterns``). Then:

- a **row scaling of a matrix product**: when the only step that reads the input is a product
  with a constant matrix M (``M @ x`` or ``x @ M``), the Jacobian is J_u · M, where J_u, the
  Jacobian of the rest of the program with respect to u = M x, is itself structured (a
  diagonal for ``tanh(A @ x)``: one forward pass, then diag(f') · A);
- otherwise the columns (or the rows, whichever needs fewer) are coloured so that no two
  columns of one colour share a row (Curtis-Powell-Reid; greedy distance-2 colouring, with the
  colourings of a diagonal and of a band tried first); one forward pass per colour of columns
  (a reverse pass per colour of rows) gives the compressed Jacobian, each of whose entries is
  one entry of J. A diagonal or element-wise Jacobian takes one forward pass.

``structured_jacobian`` raises ``NotStructured`` where the structure does not pay (the
pattern is dense, or the tape's shapes follow the point's values); the caller then computes
the dense Jacobian.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..ops import patterns as R
from ..ops.patterns import Ints, Pattern, TooDense
from ..ops.table import OPS, Array
from .compile import NotBatchable, Tape, batch_size, run_batched, trace
from .functional import Inputs, _leaves, _reverse
from .tensor import Tensor, _forward_mode, apply, set_grad_enabled

# colourings with at most this many colours run as eager passes; more, as one batched replay
EAGER_PASSES = 4
# the greedy colouring visits columns one by one: beyond this many it is not tried
MOST_GREEDY = 200_000


class NotStructured(Exception):
    """The structure does not pay, or cannot be found: compute the dense Jacobian."""


@dataclass(frozen=True, eq=False)
class Sparse:
    """One block of a Jacobian in coordinates: ``values[k]`` at (``rows[k]``, ``cols[k]``)
    of the matrix ``shape`` (output elements, input elements; both flat, in C order)."""

    rows: Ints
    cols: Ints
    values: Array
    shape: tuple[int, int]

    def dense(self) -> Array:
        out = np.zeros(self.shape, dtype=self.values.dtype)
        out[self.rows, self.cols] = self.values
        return out

    @staticmethod
    def of(array: Array) -> Sparse:
        """The non-zero entries of a dense block (output elements by input elements)."""
        rows, cols = np.nonzero(array)
        return Sparse(rows, cols, array[rows, cols], (array.shape[0], array.shape[1]))


@dataclass(frozen=True, eq=False)
class Structured:
    """The blocks (one per input: a matrix of output elements by input elements, dense or
    ``Sparse``), how they were found, and the number of passes it took."""

    blocks: tuple[Array | Sparse, ...]
    how: str
    passes: int
    out_shape: tuple[int, ...]


def propagate(tape: Tape, starts: dict[int, Pattern]) -> list[Pattern | None]:
    """The pattern of each slot of ``tape``, from those of ``starts`` (the others: none)."""
    patterns: list[Pattern | None] = [None] * tape.size
    values: list[Any] = [None] * tape.size
    for slot, value in tape.constants:
        values[slot] = value
    for slot, pattern in starts.items():
        patterns[slot] = pattern
    shapes = tape.shapes
    for name, _, args, params, out in tape.steps:
        given = [patterns[a] for a in args]
        if all(p is None for p in given):
            continue
        op = OPS[name]
        if not op.differentiable:
            continue
        rule = op.pattern or R.dense
        assert op.forward is not None
        # a value computed from the inputs stands in by its shape (no rule reads it)
        arrays = [values[a] if values[a] is not None else _shaped(shapes[a]) for a in args]
        patterns[out] = rule(given, arrays, shapes[out], params, op.forward)
    return patterns


def _shaped(shape: tuple[int, ...]) -> Array:
    """An array of ``shape`` that holds no memory."""
    return np.broadcast_to(np.zeros(()), shape)


# -- colouring ----------------------------------------------------------------------------------


def colours_of(pattern: Pattern) -> Ints:
    """A colour for each column such that no row has two columns of one colour: one colour
    where each row has at most one entry; a band's (column mod its width) where that is as
    few as the longest row; else the fewer of the band's and greedy distance-2."""
    width = pattern.width
    if width == 0:
        return np.zeros(0, dtype=np.int64)
    if pattern.offsets is not None:  # a band: its columns r + d have distinct d mod its width
        spread = pattern.offsets[-1] - pattern.offsets[0] + 1 if pattern.offsets else 1
        return np.arange(width, dtype=np.int64) % min(spread, width)
    lengths = np.diff(pattern.indptr)
    if lengths.max(initial=0) <= 1:
        return np.zeros(width, dtype=np.int64)
    present = lengths > 0
    first = pattern.indices[pattern.indptr[:-1][present]]
    last = pattern.indices[pattern.indptr[1:][present] - 1]
    band = int((last - first).max()) + 1
    banded = np.arange(width, dtype=np.int64) % band
    banded_valid = band < width and valid(pattern, banded)
    if banded_valid and band == lengths.max():  # as few as the longest row: the fewest
        return banded
    if width > MOST_GREEDY:
        if banded_valid:
            return banded
        raise NotStructured(f"{width} columns are too many to colour one by one")
    greedy = _greedy(pattern)
    return banded if banded_valid and band <= greedy.max() + 1 else greedy


def valid(pattern: Pattern, colours: Ints) -> bool:
    """Whether no row has two columns of one colour."""
    count = int(colours.max(initial=0)) + 1
    rows, cols = pattern.pairs()
    keys = rows * count + colours[cols]
    if pattern.rows * count <= 4 * len(keys) + 1024:
        return bool(np.bincount(keys, minlength=1).max(initial=0) <= 1)
    keys = np.sort(keys)
    return not (keys[1:] == keys[:-1]).any()


def _greedy(pattern: Pattern) -> Ints:
    """Greedy distance-2 colouring, columns in order: each takes the smallest colour that no
    column sharing a row with it has."""
    columns = pattern.transposed()
    colours = np.full(pattern.width, -1, dtype=np.int64)
    indptr, indices = pattern.indptr, pattern.indices
    cptr, cind = columns.indptr, columns.indices
    for j in range(pattern.width):
        rows = cind[cptr[j] : cptr[j + 1]]
        if len(rows) == 0:
            colours[j] = 0
            continue
        neighbours = np.concatenate([indices[indptr[r] : indptr[r + 1]] for r in rows])
        taken = colours[neighbours]
        used = np.zeros(len(neighbours) + 1, dtype=bool)
        used[taken[(taken >= 0) & (taken <= len(neighbours))]] = True
        colours[j] = int(np.argmin(used))
    return colours


# -- the Jacobian ------------------------------------------------------------------------------


def structured_jacobian(
    func: Callable[..., Tensor],
    inputs: Inputs,
    max_batch_elements: int | None = None,
    force: bool = False,
) -> Structured:
    """The Jacobian of ``func`` at ``inputs`` in as few passes as its structure allows (see
    the module docstring). Raises ``NotStructured`` where that is no fewer than dense (unless
    ``force``), or where the pattern cannot be found.

    One forward-mode pass is traced, along the tangent of all ones: its primal steps give the
    pattern, and where one colour of columns is enough (a diagonal, an element-wise program)
    its tangent is the compressed Jacobian already; more colours replay it along a batch.
    """
    _, xs = _leaves(inputs, requires_grad=False)
    arrays = [x.data for x in xs]
    if len(xs) == 1:  # the primal pass alone first: a product's tangent costs as much as J
        scaled = _row_scaling(trace(lambda *v: [func(*v)], *arrays), arrays[0], max_batch_elements)
        if scaled is not None:
            return scaled
    ones = [np.ones(a.shape, a.dtype) for a in arrays]
    tangent_pass = _tangent_pass(func, len(xs))
    traced: list[Tensor] = []  # the pass as traced: [out, J 1]

    def tracing(*values: Tensor) -> list[Tensor]:
        traced[:] = tangent_pass(*values)
        return traced

    tape = trace(tracing, *ones, *arrays)
    if tape.dynamic:
        raise NotStructured("the shape of a step follows the values of the point")
    primal = _primal(tape, len(xs))
    (out_slot,) = primal.outputs
    out_shape = tape.shapes[out_slot]
    sizes = [int(a.size) for a in arrays]
    offsets = np.cumsum([0, *sizes])
    width = int(offsets[-1])
    starts = {
        slot: Pattern.identity(size, int(offset), width)
        for slot, size, offset in zip(primal.inputs, sizes, offsets)
    }
    try:
        pattern = propagate(primal, starts)[out_slot]
        n_out = int(np.prod(out_shape, dtype=np.int64))
        if pattern is None:
            pattern = Pattern(np.zeros(n_out + 1, dtype=np.int64), np.zeros(0, np.int64), width)
        by_columns = colours_of(pattern)
        columns = int(by_columns.max(initial=-1)) + 1
        # no colouring of rows takes fewer colours than the most rows a column is in
        if pattern.offsets is not None:  # a band's columns are in as many rows as it has offsets
            fewest = len(pattern.offsets)
        else:
            fewest = int(np.bincount(pattern.indices, minlength=1).max(initial=0))
        worth = columns > max(fewest, 1)
        by_rows = colours_of(pattern.transposed()) if worth else np.zeros(n_out, np.int64)
    except TooDense as exc:
        raise NotStructured(str(exc)) from None
    rows = int(by_rows.max(initial=-1)) + 1 if worth else columns
    if min(columns, rows) >= min(width, n_out) and not force:
        raise NotStructured("no fewer passes than the dense Jacobian")
    if columns <= rows:
        if columns == 1:  # the seed of one colour is all ones: the pass as traced
            compressed = traced[1].data.reshape(-1, 1)
        else:
            compressed = _forward_compressed(tape, tangent_pass, xs, by_columns, max_batch_elements)
        r, c = pattern.pairs()
        values = compressed[:, 0][r] if columns == 1 else compressed[r, by_columns[c]]
        how, passes = f"{columns} colour{'s' * (columns != 1)} of columns, forward", columns
    else:
        values = _reverse_compressed(func, xs, by_rows, pattern, primal, max_batch_elements)
        how, passes = f"{rows} colour{'s' * (rows != 1)} of rows, reverse", rows
        r, c = pattern.pairs()
    blocks = []
    for size, offset in zip(sizes, offsets):
        if len(sizes) == 1:
            blocks.append(Sparse(r, c, np.asarray(values), (n_out, size)))
            continue
        keep = (c >= offset) & (c < offset + size)
        blocks.append(Sparse(r[keep], c[keep] - offset, values[keep], (n_out, size)))
    return Structured(tuple(blocks), how, passes, out_shape)


def _primal(tape: Tape, n: int) -> Tape:
    """The steps of a traced tangent pass that its primal output needs, with the primal
    inputs (after the ``n`` tangents) as its inputs."""
    out = tape.outputs[0]
    needed, kept = {out}, []
    for step in reversed(tape.steps):
        if step[4] in needed:
            kept.append(step)
            needed.update(step[2])
    kept.reverse()
    return replace(tape, inputs=tape.inputs[n:], outputs=(out,), steps=tuple(kept))


def _seeds(colours: Ints, count: int, dtype: np.dtype[Any]) -> Array:
    """One row per colour: 1 at the elements of that colour."""
    seeds = np.zeros((count, len(colours)), dtype=dtype)
    seeds[colours, np.arange(len(colours))] = 1
    return seeds


def _forward_compressed(
    tape: Tape,
    tangent_pass: Callable[..., list[Tensor]],
    xs: Sequence[Tensor],
    colours: Ints,
    most: int | None,
) -> Array:
    """The compressed Jacobian, (output elements, colours): the traced tangent pass replayed
    along the seed of each colour of columns (one eager pass a seed where a step has no
    batch rule)."""
    count = int(colours.max(initial=-1)) + 1
    if count == 0:  # no input elements
        return np.zeros((int(np.prod(tape.shapes[tape.outputs[0]], dtype=np.int64)), 0))
    arrays = [x.data for x in xs]
    dtype = np.result_type(*arrays, np.float32)
    seeds = _seeds(colours, count, dtype)
    offsets = np.cumsum([0] + [x.numel() for x in xs])
    split = [
        seeds[:, offsets[i] : offsets[i + 1]].reshape((count, *x.shape)).astype(x.dtype)
        for i, x in enumerate(xs)
    ]
    try:
        chunk = batch_size(tape, most) or count
        flags = [True] * len(xs) + [False] * len(xs)
        parts = []
        for start in range(0, count, chunk):
            part = [s[start : start + chunk] for s in split]
            _, out = run_batched(tape, [*part, *arrays], flags)
            parts.append(np.asarray(out).reshape(len(part[0]), -1))
        return np.asarray(np.concatenate(parts).T)
    except NotBatchable:
        rows = [
            tangent_pass(*[Tensor(s[k]) for s in split], *xs)[1].data.reshape(-1)
            for k in range(count)
        ]
        return np.stack(rows, axis=1)


def _reverse_compressed(
    func: Callable[..., Tensor],
    xs: Sequence[Tensor],
    colours: Ints,
    pattern: Pattern,
    tape: Tape,
    most: int | None,
) -> Array:
    """One reverse pass per colour of rows; each entry (r, j) of the pattern is the
    compressed row of r's colour at column j."""
    count = int(colours.max(initial=-1)) + 1
    if count == 0:  # no output elements: no entries
        return np.zeros(0)
    out_shape = tape.shapes[tape.outputs[0]]
    dtype = np.result_type(*[x.dtype for x in xs], np.float32)
    seeds = _seeds(colours, count, dtype).reshape((count, *out_shape))

    def pass_of(seed: Array) -> Array:
        values = [Tensor(x.data, requires_grad=True) for x in xs]
        found = _reverse(func(*values), values, Tensor(seed))
        return np.concatenate([g.data.reshape(-1) for g in found])

    if count <= EAGER_PASSES:
        compressed = np.stack([pass_of(seed) for seed in seeds])
    else:

        def cotangent_pass(seed: Tensor, *values: Tensor) -> list[Tensor]:
            for value in values:
                value.requires_grad = True
            return list(_reverse(func(*values), values, seed))

        arrays = [x.data for x in xs]
        pass_tape = trace(cotangent_pass, np.zeros(out_shape, dtype), *arrays)
        try:
            parts = _chunks(pass_tape, seeds, arrays, most)
            compressed = np.concatenate(
                [np.concatenate([g.reshape(len(g), -1) for g in part], axis=1) for part in parts]
            )
        except NotBatchable:
            compressed = np.stack([pass_of(seed) for seed in seeds])
    rows, cols = pattern.pairs()
    return np.asarray(compressed[colours[rows], cols])


def _tangent_pass(func: Callable[..., Tensor], n: int) -> Callable[..., list[Tensor]]:
    """A pass to trace: the tangents of the ``n`` inputs, then the inputs, to [out, J t]
    (``functional.jvp``'s forward mode, without its copies of the results, so that the
    traced output is the program's own)."""

    def run(*values: Tensor) -> list[Tensor]:
        leaves = [Tensor(v.data) for v in values[n:]]
        for leaf, tangent in zip(leaves, values[:n]):
            leaf.tangent = Tensor(tangent.data)
        with _forward_mode(True), set_grad_enabled(False):
            out = func(*leaves)
        found = out.tangent
        tangent = Tensor(np.zeros(out.shape, dtype=out.dtype)) if found is None else found
        return [out, tangent]

    return run


def _chunks(
    tape: Tape, seeds: Array, arrays: Sequence[Array], most: int | None
) -> list[list[Array]]:
    chunk = batch_size(tape, most) or len(seeds)
    flags = [True] + [False] * len(arrays)
    return [
        run_batched(tape, [seeds[start : start + chunk], *arrays], flags)
        for start in range(0, len(seeds), chunk)
    ]


# -- a row scaling of a matrix product ------------------------------------------------------------


def _row_scaling(tape: Tape, x: Array, most: int | None) -> Structured | None:
    """J = J_u M where the only step reading the input x is u = M @ x (or x @ M, J_u M^T)
    with a constant matrix M; J_u, of the rest of the program, is structured in turn."""
    (x_slot,) = tape.inputs
    if tape.dynamic:
        return None
    readers = [step for step in tape.steps if x_slot in step[2]]
    if len(readers) != 1 or x.ndim != 1:
        return None
    name, _, args, _, u_slot = readers[0]
    constants = dict(tape.constants)
    if OPS[name].pattern is not R.matmul or len(args) != 2 or args.count(x_slot) != 1:
        return None
    other = args[1] if args[0] == x_slot else args[0]
    matrix = constants.get(other)
    if matrix is None or np.ndim(matrix) != 2:
        return None
    linear = np.asarray(matrix if args[1] == x_slot else np.transpose(matrix))
    rest = _rest_of(tape, readers[0])
    u = apply(OPS[name], *[Tensor(x) if a == x_slot else Tensor(matrix) for a in args])
    try:
        inner = structured_jacobian(rest, u, most)
    except NotStructured:
        return None
    (block,) = inner.blocks
    assert isinstance(block, Sparse)
    rows, cols, values = block.rows, block.cols, block.values
    n_out = block.shape[0]
    dtype = np.result_type(values.dtype, linear.dtype)
    if len(rows) == n_out and np.array_equal(rows, np.arange(n_out)):
        scaled = values[:, None] * (linear if np.array_equal(cols, rows) else linear[cols])
        jacobian = np.asarray(scaled, dtype=dtype)
    else:
        jacobian = np.zeros((n_out, linear.shape[1]), dtype=dtype)
        np.add.at(jacobian, rows, values[:, None] * linear[cols])
    how = f"row scaling of a matrix product ({inner.how} for the rest)"
    return Structured((jacobian,), how, inner.passes, inner.out_shape)


def _rest_of(tape: Tape, product: tuple[Any, ...]) -> Callable[[Tensor], Tensor]:
    """The steps after ``product`` as a function of its result, on the engine (so forward
    mode runs through them)."""
    steps = tape.steps[tape.steps.index(product) + 1 :]
    constants = dict(tape.constants)
    start, (out,) = product[4], tape.outputs

    def rest(u: Tensor) -> Tensor:
        slots: dict[int, Tensor] = {start: u}
        for name, _, args, params, slot in steps:
            operands = [slots[a] if a in slots else Tensor(constants[a]) for a in args]
            with set_grad_enabled(False):
                slots[slot] = apply(OPS[name], *operands, **params)
        return slots[out]

    return rest
