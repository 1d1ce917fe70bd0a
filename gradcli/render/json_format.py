"""One JSON object per result: valid JSON always, NaN and infinities as null (or, with
``--nonfinite string``, as the strings "nan", "inf", "-inf": see ``nonfinite_as``).

The keys are the same for every kind of result where they mean the same: ``command``,
``output``, then the kind's own (``values``, ``grads``, ``jacobian``, ...), then
``warnings``; a section with nothing in it is left out. ``--batch`` chunks are JSON lines,
one object per point.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from ..results import (
    HVP,
    JVP,
    VJP,
    Check,
    Derivatives,
    Explanation,
    Grads,
    Graph,
    Hessian,
    Jacobian,
    Plot,
    Points,
    Several,
    Values,
)
from . import Options, difference_text, renderer, renders

#: How JSON writes a NaN or an infinity, which it has no number for: ``null`` (the default:
#: arithmetic on the numbers, ``jq add``, reads it; the warnings say which were not finite)
#: or ``string``, "nan", "inf" and "-inf" (which tell the three apart).
NONFINITE = ("null", "string")
_nonfinite: ContextVar[str] = ContextVar("nonfinite", default="null")


@contextmanager
def nonfinite_as(choice: str) -> Iterator[None]:
    """Write NaN and infinities as ``choice`` (one of ``NONFINITE``) in this context."""
    token = _nonfinite.set(choice)
    try:
        yield
    finally:
        _nonfinite.reset(token)


def plain(value):
    """An array or number as nested lists of floats, with NaN and infinities as null or as
    "nan", "inf", "-inf" (see ``NONFINITE``; booleans as true and false, integers as whole
    numbers, a complex number as the pair [real, imag]: a complex array of shape (n,) is a
    list of n pairs)."""
    if value is None:
        return None
    if np.asarray(value).dtype.kind in "biu":  # booleans as true and false; integers whole
        return np.asarray(value).tolist()
    if np.asarray(value).dtype.kind == "c":  # each complex number as [real, imag]
        value = np.stack([np.real(value), np.imag(value)], axis=-1)
    array = np.asarray(value, dtype=float)
    if np.all(np.isfinite(array)):
        return array.tolist()
    return _spelled(array.tolist(), _nonfinite.get() == "string")


def _spelled(value, as_string: bool):
    if isinstance(value, list):
        return [_spelled(v, as_string) for v in value]
    if math.isfinite(value):
        return value
    if not as_string:
        return None
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _numbers(tree):
    """A nested structure of records, dicts and lists as JSON values: a record (a named tuple
    or a dataclass) as an object of its fields in order, every array made ``plain``."""
    if hasattr(tree, "_asdict"):
        tree = tree._asdict()
    elif dataclasses.is_dataclass(tree):
        tree = {f.name: getattr(tree, f.name) for f in dataclasses.fields(tree)}
    if isinstance(tree, dict):
        return {k: _numbers(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_numbers(v) for v in tree]
    if isinstance(tree, (np.ndarray, np.generic)):
        return plain(tree)
    return tree


def _arrays(arrays: dict) -> dict:
    return {name: plain(value) for name, value in arrays.items()}


def _value(result: Derivatives) -> dict:
    return _arrays(result.output_values)


def _formulas(formulas: dict) -> dict:
    return {name: np.asarray(f).tolist() for name, f in formulas.items()}


def _write(file, result: Any, **sections) -> None:
    """One object: the command and the output, ``sections`` in order (those that are empty
    left out), the warnings."""
    outputs = getattr(result, "outputs", None)  # several (grad, vjp): their names
    output = list(outputs) if outputs else result.output
    document: dict[str, Any] = {"command": result.command, "output": output}
    document.update((key, value) for key, value in sections.items() if value != {})
    document["warnings"] = list(result.warnings)
    file.write(json.dumps(document, allow_nan=False) + "\n")


@renders("json", Values)
def _(result: Values, file, options: Options) -> None:
    _write(file, result, values=_arrays(result.values))


@renders("json", Grads)
def _(result: Grads, file, options: Options) -> None:
    grads = _arrays({**result.grads, **result.shown})
    _write(file, result, values=_value(result), grads=grads, symbolic=_formulas(result.formulas))


@renders("json", VJP)
def _(result: VJP, file, options: Options) -> None:
    grads = _arrays(result.grads)
    _write(file, result, values=_value(result), grads=grads, symbolic=_formulas(result.formulas))


@renders("json", Jacobian)
def _(result: Jacobian, file, options: Options) -> None:
    _write(
        file,
        result,
        values=_value(result),
        jacobian=_arrays(result.jacobians) or _coordinates(result),
        layout=_layout(result),
        mode=result.method,
        mode_reason=result.reason,
        symbolic=_formulas(result.formulas),
    )


def _layout(result: Jacobian) -> str:
    if result.sparse:
        elements = "input, output" if result.transposed else "output, input"
        return f"COO: rows, cols of the ({elements}) elements, flat in C order"
    return "input.shape + output.shape" if result.transposed else "output.shape + input.shape"


def _coordinates(result: Jacobian) -> dict:
    """A sparse Jacobian's blocks: ``rows``, ``cols``, ``values``, ``shape`` each."""
    return {
        name: {
            "rows": plain(coo.rows),
            "cols": plain(coo.cols),
            "values": plain(coo.values),
            "shape": list(coo.shape),
        }
        for name, coo in result.sparse.items()
    }


