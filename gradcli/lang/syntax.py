"""Text that Python's parser refuses, told in the words of gradcli's language.

Programs and values are parsed by Python's ``ast``. When that fails, its message speaks of
Python ("invalid syntax", "invalid decimal literal"); ``explain`` looks at the text around the
error instead and says what a person most likely wrote and what gradcli takes: ``2x`` is
``2*x``, ``sin x`` is ``sin(x)``, an unclosed ``(`` is named as such. The refusals of
constructs gradcli does not have (``and``, ``if ... else``, ``lambda``, comparisons) live
here too, so that the validator, which finds them in parsed text, words them alike.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from dataclasses import dataclass

LANGUAGE_HINT = (
    "expressions use numbers, names, + - * / // % ** @, comparisons (== != < <= > >=) joined by "
    "& | ^ ~, parentheses, function calls like mean(z) and indexing like x[0] or x[:, 1]"
)
STATEMENT_HINT = "write statements like: y = x + 2"
WHERE_HINT = "where(x > 0, a, b) takes a where the condition is True and b elsewhere"
LOGIC = "booleans are combined with & | ^ ~"
MEMBERSHIP = "{} is not a comparison of the language"
COMPARE_HINT = "comparisons are == != < <= > >=, element-wise, as in where(x > 0, x, 0)"
EQUALITY = "'==' compares"
LOOP = "a 'for' loop is not allowed", "operations act on every element: y = x ** 2, s = sum(x)"
ATTRIBUTE = "attribute access ('.') is not allowed"
ATTRIBUTE_HINT = "after a '.' comes a method or a property, as in x.sum() or x.T"
QUOTES_HINT = "text in quotes is only for options, as in mse_loss(x, t, reduction='sum')"
WALRUS = "':=' is not allowed", "assign in a statement of its own: z = 2; y = z"
STEPS_HINT = "write each step as a statement of its own: h = x * 2; y = sin(h)"
# Python's keywords that can stand inside an expression, as a refusal: (message, hint)
KEYWORDS = {
    "and": (f"'and' is not allowed: {LOGIC}", "write (a > 0) & (b > 0), or logical_and(a, b)"),
    "or": (f"'or' is not allowed: {LOGIC}", "write (a > 0) | (b > 0), or logical_or(a, b)"),
    "not": (f"'not' is not allowed: {LOGIC}", "write ~(a > 0), or logical_not(a)"),
    "if": ("an if-expression (a if c else b) is not allowed", WHERE_HINT),
    "else": ("an if-expression (a if c else b) is not allowed", WHERE_HINT),
    "for": LOOP,
    "in": (MEMBERSHIP.format("'in'"), COMPARE_HINT),
    "is": (MEMBERSHIP.format("'is'"), COMPARE_HINT),
    "lambda": ("a lambda is not allowed: a program defines no functions", STEPS_HINT),
}
_COMPARISON_OPERATORS = {"<", ">", "<=", ">=", "==", "!="}

# Characters that look like operators but are not: the usual ones from word processors and
# mathematical text. (Full-width forms such as '＋' are found through NFKC.)
LOOKALIKES = {
    "\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u2011": "-",
    "\u00d7": "*", "\u2217": "*", "\u22c5": "*", "\u00b7": "*", "\u2219": "*",
    "\u00f7": "/", "\u2215": "/", "\u2044": "/",
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u3000": " ",
}  # fmt: skip
SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+", strict=True))


def _signs() -> dict[str, str]:
    """Mathematical signs with a function of the language, as the op table says: √x is
    sqrt(x)."""
    from .functions import FUNCTIONS

    return {op.extra["glyph"]: name for name, op in FUNCTIONS.items() if "glyph" in op.extra}


def character_name(c: str) -> str:
    return f"U+{ord(c):04X} {unicodedata.name(c, 'a control character')}"


def character_hint(line: str, column: int) -> str:
    """What to write instead of the character at ``column``, which is not in the language."""
    c = line[column]
    if c in SUPERSCRIPTS:
        power = ""
        for s in line[column:]:
            if s not in SUPERSCRIPTS:
                break
            power += SUPERSCRIPTS[s]
        before = tokens(line[:column])
        base = "x"
        if before and _ends_value(before[-1]):
            base = line[before[_operand(before, len(before) - 1, -1)].start : column].strip()
        return f"write a power with **: {base}**{power if power.isdigit() else f'({power})'}"
    signs = _signs()
    if c in signs:
        operand = re.match(r"\s*(\w+)", line[column + 1 :])
        return f"write {signs[c]}({operand.group(1) if operand else '...'})"
    meant = LOOKALIKES.get(c) or unicodedata.normalize("NFKC", c)
    if meant != c and meant.isascii() and meant.isprintable():
        return f"did you mean {meant!r}?"
    return "retype the line with plain characters"


@dataclass(frozen=True)
class Token:
    kind: str  # number, name, keyword or op (any other character, or a two-character operator)
    text: str
    start: int  # column, in characters
    end: int


_TOKEN = re.compile(
    r"(?P<number>(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<op>\*\*|//|<<|>>|<=|>=|==|!=|:=|->|\S)"
)
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_BINARY = {
    "*",
    "/",
    "**",
    "//",
    "%",
    "@",
    "^",
    "&",
    "|",
    "<<",
    ">>",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
}


def tokens(text: str) -> list[Token]:
    """The text as numbers, names, keywords and operators (a lexer for messages only)."""
    found = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
        if kind == "name" and keyword.iskeyword(match.group()):
            kind = "keyword" if match.group() not in ("True", "False", "None") else "name"
        found.append(Token(kind, match.group(), match.start(), match.end()))
    return found


def _ends_value(token: Token) -> bool:
    return token.kind in ("number", "name") or token.text in (")", "]")


def _partner(items: list[Token], index: int, step: int) -> int | None:
    """The index of the bracket matching ``items[index]``, searching by ``step`` (1 or -1)."""
    depth = 0
    opening, closing = ("([", ")]") if step == 1 else (")]", "([")
    while 0 <= index < len(items):
        depth += (items[index].text in opening) - (items[index].text in closing)
        if depth == 0:
            return index
        index += step
    return None


def _operand(items: list[Token], index: int, step: int) -> int:
    """The far end of the operand at ``items[index]``: going back (``step`` -1) from its last
    token, or forward (1) from its first; a call or an index counts with its brackets."""
    token = items[index]
    if step == -1 and token.text in (")", "]"):
        opener = _partner(items, index, -1)
        if opener is None:
            return index
        return opener - 1 if opener > 0 and items[opener - 1].kind == "name" else opener
    following = items[index + 1] if index + 1 < len(items) else None
    if step == 1 and token.kind == "name" and following and following.text in ("(", "["):
        closer = _partner(items, index + 1, 1)
        return index if closer is None else closer
    return index


def product(first: str, second: str, column: int) -> tuple[str, int, str]:
    """(message, column, hint) for two factors written without the '*' between them."""
    return (
        f"nothing joins {first} and {second}: multiplication needs '*'",
        column,
        f"write {first}*{second}",
    )


def side_by_side(text: str, items: list[Token], before: int, functions=(), value=False):
    """(message, column, hint) for two values written next to each other (``2x``, ``x y``,
    ``sin x``), the first of them starting at or before column ``before``; else None.
    In a ``value``, or inside brackets, a ',' may be what is missing."""
    opened = []
    for i in range(len(items) - 1):
        a, b = items[i], items[i + 1]
        if a.start > before:
            return None
        if a.text in _CLOSERS:
            opened.append(a.text)
        elif a.text in _CLOSERS.values() and opened:
            opened.pop()
        if not (_ends_value(a) and b.kind in ("number", "name")):
            continue
        first = text[items[_operand(items, i, -1)].start : a.end]
        second = text[b.start : items[_operand(items, i + 1, 1)].end]
        if value:
            return (
                f"nothing separates {first} and {second}",
                b.start,
                f"separate the numbers of a list with commas: {first}, {second}",
            )
        if a.kind == "name" and a.text in functions:
            return (
                f"the argument of {a.text} goes in parentheses",
                b.start,
                f"write {a.text}({second})",
            )
        message, column, hint = product(first, second, b.start)
        if opened and opened[-1] == "[":
            hint = f"write {first}, {second} for two indices, or {first}*{second}"
        return message, column, hint
    return None


def explain(
    text: str, error: SyntaxError, functions=(), value=False
) -> tuple[str, int, str | None]:
    """What was wrong in ``text``, which ``ast.parse`` refused with ``error``: (message,
    column, hint), the hint None where the caller's own fits. ``functions`` are the names
    that are called (``sin x`` wants parentheses); ``value`` is true for the text of a value
    (``1 2`` wants a comma)."""
    # Python gives no column for some text that ends too early ("1 +" read as a value)
    column = error.offset - 1 if error.offset else len(text)
    message = error.msg
    character = re.match(r"invalid character '(.)'", message)
    if character:
        c = character.group(1)
        hint = character_hint(text, column) if text[column : column + 1] == c else None
        return f"the character {character_name(c)} is not part of the language", column, hint
    items = tokens(text)
    found = side_by_side(text, items, column, functions, value)
    if found:
        return found
    bracket = re.match(r"'(.)' was never closed", message)
    if bracket:
        opener = bracket.group(1)
        return f"this '{opener}' is never closed", column, f"add the {_CLOSERS[opener]!r} it needs"
    bracket = re.match(r"unmatched '(.)'", message)
    if bracket:
        return f"this {bracket.group(1)!r} closes nothing", column, "remove it, or add its opener"
    bracket = re.match(
        r"closing parenthesis '(.)' does not match opening parenthesis '(.)'", message
    )
    if bracket:
        closer, opener = bracket.groups()
        return (
            f"this {closer!r} does not close the {opener!r} before it",
            column,
            f"close {opener!r} with {_CLOSERS[opener]!r}",
        )
    return _by_message(text, message, column, items, value)


def _by_message(text: str, message: str, column: int, items: list[Token], value: bool):
    """``explain`` for Python's messages that name no character or bracket."""
    if "Exceeds the limit" in message:  # Python reads at most 4,300 digits
        return (
            "a whole number of more than 4,300 digits",
            column,
            "write it as a float, e.g. 1e5000 (which is inf)",
        )
    if message.startswith("too many nested parentheses"):
        return "too many nested parentheses", column, None
    if message.startswith(("cannot assign to", "assignment to")) or "illegal" in message:
        return "the left-hand side must be a single name", 0, STATEMENT_HINT
    if "leading zeros" in message:
        return "a whole number may not start with 0", column, "leave out the leading zeros"
    if message.endswith("literal") and "string" not in message:
        return "this number is not written correctly", column, "write numbers like 2, 0.5 or 1e-3"
    if message.startswith("unterminated"):
        derivative = (
            text[column - 1 : column + 1].endswith("'") and text[column - 1 : column].isalnum()
        )
        return (
            "a quote starts text, and this one is never closed",
            column,
            "for a derivative, run gradcli grad (or jacobian, hessian)"
            if derivative
            else QUOTES_HINT,
        )
    if any(word in message for word in ("string", "bytes", "unicode")):  # f'{', b'ŵ', '\x'
        return "a string is not allowed here", column, QUOTES_HINT
    if "cannot contain assignment" in message:
        return (
            "only the name of an argument may stand before '=' in a call",
            column,
            f"write it as in clamp(x, min=0); {EQUALITY}",
        )
    if message.startswith("positional argument follows keyword argument"):
        return (
            "after a named argument (like dim=1), every argument needs its name",
            column,
            "give the unnamed ones first: sum(x, dim=1)",
        )
    if "assignment expression" in message:
        return WALRUS[0], column, WALRUS[1]
    called = re.match(r"Missing parentheses in call to '(\w+)'", message)  # print x
    if called:
        return f"unknown function {called.group(1)!r}", column, "see `gradcli functions`"
    if message.startswith("Generator expression"):
        return LOOP[0], column, LOOP[1]
    if message.startswith("expected 'else'"):
        return _keyword("if", column)
    if "line continuation" in message or (message.startswith("unexpected EOF") and "\\" in text):
        return "'\\' is not part of the language", text.rfind("\\", 0, column + 1), "divide with /"
    if message.startswith("invalid syntax"):
        clue = message.removeprefix("invalid syntax").strip(". ")
        return _invalid(text, column, items, clue, value)
    return f"cannot read this ({message})", column, None


