"""Turning value text (``1,2``, ``[[1,2],[3,4]]``, ``randn(8,10)``, ``@file.npy``) into arrays.

Value text is parsed with Python's ``ast`` into literals and never evaluated: only numbers,
lists, ``nan``/``inf`` and calls of the constructors below are accepted.
"""

from __future__ import annotations

import ast
import io
import json
import math
import stat
import sys
import unicodedata
import warnings
import zlib
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from ..base import bounds
from ..base.errors import GradcliError, listing, shorten
from ..base.files import note_input

VALUE_SYNTAX = (
    "a value is a number (2.5), a list (1,2 or [[1,2],[3,4]]), a constructor (ones(2,2), "
    "zeros(10), full(2,3, 0.5), eye(3), arange(6), linspace(0,1,5), rand(3), randn(8,10)), "
    "a file (@x.npy, @x.npz:key, @x.csv, @x.json) or - for JSON on stdin"
)


def _sizes(args: list, what: str) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], list):
        args = args[0]
    for n in args:
        whole = isinstance(n, int) or (isinstance(n, float) and math.isfinite(n) and n == int(n))
        if isinstance(n, bool) or not whole or n < 0:
            raise GradcliError(
                f"{what}: sizes must be non-negative whole numbers, got {args}",
                hint=f"e.g. {what}(2, 3)",
            )
    sizes = tuple(int(n) for n in args)
    bounds.check_elements(math.prod(sizes), f"{what}{sizes}")
    return sizes


def _full(args: list, rng) -> np.ndarray:
    if len(args) < 2:
        raise GradcliError("full needs a size and a fill value, e.g. full(2, 3, 0.5)")
    if not isinstance(args[-1], (int, float)):
        raise GradcliError("full: the fill value must be a number, e.g. full(2, 3, 0.5)")
    return np.full(_sizes(args[:-1], "full"), float(args[-1]))


def _eye(args: list, rng) -> np.ndarray:
    sizes = _sizes(args, "eye")
    if len(sizes) not in (1, 2):
        raise GradcliError("eye takes one or two sizes, e.g. eye(3) or eye(2, 3)")
    bounds.check_elements(sizes[0] * sizes[-1], f"eye{sizes}")
    return np.eye(sizes[0], sizes[-1])


def _arange(args: list, rng) -> np.ndarray:
    if not 1 <= len(args) <= 3 or (len(args) == 3 and args[2] == 0):
        raise GradcliError("arange takes (end), (start, end) or (start, end, step != 0)")
    start, end, step = {1: (0, *args, 1), 2: (*args, 1), 3: tuple(args)}[len(args)]
    if not all(isinstance(a, (int, float)) for a in (start, end, step)):
        raise GradcliError("arange takes numbers, e.g. arange(0, 1, 0.25)")
    count = end / step - start / step  # not (end - start) / step, which overflows sooner
    if not math.isfinite(count):
        raise GradcliError(f"arange{tuple(args)} would be endless", hint="give finite numbers")
    bounds.check_elements(max(math.ceil(count), 0), f"arange{tuple(args)}")
    return np.arange(*args, dtype=float)


def _linspace(args: list, rng) -> np.ndarray:
    if len(args) != 3:
        raise GradcliError("linspace takes (start, end, steps), e.g. linspace(0, 1, 5)")
    steps = args[2]
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise GradcliError("linspace: steps must be a whole number >= 0, e.g. linspace(0, 1, 5)")
    bounds.check_elements(steps, f"linspace{tuple(args)}")
    if not all(isinstance(a, (int, float)) for a in args[:2]):
        raise GradcliError("linspace takes numbers, e.g. linspace(0, 1, 5)")
    return np.linspace(float(args[0]), float(args[1]), steps)


CONSTRUCTORS: dict[str, Callable[[list, Any], np.ndarray]] = {  # Any: a numpy Generator or alike
    "ones": lambda args, rng: np.ones(_sizes(args, "ones")),
    "zeros": lambda args, rng: np.zeros(_sizes(args, "zeros")),
    "full": _full,
    "eye": _eye,
    "arange": _arange,
    "linspace": _linspace,
    "rand": lambda args, rng: rng.random(_sizes(args, "rand")),
    "randn": lambda args, rng: rng.standard_normal(_sizes(args, "randn")),
    "tensor": lambda args, rng: _tensor(args),
    # torch.empty's values are whatever memory held; gradcli's are zeros
    "empty": lambda args, rng: np.zeros(_sizes(args, "empty")),
}


