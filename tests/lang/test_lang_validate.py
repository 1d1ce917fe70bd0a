"""validate: splitting a program into statements, and the whitelist with its error columns."""

from __future__ import annotations

import pytest

from gradcli.base.errors import GradcliError
from gradcli.lang.validate import Statement, check, describe, element_of, split_statements


def checked(text: str):
    return check(Statement(1, 1, text))


def rejected(text: str) -> GradcliError:
    with pytest.raises(GradcliError) as info:
        checked(text)
    return info.value


# -- split_statements ---------------------------------------------------------------------------


def test_split_at_semicolons_and_newlines():
    statements = split_statements("y = x + 2; z = y*y\n  out = mean(z)  ")
    assert statements == [
        Statement(1, 1, "y = x + 2"),
        Statement(2, 1, "z = y*y"),
        Statement(3, 2, "out = mean(z)"),
    ]


def test_comments_blank_lines_and_empty_statements_are_skipped():
    source = "# a header\n\ny = x  # a comment; z = 2 is part of it\n ;; \nz = y # end"
    assert split_statements(source) == [Statement(1, 3, "y = x"), Statement(2, 5, "z = y")]


def test_crlf_line_endings():
    assert [s.line for s in split_statements("y = x\r\nz = y\r\n")] == [1, 2]


@pytest.mark.parametrize("source", ["", "   ", "# only a comment", ";;\n;", "\n\n"])
def test_an_empty_program_is_an_error(source):
    with pytest.raises(GradcliError, match="the program is empty") as info:
        split_statements(source)
    assert "y = x + 2" in info.value.hint


def test_statement_where_and_error_rendering():
    statement = split_statements("a = 1\nb = 2; y = x + q")[2]
    assert statement.where == "statement 3 (line 2)"
    error = statement.error("something is wrong", 8, "a hint")
    assert error.render() == (
        "error: statement 3 (line 2): something is wrong\n  y = x + q\n          ^\nhint: a hint"
    )


# -- check: what passes, and what it hands on ------------------------------------------------


def test_target_names_and_constants():
    result = checked("y = x + w * x0 - e * pi")
    assert result.target == "y"
    assert result.names == ("x", "w", "x0")
    assert result.constructor is None and result.expression


def test_a_constructor_declares_an_input():
    result = checked("W = randn(8, 10, requires_grad=True)")
    assert result.constructor == "randn(8, 10, requires_grad=True)"
    assert result.expression is None and result.names == ()


def test_a_constructor_after_a_non_ascii_name():
    assert checked("ŵ = ones(2, 3)").constructor == "ones(2, 3)"


def test_columns_of_functions_and_operators():
    result = checked("y = sin(x) + x @ A - -x")
    text = "y = sin(x) + x @ A - -x"
    assert result.columns["sin"] == text.index("sin")
    assert result.columns["add"] == text.index("+")
    assert result.columns["matmul"] == text.index("@")
    assert result.columns["sub"] == text.index("- -")
    assert result.columns["neg"] == text.rindex("-")


def test_operator_column_skips_closing_parentheses():
    text = "y = (x + 1) * w"
    assert checked(text).columns["mul"] == text.index("*")


def test_keywords_are_re_emitted_in_signature_order():
    expression = checked("y = sum(x, keepdim=True, dim=1)").expression
    assert expression.startswith("sum(") and expression.endswith(", 1, True, _none)")
    assert "keepdim" not in expression and "dim=" not in expression


def test_defaults_are_filled_in():
    assert checked("y = sum(x)").expression == "sum(x, _none, False, _none)"


def test_re_emitted_text_has_no_python_operators_or_subscripts():
    expression = checked("y = (x[0] + x[1:3]) @ A ** 2 / -w").expression
    assert not set("+*/@[]") & set(expression)
    assert "_index(x, 0)" in expression and "_slice(1, 3, _none)" in expression


# -- check: what is rejected, with the column of the caret ------------------------------------


