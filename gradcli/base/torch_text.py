"""PyTorch 2.13's printed text for tensors and the values around them, from numpy arrays.

``gradcli run`` must print exactly what a script prints under torch: ``repr(tensor)`` (also
``print(tensor)``: the two are the same text), ``torch.Size([2, 3])``, ``torch.float32``,
and the Python values of ``.item()`` and ``.tolist()``. This module computes that text from a
numpy array, whose dtype is the tensor's dtype (``float32`` for torch's default), and the
tensor's autograd facts (``requires_grad``, the name of its ``grad_fn``) as the caller knows
them. It never imports torch.

The print options of ``torch.set_printoptions`` are a value here (``PrintOptions``), passed to
each function, not global state: ``set_printoptions(options, precision=2)`` gives the options
torch would have after that call.

The layout rules, as torch 2.13 applies them:

- A floating tensor's numbers are chosen from its nonzero finite values (of the summarized
  part only, when the tensor is summarized): all whole gives integer mode (``1.``, ``-0.``);
  the largest magnitude over the smallest above 1000, the largest above 1e8 or the smallest
  below 1e-4 gives scientific mode (``1.0000e-05``), unless ``sci_mode`` forces it on or off;
  otherwise fixed, ``precision`` digits. nan and inf are printed as ``nan``, ``inf``, ``-inf``.
- Every element is right-aligned to the widest of those values (nan, inf and zeros are not
  measured, so they may stick out).
- A row holds as many elements as fit in ``linewidth`` after the indentation (each element
  counted with its ", "); continuation lines are indented under the first element.
- Beyond ``threshold`` elements, every axis longer than ``2 * edgeitems`` keeps its first and
  last ``edgeitems`` entries around ``...``.
- Slices of a 3-d or larger tensor are separated by blank lines, one fewer than the slices'
  own dimensions.
- After the numbers come the suffixes ``size=`` (empty tensors that are not 1-d, and every
  tensor when ``edgeitems`` is 0), ``dtype=``
  (a dtype that is not the default float, int64 or bool; an empty tensor shows any dtype but
  the default float), then ``grad_fn=<Name>`` or else ``requires_grad=True``; each goes on
  the same line after ", " unless the line would get longer than ``linewidth`` (counted as
  torch counts it: see ``_with_suffixes``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from .records import record

PythonScalar: TypeAlias = bool | int | float | complex
"""What ``.item()`` gives: a Python bool, int, float or complex."""

# The torch names of the dtypes this module prints, by numpy dtype.
_TORCH_NAMES: dict[np.dtype[Any], str] = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.uint16): "uint16",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.uint64): "uint64",
    np.dtype(np.int8): "int8",
    np.dtype(np.int16): "int16",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.float16): "float16",
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.complex64): "complex64",
    np.dtype(np.complex128): "complex128",
}
# Dtypes that never show a ``dtype=`` suffix on a tensor with elements, besides the default.
_ALWAYS_IMPLIED = (np.dtype(np.int64), np.dtype(np.bool_))
_TENSOR_PREFIX = "tensor("

_PROFILES: dict[str, tuple[int, float, int, int]] = {
    # profile: precision, threshold, edgeitems, linewidth (torch.set_printoptions' profiles)
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def _check_int(name: str, value: object, *, minimum: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"print option {name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"print option {name} must be at least {minimum}, got {value}")


@record(kw_only=False, eq=True)
class PrintOptions:
    """torch's print options (``torch.set_printoptions``), by default torch's defaults.

    ``sci_mode`` None lets each tensor's values choose scientific notation; True or False
    forces it for floating tensors.
    """

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None

    def __post_init__(self) -> None:
        _check_int("precision", self.precision, minimum=0)
        _check_int("edgeitems", self.edgeitems, minimum=0)
        _check_int("linewidth", self.linewidth, minimum=None)
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, int | float):
            raise TypeError(
                f"print option threshold must be a number (an element count), "
                f"got {self.threshold!r}"
            )
        if math.isnan(self.threshold):
            raise ValueError("print option threshold must be a number, got nan")
        if self.sci_mode is not None and not isinstance(self.sci_mode, bool):
            raise TypeError(
                f"print option sci_mode must be True, False or None, got {self.sci_mode!r}"
            )


DEFAULT_OPTIONS = PrintOptions()


def set_printoptions(
    current: PrintOptions = DEFAULT_OPTIONS,
    *,
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> PrintOptions:
    """The options after ``torch.set_printoptions(...)`` with these arguments on ``current``.

    As in torch: a ``profile`` ("default", "short", "full"; any other name changes nothing)
    sets precision, threshold, edgeitems and linewidth first, the other arguments given then
    override it, and ``sci_mode`` is always set (so a call without it resets it to None).
    """
    options = current
    if profile in _PROFILES:
        p, t, e, w = _PROFILES[profile]
        options = replace(options, precision=p, threshold=t, edgeitems=e, linewidth=w)
    given = {
        "precision": precision,
        "threshold": threshold,
        "edgeitems": edgeitems,
        "linewidth": linewidth,
    }
    changes: dict[str, Any] = {name: value for name, value in given.items() if value is not None}
    return replace(options, **changes, sci_mode=sci_mode)


# ----------------------------------------------------------------------------------------
# Names: dtypes and sizes


def _dtype_of(dtype: npt.DTypeLike) -> np.dtype[Any]:
    resolved = np.dtype(dtype)
    if resolved not in _TORCH_NAMES:
        known = ", ".join(_TORCH_NAMES.values())
        raise TypeError(
            f"no torch dtype for numpy dtype {resolved}: the tensor dtypes printed are {known}"
        )
    return resolved


def dtype_repr(dtype: npt.DTypeLike) -> str:
    """What torch prints for the dtype of a tensor of this numpy dtype: ``torch.float32``."""
    return "torch." + _TORCH_NAMES[_dtype_of(dtype)]


# torch's ScalarType names, which its messages use ("result type Float can't be cast ...")
_SCALAR_TYPES = {
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "int8": "Char",
    "uint8": "Byte",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "bool": "Bool",
}


def scalar_type_name(dtype: npt.DTypeLike) -> str:
    """torch's name of the scalar type of this numpy dtype in its messages: ``Float``."""
    return _SCALAR_TYPES[_dtype_of(dtype).name]


