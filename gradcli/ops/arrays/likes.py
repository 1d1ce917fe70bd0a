"""The tensors made in the shape of another: ``zeros_like``, ``ones_like``, ``full_like``.

Entries of the op table (so that a program computes them from a tensor it made, ``y = x +
zeros_like(x)``), whose results depend on the input's shape and dtype only: no gradient,
as torch's (the result does not require grad), and a zero tangent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...engine.tensor import Tensor, TensorLike, apply
from .. import batching as B
from .. import explaining as X
from .. import primitives as P
from ..elementwise.dtypes import named_dtype
from ..table import NUMBER, OPT_DTYPE, TENSOR, Array, Op, Param, register

_DTYPE = Param("dtype", OPT_DTYPE, None)


def _no_cotangents(g: Tensor, out: Tensor, x: Tensor, needs: Any, **params: Any) -> Any:
    return (None,)


def _zero_tangent(tangents: Sequence[Tensor | None], out: Tensor, x: Tensor, **params: Any) -> Any:
    return P.zeros_like(out)


def _like(
    name: str, summary: str, fill: Callable[..., Array], value: str | None = None
) -> Callable[..., Tensor]:
    """Register ``name``, whose forward is ``fill(shape, dtype, *value)``; ``value`` names
    the parameter of the value it fills with (full_like's fill_value), if any."""
    values = () if value is None else (Param(value, NUMBER),)
    entry = register(
        Op(
            name,
            summary,
            forward=lambda x, dtype, **given: fill(x.shape, dtype, *given.values()),
            vjp=_no_cotangents,
            jvp=_zero_tangent,
            backward_name="NotDifferentiable",
            differentiable=False,
            batch=B.elementwise,
            params=(Param("input", TENSOR), *values, _DTYPE),
            symbolic=lambda x, *rest: np.asarray(
                fill(x.shape, np.dtype(object), *rest[: len(values)]), dtype=object
            ),
            explain=X.per_element(lambda slot: f"0 ({slot.node} depends on the shape alone)"),
            kink="no gradient: the values depend on the input's shape and dtype alone",
        )
    )

    def call(input: TensorLike, *args: Any, **kwargs: Any) -> Tensor:
        x = input if isinstance(input, Tensor) else Tensor(np.asarray(input))
        given = dict(zip([p.name for p in entry.params[1:]], args))
        given.update(kwargs)
        dtype = given.pop("dtype", None)  # torch.long, 'int64'; None: the input's
        dtype = x.dtype if dtype is None else named_dtype(dtype, name)
        return apply(entry, x, dtype=dtype, **given)

    call.__name__ = name
    call.__doc__ = f"torch.{name}: {summary}."
    entry.call = call
    return call


zeros_like = _like(
    "zeros_like",
    "zeros in the shape of input (its dtype, or dtype)",
    lambda shape, dtype: np.zeros(shape, dtype=dtype),
)
ones_like = _like(
    "ones_like",
    "ones in the shape of input (its dtype, or dtype)",
    lambda shape, dtype: np.ones(shape, dtype=dtype),
)
full_like = _like(
    "full_like",
    "fill_value in the shape of input (its dtype, or dtype)",
    lambda shape, dtype, value: np.full(shape, value, dtype=dtype),
    value="fill_value",
)
