"""``gradcli export``: the program as code of another system, computing the same output and
its Jacobian with respect to the inputs that require grad (--wrt), at the given point.

- ``torch``: the statements written with PyTorch's functions (``ops/exporting.py`` says how
  each entry is spelled), as a function of the inputs differentiated by
  ``torch.autograd.functional.jacobian``;
- ``numpy``, ``jax``, ``sympy``: the formulas of the output's elements, worked out by the
  entries' symbolic rules (``symbolic.py``), and of their derivatives (sympy's ``diff``;
  JAX differentiates the formulas itself); an operation without a symbolic rule is refused;
- ``latex``: the output's formulas and the transposed Jacobian Jᵀ of partial derivatives, as
  the seed post writes them, then its value at the point.

Scripts print one JSON object: the output's name, its value and each Jacobian, laid out
output.shape + input.shape as ``gradcli jacobian --format json`` does.
"""

from __future__ import annotations

import builtins
import keyword
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..base import bounds, deadline
from ..base.errors import GradcliError, listing
from ..lang import functions as F
from ..lang.ir import Call, Const, Name, evaluate
from ..lang.validate import element_of
from ..ops.exporting import (
    RANDOM,
    RESERVED,
    WITHOUT_OPTIONS,
    WRITTEN_OUT,
    torch_function,
    torch_method,
)
from .compute import Bound, output_of, real_numbers
from .explain.steps import _ATOM, Texts, _arguments, _picked, _wrapped


def export(bound: Bound, of: str | None, wrt: list[str] | None, to: str) -> str:
    """The program as ``to``'s code (see the module docstring)."""
    if bound.program.TRACED:  # its statements are Python's, run: none to write out
        raise GradcliError(
            "export writes out a program's statements, and a PyTorch script's program is its "
            "traced graph",
            hint="the script is torch code already: run it with python (or gradcli run)",
        )
    for n, array in bound.arrays.items():  # torch's jacobian takes real numbers only
        real_numbers(n, array)
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    real_numbers(name, out)
    targets = wrt or [n for n in bound.arrays if bound.requires_grad[n]]
    for t in targets:
        if t not in bound.arrays:
            raise GradcliError(
                f"--wrt names {t!r}, which is not an input",
                hint=f"its inputs are: {listing(list(bound.arrays))}",
            )
    if not targets:
        raise GradcliError("no input requires grad", hint="name the inputs with --wrt")
    if to == "torch":
        return torch_script(bound, name, targets)
    return _by_sympy(to, lambda: _FORMULA_WRITERS[to](bound, name, targets))


SYMBOLIC_SECONDS = 60.0  # sympy's time for an export's formulas, unless --timeout says more


def _by_sympy(to: str, write: Callable[[], str]) -> str:
    """``write()``, the formulas' script, within --timeout's deadline (TimedOut) or, with no
    --timeout, within ``SYMBOLIC_SECONDS``: sympy's formulas can grow exponentially (the
    determinant of a 6 x 6 matrix of symbols, a softmax's Jacobian)."""
    left = bounds.budget().left()
    seconds = SYMBOLIC_SECONDS if left is None else left
    with bounds.doing(f"writing sympy's formulas for export --to {to}"):
        try:
            return deadline.run_within(seconds, write)
        except deadline.TimeUp:
            bounds.tick()  # TimedOut, when it was --timeout's deadline
            raise GradcliError(
                f"export --to {to} stopped after {seconds:g} s, the time given to sympy's "
                "formulas: they grow quickly with the number of elements and operations",
                hint=f"allow more with --timeout SECONDS (e.g. --timeout {4 * seconds:g}), "
                "or export --to torch, which needs no formulas",
            ) from None


def _header(bound: Bound, to: str, name: str, targets: list[str]) -> list[str]:
    program = bound.program.source.strip().replace("\\", "\\\\").replace('"""', "'''")
    return [
        f'"""gradcli export --to {to}: {name} and its Jacobian with respect to '
        f"{', '.join(targets)}, printed as JSON.",
        "",
        "The program:",
        "",
        *("    " + line for line in program.splitlines()),
        '"""',
    ]


