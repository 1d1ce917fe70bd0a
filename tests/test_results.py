"""Every kind of result has a renderer for each format it lists, and only those formats.

One result of each kind is computed on a small program, rendered in each of its formats, and
refused in the others with an error that names the formats it has.
"""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pytest

from gradcli import results
from gradcli.base.errors import GradcliError
from gradcli.batch.plan import run as batch_run
from gradcli.commands import compute
from gradcli.commands.derivative import derivative
from gradcli.commands.explain.chain import explain
from gradcli.commands.uncertainty import propagate
from gradcli.domains.exact import Problem, answer
from gradcli.lang import parse_program
from gradcli.render import Options, registered, render, renderer

VECTOR = "y0 = x0**2; y1 = x0**2 + 5*x1**2; y2 = 3*x1 + 2"
SCALAR = "f = (1 - x0)**2 + 100*(x1 - x0**2)**2"
EVERY_FORMAT = ("table", "json", "csv", "dot")


def _bound(source: str, x) -> compute.Bound:
    return compute.bind(parse_program(source), {"x": np.asarray(x, dtype=float)})


def _kinds(base: type = results.Result) -> list[type]:
    """The kinds of result a command answers with: the leaves of the family."""
    found = []
    for kind in base.__subclasses__():
        found.extend(_kinds(kind) if kind.__subclasses__() else [kind])
    return found


@pytest.fixture(scope="module")
def examples() -> dict[type, results.Result]:
    vector, scalar = _bound(VECTOR, [1, 2]), _bound(SCALAR, [-1.2, 1])
    line = compute.bind(parse_program("y = tanh(x)"), {"x": np.array(0.0)})
    made = [
        compute.evaluate(vector),
        compute.grad(scalar),
        compute.vjp(vector, v=np.ones(3)),
        compute.jacobian(vector, transpose=True),
        compute.jvp(vector, None, {"x": np.array([1.0, 0.0])}),
        compute.hessian(scalar),
        compute.hvp(scalar, None, {"x": np.array([1.0, 0.0])}),
        compute.check(vector),
        compute.jacobian(vector, "y0,y1"),  # several outputs
        compute.graph(vector),
        compute.plot(line, None, (-1.0, 1.0), points=5),
        explain(vector, v=np.ones(3)),
        next(batch_run(scalar, "grad", {"x": np.ones((3, 2))})),
        answer("hessian", Problem(parse_program(SCALAR), {}, {"x": np.ones(2)}, {}, 0, True), None),
        derivative(scalar, None, ["x0", "x0", "x1"]),
        propagate(vector, None, {"x": np.array([0.1, 0.2])}, second_order=True),
    ]
    return {type(result): result for result in made}


def test_every_kind_of_result_has_an_example_here(examples):
    assert set(_kinds()) == set(examples), "add an example of the new kind of result"


def _cases(which):
    return [(kind, fmt) for kind in _kinds() for fmt in EVERY_FORMAT if which(kind, fmt)]


def _name(value) -> str:
    return getattr(value, "__name__", value)


@pytest.mark.parametrize("kind, fmt", _cases(lambda kind, fmt: fmt in kind.formats), ids=_name)
def test_each_kind_renders_in_each_of_its_formats(examples, kind, fmt):
    buffer = io.StringIO()
    render(examples[kind], fmt, Options(precision=3), file=buffer)
    text = buffer.getvalue()
    assert text.strip() and text.endswith("\n") and not text.endswith("\n\n")
    if fmt == "json":
        documents = [json.loads(line) for line in text.splitlines()]
        if kind is results.Points:
            assert [d["point"] for d in documents] == [0, 1, 2]
        else:
            (document,) = documents
            assert document["command"] == examples[kind].command
            several = kind is results.Several  # the names of several outputs, listed
            output = examples[kind].output
            assert document["output"] == (output.split(",") if several else output)


@pytest.mark.parametrize("kind, fmt", _cases(lambda kind, fmt: fmt not in kind.formats), ids=_name)
def test_a_format_a_kind_does_not_list_is_refused_with_the_ones_it_has(kind, fmt):
    with pytest.raises(GradcliError) as refused:
        renderer(kind, fmt)
    assert f"cannot be written as {fmt!r}" in refused.value.message
    assert refused.value.hint == f"use one of {', '.join(kind.formats)}"


def test_renderers_are_registered_for_the_formats_each_kind_lists_and_no_others():
    declared = {(kind, fmt) for kind in _kinds() for fmt in kind.formats}
    assert registered() == declared


def test_results_hold_numbers_and_the_renderers_round_them(examples):
    """Check's differences are numbers: the table rounds them, JSON keeps every digit."""
    difference = results.Difference("finite differences", "x", (0, 1), 1 / 3, 0.0)
    check = dataclasses.replace(examples[results.Check], agree=False, worst=(difference,))
    table, document = io.StringIO(), io.StringIO()
    render(check, "table", Options(precision=3), file=table)
    render(check, "json", file=document)
    line = "finite differences differs from reverse mode at dy/dx[0,1]: "
    assert f"  {line}0.333 vs 0\n" in table.getvalue()
    assert json.loads(document.getvalue())["worst"] == [f"{line}0.3333333333333333 vs 0.0"]
