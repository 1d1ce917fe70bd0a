"""The validator's checks of a call: which operation it calls, its arguments, its results.

``CallChecker`` is the whole checker of an expression (``ExpressionChecker`` walks the rest):
a call of an operation by gradcli's name or PyTorch's spellings (``torch.sin(x)``,
``F.relu(x)``, ``x.sum(dim=0)``), torch's overloads (``max(x, other)``), an operation with
several results unpacked or picked (``values, indices = max(x, 1)``, ``max(x, 1).values``),
a constructor inside an expression, and each argument bound to its parameter and checked
against its kind (``ArgumentChecker``).
"""

from __future__ import annotations

import ast
import re

from . import functions as F
from . import pytorch, syntax
from .check_expressions import (
    CONSTANTS,
    LARGEST_INT,
    MODULES,
    NOT_LITERAL,
    REFUSED,
    ExpressionChecker,
    Made,
    literal_text,
    literal_value,
    suggest,
)
from .ir import constant_name


class ArgumentChecker(ExpressionChecker):
    """The arguments of a call: bound to the operation's signature in order, each literal
    checked against its kind (a dim, a size, a dtype, an einsum equation, ...)."""

    def bind(
        self, function: F.Function, node: ast.Call, output: tuple[int, int] = (0, 0)
    ) -> list[str]:
        """Arguments in signature order as text; literals checked against their kind;
        ``output`` is which result of an operation with several the call gives (see
        ``F.OUTPUT``)."""
        params = tuple(p for p in function.params if p.kind != F.OUTPUT)
        if function.extra.get("varargs"):  # torch's *tensors: meshgrid(a, b) is meshgrid([a, b])
            node = _gathered(node)
        bound: dict[str, ast.AST] = {}
        rest: list[ast.AST] = []
        positional = function.extra.get("positional")  # torch's order, where it is not ours
        for i, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred):
                raise self.fail(argument, *REFUSED[ast.Starred])
            if positional is not None:
                if i >= len(positional):
                    legacy = any(p.name == "reduction" for p in params)
                    raise self.fail(
                        argument,
                        f"{function.name} takes {len(positional)} positional arguments, as "
                        f"torch's ({', '.join(positional)}); name the others"
                        + (
                            " (torch reads the next one as its deprecated size_average: "
                            f'{function.name}(..., "sum") is the mean there, not the sum)'
                            if legacy
                            else ""
                        ),
                        f"it is {function.signature()}"
                        + ("; e.g. reduction='sum'" if legacy else ""),
                    )
                bound[positional[i]] = argument
            elif i < len(params) and params[i].kind not in _REST:
                bound[params[i].name] = argument
            elif params and params[-1].kind in _REST:
                rest.append(argument)
            else:
                raise self.fail(
                    argument,
                    f"{function.name} has no {_ordinal(i + 1)} argument",
                    f"it is {function.signature()}",
                )
        varargs = function.extra.get("varargs")  # its tensors are never named, as torch's
        for keyword in node.keywords:
            known = [
                p.name
                for p in params
                if p.kind not in _REST and not (varargs and p.kind == F.TENSORS)
            ]
            if keyword.arg is None:
                raise self.fail(
                    keyword.value,
                    "'**' unpacking is not allowed",
                    "name each argument on its own, e.g. sum(x, dim=0)",
                )
            if keyword.arg not in known:
                raise self.fail(
                    keyword.value,
                    f"{function.name} has no argument named {keyword.arg!r}",
                    suggest(keyword.arg, known) or f"it is {function.signature()}",
                )
            if keyword.arg in bound:
                raise self.fail(keyword.value, f"{keyword.arg!r} is given twice")
            bound[keyword.arg] = keyword.value
        texts: list[str] = []
        if len(rest) == 1 and isinstance(rest[0], (ast.Tuple, ast.List)):  # reshape(x, (2, 3))
            rest = list(rest[0].elts)
        for param in params:
            if param.kind == F.SIZES:
                texts.extend(self.literal(a, F.INT, function) for a in rest)
            elif param.kind == F.VAR_TENSORS:  # einsum(equation, a, b)
                if not rest:
                    raise self.fail(
                        node,
                        f"{function.name} needs at least one tensor after its {params[0].name}",
                        f"it is {function.signature()}",
                    )
                texts.extend(self.expression(a) for a in rest)
            elif param.name in bound:
                texts.append(self.argument(bound[param.name], param, function))
            elif param.default is F.REQUIRED:
                raise self.fail(
                    node,
                    f"{function.name} is missing its argument {param.name!r}",
                    f"it is {function.signature()}",
                )
            else:
                texts.append(literal_text(param.default))
        if len(params) < len(function.params):
            texts.append(f"_tuple({output[0]}, {output[1]})")
        return texts

    def argument(self, node: ast.AST, param: F.Param, function: F.Function) -> str:
        if param.kind == F.TENSOR:
            return self.expression(node)
        if param.kind == F.OPT_TENSOR:  # linear(x, w, None): an operand left out
            return "_none" if literal_value(node) is None else self.expression(node)
        if param.kind == F.TENSORS:
            if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
                varargs = function.extra.get("varargs")
                listed = isinstance(node, (ast.List, ast.Tuple))
                raise self.fail(
                    node,
                    f"{function.name} needs "
                    + ("at least one tensor" if varargs and listed else "a list of tensors"),
                    f"write {function.name}(a, b) or {function.name}([a, b])"
                    if varargs
                    else f"write {function.name}([a, b])",
                )
            return f"_list({', '.join(self.expression(e) for e in node.elts)})"
        return self.literal(node, param.kind, function, param.name)

    def literal(self, node: ast.AST, kind: str, function: F.Function, name: str = "size") -> str:
        if kind == F.EQUATION:
            return self.equation(node, function, name)
        listed = kind in (F.DIMS, F.INTS, F.SECTIONS)
        if listed and isinstance(node, (ast.Tuple, ast.List)):  # dim=(0, 1), split(x, [1, 2])
            dims = [literal_value(e) for e in node.elts]
            if not dims or not all(type(d) is int and abs(d) <= LARGEST_INT for d in dims):
                raise self.fail(
                    node,
                    f"{name} of {function.name} must be {kind}",
                    f"it is {function.signature()}",
                )
            return f"_tuple({', '.join(map(str, dims))})"
        if kind == F.OPT_DTYPE and literal_value(node) is None:  # sum(x, dtype=None)
            return literal_text(None)
        if kind in (F.DTYPE, F.OPT_DTYPE):  # torch.long, long or 'int64'
            written = literal_value(node)
            dotted = pytorch.dotted(node) if isinstance(node, ast.expr) else None
            name = (written if isinstance(written, str) else dotted or "").removeprefix("torch.")
            if name not in F.DTYPE_NAMES:
                raise self.fail(
                    node,
                    f"{name} of {function.name} must be {kind}",
                    f"it is {function.signature()}",
                )
            return literal_text(F.DTYPE_NAMES[name])
        value = literal_value(node)
        ok = {
            F.INT: isinstance(value, int) and not isinstance(value, bool),
            F.OPT_INT: value is None or (isinstance(value, int) and not isinstance(value, bool)),
            F.DIMS: value is None or (isinstance(value, int) and not isinstance(value, bool)),
            F.INTS: isinstance(value, int) and not isinstance(value, bool),
            F.PAD_MODE: value in F.PAD_MODES,
            F.SECTIONS: isinstance(value, int) and not isinstance(value, bool),
            F.NUMBER: isinstance(value, (int, float)) and not isinstance(value, bool),
            F.OPT_NUMBER: value is None
            or (isinstance(value, (int, float)) and not isinstance(value, bool)),
            F.BOOL: isinstance(value, bool),
            F.REDUCTION: value in F.REDUCTIONS,
            F.APPROXIMATE: value in F.APPROXIMATIONS,
            F.NORM_ORD: value in ("fro", "nuc")
            or (isinstance(value, (int, float)) and not isinstance(value, bool)),
            F.KL_REDUCTION: value in F.KL_REDUCTIONS,
            F.UPLO: value in F.UPLOS,
            F.QR_MODE: value in F.QR_MODES,
            F.INDEXING: value is None or value in F.INDEXINGS,
            F.ROUNDING_MODE: value in F.ROUNDING_MODES,
        }[kind]
        if value is NOT_LITERAL or not ok:
            raise self.fail(
                node, f"{name} of {function.name} must be {kind}", f"it is {function.signature()}"
            )
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > LARGEST_INT:
            raise self.fail(
                node, f"{name} of {function.name} is too large ({value:.3g})", "no array has it"
            )
        return literal_text(value)

    def equation(self, node: ast.AST, function: F.Function, name: str) -> str:
        """einsum's equation: a string of letters, ',', '->', '...' and spaces only, which
        reaches the parser encoded as a name (never as a string sympy could evaluate)."""
        value = literal_value(node)
        if not isinstance(value, str):
            raise self.fail(
                node,
                f"{name} of {function.name} must be {F.EQUATION}",
                "write it in quotes, e.g. einsum('ij,jk->ik', a, b)",
            )
        bad = _EQUATION_OUTSIDE.search(value.replace("->", "").replace("...", ""))
        if bad is not None or value.count("->") > 1:
            what = f"the character {bad.group()!r}" if bad else "'->' more than once"
            raise self.fail(
                node,
                f"{name} of {function.name} has {what}: it must be {F.EQUATION}",
                "write it as 'ij,jk->ik' ('...' for the dims the letters do not name)",
            )
        return literal_text(value)


