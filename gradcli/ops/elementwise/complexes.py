"""Complex numbers: ``complex(a, b)``, ``z.real``, ``z.imag``, ``conj``, ``angle``, ``polar``,
``view_as_real``, ``view_as_complex``, and the complex rules of ``abs``, as in PyTorch.

PyTorch's gradient of a real function L of a complex z = x + iy is dL/dx + i dL/dy (twice the
conjugate Wirtinger derivative: L = |z|^2 gives 2z). The rules here are written in that
convention; the holomorphic operations (``Op.complex == HOLOMORPHIC``) keep their real rules,
which the engine applies at the conjugated operands (``tensor._run_backward``: g conj(f'(z))
is the rule at conj(z)), and a real tensor's gradient is the real part of a complex
cotangent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DtypeError, ShapeError
from ...engine.tensor import Tensor, TensorLike, _coerce, apply, complex_of
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from .. import primitives as P
from ..table import COMPLEX_RULES, OPS, TENSOR, Array, Op, Param, public, register
from . import elementary as EL

_NOT_SYMBOLIC = "no symbolic form here: gradcli's formulas are of real numbers"


def _declare(name: str, summary: str, **fields: Any) -> Op:
    """Register the complex entry ``name``: of one tensor unless ``fields`` say otherwise,
    with its own complex rules and no symbolic form (gradcli's formulas are of reals)."""
    fields = {"params": (Param("input", TENSOR),), "symbolic": _NOT_SYMBOLIC, **fields}
    return register(Op(name, summary, complex=COMPLEX_RULES, **fields))


def _operand(input: TensorLike) -> Tensor:
    return input if isinstance(input, Tensor) else Tensor(np.asarray(input))


def _is_complex(x: Tensor) -> bool:
    return x.data.dtype.kind == "c"


def _zero_tangent(tangent: Tensor | None, like: Tensor) -> Tensor:
    return P.zeros_like(like) if tangent is None else tangent


# -- complex(real, imag) ----------------------------------------------------------------------


def _complex_forward(a: Array, b: Array) -> Array:
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=complex_of(a.dtype))
    out.real, out.imag = a, b
    return out


def _complex_vjp(
    g: Tensor, out: Tensor, a: Tensor, b: Tensor, needs: tuple[bool, ...]
) -> tuple[Tensor | None, Tensor | None]:
    return (
        P.sum_to(real(g), a.shape) if needs[0] else None,
        P.sum_to(imag(g), b.shape) if needs[1] else None,
    )


def _complex_jvp(tangents: Sequence[Tensor | None], out: Tensor, a: Tensor, b: Tensor) -> Tensor:
    ta, tb = tangents
    return complex(_zero_tangent(ta, a), _zero_tangent(tb, b))


_COMPLEX = _declare(
    "complex",
    "the complex number real + imag j (torch.complex): both of one floating dtype",
    forward=_complex_forward,
    vjp=_complex_vjp,
    jvp=_complex_jvp,
    backward_name="ComplexBackward0",
    batch=B.elementwise,
    pattern=R.elementwise,
    params=(Param("real", TENSOR), Param("imag", TENSOR)),
    explain=X.per_element(lambda slot: "1" if slot.position == 0 else "j"),
    kink="the gradient of real is the real part of z's, of imag its imaginary part",
)


@public("complex")
def complex(real: TensorLike, imag: TensorLike) -> Tensor:  # noqa: A001 - torch's name
    """torch.complex(real, imag)."""
    a, b = _coerce((real, imag))
    if a.dtype != b.dtype or a.dtype.kind != "f":
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            raise DtypeError(
                f"complex: real is {a.dtype} and imag is {b.dtype}; torch.complex expects both "
                "of one floating dtype"
            )
        raise DtypeError(
            f"complex: expected both inputs to be float32 or float64 tensors but got {a.dtype} "
            f"and {b.dtype}"
        )
    return apply(_COMPLEX, a, b)


# -- real, imag, conj -------------------------------------------------------------------------


def _as_complex(g: Tensor, z: Tensor) -> Tensor:
    """A real cotangent as the complex one of ``z``'s dtype (imaginary part 0)."""
    return complex(g, P.zeros_like(g))