# torch's constructors of a tensor shaped as another (``torch.zeros_like(x)``), and the
# constructor each is once that shape is written out (full_like's fill value follows it)
LIKE = {f"{name}_like": name for name in ("zeros", "ones", "full", "rand", "randn", "empty")}


def _tensor(args: list) -> np.ndarray:
    if len(args) != 1:
        raise GradcliError("tensor takes one list, e.g. tensor([[1, 2], [3, 4]])")
    return _rectangular(args[0])


def generator_for(name: str, seed: int) -> np.random.Generator:
    """The random generator of one named value: the same for a name and seed on every run,
    and independent of which other values are given."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


MAX_DIMENSIONS = 32  # numpy's broadcasting and many of its functions take no more


def _rectangular(nested: Any, name: str = "the value") -> np.ndarray:
    try:
        array = np.array(nested, dtype=complex if _has_complex(nested) else float)
    except ValueError as exc:
        if "maximum number of dimension" not in str(exc):
            raise GradcliError(
                f"{name}: the rows of a nested list must all have the same length",
                hint=VALUE_SYNTAX,
            ) from None
        array = None
    if array is None or array.ndim > MAX_DIMENSIONS:
        raise GradcliError(
            f"{name}: the lists are nested too deeply (at most {MAX_DIMENSIONS} dimensions)",
            hint=VALUE_SYNTAX,
        )
    return array


def _finite_number(value, name: str | None = None):
    """A whole number beyond float range (10**400 written out) is an error, not a crash."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**1024:
        digits = int(abs(value).bit_length() * math.log10(2)) + 1
        raise GradcliError(
            f"{name}: " * (name is not None)
            + f"a whole number of about {digits} digits is beyond the range of a float",
            hint="write it as a float, e.g. 1e400 (which is inf)",
        )
    return value


class _Literal:
    """Walks a parsed value and returns numbers and lists; anything else is an error."""

    def __init__(self, text: str):
        self.text = text

    def fail(self, node: ast.AST, what: str) -> GradcliError:
        hint = VALUE_SYNTAX
        if isinstance(node, ast.BinOp):
            hint = (
                "write the number itself (0.3333, 1e400), or give --exact (eval, grad, "
                f"jacobian, hessian), which reads 1/3 and pi/4 exactly; {VALUE_SYNTAX}"
            )
        elif isinstance(node, ast.Attribute) and self.text.strip().endswith(FILE_SUFFIXES):
            hint = f"a file is written with @ before its name: @{self.text.strip()}"
        return GradcliError(
            f"{what} is not allowed in a value",
            source=self.text,
            column=getattr(node, "col_offset", None),
            hint=hint,
        )

    def literal(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return _finite_number(node.value)
        if isinstance(node, ast.Constant) and type(node.value) is complex:  # 2j
            return node.value
        if _complex_literal(node):  # 1+2j, -1.5-2j: a real part and an imaginary one
            assert isinstance(node, ast.BinOp)
            imaginary = self.literal(node.right)
            real = self.literal(node.left)
            return real + imaginary if isinstance(node.op, ast.Add) else real - imaginary
        if isinstance(node, ast.Constant) and type(node.value) is bool:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.literal(node.operand)
            if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
                return -value if isinstance(node.op, ast.USub) else value
            raise self.fail(node, "a sign before a non-number")
        if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
            return math.nan if node.id == "nan" else math.inf
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.literal(item) for item in node.elts]
        if isinstance(node, ast.Name):
            raise self.fail(node, f"the name {node.id!r}")
        if isinstance(node, ast.Call):
            raise self.fail(node, "a nested call")
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.List):
            raise GradcliError(
                "a ',' is missing between two lists",
                source=self.text,
                column=node.value.end_col_offset,
                hint="write rows as [[1, 2], [3, 4]]",
            )
        raise self.fail(node, _NODES.get(type(node), "this"))


