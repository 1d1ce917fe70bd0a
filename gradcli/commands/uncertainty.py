"""Uncertainty propagation: inputs known as ``1.0±0.1`` (or a covariance matrix), outputs with
their standard deviations and correlations.

First order, the outputs' covariance is ``J Σ Jᵀ``, with J the Jacobian of every output
element with respect to every uncertain input element (the engine's own, vectorized) and Σ
the inputs' covariance. On request the mean gains the second-order correction
``½ tr(H_i Σ)`` of each output element ``i``, from its Hessian: exact for quadratic programs,
and the first term of the bias that a curved function gives a symmetric spread.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..base import bounds
from ..base.errors import GradcliError, listing
from ..lang.ir import unseen
from ..lang.validate import element_of
from ..lang.values import parse_value
from ..ops import library as gc
from ..render import Options, element_label, format_number, renders
from ..results import Result
from .compute import Bound, output_of, real_numbers
from .outputs import outputs_asked

# what separates a value from its standard deviation: 1.0±0.1, or 1.0+-0.1 in plain ASCII
SIGNS = ("±", "+-")
SYNTAX = (
    "write VALUE±SD (or VALUE+-SD), e.g. --x 1.0±0.1, --x 1,2±0.1,0.2 or -i w=2+-0.5; "
    "the SD is one number or one per element"
)
# the most output elements whose correlations a table shows (JSON and CSV: all of them)
SHOWN_CORRELATIONS = 12


def split(text: str) -> tuple[str, str | None]:
    """``1.0±0.1`` as ("1.0", "0.1"); a value without a sign as (value, None)."""
    for sign in SIGNS:
        value, found, spread = text.partition(sign)
        if found:
            if any(s in spread for s in SIGNS):
                raise GradcliError(f"{text!r} has more than one ± (or +-)", hint=SYNTAX)
            return value, spread
    return text, None


@dataclass(frozen=True)
class Spreads:
    """--x and -i with the standard deviations taken out: the values as the other commands
    read them, and the text of each standard deviation, by input name."""

    x: str | None
    inputs: list[str] | None
    texts: dict[str, str]

    def deviations(self, arrays: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
        """Each standard deviation as an array shaped like its input's value."""
        return {
            name: deviation(text, name, arrays[name], seed)
            for name, text in self.texts.items()
            if name in arrays
        }


def spreads(x: str | None, items: list[str] | None) -> Spreads:
    """--x and -i items, each ``VALUE`` or ``VALUE±SD``, taken apart."""
    texts: dict[str, str] = {}
    plain_items = []
    for item in items or []:
        name, sep, text = item.partition("=")
        value, spread = split(text)
        if sep and spread is not None:
            texts[unicodedata.normalize("NFKC", name.strip())] = spread
        plain_items.append(f"{name}{sep}{value}")
    plain_x = x
    if x is not None:
        plain_x, spread = split(x)
        if spread is not None:
            texts["x"] = spread
    return Spreads(plain_x, None if items is None else plain_items, texts)


def deviation(given: str | np.ndarray, name: str, value: np.ndarray, seed: int) -> np.ndarray:
    """The standard deviation of input ``name`` (its text, or an array), one number or one
    per element."""
    if isinstance(given, str) and not given.strip():
        raise GradcliError(f"the standard deviation of {name} is empty", hint=SYNTAX)
    if isinstance(given, str):
        sd = parse_value(given, f"the standard deviation of {name}", seed)
    else:
        sd = np.asarray(given)
    try:
        sd = np.broadcast_to(sd, np.shape(value)).astype(np.float64)
    except ValueError:
        raise GradcliError(
            f"the standard deviation of {name} has shape {sd.shape}, but {name} has shape "
            f"{np.shape(value)}",
            hint=SYNTAX,
        ) from None
    if not np.all(np.isfinite(sd)) or np.any(sd < 0):
        raise GradcliError(f"the standard deviation of {name} must be finite and >= 0", hint=SYNTAX)
    return sd


def covariance(
    bound: Bound, deviations: dict[str, np.ndarray], given: np.ndarray | None, wrt: list[str] | None
) -> tuple[list[str], np.ndarray]:
    """The uncertain inputs in order, and the covariance of their elements flattened and
    concatenated in that order: from ``--cov`` (of the --wrt inputs, or of every input), or
    diagonal from the standard deviations given beside the values."""
    if given is not None:
        if deviations:
            raise GradcliError(
                f"--cov and VALUE±SD both give uncertainties (of {listing(list(deviations))})",
                hint="give the standard deviations on the diagonal of --cov, or leave out --cov",
            )
        names = wrt or [n for n in bound.arrays if not unseen(n)]
        _known(names, bound)
        size = sum(bound.arrays[n].size for n in names)
        matrix = np.asarray(given, dtype=np.float64)
        if matrix.shape != (size, size):
            raise GradcliError(
                f"--cov has shape {matrix.shape}, but the inputs {listing(names)} have {size} "
                f"elements",
                hint=f"give a {size}x{size} covariance of {', '.join(names)}, flattened and "
                "concatenated in that order (choose the inputs with --wrt)",
            )
        _check_covariance(matrix)
        return names, matrix
    if not deviations:
        raise GradcliError("no input has an uncertainty", hint=f"{SYNTAX}; or give --cov @S.npy")
    names = [n for n in bound.arrays if n in deviations]
    _known(list(deviations), bound)
    spread = np.concatenate([deviations[n].reshape(-1) for n in names])
    return names, np.diag(spread**2)