# -- PyTorch ---------------------------------------------------------------------------------------


# Python's own names: a script gives a value none of them (a value named print or float would
# hide the function the script calls)
_PYTHON = frozenset(dir(builtins)) | frozenset(keyword.kwlist)


class _Names:
    """The Python names of a script's values: each program name as itself, unless the script
    needs the name (``reserved``: its modules and its own values; Python's builtins and
    keywords): then followed by underscores until it is no other's (print -> print_). The
    names the script makes from them (jacobian_x, x_v0) are found a free name by ``free``."""

    def __init__(self, names: Iterable[str], reserved: Iterable[str]):
        names = list(dict.fromkeys(names))
        avoid = _PYTHON | set(reserved)
        self.taken: set[str] = {*avoid, *names}
        self.given = {n: self.free(n) if n in avoid else n for n in names}

    def free(self, wanted: str) -> str:
        """``wanted``, followed by underscores until no name of the script has it."""
        name = wanted
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def __getitem__(self, name: str) -> str:
        return self.given[name]

    def base(self, name: str) -> str:
        """The name of the value that ``name`` (y, or y#0: an earlier value of y) is now."""
        return self.given[name.split("#")[0]]


def _torch_names(bound: Bound) -> _Names:
    """The torch script's names of the program's values; y#0, an input y that the program
    assigns again, is y_v0."""
    program = bound.program
    every = [*bound.arrays, *program.targets, *program.groups()]
    names = _Names([n.split("#")[0] for n in every], RESERVED["torch"])
    for n in every:
        if "#" in n:
            base, version = n.split("#", 1)
            names.given[n] = names.free(f"{names[base]}_v{version}")
    return names


def _number(value: float) -> str:
    if math.isfinite(value):
        return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)
    return f"float('{value}')"


def _literal(array: np.ndarray) -> str:
    """An array as nested Python lists, every float in full."""
    if array.ndim == 0:
        item = array.item()
        return str(item) if isinstance(item, (bool, int)) else _number(float(item))
    return "[" + ", ".join(_literal(a) for a in array) + "]"


class _Code:
    """An option written as code, not as a string: torch.int64."""

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text


class TorchTexts(Texts):
    """Program text in PyTorch's spelling: ``torch.sin(x)``, ``F.relu(x)``, ``x.reshape(2, 3)``,
    ``x[0]`` for the element ``x0`` of an input."""

    def __init__(self, vectors: set[str], assigned: set[str], names: _Names):
        self.vectors = vectors  # the inputs and assigned names whose elements a name may be
        self.assigned = assigned
        self.names = names

    def const(self, node: Const) -> tuple[str, int]:
        value = node.value
        text = repr(value) if isinstance(value, complex) else _number(float(value))
        return text, (3 if text.startswith("-") else _ATOM)

    def name(self, node: Name) -> tuple[str, int]:
        parts = element_of(node.name)
        if node.name not in self.assigned and parts and parts[0] in self.vectors:
            return f"{self.names.base(parts[0])}[{parts[1]}]", _ATOM
        return self.names.base(node.name), _ATOM

    def call(self, node: Call, args: list) -> tuple[str, int]:
        op = F.OPS[node.op]
        if op.name in RANDOM:
            raise GradcliError(
                f"export --to torch cannot write {op.name}: torch draws other random numbers "
                "than gradcli",
                hint=f"leave out {op.name} (or give it training=False) to export",
            )
        if op.name in WRITTEN_OUT:  # torch.cbrt: not in torch
            return f"({WRITTEN_OUT[op.name].format(_wrapped(args[0], _ATOM))})", _ATOM
        if op.operator is not None or not op.params:
            return super().call(node, args)
        kinds = [p.kind for p in op.options]  # the rest of a SIZES parameter has none
        params: Any = tuple(
            _Code(f"torch.{value}") if k < len(kinds) and kinds[k] == F.DTYPE else value
            for k, value in enumerate(node.params)
        )
        written = Call(node.op, node.args, params)
        texts = _arguments(written, args)
        alias = WITHOUT_OPTIONS.get(op.name)
        if alias is not None and all(p is None for p in node.params):
            return f"{alias}({texts[0]}){_picked(node)}", _ATOM
        method = torch_method(op)
        if method is not None:
            rest = ", ".join(texts[1:])
            return f"{_wrapped(args[0], _ATOM)}.{method}({rest}){_picked(node)}", _ATOM
        return f"{torch_function(op)}({', '.join(texts)}){_picked(node)}", _ATOM