def _complex_literal(node: ast.AST) -> bool:
    """Whether ``node`` is a complex number as Python writes one: a real number (signed or not)
    plus or minus an imaginary one (``1+2j``, ``-1-2j``)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))):
        return False
    left = node.left.operand if isinstance(node.left, ast.UnaryOp) else node.left
    return (
        isinstance(node.right, ast.Constant)
        and type(node.right.value) is complex
        and isinstance(left, ast.Constant)
        and type(left.value) in (int, float)
    )


FILE_SUFFIXES = (".npy", ".npz", ".csv", ".json")

_NODES = {
    ast.BinOp: "arithmetic",
    ast.Subscript: "indexing",
    ast.Attribute: "attribute access ('.')",
    ast.IfExp: "an if-expression",
    ast.Set: "a set",
    ast.Dict: "a dict",
    ast.Compare: "a comparison",
    ast.Lambda: "a lambda",
    ast.JoinedStr: "a string",
    ast.Constant: "a string",
}


# The dtypes an input's constructor may give it besides the run's floating one (dtype=torch.long)
INTEGER_DTYPES: dict[str, np.dtype[Any]] = {
    "int64": np.dtype(np.int64),
    "int32": np.dtype(np.int32),
    "bool": np.dtype(np.bool_),
}


def whole_constructor(node: ast.Call) -> bool:
    """Whether torch makes an int64 tensor of this constructor call: ``tensor([0, 2])``,
    ``arange(3)``, ``full((2,), 1)``, with whole numbers only."""
    name = node.func.id if isinstance(node.func, ast.Name) else ""
    given = {"tensor": node.args, "arange": node.args, "full": node.args[-1:]}.get(name)
    if not given:
        return False
    constants = [n for a in given for n in ast.walk(a) if isinstance(n, (ast.Constant, ast.Name))]
    return all(isinstance(n, ast.Constant) and type(n.value) is int for n in constants)


def constructor_dtype(node: ast.Call) -> tuple[np.dtype[Any] | None, bool]:
    """The integer or boolean dtype of a constructor's tensor, or None for a floating one
    (the run's dtype), and whether it is written (``dtype=``; torch's spelling,
    ``torch.tensor([0, 2])``, has one written by the builder) rather than read from whole
    numbers (gradcli's own ``tensor([0, 2])``)."""
    for keyword in node.keywords:
        if keyword.arg == "dtype" and isinstance(keyword.value, ast.Constant):
            return INTEGER_DTYPES.get(str(keyword.value.value)), True
    return (np.dtype(np.int64) if whole_constructor(node) else None), False


def parse_constructor(
    node: ast.Call,
    text: str,
    rng: Any,  # numpy's Generator, or what has its random and standard_normal
    allowed_keywords=("requires_grad",),
    build: bool = True,
    like: tuple[int, ...] | None = None,
) -> tuple[np.ndarray | None, dict]:
    """Evaluate a constructor call node such as ``randn(8, 10, requires_grad=True)``.

    Returns the array and the keyword arguments (for a program: ``requires_grad``). ``like``
    is the shape of the tensor a ``zeros_like(x)`` (``LIKE``) names first, where one may be.
    """
    walker = _Literal(text)
    if isinstance(node.func, ast.Attribute):
        raise walker.fail(node.func, "attribute access ('.')")
    if like is not None and isinstance(node.func, ast.Name) and node.func.id in LIKE:
        return _like(node, walker, rng, like, allowed_keywords, build)
    if not isinstance(node.func, ast.Name) or node.func.id not in CONSTRUCTORS:
        name = repr(node.func.id) if isinstance(node.func, ast.Name) else "(only names)"
        raise GradcliError(
            f"unknown constructor {name}",
            source=text,
            column=node.col_offset,
            hint=f"constructors are {', '.join(CONSTRUCTORS)}",
        )
    args = [walker.literal(a) for a in node.args]
    if _has_bool(args):
        raise GradcliError(
            f"{node.func.id}: True/False is not a number", source=text, hint=VALUE_SYNTAX
        )
    keywords = {}
    for keyword in node.keywords:
        if keyword.arg == "dtype" and isinstance(keyword.value, ast.Constant):
            continue  # an integer input's dtype, which the builder wrote (constructor_dtype)
        if keyword.arg not in allowed_keywords:
            raise GradcliError(
                f"{node.func.id} has no argument named {keyword.arg!r}",
                source=text,
                column=keyword.value.col_offset,
                hint=f"allowed: {', '.join(allowed_keywords)}" if allowed_keywords else None,
            )
        keywords[keyword.arg] = walker.literal(keyword.value)
    if not build:
        return None, keywords
    try:
        with np.errstate(all="ignore"):  # linspace(-1e308, 1e308, 5) overflows to inf: a value
            return CONSTRUCTORS[node.func.id](args, rng), keywords
    except (ValueError, TypeError, OverflowError) as exc:
        raise GradcliError(
            f"{node.func.id}: cannot make a value of {args}: {exc}",
            source=text,
            column=node.col_offset,
            hint=VALUE_SYNTAX,
        ) from None


def _like(
    node: ast.Call,
    walker: _Literal,
    rng: Any,  # numpy's Generator, or what has its random and standard_normal
    shape: tuple[int, ...],
    allowed_keywords: tuple[str, ...],
    build: bool,
) -> tuple[np.ndarray | None, dict]:
    """``zeros_like(x)``, ``full_like(x, 0.5)``: the constructor of ``LIKE`` with ``x``'s
    shape (``x``, the first argument, is read by the caller)."""
    name = node.func.id if isinstance(node.func, ast.Name) else ""
    made = LIKE[name]
    fill = made == "full"
    rest = [walker.literal(a) for a in node.args[1:]]
    keywords: dict[str, Any] = {}
    for keyword in node.keywords:
        if fill and keyword.arg == "fill_value" and not rest:
            rest.append(walker.literal(keyword.value))
        elif keyword.arg in allowed_keywords:
            keywords[keyword.arg] = walker.literal(keyword.value)
        else:
            raise GradcliError(
                f"{name} has no argument named {keyword.arg!r}",
                source=walker.text,
                column=keyword.value.col_offset,
                hint=f"allowed: {', '.join(allowed_keywords)}" if allowed_keywords else None,
            )
    if len(rest) != int(fill) or _has_bool(rest):
        wanted = "a tensor and a fill value" if fill else "one tensor"
        raise GradcliError(
            f"{name} takes {wanted}",
            source=walker.text,
            hint=f"e.g. {name}(x{', 0.5' if fill else ''})",
        )
    if not build:
        return None, keywords
    bounds.check_elements(math.prod(shape), f"{name}{shape}")
    if fill:
        return np.full(shape, float(rest[0])), keywords
    return np.asarray(CONSTRUCTORS[made](list(shape), rng)).reshape(shape), keywords


@contextmanager
def _naming(name: str):
    """Errors about a value's text say which value they are about."""
    try:
        yield
    except GradcliError as exc:
        raise GradcliError(
            f"{name}: {exc.message}", source=exc.source, column=exc.column, hint=exc.hint
        ) from None


@overload
def quiet_parse(text: str, mode: Literal["eval"]) -> ast.Expression: ...
@overload
def quiet_parse(text: str, mode: Literal["exec"]) -> ast.Module: ...


def quiet_parse(text: str, mode: str) -> ast.mod:
    """``ast.parse``, without the SyntaxWarnings Python prints for text such as ``1if``: the
    text is refused with gradcli's own error, or it is fine."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return ast.parse(text, mode=mode)


def parse_value(text: str, name: str = "value", seed: int = 0, stdin=None) -> np.ndarray:
    """The array a value text stands for (float64, or complex128 where a number is complex:
    1+2j; the caller casts to the run's dtype)."""
    text = text.strip()
    if not text:
        raise GradcliError(f"the value of {name} is empty", hint=VALUE_SYNTAX)
    if text == "-":
        return _from_json(read_data(stdin or sys.stdin, f"{name} (stdin)"), f"{name} (stdin)")
    if text.startswith("@"):
        if not text[1:].strip():
            raise GradcliError(f"{name}: @ needs a file name, e.g. @x.npy", hint=VALUE_SYNTAX)
        return _from_file(text[1:], name)
    bounds.check_length(text, f"the value of {name}")
    if "±" in text or "+-" in text:
        raise GradcliError(
            f"{name}: ± (or +-) gives a value an uncertainty, which only `gradcli "
            "uncertainty` takes",
            hint="give the value alone here, or propagate it: gradcli uncertainty ... --x 1.0±0.1",
        )
    try:
        tree = quiet_parse(text, "eval").body
    except SyntaxError as exc:
        from .syntax import explain

        message, column, hint = explain(text, exc, value=True)
        raise GradcliError(
            f"cannot read the value of {name}: {message}",
            source=text,
            column=column,
            hint=hint or VALUE_SYNTAX,
        ) from None
    except (RecursionError, MemoryError):
        raise GradcliError(
            f"the value of {name} is nested too deeply to read", hint=VALUE_SYNTAX
        ) from None
    with _naming(name):
        if isinstance(tree, ast.Call):
            rng = generator_for(name, seed)
            array = parse_constructor(tree, text, rng, allowed_keywords=())[0]
            assert array is not None  # built: parse_constructor's build is True
            return array
        value = _Literal(text).literal(tree)
    if _has_bool(value):
        raise GradcliError(f"{name}: True/False is not a number", hint=VALUE_SYNTAX)
    return _rectangular(value, name)


def named_values(
    items: list[str] | None,
    option: str,
    seed: int = 0,
    bare: str | None = None,
    given: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """The values of a repeatable option, by name, after those already ``given`` (as --x).

    Each item is ``NAME=VALUE``, the name read as Python reads a program's names (NFKC); with
    ``bare``, an item may also be a plain ``VALUE``, for the input ``bare``. Without it the
    items are inputs' own values (-i), each parsed under the input's name; with it they are
    vectors for inputs (--t, --v), parsed under the option and the name (``--t x``).
    """
    values = dict(given or {})
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep and bare is not None:
            name, value = bare, item
        name = unicodedata.normalize("NFKC", name.strip())
        if not (sep or bare) or not name.isidentifier():
            if bare is None:
                hint = f"write {option} NAME=VALUE, e.g. {option} W=randn(8,10)"
            else:
                hint = f"write {option} VALUE or {option} NAME=VALUE"
            raise GradcliError(f"cannot read {option} {item!r}", hint=hint)
        if name in values:
            if bare is None:
                raise GradcliError(f"the input {name!r} is given twice")
            raise GradcliError(f"{option} gives {name!r} twice")
        values[name] = parse_value(value, name if bare is None else f"{option} {name}", seed)
    return values


def _has_complex(value: Any) -> bool:
    """Whether a literal (a number or nested lists) holds a complex number anywhere."""
    if isinstance(value, list):
        return any(_has_complex(v) for v in value)
    return isinstance(value, complex)


def _has_bool(value: Any) -> bool:
    """Whether a literal (a number or nested lists) holds True or False anywhere."""
    if isinstance(value, list):
        return any(_has_bool(v) for v in value)
    return isinstance(value, bool)


# A number in a text file takes at least two characters ("1,"); allow long ones, but not a
# file whose text alone could not fit in memory once read.
_CHARACTERS_PER_NUMBER = 64


_BLOCK = 1 << 20  # characters read at a time


def read_data(stream, name: str) -> str:
    """All of a text stream of numbers, read in blocks and refused as soon as it holds more
    than ``--max-elements`` numbers could take, or more than ``--max-memory`` can read."""
    most = _CHARACTERS_PER_NUMBER * bounds.limits().max_elements
    # the bytes the text may take in memory (a character beyond ASCII takes 2 or 4)
    room = bounds.budget().max_memory // bounds.TEXT_FACTOR
    blocks, length, held = [], 0, 0
    while length <= most:
        block = stream.read(min(_BLOCK, most + 1 - length))
        if not block:
            break
        blocks.append(block)
        length += len(block)
        held += sys.getsizeof(block)
        if held > room:
            raise GradcliError(
                f"{name} holds more than {length:,} characters: reading them would take more "
                f"than the memory budget, {bounds.format_bytes(bounds.budget().max_memory)} "
                "(--max-memory)",
                hint="raise --max-memory, or give the values as a .npy file",
            )
    if length > most:
        raise GradcliError(
            f"{name} holds more than {most:,} characters, more numbers than --max-elements "
            f"allows ({bounds.limits().max_elements:,})",
            hint="raise --max-elements, or give the values as a .npy file",
        )
    return "".join(blocks)


def _from_json(source: str, name: str) -> np.ndarray:
    # every number but the last in a list is followed by a comma: an upper bound, cheaply
    bounds.check_elements(source.count(",") + 1, name)
    value = load_json(source, name)
    if isinstance(value, dict):
        raise GradcliError(
            f"{name}: expected a number or a list in JSON, got an object", hint=JSON_HINT
        )
    return _rectangular(json_numbers(value, name), name)


JSON_HINT = "give a number or nested lists, e.g. [[1, 2], [3, 4]]"


def load_json(text: str, name: str):
    """``json.loads``, its every failure the user's error naming ``name``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise GradcliError(
            f"{name}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
            hint=JSON_HINT,
        ) from None
    except RecursionError:
        raise GradcliError(
            f"{name}: the JSON lists are nested too deeply", hint=JSON_HINT
        ) from None
    except ValueError:  # an integer of more digits than Python converts to a number
        raise GradcliError(
            f"{name}: a whole number of more than 4,300 digits", hint=JSON_HINT
        ) from None


def json_numbers(value: Any, name: str) -> Any:
    """Numbers and lists of JSON, with its stand-ins "nan", "inf", "-inf" (as gradcli writes
    them) back to floats; anything else (null, true, strings, objects) is an error."""
    if isinstance(value, list):
        return [json_numbers(v, name) for v in value]
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GradcliError(f"{name}: expected numbers, got {value!r}"[:200], hint=JSON_HINT)
    return _finite_number(value, name)


def _from_file(spec: str, name: str) -> np.ndarray:
    """``@path`` (.npy, .npz, .csv, .json) or ``@path.npz:KEY``; nothing is ever unpickled."""
    key = None
    path_text = spec
    if ".npz:" in spec:
        path_text, key = spec.split(".npz:", 1)
        path_text += ".npz"
    path = existing_file(path_text, name)
    suffix = path.suffix.lower()
    what = f"{name} ({path_text})"
    with _reading(path_text, name):
        if suffix == ".npy":
            with path.open("rb") as f:  # one open file: checked, then loaded
                _check_npy_header(f, what)
                f.seek(0)
                return np.load(f, allow_pickle=False).astype(float)
        if suffix == ".npz":
            with open_archive(path_text, name) as archive:
                keys = archive.files
                if not keys:
                    raise GradcliError(f"{what}: the archive holds no arrays")
                if key is None and len(keys) != 1:
                    raise GradcliError(
                        f"{what}: the archive holds {len(keys):,} arrays; name one",
                        hint=f"write @{path_text}:KEY with KEY one of {listing(keys)}",
                    )
                key = keys[0] if key is None else key
                if key not in keys:
                    raise GradcliError(
                        f"{what}: the archive has no array {key!r}",
                        hint=f"its arrays are {listing(keys, empty='(none)')}",
                    )
                return archive[key].astype(float)
        if suffix in (".json", ".csv"):
            with path.open(encoding="utf-8") as f:
                text = read_data(f, what)
            return _from_json(text, what) if suffix == ".json" else _from_csv(text, what)
    raise GradcliError(
        f"{name}: unknown file type {suffix or '(none)'} for {path_text}", hint=VALUE_SYNTAX
    )


def existing_file(path_text: str, name: str, hint: str = VALUE_SYNTAX) -> Path:
    """The path of a regular file that exists; any other path is the user's error.
    ``sample:NAME`` is the file of a sample that comes with gradcli (``bundled``)."""
    if path_text.startswith("sample:"):
        from ..base import samples as bundled

        path = bundled.path(path_text.removeprefix(bundled.PREFIX))
    else:
        path = Path(path_text)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise GradcliError(f"{name}: no such file: {path_text}", hint=hint) from None
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, no permission
        raise GradcliError(f"{name}: cannot use the path {path_text!r}: {exc}") from None
    if not stat.S_ISREG(mode):
        raise GradcliError(f"{name}: {path_text} is not a regular file", hint=hint)
    note_input(path)  # an output may not be written over it (see files.refuse_input)
    return path


@contextmanager
def _reading(path_text: str, name: str):
    """A file that cannot be read (or is damaged) is the user's error, named with its path."""
    import csv
    import zipfile

    try:
        yield
    except (OSError, ValueError, OverflowError, zipfile.BadZipFile, csv.Error) as exc:
        raise GradcliError(
            f"{name}: cannot read {path_text}: {why_unreadable(exc)}",
            hint="give a .npy or .npz file written by numpy.save or numpy.savez, "
            "or a .csv or .json file of numbers",
        ) from None


def why_unreadable(exc: Exception) -> str:
    """Why a file could not be read, in a user's words where Python's are a codec's."""
    if isinstance(exc, UnicodeDecodeError):
        return (
            f"it is not UTF-8 text (the byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        )
    return str(exc)


@contextmanager
def open_archive(path_text: str, name: str):
    """A .npz archive, open, after checking every member's header: numbers only, within
    ``--max-elements``. Reading its arrays inside the ``with`` reports errors as the user's."""
    import zipfile

    path = existing_file(path_text, name)
    what = f"{name} ({path_text})"
    with _reading(path_text, name):
        if not zipfile.is_zipfile(path):
            raise GradcliError(
                f"{what}: not a .npz archive, or a damaged one", hint="write it with numpy.savez"
            )
        with np.load(path, allow_pickle=False) as archive:
            for member in archive.zip.namelist():
                if not member.endswith(".npy"):
                    raise GradcliError(
                        f"{what} holds {shorten(repr(member))}, which is not a .npy array",
                        hint="write the archive with numpy.savez",
                    )
                with archive.zip.open(member) as f:
                    _check_npy_header(f, f"{what}:{shorten(member[:-4])}")
            yield archive


def _check_npy_header(f, what: str, rows: bool = False) -> tuple[tuple[int, ...], bool, Any]:
    """Read a .npy header and refuse, before any data is read, what gradcli will not load:
    anything but numbers (Python objects would be unpickled), or too many elements (with
    ``rows``, in one row: the file is read a chunk of rows at a time). Returns the header:
    the shape, whether it is in Fortran order, the dtype."""
    try:
        version = np.lib.format.read_magic(f)
    except ValueError:
        raise GradcliError(
            f"{what}: not a NumPy .npy file (it does not start with numpy's magic string)",
            hint="write it with numpy.save; gradcli never reads pickles",
        ) from None
    read = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    shape, fortran, dtype = read(f)
    if len(shape) > MAX_DIMENSIONS or any(n > bounds.LARGEST for n in shape):
        raise GradcliError(
            f"{what} has shape {shape}"[:200] + ": too many dimensions, or one too large",
            hint=f"at most {MAX_DIMENSIONS} dimensions, within --max-elements",
        )
    if dtype.hasobject:
        raise GradcliError(
            f"{what} holds Python objects (stored as a pickle), which gradcli never loads",
            hint="save a numeric array, e.g. numpy.save(path, values.astype(float))",
        )
    if dtype.kind not in "iuf":
        raise GradcliError(
            f"{what} holds {dtype} values, not numbers", hint="save integers or floats"
        )
    if rows:
        bounds.check_elements(math.prod(shape[1:]), f"a point of {what}")
        return tuple(shape), fortran, dtype
    bounds.check_elements(math.prod(shape), what)
    # read as stored, then converted to float64: both are held at once
    stored = math.prod(shape) * dtype.itemsize
    bounds.check_bytes(stored + math.prod(shape) * bounds.ELEMENT_BYTES, what)
    return tuple(shape), fortran, dtype


def mapped_header(path_text: str, name: str) -> tuple[tuple[int, ...], Any, int, bool]:
    """The header of a .npy file of points, checked (numbers only, one point within
    ``--max-elements``) before its rows are read a chunk at a time: the shape, the dtype,
    where the data starts, and whether it is in Fortran order."""
    path = existing_file(path_text, name)
    with _reading(path_text, name), path.open("rb") as f:
        shape, fortran, dtype = _check_npy_header(f, f"{name} ({path_text})", rows=True)
        return shape, dtype, f.tell(), fortran


def _from_csv(source: str, name: str) -> np.ndarray:
    import csv

    values: list[list[float]] = []
    count = 0
    for row in csv.reader(io.StringIO(source)):
        if not row or not any(c.strip() for c in row):
            continue
        count += len(row)
        bounds.check_elements(count, name)
        numbers = []
        for cell in row:
            try:
                numbers.append(float(cell))
            except ValueError:
                raise GradcliError(
                    f"{name}: row {len(values) + 1} is not all numbers: {cell.strip()!r}"[:200],
                    hint="write one row of comma-separated numbers per line",
                ) from None
        values.append(numbers)
    array = _rectangular(values, name)
    if array.ndim == 2 and array.shape[0] == 1:
        return array[0]
    if array.ndim == 2 and array.shape[1] == 1:
        return array[:, 0]
    return array
