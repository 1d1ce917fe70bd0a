"""Losses of torch.nn.functional, each an entry of the op table built from primitives.

They have no rules of their own: their derivatives, at every order, come from the primitives
they are made of, so each is written the way PyTorch 2.13 computes it (the same branches at
kinks, the same clamps under ``no_grad``), which makes the conventions its. A clamp PyTorch
applies without recording it (``gaussian_nll_loss``'s var, ``cosine_similarity``'s norms)
is ``_floored``: the clamped value, with the gradient of the unclamped one. One exception,
for speed: ``class_nll``, a primitive of its own, is nll_loss's usual case (a mean or sum of
class indices, every target kept, no weights) as one node, with the values and rules of the
primitives it replaces.

Class indices are float tensors holding whole numbers (the engine has no integer dtype).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, IndexDomainError, ShapeError
from ...engine import sizes
from ...engine.tensor import Tensor, apply_one
from .. import explaining as X
from .. import primitives as P
from .. import symbolic as S
from ..arrays import rearranging as RA
from ..elementwise import elementary as EL
from ..numerics.summation import sum_like_torch
from ..reductions import reductions as RD
from ..rules.dims import _axes, as_tensor_pair
from ..table import (
    BOOL,
    INT,
    KL_REDUCTION,
    NUMBER,
    OPT_TENSOR,
    REDUCTION,
    TENSOR,
    Array,
    Op,
    Param,
    public,
    register,
)
from .composites import _reduce, _same_shape, constant_weight
from .elementwise_losses import TWO_POSITIONAL, WEIGHT_THIRD

Operand = Tensor | float | np.ndarray
Explain = Callable[[Any, Callable[[np.ndarray], np.ndarray]], tuple[str, str, str, Any]]

_INPUTS = (Param("input", TENSOR), Param("target", TENSOR))
_REDUCED = Param("reduction", REDUCTION, "mean")


def _loss(name: str, summary: str, params: tuple[Param, ...], **fields: Any) -> None:
    register(Op(name, summary, params=params, **fields))


def _tensor(x: Operand) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x, dtype=np.float64))


def _pair(name: str, input: Operand, target: Operand) -> tuple[Tensor, Tensor]:
    """Input and target as tensors of one shape (as mse_loss, no broadcasting)."""
    a, b = as_tensor_pair(input, target)
    _same_shape(name, a, b)
    return a, b


def _floored(x: Tensor, low: float) -> Tensor:
    """max(x, low) whose gradient is that of x: PyTorch's ``clamp_`` under ``no_grad``."""
    return P.add(x, P.mask(partial(_lift, low=low), x))


def _lift(x: np.ndarray, low: float) -> np.ndarray:
    return np.asarray(np.maximum(x, low) - x)


def _is_one(x: np.ndarray) -> np.ndarray:
    return np.asarray(x == 1)


def _is_minus_one(x: np.ndarray) -> np.ndarray:
    return np.asarray(x == -1)


def _not_one(x: np.ndarray) -> np.ndarray:
    return np.asarray(x != 1)


def _not_minus_one(x: np.ndarray) -> np.ndarray:
    return np.asarray(x != -1)


def _below(x: np.ndarray, bound: float) -> np.ndarray:
    return np.asarray(np.abs(x) < bound)


def _at_most_one(x: np.ndarray) -> np.ndarray:
    return np.asarray(x <= 1)


def _is_zero(x: np.ndarray) -> np.ndarray:
    return np.asarray(x == 0)


# -- explain: the derivative of one element's loss, and the mean's 1/n ------------------------


def _mean_note(slot: Any, count: int) -> str:
    reduction = slot.params.get("reduction", "mean")
    if reduction == "mean" and count != 1:
        return f", divided by n = {count} (the mean)"
    if reduction == "batchmean" and count != 1:
        return f", divided by {count} (the batch size)"
    return ""


def _elements(arrays: list[np.ndarray]) -> int:
    """How many losses an element-wise loss makes: its operands' broadcast size."""
    return math.prod(np.broadcast_shapes(*(a.shape for a in arrays)))


def _rows(arrays: list[np.ndarray]) -> int:
    """How many losses a loss of rows (N, D) makes."""
    return arrays[0].shape[0] if arrays[0].ndim == 2 else 1


def _targets(arrays: list[np.ndarray]) -> int:
    """How many losses a class-index loss makes: one per target."""
    return arrays[1].size


def _per_element(
    formula: Callable[[Any, list[str]], str],
    count: Callable[[list[np.ndarray]], int] = _elements,
) -> Explain:
    """A loss's explain rule: ``formula(slot, elements)`` is d loss[i] / d w[i] with the
    operands' elements (``x[i]``) as text; the reduction's division is added here."""

    def text(slot: Any) -> str:
        elements = [n if _number(n) else f"{n}[i]" for n in slot.names]
        arrays = slot.arrays
        if slot.params.get("reduction") == "batchmean":
            n = arrays[0].shape[0] if arrays[0].ndim else 1
        else:
            n = count(arrays)
        text = formula(slot, elements)
        return text if text.startswith("0 (") else text + _mean_note(slot, n)

    return X.per_element(text)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _signed(slot: Any, text: str) -> str:
    """The input's derivative as given, the target's its negative."""
    return text if slot.position == 0 else f"-({text})"


def _two_branches(threshold: str, below: str, above: str) -> Explain:
    """The explain rule of a loss with two branches (smooth_l1_loss, huber_loss): ``below``
    where |input - target| is under the parameter ``threshold``, else ``above``; in both,
    ``{d}`` is input - target and ``{t}`` the threshold."""

    def formula(slot: Any, elements: list[str]) -> str:
        d, t = f"{elements[0]} - {elements[1]}", X.number_text(slot.params[threshold])
        branches = f"{below.format(d=d, t=t)} where |{d}| < {t}, else {above.format(d=d, t=t)}"
        return _signed(slot, branches)

    return _per_element(formula)


# -- symbolic forms ----------------------------------------------------------------------------