def size_repr(shape: Sequence[int]) -> str:
    """What torch prints for ``x.shape`` or ``x.size()``: ``torch.Size([2, 3])``."""
    return "torch.Size([" + ", ".join(str(int(n)) for n in shape) + "])"


# ----------------------------------------------------------------------------------------
# Python values: .item() and .tolist()


def _array(data: npt.ArrayLike) -> npt.NDArray[Any]:
    array = np.asarray(data)
    _dtype_of(array.dtype)
    return array


def item(data: npt.ArrayLike) -> PythonScalar:
    """``x.item()``: the one element as a Python bool, int or float (a float32 value exactly,
    as a double: 0.1 in float32 is 0.10000000149011612).

    Raises ValueError, with torch's words, when the tensor does not have exactly one element.
    """
    array = _array(data)
    if array.size != 1:
        raise ValueError(f"a Tensor with {array.size} elements cannot be converted to Scalar")
    value: PythonScalar = array.reshape(-1)[0].item()
    return value


def tolist(data: npt.ArrayLike) -> Any:
    """``x.tolist()``: nested Python lists of Python numbers (a Python number for a 0-d
    tensor)."""
    return _array(data).tolist()


def item_text(data: npt.ArrayLike) -> str:
    """What ``print(x.item())`` prints: ``0.30000001192092896`` for float32 0.3."""
    return repr(item(data))


def tolist_text(data: npt.ArrayLike) -> str:
    """What ``print(x.tolist())`` prints: ``[1.0, 2.0]``."""
    return repr(tolist(data))


# ----------------------------------------------------------------------------------------
# The numbers of a tensor


@record(kw_only=False, eq=True)
class _Formatter:
    """How every element of one tensor is written: the mode and the common width."""

    floating: bool
    int_mode: bool
    sci_mode: bool
    width: int
    precision: int

    def format(self, value: Any) -> str:
        """One element (a Python number from ``tolist``), right-aligned to the width."""
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.width}.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{self.precision}f}"
        return text.rjust(self.width)


