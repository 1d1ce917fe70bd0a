"""From checked statement text to sympy trees, and from sympy trees to the program's IR.

The IR is plain lists, so a parsed program can be cached as JSON and run without sympy:

    ["const", 2.0]                      a number
    ["ref", "x"]                        a name
    ["call", "mean", [arg, ...]]        a function; arguments are IR, ["list", [IR, ...]]
                                        or ["lit", value] for dims, flags and reductions
    ["index", base, [item, ...]]        base[items]; an item is an int, [start, stop, step]
                                        (ints or null), "..." or null (a new axis)
"""

from __future__ import annotations

import re

import sympy as sp
from sympy.parsing.sympy_parser import parse_expr, standard_transformations

from . import functions as F
from .validate import Checked

_SPECIAL_FUNCTIONS = ("_index", "_slice", "_list")
_GLOBALS = {
    "__builtins__": {},
    **{
        name: getattr(sp, name)
        for name in ("Integer", "Float", "Rational", "Symbol", "Mul", "Add", "Pow")
    },
}
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def to_sympy(checked: Checked) -> sp.Expr:
    """The sympy tree of a checked expression (structure kept: ``evaluate=False``).

    The text has passed the whitelist in ``validate``, and every name in it is bound here to
    a sympy Symbol or Function, so sympy's parser sees nothing but arithmetic and calls.
    """
    text = checked.expression
    local = {}
    for name in set(_IDENTIFIER.findall(text)):
        if name in ("True", "False"):
            continue
        if name == "e":
            local[name] = sp.E
        elif name == "_inf":  # a float literal too large to be finite (see validate)
            local[name] = sp.oo
        elif name == "pi":
            local[name] = sp.pi
        elif name in F.FUNCTIONS or name in _SPECIAL_FUNCTIONS:
            local[name] = sp.Function(name)
        else:
            local[name] = sp.Symbol(name)
    return parse_expr(
        text,
        local_dict=local,
        global_dict=dict(_GLOBALS),
        evaluate=False,
        transformations=standard_transformations,
    )


def _literal(arg: sp.Basic):
    """A dim, flag, number, None or reduction written as an argument."""
    if arg is sp.true or arg is sp.false:
        return bool(arg)
    if isinstance(arg, sp.Symbol):
        if arg.name == "_none":
            return None
        if arg.name.startswith("_s_"):
            return arg.name[3:]
    if arg.is_Integer:
        return int(arg)
    if arg.is_Number:
        return float(arg)
    number = _number(arg)
    if number is not None:
        return number
    raise ValueError(f"not a literal: {arg}")


def _number(expr: sp.Basic) -> float | None:
    """The value of a constant subtree, like ``-1*2`` or ``pi/2``, else None."""
    if expr.free_symbols or expr.atoms(sp.Function):
        return None
    return float(expr.evalf())


def _binary(name: str, a: list, b: list) -> list:
    return ["call", name, [a, b]]


def _product(factors: list[list]) -> list:
    result = factors[0]
    for factor in factors[1:]:
        result = _binary("mul", result, factor)
    return result


def _signed_term(term: sp.Basic) -> tuple[bool, list]:
    """(is it negated, IR of its magnitude) for one term of a sum."""
    if term.is_Number and term < 0:
        return True, ["const", float(-term)]
    if isinstance(term, sp.Mul) and any(a == -1 for a in term.args):
        rest = list(term.args)
        rest.remove(sp.Integer(-1))
        magnitude = to_ir(rest[0] if len(rest) == 1 else sp.Mul(*rest, evaluate=False))
        return True, magnitude
    return False, to_ir(term)


def to_ir(expr: sp.Basic) -> list:
    """Translate a sympy tree into engine operations (see the module docstring)."""
    number = _number(expr)
    if number is not None:
        return ["const", number]
    if isinstance(expr, sp.Symbol):
        return ["ref", expr.name]
    if isinstance(expr, sp.Add):
        result = None
        for negative, magnitude in (_signed_term(t) for t in expr.args):
            if result is None:
                result = ["call", "neg", [magnitude]] if negative else magnitude
            else:
                result = _binary("sub" if negative else "add", result, magnitude)
        return result
    if isinstance(expr, sp.Mul):
        numerator, denominator, negative = [], [], False
        for factor in expr.args:
            if factor == -1:
                negative = not negative
            elif isinstance(factor, sp.Pow) and factor.exp == -1:
                denominator.append(to_ir(factor.base))
            else:
                numerator.append(to_ir(factor))
        result = _product(numerator) if numerator else ["const", 1.0]
        if denominator:
            result = _binary("div", result, _product(denominator))
        return ["call", "neg", [result]] if negative else result
    if isinstance(expr, sp.Pow):
        if expr.base == sp.E:
            return ["call", "exp", [to_ir(expr.exp)]]
        if expr.exp == -1:
            return _binary("div", ["const", 1.0], to_ir(expr.base))
        return _binary("pow", to_ir(expr.base), to_ir(expr.exp))
    if isinstance(expr, sp.Function):
        return _call(type(expr).__name__, expr.args)
    raise ValueError(f"cannot translate {sp.srepr(expr)}")


def _call(name: str, args: tuple) -> list:
    if name == "_index":
        return ["index", to_ir(args[0]), [_index_item(a) for a in args[1:]]]
    function = F.FUNCTIONS[name]
    converted = []
    for i, arg in enumerate(args):
        kind = function.params[min(i, len(function.params) - 1)].kind
        if kind == F.TENSOR:
            converted.append(to_ir(arg))
        elif kind == F.TENSORS:
            converted.append(["list", [to_ir(a) for a in arg.args]])
        else:
            converted.append(["lit", _literal(arg)])
    return ["call", name, converted]


def _index_item(arg: sp.Basic):
    if isinstance(arg, sp.Function) and type(arg).__name__ == "_slice":
        return [_literal(a) for a in arg.args]
    if isinstance(arg, sp.Symbol):
        return {"_ellipsis": "...", "_newaxis": None}[arg.name]
    return _literal(arg)