class CallChecker(ArgumentChecker):
    """The whole checker: calls of the language's operations, written as gradcli writes them
    or in PyTorch's spellings (``torch.sin(x)``, ``x.sum(0)``, ``F.relu(x)``), the results of
    an operation that gives several, and constructors inside an expression."""

    def resolved(self, node: ast.Call) -> tuple[F.Function | None, ast.Call]:
        """The function ``node`` calls (None: none gradcli has), and the call as a plain
        one (``x.max(1)`` as ``max(x, 1)``)."""
        func = node.func
        if isinstance(func, ast.Attribute):
            prefix = pytorch.dotted(func.value)
            if prefix in F.TORCH_MODULES:
                function = F.lookup(func.attr)
            else:
                function = F.METHODS.get(func.attr) if prefix not in MODULES else None
            if function is not None:
                node = self.torch_call(node, func)
        else:
            function = F.lookup(func.id) if isinstance(func, ast.Name) else None
        return function, node

    def several(self, node: ast.Call) -> bool:
        """Whether ``node`` calls an operation that may give several results (checked as a
        call when it is taken apart)."""
        function, _ = self.resolved(node)
        return function is not None and bool(function.outputs or "count" in function.extra)

    def gives_several(self, node: ast.Call) -> bool:
        """Whether this call gives several results (max(x, 1) does, max(x) does not)."""
        function, plain = self.resolved(node)
        if function is None:
            return False
        function, plain = self.overload(function, plain)
        return self.results(function, plain) is not None

    def call(self, node: ast.Call, pick: str | int | None = None, names: int = 0) -> str:
        """A call as text; ``pick`` the result taken of an operation with several (a field,
        or a position), by one of ``names`` names that unpack them (0: taken alone)."""
        if isinstance(node.func, ast.Attribute):
            node = self.torch_call(node, node.func)
        factor = isinstance(node.func, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript)) or (
            isinstance(node.func, ast.Constant) and type(node.func.value) in (int, float)
        )
        if factor or (isinstance(node.func, ast.Name) and node.func.id in CONSTANTS):
            # 2(x + 1), (x + 1)(x - 1), pi(x): a product without its '*'
            paren = self._utf8.index(b"(", node.func.end_col_offset)
            first, second = self.text(node.col_offset, paren), self.text(paren, node.end_col_offset)
            raise self.statement.error(*syntax.product(first, second, self._chars(paren)))
        if not isinstance(node.func, ast.Name):
            raise self.fail(node, "only named functions can be called", syntax.LANGUAGE_HINT)
        name = node.func.id
        function = F.lookup(name)
        if function is None:
            if pytorch.is_constructor(name):
                return self.constant(name, node)
            raise self.fail(
                node,
                f"unknown function {name!r}",
                self.known_as(name, node)
                or suggest(name, [*F.FUNCTIONS, *F.ALIASES])
                or "see `gradcli functions`",
            )
        function, node = self.overload(function, node)
        output = self.output(function, node, pick, names)
        self.note(function.name, node.col_offset)
        arguments = self.bind(function, node, output)
        return f"{function.name}({', '.join(arguments)})"

    def overload(self, function: F.Function, node: ast.Call) -> tuple[F.Function, ast.Call]:
        """torch's max(x, other) is maximum(x, other): the operation the entry names as its
        ``binary`` form, where the second argument is a tensor (not a dim)."""
        binary = function.extra.get("binary")
        if binary is None:
            return function, node
        second = node.args[1] if len(node.args) > 1 else None
        other = any(k.arg == "other" for k in node.keywords)
        if other or (second is not None and type(literal_value(second)) is not int):
            pairwise = F.lookup(binary)
            assert pairwise is not None
            return pairwise, node
        return function, node

    def results(self, function: F.Function, node: ast.Call) -> int | None:
        """How many results this call of ``function`` gives: None for one tensor, 0 for as
        many as its input's shape makes (split)."""
        if "count" in function.extra:
            return 0
        if not function.outputs:
            return None
        unless = function.extra.get("several_unless_none")
        if unless is not None:
            names = [p.name for p in function.params]
            given = {k.arg: k.value for k in node.keywords}
            given.update(zip(names, node.args))
            if unless not in given or literal_value(given[unless]) is None:
                return None
        return len(function.outputs)

    def output(
        self, function: F.Function, node: ast.Call, pick: str | int | None, names: int
    ) -> tuple[int, int]:
        """(k, names) for the result ``pick`` (a field such as "values", or a position) of a
        call, taken by one of ``names`` names (0: taken alone); an operation with several
        results must be unpacked or have one picked, one with one result must not."""
        count = self.results(function, node)
        written = self.source(node)
        if count is None:
            if pick is None:
                return (0, 0)
            what = f".{pick}" if isinstance(pick, str) else f"[{pick}]"
            raise self.fail(
                node,
                f"{written} gives one tensor: it has no {what}"
                if not names
                else f"{written} gives one tensor, which cannot be unpacked into {names} names",
                ONE_RESULT_HINT,
            )
        fields = function.outputs
        plain = function.extra.get("plain", False)
        several = f"{count} tensors" if count else "a tuple of tensors"
        shown = f" ({', '.join(fields)})" if fields and not plain else ""
        if pick is None:
            take = ", ".join(fields) if fields and not plain else "a, b"
            one = f"{written}.{fields[0]}" if fields and not plain else f"{written}[0]"
            binary = function.extra.get("binary")
            pairwise = "" if binary is None else f"; the {binary} of two tensors is {binary}(a, b)"
            raise self.fail(
                node,
                f"{written} gives {several}{shown}, not one tensor",
                f"unpack them ({take} = {written}) or take one ({one}){pairwise}",
            )
        if isinstance(pick, str):
            if plain or pick not in fields:
                raise self.fail(
                    node,
                    f"{written} has no field {pick!r}",
                    f"it gives {several}{shown}; take one with "
                    + ("[0]" if plain else " or ".join(f".{f}" for f in fields)),
                )
            return (fields.index(pick), 0)
        if count and names and names != count:
            few = names > count
            raise self.fail(
                node,
                f"{'not enough' if few else 'too many'} values to unpack (expected {names}"
                + (f", got {count})" if few else ")"),
                f"{written} gives {several}{shown}",
            )
        if count and not -count <= pick < count:
            raise self.fail(node, f"{written} gives {several}: there is no [{pick}]")
        return (pick % count if count else pick, names)

    def constant(self, name: str, node: ast.Call) -> str:
        """A constructor inside an expression (``x + torch.eye(2)``): a constant, which the
        expression reads by its name (see ``Made``); a constructor that declares an input
        (``requires_grad=True``) must be a statement of its own."""
        for keyword in node.keywords:
            if keyword.arg == "requires_grad" and literal_value(keyword.value) is not False:
                raise self.fail(
                    node,
                    f"{name}(..., requires_grad=True) makes an input: it must be the whole "
                    "right-hand side",
                    f"write a separate statement, e.g. w = torch.{name}(3, requires_grad=True)",
                )
        try:
            source = pytorch.like_source(node)
            dtype = pytorch.dtype(node)
        except pytorch.Refused as exc:
            raise exc.error(self.statement) from None
        if source is not None:
            self.name(source)
        arguments = [self.source(a) for a in node.args]
        arguments += [self.source(k) for k in node.keywords if k.arg != "dtype"]
        hidden = constant_name(self.statement.number, node.lineno, node.col_offset)
        made = Made(hidden, f"{name}({', '.join(arguments)})", dtype)
        self.made.append(made)
        return made.name

    def torch_call(self, node: ast.Call, attribute: ast.Attribute) -> ast.Call:
        """PyTorch's spellings as a plain call: ``torch.sin(x)``, ``F.relu(x)`` and
        ``torch.nn.functional.mse_loss(a, b)`` call the function by its name, a method
        ``x.sum(dim=0)`` calls it with ``x`` first."""
        prefix = pytorch.dotted(attribute.value)
        if prefix in F.TORCH_MODULES:
            known = F.lookup(attribute.attr)
            if known is None and not pytorch.is_constructor(attribute.attr):
                raise self.fail(
                    attribute,
                    f"{prefix}.{attribute.attr} is not an operation gradcli has",
                    suggest(attribute.attr, [*F.FUNCTIONS, *F.ALIASES])
                    or "see `gradcli functions` for the operations gradcli has",
                )
            if known is not None:
                self.in_torch(attribute, prefix)
            other = None if known is None else known.extra.get("linalg_only")
            if other is not None and prefix != "torch.linalg":  # torch.svd is not linalg.svd
                raise self.fail(attribute, f"{prefix}.{attribute.attr} {other[0]}", other[1])
            function = ast.copy_location(ast.Name(attribute.attr, ast.Load()), attribute)
            return ast.copy_location(ast.Call(function, node.args, node.keywords), node)
        method = F.METHODS.get(attribute.attr)
        if method is None and self.grads and prefix not in MODULES and F.lookup(attribute.attr):
            message = f"'Tensor' object has no attribute '{attribute.attr}'"  # x.cbrt()
            raise pytorch.Missing("AttributeError", message, attribute)
        if method is None or prefix in MODULES:
            raise self.fail(attribute, syntax.ATTRIBUTE, self.instead(attribute, node))
        function = ast.copy_location(ast.Name(method.name, ast.Load()), attribute)
        arguments = [attribute.value, *node.args]
        fixed = method.extra.get("dtype_methods", {}).get(attribute.attr)
        if fixed is not None:  # x.long(): to(x, 'int64')
            if node.args or node.keywords:
                raise self.fail(node, f".{attribute.attr}() takes no arguments", "write x.long()")
            arguments.append(ast.copy_location(ast.Constant(fixed), attribute))
        return ast.copy_location(ast.Call(function, arguments, node.keywords), node)

    def in_torch(self, attribute: ast.Attribute, prefix: str) -> None:
        """Refuse ``torch.cbrt`` or ``F.sin``, a function of the language that PyTorch 2.13
        does not have in that module: for ``gradcli run``, torch's AttributeError when the
        statement runs (``pytorch.Missing``), for a program an error saying where it is."""
        module = pytorch.MODULE_OF.get(prefix, prefix)
        name = attribute.attr
        if name in pytorch.torch_has()[module]:
            return
        if self.grads:  # gradcli run: Python raises it there
            message = f"module '{module}' has no attribute '{name}'"
            raise pytorch.Missing("AttributeError", message, attribute)
        where = pytorch.where_torch_has(name)
        hint = (
            f"PyTorch's is {' or '.join(f'{m}.{name}' for m in where)}; or write {name}(...)"
            if where
            else f"{name} is gradcli's own: write {name}(...)"
        )
        raise self.fail(attribute, f"PyTorch 2.13 has no {module}.{name}", hint)

    def known_as(self, name: str, node: ast.Call) -> str | None:
        """How gradcli writes a function known from mathematics or numpy: ``ln(x)`` is
        ``log(x)``; None for other names."""
        joined = ", ".join(self.arguments(node))
        written = _KNOWN_AS.get(name)
        return None if written is None else "write " + written.format(joined)


# How gradcli writes functions known from mathematics or numpy ({} is the arguments)
_KNOWN_AS = {
    "ln": "log({})",
    "sgn": "sign({})",
    "fabs": "abs({})",
}

_REST = (F.SIZES, F.VAR_TENSORS)  # kinds that take the rest of the positional arguments
_EQUATION_OUTSIDE = re.compile(r"[^A-Za-z, ]")  # once '->' and '...' are taken out


def _gathered(node: ast.Call) -> ast.Call:
    """A call of an operation that takes torch's ``*tensors``, its tensors as the one list it
    may also be given: ``meshgrid(a, b)`` as ``meshgrid([a, b])``."""
    args = node.args
    if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        return node
    listed = ast.copy_location(ast.List(list(args), ast.Load()), args[0] if args else node)
    if args:
        listed.end_lineno, listed.end_col_offset = args[-1].end_lineno, args[-1].end_col_offset
    return ast.copy_location(ast.Call(node.func, [listed], node.keywords), node)


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


ONE_RESULT_HINT = "only operations such as max(x, dim), sort, topk and split give several tensors"
