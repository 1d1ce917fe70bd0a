"""-i NAME=VALUE in every value form, --x, stdin, and --seed."""

from __future__ import annotations

import json

import numpy as np
import pytest

PROGRAM = ["-e", "y = w * 1"]


def value_of(cli_json, value: str, *extra: str, input: str | None = None) -> np.ndarray:
    """The array gradcli reads for ``-i w=VALUE``."""
    document = cli_json("eval", *PROGRAM, "-i", f"w={value}", *extra, input=input)
    assert document["values"]["y"] == document["values"]["w"]
    return np.array(document["values"]["w"], dtype=float)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2.5", np.array(2.5)),
        ("-1", np.array(-1.0)),
        ("1,2", np.array([1.0, 2.0])),
        ("[[1,2,3],[4,5,6]]", np.array([[1.0, 2, 3], [4, 5, 6]])),
        ("[[[1],[2]]]", np.array([[[1.0], [2.0]]])),
        ("ones(2,2)", np.ones((2, 2))),
        ("zeros(3)", np.zeros(3)),
        ("full(2,3, 0.5)", np.full((2, 3), 0.5)),
        ("eye(3)", np.eye(3)),
        ("eye(2, 3)", np.eye(2, 3)),
        ("arange(6)", np.arange(6.0)),
        ("arange(1, 2, 0.25)", np.array([1.0, 1.25, 1.5, 1.75])),
        ("linspace(0,1,5)", np.linspace(0, 1, 5)),
        ("tensor([[1, 2], [3, 4]])", np.array([[1.0, 2], [3, 4]])),
    ],
)
def test_value_forms(cli_json, text, expected):
    np.testing.assert_array_equal(value_of(cli_json, text), expected)


def test_nan_and_inf_in_a_list(cli_json):
    document = cli_json("eval", *PROGRAM, "-i", "w=[nan, inf, -inf, 1]", "--nonfinite", "string")
    assert document["values"]["w"] == ["nan", "inf", "-inf", 1.0]


@pytest.mark.parametrize("constructor", ["rand(2, 3)", "randn(2, 3)"])
def test_random_constructors(cli_json, constructor):
    array = value_of(cli_json, constructor)
    assert array.shape == (2, 3) and len(np.unique(array)) == 6
    if constructor.startswith("rand("):
        assert ((0 <= array) & (array < 1)).all()


def test_npy_file(cli_json, tmp_path):
    data = np.arange(6.0).reshape(2, 3) / 7
    np.save(tmp_path / "w.npy", data)
    np.testing.assert_array_equal(value_of(cli_json, f"@{tmp_path / 'w.npy'}"), data)


def test_npy_file_of_integers_is_read_as_floats(cli_json, tmp_path):
    np.save(tmp_path / "w.npy", np.array([1, 2, 3], dtype=np.int32))
    assert value_of(cli_json, f"@{tmp_path / 'w.npy'}").tolist() == [1.0, 2.0, 3.0]


def test_npz_file_with_key_and_single_array(cli_json, tmp_path):
    np.savez(tmp_path / "many.npz", a=np.ones(2), b=np.array([[1.5, 2.5]]))
    np.testing.assert_array_equal(value_of(cli_json, f"@{tmp_path / 'many.npz'}:b"), [[1.5, 2.5]])
    np.testing.assert_array_equal(value_of(cli_json, f"@{tmp_path / 'many.npz'}:a"), np.ones(2))
    np.savez(tmp_path / "one.npz", only=np.array([3.0, 4.0]))
    np.testing.assert_array_equal(value_of(cli_json, f"@{tmp_path / 'one.npz'}"), [3.0, 4.0])


def test_csv_file(cli_json, tmp_path):
    (tmp_path / "m.csv").write_text("1,2,3\n4,5,6\n")
    np.testing.assert_array_equal(
        value_of(cli_json, f"@{tmp_path / 'm.csv'}"), [[1.0, 2, 3], [4, 5, 6]]
    )
    (tmp_path / "row.csv").write_text("1.5, 2.5\n")
    np.testing.assert_array_equal(value_of(cli_json, f"@{tmp_path / 'row.csv'}"), [1.5, 2.5])
    (tmp_path / "column.csv").write_text("1\n2\n3\n")
    np.testing.assert_array_equal(value_of(cli_json, f"@{tmp_path / 'column.csv'}"), [1, 2, 3])