def _torch_dtype(array: np.ndarray, dtype: str) -> str:
    if array.dtype.kind == "b":
        return "torch.bool"
    if array.dtype.kind in "iu":
        return "torch.int64"
    return f"torch.{dtype}"


def torch_script(bound: Bound, name: str, targets: list[str]) -> str:
    """A PyTorch script computing ``name`` and its Jacobians with respect to ``targets``."""
    dtype = np.dtype(bound.dtype).name
    program = bound.program
    groups = program.groups()
    assigned = set(program.targets) | set(groups)
    names = _torch_names(bound)
    texts = TorchTexts(set(bound.arrays) | assigned, assigned, names)
    lines = [
        *_header(bound, "torch", name, targets),
        "",
        "import json",
        "",
        "import torch",
        "import torch.nn.functional as F",
        "",
        f"torch.set_default_dtype(torch.{dtype})",
        "",
    ]
    for n, array in bound.arrays.items():
        value = _literal(np.asarray(array))
        lines.append(f"{names[n]} = torch.tensor({value}, dtype={_torch_dtype(array, dtype)})")
    parameters = ", ".join(names[t] for t in targets)
    body = [
        f"{names.base(n)} = {names[n]}.clone()"
        for n in bound.arrays
        if "#" in n and n not in targets
    ]
    last_of = {members[-1]: base for base, members in groups.items() if members[-1] is not None}
    for assignment in program.assignments:
        if assignment.ir is None:
            continue
        text, _ = evaluate(assignment.ir, texts)
        is_setitem = isinstance(assignment.ir, Call) and F.OPS[assignment.ir.op].operator == "[]="
        body.append(text if is_setitem else f"{names.base(assignment.target)} = {text}")
        base = last_of.get(assignment.target)
        if base is not None:
            items = ", ".join(names.base(e) if e else "torch.zeros(())" for e in groups[base])
            body.append(f"{names[base]} = torch.stack([{items}])")
    body.append(f"return {names.base(name)}")
    lines += ["", "", f"def program({parameters}):", *("    " + line for line in body)]
    jacobians = ", ".join(f'"{t}": _jacobians[{i}].tolist()' for i, t in enumerate(targets))
    lines += [
        "",
        "",
        f"_inputs = ({parameters},)",
        "_value = program(*_inputs)",
        "_jacobians = torch.autograd.functional.jacobian(program, _inputs)",
        "print(",
        "    json.dumps(",
        f'        {{"output": "{name}", "value": _value.tolist(), "jacobian": {{{jacobians}}}}}',
        "    )",
        ")",
    ]
    return "\n".join(lines) + "\n"


# -- formulas: numpy, JAX, sympy, LaTeX -----------------------------------------------------------