_REAL = _declare(
    "real",
    "the real part of a complex tensor (a real tensor: itself); also z.real",
    forward=lambda z: np.real(z).copy(),
    vjp=lambda g, out, z, needs: (_as_complex(g, z),),
    jvp=lambda tangents, out, z: real(tangents[0]),
    backward_name="SelectBackward0",  # torch's z.real is a view: a select of view_as_real
    batch=B.elementwise,
    pattern=R.elementwise,
    extra={"property": "real"},
    explain=X.per_element(lambda slot: "1 (of the real part)"),
    saved=False,
)


@public("real")
def real(input: TensorLike) -> Tensor:
    """torch.real: the real part (a real tensor is returned as it is, as torch does)."""
    z = _operand(input)
    return apply(_REAL, z) if _is_complex(z) else z


_IMAG = _declare(
    "imag",
    "the imaginary part of a complex tensor; also z.imag",
    forward=lambda z: np.imag(z).copy(),
    vjp=lambda g, out, z, needs: (complex(P.zeros_like(g), g),),
    jvp=lambda tangents, out, z: imag(tangents[0]),
    backward_name="SelectBackward0",
    batch=B.elementwise,
    pattern=R.elementwise,
    extra={"property": "imag"},
    explain=X.per_element(lambda slot: "j (the gradient of the imaginary part)"),
    saved=False,
)


@public("imag")
def imag(input: TensorLike) -> Tensor:
    """torch.imag: the imaginary part, of complex tensors only (as in torch)."""
    z = _operand(input)
    if not _is_complex(z):
        raise DtypeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(_IMAG, z)


_CONJ = _declare(
    "conj",
    "the complex conjugate (a real tensor: itself)",
    forward=np.conj,
    vjp=lambda g, out, z, needs: (conj(g),),
    jvp=lambda tangents, out, z: conj(tangents[0]),
    backward_name="ConjBackward0",
    batch=B.elementwise,
    pattern=R.elementwise,
    methods=("conj",),
    explain=X.per_element(lambda slot: "conj (the gradient is conjugated)"),
    saved=False,
)


@public("conj")
def conj(input: TensorLike) -> Tensor:
    """torch.conj (a real tensor is returned as it is, as torch does)."""
    z = _operand(input)
    return apply(_CONJ, z) if _is_complex(z) else z


# -- angle ------------------------------------------------------------------------------------


def _is_zero(x: Array) -> Array:
    zero: Array = np.equal(x, 0)
    return zero


def _angle_direction(z: Tensor) -> Tensor:
    """i z / |z|^2 = i / conj(z), 0 at z = 0 (torch's gradient of the angle there)."""
    zero = P.mask(_is_zero, z)
    return P.where(zero, 0.0, P.div(1j, conj(P.where(zero, 1.0, z))))


def _angle_vjp(g: Tensor, out: Tensor, z: Tensor, needs: tuple[bool, ...]) -> tuple[Tensor]:
    if not _is_complex(z):
        return (P.zeros_like(z),)  # the angle of a real number is 0 or pi: constant
    return (P.mul(g, _angle_direction(z)),)


def _angle_jvp(tangents: Sequence[Tensor], out: Tensor, z: Tensor) -> Tensor:
    if not _is_complex(z):
        return P.zeros_like(out)
    # d angle = Re(conj(i z / |z|^2) dz)
    return real(P.mul(conj(_angle_direction(z)), tangents[0]))


_ANGLE = _declare(
    "angle",
    "the argument of a complex number, in (-pi, pi] (of a real one: 0 or pi)",
    forward=np.angle,
    vjp=_angle_vjp,
    jvp=_angle_jvp,
    backward_name="AngleBackward0",
    batch=B.elementwise,
    pattern=R.elementwise,
    methods=("angle",),
    explain=X.per_element(lambda slot: "i z / |z|^2"),
    kink="the gradient is 0 at z = 0, and 0 for a real input",
)


@public("angle")
def angle(input: TensorLike) -> Tensor:
    """torch.angle."""
    return apply(_ANGLE, input)


# -- abs of a complex number: |z|, gradient sgn(z) = z / |z| (0 at 0) --------------------------

_ABS = OPS["abs"]
_REAL_ABS_RULES = (_ABS.vjp, _ABS.jvp)


def _sgn(z: Tensor, out: Tensor) -> Tensor:
    zero = P.mask(_is_zero, z)
    safe = P.where(zero, 1.0, out)
    return P.where(zero, 0.0, P.div(z, safe))


