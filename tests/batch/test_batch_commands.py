"""--batch for jacobian, jvp, hvp, hessian and check: every point against torch 2.13 (the
per-point functions of torch.func and torch.autograd.functional), the --out layouts (each
point's result stacked), check's verdict per point and its exit code, and the errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
LAYER = "y = tanh(W @ x) * sum(x**2)"  # x (3,) at each point, W (2, 3) fixed
SCALAR = "f = sum(tanh(W @ x) ** 2) + sum(x**3 * w)"  # x and w both given points
W = [[0.1, 0.2, 0.3], [-0.4, 0.5, 0.6]]


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def points(tmp_path):
    """Five seeded points of x (3,) in a .npy file, and of x and w in a .npz file."""
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "xw.npz", x=x, w=w)
    return {"x": x, "w": w, "npy": f"@{tmp_path}/x.npy", "npz": f"@{tmp_path}/xw.npz"}


def _torch():
    torch = pytest.importorskip("torch")
    return torch, torch.tensor(W, dtype=torch.float64)


def _layer(torch, w_matrix):
    return lambda x: torch.tanh(w_matrix @ x) * (x**2).sum()


def _scalar(torch, w_matrix):
    return lambda x, w: (torch.tanh(w_matrix @ x) ** 2).sum() + (x**3 * w).sum()


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_batch_jacobians_match_torch_at_every_point(cli, points, mode):
    torch, w_matrix = _torch()
    result = cli("jacobian", "-e", LAYER, "-i", f"W={W}", "--batch", points["npy"], "--mode", mode)
    assert result.exit_code == 0, result.stderr
    lines = _lines(result.stdout)
    expected = torch.func.vmap(torch.func.jacrev(_layer(torch, w_matrix)))(
        torch.from_numpy(points["x"])
    )
    assert [line["point"] for line in lines] == [0, 1, 2, 3, 4]
    got = np.array([line["jacobian"]["x"] for line in lines])
    assert got.shape == (5, 2, 3)
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-12, atol=1e-14)
    values = np.array([line["values"]["y"] for line in lines])
    f = _layer(torch, w_matrix)
    np.testing.assert_allclose(values, [f(torch.from_numpy(p)).numpy() for p in points["x"]])


@pytest.mark.torch
def test_batch_jvp_matches_torch_at_every_point(cli, points):
    torch, w_matrix = _torch()
    t = [1.0, 0.5, -0.25]
    result = cli("jvp", "-e", LAYER, "-i", f"W={W}", "--t", str(t), "--batch", points["npy"])
    assert result.exit_code == 0, result.stderr
    got = np.array([line["jvp"]["y"] for line in _lines(result.stdout)])
    tangent = torch.tensor(t, dtype=torch.float64)
    f = _layer(torch, w_matrix)
    expected = [torch.func.jvp(f, (torch.from_numpy(p),), (tangent,))[1] for p in points["x"]]
    np.testing.assert_allclose(got, torch.stack(expected).numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.torch
def test_batch_hessians_of_two_inputs_match_torch_at_every_point(cli, points, tmp_path):
    torch, w_matrix = _torch()
    out = tmp_path / "h.npz"
    args = ["-i", f"W={W}", "--wrt", "x,w", "--batch", points["npz"], "--out", out]
    result = cli("hessian", "-e", SCALAR, *args)
    assert result.exit_code == 0, result.stderr
    assert "wrote 5 points" in result.stderr
    f = _scalar(torch, w_matrix)
    with np.load(out) as saved:
        assert sorted(saved.files) == sorted(
            ["values.f", "hessian.x,x", "hessian.x,w", "hessian.w,x", "hessian.w,w"]
        )
        for i, (x, w) in enumerate(zip(points["x"], points["w"])):
            blocks = torch.autograd.functional.hessian(
                f, (torch.from_numpy(x), torch.from_numpy(w))
            )
            for (a, b), block in {
                ("x", "x"): blocks[0][0],
                ("x", "w"): blocks[0][1],
                ("w", "x"): blocks[1][0],
                ("w", "w"): blocks[1][1],
            }.items():
                np.testing.assert_allclose(
                    saved[f"hessian.{a},{b}"][i], block.numpy(), rtol=1e-12, atol=1e-14
                )


@pytest.mark.torch
def test_batch_hvp_matches_torch_at_every_point(cli, points):
    torch, w_matrix = _torch()
    v = {"x": [0.5, -2.0, 1.0], "w": [1.0, 0.0, 3.0]}
    args = ["--v", f"x={v['x']}", "--v", f"w={v['w']}"]
    result = cli("hvp", "-e", SCALAR, "-i", f"W={W}", *args, "--batch", points["npz"])
    assert result.exit_code == 0, result.stderr
    f = _scalar(torch, w_matrix)
    vectors = tuple(torch.tensor(v[n], dtype=torch.float64) for n in ("x", "w"))
    for line, x, w in zip(_lines(result.stdout), points["x"], points["w"]):
        _, expected = torch.autograd.functional.hvp(
            f, (torch.from_numpy(x), torch.from_numpy(w)), vectors
        )
        np.testing.assert_allclose(line["hvp"]["x"], expected[0].numpy(), rtol=1e-12)
        np.testing.assert_allclose(line["hvp"]["w"], expected[1].numpy(), rtol=1e-12)


def test_batch_results_equal_the_single_runs(cli, cli_json, points, tmp_path):
    """Each line holds what the command says at that point alone (jacobian and check here)."""
    np.save(tmp_path / "two.npy", points["x"][:, :2])
    lines = _lines(cli("jacobian", "-e", EXAMPLE2, "--batch", f"@{tmp_path}/two.npy").stdout)
    checks = cli("check", "-e", "y = sin(x) * x[0]", "--batch", points["npy"])
    assert checks.exit_code == 0, checks.stderr
    for point, line, verdict in zip(points["x"][:, :2], lines, _lines(checks.stdout)):
        at = ",".join(repr(float(p)) for p in point)
        single = cli_json("jacobian", "-e", EXAMPLE2, "--x", at)
        np.testing.assert_allclose(line["jacobian"]["x"], single["jacobian"]["x"], rtol=1e-15)
        assert verdict["check"]["agree"] is True
        assert 0 <= verdict["check"]["max_error"] < 1e-6


def test_check_exits_1_and_names_the_points_where_the_methods_disagree(cli, tmp_path):
    """relu at 0: torch's derivative is 0, the central difference 1/2."""
    np.save(tmp_path / "p.npy", np.array([1.0, 0.0, -1.0, 0.0]))
    result = cli("check", "-e", "y = relu(x)", "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 1
    lines = _lines(result.stdout)
    assert [line["check"]["agree"] for line in lines] == [True, False, True, False]
    assert lines[1]["check"]["max_error"] == pytest.approx(0.5)
    assert "check: the methods disagree at 2 of 4 points (1, 3)" in result.stderr
    out = tmp_path / "c.npz"
    written = cli("check", "-e", "y = relu(x)", "--batch", f"@{tmp_path}/p.npy", "--out", out)
    assert written.exit_code == 1
    with np.load(out) as saved:
        assert saved["check.agree"].tolist() == [True, False, True, False]


def test_batch_out_stacks_each_points_result(cli, points, tmp_path):
    npy = tmp_path / "J.npy"
    args = ["-i", f"W={W}", "--wrt", "x", "--batch", points["npy"], "--out", npy]
    result = cli("jacobian", "-e", LAYER, *args)
    assert result.exit_code == 0, result.stderr
    assert np.load(npy).shape == (5, 2, 3)  # points, output, input
    folder = tmp_path / "jvp"
    args = ["jvp", "-e", LAYER, "-i", f"W={W}", "--t", "1,0,0", "--batch", points["npy"]]
    assert cli(*args, "--out", f"{folder}/").exit_code == 0
    (part,) = sorted((folder / "jvp.y").iterdir())
    lines = _lines(cli(*args).stdout)
    np.testing.assert_array_equal(np.load(part), [line["jvp"]["y"] for line in lines])
    several = cli("check", "-e", EXAMPLE2, "--batch", points["npy"], "--out", tmp_path / "c.npy")
    assert several.exit_code == 2
    assert "there are 2 results (check.agree, check.max_error)" in several.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["jacobian", "-e", EXAMPLE2, "--transpose"], "--batch does not take --transpose"),
        (["jacobian", "-e", EXAMPLE2, "--heatmap"], "--batch does not take --heatmap"),
        (["jacobian", "-e", EXAMPLE2, "--exact"], "--exact does not take --batch"),
        (["hessian", "-e", "f = sum(x**2)", "--symbolic"], "--batch does not take --symbolic"),
        (["hessian", "-e", "y = x * 2"], "hessian needs a scalar output"),
        (["hvp", "-e", "f = sum(x**2)"], "no vector v for x"),
        (["hvp", "-e", "f = sum(x**2)", "--v", "1,2,3"], "v for x has shape (3,)"),
        (["jvp", "-e", "y = x * 2", "--t", "1,2,3"], "the tangent of x has shape (3,)"),
        (["jvp", "-e", "y = x * 2", "--t", "q=1"], "--t names 'q'"),
        (["check", "-e", "y = x * 2", "--atol", "nan"], "--atol must be a finite number"),
        (["jacobian", "-e", "y = x * 2", "--mode", "sideways"], "--mode: 'sideways' is not"),
        (["jvp", "-e", "y = x * 2", "--format", "csv"], "--batch writes JSON lines"),
    ],
)
def test_batch_refuses_what_it_cannot_answer(cli, tmp_path, args, message):
    np.save(tmp_path / "p.npy", np.ones((3, 2)))
    result = cli(*args, "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_point_is_named_by_its_index(cli, tmp_path):
    np.savez(tmp_path / "p.npz", x=np.ones((3, 2)), k=np.array([[1, 2], [3, 4.5], [5, 6]]))
    program = "k = torch.tensor([1, 2]); y = x * k"
    result = cli("jacobian", "-e", program, "--batch", f"@{tmp_path}/p.npz")
    assert result.exit_code == 2
    assert "--batch: point 1: k is an integer tensor" in result.stderr
    np.save(tmp_path / "m.npy", np.array([[1.0, -2.0, 3.0], [0.0, 1.0, 2.0], [3.0, -1.0, -4.0]]))
    shapes = cli("jacobian", "-e", "y = x[x > 0] * 2", "--batch", f"@{tmp_path}/m.npy")
    assert shapes.exit_code == 2
    assert "--batch: point 2: the output y has shape (1,) here, but (2,)" in shapes.stderr


def test_masks_are_traced_at_each_point_for_every_command(cli, tmp_path):
    """x[x > 0]: the pass is traced anew at each point, the results still per point."""
    np.save(tmp_path / "m.npy", np.array([[1.0, -2.0, 3.0], [2.0, 1.0, -1.0]]))
    result = cli("hessian", "-e", "f = sum(x[x > 0] ** 3)", "--batch", f"@{tmp_path}/m.npy")
    assert result.exit_code == 0, result.stderr
    got = [line["hessian"]["x,x"] for line in _lines(result.stdout)]
    assert got == [np.diag([6.0, 0.0, 18.0]).tolist(), np.diag([12.0, 6.0, 0.0]).tolist()]
