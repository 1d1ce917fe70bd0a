"""vmap's batched pass: the mapped function, traced on its first slice, replayed once over the
whole batch by the operations' batch rules (``compile.run_batched``), as torch's vmap runs it.

torch runs a vmapped function once, on the batch: ``F.linear`` of a batch of vectors is one
matrix product over the batch, whose float32 rounding differs from one product per vector
(BLAS sums each row in another order). ``vmap(jacrev(f))(x)`` then differs by some ulps from
the same Jacobian taken slice by slice, and a script that compares it with ``torch.allclose``
to the Jacobian of the batch at once (``jacrev`` of the summed outputs) saw torch's ``True``
turn ``False``. The batch rules compute as torch's batching rules do (a batch of vectors
against a fixed matrix is one matrix product, a reduction runs along its own axis of the
batch), so the replay gives torch's numbers.

vmap still runs the function slice by slice (``vmap.py``): that is what keeps Python's
semantics (a ``print`` in it, an error raised by one slice, data-dependent control flow,
which torch refuses). The first slice is traced while it runs, and the replay's numbers take
the place of the stacked slices only when the traced program is the function on every slice:
replayed on each slice's values alone, it must give that slice's results bit for bit (a
branch on a value, a value read into Python, a write in place make it fail, and the slices
stand); the slices' results are checked once they have all run, by the trace replayed over
a chunk of slices at a time, each slice's bits as its own replay's (``run_batched``'s
``each_alone``), or one slice at a time where a step has no such rule. The pass is tried only
where nothing needs the graph (no argument requires grad or carries a tangent, no result
requires grad: those keep the slices, which the graph joins), outside any other trace (an
enclosing vmap's or compiled pass's, which records the slices), and where the batch's values
fit in the room the run leaves (``--max-memory``): else the slices stand, as they were metered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .compile import UNREPLAYABLE, NotBatchable, Tape, peak_elements, run_batched, trace_on
from .meter import fits, metered
from .pytree import flatten, unflatten
from .tensor import Tensor, _Mode


def _needs_graph(value: Any) -> bool:
    return isinstance(value, Tensor) and (value.requires_grad or value.tangent is not None)


def _same(replayed: Any, expected: Tensor) -> bool:
    """Whether a replayed output is the slice's result bit for bit (NaN where it has NaN)."""
    array = np.asarray(replayed)
    data = expected.data
    if array.shape != data.shape or array.dtype != data.dtype:
        return False
    return bool(np.array_equal(array, data, equal_nan=data.dtype.kind in "fc"))


