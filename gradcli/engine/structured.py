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

What is found at one point (the traced tapes, the pattern, its colouring, the coordinates of
the entries) holds at every point of the same shapes and dtypes: it is a plan (``_Plan``).
``structured_jacobian`` makes one and uses it once; ``JacobianPlan(func)`` keeps one for each
kind of input and replays it, so that a later Jacobian of the same function costs the numeric
work alone: for ``tanh(A @ x)``, the product, the rest's tangent tape, and diag(f') A.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..ops import patterns as R
from ..ops.patterns import Ints, Pattern, TooDense
from ..ops.table import OPS, Array, Op
from .compile import NotBatchable, Step, Tape, Tracer, batch_size, run_batched, trace, traced
from .functional import Inputs, _arrays, _reverse
from .tensor import (
    DEFAULT_DTYPE,
    Tensor,
    _forward_mode,
    _Mode,
    apply,
    set_grad_enabled,
    tangent_of,
)

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
        patterns[out] = rule(R.PatternStep(given, arrays, shapes[out], params, op.forward))
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
    Each call plans anew; ``JacobianPlan`` keeps the plan for the next point.
    """
    return _plan(func, _arrays(inputs), max_batch_elements, force, once=True)[1]


class JacobianPlan:
    """``structured_jacobian`` of one function, planned once for each kind of input (the
    number of inputs, their shapes and dtypes) and replayed after, as ``jax.jit`` replays a
    trace: a later call at a new point does the numeric work alone (no tracing, no pattern,
    no colouring). ``plan(inputs)`` gives what ``structured_jacobian(func, inputs, ...)``
    gives, and raises ``NotStructured`` where it does.

    A plan holds what the function read besides its inputs (the tensors it closes over, the
    constants folded from them, the sparsity pattern they make) as they were when it was
    planned: rebinding a name the function reads (a global, a variable of its closure, a
    default) makes a new plan, but changing a tensor's values in place does not. Like a
    compiled tape, a plan follows the shapes of the inputs only: a function whose steps
    follow the values of its point (Python ``if`` on a value) is planned at one branch.
    """

    def __init__(
        self,
        func: Callable[..., Tensor],
        max_batch_elements: int | None = None,
        force: bool = False,
    ):
        self.func = func
        self.max_batch_elements = max_batch_elements
        self.force = force
        self.built = 0  # how many plans were made (a replay makes none)
        self._reads = _reads(func)
        self._plans: dict[tuple[tuple[tuple[int, ...], str], ...], _Plan | NotStructured] = {}

    def __call__(self, inputs: Inputs) -> Structured:
        arrays = _arrays(inputs)
        reads = _reads(self.func)
        if len(reads) != len(self._reads) or any(a is not b for a, b in zip(reads, self._reads)):
            self._plans.clear()  # the function reads something else now
            self._reads = reads
        key = tuple((a.shape, a.dtype.str) for a in arrays)
        plan = self._plans.get(key)
        if isinstance(plan, NotStructured):
            raise NotStructured(str(plan))
        if plan is not None:
            return plan.run(arrays)
        self.built += 1
        try:
            plan, found = _plan(self.func, arrays, self.max_batch_elements, self.force)
        except NotStructured as exc:
            self._plans[key] = exc
            raise
        self._plans[key] = plan
        return found


_MISSING = object()


def _reads(func: Callable[..., Any]) -> tuple[object, ...]:
    """What a Python function reads besides its arguments, to compare by identity: its
    instance (a bound method), defaults, closure variables, and the globals it names."""
    owner = getattr(func, "__self__", None)
    function = getattr(func, "__func__", func)
    code = getattr(function, "__code__", None)
    if code is None:  # another callable: its identity alone
        return (owner,)
    cells = []
    for cell in getattr(function, "__closure__", None) or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # a variable not yet assigned
            cells.append(_MISSING)
    names = getattr(function, "__globals__", {})
    found = [names.get(name, _MISSING) for name in code.co_names]
    defaults = (getattr(function, "__defaults__", None), getattr(function, "__kwdefaults__", None))
    return (owner, code, *defaults, *cells, *found)


class _Plan:
    """What a structured Jacobian found at one point, for any point of the same shapes."""

    def run(self, arrays: Sequence[Array]) -> Structured:
        raise NotImplementedError


def _plan(
    func: Callable[..., Tensor],
    arrays: Sequence[Array],
    most: int | None,
    force: bool,
    primal: Tape | None = None,
    once: bool = False,
) -> tuple[_Plan, Structured]:
    """The plan of ``func``'s structured Jacobian, and the Jacobian at ``arrays``
    (``primal``: its primal pass as traced already, if it was; ``once``: the plan is not
    kept, so that what only a replay needs may be left unmade)."""
    if len(arrays) == 1:  # the primal pass alone first: a product's tangent costs as much as J
        values: Sequence[Any] = ()
        if primal is None:
            tracer = traced(lambda v: [func(v)], *arrays)
            found = _scaled_once(tracer, arrays[0]) if once else None
            if found is not None:
                return _ONCE, found
            primal, values = tracer.tape(), tracer.keep
        scaled = _row_scaling(primal, arrays[0], most, values)
        if scaled is not None:
            return scaled
    return _coloured(func, arrays, most, force)


@dataclass(frozen=True, eq=False)
class _Blocks:
    """How the values of the pattern's entries (by rows) make one block per input."""

    rows: Ints
    cols: Ints
    sizes: tuple[int, ...]
    offsets: tuple[int, ...]
    n_out: int

    def of(self, values: Array) -> tuple[Sparse, ...]:
        r, c = self.rows, self.cols
        if len(self.sizes) == 1:
            return (Sparse(r, c, np.asarray(values), (self.n_out, self.sizes[0])),)
        blocks = []
        for size, offset in zip(self.sizes, self.offsets):
            keep = (c >= offset) & (c < offset + size)
            blocks.append(Sparse(r[keep], c[keep] - offset, values[keep], (self.n_out, size)))
        return tuple(blocks)


