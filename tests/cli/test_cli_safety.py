"""No text given to gradcli runs as code: hostile programs and values are rejected unparsed."""

from __future__ import annotations

import builtins

import pytest

import gradcli.lang.parse as parse_module

HOSTILE = {
    "import-call": ("y = __import__('os').system('echo hacked')", "attribute access ('.')"),
    "bases": ("y = ().__class__.__bases__", "attribute access ('.')"),
    "dunder-attr": ("y = x.__class__", "attribute access ('.')"),
    "method": ("y = x.sum()", "attribute access ('.')"),
    "lambda": ("y = lambda: 1", "a lambda is not allowed"),
    "comprehension": ("y = [i for i in x]", "a comprehension is not allowed"),
    "generator": ("y = sum(i for i in x)", "a generator expression"),
    "string": ("y = 'abc'", "a string is not allowed"),
    "bytes": ("y = b'abc'", "a string is not allowed"),
    "f-string": ("y = f'{x}'", "a string is not allowed"),
    "exec": ("y = exec('print(1)')", "unknown function 'exec'"),
    "eval": ("y = eval('1')", "unknown function 'eval'"),
    "open": ("y = open('f')", "unknown function 'open'"),
    "import": ("import os", "found an import"),
    "from-import": ("from os import system", "found an import"),
    "bare-call": ("__import__('os').system('echo hacked')", "found an expression with no"),
    "dunder-name": ("y = __builtins__", "names may not start with '_'"),
    "dunder-target": ("__x = x", "names may not start with '_'"),
    "walrus": ("y = (z := 2)", "':=' is not allowed"),
    "index-call": ("y = x[__import__('os')]", "an index must be a whole number"),
    "kwarg-call": ("y = sum(x, dim=__import__('os'))", "dim of sum must be int or None"),
    "dict": ("y = {1: 2}", "a dict is not allowed"),
    "subscript-target": ("x[0] = 1", "the left-hand side must be a single name"),
    "attribute-target": ("x.y = 1", "the left-hand side must be a single name"),
    "star-kwargs": ("y = sum(**x)", "'**' unpacking is not allowed"),
    "semicolon-smuggle": ("y = x; import os", "statement 2"),
    "newline-smuggle": ("y = x\n__import__('os').system('echo hacked')", "line 2"),
}


@pytest.fixture
def parse_expr_calls(monkeypatch):
    """Replace sympy's parser (which evals) in gradcli.lang.parse with a recorder."""
    calls = []
    real = parse_module.parse_expr

    def recording(text, *args, **kwargs):
        calls.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(parse_module, "parse_expr", recording)
    return calls


@pytest.fixture
def eval_exec_calls(monkeypatch):
    """Record every string handed to builtins.eval and builtins.exec (typer evals annotations)."""
    calls = []
    real_eval, real_exec = builtins.eval, builtins.exec

    def spy_eval(source, *args, **kwargs):
        calls.append(source)
        return real_eval(source, *args, **kwargs)

    def spy_exec(source, *args, **kwargs):
        calls.append(source)
        return real_exec(source, *args, **kwargs)

    monkeypatch.setattr(builtins, "eval", spy_eval)
    monkeypatch.setattr(builtins, "exec", spy_exec)
    return calls


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_program_is_rejected_before_sympy(cli, parse_expr_calls, eval_exec_calls, name):
    program, message = HOSTILE[name]
    result = cli("grad", "-e", program, "--x", "1", "--no-cache")
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr and "hacked" not in result.stdout
    assert parse_expr_calls == [], "sympy's parser must never see rejected text"
    assert not [c for c in eval_exec_calls if isinstance(c, str) and program in c]


def test_the_parse_expr_spy_does_see_valid_programs(cli, parse_expr_calls):
    """The control for the test above: a valid program does reach sympy's parser."""
    result = cli("grad", "-e", "y = sum(x * 2)", "--x", "1,2", "--no-cache")
    assert result.exit_code == 0
    assert parse_expr_calls == ["sum(mul(x, 2), _none, False)"]


def test_the_program_file_is_checked_like_an_expression(cli, tmp_path, parse_expr_calls):
    program = tmp_path / "evil.gc"
    program.write_text("x = ones(2)\ny = __import__('os').system('echo hacked')\n")
    result = cli("eval", "-f", str(program), "--no-cache")
    assert result.exit_code == 2
    assert "statement 2 (line 2)" in result.stderr and "attribute access" in result.stderr
    assert parse_expr_calls == []


def _touch_attempts(target) -> list[str]:
    path = str(target)
    return [
        f"y = __import__('pathlib').Path('{path}').touch()",
        f"y = open('{path}', 'w')",
        f"y = exec(\"open('{path}', 'w')\")",
        f"y = eval(\"open('{path}', 'w')\")",
        f"y = [open('{path}', 'w') for i in x]",
        f"y = (lambda: open('{path}', 'w'))()",
        f"y = x; z = open('{path}', 'w')",
    ]


@pytest.mark.parametrize("attempt", range(7))
def test_no_file_is_created_by_a_program(cli, tmp_path, attempt):
    target = tmp_path / "pwned"
    program = _touch_attempts(target)[attempt]
    for command in ("eval", "grad", "vjp", "jacobian"):
        result = cli(command, "-e", program, "--x", "1", "--no-cache")
        assert result.exit_code == 2
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("attempt", range(3))
def test_no_file_is_created_by_a_value(cli, tmp_path, attempt):
    target = tmp_path / "pwned"
    value = [
        f"__import__('pathlib').Path('{target}').touch()",
        f"open('{target}', 'w')",
        f"ones(open('{target}', 'w'))",
    ][attempt]
    for option in (["--x", value], ["-i", f"x={value}"], ["-i", "x=1", "--v", value]):
        result = cli("vjp", "-e", "y = x * 1", *option)
        assert result.exit_code == 2
        assert "Traceback" not in result.stderr
    assert not target.exists()


def test_hostile_constructor_arguments_in_a_program(cli, tmp_path):
    target = tmp_path / "pwned"
    result = cli(
        "eval", "-e", f"w = ones(__import__('pathlib').Path('{target}').touch())", "--no-cache"
    )
    assert result.exit_code == 2
    assert "not allowed in a value" in result.stderr
    assert not target.exists()


def test_sympy_names_in_a_program_are_plain_inputs(cli_json):
    """Names that mean something to sympy (S, N, I, E, Symbol) are inputs like any other."""
    document = cli_json(
        "eval",
        "-e",
        "y = S + N + I + E + Symbol + Integer",
        "-i",
        "S=1",
        "-i",
        "N=2",
        "-i",
        "I=3",
        "-i",
        "E=4",
        "-i",
        "Symbol=5",
        "-i",
        "Integer=6",
    )
    assert document["values"]["y"] == 21.0