def _reduced(loss: np.ndarray, reduction: str, batch: int = 1) -> np.ndarray:
    import sympy

    if reduction == "none":
        return loss
    total = np.asarray(np.sum(loss), dtype=object)
    if reduction == "sum":
        return total
    count = batch if reduction == "batchmean" else loss.size
    return np.asarray(total * (sympy.Rational(1, count) if count else sympy.nan), dtype=object)


def _each(function: Callable[..., Any], *arrays: np.ndarray) -> np.ndarray:
    import sympy

    return np.asarray(
        np.frompyfunc(partial(function, sympy), len(arrays), 1)(*arrays), dtype=object
    )


def _kl_div_symbolic(
    x: np.ndarray, t: np.ndarray, reduction: str = "mean", log_target: bool = False
) -> np.ndarray:
    if log_target:
        loss = _each(lambda sp, a, b: sp.exp(b) * (b - a), x, t)
    else:
        loss = _each(lambda sp, a, b: b * (sp.log(b) - a), x, t)
    return _reduced(loss, reduction, x.shape[0] if x.ndim else 1)


def _poisson_symbolic(
    x: np.ndarray,
    t: np.ndarray,
    log_input: bool = True,
    full: bool = False,
    eps: float = 1e-8,
    reduction: str = "mean",
) -> np.ndarray:
    from ..symbolic import NotSymbolic, number

    if full:
        raise NotSymbolic("its Stirling term is cut off at target <= 1, a kink")
    if log_input:
        loss = _each(lambda sp, a, b: sp.exp(a) - b * a, x, t)
    else:
        loss = _each(lambda sp, a, b: a - b * sp.log(a + number(eps)), x, t)
    return _reduced(loss, reduction)


_KINKED = (
    "it is piecewise (a clamp or |x| at its kink), and sympy's derivative there is not PyTorch's"
)
_CLAMPED = "PyTorch clamps a value at eps without recording it, which sympy does not write"

# -- element-wise losses of input and target ---------------------------------------------------

_loss(
    "l1_loss",
    "mean absolute error",
    (*_INPUTS, _REDUCED),
    symbolic=_KINKED,
    explain=_per_element(lambda s, e: _signed(s, f"sign({e[0]} - {e[1]})")),
    kink="the derivative at input == target is 0 (sign(0))",
    extra=TWO_POSITIONAL,
)
_loss(
    "smooth_l1_loss",
    "squared error below beta, absolute error above",
    (*_INPUTS, _REDUCED, Param("beta", NUMBER, 1.0)),
    symbolic=_KINKED,
    explain=_two_branches("beta", below="({d})/{t}", above="sign({d})"),
    kink="at |input - target| == beta the linear branch holds (second derivative 0); beta = 0 "
    "is l1_loss",
    backward_name="SmoothL1LossBackward0",
    extra=TWO_POSITIONAL,
)
_loss(
    "huber_loss",
    "squared error below delta, delta times absolute error above",
    (*_INPUTS, _REDUCED, Param("delta", NUMBER, 1.0)),
    symbolic=_KINKED,
    explain=_two_branches("delta", below="({d})", above="{t}*sign({d})"),
    kink="at |input - target| == delta the linear branch holds (second derivative 0)",
    backward_name="HuberLossBackward0",
)


@public("l1_loss")
def l1_loss(input: Operand, target: Operand, reduction: str = "mean") -> Tensor:
    """|input - target|, reduced (mean by default)."""
    a, b = _pair("l1_loss", input, target)
    return _reduce(EL.abs(P.sub(a, b)), reduction)


def _piecewise_quadratic(difference: Tensor, bound: float, scale: float) -> Tensor:
    """0.5 d**2 * scale where |d| < bound, else bound * scale * (|d| - 0.5 bound)."""
    size = EL.abs(difference)
    inside = P.mask(partial(_below, bound=bound), difference)
    quadratic = P.mul(P.mul(difference, difference), 0.5 * scale)
    linear = P.mul(P.sub(size, 0.5 * bound), bound * scale)
    return P.where(inside, quadratic, linear)


@public("smooth_l1_loss")
def smooth_l1_loss(
    input: Operand, target: Operand, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta, with d = input - target."""
    a, b = _pair("smooth_l1_loss", input, target)
    if beta < 0:
        raise DomainError(f"smooth_l1_loss: beta must not be negative, got {beta!r}")
    difference = P.sub(a, b)
    if beta == 0:
        return _reduce(EL.abs(difference), reduction)
    return _reduce(_piecewise_quadratic(difference, float(beta), 1.0 / beta), reduction)


@public("huber_loss")
def huber_loss(
    input: Operand, target: Operand, reduction: str = "mean", delta: float = 1.0
) -> Tensor:
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta), with d = input - target."""
    a, b = _pair("huber_loss", input, target)
    if delta <= 0:
        raise DomainError(f"huber_loss: delta must be positive, got {delta!r}")
    return _reduce(_piecewise_quadratic(P.sub(a, b), float(delta), 1.0), reduction)


# PyTorch's UserWarning for kl_div's default reduction, word for word (gradcli run prints it)
_KL_MEAN = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release."
)
_loss(
    "kl_div",
    "Kullback-Leibler divergence; input holds log-probabilities",
    (
        *_INPUTS,
        Param("reduction", KL_REDUCTION, "mean"),
        Param("log_target", BOOL, False),
    ),
    symbolic=_kl_div_symbolic,
    explain=_per_element(
        lambda s, e: (
            (f"-exp({e[1]})" if s.params["log_target"] else f"-{e[1]}")
            if s.position == 0
            else (
                f"exp({e[1]})*({e[1]} - {e[0]} + 1)"
                if s.params["log_target"]
                else f"log({e[1]}) + 1 - {e[0]}"
            )
        )
    ),
    nonfinite="the log of a negative target",
    nonfinite_backward="the derivative of target*log(target) at target 0 (nan, as PyTorch's)",
    kink="a target of 0 adds 0 to the loss, and its own gradient is nan, as PyTorch's xlogy",
    extra={
        **TWO_POSITIONAL,
        "warning": lambda args: _KL_MEAN if len(args) < 3 or args[2] == "mean" else None,
    },
)