def _known(names: list[str], bound: Bound) -> None:
    for name in names:
        if name not in bound.arrays:
            raise GradcliError(
                f"{name!r} is not an input of the program",
                hint=f"its inputs are: {listing([n for n in bound.arrays if not unseen(n)])}",
            )


def _check_covariance(matrix: np.ndarray) -> None:
    if not np.all(np.isfinite(matrix)):
        raise GradcliError("--cov holds a NaN or an infinity", hint="give a finite covariance")
    scale = float(np.max(np.abs(matrix), initial=0.0))
    if not np.allclose(matrix, matrix.T, rtol=1e-9, atol=1e-12 * scale):
        raise GradcliError("--cov is not symmetric", hint="a covariance equals its transpose")
    lowest = float(np.min(np.linalg.eigvalsh(matrix), initial=0.0))
    if lowest < -1e-9 * max(scale, 1e-300):
        raise GradcliError(
            f"--cov is not positive semi-definite (an eigenvalue is {lowest:.3g})",
            hint="a covariance has no negative eigenvalue",
        )


@dataclass(frozen=True, kw_only=True, eq=False)
class Uncertainty(Result):
    """``uncertainty``: each output's value and standard deviation (first order), the
    correlations of all output elements, and with ``--second-order`` the corrected mean.
    ``labels`` name the output elements (``y[0]``) in the order of ``covariance``."""

    command: ClassVar[str] = "uncertainty"

    inputs: tuple[str, ...]
    input_covariance: np.ndarray
    values: dict[str, np.ndarray]
    deviations: dict[str, np.ndarray]
    labels: tuple[str, ...]
    covariance: np.ndarray
    means: dict[str, np.ndarray] | None = None

    @property
    def correlation(self) -> np.ndarray:
        """The correlations of the output elements; NaN beside an element that does not vary."""
        sd = np.sqrt(np.diag(self.covariance))
        with np.errstate(divide="ignore", invalid="ignore"):
            matrix = self.covariance / np.outer(sd, sd)
        matrix[np.outer(sd, sd) == 0] = np.nan
        return np.clip(matrix, -1.0, 1.0)


def output_names(bound: Bound, env: dict, of: list[str] | None) -> list[str]:
    """The outputs asked for (--of), or every name the program assigns (a vector of element
    assignments as the vector)."""
    if of:
        return [output_of(bound, env, name)[0] for name in outputs_asked(of) or ()]
    groups = bound.program.groups()
    elements = {e for members in groups.values() for e in members if e is not None}
    names = []
    for target in bound.program.targets:
        if unseen(target) or target in bound.arrays:
            continue
        parts = element_of(target)
        if target in elements and parts is not None and parts[0] in env:
            if parts[0] not in names:  # elements of one shape make a vector
                names.append(parts[0])
            continue
        if target.split("#")[0] == target and target not in names:
            names.append(target)
    return names


def propagate(
    bound: Bound,
    of: list[str] | None,
    deviations: dict[str, np.ndarray],
    cov: np.ndarray | None = None,
    wrt: list[str] | None = None,
    second_order: bool = False,
) -> Uncertainty:
    """First-order propagation J Σ Jᵀ of the inputs' uncertainty into every output; with
    ``second_order``, each output element's mean corrected by ½ tr(H Σ)."""
    for name, array in bound.arrays.items():
        real_numbers(name, array)
    targets, sigma = covariance(bound, deviations, cov, wrt)
    env = bound.run(bound.leaves())
    names = output_names(bound, env, of)
    n_in = sigma.shape[0]
    start = tuple(gc.Tensor(bound.arrays[t]) for t in targets)
    most = bounds.limits().max_elements
    rows, labels, values = [], [], {}
    for name in names:
        out = env[name]
        bounds.check_elements(out.numel() * n_in, f"the Jacobian of {name}")
        function = _function_of(bound, name, targets)
        blocks = bound.engine(
            lambda f=function: gc.jacobian(
                f, start, strategy="reverse-mode", vectorize=True, max_batch_elements=most
            )
        )
        rows.append(np.concatenate([b.data.reshape(out.numel(), -1) for b in blocks], axis=1))
        labels += [element_label(name, i) for i in np.ndindex(*out.shape)]
        values[name] = out.data
    jacobian = np.concatenate(rows, axis=0) if rows else np.zeros((0, n_in))
    cov_out = jacobian @ sigma @ jacobian.T
    sd = np.sqrt(np.clip(np.diag(cov_out), 0.0, None))
    deviations_out, at = {}, 0
    for name in names:
        size = values[name].size
        deviations_out[name] = sd[at : at + size].reshape(values[name].shape)
        at += size
    means = _second_order(bound, names, values, targets, start, sigma) if second_order else None
    return Uncertainty(
        output=names[-1] if names else "",
        inputs=tuple(targets),
        input_covariance=sigma,
        values=values,
        deviations=deviations_out,
        labels=tuple(labels),
        covariance=cov_out,
        means=means,
        warnings=bound.messages(),
    )


