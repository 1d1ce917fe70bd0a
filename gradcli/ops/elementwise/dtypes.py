"""Changes of dtype: ``x.to(torch.long)``, ``x.long()``, ``x.int()``, ``x.float()``,
``x.double()``, ``x.bool()``, as in PyTorch.

To a floating dtype the change is differentiable: the cotangent goes back in the input's
dtype. To an integer or boolean dtype it carries no gradient (the result does not require
grad, as in torch), and a float becomes an integer by truncation toward zero; it is a
primitive all the same, so a traced program converts again at each point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DtypeError
from ...engine.tensor import Tensor, TensorLike, apply, set_grad_enabled
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from .. import primitives as P
from ..table import COMPLEX_RULES, DTYPE, DTYPE_NAMES, TENSOR, Array, Op, Param, public, register

# torch's dtypes by the names a program gives them (torch.long, 'int64', long)
DTYPES: dict[str, np.dtype[Any]] = {name: np.dtype(DTYPE_NAMES[name]) for name in DTYPE_NAMES}
# the methods that are a change to one dtype: x.long() is x.to(torch.long)
DTYPE_METHODS = {"long": "int64", "int": "int32", "float": "float32", "double": "float64"}
DTYPE_METHODS["bool"] = "bool"
DTYPE_METHODS.update(short="int16", char="int8", byte="uint8")


def named_dtype(name: str | np.dtype[Any], by: str = "to") -> np.dtype[Any]:
    """The dtype ``name`` says (``torch.long``, ``'int64'``, a numpy dtype), for the
    operation ``by``'s message where gradcli has none of that name."""
    if isinstance(name, np.dtype):
        return name
    found = DTYPES.get(str(name).removeprefix("torch."))
    if found is None:
        raise DtypeError(f"{by}: gradcli has no dtype {name!r}; the dtypes are {', '.join(DTYPES)}")
    return found


def _to_forward(x: Array, dtype: np.dtype[Any]) -> Array:
    converted: Array = np.asarray(x).astype(dtype)
    return converted


def _to_vjp(
    g: Tensor, out: Tensor, x: Tensor, needs: tuple[bool, ...], dtype: np.dtype[Any]
) -> tuple[Tensor | None]:
    if g.dtype.kind == "c" and x.dtype.kind != "c":  # real to complex: the real part goes back
        from .complexes import real

        g = real(g)
    return (convert(g, x.dtype),)


def _to_jvp(
    tangents: Sequence[Tensor | None], out: Tensor, x: Tensor, dtype: np.dtype[Any]
) -> Tensor:
    tangent = tangents[0]
    if tangent is None or dtype.kind not in "fc":  # an integer result has no tangent
        return P.zeros_like(out)
    return convert(tangent, dtype)


def _name(node: Any) -> str:
    """torch's node: ``ToCopyBackward0``."""
    return "ToCopyBackward0"


_TO = register(
    Op(
        "to",
        "the same values in another dtype: x.to(torch.long), x.long(), x.float(), ...",
        forward=_to_forward,
        vjp=_to_vjp,
        jvp=_to_jvp,
        backward_name=_name,
        batch=B.elementwise,
        pattern=R.elementwise,
        params=(Param("input", TENSOR), Param("dtype", DTYPE)),
        methods=("to",),
        symbolic="no symbolic form here: a change of dtype",
        explain=X.per_element(lambda slot: "1 (the same values, in another dtype)"),
        kink=(
            "to a floating dtype: the gradient goes back in the input's dtype; to an integer "
            "or bool dtype: no gradient (the result does not require grad), floats truncated "
            "toward zero"
        ),
        extra={"dtype_methods": DTYPE_METHODS},
        complex=COMPLEX_RULES,
        saved=False,
    )
)


def convert(x: TensorLike, dtype: str | np.dtype[Any]) -> Tensor:
    """``x`` in ``dtype``; differentiable only between floating (and complex) dtypes."""
    x = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
    target = named_dtype(dtype)
    if target == x.dtype:
        return x  # torch's to() of the same dtype is the tensor itself
    if x.dtype.kind == "c" and target.kind != "c":  # torch warns and drops the imaginary part
        raise DtypeError(
            f"to: a complex tensor ({x.dtype}) to {target} would drop its imaginary part; "
            "take .real, .imag, .abs() or .angle() of it first"
        )
    if target.kind in "fc":
        return apply(_TO, x, dtype=target)
    with set_grad_enabled(False):  # an integer or boolean result carries no gradient
        return apply(_TO, x, dtype=target)


def cast(x: TensorLike, dtype: str | np.dtype[Any] | None) -> Tensor:
    """``x`` cast to ``dtype`` first, as torch's operations with a ``dtype`` parameter do
    (``sum(x, dtype=torch.float32)``); None: ``x`` as it is."""
    if dtype is None:
        return x if isinstance(x, Tensor) else Tensor(np.asarray(x))
    return convert(x, dtype)


@public("to")
def to(input: TensorLike, dtype: str | np.dtype[Any]) -> Tensor:
    """torch.Tensor.to(dtype)."""
    return convert(input, dtype)
