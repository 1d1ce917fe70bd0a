"""The error catalogue: every way gradcli refuses a program, a value or an option, run through
the command line. Each refusal exits 2 with an ``error:`` line that speaks of what the user
wrote: no name of Python's syntax tree, no Python exception, no traceback."""

from __future__ import annotations

import ast
import builtins
import re
import warnings

import pytest

from gradcli.lang.functions import ALIASES, FUNCTIONS
from gradcli.lang.values import CONSTRUCTORS


def _class_names(module, base) -> set[str]:
    with warnings.catch_warnings():  # ast.Num and its kind are deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        values = {name: getattr(module, name) for name in dir(module)}
    return {name for name, v in values.items() if isinstance(v, type) and issubclass(v, base)}


# Whole words, matched with their case: "Call" is a class of ast, "call" an English word; an
# option's own name (--expr) is gradcli's word, not Python's.
FORBIDDEN_WORDS = sorted(
    _class_names(ast, ast.AST) | _class_names(builtins, BaseException) | {"Traceback", "NoneType"}
)
_FORBIDDEN = re.compile(
    r"(?<!--)\b(?:" + "|".join(FORBIDDEN_WORDS) + r")\b|\bast\.|<unknown>|invalid syntax"
)


CALLABLE = {*FUNCTIONS, *ALIASES, *CONSTRUCTORS}


def program(text: str, *more: str) -> list[str]:
    return ["eval", "-e", text, "--x", "1,2", *more]


def alone(text: str) -> list[str]:
    """A program run without values."""
    return ["eval", "-e", text]


def value(text: str, *more: str) -> list[str]:
    return ["eval", "-e", "y = x * 2", "--x", text, *more]


FIRST = "samples/first_example.gc"
EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"