@public("kl_div")
def kl_div(
    input: Operand, target: Operand, reduction: str = "mean", log_target: bool = False
) -> Tensor:
    """target * (log(target) - input) (or exp(target) * (target - input) when the target is
    a log-probability); 'batchmean' divides the sum by the batch size."""
    a, b = _pair("kl_div", input, target)
    if log_target:
        loss = P.mul(EL.exp(b), P.sub(b, a))
    else:
        # xlogy(t, t): 0 at t == 0, where the unselected t * log(t) makes the gradient nan
        zero = P.mask(_is_zero, b)
        loss = P.sub(P.where(zero, 0.0, P.mul(b, EL.log(b))), P.mul(b, a))
    if reduction == "batchmean":
        batch = a.shape[0] if a.ndim else 1
        return P.div(RD.sum(loss), float(batch))
    if reduction not in ("mean", "sum", "none"):
        raise DomainError(
            f"kl_div: reduction must be one of mean, batchmean, sum, none, got {reduction!r}"
        )
    return _reduce(loss, reduction)


_loss(
    "poisson_nll_loss",
    "negative log-likelihood of a Poisson target",
    (
        *_INPUTS,
        Param("log_input", BOOL, True),
        Param("full", BOOL, False),
        Param("eps", NUMBER, 1e-8),
        _REDUCED,
    ),
    symbolic=_poisson_symbolic,
    explain=_per_element(
        lambda s, e: (
            (
                (f"exp({e[0]}) - {e[1]}" if s.position == 0 else f"-{e[0]}")
                if s.params["log_input"]
                else (f"1 - {e[1]}/({e[0]} + eps)" if s.position == 0 else f"-log({e[0]} + eps)")
            )
            + (
                f" + log({e[1]}) + 1/(2*{e[1]}) where {e[1]} > 1"
                if s.position == 1 and s.params["full"]
                else ""
            )
        )
    ),
    nonfinite="exp of a large input, or the log of input + eps <= 0",
    kink="with full=True the Stirling term is 0 where target <= 1, its gradient too",
    extra={"positional": ("input", "target", "log_input", "full")},
)


@public("poisson_nll_loss")
def poisson_nll_loss(
    input: Operand,
    target: Operand,
    log_input: bool = True,
    full: bool = False,
    eps: float = 1e-8,
    reduction: str = "mean",
) -> Tensor:
    """exp(input) - target * input (log_input), else input - target * log(input + eps);
    ``full`` adds Stirling's approximation of log(target!) where target > 1."""
    a, b = _pair("poisson_nll_loss", input, target)
    if log_input:
        loss = P.sub(EL.exp(a), P.mul(b, a))
    else:
        loss = P.sub(a, P.mul(b, EL.log(P.add(a, float(eps)))))
    if full:
        small = P.mask(_at_most_one, b)
        safe = P.where(small, 2.0, b)  # the masked branch stays finite at every order
        stirling = P.add(
            P.sub(P.mul(safe, EL.log(safe)), safe), P.mul(EL.log(P.mul(safe, 2 * math.pi)), 0.5)
        )
        loss = P.add(loss, P.where(small, 0.0, stirling))
    return _reduce(loss, reduction)


_loss(
    "soft_margin_loss",
    "logistic loss of labels +-1: log(1 + exp(-target*input))",
    (*_INPUTS, _REDUCED),
    symbolic="its target is not differentiated (as in PyTorch), which sympy does not write",
    explain=_per_element(
        lambda s, e: (
            f"-{e[1]}*sigmoid(-{e[1]}*{e[0]})"
            if s.position == 0
            else "0 (the target is not differentiated, as in PyTorch)"
        )
    ),
    nonfinite="exp(-target*input) overflows (PyTorch's loss is inf there too)",
    kink="the target gets no gradient (PyTorch has none for it)",
    extra=TWO_POSITIONAL,
)