@pytest.mark.parametrize(
    "text, message, column",
    [
        ("y = x.grad", "attribute access ('.') is not allowed", 4),
        ("y = x.mena()", "attribute access ('.') is not allowed", 4),
        ("y = ().__class__.__bases__", "attribute access ('.') is not allowed", 4),
        ("y = _x", "names may not start with '_' ('_x')", 4),
        ("y = x + __builtins__", "names may not start with '_'", 8),
        ("y = lambda: 1", "a lambda is not allowed", 4),
        ("y = [i for i in x]", "a 'for' loop is not allowed", 4),
        ("y = {i for i in x}", "a 'for' loop is not allowed", 4),
        ("y = {1: 2}", "braces {...} are not allowed", 4),
        ("y = 'abc'", "a string is not allowed", 4),
        ("y = x if x else w", "an if-expression (a if c else b) is not allowed", 4),
        ("y = x and w", "'and' is not allowed", 4),
        ("y = x or w", "'or' is not allowed", 4),
        ("y = x in w", "'in' is not a comparison of the language", 6),
        ("y = not x", "'not' is not allowed", 4),
        ("y = x is w", "'is' is not a comparison of the language", 6),
        ("y = x << 2", "'<<' (a bit shift) is not allowed", 6),
        ("y = None", "None is not allowed", 4),
        ("y = [x, w]", "a list is allowed only as the first argument of stack or cat", 4),
        ("y = x + sinn(x)", "unknown function 'sinn'", 8),
        ("y = exec('1')", "unknown function 'exec'", 4),
        ("y = open('f')", "unknown function 'open'", 4),
        ("y = (lambda: 1)()", "only named functions can be called", 4),
        ("y = sin", "'sin' is a function, not a value", 4),
        (
            "y = x + ones(2, requires_grad=True)",
            "ones(..., requires_grad=True) makes an input: it must be the whole right-hand side",
            8,
        ),
        ("y = exp(x, 2)", "exp has no 2nd argument", 11),
        ("y = mse_loss(x)", "mse_loss is missing its argument 'target'", 4),
        ("y = mean(x, axis=0)", "mean has no argument named 'axis'", 17),
        ("y = mean(x, 0, dim=1)", "'dim' is given twice", 19),
        ("y = mean(x, dim=1.5)", "dim of mean must be an int, a tuple of ints, or None", 16),
        ("y = mean(x, dim=x)", "dim of mean must be an int, a tuple of ints, or None", 16),
        ("y = mean(x, keepdim=1)", "keepdim of mean must be True or False", 20),
        ("y = norm(x, p='fro')", "p of norm must be number", 14),
        ("y = mse_loss(x, t, reduction='avg')", "reduction of mse_loss must be", 29),
        ("y = stack(x)", "stack needs a list of tensors", 10),
        ("y = stack([])", "stack needs a list of tensors", 10),
        ("y = reshape(x, 2.5)", "size of reshape must be int", 15),
        ("y = sum(*x)", "'*' unpacking is not allowed", 8),
        ("y = sum(**x)", "'**' unpacking is not allowed", 10),
        (
            "y = x['a']",
            "an index must be a whole number, a range like 1:3, ..., a list of whole numbers",
            6,
        ),
        ("y = x[0.5]", "an index must be a whole number", 6),
        ("y = x[True]", "an index must be a whole number", 6),
        ("y = x[1:'a']", "an index must be a whole number", 8),
        ("y = (z := 2)", "':=' is not allowed", 5),
    ],
)
def test_rejected_expressions(text, message, column):
    error = rejected(text)
    assert message in error.message
    assert error.column == column
    assert error.where == "statement 1 (line 1)" and error.source == text


@pytest.mark.parametrize(
    "text, message",
    [
        ("import os", "gradcli reads PyTorch code: it does not import 'os'"),
        ("from os import path", "it does not import 'os'"),
        ("x + 1", "found an expression with no `name =`"),
        ("y = x = 1", "the left-hand side must be a single name"),
        ("y, z = x", "the left-hand side must be a single name"),
        ("x.y = 1", "the left-hand side must be a single name"),
        ("x.a = 1", "the left-hand side must be a single name"),
        ("y @= 1", "the in-place operators taken are +=, -=, *=, /= and **="),
        ("def f(): pass", "expected an assignment"),
        ("_y = x", "'_y' cannot be assigned: names may not start with '_'"),
        ("sin = x", "'sin' cannot be assigned: it is a built-in name"),
        ("pi = 3", "'pi' cannot be assigned: it is a built-in name"),
        ("randn = x", "'randn' cannot be assigned"),
        ("bce = x", "'bce' cannot be assigned"),
    ],
)
def test_rejected_statements_point_at_the_start(text, message):
    error = rejected(text)
    assert message in error.message
    assert error.column == 0


