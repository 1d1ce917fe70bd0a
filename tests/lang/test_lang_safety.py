"""Rejected text never reaches anything that evaluates: not eval, not exec, not sympy's parser."""

from __future__ import annotations

import builtins

import pytest

import gradcli.lang.build  # noqa: F401  (sympy imported before the spies are in place)
import gradcli.lang.parse as parse_module
from gradcli.base.errors import GradcliError
from gradcli.lang import parse_program

HOSTILE = [
    "y = __import__('os').system('echo hacked')",
    "y = ().__class__.__bases__",
    "y = ().__class__.__bases__[0].__subclasses__()",
    "y = x.__class__",
    "y = lambda: 1",
    "y = [i for i in x]",
    "y = 'abc'",
    "y = exec('import os')",
    "y = eval('1')",
    "y = open('/etc/passwd')",
    "y = getattr(x, '__class__')",
    "y = globals()",
    "y = __builtins__",
    "import os",
    "y = x\nimport os",
    "y = x; __import__('os')",
    "y = sum(x, dim=__import__('os'))",
    "y = x[__import__('os')]",
    "y = mean(x, keepdim=exec('1'))",
    "y = stack([x, open('f')])",
    # einsum's equation: a string, but only of letters, ',', '->', '...' and spaces
    "y = einsum('__import__', x)",
    "y = einsum('ij->i; import os', x)",
    "y = einsum('ij)+(x', x)",
    "y = einsum('i\\nj', x)",
    "y = einsum('ij-->i', x)",
    "y = einsum('ij->i->j', x)",
    "y = einsum('i.j', x)",
    "y = einsum('ij' + 'k', x)",
    "y = einsum(x, x)",
    "y = pad(x, (1, 1), mode='ij,jk')",
]


@pytest.fixture
def evaluations(monkeypatch):
    """Every call of builtins.eval/exec and of sympy's parse_expr while parsing a program."""
    calls = []

    def recorder(name, real):
        def record(*args, **kwargs):
            source = args[0] if args else None
            importing = getattr(source, "co_name", None) == "<module>" and not getattr(
                source, "co_filename", "<"
            ).startswith("<")
            if not importing:  # a lazy import runs its module's code with exec: not ours
                calls.append((name, source))
            return real(*args, **kwargs)

        return record

    monkeypatch.setattr(builtins, "eval", recorder("eval", builtins.eval))
    monkeypatch.setattr(builtins, "exec", recorder("exec", builtins.exec))
    monkeypatch.setattr(parse_module, "parse_expr", recorder("parse_expr", parse_module.parse_expr))
    return calls


@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_programs_are_rejected_before_anything_evaluates(evaluations, source):
    with pytest.raises(GradcliError):
        parse_program(source)
    assert evaluations == []


def test_the_recorder_sees_sympy_evaluate_a_valid_program(evaluations):
    """The control: a valid program does reach sympy's parser, which calls eval."""
    parse_program("y = sum(x * 2)")
    names = [name for name, _ in evaluations]
    assert names[0] == "parse_expr" and "eval" in names


def test_hostile_constructor_arguments_are_never_evaluated(tmp_path, evaluations):
    """A constructor statement is kept as text; its arguments are read as literals only."""
    target = tmp_path / "pwned"
    program = parse_program(f"w = ones(__import__('pathlib').Path('{target}').touch())")
    with pytest.raises(GradcliError, match="not allowed in a value"):
        program.declared_value("w", 0)
    assert not target.exists()
    assert evaluations == []


@pytest.mark.parametrize(
    "equation", ["ij,jk->ik", "ij,jk", " i j , j k -> i k ", "...ij->...", "Ab,bA->", "..."]
)
def test_an_einsum_equation_reaches_the_parser_as_a_name_and_comes_back_whole(equation):
    """The equation is encoded as one name (sympy sees no string) and decoded unchanged."""
    program = parse_program(f"y = einsum('{equation}', x)")
    (assignment,) = program.assignments
    assert assignment.ir is not None and assignment.ir.params == (equation,)