@public("soft_margin_loss")
def soft_margin_loss(input: Operand, target: Operand, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), as PyTorch computes it (inf where exp overflows)."""
    a, b = _pair("soft_margin_loss", input, target)
    b = P.mask(_same, b)  # PyTorch does not differentiate the target
    return _reduce(EL.log1p(EL.exp(P.neg(P.mul(b, a)))), reduction)


def _same(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)


# -- gaussian_nll_loss -------------------------------------------------------------------------

_loss(
    "gaussian_nll_loss",
    "negative log-likelihood of a Gaussian with mean input and variance var",
    (
        *_INPUTS,
        Param("var", TENSOR),
        Param("full", BOOL, False),
        Param("eps", NUMBER, 1e-6),
        _REDUCED,
    ),
    symbolic=_CLAMPED,
    explain=_per_element(
        lambda s, e: (
            [
                f"({e[0]} - {e[1]})/v",
                f"-({e[0]} - {e[1]})/v",
                f"0.5*(1/v - ({e[0]} - {e[1]})**2/v**2)",
            ][s.position]
            + f" (v = max({e[2]}, eps))"
        )
    ),
    nonfinite="a variance of 0 with eps 0",
    kink="var is clamped at eps, but its gradient is that of the unclamped var (PyTorch clamps "
    "under no_grad)",
)


@public("gaussian_nll_loss")
def gaussian_nll_loss(
    input: Operand,
    target: Operand,
    var: Operand,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """0.5 * (log(v) + (input - target)**2 / v) with v = max(var, eps) (plus 0.5 log(2 pi)
    when ``full``). var is shaped like input, like it without the last dim, or with a last
    dim of 1; a number is one variance for all."""
    a, b = _pair("gaussian_nll_loss", input, target)
    v = _tensor(var) if isinstance(var, Tensor) or np.ndim(var) else as_tensor_pair(a, var)[1]
    if v.shape != a.shape and v.ndim:
        if a.ndim and v.shape == a.shape[:-1]:
            v = RA.reshape(v, v.shape + (1,))
        elif not (a.ndim and v.shape[:-1] == a.shape[:-1] and v.shape[-1] == 1):
            raise ShapeError(
                f"gaussian_nll_loss: var must have the shape of input {a.shape}, that shape "
                f"without its last dim, or with a last dim of 1; got {v.shape}"
            )
    if np.any(v.data < 0):
        raise DomainError("gaussian_nll_loss: var has negative entries")
    v = _floored(v, float(eps))
    difference = P.sub(a, b)
    loss = P.mul(P.add(EL.log(v), P.div(P.mul(difference, difference), v)), 0.5)
    if full:
        loss = P.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


# -- distances and similarities ----------------------------------------------------------------

_PAIR = (Param("x1", TENSOR), Param("x2", TENSOR))


def _cosine_text(slot: Any, elements: list[str]) -> str:
    mine, other = (elements[0], elements[1])[:: 1 if slot.position == 0 else -1]
    n_mine, n_other = (f"|{n}|" for n in (slot.names[slot.position], slot.names[1 - slot.position]))
    return (
        f"{other}/({n_mine}*{n_other}) - cos*{mine}/{n_mine}**2 (cos the similarity, "
        f"norms{X.along(slot)} at least eps)"
    )


_loss(
    "cosine_similarity",
    "cosine of the angle between x1 and x2 along dim",
    (*_PAIR, Param("dim", INT, 1), Param("eps", NUMBER, 1e-8)),
    symbolic=_CLAMPED,
    explain=X.per_element(lambda s: _cosine_text(s, [f"{n}[i]" for n in s.names])),
    nonfinite="an eps of 0 with a zero vector",
    kink="each norm is clamped at eps with the gradient of the unclamped norm (PyTorch clamps "
    "under no_grad); the norm's gradient at a zero vector is 0",
)


@public("cosine_similarity")
def cosine_similarity(x1: Operand, x2: Operand, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1/|x1| * x2/|x2|) along ``dim`` (broadcasting), each norm at least eps."""
    a, b = as_tensor_pair(x1, x2)
    shape = np.broadcast_shapes(a.shape, b.shape)
    a, b = P.expand(a, shape), P.expand(b, shape)
    axis = _axes(int(dim), len(shape))
    if not shape:  # a 0-d pair: torch normalizes each number by itself
        axis = ()
    unit = [
        P.div(t, _floored(RD.norm(t, 2, axis, keepdim=True) if axis else EL.abs(t), float(eps)))
        for t in (a, b)
    ]
    product = P.mul(unit[0], unit[1])
    return RD.sum(product, axis) if axis else product