def _function_of(bound: Bound, name: str, targets: list[str]):
    """The output ``name`` as a function of the ``targets`` inputs, the others held."""

    def function(*values: gc.Tensor) -> gc.Tensor:
        leaves = {n: gc.Tensor(array) for n, array in bound.arrays.items()}
        leaves.update(zip(targets, values))
        return bound.run(leaves)[name]

    return function


def _second_order(
    bound: Bound,
    names: list[str],
    values: dict[str, np.ndarray],
    targets: list[str],
    start: tuple[gc.Tensor, ...],
    sigma: np.ndarray,
) -> dict[str, np.ndarray]:
    """value + ½ tr(H Σ) for every element of every output, H its Hessian in the inputs."""
    n_in = sigma.shape[0]
    total = sum(values[name].size for name in names)
    bounds.check_elements(total * n_in * n_in, "the Hessians of the outputs")
    means = {}
    for name in names:
        function = _function_of(bound, name, targets)
        corrected = values[name].astype(np.float64).reshape(-1).copy()
        for k in range(corrected.size):
            blocks = bound.engine(
                lambda f=function, k=k: gc.hessian(lambda *xs: f(*xs).reshape(-1)[k], start)
            )
            hessian = np.block(
                [
                    [np.reshape(b.data, (a.numel(), -1)) for b in row]
                    for row, a in zip(blocks, start)
                ]
            )
            corrected[k] += 0.5 * float(np.sum(hessian * sigma))
        means[name] = corrected.reshape(values[name].shape)
    return means


# -- rendering -----------------------------------------------------------------------------------


def _rows(result: Uncertainty) -> list[tuple[str, float, float, float | None]]:
    """(label, value, standard deviation, corrected mean or None) per output element."""
    rows = []
    for name, value in result.values.items():
        sd = result.deviations[name]
        mean = None if result.means is None else result.means[name]
        for index in np.ndindex(*value.shape):
            rows.append(
                (
                    element_label(name, index),
                    float(value[index]),
                    float(sd[index]),
                    None if mean is None else float(mean[index]),
                )
            )
    return rows


@renders("table", Uncertainty)
def _table(result: Uncertainty, file, options: Options) -> None:
    from rich.table import Table

    from ..render.table import console, show

    out = console(file)
    second = result.means is not None
    out.print(f"first-order uncertainty of {', '.join(result.values)}")
    table = Table()
    for header in ["", "value", "sd", *(["mean (2nd order)"] if second else [])]:
        table.add_column(header, justify="left" if not header else "right")
    p = options.precision
    for label, value, sd, mean in _rows(result):
        cells = [label, format_number(value, p), format_number(sd, p)]
        if mean is not None:
            cells.append(format_number(mean, p))
        table.add_row(*cells)
    show(out, table)
    n = len(result.labels)
    if 1 < n <= SHOWN_CORRELATIONS:
        matrix = result.correlation
        out.print("correlations")
        correlations = Table()
        correlations.add_column("")
        for label in result.labels:
            correlations.add_column(label, justify="right")
        for i, label in enumerate(result.labels):
            cells = ["" if np.isnan(c) else format_number(float(c), p) for c in matrix[i]]
            correlations.add_row(label, *cells)
        show(out, correlations)
    elif n > SHOWN_CORRELATIONS:
        out.print(f"correlations of {n} output elements: see --format json or csv")
    out.print(f"inputs with uncertainty: {', '.join(result.inputs)}")


@renders("json", Uncertainty)
def _json(result: Uncertainty, file, options: Options) -> None:
    from ..render.json_format import _arrays, _write, plain

    sections = {
        "inputs": list(result.inputs),
        "input_covariance": plain(result.input_covariance),
        "values": _arrays(result.values),
        "sd": _arrays(result.deviations),
        "labels": list(result.labels),
        "covariance": plain(result.covariance),
        "correlation": plain(result.correlation),
    }
    if result.means is not None:
        sections["second_order_mean"] = _arrays(result.means)
    _write(file, result, **sections)


@renders("csv", Uncertainty)
def _csv(result: Uncertainty, file, options: Options) -> None:
    from ..render.csv_format import _write, full_precision

    second = result.means is not None
    rows: list[list[str]] = [
        ["element", "value", "sd", *(["second_order_mean"] if second else []), *result.labels]
    ]
    matrix = result.correlation
    for i, (label, value, sd, mean) in enumerate(_rows(result)):
        rest = [] if mean is None else [full_precision(mean)]
        correlations = ["" if np.isnan(c) else full_precision(c) for c in matrix[i]]
        rows.append([label, full_precision(value), full_precision(sd), *rest, *correlations])
    _write(file, rows)
