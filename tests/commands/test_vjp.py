"""``gradcli vjp``: vector-Jacobian products on the seed post's examples (the README's command
first), checked as values (independent of the snapshots)."""

from __future__ import annotations

import json

import numpy as np

FIRST = "samples/first_example.gc"
README_COMMAND = [
    "vjp",
    "--expr",
    "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1",
    "--x",
    "1,2",
    "--v",
    "1,1,1",
]


def test_readme_command_gives_4_and_23(cli):
    result = cli(*README_COMMAND, "--format", "json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["grads"]["x"] == [4.0, 23.0]
    assert document["values"]["y"] == [1.0, 21.0, 6.0]
    assert document["warnings"] == []


# -- the seed post's examples ------------------------------------------------------------------


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