def _coloured(
    func: Callable[..., Tensor], arrays: Sequence[Array], most: int | None, force: bool
) -> tuple[_Plan, Structured]:
    """The plan by colouring (of columns, forward; or of rows, reverse), and the Jacobian."""
    n = len(arrays)
    ones = [np.ones(a.shape, a.dtype) for a in arrays]
    tangent_pass = _tangent_pass(func, n)
    traced: list[Tensor] = []  # the pass as traced: [out, J 1]

    def tracing(*values: Tensor) -> list[Tensor]:
        traced[:] = tangent_pass(*values)
        return traced

    tape = trace(tracing, *ones, *arrays)
    if tape.dynamic:
        raise NotStructured("the shape of a step follows the values of the point")
    out_slot, tangent_slot = tape.outputs
    primal = _pruned(tape, tape.inputs[n:], out_slot)
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
    r, c = pattern.pairs()
    r, c = _frozen(r), _frozen(c)
    blocks = _Blocks(r, c, tuple(sizes), tuple(int(o) for o in offsets[:-1]), n_out)
    plan: _Plan
    if columns <= rows:
        how = f"{columns} colour{'s' * (columns != 1)} of columns, forward"
        tangent = _pruned(tape, tape.inputs, tangent_slot)
        plan = _Forward(tape, tangent, tangent_pass, ones, by_columns, columns, most, blocks, how)
        if columns == 1:  # the seed of one colour is all ones: the pass as traced
            return plan, plan.finish(traced[1].data)
    else:
        how = f"{rows} colour{'s' * (rows != 1)} of rows, reverse"
        dtype = np.result_type(*[a.dtype for a in arrays], np.float32)
        seeds = _seeds(by_rows, rows, dtype).reshape((rows, *out_shape))
        passes = None if rows <= EAGER_PASSES else _cotangent_tape(func, seeds, arrays)
        plan = _Reverse(func, by_rows, seeds, passes, most, blocks, how)
    return plan, plan.run(arrays)


