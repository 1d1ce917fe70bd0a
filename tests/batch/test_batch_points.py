"""--batch's points from .npy and stdin, its .npz --out, points of the wrong shape, and a
0-d output, each point as a single run gives it."""

from __future__ import annotations

import json

import numpy as np

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
ROSENBROCK = "f = (1 - x0)**2 + 100*(x1 - x0**2)**2"


def test_batch_of_a_0d_softmax(cli):
    result = cli("eval", "-e", "y = softmax(x) + log_softmax(x)", "--x", "2", "--batch", "-",
                 input="1\n2\n3\n")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["values"]["y"] for line in lines] == [1.0, 1.0, 1.0]


def test_batch_from_npy_matches_single_runs(cli, cli_json, tmp_path):
    points = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])
    np.save(tmp_path / "p.npy", points)
    result = cli(
        "vjp", "-e", EXAMPLE2, "--x", "1,2", "--v", "1,1,1", "--batch", f"@{tmp_path}/p.npy"
    )
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    for point, line in zip(points, lines):
        single = cli_json("vjp", "-e", EXAMPLE2, "--x", ",".join(map(str, point)), "--v", "1,1,1")
        assert line["grads"] == single["grads"] and line["values"] == single["values"]


def test_batch_from_stdin_json_lines_and_npz_out(cli, tmp_path):
    out = tmp_path / "r.npz"
    result = cli("grad", "-e", ROSENBROCK, "--x", "0,0", "--batch", "-", "--out", out,
                 input="[1, 2]\n[-1.2, 1]\n")  # fmt: skip
    assert result.exit_code == 0
    with np.load(out) as arrays:
        np.testing.assert_allclose(arrays["grads.x"], [[-400.0, 200.0], [-215.6, -88.0]])
        np.testing.assert_allclose(arrays["values.f"], [100.0, 24.2])


def test_batch_rejects_points_of_the_wrong_shape(cli, tmp_path):
    np.save(tmp_path / "p.npy", np.ones((4, 3)))
    result = cli(
        "vjp", "-e", EXAMPLE2, "--x", "1,2", "--v", "1,1,1", "--batch", f"@{tmp_path}/p.npy"
    )
    assert result.exit_code == 2
    assert "the points of x have shape (3,), but x has shape (2,)" in result.stderr