def _formatter(measured: npt.NDArray[Any], options: PrintOptions) -> _Formatter:
    """The formatter chosen from the values ``measured`` (the summarized part, if any)."""
    p = options.precision
    if measured.dtype.kind != "f":
        width = max([1, *(len(f"{value}") for value in measured.reshape(-1).tolist())])
        return _Formatter(False, True, False, width, p)
    flat = measured.reshape(-1)
    shown = flat[np.isfinite(flat) & (flat != 0)]
    if shown.size == 0:
        return _Formatter(True, True, False, 1, p)
    magnitudes = np.abs(shown.astype(np.float64))
    smallest, largest = magnitudes.min(), magnitudes.max()
    int_mode = bool(np.all(shown == np.ceil(shown)))
    if options.sci_mode is None:
        with np.errstate(over="ignore"):
            ratio = largest / smallest
        sci_mode = bool(ratio > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4)
    else:
        sci_mode = options.sci_mode
    values: list[float] = shown.tolist()
    if sci_mode:
        width = max(len(f"{v:.{p}e}") for v in values)
    elif int_mode:
        width = max(len(f"{v:.0f}") + 1 for v in values)
    else:
        width = max(len(f"{v:.{p}f}") for v in values)
    return _Formatter(True, int_mode, sci_mode, max(1, width), p)


def _complex_text(value: complex, real: _Formatter, imag: _Formatter) -> str:
    """One complex element as torch writes it: the real part at its width, then the
    imaginary part, signed, with its j (``1.+2.j``, ``-0.0000-3.0000e-05j``)."""
    imaginary = (imag.format(value.imag) + "j").lstrip()
    sign = "" if imaginary[0] in "+-" else "+"
    return real.format(value.real) + sign + imaginary


def _edges(length: int, edgeitems: int) -> npt.NDArray[np.intp]:
    """The indices a summarized axis of this length keeps."""
    if length > 2 * edgeitems:
        return np.concatenate([np.arange(edgeitems), np.arange(length - edgeitems, length)])
    return np.arange(length)


def _summarized(array: npt.NDArray[Any], edgeitems: int) -> npt.NDArray[Any]:
    """The elements a summarized print shows, which are the ones the formatter measures.

    With ``edgeitems`` 0, torch measures nothing of a tensor of 2 or more dimensions, and the
    whole of a 1-d one (its last 0 elements, ``x[-0:]``, are all of them).
    """
    if array.ndim == 0:
        return array
    if edgeitems == 0:
        return array if array.ndim == 1 else array[(slice(0, 0),) * array.ndim]
    return array[np.ix_(*(_edges(n, edgeitems) for n in array.shape))]