@dataclass(frozen=True, eq=False)
class _Forward(_Plan):
    """One forward pass per colour of columns: the traced tangent pass replayed along each
    colour's seed (all ones for one colour: ``tangent``, its tangent alone, replayed)."""

    tape: Tape  # the traced tangent pass: the tangents, then the inputs, to [out, J t]
    tangent: Tape  # its steps that J t needs
    tangent_pass: Callable[..., list[Tensor]]
    ones: list[Array]
    colours: Ints
    count: int
    most: int | None
    blocks: _Blocks
    how: str

    def run(self, arrays: Sequence[Array]) -> Structured:
        if self.count == 1:
            return self.finish(self.tangent.run(*self.ones, *arrays)[0])
        compressed = _forward_compressed(
            self.tape, self.tangent_pass, arrays, self.colours, self.most
        )
        return self.finish(compressed)

    def finish(self, compressed: Array) -> Structured:
        """The blocks from the compressed Jacobian (output elements, colours)."""
        r, c = self.blocks.rows, self.blocks.cols
        if self.count == 1:
            values = np.asarray(compressed).reshape(-1)[r]
        else:
            values = compressed[r, self.colours[c]]
        out_shape = self.tape.shapes[self.tape.outputs[0]]
        return Structured(self.blocks.of(values), self.how, self.count, out_shape)


@dataclass(frozen=True, eq=False)
class _Reverse(_Plan):
    """One reverse pass per colour of rows: eager passes (a few colours), or the cotangent
    pass, traced once, replayed along a batch of seeds."""

    func: Callable[..., Tensor]
    colours: Ints
    seeds: Array  # one a colour, of the output's shape
    passes: Tape | None  # the traced cotangent pass (more than EAGER_PASSES colours)
    most: int | None
    blocks: _Blocks
    how: str

    def run(self, arrays: Sequence[Array]) -> Structured:
        compressed = _reverse_compressed(self.func, arrays, self.seeds, self.passes, self.most)
        r, c = self.blocks.rows, self.blocks.cols
        values = np.asarray(compressed[self.colours[r], c]) if len(self.seeds) else np.zeros(0)
        out_shape = self.seeds.shape[1:]
        return Structured(self.blocks.of(values), self.how, len(self.seeds), out_shape)


def _frozen(array: Ints) -> Ints:
    """``array``, read-only: a plan hands the same coordinates to every result."""
    array = np.asarray(array)
    array.setflags(write=False)
    return array


def _pruned(tape: Tape, inputs: tuple[int, ...], out: int) -> Tape:
    """The steps of ``tape`` that its output ``out`` needs, with ``inputs`` as its inputs."""
    needed, kept = {out}, []
    for step in reversed(tape.steps):
        if step[4] in needed:
            kept.append(step)
            needed.update(step[2])
    kept.reverse()
    return replace(tape, inputs=inputs, outputs=(out,), steps=tuple(kept))


def _seeds(colours: Ints, count: int, dtype: np.dtype[Any]) -> Array:
    """One row per colour: 1 at the elements of that colour."""
    seeds = np.zeros((count, len(colours)), dtype=dtype)
    seeds[colours, np.arange(len(colours))] = 1
    return seeds