class Formulas:
    """The output's element formulas in the targets' symbols, and their derivatives."""

    def __init__(self, bound: Bound, name: str, targets: list[str], to: str):
        from ..domains.symbolic import NotSymbolic, _formulas

        try:
            output, symbols = _formulas(bound, name, targets)
        except NotSymbolic as exc:
            raise GradcliError(
                f"export --to {to} writes sympy's formulas, and cannot here: {exc}",
                hint="export --to torch writes every operation",
            ) from None
        import sympy as sp

        self.sp = sp
        self.name = name
        self.targets = targets
        self.shape: tuple[int, ...] = output.shape
        self.symbols = {t: list(symbols[t].reshape(-1)) for t in targets}
        self.outputs = [sp.sympify(e) for e in output.reshape(-1)]
        # the code's names of the inputs and symbols: a script's own, Python's and (parsed by
        # the sympy script) sympy's are taken by others; LaTeX is not run, and keeps them all
        self.names = _Names(targets, ())
        if to != "latex":
            reserved = RESERVED[to] | (set(dir(sp)) if to == "sympy" else set())
            every = [s.name for t in targets for s in self.symbols[t]]
            self.names = _Names([*targets, *every], reserved)
            renamed = {
                s: sp.Symbol(self.names[s.name], real=True)
                for s in (symbol for t in targets for symbol in self.symbols[t])
                if self.names[s.name] != s.name
            }
            self.symbols = {t: [renamed.get(s, s) for s in self.symbols[t]] for t in targets}
            self.outputs = [e.xreplace(renamed) for e in self.outputs]
        self._derivatives = {t: self._differentiated(t) for t in targets}
        # simplify's time grows quickly with the formulas' number and size (a softmax of 16
        # elements: 4 minutes), so it is tried when they are few and small together; counted,
        # not timed, so that the same program always gives the same text
        every = [*self.outputs, *(d for t in targets for row in self._derivatives[t] for d in row)]
        if sum(sp.count_ops(e) for e in every) <= SIMPLIFY_TOTAL:
            self.outputs = [_tidy(e) for e in self.outputs]
            self._derivatives = {
                t: [[_tidy(d) for d in row] for row in self._differentiated(t)] for t in targets
            }
        self.shapes = {t: symbols[t].shape for t in targets}
        self.point = {
            s: float(v)
            for t in targets
            for s, v in zip(self.symbols[t], np.asarray(bound.arrays[t]).reshape(-1))
        }

    def _differentiated(self, target: str) -> list[list[Any]]:
        return [[self.sp.diff(e, s) for s in self.symbols[target]] for e in self.outputs]

    def derivatives(self, target: str) -> list[list[Any]]:
        """d output[i] / d target[j], by output element i and input element j."""
        return self._derivatives[target]


SIMPLIFY_OPS = 40  # simplify is tried on small exact formulas only (see symbolic.formula_text)
SIMPLIFY_TOTAL = 300  # ... and when an export's formulas have this many operations at most


def _tidy(expression: Any) -> Any:
    import sympy as sp

    quick = not expression.has(sp.Float) and sp.count_ops(expression) <= SIMPLIFY_OPS
    return sp.simplify(expression) if quick else expression


def _unpack(formulas: Formulas, target: str, module: str) -> list[str]:
    """The line that names the elements of an input by their symbols (none for no elements)."""
    names = ", ".join(str(s) for s in formulas.symbols[target])
    parameter = formulas.names[target]
    return [f"({names},) = {module}.asarray({parameter}, dtype=float).reshape(-1)"] if names else []


