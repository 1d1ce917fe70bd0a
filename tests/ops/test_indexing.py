"""Indexing by tensors through the command line, against torch: x[idx], x[mask], x[x > 0],
x[:, [0, 2]], x[[0, 1], [1, 2]] and gather/scatter/... in programs, their gradients (repeated
indices add up), --batch with a mask computed from the inputs, and the refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = [[0.5, -1.5, 2.0], [0.0, -0.25, 3.0]]
TEXT = "[[0.5,-1.5,2.0],[0.0,-0.25,3.0]]"


@pytest.mark.parametrize(
    ("source", "program"),
    [
        ("y = sum(x[x > 0] ** 2)", lambda x: (x[x > 0] ** 2).sum()),
        ("m = x < 1; y = sum(exp(x[m]))", lambda x: x[x < 1].exp().sum()),
        (
            "y = sum(x[:, [0, 2, 0]] * x[:, [1, 1, 1]])",
            lambda x: (x[:, [0, 2, 0]] * x[:, [1, 1, 1]]).sum(),
        ),
        ("y = sum(x[[0, 1, 1], [1, 2, 2]] ** 3)", lambda x: (x[[0, 1, 1], [1, 2, 2]] ** 3).sum()),
        ("y = sum(x[[1, 1, 0]] * 2)", lambda x: (x[[1, 1, 0]] * 2).sum()),
        ("i = tensor([2., 0., 2.]); y = sum(x[1, i] ** 2)", lambda x: (x[1, [2, 0, 2]] ** 2).sum()),
        (
            "i = tensor([[0., 2.], [1., 1.]]); y = sum(gather(x, 1, i) ** 2)",
            lambda x: (torch.gather(x, 1, torch.tensor([[0, 2], [1, 1]])) ** 2).sum(),
        ),
        (
            "i = tensor([2., 2.]); y = sum(x.index_select(1, i) * x[:, :2])",
            lambda x: (x.index_select(1, torch.tensor([2, 2])) * x[:, :2]).sum(),
        ),
        (
            "i = tensor([[1., 0., 1.]]); y = sum(scatter_add(x, 0, i, x[:1] ** 2) ** 2)",
            lambda x: (torch.scatter_add(x, 0, torch.tensor([[1, 0, 1]]), x[:1] ** 2) ** 2).sum(),
        ),
        (
            "i = tensor([[1., 0., 1.]]); y = sum(scatter(x, 0, i, x[:1] * 3) ** 2)",
            lambda x: (torch.scatter(x, 0, torch.tensor([[1, 0, 1]]), x[:1] * 3) ** 2).sum(),
        ),
        (
            "i = tensor([0., 0.]); y = sum(index_add(x, 0, i, x * x, alpha=2) ** 2)",
            lambda x: (torch.index_add(x, 0, torch.tensor([0, 0]), x * x, alpha=2) ** 2).sum(),
        ),
        (
            "y = sum(masked_select(x, x > 0.25) ** 2)",
            lambda x: (torch.masked_select(x, x > 0.25) ** 2).sum(),
        ),
        (
            "i = tensor([[2.], [0.]]); y = sum(take_along_dim(x, i, 1) ** 2)",
            lambda x: (torch.take_along_dim(x, torch.tensor([[2], [0]]), 1) ** 2).sum(),
        ),
    ],
    ids=[
        "mask",
        "named_mask",
        "columns",
        "pairs",
        "rows",
        "tensor",
        "gather",
        "index_select",
        "scatter_add",
        "scatter",
        "index_add",
        "masked_select",
        "take_along_dim",
    ],
)
def test_programs_that_index_by_tensors_give_torchs_gradient(cli_json, source, program):
    document = cli_json("grad", "-e", source, "--x", TEXT, "--no-cache")
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    out = program(x)
    out.backward()
    np.testing.assert_allclose(document["values"]["y"], out.item(), rtol=1e-12)
    np.testing.assert_allclose(document["grads"]["x"], x.grad.numpy(), rtol=1e-12, atol=0)


def test_the_parse_cache_keeps_a_tensor_index(cli_json):
    """The second run reads the program's IR from the parse cache (JSON)."""
    source = "y = sum(x[:, [2, 0]]) + sum(x[x > 0]) + sum(x[..., None, [1]])"
    first = cli_json("grad", "-e", source, "--x", TEXT)
    again = cli_json("grad", "-e", source, "--x", TEXT)
    assert first == again
    assert first["values"]["y"] == pytest.approx(5.5 + 5.5 - 1.75)


def test_explain_shows_the_index(cli):
    result = cli("explain", "-e", "y = sum(x[x > 0] + x[:, [0, 2]].sum())", "--x", TEXT)
    assert result.exit_code == 0, result.stderr
    assert "x[x > 0]" in result.stdout and "x[:, [0, 2]]" in result.stdout


def test_batch_recomputes_a_mask_at_each_point(cli, tmp_path):
    points = np.array([[0.5, -1.0, 3.0], [2.0, 3.0, -1.0], [-1.0, -2.0, -3.0]])
    np.save(tmp_path / "p.npy", points)
    source = "y = sum(x[x > 0] ** 2) + sum(x[[0, 0]])"
    result = cli("grad", "-e", source, "--x", "1,1,1", "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    for point, line in zip(points, lines):
        x = torch.tensor(point, requires_grad=True)
        y = (x[x > 0] ** 2).sum() + x[[0, 0]].sum()
        y.backward()
        np.testing.assert_allclose(line["values"]["y"], y.item())
        np.testing.assert_allclose(line["grads"]["x"], x.grad.numpy())


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("y = x[[0, 5]]", "index 5 is out of bounds for dimension 0 with size 2"),
        (
            "i = tensor([3.]); y = gather(x, 1, i.unsqueeze(0))",
            "index 3 is out of bounds for dimension 1 with size 3",
        ),
        ("i = tensor([0.5]); y = x[i]", "must be long, int or bool tensors"),
        ("y = x[x[0] > 0]", "the shape of the mask [3] at index 0 does not match"),
        ("y = x * 1; y[x[0] > 0] = 0", "the shape of the mask [3] at index 0 does not match"),
        (
            "y = x * 1; y[tensor([1])] = x[0, :2]",
            "value tensor of shape [2] cannot be broadcast to indexing result of shape [1, 3]",
        ),
        ("y = x * 1; i = tensor([0.5]); y[i] = 0", "must be long, int or bool tensors"),
        ("y = x[[0.5]]", "a list in an index must hold whole numbers"),
    ],
)
def test_refusals(cli, source, message):
    result = cli("eval", "-e", source, "--x", TEXT, "--no-cache")
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_functions_lists_the_indexing_operations(cli):
    listing = cli("functions").stdout
    for name in (
        "gather",
        "scatter",
        "scatter_add",
        "index_select",
        "index_add",
        "take_along_dim",
        "one_hot",
        "masked_select",
        "nonzero",
        "argwhere",
    ):
        assert name in listing