@pytest.mark.parametrize(
    "text, message, column, hint",
    [
        ("y = x +", "nothing follows '+'", 7, "as in x + 2"),
        ("y = x **", "nothing follows '**'", 8, "as in x ** 2"),
        ("y =", "nothing follows '='", 3, "y = x + 2"),
        ("= x", "the name to assign is missing before '='", 0, "y = x + 2"),
        ("y = (x", "this '(' is never closed", 4, "add the ')' it needs"),
        ("y = x[0", "this '[' is never closed", 5, "add the ']' it needs"),
        ("y = x)", "this ')' closes nothing", 5, "remove it"),
        ("y = (x]", "this ']' does not close the '(' before it", 6, "close '(' with ')'"),
        ("y = x $ 2", "'$' is not part of the language", 6, "expressions use numbers"),
        ("y = x!", "'!' is not part of the language", 5, "no factorial"),
        ("y = 1 +* 2", "'+' is followed by '*' with no value between them", 7, "remove one"),
        ("y = sum(,x)", "',' has no value before it", 8, "expressions use numbers"),
        ("y = 2x", "nothing joins 2 and x: multiplication needs '*'", 5, "write 2*x"),
        ("y = 2.5x + 1", "nothing joins 2.5 and x", 7, "write 2.5*x"),
        ("y = 3 x", "nothing joins 3 and x", 6, "write 3*x"),
        ("y = sin(x)cos(x)", "nothing joins sin(x) and cos(x)", 10, "write sin(x)*cos(x)"),
        ("y = x[0 1]", "nothing joins 0 and 1", 8, "write 0, 1 for two indices"),
        ("y = sin x", "the argument of sin goes in parentheses", 8, "write sin(x)"),
        ("y = |x|", "bars |x| are not an absolute value", 4, "write abs(x)"),
        ("y = 2*|x - 1|", "bars |x| are not an absolute value", 6, "write abs(x - 1)"),
        (
            "y = x if x > 0",
            "an if-expression (a if c else b) is not allowed",
            4,
            "where(x > 0, a, b)",
        ),
        (
            "y = x => 1",
            "'=>' is not a comparison of the language",
            6,
            "comparisons are == != < <= > >=",
        ),
        ("y = x !=", "nothing follows '!='", 8, "write a value after it"),
        ("y = x and", "'and' is not allowed", 6, "logical_and(a, b)"),
        ("y = (x = 2)", "'=' stands once in a statement", 7, "'==' compares"),
        ("y = x = 1 = 2", "the left-hand side must be a single name", 0, "y = x + 2"),
        ("x + 1 = y", "the left-hand side must be a single name", 0, "y = x + 2"),
        ("y = sum(x, 1=2)", "only the name of an argument may stand before '='", 11, "min=0"),
        ("y = sum(dim=0, x)", "every argument needs its name", 16, "sum(x, dim=1)"),
        ("y = 'abc", "this one is never closed", 4, "reduction='sum'"),
        ("y = x'", "this one is never closed", 5, "gradcli grad"),
        ("y = 01", "a whole number may not start with 0", 4, "leading zeros"),
        ("y = 1__0", "this number is not written correctly", 5, "1e-3"),
        ("y = x \\ 2", "'\\' is not part of the language", 6, "divide with /"),
        ("y = x:2", "':' makes a range only inside brackets", 5, "x[1:3]"),
        ("y = x[]", "the brackets are empty", 5, "x[0]"),
        ("y x", "expected an assignment `name = expression`, found no '='", 0, "y = x + 2"),
        ("if x", "found an 'if' statement", 0, "where(x > 0, a, b)"),
        ("for i in x", "found a 'for' statement", 0, "every element"),
        ("def f(x)", "found a 'def' statement", 0, "a statement of its own"),
    ],
)
def test_syntax_errors_in_the_words_of_the_language(text, message, column, hint):
    error = rejected(text)
    assert message in error.message
    assert error.column == column
    assert hint in error.hint


