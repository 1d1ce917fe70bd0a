"""Statements that unpack the results of an operation with several (``values, indices =
max(x, 1)``, ``a, b = split(x, 2)``) and the fields of a result (``.values``, ``.indices``,
``[k]``), in PyTorch's spellings too, through every command, against torch."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = [[0.5, -1.5, 2.0], [1.25, 3.0, -0.75]]
X_TEXT = json.dumps(X)


def _x(requires_grad: bool = True):
    return torch.tensor(X, dtype=torch.float64, requires_grad=requires_grad)


PROGRAMS = [
    (
        "v, i = max(x, dim=1); y = sum(v * i)",
        lambda x: (torch.max(x, dim=1).values * torch.max(x, dim=1).indices).sum(),
    ),
    ("values, indices = torch.max(x, 1); y = sum(values ** 2)", lambda x: (x.max(1)[0] ** 2).sum()),
    ("y = sum(x.max(dim=0).values) + sum(torch.min(x, 1)[0])",
     lambda x: x.max(0)[0].sum() + x.min(1)[0].sum()),
    ("s, j = x.sort(descending=True); y = sum(s[:, 0:2] * x[:, 0:2])",
     lambda x: (x.sort(descending=True).values[:, 0:2] * x[:, 0:2]).sum()),
    ("a, b = split(x, 2, 1); y = sum(a * a) + sum(b)",
     lambda x: (x[:, :2] ** 2).sum() + x[:, 2:].sum()),
    ("a, b, c = torch.split(x, [1, 1, 1], dim=1); y = sum(a * b * c)",
     lambda x: (x[:, 0] * x[:, 1] * x[:, 2]).sum()),
    ("r0, r1 = x.unbind(); y = sum(r0 * r1)", lambda x: (x[0] * x[1]).sum()),
    ("p, q = chunk(x, 2, 1); y = sum(p) * sum(q)", lambda x: x[:, :2].sum() * x[:, 2:].sum()),
    ("v, m = torch.var_mean(x, 1); y = sum(v * m)",
     lambda x: (torch.var_mean(x, 1)[0] * torch.var_mean(x, 1)[1]).sum()),
    ("s, m = std_mean(x, correction=0); y = s + m", lambda x: sum(torch.std_mean(x, correction=0))),
    ("t, k = topk(x, 2); y = sum(t * t)", lambda x: (x.topk(2).values ** 2).sum()),
    ("v, i = kthvalue(x, 2, 1); y = sum(v)", lambda x: x.kthvalue(2, 1).values.sum()),
    ("y = median(x) + sum(median(x, 1).values)", lambda x: x.median() + x.median(1).values.sum()),
    ("c, i = cummax(x, 1); y = sum(c * c)", lambda x: (x.cummax(1).values ** 2).sum()),
    ("y = sum(cummin(x, 0)[0]) + max(x)", lambda x: x.cummin(0)[0].sum() + x.max()),
    ("y = sum(max(x, x * x))", lambda x: torch.max(x, x * x).sum()),
    ("a, b = meshgrid(x[0], x[1], indexing='ij'); y = sum(a * b * b)",
     lambda x: (lambda a, b: (a * b * b).sum())(*torch.meshgrid(x[0], x[1], indexing="ij"))),
    ("p, q, r = torch.meshgrid([x[1, :2], x[0], x[1, 2]], indexing='xy'); y = sum(p * q + r)",
     lambda x: (lambda p, q, r: (p * q + r).sum())(
         *torch.meshgrid([x[1, :2], x[0], x[1, 2]], indexing="xy"))),
    ("y = sum(meshgrid((x[0], x[1]))[1] ** 2) + sum(meshgrid(x[1])[0])",
     lambda x: (torch.meshgrid(x[0], x[1], indexing="ij")[1] ** 2).sum() + x[1].sum()),
]  # fmt: skip


@pytest.mark.parametrize(("source", "program"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_unpacking_programs_give_torchs_value_and_gradient(cli_json, source, program):
    document = cli_json("grad", "-e", source, "--x", X_TEXT, "--no-cache")
    x = _x()
    out = program(x)
    out.backward()
    np.testing.assert_allclose(document["values"]["y"], out.item(), rtol=1e-12)
    np.testing.assert_allclose(document["grads"]["x"], x.grad.numpy(), rtol=1e-12, atol=1e-15)


SOURCE = "v, i = max(x, 1); s, j = sort(x); y = v * i + s[:, 0] + sum(j, 1)"


@pytest.mark.parametrize(
    "command",
    [
        ["eval"],
        ["grad", "--v", "1,1"],
        ["vjp", "--v", "1,2"],
        ["jacobian"],
        ["check"],
        ["explain", "--v", "1,1"],
        ["graph"],
        ["jvp", "--t", json.dumps([[1, 0, 0], [0, 1, 0]])],
        ["hessian", "--of", "y"],
    ],
    ids=lambda c: c[0],
)
def test_every_command_takes_an_unpacking_program(cli, command):
    name, *rest = command
    if name == "hessian":  # of a scalar
        source, rest = "v, i = max(x, 1); y = sum(v * v * i)", []
    else:
        source = SOURCE
    result = cli(name, "-e", source, "--x", X_TEXT, "--no-cache", *rest)
    assert result.exit_code == 0, result.stderr


def test_the_jacobian_of_an_unpacking_program_is_torchs(cli_json):
    document = cli_json("jacobian", "-e", SOURCE, "--x", X_TEXT, "--no-cache")

    def function(x):
        values, indices = torch.max(x, 1)
        s, j = torch.sort(x)
        return values * indices + s[:, 0] + j.sum(1)

    expected = torch.autograd.functional.jacobian(function, _x(False))
    np.testing.assert_allclose(document["jacobian"]["x"], expected.numpy(), atol=1e-15)


def test_indices_are_integers_in_json_and_csv(cli, cli_json):
    document = cli_json("eval", "-e", "v, i = max(x, 1); y = v", "--x", X_TEXT)
    assert document["values"]["i"] == [2, 1]
    assert all(type(n) is int for n in document["values"]["i"])
    rows = cli("eval", "-e", "v, i = max(x, 1); y = v", "--x", X_TEXT, "--format", "csv")
    lines = rows.stdout.splitlines()
    assert "values.i,0,,2" in lines and "values.i,1,,1" in lines


def test_an_index_has_no_gradient(cli):
    result = cli("grad", "-e", "y = argmax(x)", "--x", X_TEXT, "--no-cache")
    assert result.exit_code == 2
    assert "does not depend on any input that requires grad" in result.stderr


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("y = sort(x)", "sort(x) gives 2 tensors (values, indices), not one tensor"),
        ("y = split(x, 1)", "split(x, 1) gives a tuple of tensors, not one tensor"),
        ("a, b, c = max(x, 1)", "not enough values to unpack (expected 3, got 2)"),
        ("a, b = topk(x, 2).values", "only an operation that gives several tensors"),
        ("a, b = max(x)", "max(x) gives one tensor, which cannot be unpacked into 2 names"),
        ("y = var_mean(x).mean", "var_mean(x) has no field 'mean'"),
        ("a, a = max(x, 1)", "a name is given twice"),
        ("a, b[0] = max(x, 1)", "only names can take the tensors unpacked"),
        ("a, b, c = split(x, 1)", "not enough values to unpack (expected 3, got 2)"),
        ("a, b = split(x, 1, 1)", "too many values to unpack (expected 2)"),
        ("y = meshgrid(x[0], x[1])", "meshgrid(x[0], x[1]) gives a tuple of tensors, not one"),
        ("a, b, c = meshgrid(x[0], x[1])", "not enough values to unpack (expected 3, got 2)"),
        ("a, b = meshgrid(x[0])", "not enough values to unpack (expected 2, got 1)"),
        ("y = meshgrid(x[0])[1]", "meshgrid gives 1 tensor: there is no [1]"),
        (
            "a, b = meshgrid(x, x[0], indexing='ij')",
            "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got one of shape "
            "(2, 3) (tensors[0])",
        ),
        ("y = meshgrid(x[0], indexing='ji')[0]", "indexing of meshgrid must be 'ij', 'xy' or None"),
        ("y = meshgrid(indexing='ij')[0]", "meshgrid needs at least one tensor"),
        ("y = meshgrid([])[0]", "meshgrid needs at least one tensor"),
        ("y = meshgrid(tensors=[x[0]])[0]", "meshgrid has no argument named 'tensors'"),
        ("y = meshgrid(x[0], 'ij')[0]", "a string is not allowed here"),
        (
            "y = meshgrid(x[0], x[1] > 0)[0]",
            "meshgrid expects all tensors to have the same dtype, got bool and float64",
        ),
    ],
)
def test_unpacking_that_does_not_fit_is_refused(cli, source, message):
    result = cli("eval", "-e", source, "--x", X_TEXT, "--no-cache")
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_explain_names_the_result_taken(cli_json):
    document = cli_json("explain", "-e", "y = sum(sort(x, 1).values * x)", "--x", X_TEXT)
    steps = json.dumps(document["explain"])
    assert "sort(x, dim=1).values" in steps