def _forward_compressed(
    tape: Tape,
    tangent_pass: Callable[..., list[Tensor]],
    arrays: Sequence[Array],
    colours: Ints,
    most: int | None,
) -> Array:
    """The compressed Jacobian, (output elements, colours): the traced tangent pass replayed
    along the seed of each colour of columns (one eager pass a seed where a step has no
    batch rule)."""
    count = int(colours.max(initial=-1)) + 1
    if count == 0:  # no input elements
        return np.zeros((int(np.prod(tape.shapes[tape.outputs[0]], dtype=np.int64)), 0))
    dtype = np.result_type(*arrays, np.float32)
    seeds = _seeds(colours, count, dtype)
    offsets = np.cumsum([0] + [int(a.size) for a in arrays])
    split = [
        seeds[:, offsets[i] : offsets[i + 1]].reshape((count, *a.shape)).astype(a.dtype)
        for i, a in enumerate(arrays)
    ]
    try:
        chunk = batch_size(tape, most) or count
        flags = [True] * len(arrays) + [False] * len(arrays)
        parts = []
        for start in range(0, count, chunk):
            part = [s[start : start + chunk] for s in split]
            _, out = run_batched(tape, [*part, *arrays], flags)
            parts.append(np.asarray(out).reshape(len(part[0]), -1))
        return np.asarray(np.concatenate(parts).T)
    except NotBatchable:
        xs = [Tensor(a) for a in arrays]
        rows = [
            tangent_pass(*[Tensor(s[k]) for s in split], *xs)[1].data.reshape(-1)
            for k in range(count)
        ]
        return np.stack(rows, axis=1)


def _cotangent_tape(func: Callable[..., Tensor], seeds: Array, arrays: Sequence[Array]) -> Tape:
    """The reverse pass of ``func`` traced: a cotangent (of the output's shape), then the
    inputs, to the gradients of the inputs."""

    def cotangent_pass(seed: Tensor, *values: Tensor) -> list[Tensor]:
        for value in values:
            value.requires_grad = True
        return list(_reverse(func(*values), values, seed))

    return trace(cotangent_pass, np.zeros(seeds.shape[1:], seeds.dtype), *arrays)


def _reverse_compressed(
    func: Callable[..., Tensor],
    arrays: Sequence[Array],
    seeds: Array,
    tape: Tape | None,
    most: int | None,
) -> Array:
    """The compressed Jacobian, (colours of rows, input elements): one reverse pass per seed,
    eager (no ``tape``, or a step without a batch rule) or ``tape`` replayed along the
    seeds."""

    def pass_of(seed: Array) -> Array:
        values = [Tensor(a, requires_grad=True) for a in arrays]
        found = _reverse(func(*values), values, Tensor(seed))
        return np.concatenate([g.data.reshape(-1) for g in found])

    if len(seeds) == 0:
        return np.zeros((0, sum(int(a.size) for a in arrays)))
    if tape is not None:
        try:
            parts = _chunks(tape, seeds, arrays, most)
            return np.concatenate(
                [np.concatenate([g.reshape(len(g), -1) for g in part], axis=1) for part in parts]
            )
        except NotBatchable:
            pass
    return np.stack([pass_of(seed) for seed in seeds])


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


def _row_scaling(
    tape: Tape, x: Array, most: int | None, values: Sequence[Any] = ()
) -> tuple[_Plan, Structured] | None:
    """J = J_u M where the only step reading the input x is u = M @ x (or x @ M, J_u M^T)
    with a constant matrix M; J_u, of the rest of the program, is structured in turn.
    ``values``: the tape's slots' values at x, where the tracing kept them (then u is not
    computed again)."""
    (x_slot,) = tape.inputs
    if tape.dynamic or x.ndim != 1:
        return None
    found = _product_of(tape.steps, dict(tape.constants), x_slot)
    if found is None:
        return None
    step, matrix, linear = found
    _, function, args, params, u_slot = step
    product = _Product(function, params, args[0] == x_slot, matrix)
    u = values[u_slot] if len(values) == tape.size else None
    if not isinstance(u, np.ndarray) or u.shape != tape.shapes[u_slot]:
        u = product.of(x)
    after = _pruned(tape, (u_slot,), tape.outputs[0])  # the rest's primal pass, as traced
    try:
        inner, found_inner = _plan(_rest_of(tape, step), [u], most, False, after)
    except NotStructured:
        return None
    (block,) = found_inner.blocks
    assert isinstance(block, Sparse)
    n_out = block.shape[0]
    rows, cols = block.rows, block.cols
    diagonal = len(rows) == n_out and np.array_equal(rows, np.arange(n_out))
    identity = diagonal and np.array_equal(cols, rows)
    how = f"row scaling of a matrix product ({found_inner.how} for the rest)"
    plan = _Scaled(product, linear, inner, diagonal, identity, how)
    return plan, plan.finish(found_inner)