def _abs_vjp(
    g: Tensor, out: Tensor, z: Tensor, needs: tuple[bool, ...]
) -> tuple[Tensor | None, ...]:
    if not _is_complex(z):
        real_vjp = _REAL_ABS_RULES[0]
        assert real_vjp is not None
        result: tuple[Tensor | None, ...] = real_vjp(g, out, z, needs=needs)
        return result
    return (P.mul(g, _sgn(z, out)),)


def _abs_jvp(tangents: Sequence[Tensor], out: Tensor, z: Tensor) -> Tensor:
    if not _is_complex(z):
        real_jvp = _REAL_ABS_RULES[1]
        assert real_jvp is not None
        tangent: Tensor = real_jvp(tangents, out, z)
        return tangent
    return real(P.mul(conj(_sgn(z, out)), tangents[0]))


# abs is declared with the element-wise functions; its complex rules are these (the reverse
# rule reads abs's output, where the real one did not)
_ABS.vjp, _ABS.jvp, _ABS.complex = _abs_vjp, _abs_jvp, COMPLEX_RULES
_ABS.vjp_reads_out = _ABS.vjp_reads_inputs = True


# -- polar, view_as_real, view_as_complex -----------------------------------------------------


def _polar(abs: TensorLike, angle: TensorLike) -> Tensor:  # noqa: A002 - torch's names
    r, theta = _coerce((abs, angle))
    return complex(P.mul(r, EL.cos(theta)), P.mul(r, EL.sin(theta)))


register(
    Op(
        "polar",
        "the complex number abs (cos angle + j sin angle) (torch.polar)",
        backward_name="PolarBackward0",
        params=(Param("abs", TENSOR), Param("angle", TENSOR)),
        call=_polar,
        symbolic=_NOT_SYMBOLIC,
        explain=X.per_element(
            lambda slot: "cos + j sin (of the angle)" if slot.position == 0 else "j z"
        ),
    )
)


def _view_as_real_forward(z: Array) -> Array:
    return np.stack([z.real, z.imag], axis=-1)


_VIEW_AS_REAL = _declare(
    "view_as_real",
    "a complex tensor as a real one with a last dimension of 2: (real, imag)",
    forward=_view_as_real_forward,
    size=lambda z: 2 * z.size,
    vjp=lambda g, out, z, needs: (view_as_complex(g),),
    jvp=lambda tangents, out, z: view_as_real(tangents[0]),
    backward_name="ViewAsRealBackward0",
    batch=B.trailing,
    explain=X.per_element(lambda slot: "1 (real part), j (imaginary part)"),
    saved=False,
)


@public("view_as_real")
def view_as_real(input: TensorLike) -> Tensor:
    """torch.view_as_real (a copy here: gradcli's tensors do not share storage)."""
    z = _operand(input)
    if not _is_complex(z):
        raise DtypeError(f"view_as_real is only supported for complex tensors (got {z.dtype})")
    return apply(_VIEW_AS_REAL, z)


def _view_as_complex_forward(x: Array) -> Array:
    out = np.empty(x.shape[:-1], dtype=complex_of(x.dtype))
    out.real, out.imag = x[..., 0], x[..., 1]
    return out


_VIEW_AS_COMPLEX = _declare(
    "view_as_complex",
    "a real tensor whose last dimension is 2, (real, imag), as a complex one",
    forward=_view_as_complex_forward,
    vjp=lambda g, out, x, needs: (view_as_real(g),),
    jvp=lambda tangents, out, x: view_as_complex(tangents[0]),
    backward_name="ViewAsComplexBackward0",
    batch=B.trailing,
    explain=X.per_element(lambda slot: "1 (real part), j (imaginary part)"),
    saved=False,
)


@public("view_as_complex")
def view_as_complex(input: TensorLike) -> Tensor:
    """torch.view_as_complex."""
    x = _operand(input)
    if x.dtype.kind != "f":
        raise DtypeError(
            f"view_as_complex is only supported for float32 and float64 tensors (got {x.dtype})"
        )
    if not x.ndim or x.shape[-1] != 2:
        raise ShapeError(
            f"view_as_complex: the tensor must have a last dimension of size 2 (got shape "
            f"{x.shape})"
        )
    return apply(_VIEW_AS_COMPLEX, x)