@renders("json", JVP)
def _(result: JVP, file, options: Options) -> None:
    _write(file, result, values=_value(result), jvp={result.output: plain(result.tangent)})


@renders("json", Hessian)
def _(result: Hessian, file, options: Options) -> None:
    hessian = {f"{a},{b}": plain(v) for (a, b), v in result.blocks.items()}
    _write(file, result, values=_value(result), hessian=hessian)


@renders("json", HVP)
def _(result: HVP, file, options: Options) -> None:
    _write(file, result, values=_value(result), hvp=_arrays(result.products))


@renders("json", Check)
def _(result: Check, file, options: Options) -> None:
    """The Jacobians by method, the verdict, and each difference as a line of text whose two
    numbers read back exactly (Python's ``repr``)."""
    worst = [
        difference_text(result.output, d, (repr(d.value), repr(d.reference))) for d in result.worst
    ]
    check = {method: _arrays(jacobians) for method, jacobians in result.jacobians.items()}
    _write(file, result, values=_value(result), check=check, agree=result.agree, worst=worst)


# the sections of several outputs' answers that are keyed by the output already (merged),
# and check's verdict and differences (all outputs agree; every output's differences)
_BY_OUTPUT = ("values", "jvp")


@renders("json", Several)
def _(result: Several, file, options: Options) -> None:
    """The parts' objects as one: ``output`` lists the outputs; ``values`` and ``jvp`` hold
    each output's array by its name; ``agree`` is whether all agree, ``worst`` every part's
    differences (each names its output); every other section holds each part's by output:
    ``"jacobian": {"y": {"x": ...}, "z": {"x": ...}}``."""
    parts = []
    for part in result.parts:
        text = io.StringIO()
        renderer(type(part), "json")(part, text, options)
        parts.append((part.output, json.loads(text.getvalue())))
    sections: dict[str, Any] = {}
    for output, document in parts:
        for key, value in document.items():
            if key in ("command", "output", "warnings"):
                continue
            if key in _BY_OUTPUT:
                sections.setdefault(key, {}).update(value)
            elif key == "agree":
                sections[key] = sections.get(key, True) and value
            elif key == "worst":
                sections.setdefault(key, []).extend(value)
            else:
                sections.setdefault(key, {})[output] = value
    document = {"command": result.command, "output": [output for output, _ in parts]}
    document.update(sections)
    document["warnings"] = list(result.warnings)
    file.write(json.dumps(document, allow_nan=False) + "\n")


@renders("json", Explanation)
def _(result: Explanation, file, options: Options) -> None:
    explain = _numbers(
        {"forward": result.forward, "backward": result.backward, "notes": result.notes}
    )
    if result.symbolic is not None:
        explain.update(_numbers(result.symbolic))
    _write(file, result, values=_value(result), grads=_arrays(result.grads), explain=explain)


@renders("json", Plot)
def _(result: Plot, file, options: Options) -> None:
    _write(file, result, plot=_arrays(result.series))


@renders("json", Graph)
def _(result: Graph, file, options: Options) -> None:
    _write(file, result, graph=_numbers(result.nodes))


