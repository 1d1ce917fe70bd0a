"""gradcli uncertainty: first-order propagation J Σ Jᵀ and the second-order mean, checked
against Monte Carlo sampling (numpy, a fixed seed) of the same functions written in numpy."""

from __future__ import annotations

import numpy as np
import pytest

SAMPLES = 400_000


def _sample(mean, cov, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).multivariate_normal(mean, cov, size=SAMPLES)


def _monte_carlo(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, standard deviation, correlation) of sampled outputs, a column each."""
    return values.mean(axis=0), values.std(axis=0), np.corrcoef(values, rowvar=False)


def test_independent_inputs_against_monte_carlo(cli_json):
    doc = cli_json(
        "uncertainty", "-e", "y = x0 * x1; z = sin(x0) + x1**2", "--x", "1.2,0.7±0.01,0.02"
    )
    assert doc["inputs"] == ["x"]
    mean, sd = np.array([1.2, 0.7]), np.array([0.01, 0.02])
    s = _sample(mean, np.diag(sd**2))
    outputs = np.stack([s[:, 0] * s[:, 1], np.sin(s[:, 0]) + s[:, 1] ** 2], axis=1)
    mc_mean, mc_sd, mc_corr = _monte_carlo(outputs)
    assert doc["values"] == pytest.approx({"y": 1.2 * 0.7, "z": np.sin(1.2) + 0.49})
    got_sd = np.array([doc["sd"]["y"], doc["sd"]["z"]])
    np.testing.assert_allclose(got_sd, mc_sd, rtol=0.01)
    np.testing.assert_allclose(np.array(doc["correlation"]), mc_corr, atol=0.01)
    np.testing.assert_allclose(
        np.array([doc["values"]["y"], doc["values"]["z"]]), mc_mean, atol=1e-3
    )


def test_correlated_inputs_from_a_covariance_file(cli_json, tmp_path):
    cov = np.array([[0.0004, -0.0003, 0.0], [-0.0003, 0.0009, 0.0002], [0.0, 0.0002, 0.0016]])
    path = tmp_path / "sigma.npy"
    np.save(path, cov)
    doc = cli_json(
        "uncertainty",
        "-e",
        "y = exp(x) * w; s = sum(y)",
        "--x",
        "0.5,1",
        "-i",
        "w=2",
        "--cov",
        f"@{path}",
        "--wrt",
        "x,w",
    )
    assert doc["labels"] == ["y[0]", "y[1]", "s"]
    s = _sample(np.array([0.5, 1.0, 2.0]), cov)
    y = np.exp(s[:, :2]) * s[:, 2:3]
    outputs = np.concatenate([y, y.sum(axis=1, keepdims=True)], axis=1)
    _, mc_sd, mc_corr = _monte_carlo(outputs)
    np.testing.assert_allclose([*doc["sd"]["y"], doc["sd"]["s"]], mc_sd, rtol=0.02)
    np.testing.assert_allclose(np.array(doc["correlation"]), mc_corr, atol=0.02)
    # J Σ Jᵀ exactly, from the Jacobian worked out by hand
    e = np.exp([0.5, 1.0])
    jacobian = np.array([[2 * e[0], 0, e[0]], [0, 2 * e[1], e[1]], [2 * e[0], 2 * e[1], e.sum()]])
    np.testing.assert_allclose(np.array(doc["covariance"]), jacobian @ cov @ jacobian.T, rtol=1e-12)


def test_second_order_mean_is_exact_for_a_quadratic(cli_json):
    # E[a² + a b] = μa² + σa² + μa μb for independent a, b
    doc = cli_json(
        "uncertainty",
        "-e",
        "f = a**2 + a*b",
        "-i",
        "a=1.5±0.3",
        "-i",
        "b=-2+-0.4",
        "--second-order",
    )
    assert doc["second_order_mean"]["f"] == pytest.approx(1.5**2 + 0.09 + 1.5 * -2, rel=1e-12)
    # first order: var = (2a + b)² σa² + a² σb²
    assert doc["sd"]["f"] == pytest.approx(np.sqrt((3 - 2) ** 2 * 0.09 + 2.25 * 0.16), rel=1e-12)


def test_second_order_mean_against_monte_carlo(cli_json):
    doc = cli_json(
        "uncertainty",
        "-e",
        "f = exp(a) * cos(b)",
        "-i",
        "a=0.3±0.1",
        "-i",
        "b=0.8±0.15",
        "--second-order",
    )
    s = _sample(np.array([0.3, 0.8]), np.diag([0.01, 0.0225]), seed=11)
    sampled = np.exp(s[:, 0]) * np.cos(s[:, 1])
    first, second = doc["values"]["f"], doc["second_order_mean"]["f"]
    # the correction moves the mean most of the way to the sampled one
    assert abs(second - sampled.mean()) < 0.2 * abs(first - sampled.mean())
    assert doc["sd"]["f"] == pytest.approx(sampled.std(), rel=0.03)


def test_table_and_csv(cli, csv_as_json):
    result = cli("uncertainty", "-e", "y = x0 * x1; z = x0 + x1", "--x", "1,2±0.1,0.2")
    assert result.exit_code == 0, result.stderr
    assert "first-order uncertainty of y, z" in result.stdout
    assert "0.2828" in result.stdout and "0.9487" in result.stdout
    csv = cli("uncertainty", "-e", "y = 2*x", "--x", "1,2+-0.5", "--format", "csv")
    lines = csv.stdout.splitlines()
    assert lines[0] == "element,value,sd,y[0],y[1]"
    assert lines[1].split(",")[:3] == ["y[0]", "2.0", "1.0"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--x", "1,2"], "no input has an uncertainty"),
        (["--x", "1,2±1,2,3"], "the standard deviation of x has shape (3,)"),
        (["--x", "1,2±-1"], "must be finite and >= 0"),
        (["--x", "1,2±"], "the standard deviation of x is empty"),
        (["--x", "1,2", "--cov", "[[1, 2], [3, 4]]"], "--cov is not symmetric"),
        (["--x", "1,2", "--cov", "[[1, 2], [2, 1]]"], "not positive semi-definite"),
        (["--x", "1,2", "--cov", "[[1]]"], "--cov has shape (1, 1)"),
        (["--x", "1,2±0.1", "--cov", "[[1, 0], [0, 1]]"], "--cov and VALUE±SD both"),
    ],
)
def test_bad_uncertainties_are_refused(cli, args, message):
    result = cli("uncertainty", "-e", "y = x * 2", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_every_assigned_name_by_default_and_element_assignments_as_their_vector(cli_json):
    doc = cli_json("uncertainty", "-e", "y0 = x0*2; y1 = x1*x0; s = y0 + y1", "--x", "1,2±0.1")
    assert list(doc["values"]) == ["y", "s"]
    assert doc["labels"] == ["y[0]", "y[1]", "s"]
    jacobian = np.array([[2.0, 0.0], [2.0, 1.0], [4.0, 1.0]])  # d(y0, y1, s)/d(x0, x1) at (1, 2)
    np.testing.assert_allclose(
        np.array(doc["covariance"]), 0.01 * jacobian @ jacobian.T, rtol=1e-12
    )
    only = cli_json(
        "uncertainty", "-e", "y0 = x0*2; y1 = x1*x0; s = y0 + y1", "--x", "1,2±0.1", "--of", "s"
    )
    assert only["labels"] == ["s"] and only["sd"]["s"] == pytest.approx(0.1 * np.sqrt(17))
