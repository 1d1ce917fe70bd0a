"""Exact derivatives from sympy: the program re-run on arrays of sympy expressions.

Each input that is differentiated becomes an array of real symbols (``x_0``, ``x_1``, or
``W_0_2``); the program's IR is evaluated in the interpreter's domain of formulas
(``Arrays``): numpy object arrays whose elements are sympy expressions, so indexing,
broadcasting, sums and matrix products keep their usual meaning. Every Jacobian entry is
then ``sympy.diff`` of an output element by an input symbol. ``Scalars`` is the domain of
one element's formula, for ``explain``'s element-wise steps. Used by ``check``,
``--symbolic`` and ``explain``, and imported only by them: sympy is slow to import.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import sympy as sp

from ..base import bounds, deadline
from ..lang import ir
from ..lang.ir import Call, Const, Index, Name, Node, evaluate
from ..ops import batching
from ..ops.symbolic import NotSymbolic, constant_array, number
from ..ops.table import OPS, REDUCTION

MAX_ELEMENTS = 64  # symbolic differentiation grows quickly; beyond this, skip it


SECONDS = 5.0  # sympy's time for one command's formulas: exact work can grow exponentially
# sympy differentiates, simplifies and evaluates by recursion over a formula's tree: beyond
# this depth of nesting (about 30 statements of a chain such as h2 = sin(h1)*1.01 + 0.1) it
# would exceed Python's recursion limit, so the formulas are not made
MAX_NESTING = 90


_INDEX_NOT_SYMBOLIC = "the indices are values of the run, not formulas"


T = TypeVar("T")


def time_budget(function: Callable[[], T], seconds: float | None = None) -> T:
    """``function()``, bounded: NotSymbolic when it runs longer than ``seconds`` (default
    ``SECONDS``), TimedOut when --timeout's deadline comes first (``deadline.py`` says how: no
    signals, any thread)."""
    seconds = SECONDS if seconds is None else seconds
    left = bounds.budget().left()
    with bounds.doing("working out sympy's formulas"):
        try:
            return deadline.run_within(seconds if left is None else min(seconds, left), function)
        except deadline.TimeUp:
            bounds.tick()  # TimedOut, when it was --timeout's deadline
            raise NotSymbolic(f"sympy took longer than {seconds:g} s") from None
        except RecursionError:  # a safety net: nesting() refuses such formulas first
            raise NotSymbolic(TOO_DEEP) from None


def _or_reason(function):
    """``function(...)`` as (result, None), or (None, why not) when it is not symbolic or
    runs out of time."""

    @functools.wraps(function)
    def bounded(*args, **kwargs):
        try:
            return time_budget(lambda: function(*args, **kwargs))
        except NotSymbolic as exc:
            return None, str(exc)

    return bounded


TOO_DEEP = "the formulas nest too deeply for sympy's recursive differentiation"


def nesting(expressions, depths: dict) -> int:
    """The deepest nesting of sympy ``expressions`` (a formula's tree as deep as its longest
    path), found without recursion; ``depths`` remembers the sub-formulas already measured,
    so a formula that reuses one (h2 = h1 * h1) costs its distinct parts only."""
    deepest = 0
    for root in expressions:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in depths:
                continue
            if not isinstance(node, sp.Basic) or not node.args:
                depths[node] = 1
            elif expanded:
                depths[node] = 1 + max(depths[a] for a in node.args)
            else:
                stack.append((node, True))
                stack.extend((a, False) for a in node.args if a not in depths)
        deepest = max(deepest, depths[root])
    return deepest


def _check_nesting(target: str, value: np.ndarray, depths: dict) -> None:
    """NotSymbolic when the formulas of ``target`` nest deeper than ``MAX_NESTING``."""
    depth = nesting(value.reshape(-1), depths)
    if depth > MAX_NESTING:
        raise NotSymbolic(
            f"{TOO_DEEP} (from {target} on, the formulas nest {depth} deep; sympy takes "
            f"{MAX_NESTING})"
        )


def symbols_for(name: str, shape: tuple[int, ...], taken: set[str]) -> np.ndarray:
    """An array of real symbols named after their elements: x_0, W_1_2, or x for a scalar;
    an element's name in ``taken`` is followed by underscores until it is not (and is added)."""
    cells = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        label = "_".join([name, *map(str, index)])
        while index and label in taken:
            label += "_"
        taken.add(label)
        cells[index] = sp.Symbol(label, real=True)
    return cells