@renders("json", Points)
def json_lines(result: Points, file, options: Options) -> None:
    """One JSON object per point, numbered from the chunk's first.

    Finite numbers go through orjson, a block of points at a time, in the text ``json.dumps``
    would write, assembled into lines by ``json_lines.Layout`` or, in a batch of
    ``COMPILED_FROM`` points or more with the ``fast`` extra, by the compiled kernel of
    ``compiled_lines``; as bytes to the file's binary stream where it has one. NaN and
    infinities (and the rare arrays that neither can write) take the slow, exact path.
    """
    from .json_lines import Layout, Line

    arrays = [
        (section, k, np.asarray(v))
        for section, named in result.sections.items()
        for k, v in named.items()
    ]
    count = len(arrays[0][2])
    finite = all(np.all(np.isfinite(a)) for _, _, a in arrays)
    line = Line.of(arrays) if finite else None
    write = _compiled(line) if line is not None else None
    at_once = COMPILED_AT_ONCE
    if write is None:
        layout = Layout.of(line) if line is not None else None
        write, at_once = (layout.lines if layout is not None else None), LINES_AT_ONCE
    if write is None:
        lines = []
        for i in range(count):
            document: dict[str, Any] = {"point": result.first + i}
            for section, name, array in arrays:
                document.setdefault(section, {})[name] = plain(array[i])
            lines.append(json.dumps(document, allow_nan=False))
        file.write("\n".join(lines) + "\n")
        return
    binary = getattr(file, "buffer", None)
    if binary is not None:
        file.flush()  # what the text stream holds goes first
    for start in range(0, count, at_once):
        text = write(result.first + start, [a[start : start + at_once] for _, _, a in arrays])
        if binary is not None:
            binary.write(text)
        else:
            file.write(str(text, "ascii"))


#: The points a batch needs for its JSON lines to be assembled by ``compiled_lines``'s kernel
#: where numba is installed: importing numba and loading the kernel cost about 0.9 s of CPU
#: time (and 130 MB more memory), which the kernel saves back (about 330 ns a point of the
#: README's vjp) over about 2.7 million points; at 10^6 it was 1.4x slower, at 10^7 1.3x faster.
#: Since the kernel's machine code is kept in gradcli's cache and loaded without numba (about
#: 0.1 s and 55 MB) it wins from fewer points (jsonl7: 0.62x the layout's time at 10^6, 0.9x at
#: 3x10^5), but for the first process, or where no cache directory is usable (numba's 0.9 s).
COMPILED_FROM = 3_000_000
#: The points the kernel writes at once (a part of a chunk of the batch's): their text (640 kB
#: of the README's vjp) stays in a core's cache (512 kB of L2 here) while it is written to the
#: file, a copy the system's time pays: 8,192 at once cost 0.1 to 0.2 s more of it at 10^7.
COMPILED_AT_ONCE = 4096
#: The points of a chunk of a batch whose JSON lines the kernel writes (``batch.plan``'s
#: ``CHUNK`` otherwise, 8,192): the replay of the passes, and the writer, cost that much
#: less a point (at 10^7 points of the README's vjp, 0.3 to 0.5 s less of user time); the
#: plan bounds the chunk by the memory budget as ever.
COMPILED_CHUNK = 32768


class _Batch:
    """The batch whose JSON lines are written: its points, and the compiled writer of its
    lines (its output buffer reused from one chunk to the next)."""

    def __init__(self, points: int):
        self.points = points
        self.writers: dict[tuple[tuple[str, ...], str], Any] = {}


_batch: ContextVar[_Batch | None] = ContextVar("batch", default=None)


@contextmanager
def batch_of(points: int) -> Iterator[None]:
    """The JSON lines written in this context are those of a batch of ``points`` points."""
    token = _batch.set(_Batch(points))
    try:
        yield
    finally:
        _batch.reset(token)


def _compiled(line) -> Any:
    """The compiled writer of ``line``'s lines (``compiled_lines.Lines``) in a batch of
    ``COMPILED_FROM`` points or more where numba is installed, else None."""
    batch = _batch.get()
    if batch is None or batch.points < COMPILED_FROM:
        return None
    key = (tuple(line.pieces), line.kinds)
    if key not in batch.writers:
        from . import compiled_lines

        kernel = compiled_lines.kernel()
        batch.writers[key] = None if kernel is None else compiled_lines.Lines(kernel, line)
    return batch.writers[key]


#: The points whose JSON lines are made at once: the texts of more take more time a point
#: (each pass makes a new buffer; past about 1,024 points of the README's vjp they outgrow
#: what malloc keeps, and their pages are faulted in anew: with glibc's thresholds raised
#: by MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_, 4,096 points cost no more a point).
LINES_AT_ONCE = 1024
