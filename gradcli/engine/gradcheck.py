"""``torch.autograd.gradcheck``: a function's gradients (the engine's reverse rules, and with
``check_forward_ad`` its forward ones, by forward mode AD) against central finite
differences, as torch's slow mode checks them: ``True``, or a ``GradcheckError`` with
torch's words (``False`` with ``raise_exception=False``).

Each Jacobian is laid out as torch's gradcheck lays it out, one row per input element and
one column per output element, and compared with ``allclose(analytical, numerical, rtol,
atol)``. ``fast_mode`` is accepted and checks as the slow mode does (the verdict on a right
gradient is the same; torch's fast mode words a failure differently). The checks of batched
gradients are accepted and not run.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base.engine_errors import DomainError, GradcheckError
from .autograd_functional import _rows
from .creation import rand
from .forward_ad import dual_level, make_dual, unpack_dual
from .tensor import Tensor, grad


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _checked_inputs(inputs: tuple[Any, ...]) -> list[int]:
    """The places of the inputs that require grad; torch's warning for one that is not of
    double precision, its error where none requires grad."""
    places = []
    for i, value in enumerate(inputs):
        if isinstance(value, Tensor) and value.requires_grad:
            if value.dtype not in (np.float64, np.complex128):
                warnings.warn(
                    f"Input #{i} requires gradient and is not a double precision floating point "
                    "or complex. This check will likely fail if all the inputs are not of "
                    "double precision floating point or complex. ",
                    UserWarning,
                    stacklevel=3,
                )
            places.append(i)
    if not places:
        raise DomainError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "them have requires_grad=True."
        )
    return places


def _numerical(
    func: Callable[..., Any], inputs: tuple[Any, ...], places: list[int], eps: float
) -> list[list[np.ndarray]]:
    """Per input that requires grad, per output: the Jacobian by central differences,
    (input elements, output elements)."""
    arrays = {i: inputs[i].data.copy() for i in places}

    def outputs() -> list[np.ndarray]:
        # the inputs as torch's gradcheck gives them, requiring grad (gradgradcheck's
        # function differentiates them), at the perturbed values
        values = [
            Tensor(arrays[i].copy(), requires_grad=True) if i in arrays else v
            for i, v in enumerate(inputs)
        ]
        return [o.data.reshape(-1).copy() for o in _as_tuple(func(*values))]

    jacobians = []
    for i in places:
        flat = arrays[i].reshape(-1)
        columns: list[list[np.ndarray]] = []
        for k in range(flat.size):
            original = flat[k].copy()
            flat[k] = original - eps
            before = outputs()
            flat[k] = original + eps
            after = outputs()
            flat[k] = original
            columns.append([(b - a) / (2 * eps) for a, b in zip(before, after)])
        count = len(outputs()) if not columns else len(columns[0])
        jacobians.append(
            [
                np.stack([c[j] for c in columns])
                if columns
                else np.zeros((0, 0), dtype=arrays[i].dtype)
                for j in range(count)
            ]
        )
    return jacobians


def _laid_out(block: Tensor, x: Tensor) -> np.ndarray:
    """A Jacobian block (``output.shape + x.shape``) as gradcheck lays it out: one row per
    element of ``x``, one column per element of the output."""
    laid_out: np.ndarray = block.data.reshape(-1, x.numel()).T
    return laid_out


def _analytical(output: Tensor, inputs: tuple[Tensor, ...]) -> list[np.ndarray]:
    """Per input, the Jacobian of ``output`` by reverse mode."""
    (blocks,) = _rows((output,), inputs, False, False)
    return [_laid_out(block, x) for block, x in zip(blocks, inputs)]


def _forward(
    func: Callable[..., Any], inputs: tuple[Any, ...], places: list[int]
) -> list[list[np.ndarray]]:
    """Per input that requires grad, per output that does: the Jacobian by forward mode, as
    torch's ``check_forward_ad`` computes it (the input made dual with each basis vector as
    its tangent in turn, the outputs' tangents read back; a custom Function's ``jvp`` runs)."""
    jacobians = []
    for i in places:
        x = inputs[i]
        rows: list[list[np.ndarray]] = []
        for k in range(x.numel()):
            basis = np.zeros(x.numel(), dtype=x.dtype)
            basis[k] = 1
            with dual_level():
                given = list(inputs)
                given[i] = make_dual(x, Tensor(basis.reshape(x.shape)))
                outs = [o for o in _as_tuple(func(*given)) if o.requires_grad]
                rows.append([_tangent(o) for o in outs])
        count = len(rows[0]) if rows else 0
        jacobians.append([np.stack([row[j] for row in rows]) for j in range(count)])
    return jacobians


def _tangent(output: Tensor) -> np.ndarray:
    """The tangent of ``output`` flattened (zeros where it has none)."""
    tangent = unpack_dual(output).tangent
    if tangent is None:
        return np.zeros(output.numel(), dtype=output.dtype)
    flat: np.ndarray = tangent.data.reshape(-1).copy()
    return flat


def _mismatch(analytical: np.ndarray, numerical: np.ndarray, i: int, j: int, mode: str) -> str:
    return (
        f"Jacobian {mode}mismatch for output {i:d} with respect to input {j:d},\n"
        f"numerical:{Tensor(numerical)!r}\nanalytical:{Tensor(analytical)!r}\n"
    )


def _check(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    eps: float,
    atol: float,
    rtol: float,
    check_forward_ad: bool,
    check_backward_ad: bool,
) -> bool:
    places = _checked_inputs(inputs)
    out = _as_tuple(func(*inputs))
    differentiable = [o for o in out if isinstance(o, Tensor) and o.requires_grad]
    numerical = _numerical(func, inputs, places, eps)
    if not differentiable:
        if any(np.any(n != 0) for per_input in numerical for n in per_input):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    # the numerical Jacobians of the outputs that require grad, per output, per input
    kept = [k for k, o in enumerate(out) if isinstance(o, Tensor) and o.requires_grad]
    by_output = [[numerical[j][k] for j in range(len(places))] for k in kept]
    if check_backward_ad:
        leaves = tuple(inputs[i] for i in places)
        for i, o in enumerate(differentiable):
            for j, (a, n) in enumerate(zip(_analytical(o, leaves), by_output[i])):
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise GradcheckError(_mismatch(a, n, i, j, ""))
    if check_forward_ad:  # after the reverse check, as torch's order is
        forward = _forward(func, inputs, places)
        for i, per_input in enumerate(by_output):
            for j, n in enumerate(per_input):
                if not np.allclose(forward[j][i], n, rtol=rtol, atol=atol):
                    raise GradcheckError(
                        _mismatch(forward[j][i], n, i, j, "computed with forward mode ")
                    )
    return True


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """``torch.autograd.gradcheck``: whether the gradients of ``func`` at ``inputs`` agree
    with finite differences (``True``); else a ``GradcheckError`` (``False`` without
    ``raise_exception``)."""
    try:
        return _check(func, _as_tuple(inputs), eps, atol, rtol, check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """``torch.autograd.gradgradcheck``: ``gradcheck`` of the function that gives the
    vector-Jacobian products of ``func`` with ``grad_outputs`` (by default uniform on
    [-1, 1), from the engine's seeded generator, not torch's), so second derivatives."""
    xs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = [o for o in _as_tuple(func(*xs)) if o.requires_grad]
        vectors = tuple(
            Tensor((rand(*o.shape).data * 2 - 1).astype(o.dtype), requires_grad=True) for o in outs
        )
    else:
        vectors = _as_tuple(grad_outputs)
    count = len(vectors)
    wanted = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]

    def products(*args: Any) -> tuple[Tensor, ...]:
        values, given = args[:-count], args[-count:]
        outs = [o for o in _as_tuple(func(*values)) if o.requires_grad]
        found = grad(
            outs, [values[i] for i in wanted], list(given), create_graph=True, allow_unused=True
        )
        return tuple(g for g in found if g is not None)

    try:
        return _check(
            products, xs + vectors, eps, atol, rtol, check_fwd_over_rev, check_rev_over_rev
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False
