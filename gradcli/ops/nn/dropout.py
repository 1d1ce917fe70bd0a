"""``dropout(input, p=0.5, training=True)`` (torch.nn.functional.dropout), an entry of the op
table: each element is zeroed with probability p and the others are scaled by 1 / (1 - p).

Within a ``torch_random.using(generator)`` block (a ``gradcli run`` script's), the mask is
torch's: drawn from that generator as torch's CPU kernel draws it, so that a script under
``torch.manual_seed`` drops the elements torch drops. Elsewhere it is drawn from numpy's
generator, seeded by the command's ``--seed`` (``dropout_seed``, which a bound program's run
enters) and the input's shape: every evaluation of a program with one seed drops the same
elements, so that reverse and forward mode, finite differences, explain's local steps and
compiled replays all see one function. (Two dropouts of one shape in a program therefore
drop the same elements.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError
from ...engine.tensor import Tensor
from .. import explaining as X
from .. import primitives as P
from ..table import BOOL, NUMBER, TENSOR, Param, public
from .composites import _composite

_state = {"seed": 0}


@contextlib.contextmanager
def dropout_seed(seed: int) -> Iterator[None]:
    """Within the block, dropout draws its masks from ``seed`` (0 outside any block)."""
    saved = dict(_state)
    _state.update(seed=int(seed))
    try:
        yield
    finally:
        _state.update(saved)


def dropout_mask(shape: tuple[int, ...], p: float, seed: int) -> np.ndarray:
    """The kept elements (True) of a dropout of ``shape`` seeded with ``seed``."""
    return np.random.default_rng([seed, len(shape), *shape]).random(shape) >= p


_composite(
    "dropout",
    "zero each element with probability p, scale the rest by 1/(1-p) (training=False: input)",
    (Param("input", TENSOR), Param("p", NUMBER, 0.5), Param("training", BOOL, True)),
    symbolic="its mask is random, which sympy does not write",
    explain=X.per_element(
        lambda slot: f"1/(1-p) where {slot.wrt}[i] is kept, 0 where it is dropped"
    ),
    backward_name="MulBackward0",  # torch's CPU dropout multiplies by its mask
    kink=(
        "the mask comes from the command's --seed and the input's shape (numpy's generator, "
        "not torch's, so the elements dropped differ from torch's, and two dropouts of one "
        "shape drop the same elements); the gradient "
        "goes through the mask, scaled by 1/(1-p); p=1 drops everything; training=False is "
        "the identity"
    ),
)


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


@public("dropout")
def dropout(x: Any, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the others by 1 / (1 - p)."""
    t = _tensor(x)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise DomainError(f"dropout: the probability p must be between 0 and 1, got {p}")
    if not training:
        return t
    from ...engine.torch_random import entered, samplers  # a draw's: not at start-up

    generator = entered()
    if generator is not None and t.dtype in (np.float32, np.float64):
        if p == 0:  # torch hands the input back, drawing nothing
            return t
        return P.mul(t, Tensor(samplers.dropout_mask(generator, t.shape, p, t.dtype)))
    keep = dropout_mask(t.shape, p, _state["seed"])
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    return P.mul(t, Tensor((keep * scale).astype(t.dtype)))