def _code_script(formulas: Formulas, to: str, bound: Bound) -> str:
    """numpy or JAX: functions of the inputs computing the formulas (JAX: and jacfwd)."""
    from sympy.printing.numpy import JaxPrinter, NumPyPrinter

    printer = NumPyPrinter() if to == "numpy" else JaxPrinter()
    module = "numpy" if to == "numpy" else "jax.numpy"
    targets = formulas.targets
    names = formulas.names
    parameters = ", ".join(names[t] for t in targets)
    unpack = [line for t in targets for line in _unpack(formulas, t, module)]

    def array(expressions: list[Any], shape: tuple[int, ...]) -> str:
        items = ", ".join(_printed(printer, e, to) for e in expressions)
        return f"{module}.array([{items}], dtype=float).reshape({shape!r})"

    body = ["", "", f"def program({parameters}):", *("    " + u for u in unpack)]
    body.append(f"    return {array(formulas.outputs, formulas.shape)}")
    jacobians = []
    for i, t in enumerate(targets):
        if to == "numpy":
            flat = [d for row in formulas.derivatives(t) for d in row]
            function = names.free(f"jacobian_{names[t]}")
            body += ["", "", f"def {function}({parameters}):", *("    " + u for u in unpack)]
            body.append(f"    return {array(flat, formulas.shape + formulas.shapes[t])}")
            jacobians.append(f'"{t}": {function}(*_inputs).tolist()')
        else:
            jacobians.append(f'"{t}": jax.jacfwd(program, argnums={i})(*_inputs).tolist()')
    imports = ["import json", ""]
    if to == "jax" and "math" in printer.module_imports:
        functions = listing(sorted(printer.module_imports["math"]))
        raise GradcliError(
            f"export --to jax cannot write {functions}: sympy writes them with Python's math "
            "module, which JAX cannot differentiate",
            hint="export --to numpy or --to torch writes them",
        )
    if to == "jax":
        imports += [
            "import jax",
            "import jax.numpy",
            "",
            'jax.config.update("jax_enable_x64", True)',
        ]
    for name in sorted(printer.module_imports):
        if name not in ("numpy", "jax", "jax.numpy"):
            imports.append(f"import {name}")
    if to == "numpy":
        imports.append("import numpy")
    points = [
        f"{names[t]} = {module}.array({_literal(np.asarray(bound.arrays[t]))}, dtype=float)"
        for t in targets
    ]
    tail = [
        "",
        "",
        *points,
        f"_inputs = ({parameters},)",
        "_value = program(*_inputs)",
        "print(",
        "    json.dumps(",
        f'        {{"output": "{formulas.name}", "value": _value.tolist(), '
        f'"jacobian": {{{", ".join(jacobians)}}}}}',
        "    )",
        ")",
    ]
    header = _header(bound, to, formulas.name, targets)
    return "\n".join([*header, "", *imports, *body, *tail]) + "\n"


def _printed(printer: Any, expression: Any, to: str) -> str:
    """A formula as ``to``'s code; a function the printer cannot write is refused."""
    from sympy.printing.codeprinter import PrintMethodNotImplementedError

    try:
        return str(printer.doprint(expression))
    except PrintMethodNotImplementedError:
        missing = sorted({type(f).__name__ for f in expression.atoms(_function_class())})
        unwritten = [f for f in missing if not printer.known_functions.get(f)]
        raise GradcliError(
            f"export --to {to} cannot write {listing(unwritten or missing)}: sympy's "
            f"{to} printer has no form for it",
            hint="export --to torch writes every operation",
        ) from None


def _function_class() -> Any:
    import sympy as sp

    return sp.Function


def numpy_script(bound: Bound, name: str, targets: list[str]) -> str:
    return _code_script(Formulas(bound, name, targets, "numpy"), "numpy", bound)


def jax_script(bound: Bound, name: str, targets: list[str]) -> str:
    return _code_script(Formulas(bound, name, targets, "jax"), "jax", bound)