def _bars(text: str, column: int):
    """The error for |x|, the bars starting at ``column``."""
    inner = re.match(r"\|([^|]*)\|", text[column:])
    return (
        "bars |x| are not an absolute value in gradcli",
        column,
        f"write abs({inner.group(1).strip() if inner else 'x'})",
    )


def _keyword(word: str, column: int):
    message, hint = KEYWORDS[word]
    return message, column, hint


def _invalid(text: str, column: int, items: list[Token], clue: str, value: bool):
    """``explain`` for "invalid syntax": what stands at ``column``, and before it."""
    if "'='" in clue:  # "Maybe you meant '==' or ':=' instead of '='?": point at the '='
        column = next((t.start for t in items if t.text == "=" and t.start >= column), column)
    at = next((i for i, t in enumerate(items) if t.end > column), None)
    if at is None:  # the text ends too early
        last = items[-1] if items else None
        if last is not None and last.kind == "keyword" and last.text in KEYWORDS:
            return _keyword(last.text, last.start)
        if last is not None and last.text == "|" and text.count("|") > 1:
            return _bars(text, text.rindex("|", 0, last.start))
        if last is not None and last.text == "=":
            return "nothing follows '='", column, STATEMENT_HINT
        if last is not None and last.text == ".":
            return ATTRIBUTE, last.start, ATTRIBUTE_HINT
        if last is not None and last.kind == "op":
            return (
                f"nothing follows {last.text!r}: it needs a value on its right",
                column,
                f"write a value after it, as in x {last.text} 2"
                if last.text in _BINARY | {"+", "-"} and not value
                else None,
            )
        return "the text ends too early", column, None
    token, before = items[at], items[at - 1] if at else None
    if token.kind == "keyword" and token.text in KEYWORDS:
        return _keyword(token.text, token.start)
    if token.text in _COMPARISON_OPERATORS or (before and before.text in _COMPARISON_OPERATORS):
        operator = token if token.text in _COMPARISON_OPERATORS or before is None else before
        # as written, with what stands next to it: '=>', '<>', '==='
        run = next(
            m for m in re.finditer(r"[<>=!]+", text) if m.start() <= operator.start < m.end()
        )
        if run.group() in _COMPARISON_OPERATORS:  # two in a row: x < < 2
            return f"{run.group()!r} has no value after it", run.end(), COMPARE_HINT
        return MEMBERSHIP.format(repr(run.group())), run.start(), COMPARE_HINT
    if token.text == "|" and (before is None or not _ends_value(before)):
        return _bars(text, token.start)
    if value and token.text in (":", "=", ".", ";"):
        return f"{token.text!r} has no place in a value", token.start, None
    if token.text in ("$", "?", "!", "`", "\\", ";", "->"):
        hint = "gradcli has no factorial" if token.text == "!" else None
        return f"{token.text!r} is not part of the language", token.start, hint
    if token.text == ":":
        return "':' makes a range only inside brackets", token.start, "write x[1:3]"
    if "." in (token.text, before and before.text):
        dot = before if before is not None and before.text == "." else token
        return ATTRIBUTE, dot.start, ATTRIBUTE_HINT
    if token.text == "=" and before is None:
        return "the name to assign is missing before '='", 0, STATEMENT_HINT
    if token.text == "=":
        return (
            "'=' stands once in a statement, after the name it assigns",
            token.start,
            f"{STATEMENT_HINT}; {EQUALITY}",
        )
    if before is not None and before.text in _CLOSERS and token.text == _CLOSERS[before.text]:
        return "the brackets are empty", before.start, "write an index, as in x[0]"
    if token.kind == "op" and (before is None or not _ends_value(before)):
        if before is None or before.text in ("(", "[", "{", ",", "="):
            return f"{token.text!r} has no value before it", token.start, None
        return (
            f"{before.text!r} is followed by {token.text!r} with no value between them",
            token.start,
            "remove one of them, or put a value between them",
        )
    return "cannot read this" + (f": {clue[0].lower()}{clue[1:]}" if clue else ""), column, None
