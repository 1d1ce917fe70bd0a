"""From checked statement text to sympy trees, and from sympy trees to the program's typed IR
(``ir.py``): numbers, names, calls of the op table's operations and indexing."""

from __future__ import annotations

import cmath
import io
import math
import re
import tokenize

import numpy as np
import sympy as sp
from sympy.parsing.sympy_parser import parse_expr, standard_transformations

from . import functions as F
from . import ir
from .check_expressions import ENCODED, IMAGINARY_UNIT
from .validate import Checked

_SPECIAL_FUNCTIONS = ("_index", "_slice", "_list", "_setitem", "_tuple", "_titem")
_GLOBALS = {
    "__builtins__": {},
    **{name: getattr(sp, name) for name in ("Integer", "Rational", "Symbol", "Mul", "Add", "Pow")},
    # sympy would read 0.1 as a decimal of 15+ digits; read it as Python does, exactly
    "Float": lambda text: sp.Float(float(text)),
}
# The characters a string literal's name holds as '_' codes (validate's encoding)
_CODES = {code[1]: character for character, code in ENCODED.items()}
_DECODED = re.compile(r"_([" + "".join(_CODES) + "])")
# Every name of the text is renamed for sympy's parser to ``_n0``, ``_n1``, ... (names a
# program cannot write), bound to the Symbol or Function it stands for: the parser then sees
# none of the program's own names, which could be those it calls to make numbers (Integer,
# Float, Symbol) or begin like them (αSymbol), or be read by Python's NFKC rule as another.
# Arithmetic on numbers only (2*3, pi/2) is done here, as Python would, so that the run sees a
# number and not a float64 tensor; a result that is not finite is left to the run to report.
# Which operations fold is the op table's ``fold``.


def to_sympy(checked: Checked) -> sp.Expr:
    """The sympy tree of a checked expression (structure kept: ``evaluate=False``).

    The text has passed the whitelist in ``validate``, and every name in it is bound here to
    a sympy Symbol or Function under a name of the parser's own, so sympy's parser sees
    nothing but arithmetic and calls.
    """
    expression = checked.expression
    assert expression is not None  # a checked statement without a constructor has one
    local: dict[str, object] = {}
    placeholders: dict[str, str] = {}

    def placeholder(name: str) -> str:
        if name in ("True", "False"):
            return name
        if name not in placeholders:
            placeholders[name] = f"_n{len(placeholders)}"
            local[placeholders[name]] = _meaning(name)
        return placeholders[name]

    text = _rename(expression, placeholder)
    return parse_expr(
        text,
        local_dict=local,
        global_dict=dict(_GLOBALS),
        evaluate=False,
        transformations=standard_transformations,
    )


def _meaning(name: str) -> sp.Basic | type[sp.Function]:
    """What a name of the checked text stands for in sympy."""
    if name == "e":
        return sp.E
    if name == "_inf":  # a float literal too large to be finite (see validate)
        return sp.oo
    if name == "pi":
        return sp.pi
    if name == IMAGINARY_UNIT:
        return sp.I
    if name in F.FUNCTIONS or name in _SPECIAL_FUNCTIONS:
        return sp.Function(name)
    return sp.Symbol(name)


_SPELLINGS = {sp.E: "e", sp.oo: "_inf", sp.pi: "pi", sp.I: IMAGINARY_UNIT}


def written(text: str, local: dict) -> str:
    """The text handed to sympy's parser with each placeholder back to the name the checked
    text wrote (the inverse of ``to_sympy``'s renaming), for messages and for tests that watch
    what the parser is given."""

    def spelling(name: str) -> str:
        meaning = local.get(name)
        if meaning is None:
            return name
        if meaning in _SPELLINGS:
            return _SPELLINGS[meaning]
        return meaning.name if isinstance(meaning, sp.Symbol) else meaning.__name__

    return _rename(text, spelling)