CATALOGUE = [
    # characters outside the language
    program("y = x \u2212 1"),
    program("y = x \u00d7 2"),
    program("y = x\u00b2"),
    program("y = (x + 1)\u00b3"),
    program("y = \u221ax"),
    program("y = x\u200b+1"),
    program("y = x # \u202e"),
    program("y = x\v+ 1"),
    program("y = \uff3f\uff3fimport\uff3f\uff3f('os')"),
    # statements that are not one assignment
    program(""),
    program("# only a comment"),
    program("import os"),
    program("from os import path"),
    program("x + 1"),
    program("y == x"),
    program("y += 1"),
    program("y -= 1"),
    program("y: int = x"),
    program("del x"),
    program("pass"),
    program("return x"),
    program("if x: y = 1"),
    program("if x"),
    program("for i in x: y = i"),
    program("while x"),
    program("def f(x): return x"),
    program("class A: pass"),
    program("with x: y = 1"),
    program("try: y = 1"),
    program("assert x"),
    program("raise x"),
    program("global x"),
    program("lambda x: x"),
    program("y = x = 2"),
    program("y, z = x"),
    program("x[0] = 1"),
    program("x.a = 1"),
    program("_y = x"),
    program("sin = x"),
    program("pi = 3"),
    program("randn = x"),
    program("y x"),
    program("= x"),
    program("y = x; y = 2"),
    program("y = z + 1; z = 3"),
    program("z = sum(y); y0 = x; y1 = x"),
    # operators gradcli does not have
    program("y = x ^ 2"),
    program("y = '%s' % x"),
    program("y = x << 1"),
    program("y = x >> 1"),
    program("y = x & 1"),
    program("y = x | 1"),
    program("y = ~x"),
    program("y = not x"),
    program("y = x and x"),
    program("y = x or x"),
    program("y = x is None"),
    program("y = x is not None"),
    program("y = x in x"),
    program("y = x not in x"),
    # other syntax gradcli does not have
    program("y = 1 if x else 2"),
    program("y = lambda: 1"),
    program("y = [i for i in x]"),
    program("y = {i for i in x}"),
    program("y = {i: i for i in x}"),
    program("y = sum(i for i in x)"),
    program("y = {1: 2}"),
    program("y = {1, 2}"),
    program("y = (z := 2)"),
    program("y = *x,"),
    program("y = [x, x]"),
    program("y = x, x"),
    program("y = f'{x}'"),
    program("y = 'abc'"),
    program("y = b'abc'"),
    program("y = None"),
    program("y = True"),
    program("y = ..."),
    program("y = 1j"),
    program("y = (yield x)"),
    program("y = (yield from x)"),
    program("y = await x"),
    program("y = x.grad"),
    program("y = x.shape"),
    program("y = x.mena()"),
    program("y = x.frobnicate(0)"),
    program("y = np.sin(x)"),
    program("y = math.pi * x"),
    program("y = ().__class__.__bases__[0].__subclasses__()"),
    # names and calls
    program("y = _x"),
    program("y = x * __builtins__"),
    program("y = sin"),
    program("y = ones"),
    program("y = x + ones(2, requires_grad=True)"),
    program("y = x + rand_like(x)"),
    program("y = sinn(x)"),
    program("y = frobnicate(x)"),
    program("y = ln(x)"),
    program("y = fabs(x)"),
    program("y = max(x, 0)"),
    program("y = min(x, 1)"),
    program("y = sort(x)"),
    program("a, b, c = max(x, 0)"),
    program("a, b = sum(x)"),
    program("y = max(x, 0).value"),
    program("y = exec('1')"),
    program("y = __import__('os')"),
    program("y = _index(x, 0)"),
    program("y = 2(x + 1)"),
    program("y = (x + 1)(x - 1)"),
    program("y = pi(x)"),
    program("y = (lambda: 1)()"),
    program("y = 'a'(x)"),
    # arguments
    program("y = exp(x, 2)"),
    program("y = mse_loss(x)"),
    program("y = mean(x, axis=0)"),
    program("y = mean(x, keepdims=True)"),
    program("y = mean(x, 0, dim=1)"),
    program("y = mean(x, dim=1.5)"),
    program("y = mean(x, dim=x)"),
    program("y = mean(x, keepdim=1)"),
    program("y = norm(x, p='fro')"),
    program("y = mse_loss(x, x, reduction='avg')"),
    program("y = stack(x)"),
    program("y = stack([])"),
    program("y = reshape(x, 2.5)"),
    program("y = reshape(x, 1" + "0" * 20 + ")"),
    program("y = sum(x, dim=1" + "0" * 20 + ")"),
    program("y = sum(*x)"),
    program("y = sum(**x)"),
    # indexing
    program("y = x[w]"),
    program("y = x[0.5]"),
    program("y = x[True]"),
    program("y = x[1:'a']"),
    program("y = x[1" + "0" * 30 + "]"),
    # size and depth
    program("y = " + "+".join(["x"] * 300)),
    program("y = " + "(" * 500 + "x" + ")" * 500),
    program("y = " + "-" * 50_000 + "x"),
    program("y = x * 9" + "9" * 5000),
    program("y = x" + " " * 100_001),
    # Python's syntax errors
    program("y = 2x"),
    program("y = 2 x"),
    program("y = 2.5x + 1"),
    program("y = sin x"),
    program("y = sin(x)cos(x)"),
    program("y = x[0 1]"),
    program("y = sum(x y)"),
    program("y = print x"),
    program("y = x +"),
    program("y = x **"),
    program("y ="),
    program("y = (x"),
    program("y = x[0"),
    program("y = x)"),
    program("y = }"),
    program("y = (x]"),
    program("y = 1 +* 2"),
    program("y = x @@ 2"),
    program("y = ,"),
    program("y = sum(,x)"),
    program("y = sum(x,,1)"),
    program("y = x $ 2"),
    program("y = x ? 1"),
    program("y = 5!"),
    program("y = |x|"),
    program("y = 2|x|"),
    program("y = x if x > 0"),
    program("y = x if else"),
    program("y = x => 2"),
    program("y = x <> 2"),
    program("y = x === 2"),
    program("y = x !="),
    program("y = not"),
    program("y = x or or"),
    program("y = sum(x, 1=2)"),
    program("y = (x = 2)"),
    program("y = x = = 2"),
    program("x + 1 = y"),
    program("y = x = 1 = 2"),
    program("sin(x) = 2"),
    program("None = 2"),
    program("y = 'abc"),
    program("y = x'"),
    program('y = """abc'),
    program("y = f'{'"),
    program("y = 01"),
    program("y = 1__0"),
    program("y = 0x"),
    program("y = 0b2"),
    program("y = 1jx"),
    program("y = sum(dim=1, x)"),
    program("y = sum(x for x in x, 1)"),
    program("y = x \\ 2"),
    program("y = x..2"),
    program("y = x."),
    program("y = x:2"),
    program("y = x[]"),
    program("y = *"),
    program("y: = 2"),
    program("y = `x`"),
    program("y = x -> 2"),
    program("y = x \\"),
    program("y = None == ^x"),
    program("y = print  ...not"),
    program("y = b'\u0175'"),
    program("y = '\\x'"),
    program("y = 'a' b'b'"),
    program("y = (None := 2)"),
    program("y = (yield) = 2"),
    program("2 += 1"),
    program("2.: int = 1"),
    # values in a program, and the run
    alone("w = ones(x)"),
    alone("w = ones(ones(2))"),
    alone("w = ones(2, foo=1)"),
    alone("w = randn(2, requires_grad=1)"),
    alone("w = full(2)"),
    alone("w = ones(2, requires_grad=True).T"),
    program("y = x5"),
    program("y = x * q"),
    program("y = x[0, 1]"),
    program("y = x + w", "-i", "w=1,2,3"),
    program("y = matmul(A, x)", "-i", "A=ones(3,3)"),
    program("y = x[5]"),
    program("y = reshape(x, 3)"),
    program("y = sum(x, dim=3)"),
    program("y = transpose(x, 0, 5)"),
    program("y = unsqueeze(x, 5)"),
    program("y = cat([x, w], 1)", "-i", "w=1,2,3"),
    program("y = mse_loss(x, w)", "-i", "w=1,2,3"),
    program("y = cross_entropy(x, w)", "-i", "w=7"),
    program("y = binary_cross_entropy(x, x)"),
    program("h0 = x * 2; h1 = sum(h0); z = h + 1"),
    # values
    value("1 2"),
    value("[1 2]"),
    value("[[1, 2] [3, 4]]"),
    value("1,,2"),
    value("(1,2"),
    value("1]"),
    value("1 +"),
    value("1\u22122"),
    value("1\u00b2"),
    value("x=1"),
    value("1:2"),
    value("[1;2]"),
    value("'a"),
    value("01"),
    value("foo"),
    value("[1, 'a']"),
    value("[1, True]"),
    value("x.y"),
    value("1+2"),
    value("{1: 2}"),
    value("-[1, 2]"),
    value("lambda: 1"),
    value("1 if 2 else 3"),
    value("[[1,2],[3]]"),
    value("[" * 1000 + "]" * 1000),
    value("[" * 40 + "1" + "]" * 40),
    value("1" + "0" * 400),
    value("9" * 5000),
    value("frob(2)"),
    value("ones(ones(2))"),
    value("ones(2, foo=1)"),
    value("ones(2).T"),
    value("(lambda: 1)()"),
    value("full(2)"),
    value("full(2, [1, 2])"),
    value("linspace([0], 1, 3)"),
    value("eye(1, 2, 3)"),
    value("arange()"),
    value("arange(0, 1, 0)"),
    value("arange(0, inf)"),
    value("linspace(0, 1)"),
    value("linspace(0, 1, 2.5)"),
    value("tensor(1, 2)"),
    value("ones(-1)"),
    value("ones(True)"),
    value("randn(100000, 100000)"),
    value("ones(2, 1" + "0" * 320 + ")"),
    value(""),
    value("@"),
    value("@nope.npy"),
    value("@README.md"),
    value("@samples"),
    value("@/dev/null"),
    value("@nope.npz:key"),
    value("-"),
    # options
    ["grad", "-f", FIRST, "--of", "q"],
    ["grad", "-f", FIRST, "--show", "q"],
    ["grad", "-f", FIRST, "--retain-grad", "q"],
    ["grad", "-f", FIRST, "--format", "xml"],
    ["grad", "-f", FIRST, "--dtype", "int8"],
    ["check", "-f", FIRST, "--atol", "nan"],
    ["check", "-f", FIRST, "--rtol", "inf"],
    ["grad", "-e", "y = x", "--x", "1", "--max-depth", "191"],
    ["grad", "-e", "y = x", "--x", "1", "--max-elements", "0"],
    ["grad", "-e", "y = x", "--x", "1", "--max-length", "0"],
    ["grad", "-e", "y = x", "--x", "1", "--max-elements", str(10**30)],
    ["grad", "-f", "samples/no_such_sample.gc"],
    ["grad", "-f", "samples"],
    ["grad", "-e", "y = x", "-f", FIRST],
    ["grad", "--x", "1"],
    ["grad", "-e", "y = x", "-i", "w"],
    ["grad", "-e", "y = x", "-i", "1w=2"],
    ["grad", "-e", "y = x", "--x", "1", "-i", "x=3"],
    ["grad", "-e", "y = sum(x * 2)"],
    ["grad", "-e", "y = sum(x + z)", "--x", "1"],
    ["grad", "-e", "out = sum(x * weight)", "--x", "1", "-i", "weight=2", "-i", "wieght=3"],
    ["grad", "-e", "y = 2 * 3"],
    ["grad", "-e", "y = x * 2", "--x", "1,2"],
    ["grad", "-e", "y = sum(x)", "--x", "1,2", "--wrt", "q"],
    ["vjp", "-e", EXAMPLE2, "--x", "1,2"],
    ["vjp", "-e", EXAMPLE2, "--x", "1,2", "--v", "1,1"],
    ["vjp", "-e", EXAMPLE2, "--x", "1,2", "--v", "1 1 1"],
    ["jacobian", "-e", EXAMPLE2, "--x", "1,2", "--wrt", "q"],
    ["jacobian", "-e", EXAMPLE2, "--x", "1,2", "--mode", "sideways"],
    ["jvp", "-e", EXAMPLE2, "--x", "1,2", "--t", "q=1"],
    ["jvp", "-e", EXAMPLE2, "--x", "1,2", "--t", "1,2,3"],
    ["jvp", "-e", EXAMPLE2, "--x", "1,2", "--t", "1 w=2"],
    ["hessian", "-e", EXAMPLE2, "--x", "1,2"],
    ["hvp", "-e", "f = sum(x ** 3)", "--x", "1,2", "--v", "1,2,3"],
    ["explain", "-e", EXAMPLE2, "--x", "1,2", "--v", "1"],
    ["graph", "-f", FIRST, "--format", "xml"],
    ["plot", "-e", "y = tanh(x)", "--x", "0", "--x-range", "3:-3"],
    ["plot", "-e", "y = tanh(x)", "--x", "0", "--x-range", "abc"],
    ["plot", "-e", "y = sum(x)", "--x", "1,2"],
    ["plot", "-e", "y = tanh(x)", "--x", "0", "--out", "plot.gif"],
    ["eval", "-e", "y = x", "--x", "1", "--out", "y.npy"],
    ["eval", "-e", "y = x", "--x", "1", "--batch", "@nope.npy"],
    ["eval", "-e", "y = x", "--x", "1", "--batch", "-", "--format", "csv"],
    ["eval", "-e", "y = x", "--x", "1", "--batch", "-", "--out", "y.txt"],
]