class BatchedPass:
    """One vmap call's batched pass (see the module docstring): ``run`` each slice through
    it, then ``replaced`` gives the stacked result with the replay's numbers, or None where
    the slices stand."""

    def __init__(self, batches: list[np.ndarray[Any, Any]]) -> None:
        self.batches = batches  # the mapped arguments' values, the mapped dimension first
        self.tape: Tape | None = None
        self.held = 0  # the most elements a replay of one slice holds at once
        self.failed = False
        self.slices: list[list[Tensor]] = []  # each slice's results (their leaves), in order

    @staticmethod
    def tried(flat_args: Sequence[Any], dims: Sequence[int | None]) -> BatchedPass | None:
        """A pass for a call with these arguments (their leaves) mapped along ``dims``, None
        where it is not tried."""
        if _Mode.tracer is not None or any(_needs_graph(a) for a in flat_args):
            return None
        # copies, as the slices' calls might write the arguments in place; in their layout,
        # which a batched sum follows as torch's does (a vmap over dim 1 sums down columns)
        return BatchedPass(
            [
                np.moveaxis(a.data.copy(order="K"), d, 0)
                for a, d in zip(flat_args, dims)
                if d is not None
            ]
        )

    def run(self, index: int, mapped: Sequence[Tensor], call: Callable[[], Any]) -> Any:
        """``call()``, the call of the function on the slice ``index``, whose mapped arguments
        are ``mapped``; traced for the first slice, its results kept for ``replaced`` to check
        against the trace."""
        if self.failed:
            return call()
        if self.tape is None:
            found: list[Any] = []

            def traced() -> list[Tensor]:
                found.append(call())
                leaves = flatten(found[0])[0]
                return [leaf for leaf in leaves if isinstance(leaf, Tensor)]

            self.tape = trace_on(mapped, traced)
            self.held = peak_elements(self.tape, 1)
            result = found[0]
            leaves = flatten(result)[0]
            if self.tape.dynamic or not all(
                isinstance(v, Tensor) and not _needs_graph(v) for v in leaves
            ):
                self.failed = True
                return result
        else:
            result = call()
        leaves = flatten(result)[0]
        if all(isinstance(v, Tensor) for v in leaves) and len(self.slices) == index:
            self.slices.append(leaves)
        else:
            self.failed = True
        return result

    def _every_slice_replays(self, chunk: int) -> bool:
        """Whether the tape, replayed on each slice's values alone, gives that slice's results:
        over a chunk of slices at a time (``run_batched``'s ``each_alone``: each slice's bits
        as its own replay's), else, or where they differ, slice by slice. The chunk's replay
        fits the room the run leaves (``replaced`` asks first)."""
        try:
            with np.errstate(all="ignore"):
                if all(
                    self._chunk_replays(start, chunk) for start in range(0, len(self.slices), chunk)
                ):
                    return True
        except (NotBatchable, *UNREPLAYABLE):
            pass
        return all(
            self._replays([b[index] for b in self.batches], leaves)
            for index, leaves in enumerate(self.slices)
        )

    def _chunk_replays(self, start: int, chunk: int) -> bool:
        """Whether the slices from ``start`` (``chunk`` of them at most), replayed together
        each as alone, give their results."""
        assert self.tape is not None
        part = [b[start : start + chunk] for b in self.batches]
        outputs = run_batched(self.tape, part, [True] * len(part), each_alone=True)
        for k, leaves in enumerate(self.slices[start : start + chunk]):
            if len(outputs) != len(leaves) or not all(
                _same(output[k], leaf) for output, leaf in zip(outputs, leaves)
            ):
                return False
        return True

    def _replays(self, values: list[np.ndarray[Any, Any]], leaves: list[Tensor]) -> bool:
        """Whether the tape, replayed on one slice's values, gives its results ``leaves``."""
        assert self.tape is not None
        if not fits(self.held):
            return False
        try:
            with np.errstate(all="ignore"):
                replayed = self.tape.run(*values)
        except UNREPLAYABLE:
            return False
        return len(replayed) == len(leaves) and all(map(_same, replayed, leaves))

    def replaced(self, stacked: Any, dims: Sequence[int | None], chunk_size: int | None) -> Any:
        """``stacked`` (the slices' results stacked, each leaf along its out_dim of ``dims``)
        with the batched replay's numbers, or None where the slices stand."""
        size = len(self.batches[0])
        chunk = min(chunk_size or size, size)
        if self.failed or self.tape is None or len(self.slices) != size:
            return None
        # the room first: where a chunk's replay does not fit, the slices stand unchecked
        if not fits(peak_elements(self.tape, chunk)) or not self._every_slice_replays(chunk):
            return None
        parts = []
        try:
            with np.errstate(all="ignore"):
                for start in range(0, size, chunk):
                    part = [b[start : start + chunk] for b in self.batches]
                    parts.append(run_batched(self.tape, part, [True] * len(part)))
        except (NotBatchable, *UNREPLAYABLE):
            return None
        outputs = parts[0] if len(parts) == 1 else [np.concatenate(c) for c in zip(*parts)]
        leaves, spec = flatten(stacked)
        joined = []
        for output, leaf, dim in zip(outputs, leaves, dims):
            if dim is None:
                joined.append(leaf)
                continue
            moved = np.ascontiguousarray(np.moveaxis(output, 0, dim % leaf.ndim))
            if moved.shape != leaf.shape or moved.dtype != leaf.dtype:
                return None
            joined.append(metered(Tensor(moved)))
        return unflatten(joined, spec)