def _normalize_symbolic(x: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Any:
    return x / S.norm(x, p, dim, True)


def _normalize_text(slot: Any) -> str:
    u, w, where = slot.node, slot.wrt, X.along(slot)
    p = float(slot.params["p"])
    if p == 2:
        return f"(δij - u[i]*u[j])/max(|{w}|, eps) (u = {u}{where})"
    return (
        f"δij/n - u[i]*|{w}[j]|^(p-1)*sign({w}[j])/n^p (u = {u}, n = the "
        f"{X.number_text(p)}-norm{where})"
    )


_loss(
    "normalize",
    "input / max(p-norm of input along dim, eps): unit vectors along dim",
    (
        Param("input", TENSOR),
        Param("p", NUMBER, 2.0),
        Param("dim", INT, 1),
        Param("eps", NUMBER, 1e-12),
    ),
    symbolic=_normalize_symbolic,
    explain=X.slices(_normalize_text),
    backward_name="DivBackward0",
    nonfinite="an eps of 0 with a zero vector",
    kink="the norm is clamped at eps (clamp_min: its gradient passes where the norm >= eps), as "
    "PyTorch's; the norm's gradient at a zero vector is 0",
)


@public("normalize")
def normalize(input: Operand, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input`` divided by its p-norm along ``dim`` (at least ``eps``), as
    torch.nn.functional.normalize."""
    x = _tensor(input)
    axis = _axes(int(dim), x.ndim)
    return P.div(x, EL.clamp(RD.norm(x, float(p), axis, keepdim=True), min=float(eps)))


def _pairwise_text(slot: Any) -> str:
    p = float(slot.params["p"])
    sign = "" if slot.position == 0 else "-"
    names = slot.names
    d = f"d = {names[0]} - {names[1]} + eps"
    if p == 2:
        return f"{sign}d[i]/{slot.node} ({d}; 0 where the distance is 0)"
    return f"{sign}the {X.number_text(p)}-norm's derivative at d[i] ({d})"


_loss(
    "pairwise_distance",
    "p-norm of x1 - x2 + eps along the last dim",
    (*_PAIR, Param("p", NUMBER, 2.0), Param("eps", NUMBER, 1e-6), Param("keepdim", BOOL, False)),
    symbolic=lambda a, b, p=2.0, eps=1e-6, keepdim=False: S.norm(
        a - b + _sympy_number(eps), p, -1 if np.ndim(a - b) else None, keepdim
    ),
    explain=X.per_element(_pairwise_text),
    kink="as norm: the gradient at a zero distance is 0",
    backward_name="NormBackward1",
)


def _sympy_number(value: float) -> Any:
    from ..symbolic import number

    return number(value)


@public("pairwise_distance")
def pairwise_distance(
    x1: Operand, x2: Operand, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """norm(x1 - x2 + eps, p) along the last dim (broadcasting)."""
    a, b = as_tensor_pair(x1, x2)
    difference = P.add(P.sub(a, b), float(eps))
    dim = -1 if difference.ndim else None
    return RD.norm(difference, p, dim, keepdim)


# -- margin losses -----------------------------------------------------------------------------

_loss(
    "margin_ranking_loss",
    "max(0, -target*(input1 - input2) + margin), target +-1",
    (
        Param("input1", TENSOR),
        Param("input2", TENSOR),
        Param("target", TENSOR),
        Param("margin", NUMBER, 0.0),
        _REDUCED,
    ),
    symbolic=_KINKED,
    explain=_per_element(
        lambda s, e: (
            [f"-{e[2]}", f"{e[2]}", f"-({e[0]} - {e[1]})"][s.position]
            + f" where -{e[2]}*({e[0]} - {e[1]}) + margin >= 0, else 0"
        )
    ),
    kink="at the hinge (-target*(input1 - input2) + margin == 0) the gradient is that of the "
    "linear side (clamp_min's bound is included)",
    extra={"positional": ("input1", "input2", "target", "margin")},
)


@public("margin_ranking_loss")
def margin_ranking_loss(
    input1: Operand, input2: Operand, target: Operand, margin: float = 0.0, reduction: str = "mean"
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin), broadcasting as PyTorch's."""
    a, b = as_tensor_pair(input1, input2)
    y = as_tensor_pair(a, target)[1]
    if not (a.ndim == b.ndim == y.ndim):
        raise ShapeError(
            "margin_ranking_loss: input1, input2 and target must have the same number of "
            f"dimensions, got {a.shape}, {b.shape} and {y.shape}"
        )
    hinge = P.add(P.neg(P.mul(y, P.sub(a, b))), float(margin))
    return _reduce(EL.clamp(hinge, min=0.0), reduction)


_loss(
    "hinge_embedding_loss",
    "input where target is 1, max(0, margin - input) where target is -1",
    (*_INPUTS, Param("margin", NUMBER, 1.0), _REDUCED),
    symbolic=_KINKED,
    explain=_per_element(
        lambda s, e: (
            f"1 where {e[1]} = 1; -1 where {e[1]} = -1 and {e[0]} <= margin; else 0"
            if s.position == 0
            else "0 (the target only selects)"
        )
    ),
    kink="at input == margin with target -1 the gradient is -1 (clamp_min's bound is included)",
    extra={"positional": ("input", "target", "margin")},
)


@public("hinge_embedding_loss")
def hinge_embedding_loss(
    input: Operand, target: Operand, margin: float = 1.0, reduction: str = "mean"
) -> Tensor:
    """PyTorch's sum of two selections: max(0, margin - input) where target != 1, plus input
    where target != -1 (so a target of neither sign takes both)."""
    a, y = as_tensor_pair(input, target)
    hinge = EL.clamp(P.sub(float(margin), a), min=0.0)
    loss = P.add(
        P.where(P.mask(_not_one, y), hinge, 0.0), P.where(P.mask(_not_minus_one, y), a, 0.0)
    )
    return _reduce(loss, reduction)


_loss(
    "cosine_embedding_loss",
    "1 - cos(x1, x2) where target is 1, max(0, cos - margin) where target is -1",
    (
        Param("input1", TENSOR),
        Param("input2", TENSOR),
        Param("target", TENSOR),
        Param("margin", NUMBER, 0.0),
        _REDUCED,
    ),
    symbolic=_KINKED,
    explain=_per_element(
        lambda s, e: (
            "-dcos/d{0} where {1} = 1; dcos/d{0} where {1} = -1 and cos >= margin; else 0 (cos = "
            "sum({2}*{3})/sqrt((sum({2}**2) + 1e-12)*(sum({3}**2) + 1e-12)), by rows)".format(
                e[s.position], e[2], *s.names[:2]
            )
            if s.position < 2
            else "0 (the target only selects)"
        ),
        _rows,
    ),
    kink="at cos == margin with target -1 the gradient is that of cos (clamp_min's bound is "
    "included); squared norms get 1e-12 added, as PyTorch's",
    extra={"positional": ("input1", "input2", "target", "margin")},
)


@public("cosine_embedding_loss")
def cosine_embedding_loss(
    input1: Operand, input2: Operand, target: Operand, margin: float = 0.0, reduction: str = "mean"
) -> Tensor:
    """Rows of input1 and input2 (shape (N, D), target (N,); or (D), target ()), compared by
    their cosine, as PyTorch computes it (1e-12 added to each squared norm)."""
    a, b = as_tensor_pair(input1, input2)
    y = as_tensor_pair(a, target)[1]
    if a.shape != b.shape or a.ndim not in (1, 2) or y.shape != a.shape[:-1]:
        raise ShapeError(
            "cosine_embedding_loss: input1 and input2 must be (N, D) with target (N), or (D) "
            f"with target (), got {a.shape}, {b.shape} and {y.shape}"
        )
    dim = a.ndim - 1
    products = RD.sum(P.mul(a, b), dim)
    squares = [P.add(RD.sum(P.mul(t, t), dim), 1e-12) for t in (a, b)]
    cos = P.div(products, EL.sqrt(P.mul(squares[0], squares[1])))
    positive = P.where(P.mask(_is_one, y), P.sub(1.0, cos), 0.0)
    negative = P.where(P.mask(_is_minus_one, y), EL.clamp(P.sub(cos, float(margin)), min=0.0), 0.0)
    return _reduce(P.add(positive, negative), reduction)


_loss(
    "triplet_margin_loss",
    "max(0, margin + d(anchor, positive) - d(anchor, negative)), d pairwise_distance",
    (
        Param("anchor", TENSOR),
        Param("positive", TENSOR),
        Param("negative", TENSOR),
        Param("margin", NUMBER, 1.0),
        Param("p", NUMBER, 2.0),
        Param("eps", NUMBER, 1e-6),
        Param("swap", BOOL, False),
        _REDUCED,
    ),
    symbolic=_KINKED,
    explain=_per_element(
        lambda s, e: (
            f"{['(d(d_pos) - d(d_neg))', 'd(d_pos)', '-d(d_neg)'][s.position]}/d{e[s.position]} "
            "where margin + d_pos - d_neg >= 0, else 0 (d_pos, d_neg: pairwise_distance of "
            "the anchor to the positive and to the negative"
            + (", d_neg the smaller of it and the positive's" if s.params["swap"] else "")
            + ")"
        ),
        _rows,
    ),
    kink="at the hinge the gradient is that of the linear side; with swap, a tie of the two "
    "negative distances shares the gradient (minimum)",
    extra={"positional": ("anchor", "positive", "negative", "margin", "p", "eps", "swap")},
)


@public("triplet_margin_loss")
def triplet_margin_loss(
    anchor: Operand,
    positive: Operand,
    negative: Operand,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) over rows (N, D) or one
    row (D); ``swap`` takes the smaller of d(anchor, negative) and d(positive, negative)."""
    a, pos = as_tensor_pair(anchor, positive)
    neg = as_tensor_pair(a, negative)[1]
    if not (a.ndim == pos.ndim == neg.ndim) or a.ndim not in (1, 2):
        raise ShapeError(
            "triplet_margin_loss: anchor, positive and negative must all be (N, D) or all (D), "
            f"got {a.shape}, {pos.shape} and {neg.shape}"
        )
    near = pairwise_distance(a, pos, p, eps)
    far = pairwise_distance(a, neg, p, eps)
    if swap:
        far = EL.minimum(far, pairwise_distance(pos, neg, p, eps))
    return _reduce(EL.clamp(P.add(P.sub(near, far), float(margin)), min=0.0), reduction)


# -- class-index losses: nll_loss, cross_entropy -------------------------------------------------

# np.min's, np.max's and np.all's reductions without their Python wrappers (a loss a step)
_least, _most, _every = np.minimum.reduce, np.maximum.reduce, np.logical_and.reduce


def _class_indices(name: str, input: Tensor, target: Tensor, ignore_index: int) -> np.ndarray:
    """The target's class indices as integers, checked: shape () for input (C), (N, d...) for
    input (N, C, d...); whole numbers in [0, C) or ignore_index."""
    expected = input.shape[:1] + input.shape[2:] if input.ndim > 1 else ()
    classes = target.data
    whole = classes.dtype.kind in "iu"  # (integers need no check)
    if classes.shape != expected or not (whole or _every(classes == np.round(classes), axis=None)):
        raise ShapeError(
            f"{name}: target must be class indices (whole numbers) of shape {expected}"
            + (f" or probabilities of shape {input.shape}" if name == "cross_entropy" else "")
            + f", got {target.shape}"
        )
    indices = classes.astype(np.int64)
    n_classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    # the usual case, every index a class, told by two reductions (no masks: a loss a step)
    if indices.size == 0 or (
        0 <= _least(indices, axis=None) and _most(indices, axis=None) < n_classes
    ):
        return indices
    outside = (indices < 0) | (indices >= n_classes)
    bad = outside & (indices != ignore_index)
    if bad.any():
        raise IndexDomainError(
            f"{name}: class indices must be in [0, {n_classes - 1}] (or ignore_index "
            f"{ignore_index}), got {int(indices[bad].flat[0])}"
        )
    return indices


def _every_kept(indices: np.ndarray, ignore_index: int) -> bool:
    """Whether no target is ignore_index, told without a mask where it can be (checked indices
    are classes or ignore_index: a negative ignore_index, and no negative index)."""
    if ignore_index < 0 and (indices.size == 0 or _least(indices, axis=None) >= 0):
        return True
    return not np.any(indices == ignore_index)


def _class_index(log_probs: Tensor, safe: np.ndarray) -> tuple[Any, ...]:
    """The advanced index of each target's class in ``log_probs``: (classes,) of input (C),
    (rows, classes) of (N, C), (rows, classes, d1, ...) of (N, C, d1, ...)."""
    if log_probs.ndim == 1:
        return (safe,)
    if safe.ndim == 1:  # (np.indices' one grid)
        return (np.arange(len(safe)), safe)
    grids = np.indices(safe.shape)
    return (grids[0], safe, *grids[1:])


def _picked_nll(log_probs: Tensor, indices: np.ndarray, ignore_index: int) -> tuple[Tensor, int]:
    """-log_probs at each target's class, 0 where the target is ignore_index, and the number
    of targets kept."""
    if _every_kept(indices, ignore_index):
        return P.neg(RA.getitem(log_probs, _class_index(log_probs, indices))), indices.size
    kept = indices != ignore_index
    safe = np.where(kept, indices, 0)
    picked = P.neg(RA.getitem(log_probs, _class_index(log_probs, safe)))
    # selected, as torch's rule: an infinite cotangent gives 0 there
    return P.where(Tensor(kept), picked, 0.0), int(np.count_nonzero(kept))


# -- class_nll: the mean or sum of -log_probs at the targets' classes, as one node ------------
#
# nll_loss (and cross_entropy after its log_softmax) of class indices with no class weights,
# every target kept and a mean or sum, the MLP's loss of every training step: the values and
# the rules of the composite it replaces (getitem, neg, sum, div by the count), in their order
# and so to their bits, as one node, torch's NllLossBackward0 (the composite's four nodes and
# their reverse rules cost about a fifth of an eager MLP step's Python). Any other case is the
# composite below (``_picked_nll``, ``_class_reduce``).


def _negated_total(picked: Array, mean: bool, start: int) -> Any:
    """-picked summed over its dims from ``start`` (each point's: the dims before are a batch),
    divided by their count for the mean: neg, sum and div's forwards (an array, or a numpy
    scalar that the engine makes one)."""
    total = sum_like_torch(np.negative(picked), tuple(range(start, picked.ndim)))
    if not mean:
        return total
    return np.divide(total, total.dtype.type(math.prod(picked.shape[start:])))


def _class_nll_vjp(
    g: Tensor, out: Any, x: Tensor, needs: Any, index: tuple[Any, ...], mean: bool
) -> tuple[Tensor]:
    """The composite's reverse rules in its order: div's g * (1 / count), sum's spread over
    the targets, neg's, getitem's scatter into x's shape (in operations: higher orders too)."""
    shape = np.shape(index[0])
    if mean:
        g = P.mul(g, 1.0 / math.prod(shape))
    return (RA.getitem_backward(P.neg(P.expand(g, shape=shape)), index, x.shape),)


def _class_nll_jvp(
    tangents: Any, out: Any, x: Tensor, index: tuple[Any, ...], mean: bool
) -> Tensor:
    """The loss of the tangent (the loss is linear in its input)."""
    return apply_one(_CLASS_NLL, tangents[0], {"index": index, "mean": mean})


def _class_nll_on_arrays(
    g: Array, out: Any, x: Array, needs: Any, index: tuple[Any, ...], mean: bool
) -> tuple[Array] | None:
    """``_class_nll_vjp`` on float64 arrays (``Op.vjp_arrays``), by the very numpy calls of its
    operations; past the room (the scatter has x's size, the pass checked g's) vjp runs and
    refuses it."""
    if x.size > sizes.ROOM[0]:
        return None
    if mean:
        g = g * np.reciprocal(np.float64(np.size(index[0])))
    # (-g spread over the targets: the scatter's add.at spreads the one value itself)
    return (RA._scatter_forward(np.negative(g), index, x.shape),)


def _class_nll_batched(
    forward: Any, params: dict[str, Any], values: Any, batched: Any, ranks: Any, size: int
) -> Array:
    """With a batch dim in front of the input: the index's arrays are side by side, so the
    batch dim stays in front of the picked values; each point's total over the rest."""
    picked = values[0][(slice(None), *params["index"])]
    return np.asarray(_negated_total(picked, params["mean"], 1))


_CLASS_NLL = register(
    Op(
        "class_nll",
        "nll_loss of class indices, every target kept, no weights, mean or sum: one node",
        forward=lambda x, index, mean: _negated_total(x[index], mean, 0),
        vjp=_class_nll_vjp,
        jvp=_class_nll_jvp,
        backward_name="NllLossBackward0",
        batch=_class_nll_batched,
        size=lambda x, index, mean: np.size(index[0]),  # (the picked values, the most made)
        vjp_reads_out=False,
        nonfinite="a log-probability of -inf (or nan) at a target's class",
    )
)
_CLASS_NLL.vjp_arrays = _class_nll_on_arrays


def _class_nll(x: Tensor, indices: np.ndarray, ignore_index: int, reduction: str) -> Tensor | None:
    """The loss by ``class_nll`` where it applies (no weights, checked by the caller), else
    None: a mean or sum over targets, at least one, every one kept."""
    if reduction not in ("mean", "sum") or not indices.size or x.dtype.kind != "f":
        return None
    if not _every_kept(indices, ignore_index):
        return None
    params = {"index": _class_index(x, indices), "mean": reduction == "mean"}
    return apply_one(_CLASS_NLL, x, params)


def _probability_loss(
    log_probs: Tensor, t: Tensor, w: Tensor | None, reduction: str, label_smoothing: float
) -> Tensor:
    """Cross-entropy against class probabilities, in torch's order of operations (its last
    bits and its nodes): ``-(log_probs * t * w).sum()`` over everything, divided by the
    number of rows for the mean (nan for none); per row (the class dim summed) for none."""
    dim = 1 if log_probs.ndim > 1 else 0
    n_classes = log_probs.shape[dim]
    if label_smoothing:
        t = P.add(P.mul(t, 1.0 - label_smoothing), label_smoothing / n_classes)
    terms = P.mul(log_probs, t)
    if w is not None:
        terms = P.mul(terms, w)
    if reduction == "none":
        return P.neg(RD.sum(terms, dim))
    if reduction not in ("sum", "mean"):
        return _reduce(terms, reduction)  # refuses it
    rows = log_probs.data.size // n_classes if n_classes else 0
    if reduction == "mean" and not rows:  # torch: the sum filled with nan, negated
        return P.neg(P.add(P.mul(RD.sum(terms), 0.0), math.nan))
    total = P.neg(RD.sum(terms))
    return total if reduction == "sum" else P.div(total, rows)


def _class_reduce(loss: Tensor, kept: int, reduction: str, total: Tensor | None = None) -> Tensor:
    """The reduction of a class-index loss: its mean is over the targets kept (nan if none,
    as PyTorch's 0/0, with a gradient of 0 as PyTorch's), or with class weights, divided by
    ``total``, the sum of the kept targets' weights."""
    if reduction == "mean":
        if kept == 0:  # PyTorch: a nan mean, and a gradient of 0 (not nan)
            return P.add(P.mul(RD.sum(loss), 0.0), math.nan)
        return P.div(RD.sum(loss), float(kept) if total is None else total)
    return _reduce(loss, reduction)


def _class_weight(name: str, weight: Operand, input: Tensor) -> Tensor:
    """The class weights, shape (C,), without a gradient, as a tensor along the class dim."""
    dim = 1 if input.ndim > 1 else 0
    w = weight if isinstance(weight, Tensor) else Tensor(np.asarray(weight, dtype=np.float64))
    if w.shape != (input.shape[dim],):
        raise ShapeError(
            f"{name}: weight must hold one weight per class, shape ({input.shape[dim]},), got "
            f"{w.shape}"
        )
    w = constant_weight(name, "weight", w, w.shape, input.dtype)
    return RA.reshape(w, (-1,) + (1,) * (input.ndim - dim - 1))


def _picked_weight(w: Tensor, indices: np.ndarray, ignore_index: int) -> Tensor:
    """w[target] for each target (0 where ignored): each term's weight."""
    kept = indices != ignore_index
    picked = RA.getitem(RA.reshape(w, -1), (np.where(kept, indices, 0),))
    return P.where(Tensor(kept), picked, 0.0) if not np.all(kept) else picked


_CLASSES = "class indices pick elements by value, which sympy does not write"
_loss(
    "nll_loss",
    "negative log-likelihood: -input[n, target[n]]; input holds log-probabilities",
    (*_INPUTS, _REDUCED, Param("ignore_index", INT, -100), Param("weight", OPT_TENSOR, None)),
    backward_name="NllLossBackward0",  # torch's one node, whatever the reduction and weights
    symbolic=_CLASSES,
    explain=_per_element(
        lambda s, e: (
            f"-1 where c is the class {s.names[1]} gives (unless ignore_index), else 0"
            if s.position == 0
            else "0 (class indices are not differentiable)"
        ),
        _targets,
    ),
    nonfinite="a mean over no target, when every target is ignore_index (0/0)",
    kink="targets equal to ignore_index add 0 and are not counted by the mean; if all are, "
    "the mean is nan and its gradient 0; with class weights each term is scaled by its "
    "target's weight and the mean divides by the sum of those weights (weight gets no "
    "gradient: PyTorch refuses to differentiate it)",
    extra=WEIGHT_THIRD,
)


@public("nll_loss")
def nll_loss(
    input: Operand,
    target: Operand,
    reduction: str = "mean",
    ignore_index: int = -100,
    weight: Operand | None = None,
) -> Tensor:
    """-input[n, target[n], d...] of log-probabilities (C), (N, C) or (N, C, d...), with class
    indices of shape (), (N) or (N, d...); targets equal to ignore_index add 0, and the mean
    is over the others (weighted by the class weights ``weight`` when given)."""
    x, t = as_tensor_pair(input, target)
    if x.ndim == 0:
        raise ShapeError("nll_loss: input must be (C), (N, C) or (N, C, d1, ...), got ()")
    indices = _class_indices("nll_loss", x, t, ignore_index)
    fused = None if weight is not None else _class_nll(x, indices, ignore_index, reduction)
    if fused is not None:
        return fused
    loss, kept = _picked_nll(x, indices, ignore_index)
    if weight is None:
        return _class_reduce(loss, kept, reduction)
    picked = _picked_weight(_class_weight("nll_loss", weight, x), indices, ignore_index)
    return _class_reduce(P.mul(loss, picked), kept, reduction, RD.sum(picked))


_smoothed_explain = _per_element(
    lambda s, e: (
        f"softmax({s.names[0]})[i]*sum(u) - u[i] (u = (1 - ls)*{s.names[1]} + ls/C: the target, "
        "a class index as its one-hot vector, mixed with the uniform distribution; "
        "ls = label_smoothing, C classes)"
        if s.position == 0
        else f"-(1 - ls)*log_softmax({s.names[0]})[i] (ls = label_smoothing)"
    ),
    lambda arrays: arrays[0].size // arrays[0].shape[1 if arrays[0].ndim > 1 else 0],
)


def _cross_entropy_name(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
    weight: Tensor | None = None,
) -> str:
    """The last node torch makes for cross_entropy: nll_loss of class indices (an addition of
    the smoothing term with label_smoothing), a division of the sum of probabilities' terms."""
    if target.shape == input.shape:
        empty = not np.size(input.data)  # torch fills the sum with nan, then negates it
        return "DivBackward1" if reduction == "mean" and not empty else "NegBackward0"
    return "AddBackward0" if label_smoothing else "NllLossBackward0"


_loss(
    "cross_entropy",
    "softmax cross-entropy; target: class indices or probabilities",
    (
        *_INPUTS,
        _REDUCED,
        Param("ignore_index", INT, -100),
        Param("label_smoothing", NUMBER, 0.0),
        Param("weight", OPT_TENSOR, None),
    ),
    symbolic="its class-index targets pick elements by value, which sympy does not write",
    backward_name=lambda args: _cross_entropy_name(*args),
    explain=lambda slot, vary: (
        _smoothed_explain(slot, vary)
        if slot.params.get("label_smoothing")
        else X.cross_entropy(slot, vary)
    ),
    nonfinite="a mean over no target, when every class index is ignore_index (0/0)",
    kink="class indices equal to ignore_index add 0 and are not counted by the mean; if all "
    "are, the mean is nan and its gradient 0; class weights scale each class's term, and "
    "with class indices the mean divides by the sum of the targets' weights (with "
    "probabilities by the number of terms), as PyTorch; weight gets no gradient",
    extra=WEIGHT_THIRD,
)


@public("cross_entropy")
def cross_entropy(
    input: Operand,
    target: Operand,
    reduction: str = "mean",
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
    weight: Operand | None = None,
) -> Tensor:
    """Softmax cross-entropy of logits (C), (N, C) or (N, C, d...) along the class dim.

    ``target`` holds class indices, shape (), (N) or (N, d...), or class probabilities shaped
    like ``input``. ``label_smoothing`` mixes the target with the uniform distribution.
    """
    x, t = as_tensor_pair(input, target)
    if x.ndim == 0:
        raise ShapeError("cross_entropy: input must be (C), (N, C) or (N, C, d1, ...), got ()")
    if not 0.0 <= label_smoothing <= 1.0:
        raise DomainError(
            f"cross_entropy: label_smoothing must be between 0 and 1, got {label_smoothing!r}"
        )
    dim = 1 if x.ndim > 1 else 0
    n_classes = x.shape[dim]
    log_probs = RD.log_softmax(x, dim)
    w = None if weight is None else _class_weight("cross_entropy", weight, x)
    weighted = log_probs if w is None else P.mul(log_probs, w)
    if t.shape == x.shape:
        return _probability_loss(log_probs, t, w, reduction, label_smoothing)
    indices = _class_indices("cross_entropy", x, t, ignore_index)
    if w is None and not label_smoothing:
        fused = _class_nll(log_probs, indices, ignore_index, reduction)
        if fused is not None:
            return fused
    loss, kept = _picked_nll(log_probs, indices, ignore_index)
    picked = None if w is None else _picked_weight(w, indices, ignore_index)
    if picked is not None:
        loss = P.mul(loss, picked)
    if label_smoothing:
        uniform = P.neg(RD.sum(weighted, dim))
        keep = indices != ignore_index
        if not np.all(keep):
            uniform = P.where(Tensor(keep), uniform, 0.0)
        loss = P.add(
            P.mul(loss, 1.0 - label_smoothing), P.mul(uniform, label_smoothing / n_classes)
        )
    return _class_reduce(loss, kept, reduction, None if picked is None else RD.sum(picked))