def test_suggestions_for_misspelled_functions_and_keywords():
    assert rejected("y = sine(x)").hint == "did you mean 'sin'?"
    assert rejected("y = sigmod(x)").hint == "did you mean 'sigmoid'?"
    assert rejected("y = SIN(x)").hint == "did you mean 'sin'?"
    assert rejected("y = Softmax(x)").hint == "did you mean 'softmax'?"
    assert rejected("y = mean(x, keepdims=True)").hint == "did you mean 'keepdim'?"
    assert rejected("y = frobnicate(x)").hint == "see `gradcli functions`"
    assert rejected("y = x.mena()").hint == "did you mean x.mean(...)?"
    assert rejected("y = torch.sine(x)").message == "torch.sine is not an operation gradcli has"
    assert rejected("y = torch.sine(x)").hint == "did you mean 'sin'?"


def test_carets_count_characters_not_utf8_bytes():
    text = "ŵ = exp(x, 3)"
    error = rejected(text)
    assert error.column == text.index("3")
    assert checked("ŵ = ŵ0 + sin(x)").columns["sin"] == "ŵ = ŵ0 + sin(x)".index("sin")


@pytest.mark.parametrize(
    "torch, plain",
    [
        ("y = torch.sin(x)", "y = sin(x)"),
        ("y = F.relu(x)", "y = relu(x)"),
        ("y = torch.nn.functional.mse_loss(x, w)", "y = mse_loss(x, w)"),
        ("y = nn.functional.softmax(x, dim=0)", "y = softmax(x, dim=0)"),
        ("y = x.sum(dim=0, keepdim=True)", "y = sum(x, dim=0, keepdim=True)"),
        ("y = x.pow(2).mean()", "y = mean(pow(x, 2))"),
        ("y = x.T @ x", "y = transpose(x) @ x"),
        ("y = (x + 1).t().exp()", "y = exp(transpose(x + 1))"),
        ("y = x.view(2, 3)", "y = reshape(x, 2, 3)"),
        ("y = torch.matmul(x, w) + b", "y = matmul(x, w) + b"),
        ("y = x.reshape((2, 3))", "y = reshape(x, 2, 3)"),
        ("y = x.permute(1, 0)", "y = permute(x, (1, 0))"),
        ("y = x.sum([0, 1])", "y = sum(x, (0, 1))"),
    ],
)
def test_pytorch_spelling_is_the_plain_call(torch, plain):
    """torch's module prefixes, tensor methods and properties mean the function itself."""
    assert checked(torch).expression == checked(plain).expression
    assert checked(torch).names == checked(plain).names


@pytest.mark.parametrize(
    "text, message",
    [
        ("y = prod(x, (0, 1))", "dim of prod must be int or None"),
        ("y = sum(x, (0, 'a'))", "dim of sum must be an int, a tuple of ints, or None"),
        ("y = sum(x, ())", "dim of sum must be an int, a tuple of ints, or None"),
        ("y = sum(x, (0, 1.5))", "dim of sum must be an int, a tuple of ints, or None"),
    ],
)
def test_dims_that_are_not_a_tuple_of_ints_are_refused(text, message):
    assert rejected(text).message == message


def test_aliases_are_accepted():
    assert "binary_cross_entropy_with_logits(" in checked("y = bce_with_logits(z, t)").expression


# -- element_of and describe -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, parts",
    [
        ("x0", ("x", 0)),
        ("x12", ("x", 12)),
        ("W2", ("W", 2)),
        ("w_1", ("w_", 1)),
        ("ab3", ("ab", 3)),
        ("x", None),
        ("x1a", None),
        ("_x1", None),
        ("12", None),
    ],
)
def test_element_of(name, parts):
    assert element_of(name) == parts


def test_describe():
    import ast

    def described(text):
        return describe(ast.parse(text).body[0], text)

    assert described("import os") == "an import"
    assert described("x + 1") == "an expression with no `name =`"
    assert described("y -= 1") == "'-=' (write y2 = y - x)"
    assert described("y: int = 1") == "an annotation"
    assert described("if x: y = 1") == "an 'if' statement"
    assert described("del x") == "a 'del' statement"
    assert describe(None, "while x") == "a 'while' statement"
