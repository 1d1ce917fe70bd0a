"""The seed post's numbers, checked as values (independent of the snapshots)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

README_COMMAND = [
    "vjp",
    "--expr",
    "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1",
    "--x",
    "1,2",
    "--v",
    "1,1,1",
]
NOT_A_LEAF = "not a leaf"


def test_readme_command_gives_4_and_23(cli):
    result = cli(*README_COMMAND, "--format", "json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["grads"]["x"] == [4.0, 23.0]
    assert document["values"]["y"] == [1.0, 21.0, 6.0]
    assert document["warnings"] == []


# -- the first example: x.grad is 4.5 everywhere ------------------------------------------------

FIRST = "samples/first_example.gc"
FIRST_INLINE = ["-e", "y = x + 2; z = y * y * 3; out = mean(z)", "--x", "ones(2,2)"]


@pytest.mark.parametrize("source", [["-f", FIRST], FIRST_INLINE], ids=["sample", "inline"])
@pytest.mark.parametrize(
    "command, key",
    [
        (["grad"], "grads"),
        (["vjp"], "grads"),
        (["jacobian"], "jacobian"),
        (["jacobian", "--transpose"], "jacobian"),
    ],
    ids=["grad", "vjp", "jacobian", "jacobian-T"],
)
def test_first_example_is_4_5_everywhere(cli_json, source, command, key):
    document = cli_json(*command, *source)
    assert document["values"]["out"] == 27.0
    np.testing.assert_array_equal(document[key]["x"], np.full((2, 2), 4.5))


def test_first_example_in_csv_and_table(cli):
    csv_text = cli("grad", "-f", FIRST, "--format", "csv").stdout
    rows = list(csv.reader(io.StringIO(csv_text)))
    assert [row for row in rows if row[0] == "grads.x"] == [
        ["grads.x", str(i), str(j), "4.5"] for i in range(2) for j in range(2)
    ]
    table = cli("grad", "-f", FIRST).stdout
    assert "│ [0] │ 4.5 │ 4.5 │" in table and "│ [1] │ 4.5 │ 4.5 │" in table


def test_first_example_non_leaves_are_none_with_a_warning(cli):
    result = cli("grad", "-f", FIRST, "--show", "y,z", "--format", "json")
    document = json.loads(result.stdout)
    assert document["grads"]["y"] is None and document["grads"]["z"] is None
    assert [w.split(":")[0] for w in document["warnings"]] == ["y.grad", "z.grad"]
    assert all(NOT_A_LEAF in w for w in document["warnings"])
    assert result.stderr.count("warning: ") == 2 and NOT_A_LEAF in result.stderr


def test_repeat_2_doubles_the_gradient(cli_json):
    once = cli_json("grad", "-f", FIRST)
    twice = cli_json("grad", "-f", FIRST, "--repeat", "2")
    three = cli_json("grad", "-f", FIRST, "--repeat", "3")
    np.testing.assert_array_equal(twice["grads"]["x"], 2 * np.array(once["grads"]["x"]))
    np.testing.assert_array_equal(three["grads"]["x"], np.full((2, 2), 13.5))


def test_retain_grad_keeps_the_intermediate_gradient(cli_json):
    document = cli_json("grad", "-f", FIRST, "--retain-grad", "z", "--show", "z")
    # out = mean(z) over 4 elements: d out / d z = 1/4
    np.testing.assert_array_equal(document["grads"]["z"], np.full((2, 2), 0.25))
    np.testing.assert_array_equal(document["grads"]["x"], np.full((2, 2), 4.5))
    assert document["warnings"] == []


def test_retain_grad_on_y_gives_dout_dy(cli_json):
    document = cli_json("grad", "-f", FIRST, "--retain-grad", "y")
    # d out / d y = 6 y / 4 = 4.5 at y = 3
    np.testing.assert_array_equal(document["grads"]["y"], np.full((2, 2), 4.5))


def test_float32_runs_in_single_precision(cli_json):
    double = cli_json("eval", "-e", "y = x * 1", "--x", "0.1")
    single = cli_json("eval", "-e", "y = x * 1", "--x", "0.1", "--dtype", "float32")
    assert double["values"]["y"] == 0.1
    assert single["values"]["y"] == float(np.float32(0.1)) != 0.1
    grads = cli_json("grad", "-f", FIRST, "--dtype", "float32")
    np.testing.assert_array_equal(grads["grads"]["x"], np.full((2, 2), 4.5))
    jac = cli_json("jacobian", "-f", "samples/vjp_example2.gc", "--dtype", "float32")
    assert jac["jacobian"]["x"] == [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]]


# -- the one-layer network ----------------------------------------------------------------------

NETWORK = "samples/neural_network.gc"


def test_network_gradients_match_the_hand_formula(cli_json):
    values = cli_json("eval", "-f", NETWORK)["values"]
    x, y = np.array(values["x"]), np.array(values["y"])
    W, b = np.array(values["W"]), np.array(values["b"])
    assert x.shape == (8,) and W.shape == (8, 10) and b.shape == (10,)
    np.testing.assert_array_equal(x, np.ones(8))
    np.testing.assert_array_equal(y, np.zeros(10))
    z = x @ W + b
    # loss = mean(softplus(z) - y z): d loss / d z = (sigmoid(z) - y) / 10
    dz = (1 / (1 + np.exp(-z)) - y) / 10
    loss = np.mean(np.log1p(np.exp(z)) - y * z)

    document = cli_json("grad", "-f", NETWORK, "--show", "z,loss")
    grads = document["grads"]
    np.testing.assert_allclose(document["values"]["loss"], loss, rtol=1e-12)
    np.testing.assert_allclose(grads["W"], np.outer(x, dz), rtol=1e-12)
    np.testing.assert_allclose(grads["b"], dz, rtol=1e-12)
    assert grads["x"] is None and grads["y"] is None
    assert grads["z"] is None and grads["loss"] is None
    assert [w.split(":")[0] for w in document["warnings"]] == ["z.grad", "loss.grad"]


def test_network_warnings_go_to_stderr(cli):
    result = cli("grad", "-f", NETWORK, "--show", "z,loss")
    assert result.exit_code == 0
    assert "warning: z.grad" in result.stderr and "warning: loss.grad" in result.stderr
    assert "warning" not in result.stdout
    assert "z.grad = None" in result.stdout and "x.grad = None" in result.stdout


# -- vector-Jacobian products ------------------------------------------------------------------


def test_example_1_jt_v_is_v(cli_json):
    document = cli_json("vjp", "-f", "samples/vjp_example1.gc", "--v", "0.1,0.2,0.3")
    assert document["grads"]["x"] == [0.1, 0.2, 0.3]
    x = cli_json("eval", "-f", "samples/vjp_example1.gc")["values"]["x"]
    np.testing.assert_array_equal(document["values"]["y"], np.array(x) + 2)


def test_example_1_with_random_v(cli_json):
    v = cli_json("eval", "-e", "y = v * 1", "-i", "v=rand(3)")["values"]["v"]
    document = cli_json("vjp", "-f", "samples/vjp_example1.gc", "--v", "rand(3)")
    assert document["grads"]["x"] == v
    assert len(set(v)) == 3 and all(0 <= e < 1 for e in v)
    backward = cli_json("grad", "-f", "samples/vjp_example1.gc", "--v", "rand(3)")
    assert backward["grads"]["x"] == v


def test_example_2_vjp_and_jacobian(cli_json):
    sample = "samples/vjp_example2.gc"
    assert cli_json("vjp", "-f", sample, "--v", "1,1,1")["grads"]["x"] == [4.0, 23.0]
    assert cli_json("grad", "-f", sample, "--v", "1,1,1")["grads"]["x"] == [4.0, 23.0]
    jac = cli_json("jacobian", "-f", sample)
    assert jac["jacobian"]["x"] == [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]]
    jac_t = cli_json("jacobian", "-f", sample, "--transpose")
    assert jac_t["jacobian"]["x"] == [[2.0, 2.0, 0.0], [0.0, 20.0, 3.0]]


def test_log_general_case(cli_json):
    document = cli_json("vjp", "-f", "samples/log_general_case.gc", "--v", "[[3,2,0],[4,0,1]]")
    np.testing.assert_allclose(document["grads"]["x"], [[3, 1, 0], [1, 0, 1 / 6]], rtol=1e-15)
    np.testing.assert_allclose(document["values"]["y"], np.log([[1, 2, 3], [4, 5, 6]]), rtol=1e-15)


def test_vjp_does_not_accumulate_but_grad_does(cli_json):
    sample = "samples/vjp_example2.gc"
    vjp = cli_json("vjp", "-f", sample, "--v", "1,1,1")
    grad = cli_json("grad", "-f", sample, "--v", "1,1,1", "--repeat", "2")
    assert vjp["grads"]["x"] == [4.0, 23.0]
    assert grad["grads"]["x"] == [8.0, 46.0]


def test_vjp_wrt_an_intermediate_node(cli_json):
    document = cli_json("vjp", "-f", FIRST, "--wrt", "y")
    # out = mean(3 y^2): d out / d y = 6 y / 4 = 4.5
    np.testing.assert_array_equal(document["grads"]["y"], np.full((2, 2), 4.5))


# -- JSON: NaN and infinities are null, or strings with --nonfinite string ----------------------


def test_json_writes_minus_inf_for_log_zero(cli):
    result = cli("eval", "-e", "y = log(x)", "--x", "0,1", "--format", "json")
    assert result.exit_code == 0
    assert "Infinity" not in result.stdout and "inf" not in result.stdout.split("warnings")[0]
    assert json.loads(result.stdout)["values"]["y"] == [None, 0.0]
    asked = cli(
        "eval", "-e", "y = log(x)", "--x", "0,1", "--format", "json", "--nonfinite", "string"
    )
    assert json.loads(asked.stdout)["values"]["y"] == ["-inf", 0.0]


@pytest.mark.parametrize("nonfinite, nan, inf, minus_inf", [
    ([], None, None, None),
    (["--nonfinite", "null"], None, None, None),
    (["--nonfinite", "string"], "nan", "inf", "-inf"),
])  # fmt: skip
def test_json_nan_and_inf_everywhere(cli_json, nonfinite, nan, inf, minus_inf):
    values = cli_json("eval", "-e", "y = log(x); z = 1 / x", "--x", "-1,0,1", *nonfinite)
    assert values["values"]["y"] == [nan, minus_inf, 0.0]
    assert values["values"]["z"] == [-1.0, inf, 1.0]
    grads = cli_json("grad", "-e", "y = sum(log(x))", "--x", "-1,0,1", *nonfinite)["grads"]
    assert grads["x"] == [-1.0, inf, 1.0]
    scalar = cli_json("eval", "-e", "y = sqrt(x)", "--x", "-1", *nonfinite)["values"]
    assert scalar["y"] == nan