@record(kw_only=False, eq=True)
class _Layout:
    """The layout of one tensor's numbers: its formatter, the options, whether it is
    summarized."""

    formatter: _Formatter
    options: PrintOptions
    summarize: bool
    # a complex tensor's: the formatter of the imaginary parts (``formatter``: the real parts')
    imag: _Formatter | None = None

    def write(self, value: Any) -> str:
        """One element (a Python number from ``tolist``)."""
        if self.imag is None:
            return self.formatter.format(value)
        return _complex_text(value, self.formatter, self.imag)

    def vector(self, array: npt.NDArray[Any], indent: int) -> str:
        """A 1-d slice, its rows wrapped to the line width."""
        width = self.formatter.width + 2  # with ", "
        if self.imag is not None:
            width += self.imag.width + 1  # and the j
        per_line = max(1, (self.options.linewidth - indent) // width)
        edge = self.options.edgeitems
        values: list[PythonScalar] = array.tolist()
        write = self.write
        if self.summarize and edge == 0:
            data = ["..."]
        elif self.summarize and len(values) > 2 * edge:
            data = [*map(write, values[:edge]), " ...", *map(write, values[-edge:])]
        else:
            data = [write(value) for value in values]
        lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def nested(self, array: npt.NDArray[Any], indent: int) -> str:
        """A slice of any dimension, its first line starting at ``indent``."""
        if array.ndim == 0:
            return self.write(array.item())
        if array.ndim == 1:
            return self.vector(array, indent)
        edge = self.options.edgeitems
        length = array.shape[0]
        if self.summarize and length > 2 * edge:
            rows: list[int | None] = [*range(edge), None, *range(length - edge, length)]
        else:
            rows = list(range(length))
        slices = ["..." if i is None else self.nested(array[i], indent + 1) for i in rows]
        return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _numbers_text(array: npt.NDArray[Any], indent: int, options: PrintOptions) -> str:
    """The bracketed numbers of a tensor with elements, its first line starting at
    ``indent``."""
    summarize = array.size > options.threshold
    measured = _summarized(array, options.edgeitems) if summarize else array
    if array.dtype.kind == "c":  # the real and the imaginary parts each measured alone
        real, imag = _formatter(measured.real, options), _formatter(measured.imag, options)
        return _Layout(real, options, summarize, imag).nested(array, indent)
    return _Layout(_formatter(measured, options), options, summarize).nested(array, indent)


def _with_suffixes(text: str, suffixes: list[str], indent: int, linewidth: int) -> str:
    """``text`` and its suffixes, each after ", " or, when the line would get longer than
    ``linewidth``, on a line of its own at ``indent``; then the closing parenthesis.

    The length of the last line is counted as torch counts it: 2 more than its characters
    (1 more on a line after a line break) before the first suffix is placed.
    """
    parts = [text]
    line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _default_complex(default: np.dtype[Any]) -> np.dtype[Any]:
    """torch's default complex dtype, which follows the default floating one."""
    return np.dtype(np.complex128 if default == np.float64 else np.complex64)


def tensor_repr(
    data: npt.ArrayLike,
    *,
    requires_grad: bool = False,
    grad_fn: str | None = None,
    options: PrintOptions = DEFAULT_OPTIONS,
    default_dtype: npt.DTypeLike = np.float32,
    tangent: str | None = None,
) -> str:
    """What ``repr(x)`` and ``print(x)`` show for the tensor with these values.

    ``data``'s numpy dtype is the tensor's dtype. ``grad_fn`` is the name of the node that
    made the tensor (``"MulBackward0"``), None for a leaf; a leaf with ``requires_grad``
    shows ``requires_grad=True``. ``default_dtype`` is the default floating dtype
    (``torch.set_default_dtype``): tensors of that dtype show no ``dtype=``. ``tangent`` is
    the text of a dual tensor's tangent (forward AD), shown last.
    """
    array = _array(data)
    default = np.dtype(default_dtype)
    if default.kind != "f":
        raise TypeError(f"the default dtype must be a floating dtype, got {default}")
    indent = len(_TENSOR_PREFIX)
    suffixes: list[str] = []
    shape = f"size={tuple(int(n) for n in array.shape)}"
    dtype = f"dtype={dtype_repr(array.dtype)}"
    if array.size == 0:
        if array.ndim != 1:
            suffixes.append(shape)
        if array.dtype != default:
            suffixes.append(dtype)
        numbers = "[]"
    else:
        if options.edgeitems == 0:
            suffixes.append(shape)
        if array.dtype not in (default, _default_complex(default), *_ALWAYS_IMPLIED):
            suffixes.append(dtype)
        numbers = _numbers_text(array, indent, options)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    return _with_suffixes(_TENSOR_PREFIX + numbers, suffixes, indent, options.linewidth)


def tensor_format(
    data: npt.ArrayLike,
    spec: str,
    *,
    requires_grad: bool = False,
    grad_fn: str | None = None,
    options: PrintOptions = DEFAULT_OPTIONS,
    default_dtype: npt.DTypeLike = np.float32,
    tangent: str | None = None,
) -> str:
    """``format(x, spec)``, as in an f-string's ``{x:spec}``: a 0-d tensor formats its Python
    value; any other tensor takes only the empty spec (its repr), and raises TypeError with
    Python's words otherwise."""
    array = _array(data)
    if array.ndim == 0:
        return format(item(array), spec)
    if spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return tensor_repr(
        array,
        requires_grad=requires_grad,
        grad_fn=grad_fn,
        options=options,
        default_dtype=default_dtype,
    )