def _rename(text: str, rename) -> str:
    """``text`` with each name token (as Python's tokenizer, which sympy's parser follows,
    reads them) replaced by ``rename(name)``."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    lines = text.splitlines(keepends=True) or [""]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    pieces, position = [], 0
    for token in tokens:
        if token.type != tokenize.NAME:
            continue
        start = offsets[token.start[0] - 1] + token.start[1]
        end = offsets[token.end[0] - 1] + token.end[1]
        pieces += [text[position:start], rename(token.string)]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _literal(arg: sp.Basic):
    """A dim, flag, number, None, reduction or tuple of dims written as an argument."""
    if isinstance(arg, sp.Function) and type(arg).__name__ == "_tuple":
        return tuple(int(a) for a in arg.args)
    if arg is sp.true or arg is sp.false:
        return bool(arg)
    if isinstance(arg, sp.Symbol):
        if arg.name == "_none":
            return None
        if arg.name.startswith("_s_"):  # a string, encoded as a name by validate
            return _DECODED.sub(lambda m: _CODES[m.group(1)], arg.name[3:])
    if arg.is_Integer:
        return int(arg)
    if arg.is_Number:
        return float(arg)
    raise ValueError(f"not a literal: {arg}")


def _number(expr: sp.Basic) -> float | None:
    """The value of a number (``2``, ``-0.5``, ``pi``, ``e``), else None."""
    if expr.is_Number or isinstance(expr, sp.NumberSymbol):
        return float(expr)
    return None


_WHOLE = 2**53  # a whole number written in the program stays a whole number up to here


def to_ir(expr: sp.Basic) -> ir.Node:
    """Translate a sympy tree into IR nodes.

    The checked text holds only numbers, names and calls (operators were re-emitted as
    calls), so the tree holds only numbers, symbols and functions.
    """
    if expr.is_Integer and abs(int(expr)) <= _WHOLE:  # 2, not 2.0: an int64 tensor's operand
        return ir.Const(int(expr))
    if expr is sp.I:  # the imaginary unit of a literal 2j
        return ir.Const(1j)
    number = _number(expr)
    if number is not None:
        return ir.Const(number)
    if isinstance(expr, sp.Symbol):
        return ir.Name(expr.name)
    if isinstance(expr, sp.Function):
        return _call(type(expr).__name__, expr.args)
    raise ValueError(f"cannot translate {sp.srepr(expr)}")


def _call(name: str, args: tuple) -> ir.Node:
    base_e = F.FUNCTIONS[name].extra.get("base_e") if name in F.FUNCTIONS else None
    if base_e is not None and args[0] == sp.E:  # e ** x is exp(x)
        return _folded(ir.Call(base_e, (to_ir(args[1]),)))
    if name == "_index":
        if any(_special(a, "_titem") or _special(a, "_tuple") for a in args[1:]):
            return _tensor_index(args)
        return ir.Index(to_ir(args[0]), tuple(_index_item(a) for a in args[1:]))
    if name == "_setitem":  # y[index] = value; y[x > 0] = value: the tensors are operands
        slot = F.OPERATORS["[tensor]"].extra["slot"]
        tensors = [to_ir(a.args[0]) for a in args[2:] if _special(a, "_titem")]
        items = tuple(slot if _special(a, "_titem") else _index_item(a) for a in args[2:])
        written = (to_ir(args[0]), to_ir(args[1]), *tensors)
        return ir.Call(F.OPERATORS["[]="].name, written, items)
    function = F.FUNCTIONS[name]
    operands: list[ir.Operand] = []
    params = []
    for i, arg in enumerate(args):
        kind = function.params[min(i, len(function.params) - 1)].kind
        if kind in (F.TENSOR, F.VAR_TENSORS):
            operands.append(to_ir(arg))
        elif kind == F.OPT_TENSOR:  # None: the operand is left out
            absent = isinstance(arg, sp.Symbol) and arg.name == "_none"
            operands.append(None if absent else to_ir(arg))
        elif kind == F.TENSORS:
            operands.append(tuple(to_ir(a) for a in arg.args))
        else:
            params.append(_literal(arg))
    call = ir.Call(name, tuple(operands), tuple(params))
    return _folded(call) if function.fold else call


def _folded(call: ir.Call) -> ir.Node:
    """``Const(value)`` for arithmetic on constants with a finite result, else ``call``."""
    constants = [arg.value for arg in call.args if isinstance(arg, ir.Const)]
    if len(constants) == len(call.args):
        forward = F.FUNCTIONS[call.op].forward
        assert forward is not None  # only primitives fold
        if call.op == F.OPERATORS["*"].name and 1j in constants and len(constants) == 2:
            # a literal 2j is 2 * I to sympy; Python reads it as complex(0, 2), also where the
            # number is beyond float64 (1e400j: complex(0, inf), where inf * 1j has a NaN)
            imaginary = constants[1 - constants.index(1j)]
            if not isinstance(imaginary, complex):
                return ir.Const(complex(0.0, imaginary))
        if any(isinstance(c, complex) for c in constants):  # 1 + 2j: a complex number
            with np.errstate(all="ignore"):
                number = complex(forward(*map(np.complex128, constants)))
            if cmath.isfinite(number):
                return ir.Const(number)
            return call
        with np.errstate(all="ignore"):
            value = float(forward(*(np.float64(c.real) for c in constants)))  # none is complex
        if math.isfinite(value):
            return ir.Const(value)
    return call


def _special(arg: sp.Basic, name: str) -> bool:
    return isinstance(arg, sp.Function) and type(arg).__name__ == name


def _tensor_index(args: tuple) -> ir.Call:
    """``x[idx]``, ``x[x > 0]``, ``x[:, [0, 2]]``: a call of the operation of the language's
    ``[tensor]``, its operands the base and the index's tensors, its options the layout (a
    tensor's place in it is its slot)."""
    op = F.OPERATORS["[tensor]"]
    slot = op.extra["slot"]
    operands = [to_ir(args[0])]
    layout: list[ir.Option] = []
    for arg in args[1:]:
        if _special(arg, "_titem"):
            operands.append(to_ir(arg.args[0]))
            layout.append(slot)
        else:
            layout.append(_index_item(arg))
    return ir.Call(op.name, tuple(operands), tuple(layout))


def _index_item(arg: sp.Basic) -> ir.IndexItem:
    if isinstance(arg, sp.Function) and type(arg).__name__ == "_slice":
        return slice(*(_literal(a) for a in arg.args))
    if isinstance(arg, sp.Symbol):
        return {"_ellipsis": Ellipsis, "_newaxis": None}[arg.name]
    return _literal(arg)