def _product_of(
    steps: Sequence[Step], constants: dict[int, Array], x_slot: int
) -> tuple[Step, Array, Array] | None:
    """The only step of ``steps`` that reads the input (``x_slot``), where it is a matrix
    product of it with a constant matrix M (of ``constants``): the step, M, and the matrix
    it applies to x (M for M @ x, M^T for x @ M); else None."""
    readers = [step for step in steps if x_slot in step[2]]
    if len(readers) != 1:
        return None
    name, _, args, _, _ = readers[0]
    if OPS[name].pattern is not R.matmul or len(args) != 2 or args.count(x_slot) != 1:
        return None
    matrix = constants.get(args[1] if args[0] == x_slot else args[0])
    if matrix is None or np.ndim(matrix) != 2:
        return None
    linear = np.asarray(matrix if args[1] == x_slot else np.transpose(matrix))
    return readers[0], matrix, linear


def _scaled_once(tracer: Tracer, x: Array) -> Structured | None:
    """The row scaling J = diag(J_u) M where J_u is diagonal (``_diagonal_rest``), from the
    steps as traced and the values of their slots, without a plan (``structured_jacobian``
    makes none to keep) nor the traced ``Tape`` (nothing folded or dropped: a step on
    constants alone must be element-wise on u's shape too, else None, and the plan is made
    from the tape as before)."""
    (x_slot,) = tracer.inputs
    if tracer.deciding or x.ndim != 1:
        return None
    found = _product_of(tracer.steps, tracer.constants, x_slot)
    if found is None:
        return None
    step, _, linear = found
    slots, out = tracer.keep, tracer.outputs[0]
    rest = _diagonal_rest(tracer.steps, step[4], out, slots, tracer.constants)
    if rest is None:
        return None
    how = f"row scaling of a matrix product ({_ONE_COLOUR} for the rest)"
    return Structured((_scaled_rows(rest, linear),), how, 1, slots[out].shape)


#: How the tangent pass of one colour of columns is described (``_coloured``'s ``how``).
_ONE_COLOUR = "1 colour of columns, forward"
#: The plan a one-off Jacobian gives (``once``): none is made, so none is kept.
_ONCE = _Plan()


def _scaled_rows(values: Array, linear: Array) -> Array:
    """diag(values) M: each row of ``linear`` times its entry of ``values``."""
    dtype = np.result_type(values.dtype, linear.dtype)
    return np.asarray(values[:, None] * linear, dtype=dtype)


def _diagonal_rest(
    steps: Sequence[Step], u_slot: int, out: int, slots: Sequence[Any], constants: Collection[int]
) -> Array | None:
    """J_u's diagonal, flat, where every step but the product that makes u (in ``u_slot``,
    the only one that reads the input) is differentiable, element-wise and on values of u's
    shape (but for ``constants`` and what steps make of them alone): the tangent of the
    output's slot ``out`` along ones, as the pass of one colour of columns gives it, but by
    each step's forward rule on the values the tracing kept (``slots``, u's among them),
    which are not computed again; else None."""
    u = slots[u_slot]
    if u.ndim != 1 or len(steps) < 2:
        return None
    shape = u.shape
    known = set(constants)  # and the values of steps on them alone (a tape folds them)
    for name, _, args, _, slot in steps:
        if slot == u_slot:
            continue
        if args and known.issuperset(args):
            known.add(slot)
            continue
        op = OPS[name]
        if op.pattern is not R.elementwise or not op.differentiable or slots[slot].shape != shape:
            return None
        for a in args:
            if a not in known and slots[a].shape != shape:
                return None
    tangents: dict[int, Array] = {u_slot: np.ones(shape, u.dtype)}
    plain = not _Mode.watching and _Mode.nonfinite_watch is None
    for name, _, args, params, slot in steps:
        if not tangents.keys().isdisjoint(args):
            given = [tangents.get(a) for a in args]
            operands = [slots[a] for a in args]
            tangents[slot] = _step_tangent(OPS[name], operands, params, slots[slot], given, plain)
    tangent = tangents.get(out)
    return None if tangent is None else tangent.reshape(-1)