def test_json_file(cli_json, tmp_path):
    (tmp_path / "w.json").write_text(json.dumps([[1, 2], [3, "-inf"]]))
    document = cli_json("eval", *PROGRAM, "-i", f"w=@{tmp_path / 'w.json'}")
    assert document["values"]["w"] == [[1.0, 2.0], [3.0, None]]  # JSON's null: not finite


def test_json_on_stdin(cli_json):
    np.testing.assert_array_equal(
        value_of(cli_json, "-", input="[[1, 2], [3, 4.5]]"), [[1, 2], [3, 4.5]]
    )


def test_gradcli_json_output_reads_back_as_a_value(cli, cli_json):
    """A value printed by gradcli with --nonfinite string ("nan", "inf") is a valid value on
    stdin (null, the default's, says only that a number was not finite)."""
    first = cli_json("eval", "-e", "y = log(x)", "--x", "0,1,-1", "--nonfinite", "string")
    text = json.dumps(first["values"]["y"])
    assert value_of(cli_json, "-", input=text).tolist()[1] == 0.0


def test_x_and_i_together_and_x_by_i(cli_json):
    document = cli_json("grad", "-e", "out = sum(x * w)", "--x", "1,2", "-i", "w=3,4")
    assert document["grads"] == {"x": [3.0, 4.0], "w": [1.0, 2.0]}
    same = cli_json("grad", "-e", "out = sum(x * w)", "-i", "x=1,2", "-i", "w=3,4")
    assert same["grads"] == document["grads"]


def test_wrt_limits_which_inputs_require_grad(cli_json):
    document = cli_json("grad", "-e", "out = sum(x * w)", "--x", "1,2", "-i", "w=3,4", "--wrt", "w")
    assert document["grads"] == {"x": None, "w": [1.0, 2.0]}


def test_i_overrides_a_declared_input(cli_json):
    document = cli_json("grad", "-f", "samples/vjp_example2.gc", "--v", "1,1,1", "-i", "x=2,1")
    # J^T v = (4 x0, 10 x1 + 3)
    assert document["grads"]["x"] == [8.0, 13.0]


def test_program_from_stdin(cli_json):
    document = cli_json("grad", "-f", "-", "--x", "3", input="y = x * x  # square\n")
    assert document["grads"]["x"] == 6.0


# -- --seed --------------------------------------------------------------------------------------


def randn_values(cli_json, *seed: str) -> list:
    return cli_json("eval", *PROGRAM, "-i", "w=randn(4)", *seed)["values"]["w"]


def test_seed_changes_randn_and_the_same_seed_reproduces(cli_json):
    default = randn_values(cli_json)
    assert randn_values(cli_json, "--seed", "0") == default
    one = randn_values(cli_json, "--seed", "1")
    two = randn_values(cli_json, "--seed", "2")
    assert one != default and one != two
    assert randn_values(cli_json, "--seed", "1") == one


def test_seed_changes_declared_random_inputs(cli_json):
    first = cli_json("eval", "-f", "samples/neural_network.gc", "--seed", "7")["values"]
    again = cli_json("eval", "-f", "samples/neural_network.gc", "--seed", "7")["values"]
    other = cli_json("eval", "-f", "samples/neural_network.gc", "--seed", "8")["values"]
    assert first["W"] == again["W"] and first["b"] == again["b"]
    assert first["W"] != other["W"] and first["b"] != other["b"]
    assert first["x"] == other["x"], "ones(8) does not depend on the seed"


def test_one_random_value_does_not_depend_on_another(cli_json):
    alone = cli_json("eval", "-e", "y = a * 1", "-i", "a=randn(3)")["values"]["a"]
    both = cli_json("eval", "-e", "y = a * b", "-i", "b=randn(3)", "-i", "a=randn(3)")["values"]
    assert both["a"] == alone
    assert both["b"] != alone, "different names give different streams"


def test_a_value_that_looks_like_a_file_or_a_fraction_gets_the_hint_that_fits(cli):
    """A file named without @ is told to take one; a fraction is told about --exact."""
    result = cli("vjp", "-e", "y = x * 2", "--v", "1,1", "--batch", "points.npy")
    assert result.exit_code == 2
    assert "hint: a file is written with @ before its name: @points.npy" in result.stderr
    result = cli("grad", "-e", "f = x0**2 * log(x1)", "--x", "1/3,2")
    assert result.exit_code == 2
    assert "arithmetic is not allowed in a value" in result.stderr
    assert "--exact" in result.stderr and "1/3" in result.stderr
