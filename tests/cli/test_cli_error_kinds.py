"""Errors by kind: each class of engine error reaches the user as exit 2 with its own hint; any
other exception is a bug in gradcli, exit 70, with the traceback only under --debug."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json

import pytest

import gradcli.base.engine_errors as engine_errors
import gradcli.lang.functions as F
from gradcli.base.errors import engine_hint, from_engine
from gradcli.ops import library as gc

# the module, not the function gc.tensor that the package exports under its name
tensor_module = importlib.import_module("gradcli.engine.tensor")

# What the hint of each kind says, in the user's words.
HINTS = {
    gc.ShapeError: "the shapes of the operands must fit the operation",
    gc.DomainError: "the operation does not take these values",
    gc.IndexDomainError: "indices count from 0, below the length of their axis",
    gc.GradError: "gradcli follows PyTorch's autograd rules here",
    engine_errors.SeedShapeError: "give a gradient (v) of the output's shape",
    engine_errors.AssertedError: "the argument is one torch refuses too",
    gc.ScalarOutputError: "the output is not a scalar: give the vector v with --v",
    gc.ComplexOutputError: "the output is complex: give v (complex, as --v 1+0j)",
    gc.DtypeError: "gradcli computes in float64 (the default) or float32",
    gc.ValueKindError: "give a tensor, or a tuple of tensors, where the function takes one",
    gc.UnsupportedError: "torch does not take these options together either",
    gc.GradcheckError: "the gradients differ from finite differences",
}


def _user_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, f"{fragment!r} not in:\n{result.stderr}"
    return result.stderr


def _raising(error: BaseException):
    def broken(*args, **kwargs):
        raise error

    return broken


def _break_sin(monkeypatch, error: BaseException) -> None:
    """The language's ``sin`` raises ``error`` when a statement calls it."""
    broken = dataclasses.replace(F.FUNCTIONS["sin"], call=_raising(error))
    monkeypatch.setitem(F.FUNCTIONS, "sin", broken)
    monkeypatch.setitem(F.OPS, "sin", broken)


def test_every_kind_of_engine_error_has_a_hint():
    """Every kind but SizeError, whose hint is its own: it names the option that raises the
    limit the operation met (below)."""
    kinds = {
        kind
        for _, kind in inspect.getmembers(engine_errors, inspect.isclass)
        if issubclass(kind, gc.EngineError) and kind is not gc.EngineError
    }
    assert kinds - {engine_errors.SizeError} == set(HINTS)


def test_a_size_error_brings_its_own_hint():
    error = engine_errors.SizeError(
        "the result of pad would have 9 elements", "use --max-elements 9"
    )
    assert engine_hint(error) == "use --max-elements 9"
    assert from_engine(error).hint == "use --max-elements 9"


@pytest.mark.parametrize("kind", list(HINTS), ids=lambda kind: kind.__name__)
def test_an_engine_error_in_backward_is_a_user_error_with_its_hint(cli, monkeypatch, kind):
    monkeypatch.setattr(tensor_module, "_run_backward", _raising(kind("the engine refused")))
    stderr = _user_error(
        cli("grad", "-f", "samples/first_example.gc"), "error: the engine refused", HINTS[kind]
    )
    assert f"hint: {HINTS[kind]}" in stderr


@pytest.mark.parametrize("kind", list(HINTS), ids=lambda kind: kind.__name__)
def test_an_engine_error_in_a_statement_points_at_it(cli, monkeypatch, kind):
    _break_sin(monkeypatch, kind("sin refused"))
    stderr = _user_error(
        cli("eval", "-e", "y = 2 * sin(x)", "--x", "1"),
        "error: statement 1 (line 1): sin refused",
        f"hint: {HINTS[kind]}",
    )
    assert "  y = 2 * sin(x)\n          ^" in stderr


@pytest.mark.parametrize(
    ("args", "kind", "message"),
    [
        (["eval", "-e", "z = x + w", "--x", "1,2", "-i", "w=1,2,3"], gc.ShapeError, "(2,)"),
        (["grad", "-e", "y = bce(x, x)", "--x", "0.5,2"], gc.DomainError, "between 0 and 1"),
        (["eval", "-e", "y = clamp(x)", "--x", "1"], gc.DomainError, "at least one of min"),
        (
            ["grad", "-e", "y = cross_entropy(x, 7)", "--x", "1,2"],
            gc.IndexDomainError,
            "class indices must be in [0, 1]",
        ),
        (
            ["grad", "-e", "y = x * 2", "--x", "1,2"],
            gc.ScalarOutputError,
            "grad can be implicitly created only for scalar outputs",
        ),
    ],
)
def test_what_the_engine_refuses_gets_the_hint_of_its_kind(cli, args, kind, message):
    _user_error(cli(*args), message, f"hint: {HINTS[kind]}")


def test_a_batch_refuses_a_non_scalar_output_without_v_as_backward_does(cli):
    _user_error(
        cli("grad", "-e", "y = x * 2", "--batch", "-", input="[1, 2]\n"),
        "error: grad can be implicitly created only for scalar outputs",
        f"hint: {HINTS[gc.ScalarOutputError]}",
    )


def test_an_engine_error_under_json_is_one_object(cli, monkeypatch):
    monkeypatch.setattr(tensor_module, "_run_backward", _raising(gc.GradError("no second time")))
    result = cli("grad", "-f", "samples/first_example.gc", "--format", "json")
    assert result.exit_code == 2
    document = json.loads(result.stderr)
    assert document["error"] == "no second time"
    assert document["hint"].startswith(HINTS[gc.GradError])


# -- a bug in gradcli is not the user's error ------------------------------------------------------


@pytest.fixture
def broken_backward(monkeypatch):
    """An internal bug: the reverse pass raises a TypeError."""
    monkeypatch.setattr(tensor_module, "_run_backward", _raising(TypeError("bad operand")))


def test_a_bug_exits_70_without_a_traceback(cli, broken_backward):
    result = cli("grad", "-f", "samples/first_example.gc")
    assert result.exit_code == 70, result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.startswith("internal error: TypeError: bad operand")
    assert "a bug in gradcli: please report it" in result.stderr
    assert "rerun with --debug" in result.stderr


def test_a_bug_under_debug_shows_the_traceback(cli, broken_backward):
    result = cli("grad", "-f", "samples/first_example.gc", "--debug")
    assert result.exit_code == 70, result.stderr
    assert "Traceback (most recent call last)" in result.stderr
    assert "raise error\nTypeError: bad operand" in result.stderr
    assert "internal error: TypeError: bad operand" in result.stderr
    assert "please report it, with the traceback above" in result.stderr


def test_a_bug_under_json_is_one_object(cli, broken_backward):
    result = cli("grad", "-f", "samples/first_example.gc", "--format", "json")
    assert result.exit_code == 70
    document = json.loads(result.stderr)
    assert document["where"] == "internal error"
    assert document["error"].startswith("TypeError: bad operand (a bug in gradcli")


def test_a_type_error_inside_an_operation_is_a_bug_not_bad_input(cli, monkeypatch):
    """The interpreter reports the engine's refusals only: a TypeError is gradcli's own."""
    _break_sin(monkeypatch, TypeError("unsupported operand"))
    result = cli("eval", "-e", "y = sin(x)", "--x", "1")
    assert result.exit_code == 70, result.stderr
    assert result.stderr.startswith("internal error: TypeError: unsupported operand")