def _step_tangent(
    op: Op,
    operands: list[Any],
    params: dict[str, Any],
    out: Array,
    given: list[Array | None],
    plain: bool,
) -> Array:
    """The tangent of an element-wise step's value ``out`` along its operands' tangents
    (``given``, None where one has none), as its forward rule computes it: where one operand
    has a tangent and nothing watches (``plain``: no tracer, forward mode, meter or nonfinite
    watch), by the entry's rule on float64 arrays (``Op.vjp_arrays``), since an element-wise
    step's Jacobian in one operand is diagonal (J t is J^T t) and both rules multiply the
    tangent by the same factor (t * d: the same bits, without the tensors and engine calls
    of three operations for tanh's 1 - t * t); else by the forward rule on tensors."""
    rule = op.vjp_arrays
    if rule is not None and plain and not params:
        needs = tuple([t is not None for t in given])
        if needs.count(True) == 1:
            index = needs.index(True)
            tangent = given[index]
            if _float64(operands) and tangent.dtype == DEFAULT_DTYPE:  # type: ignore[union-attr]
                found = rule(tangent, out, *operands, needs)
                if found is not None and found[index] is not None:
                    return np.asarray(found[index])
    tangents = [None if t is None else Tensor(t) for t in given]
    return tangent_of(op, [Tensor(a) for a in operands], params, out, tangents).data


def _float64(arrays: list[Any]) -> bool:
    """Whether every one of ``arrays`` is a float64 array (what rules on arrays take)."""
    for a in arrays:
        if type(a) is not np.ndarray or a.dtype != DEFAULT_DTYPE:
            return False
    return True


@dataclass(frozen=True, eq=False)
class _Product:
    """The product step u = M @ x (or x @ M), as traced, at a new x."""

    function: Callable[..., Any]
    params: dict[str, Any]
    x_first: bool
    matrix: Array

    def of(self, x: Array) -> Array:
        operands = (x, self.matrix) if self.x_first else (self.matrix, x)
        return np.asarray(self.function(*operands, **self.params))


@dataclass(frozen=True, eq=False)
class _Scaled(_Plan):
    """J = J_u M: the product at the new point, the plan of the rest (J_u) there, then the
    rows of M scaled (or gathered and summed) by J_u's entries."""

    product: _Product
    linear: Array
    inner: _Plan
    diagonal: bool  # J_u has one entry a row, by rows
    identity: bool  # ... on its diagonal
    how: str

    def run(self, arrays: Sequence[Array]) -> Structured:
        (x,) = arrays
        return self.finish(self.inner.run([self.product.of(x)]))

    def finish(self, inner: Structured) -> Structured:
        (block,) = inner.blocks
        assert isinstance(block, Sparse)
        rows, cols, values, linear = block.rows, block.cols, block.values, self.linear
        if self.diagonal:
            jacobian = _scaled_rows(values, linear if self.identity else linear[cols])
        else:
            dtype = np.result_type(values.dtype, linear.dtype)
            jacobian = np.zeros((block.shape[0], linear.shape[1]), dtype=dtype)
            np.add.at(jacobian, rows, values[:, None] * linear[cols])
        return Structured((jacobian,), self.how, inner.passes, inner.out_shape)


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
