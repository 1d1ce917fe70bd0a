"""graph: the computational graph as JSON, a table and Graphviz text, with its warnings."""

from __future__ import annotations

import pytest


def test_graph_json_lists_nodes_with_torch_names(cli_json):
    nodes = cli_json("graph", "-f", "samples/neural_network.gc")["graph"]
    by_name = {n["name"]: n for n in nodes if n["name"]}
    # the loss's node is torch's loss.grad_fn (the mean of the elements' losses is in it)
    assert nodes[0]["name"] == "loss"
    assert nodes[0]["grad_fn"] == "BinaryCrossEntropyWithLogitsBackward0"
    assert by_name["z"]["grad_fn"] == "AddBackward0"
    assert by_name["W"]["is_leaf"] and by_name["W"]["requires_grad"]
    assert by_name["x"]["is_leaf"] and not by_name["x"]["requires_grad"]


def test_graph_shows_the_values_of_constants(cli, cli_json):
    args = ("graph", "-e", "y = x*3 + 2", "--x", "1,2")
    constants = [n for n in cli_json(*args)["graph"] if n["op"] == "constant"]
    assert sorted(n["value"] for n in constants) == [2.0, 3.0]
    assert all(n["value"] is None for n in cli_json(*args)["graph"] if n["op"] != "constant")
    tree = cli(*args).stdout
    assert "constant 3  shape ()" in tree and "constant 2  shape ()" in tree
    dot = cli(*args, "--format", "dot").stdout
    assert 'label="constant 3\\n()"' in dot and 'label="constant 2\\n()"' in dot
    rounded = cli("graph", "-e", "y = x*3.14159", "--x", "1", "--precision", "2").stdout
    assert "constant 3.1  shape ()" in rounded


def test_graph_dot_is_graphviz_text(cli):
    result = cli("graph", "-f", "samples/neural_network.gc", "--format", "dot")
    assert result.exit_code == 0
    assert result.stdout.startswith("digraph gradcli {")
    assert result.stdout.count("->") == 7


@pytest.mark.parametrize("fmt", ["table", "dot", "json"])
def test_graph_warns_and_strict_fails_as_the_other_commands_do(cli, fmt):
    args = ["graph", "-e", "y = log(x)", "--x", "0", "--format", fmt]
    loose = cli(*args)
    assert loose.exit_code == 0 and "log gave -inf" in loose.stderr
    strict = cli(*args, "--strict")
    assert strict.exit_code == 1 and "(--strict)" in strict.stderr
    assert strict.stdout == loose.stdout, "the graph is still printed"