def sympy_script(bound: Bound, name: str, targets: list[str]) -> str:
    """A sympy script: the formulas, their derivatives by sympy.diff, both at the point."""
    formulas = Formulas(bound, name, targets, "sympy")
    lines = [
        *_header(bound, "sympy", name, targets),
        "",
        "import json",
        "",
        "import numpy",
        "import sympy",
        "",
    ]
    everything = " ".join(str(s) for t in targets for s in formulas.symbols[t])
    made = f'sympy.symbols("{everything}", real=True, seq=True)' if everything else "()"
    lines.append(f"symbols = {made}")
    lines.append("names = {str(s): s for s in symbols}")
    for t in targets:
        listed = ", ".join(f'names["{s}"]' for s in formulas.symbols[t])
        lines.append(f"{formulas.names[t]} = [{listed}]")
    texts = ",\n".join(f"        {str(e)!r}" for e in formulas.outputs)
    lines += [
        "output = [",
        "    sympy.parse_expr(text, local_dict=names)",
        "    for text in [",
        texts,
        "    ]",
        "]",
        "point = {",
        *(f'    names["{s}"]: {_number(v)},' for s, v in formulas.point.items()),
        "}",
        "",
        "",
        "def at_point(expression):",
        '    """The real value of a formula at the point (nan where it has none)."""',
        "    try:",
        "        return complex(expression.evalf(subs=point)).real",
        "    except (TypeError, ValueError, ZeroDivisionError):",
        '        return float("nan")',
        "",
        "",
        f"shape = {formulas.shape!r}",
        "value = numpy.array([at_point(f) for f in output]).reshape(shape)",
        "jacobian = {}",
    ]
    for t in targets:
        shape = formulas.shape + formulas.shapes[t]
        lines += [
            f"derivatives = [[sympy.diff(f, s) for s in {formulas.names[t]}] for f in output]",
            f'jacobian["{t}"] = numpy.array(',
            "    [[at_point(d) for d in row] for row in derivatives]",
            f").reshape({shape!r}).tolist()",
        ]
    lines += [
        f'print(json.dumps({{"output": "{name}", "value": value.tolist(), "jacobian": jacobian}}))'
    ]
    return "\n".join(lines) + "\n"


def _matrix(rows: list[list[str]]) -> str:
    body = r" \\ ".join(" & ".join(row) for row in rows)
    return r"\begin{pmatrix} " + body + r" \end{pmatrix}"


def latex(bound: Bound, name: str, targets: list[str]) -> str:
    """The output's formulas, then Jᵀ as the seed post writes it: the matrix of partial
    derivatives d y_j / d x_i (a row per input element), its formulas and its value."""
    formulas = Formulas(bound, name, targets, "latex")
    sp = formulas.sp
    elements = [
        sp.Symbol("_".join([name, *map(str, i)])) if formulas.shape else sp.Symbol(name)
        for i in np.ndindex(*formulas.shape)
    ]
    lines = [r"\begin{aligned}"]
    lines += [f"{sp.latex(y)} &= {sp.latex(e)} \\\\" for y, e in zip(elements, formulas.outputs)]
    lines[-1] = lines[-1].removesuffix(" \\\\")
    lines.append(r"\end{aligned}")
    for t in targets:
        derivatives = formulas.derivatives(t)
        inputs = formulas.symbols[t]
        partials = [
            [rf"\frac{{\partial {sp.latex(y)}}}{{\partial {sp.latex(x)}}}" for y in elements]
            for x in inputs
        ]
        symbolic = [
            [sp.latex(derivatives[j][i]) for j in range(len(elements))] for i in range(len(inputs))
        ]
        point = ", ".join(f"{sp.latex(x)} = {_number(formulas.point[x])}" for x in inputs)
        values = [
            [_number(_at(derivatives[j][i], formulas.point)) for j in range(len(elements))]
            for i in range(len(inputs))
        ]
        left = (
            f"J_{{{sp.latex(sp.Symbol(t))}}}^{{\\mathsf{{T}}}}"
            if len(targets) > 1
            else r"J^{\mathsf{T}}"
        )
        lines += [
            "",
            r"\[",
            f"{left} = {_matrix(partials)} = {_matrix(symbolic)}",
            r"\]",
            r"\[",
            f"{left}\\Big|_{{{point}}} = {_matrix(values)}",
            r"\]",
        ]
    return "\n".join(lines) + "\n"


def _at(expression: Any, point: dict) -> float:
    try:
        return complex(expression.evalf(subs=point)).real
    except (TypeError, ValueError, ZeroDivisionError):
        return math.nan


_FORMULA_WRITERS = {
    "numpy": numpy_script,
    "jax": jax_script,
    "sympy": sympy_script,
    "latex": latex,
}