def test_the_forbidden_words_come_from_ast_and_builtins():
    assert {"BitXor", "FloorDiv", "Attribute", "Subscript", "Call", "keyword"} <= set(
        FORBIDDEN_WORDS
    )
    assert {"SyntaxError", "TypeError", "ValueError", "Traceback", "NoneType"} <= set(
        FORBIDDEN_WORDS
    )
    assert _FORBIDDEN.search("the operator BitXor is not allowed")
    assert _FORBIDDEN.search("syntax error: invalid syntax")
    assert not _FORBIDDEN.search("call it: sum(x); a name, a list, a constant, the last.")
    assert not _FORBIDDEN.search("give the program with --expr") and _FORBIDDEN.search("an expr")


@pytest.mark.parametrize(
    "args", CATALOGUE, ids=[" ".join(a)[:60].encode("unicode_escape").decode() for a in CATALOGUE]
)
def test_every_refusal_speaks_of_what_the_user_wrote(cli, args):
    assert_speaks(cli(*args, "--no-cache", input=""), args)


def assert_speaks(result, args) -> None:
    """Exit 2, an ``error:`` line, no word of Python's internals, hints of real functions."""
    stderr = result.stderr
    assert result.exit_code == 2, (result.exit_code, stderr)
    assert result.stdout == "", result.stdout
    assert re.search(r"^error: \S", stderr, re.M), stderr
    found = _FORBIDDEN.search(stderr)
    assert found is None, f"{found.group()!r} in:\n{stderr}"
    # a hint suggests only functions that exist (or that the user wrote)
    hints = " ".join(line for line in stderr.splitlines() if line.startswith("hint: "))
    for name in re.findall(r"\b([A-Za-z_]\w*)\(", hints):
        assert name in CALLABLE or name in " ".join(args), f"{name}(...) in: {hints}"


