"""Item assignment with tensors in the index (issue 12): ``y[x > 0] = 0``, ``y[idx] = v``,
``y[mask] = w * 2``, as torch's ``index_put_`` (accumulate False), against torch 2.13: values,
gradients, batched replay where the mask changes from point to point, and torch's node name."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = [1.5, -2.0, 3.0, -4.0, 0.5, 2.0]
CASES = {
    "mask, a number": ("y[x > 0] = 0", lambda x, y: y.__setitem__(x > 0, 0)),
    "mask, a scalar of x": (
        "y[x < 0] = x[0] * 2",
        lambda x, y: y.__setitem__(x < 0, x[0] * 2),
    ),
    "indices repeated": (
        "y[idx] = x[:3] ** 2",
        lambda x, y: y.__setitem__(torch.tensor([4, 1, 4]), x[:3] ** 2),
    ),
    "2-d: a slice and indices": (
        "m = reshape(x * x, (2, 3)); m[:, idx2] = x[:2] * 3; y = reshape(m, (6,))",
        None,
    ),
}
PRELUDE = "idx = tensor([4, 1, 4]); idx2 = tensor([2, 0]); y = x * x"
TAIL = "; z = sum(y * sin(x))"


def _torch_grad(name: str, values: list[float]) -> tuple[float, list[float]]:
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = x * x
    _, write = CASES[name]
    if write is None:
        m = (x * x).reshape(2, 3)
        m[:, torch.tensor([2, 0])] = x[:2] * 3
        y = m.reshape(6)
    else:
        write(x, y)
    z = (y * torch.sin(x)).sum()
    z.backward()
    return float(z.detach()), x.grad.tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_item_assignment_by_tensors_is_torchs_index_put(name, cli_json):
    statement, _ = CASES[name]
    prelude = PRELUDE.replace("; y = x * x", "") if "2-d" in name else PRELUDE
    program = f"{prelude}; {statement}{TAIL}"
    out = cli_json("grad", "-e", program, "--x", ",".join(map(str, X)))
    value, grad = _torch_grad(name, X)
    assert out["values"]["z"] == pytest.approx(value, rel=1e-12)
    assert np.allclose(out["grads"]["x"], grad, rtol=1e-12, atol=1e-12)


def test_batched_replay_follows_the_mask_of_each_point(cli, tmp_path):
    points = np.array([X, [-1.0, 2.0, -3.0, 4.0, -0.5, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0, -1.0]])
    path = tmp_path / "points.csv"
    path.write_text("\n".join(",".join(map(str, row)) for row in points))
    program = f"{PRELUDE}; y[x < 0] = x[0] * 2{TAIL}"
    result = cli("grad", "-e", program, "--batch", f"@{path}")
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == len(points)
    for row, point in zip(rows, points):
        value, grad = _torch_grad("mask, a scalar of x", point.tolist())
        assert row["values"]["z"] == pytest.approx(value, rel=1e-12)
        assert np.allclose(row["grads"]["x"], grad, rtol=1e-12, atol=1e-12)


SCRIPT = """import torch
x = torch.tensor([1., -2., 3., -4.], requires_grad=True)
v = torch.tensor([10., 20., 30.], requires_grad=True)
idx = torch.tensor([0, 2, 0])
y = x * 1
y[idx] = v
print(y)
g = torch.tensor([1., 2., 3., 4.])
y.backward(g)
print(x.grad, v.grad)
z = x * 1
z[1:3] = 7
print(z)
"""


def test_run_prints_what_torch_prints(cli):
    result = cli("run", "-", input=SCRIPT)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "tensor([30., -2., 20., -4.], grad_fn=<IndexPutBackward0>)",
        "tensor([0., 2., 0., 4.]) tensor([1., 3., 1.])",
        "tensor([ 1.,  7.,  7., -4.], grad_fn=<CopySlices>)",
    ]


def test_a_value_that_does_not_fit_the_index_is_refused(cli):
    result = cli("grad", "-e", "y = x * 1; y[x > 0] = x[:2]; z = sum(y)", "--x", "1,2,3")
    assert result.exit_code == 2
    assert "cannot be broadcast to indexing result of shape [3]" in result.stderr
