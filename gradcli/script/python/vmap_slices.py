"""The slices of the script's ``vmap`` calls under way (``func_api.py``), which the backward
passes of ``autograd.py`` read.

gradcli's vmap runs the function once per slice where torch runs it once on the batch: a
``torch.autograd.grad(y, x, v)`` in the function (no ``retain_graph``) frees ``y``'s graph
in torch's one pass, but would free it in gradcli's first slice, before the others need it.
So while a slice is followed by others, a backward pass keeps its graph; the last slice's
frees it as torch's one pass does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

# for each vmap call under way (the innermost last), the slices still to run after this one
_TO_COME: list[int] = []


def slices_to_come() -> bool:
    """Whether a slice of a vmap under way is followed by others."""
    return any(_TO_COME)


@contextmanager
def slicing(count: int) -> Iterator[Callable[[], None]]:
    """One vmap call of ``count`` slices; gives what to call as each slice starts."""
    depth = len(_TO_COME)
    _TO_COME.append(count)

    def started() -> None:
        _TO_COME[depth] -= 1

    try:
        yield started
    finally:
        _TO_COME.pop()
