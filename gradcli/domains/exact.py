"""Exact answers (``--exact``) and formulas without a point (``--symbolic`` without values).

The program is re-run on arrays of sympy expressions (``symbolic.Arrays``): each input is an
array of real symbols, so every derivative is ``sympy.diff`` of an output element by a
symbol. With ``--exact`` the symbols are then replaced by the exact values given; without a
value (``--symbolic``), they stay, and the answer is formulas of the inputs, with each input's
shape from ``--shape x=3`` (a scalar by default).

What is exact. A value text is read by a whitelist of its own (``exact_value``): numbers,
``+ - * / **``, ``pi``, ``e`` and the op table's element-wise functions of one tensor (with
their sympy formulas: ``sqrt(2)``, ``log(3)``), in lists. A decimal is read as the decimal
it writes: ``0.1`` is exactly 1/10, not the binary float nearest to it. A value that is not
such text (``rand(3)``, ``@x.npy``) comes as floats: whole numbers stay exact, other numbers
are sympy floats, and a warning names the input. A number written in the program is read
back from the float the parser kept: a short decimal as the decimal it writes, a folded
constant (``pi/2``) as the multiple of pi or e it equals exactly when there is one (a note
says so), else a float with a warning. A function without a symbolic form here, or sympy
running out of time, falls back to the float answer with a warning that says why. Imported
only by these options: sympy is slow to import.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import numpy as np
import sympy as sp
from sympy.printing.str import StrPrinter

from ..base import bounds
from ..base.errors import GradcliError
from ..lang.ir import Const, evaluate, unseen
from ..ops.table import OPS, REQUIRED, TENSOR
from ..results import Exact, ExactBlock
from .symbolic import (
    MAX_ELEMENTS,
    Arrays,
    NotSymbolic,
    _check_nesting,
    elementwise,
    symbol_arrays,
    time_budget,
)
from .symbolic import _element_formula as element_formula

EXACT_SYNTAX = (
    "an exact value is numbers, + - * / **, pi, e, and the element-wise functions of one "
    "argument of them, or a list of such (1/3,2 or [[1, sqrt(2)], [pi/4, 0.1]]); 0.1 is read "
    "as 1/10"
)
_CONSTANTS = {"pi": sp.pi, "e": sp.E}
_OPERATORS: dict[type, Callable[[sp.Expr, sp.Expr], sp.Expr]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}
MAX_POWER = 64  # the largest |exponent| of a number in a value: 10**10**10 would never end


class _NotExactText(Exception):
    """The text is not an exact value (it may still be one of gradcli's other values)."""


def exact_value(text: str, name: str) -> np.ndarray | None:
    """The object array of sympy numbers an exact value text stands for, or None when the
    text is not one (a constructor, a file): the caller reads it as floats then. Nothing is
    evaluated: the syntax tree is walked and each allowed node built with sympy."""
    text = text.strip()
    if not text or text.startswith("@") or text == "-":
        return None
    bounds.check_length(text, f"the value of {name}")
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    try:
        value = _literal(tree, text)
    except _NotExactText:
        return None
    except (ZeroDivisionError, RecursionError):
        raise GradcliError(f"cannot read the value of {name} exactly", hint=EXACT_SYNTAX) from None
    array = np.empty(np.shape(np.asarray(value, dtype=object)), dtype=object)
    try:
        array[...] = value
    except ValueError:
        raise GradcliError(
            f"the value of {name} is not rectangular", hint="give every row as many numbers"
        ) from None
    if array.dtype != object or any(isinstance(v, list) for v in array.reshape(-1)):
        raise GradcliError(
            f"the value of {name} is not rectangular", hint="give every row as many numbers"
        )
    bounds.check_elements(array.size, f"the value of {name}")
    for number in array.reshape(-1):
        if not (number.is_real and number.is_finite):
            raise GradcliError(
                f"the value of {name} holds {number}, which is not a finite real number",
                hint=EXACT_SYNTAX,
            )
    return array


def _literal(node: ast.expr, text: str):
    """A number (sympy) or nested lists of them, for one node of an exact value's tree."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_literal(e, text) for e in node.elts]
    return _number(node, text)


def _number(node: ast.expr, text: str) -> sp.Expr:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        if isinstance(node.value, int):
            return sp.Integer(node.value)
        written = ast.get_source_segment(text, node) or repr(node.value)
        return decimal(written.replace("_", ""))
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _number(node.operand, text)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left, right = _number(node.left, text), _number(node.right, text)
        if isinstance(node.op, ast.Pow):
            if not (right.is_Rational and abs(right) <= MAX_POWER):
                raise GradcliError(
                    f"the exponent {right} is not a rational number of at most {MAX_POWER}",
                    source=text,
                    column=node.right.col_offset,
                    hint="write the number itself (1e300), or a smaller power",
                )
            return left**right
        if type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](left, right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and elementwise(node.func.id)
        and len(node.args) == 1
        and not node.keywords
    ):
        op = OPS[node.func.id]
        first, *rest = op.params
        if first.kind == TENSOR and all(p.default is not REQUIRED for p in rest):
            defaults = [p.default for p in rest]
            return sp.sympify(element_formula(op, [_number(node.args[0], text), *defaults]))
    raise _NotExactText


def decimal(text: str) -> sp.Rational:
    """A decimal's text as the fraction it writes: ``0.1`` is 1/10, ``1e-3`` is 1/1000."""
    fraction = Fraction(text)
    return sp.Rational(fraction.numerator, fraction.denominator)


SHORT_DIGITS = 12  # a decimal of at most this many significant digits was typed by a person


def program_constant(value: float) -> tuple[sp.Expr, str | None]:
    """A number of the program (a float the parser kept) as sympy reads it exactly, and a
    note when that is a guess or not exact: a short decimal is the decimal it writes (0.1 is
    1/10); a longer one (a folded ``pi/2``) the rational multiple of pi or e, or the
    rational, whose float is the same number; else the float itself."""
    if not math.isfinite(value):
        return sp.Float(value), None
    if float(value).is_integer():
        return sp.Integer(int(value)), None
    written = repr(float(value))
    digits = len(written.split("e")[0].replace("-", "").replace(".", "").lstrip("0"))
    if digits <= SHORT_DIGITS:
        return decimal(written), None
    for base in (sp.pi, sp.E, sp.Integer(1)):
        ratio = sp.Rational(Fraction(value / float(base)).limit_denominator(10_000))
        candidate = ratio * base
        if ratio != 0 and float(candidate) == value:
            return candidate, f"the program's number {written} is read as {candidate}"
    return sp.Float(value), f"the program's number {written} has no exact form here: a float"


class ExactArrays(Arrays):
    """The domain of formulas with the program's numbers read exactly (``program_constant``)."""

    def __init__(self, env: dict, groups: dict, notes: list[str]):
        super().__init__(env, groups)
        self.notes = notes

    def const(self, node: Const) -> np.ndarray:
        if isinstance(node.value, complex):
            raise GradcliError(
                f"--exact computes with real numbers, and the program writes {node.value}",
                hint="leave out --exact: complex numbers are computed in floats",
            )
        number, note = program_constant(float(node.value))
        if note is not None and note not in self.notes:
            self.notes.append(note)
        return np.asarray(number, dtype=object)


def floats_as_numbers(array: np.ndarray) -> tuple[np.ndarray, bool]:
    """Float values as sympy numbers: whole numbers exactly, others as floats; and whether
    all were whole."""
    values = np.asarray(array, dtype=float)
    cells = np.empty(values.shape, dtype=object)
    whole = True
    for index in np.ndindex(*values.shape):
        v = float(values[index])
        if v.is_integer():
            cells[index] = sp.Integer(int(v))
        else:
            cells[index] = sp.Float(v)
            whole = False
    return cells, whole


def read_shapes(items: list[str] | None) -> dict[str, tuple[int, ...]]:
    """``--shape x=3``, ``--shape W=2,3``: each input's shape; ``x=`` (nothing) is a scalar."""
    shapes: dict[str, tuple[int, ...]] = {}
    what = (
        "a shape is NAME= followed by the sizes of the input's dimensions, each a whole "
        "number of at least 1: --shape x=3 (a vector of 3), --shape W=2,3 (a 2x3 matrix), "
        "--shape s= (a scalar)"
    )
    for item in items or []:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise GradcliError(f"cannot read --shape {item!r}: it is not NAME=SIZES", hint=what)
        sizes = [n.strip() for n in text.replace("(", "").replace(")", "").split(",")]
        sizes = [n for n in sizes if n]
        bad = [n for n in sizes if not n.isdecimal() or int(n) < 1]
        if bad:
            size = bad[0]
            if size.isdecimal():
                why = "leaves the input without elements: nothing to differentiate"
            elif size.startswith("-") and size[1:].isdecimal():
                why = "is negative"
            else:
                why = "is not a whole number"
            raise GradcliError(f"cannot read --shape {item!r}: the size {size!r} {why}", hint=what)
        shape = tuple(int(n) for n in sizes)
        if name in shapes:
            raise GradcliError(f"--shape gives {name!r} twice")
        shapes[name] = shape
    return shapes


class Problem:
    """A program with an exact value or a shape (symbols) for each input."""

    def __init__(
        self,
        program,
        exact: dict[str, np.ndarray],
        floats: dict[str, np.ndarray],
        shapes: dict[str, tuple[int, ...]],
        seed: int,
        point: bool,
    ):
        self.program = program
        self.point = point
        self.notes: list[str] = []
        given = set(exact) | set(floats)
        inputs = program.inputs(given | set(shapes))
        for name in [*given, *shapes]:
            if name not in inputs:
                raise GradcliError(
                    f"a value or shape was given for {name!r}, but the program has no input "
                    f"{name!r}",
                    hint=f"its inputs are: {', '.join(inputs) or 'none'}",
                )
        self.values: dict[str, np.ndarray] = {}  # exact (or float) numbers of given inputs
        self.constant: dict[str, bool] = {}  # declared without requires_grad
        self.shapes: dict[str, tuple[int, ...]] = {}
        for name in inputs:
            declared = name in program.declared
            self.constant[name] = declared and not program.declared_value(name, seed, False)[1]
            if name in exact:
                self.values[name] = exact[name]
            elif name in floats or declared:
                array = floats[name] if name in floats else program.declared_value(name, seed)[0]
                self.values[name], whole = floats_as_numbers(np.asarray(array))
                if not whole:
                    self.notes.append(f"{name} is not exact (its value came as floats)")
            elif point:
                flag = "--x VALUE" if name == "x" else f"-i {name}=VALUE"
                raise GradcliError(f"no value for the input {name!r}", hint=f"give it with {flag}")
            if name in self.values:
                if name in shapes and shapes[name] != self.values[name].shape:
                    raise GradcliError(
                        f"--shape gives {name} the shape {shapes[name]}, but its value has "
                        f"shape {self.values[name].shape}"
                    )
                self.shapes[name] = self.values[name].shape
            else:
                self.shapes[name] = shapes.get(name, ())
        self.inputs = inputs
        self.symbols = symbol_arrays(self.shapes)
        size = sum(int(np.prod(s)) for s in self.shapes.values())
        if size > MAX_ELEMENTS:
            raise NotSymbolic(
                f"the inputs have {size} elements (the symbolic limit is {MAX_ELEMENTS})"
            )

    def targets(self, wrt: list[str] | None) -> list[str]:
        """The inputs differentiated: ``wrt``, else every input that requires grad (with
        formulas: every input left without a value)."""
        if wrt:
            for name in wrt:
                if name not in self.inputs:
                    raise GradcliError(
                        f"--wrt names {name!r}, which is not an input of the program",
                        hint=f"its inputs are: {', '.join(self.inputs)}",
                    )
            return wrt
        if self.point:
            found = [n for n in self.inputs if not self.constant[n]]
        else:
            found = [n for n in self.inputs if n not in self.values]
        if not found:
            raise GradcliError("no input requires grad", hint="name the inputs with --wrt")
        return found

    def formulas(self) -> dict[str, np.ndarray]:
        """Every input and assigned name as formulas of all inputs' symbols."""
        env: dict[str, np.ndarray] = dict(self.symbols)
        domain = ExactArrays(env, self.program.groups(), self.notes)
        depths: dict = {}
        for assignment in self.program.assignments:
            if assignment.ir is not None:
                value = np.asarray(evaluate(assignment.ir, domain), dtype=object)
                _check_nesting(assignment.target, value, depths)
                env[assignment.target] = value
        for base in self.program.groups():
            env.setdefault(base, domain.group(base))
        return env

    def at_point(self, expression: sp.Expr) -> sp.Expr:
        """``expression`` with each given input's symbols replaced by its value."""
        pairs = {
            symbol: value
            for name, values in self.values.items()
            for symbol, value in zip(self.symbols[name].reshape(-1), values.reshape(-1))
        }
        return sp.sympify(expression).xreplace(pairs) if pairs else sp.sympify(expression)


SIMPLIFY_OPS = 60  # simplify can take minutes on large formulas: tried on small ones only


def tidy(expression: sp.Expr) -> sp.Expr:
    """A formula or number simplified where that is quick."""
    expression = sp.sympify(expression)
    if sp.count_ops(expression) <= SIMPLIFY_OPS:
        return sp.simplify(expression)
    return expression


def approximate(expression: sp.Expr) -> float:
    """The real value of an exact number; nan where it has none."""
    try:
        value = complex(sp.N(expression, 17))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return math.nan
    return value.real if abs(value.imag) <= 1e-12 * max(1.0, abs(value.real)) else math.nan


def approximate_array(array: np.ndarray) -> np.ndarray:
    """An object array of exact numbers as floats (``approximate``)."""
    return np.vectorize(approximate, otypes=[float])(array) if array.size else array.astype(float)


_NOT_REAL = (sp.zoo, sp.oo, sp.S.NegativeInfinity, sp.nan, sp.I)
SHOWN_IN_MESSAGES = 200  # the characters of a number an error message quotes, at most


class _TooLong(Exception):
    """The text of an exact number would pass its limit: ``digits`` is what it had reached."""

    def __init__(self, digits: int):
        self.digits = digits


class _ExactText(StrPrinter):
    """sympy's text of an exact number or formula (``sp.sstr``), with whole numbers of any
    length: Python's own int-to-str stops at 4,300 digits (``(3/7)**6000`` has 5,072 in its
    denominator). The digits are counted before any are made, and past ``limit`` characters
    ``_TooLong`` stops the printing."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit, self.digits = limit, 0

    def _whole(self, number: int) -> str:
        self.digits += int(abs(number).bit_length() * math.log10(2)) + 1  # at most one over
        if self.digits > self.limit:
            raise _TooLong(self.digits)
        return str(Decimal(number))  # exact, and without Python's digit limit

    def _print_Integer(self, expr: sp.Integer) -> str:
        return self._whole(int(expr.p))

    def _print_int(self, expr: int) -> str:
        return self._whole(expr)

    def _print_Rational(self, expr: sp.Rational) -> str:
        if expr.q == 1:
            return self._whole(int(expr.p))
        return f"{self._whole(int(expr.p))}/{self._whole(int(expr.q))}"


def exact_text(value: sp.Expr, what: str) -> str:
    """The text of ``value`` (``what``: its name in an error), its digits within
    ``--max-length``; ``GradcliError`` for more, saying how many."""
    limit = bounds.limits().max_length
    try:
        text = _ExactText(limit).doprint(value)
    except _TooLong as long:
        raise GradcliError(
            f"the exact value of {what} has at least {long.digits:,} digits; gradcli writes an "
            f"exact number of at most {limit:,} characters (--max-length)",
            hint=f"raise --max-length to at least {long.digits:,}, or leave out --exact for "
            "the float answer",
        ) from None
    return text


def _quoted(value: sp.Expr) -> str:
    """``value``'s text for an error message, or what it is when that is too long."""
    try:
        return _ExactText(SHOWN_IN_MESSAGES).doprint(value)
    except _TooLong:
        return f"a number of more than {SHOWN_IN_MESSAGES} digits"


def _cells(
    expressions: np.ndarray, problem: Problem, label: str
) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """Texts of the simplified ``expressions`` (at the point, when there is one), their
    floats (None without a point), and whether every one is exact. NotSymbolic when a number
    at the point is not a finite real one (log(0), sqrt(-4)): the float answer then says so,
    as PyTorch does (-inf, nan, with their warnings and --strict)."""
    texts = np.empty(expressions.shape, dtype=object)
    numbers = np.empty(expressions.shape) if problem.point else None
    exact = True
    for index in np.ndindex(*expressions.shape):
        value = tidy(problem.at_point(expressions[index]))
        if problem.point and (value.has(*_NOT_REAL) or value.is_extended_real is False):
            where = f"{label}{list(index) if index else ''}"
            raise NotSymbolic(f"{where} is {_quoted(value)}, not a finite real number")
        exact = exact and not value.has(sp.Float)
        texts[index] = exact_text(value, f"{label}{list(index) if index else ''}")
        if numbers is not None:
            numbers[index] = approximate(value)
    return texts, numbers, exact


def _derivative(expressions: np.ndarray, symbols: np.ndarray) -> np.ndarray:
    """d expressions / d symbols, laid out expressions.shape + symbols.shape."""
    cells = np.empty(expressions.shape + symbols.shape, dtype=object)
    for out in np.ndindex(*expressions.shape):
        for at in np.ndindex(*symbols.shape):
            cells[out + at] = sp.diff(sp.sympify(expressions[out]), symbols[at])
    return cells


Pieces = list[tuple[str, str, str, np.ndarray]]  # (kind, name, label, expressions)


def _scalar_or_weighted(command: str, name: str, out: np.ndarray, v: np.ndarray | None) -> None:
    if v is None and out.size != 1:
        raise GradcliError(
            f"{command} needs a scalar output, but {name} has shape {out.shape}",
            hint="choose a scalar output with --of, give --v (grad), or reduce it, e.g. "
            "out = sum(y)",
        )


def _by_targets(
    problem: Problem,
    name: str,
    out: np.ndarray,
    expressions: np.ndarray,
    targets: list[str],
    kind: str,
    label: Callable[[str], str],
) -> Pieces:
    """The output ``name`` (``out``), then the derivative of ``expressions`` by each target t,
    a piece of ``kind`` labelled ``label(t)``."""
    pieces: Pieces = [("array", name, name, out)]
    for t in targets:
        pieces.append((kind, t, label(t), _derivative(expressions, problem.symbols[t])))
    return pieces


def values(command: str, problem: Problem, env: dict, name: str, wrt, v) -> Pieces:
    """eval's pieces: every input and assigned name."""
    return [("array", n, n, value) for n, value in env.items() if not unseen(n)]


def gradients(command: str, problem: Problem, env: dict, name: str, wrt, v) -> Pieces:
    """grad's pieces: the output, then d(v . out)/d t for each target t."""
    out = env[name]
    _scalar_or_weighted(command, name, out, v)
    targets = problem.targets(wrt)
    weights = np.ones(out.shape, dtype=object) if v is None else v
    if weights.shape != out.shape:
        raise GradcliError(
            f"--v has shape {weights.shape} but the output {name} has shape {out.shape}",
            hint=f"give a vector v of shape {out.shape}",
        )
    total = sum((w * e for w, e in zip(weights.reshape(-1), out.reshape(-1))), sp.S(0))
    total_array = np.asarray(total, dtype=object)
    return _by_targets(problem, name, out, total_array, targets, "array", lambda t: f"{t}.grad")


def jacobians(command: str, problem: Problem, env: dict, name: str, wrt, v) -> Pieces:
    """jacobian's pieces: the output, then d out/d t for each target t (blocks of the
    command's own kind, as ``render.exact`` shows them)."""
    out, targets = env[name], problem.targets(wrt)
    return _by_targets(problem, name, out, out, targets, command, lambda t: f"d{name}/d{t}")


def hessians(command: str, problem: Problem, env: dict, name: str, wrt, v) -> Pieces:
    """hessian's pieces: the (scalar) output, then d2 out/da db for each pair of targets
    (blocks of the command's own kind, as ``render.exact`` shows them)."""
    out = env[name]
    _scalar_or_weighted(command, name, out, v)
    targets = problem.targets(wrt)
    scalar = np.asarray(out.reshape(-1)[0], dtype=object)
    firsts = {t: _derivative(scalar, problem.symbols[t]) for t in targets}
    pieces: Pieces = [("array", name, name, out)]
    for a in targets:
        for b in targets:
            block = _derivative(firsts[a], problem.symbols[b])
            pieces.append((command, f"{a},{b}", f"d2{name}/d{a}d{b}", block))
    return pieces


def answer(
    command: str,
    problem: Problem,
    of: str | None,
    wrt: list[str] | None = None,
    v: np.ndarray | None = None,
) -> Exact:
    """The exact answer of ``command`` (one whose entry in ``commands.table`` names its
    pieces here: eval, grad, jacobian, hessian); NotSymbolic when sympy cannot give one (a
    function without a symbolic form, too many elements, out of time)."""
    from ..commands.table import entry

    if problem.program.TRACED:
        from ..lang.program import NO_FORMULAS

        raise NotSymbolic(NO_FORMULAS)
    pieces_of = entry(command).exactly()

    def work() -> tuple[str, np.ndarray, list[ExactBlock]]:
        env = problem.formulas()
        name = of or problem.program.default_output()
        if name not in env:
            name = problem.program.targets[-1] if of is None else name
        if name not in env:
            raise GradcliError(
                f"--of names {name!r}, which the program does not define",
                hint=f"names are: {', '.join(n for n in env if not unseen(n))}",
            )
        out = env[name]
        if out.size > MAX_ELEMENTS:
            raise NotSymbolic(
                f"the output has {out.size} elements (the symbolic limit is {MAX_ELEMENTS})"
            )
        blocks = []
        for kind, key, label, expressions in pieces_of(command, problem, env, name, wrt, v):
            texts, numbers, exact = _cells(expressions, problem, label)
            blocks.append(ExactBlock(kind, key, label, texts, numbers, exact))
        return name, out, blocks

    name, out, blocks = time_budget(work)
    inexact = [b.label for b in blocks if not b.exact]
    warnings = list(problem.notes)
    if problem.point and inexact:
        warnings.append(f"not exact (floats): {', '.join(inexact)}")
    return Exact(
        command=command,
        output=name,
        shape=out.shape,
        blocks=tuple(blocks),
        point=problem.point,
        warnings=tuple(warnings),
    )
