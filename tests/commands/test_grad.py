"""``gradcli grad``: leaf gradients with PyTorch's semantics (accumulation over --repeat,
retain_grad, the warning for a non-leaf's .grad), on the seed post's examples, checked as
values (independent of the snapshots)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

NOT_A_LEAF = "not a leaf"

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