def symbol_arrays(shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """Each input's array of symbols (``symbols_for``), no two alike: sympy takes symbols of
    one name for one, so beside an input named x_0, the first element of x is x_0_."""
    taken = set(shapes)
    return {name: symbols_for(name, shape, taken) for name, shape in shapes.items()}


class Arrays:
    """The interpreter's domain of formulas: a value is an object array of sympy expressions,
    so indexing, broadcasting, sums and matrix products keep their usual meaning."""

    def __init__(self, env: dict, groups: dict):
        self.env = env
        self.groups = groups

    def const(self, node: Const) -> np.ndarray:
        return np.asarray(number(node.value), dtype=object)

    def name(self, node: Name) -> np.ndarray:
        return self.ref(node.name)

    def index(self, node: Index, base: np.ndarray) -> np.ndarray:
        return np.asarray(base[node.items], dtype=object)

    def call(self, node: Call, args: list) -> np.ndarray:
        op = OPS[node.op]
        if not callable(op.symbolic):  # None, or the reason it has none
            reason = f": {op.symbolic}" if op.symbolic else ""
            raise NotSymbolic(f"{node.op} has no symbolic form here{reason}")
        if op.operator == "[]=" and len(node.args) > 2:  # y[x > 0] = ...: a tensor index
            raise NotSymbolic(f"{node.op} has no symbolic form here: {_INDEX_NOT_SYMBOLIC}")
        return np.asarray(op.symbolic(*op.arranged(args, node.params)), dtype=object)

    def ref(self, name: str) -> np.ndarray:
        from ..lang.statement import element_of

        if name in self.env:
            return self.env[name]
        if name in self.groups:
            return self.group(name)
        parts = element_of(name)
        if parts and parts[0] in self.env:
            return np.asarray(self.env[parts[0]][parts[1]], dtype=object)
        raise NotSymbolic(f"{name} has no value")

    def group(self, base: str) -> np.ndarray:
        elements = [
            self.env[e] if e is not None else np.asarray(sp.Integer(0), dtype=object)
            for e in self.groups[base]
        ]
        return np.stack(elements)


def symbolic_values(program, arrays: dict, targets: list[str], of: str) -> tuple[np.ndarray, dict]:
    """The output as an object array of sympy expressions in the targets' symbols."""
    if program.TRACED:
        from ..lang.program import NO_FORMULAS

        raise NotSymbolic(NO_FORMULAS)
    symbols = symbol_arrays({n: np.shape(a) for n, a in arrays.items() if n in targets})
    env = {
        name: symbols[name] if name in symbols else constant_array(np.asarray(a, dtype=float))
        for name, a in arrays.items()
    }
    arrays_of = Arrays(env, program.groups())
    depths: dict = {}
    for assignment in program.assignments:
        if assignment.ir is not None:
            value = evaluate(assignment.ir, arrays_of)
            _check_nesting(assignment.target, np.asarray(value, dtype=object), depths)
            env[assignment.target] = value
    output = env[of] if of in env else arrays_of.ref(of)
    return output, symbols


@_or_reason
def symbolic_jacobian(bound, of: str, targets: list[str]):
    """(name -> exact Jacobian evaluated at the point, None) or (None, why not)."""
    output, symbols = _formulas(bound, of, targets)
    point = {
        symbol: float(value)
        for t in targets
        for symbol, value in zip(symbols[t].reshape(-1), bound.arrays[t].reshape(-1))
    }
    jacobians = {}
    for t in targets:
        flat_symbols = symbols[t].reshape(-1)
        matrix = np.empty((output.size, flat_symbols.size))
        for i, expression in enumerate(output.reshape(-1)):
            for j, symbol in enumerate(flat_symbols):
                derivative = sp.diff(sp.sympify(expression), symbol)
                matrix[i, j] = _evaluate(derivative, point)
        jacobians[t] = matrix.reshape(output.shape + bound.arrays[t].shape)
    return jacobians, None


def _evaluate(expression: sp.Expr, point: dict) -> float:
    """The real value of ``expression`` at ``point``; nan where it has none (1/sqrt(x) at 0,
    where mpmath divides by zero, or a complex infinity)."""
    try:
        return complex(expression.evalf(subs=point)).real
    except (ZeroDivisionError, TypeError, ValueError, OverflowError):
        return math.nan


def _is_elementwise(op) -> bool:
    """Element-wise as a program calls it: a loss is element-wise inside, then reduced."""
    reduces = any(p.kind == REDUCTION for p in op.params)
    return op.batch in (batching.elementwise, batching.mask) and not reduces


def _element_formula(op, values: list):
    """One element's formula: the entry's own (``formula``, for piecewise functions), else
    its array rule on one element."""
    if op.formula is not None:
        return op.formula(sp, *values)
    if not callable(op.symbolic):
        raise NotSymbolic(f"{op.name} has no formula")
    arrays = [np.asarray(v, dtype=object) if isinstance(v, sp.Basic) else v for v in values]
    return np.asarray(op.symbolic(*arrays), dtype=object).item()


def elementwise(name: str) -> bool:
    """Whether ``name`` is an element-wise operation with a formula for one element."""
    op = OPS.get(name)
    return (
        op is not None and _is_elementwise(op) and (op.formula is not None or callable(op.symbolic))
    )


class Scalars:
    """The interpreter's domain of one element's formula, for an element-wise expression:
    each name a real symbol (shown as ``names`` says, else as itself); NotSymbolic for any
    other operation."""

    def __init__(self, names: dict):
        self.names = names

    def const(self, node: Const) -> sp.Expr:
        return number(node.value)

    def name(self, node: Name) -> sp.Expr:
        return sp.Symbol(self.names.get(node.name, node.name), real=True)

    def index(self, node: Index, base: sp.Expr) -> sp.Expr:
        raise NotSymbolic("indexing is not element-wise")

    def call(self, node: Call, args: list) -> sp.Expr:
        if not elementwise(node.op):
            raise NotSymbolic(f"{node.op} is not element-wise")
        return _element_formula(OPS[node.op], [*args, *node.params])


def formula(node: Node, names: dict | None = None) -> sp.Expr:
    """An element-wise expression as a scalar sympy formula (see ``Scalars``)."""
    return evaluate(node, Scalars(names or {}))


def local_derivatives(node: Node, names: dict | None = None) -> dict[str, str] | None:
    """{operand: d expression / d operand as text} for an element-wise expression, the
    operands as the IR names them (``names`` says how each is shown in the formulas); None
    when sympy cannot give them within its time budget."""
    names = names or {}
    shown = {names.get(key, key): key for key in ir.names(node)}

    def derivatives() -> dict[str, str]:
        expression = formula(node, names)
        return {
            shown[symbol.name]: _bare(formula_text(sp.diff(expression, symbol)), shown)
            for symbol in expression.free_symbols
        }

    try:
        return time_budget(derivatives)
    except NotSymbolic:
        return None


def _bare(text: str, names) -> str:
    """``cosh(x @ A)``, not ``cosh((x @ A))``: a name shown in parentheses, as a function's
    argument, needs only the function's own."""
    for name in names:
        if name.startswith("("):
            text = text.replace(f"({name})", name)
    return text


def _formulas(bound, of: str, targets: list[str]):
    """(output expressions, symbols) or raise NotSymbolic with the reason."""
    sizes = sum(bound.arrays[t].size for t in targets)
    if sizes > MAX_ELEMENTS:
        raise NotSymbolic(
            f"the inputs have {sizes} elements (the symbolic limit is {MAX_ELEMENTS})"
        )
    output, symbols = symbolic_values(bound.program, bound.arrays, targets, of)
    if output.size > MAX_ELEMENTS:
        raise NotSymbolic(
            f"the output has {output.size} elements (the symbolic limit is {MAX_ELEMENTS})"
        )
    return output, symbols


SIMPLIFY_OPS = 40  # sympy's simplify can take minutes; it is tried on small formulas only


def formula_text(expression) -> str:
    """A formula as text, simplified when that is quick: when it is small and exact (float
    constants, such as a random matrix's, send simplify's factoring into long searches)."""
    quick = not expression.has(sp.Float) and sp.count_ops(expression) <= SIMPLIFY_OPS
    return sp.sstr(sp.simplify(expression) if quick else expression)


@_or_reason
def jacobian_formulas(bound, of: str, targets: list[str]):
    """(name -> formulas laid out output.shape + input.shape, None), or (None, why not)."""
    output, symbols = _formulas(bound, of, targets)
    result = {}
    for t in targets:
        cells = np.empty(output.shape + symbols[t].shape, dtype=object)
        for out_index in np.ndindex(*output.shape):
            for in_index in np.ndindex(*symbols[t].shape):
                derivative = sp.diff(sp.sympify(output[out_index]), symbols[t][in_index])
                cells[out_index + in_index] = formula_text(derivative)
        result[t] = cells
    return result, None


@_or_reason
def gradient_formulas(bound, of: str, targets: list[str], v=None):
    """(name -> array of formulas of sum_i v_i d out_i / d input, None) or (None, why)."""
    output, symbols = _formulas(bound, of, targets)
    weights = np.ones(output.shape) if v is None else np.asarray(v, dtype=float)
    total = sum(
        (number(float(w)) * sp.sympify(e) for w, e in zip(weights.reshape(-1), output.reshape(-1))),
        sp.Integer(0),
    )
    result = {}
    for t in targets:
        cells = np.empty(symbols[t].shape, dtype=object)
        for index in np.ndindex(*symbols[t].shape):
            cells[index] = formula_text(sp.diff(total, symbols[t][index]))
        result[t] = cells
    return result, None