# Files that gradcli cannot read: (content, options, what the error says)
_VALUE = ["-e", "y = x", "--x", "@{path}"]
BAD_FILES = {
    "program.gc": (b"\xff\xfey = x\n", ["-f", "{path}", "--x", "1"], "not UTF-8 text"),
    "value.json": (b"\xff[1, 2]", _VALUE, "not UTF-8 text (the byte 0xff at offset 0)"),
    "value.csv": (b"1,2\n3,a\n", _VALUE, "row 2 is not all numbers: 'a'"),
    "latin1.csv": ("1,2\n\u00e9,3\n".encode("latin-1"), _VALUE, "byte 0xe9 at offset 4"),
    "damaged.npz": (b"PK\x03\x04 not really", _VALUE, "damaged"),
    "text.npy": (b"1, 2, 3", _VALUE, "not a NumPy .npy file"),
    "points.csv": (b"\xff1,2\n", ["-e", "y = x", "--x", "1", "--batch", "@{path}"], "UTF-8"),
    "points.txt": (b"1\n2\n", ["-e", "y = x", "--x", "1", "--batch", "@{path}"], "file type"),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_files_that_cannot_be_read_speak_of_the_file(cli, tmp_path, name):
    content, options, message = BAD_FILES[name]
    path = tmp_path / name
    path.write_bytes(content)
    args = ["eval", *(o.format(path=path) for o in options)]
    result = cli(*args, "--no-cache")
    assert_speaks(result, args)
    assert name in result.stderr and message in result.stderr
    assert "codec" not in result.stderr and "convert string to float" not in result.stderr


def refused(cli, program: str, *values: str) -> tuple[str, str, int | None]:
    """(message, hint, caret column) of a program the command line refuses."""
    result = cli("eval", "-e", program, *(values or ("--x", "1,2")), "--no-cache")
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.splitlines()
    message = lines[0].split(": ", 2)[-1]
    hint = next((line.removeprefix("hint: ") for line in lines if line.startswith("hint: ")), "")
    carets = [line for line in lines if line.strip() == "^"]
    return message, hint, carets[0].index("^") - 2 if carets else None


def test_a_caret_names_the_operator_and_suggests_a_power(cli):
    message, hint, column = refused(cli, "y = x ^ 2")
    assert "'^'" in message and "BitXor" not in message
    assert hint == "write x ** 2"
    assert column == "y = x ^ 2".index("^")
    # Python reads (x + 1) ^ (3 + 1); the hint keeps the text, where ** binds as ^ does in math
    assert refused(cli, "y = (x + 1)^3 + 1")[1] == "write (x + 1) ** 3 + 1"


def test_bit_shifts_name_their_symbols(cli):
    message, hint, column = refused(cli, "y = x << 2")
    assert message.startswith("'<<' (a bit shift) is not allowed") and column == 6
    assert hint == "to multiply by a power of 2, write x * 2 ** 2"
    assert refused(cli, "y = x >> 1")[0].startswith("'>>' (a bit shift) is not allowed")


def test_implicit_multiplication_asks_for_the_star(cli):
    message, hint, column = refused(cli, "y = 2x")
    assert message == "nothing joins 2 and x: multiplication needs '*'"
    assert hint == "write 2*x" and column == 5
    assert refused(cli, "y = 2(x + 1)")[1] == "write 2*(x + 1)"
    assert refused(cli, "y = (x+1)(x-1)")[1] == "write (x+1)*(x-1)"
    assert refused(cli, "y = sin x")[1] == "write sin(x)"


def test_ln_is_log(cli):
    message, hint, _ = refused(cli, "y = ln(x + 1)")
    assert message == "unknown function 'ln'" and hint == "write log(x + 1)"


def test_a_superscript_is_a_power(cli):
    assert refused(cli, "y = x²")[1] == "write a power with **: x**2"
    assert refused(cli, "y = (x + 1)³")[1] == "write a power with **: (x + 1)**3"
    assert refused(cli, "y = √x")[1] == "write sqrt(x)"


def test_max_along_a_dim_gives_two_tensors_and_says_how_to_take_them(cli):
    message, hint, _ = refused(cli, "y = max(x, 0)")
    assert message == "max(x, 0) gives 2 tensors (values, indices), not one tensor"
    assert "values, indices = max(x, 0)" in hint and "max(x, 0).values" in hint
    assert "maximum(a, b)" in hint  # the larger of two values, as torch.max(x, other)


def test_a_misspelled_comparison_names_the_comparisons(cli):
    message, hint, column = refused(cli, "y = x => 1")
    assert message == "'=>' is not a comparison of the language" and column == 6
    assert "== != < <= > >=" in hint
    message, hint, _ = refused(cli, "y == x")
    assert message == "'==' compares, and a statement assigns"
    assert hint == "to assign, write y = x"


def test_unbalanced_parentheses_and_trailing_operators(cli):
    assert refused(cli, "y = (x + 1") == ("this '(' is never closed", "add the ')' it needs", 4)
    assert refused(cli, "y = x + 1)")[:2] == (
        "this ')' closes nothing",
        "remove it, or add its opener",
    )
    message, hint, column = refused(cli, "y = x *")
    assert message == "nothing follows '*': it needs a value on its right" and column == 7
