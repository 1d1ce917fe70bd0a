"""The commands take a PyTorch script, run by ``gradcli run``'s interpreter (``script.traced``):
the output is the tensor the script calls backward on, the inputs its leaves that require
grad, the cotangent the gradient it passes; every number is checked against torch running the
same script (with lines of the test's own after it, that print what torch computes)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

# a def, a loop and an nn.Linear; the loss is a scalar
NETWORK = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 2)
x = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]])

def loss_fn(out):
    total = 0
    for k in range(2):
        total = total + ((out[:, k] - k) ** 2).mean()
    return total

loss = loss_fn(torch.tanh(model(x)))
loss.backward()
print(model.weight.grad)
"""

# a vector output and the v of y.backward(v), through a def with a loop
VECTOR = """\
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)

def f(a, b):
    h = a * b
    for _ in range(2):
        h = torch.sin(h) + a
    return h

y = f(x, w)
v = torch.tensor([1.0, 0.1, 0.01])
y.backward(v)
print(x.grad, w.grad)
"""


def torch_says(script: str, tail: str) -> dict:
    """What torch computes: the script run by Python with torch, then ``tail``, which prints
    one JSON document."""
    done = subprocess.run(
        [sys.executable, "-c", script + "\nimport json as _json\n" + tail],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().split("\n")[-1])


@pytest.fixture
def script(tmp_path):
    def write(text: str, name: str = "script.py") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def close(found, expected, rtol=1e-5, atol=1e-6) -> None:
    np.testing.assert_allclose(np.asarray(found, float), np.asarray(expected), rtol, atol)


def test_grad_of_a_network_script_is_torchs(cli_json, script):
    pytest.importorskip("torch")
    expected = torch_says(
        NETWORK,
        "print(_json.dumps({'w': model.weight.grad.tolist(), 'b': model.bias.grad.tolist(), "
        "'loss': loss.item()}))",
    )
    found = cli_json("grad", "-f", script(NETWORK))
    assert found["output"] == "loss"
    assert list(found["grads"]) == ["model_weight", "model_bias"]
    close(found["values"]["loss"], expected["loss"])
    close(found["grads"]["model_weight"], expected["w"])
    close(found["grads"]["model_bias"], expected["b"])


def test_grad_and_vjp_take_the_scripts_v(cli_json, script):
    pytest.importorskip("torch")
    expected = torch_says(
        VECTOR, "print(_json.dumps({'x': x.grad.tolist(), 'w': w.grad.tolist()}))"
    )
    path = script(VECTOR)
    for command in ("grad", "vjp"):
        found = cli_json(command, "-f", path)
        assert found["output"] == "y"
        close(found["grads"]["x"], expected["x"])
        close(found["grads"]["w"], expected["w"])


def test_a_value_given_moves_the_point(cli_json, script):
    pytest.importorskip("torch")
    expected = torch_says(
        VECTOR,
        "x2 = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)\n"
        "f(x2, w).backward(v)\n"
        "print(_json.dumps({'x': x2.grad.tolist()}))",
    )
    found = cli_json("grad", "-f", script(VECTOR), "-i", "x=0,1,2")
    close(found["grads"]["x"], expected["x"])


def test_jacobian_of_a_script_is_torchs(cli_json, script):
    pytest.importorskip("torch")
    expected = torch_says(
        VECTOR,
        "from torch.autograd.functional import jacobian\n"
        "jx, jw = jacobian(f, (x.detach(), w.detach()))\n"
        "print(_json.dumps({'x': jx.tolist(), 'w': jw.tolist()}))",
    )
    for mode in ("auto", "forward", "reverse"):
        found = cli_json("jacobian", "-f", script(VECTOR), "--mode", mode)["jacobian"]
        close(found["x"], expected["x"])
        close(found["w"], expected["w"])


def test_hessian_of_a_network_script_is_torchs(cli_json, script):
    pytest.importorskip("torch")
    expected = torch_says(
        NETWORK,
        "from torch.autograd.functional import hessian\n"
        "def of_bias(b):\n"
        "    return loss_fn(torch.tanh(x @ model.weight.detach().T + b))\n"
        "print(_json.dumps({'h': hessian(of_bias, model.bias.detach()).tolist()}))",
    )
    found = cli_json("hessian", "-f", script(NETWORK), "--wrt", "model_bias")
    close(found["hessian"]["model_bias,model_bias"], expected["h"])


def test_check_of_a_script_agrees_and_says_why_there_are_no_formulas(cli_json, script):
    found = cli_json("check", "-f", script(VECTOR))
    assert found["agree"] is True
    assert set(found["check"]) == {"reverse", "forward", "finite differences"}
    assert any("traced graph, which has no formulas" in w for w in found["warnings"])


def test_autograd_grad_chooses_its_inputs(cli_json, script):
    pytest.importorskip("torch")
    text = VECTOR.replace("y.backward(v)", "(gx,) = torch.autograd.grad(y, [x], grad_outputs=v)")
    text = text.replace("print(x.grad, w.grad)", "print(gx)")
    expected = torch_says(text, "print(_json.dumps({'x': gx.tolist()}))")
    found = cli_json("grad", "-f", script(text))
    assert found["grads"]["w"] is None  # torch.autograd.grad(y, [x]) leaves w.grad alone
    close(found["grads"]["x"], expected["x"])


def test_the_last_pass_of_a_training_loop_is_differentiated(cli_json, script):
    pytest.importorskip("torch")
    text = NETWORK.replace(
        "loss = loss_fn(torch.tanh(model(x)))\nloss.backward()\n",
        "opt = torch.optim.SGD(model.parameters(), lr=0.5)\n"
        "for step in range(3):\n"
        "    opt.zero_grad()\n"
        "    loss = loss_fn(torch.tanh(model(x)))\n"
        "    loss.backward()\n"
        "    opt.step()\n",
    )
    expected = torch_says(text, "print(_json.dumps({'b': model.bias.grad.tolist()}))")
    found = cli_json("grad", "-f", script(text))
    close(found["grads"]["model_bias"], expected["b"])


def test_the_graph_of_a_script_is_torchs(cli_json, script):
    pytest.importorskip("torch")
    expected = torch_says(
        VECTOR,
        "seen, order, todo = set(), [], [y.grad_fn]\n"
        "while todo:\n"
        "    node = todo.pop(0)\n"
        "    if node is None or node in seen:\n"
        "        continue\n"
        "    seen.add(node)\n"
        "    name = lambda n: n.name().split('::')[-1]\n"
        "    order.append([name(node), sorted(name(n) for n, _ in node.next_functions if n)])\n"
        "    todo.extend(n for n, _ in node.next_functions)\n"
        "print(_json.dumps({'nodes': order}))",
    )
    nodes = cli_json("graph", "-f", script(VECTOR))["graph"]
    by_id = {n["id"]: n for n in nodes}
    found = [[n["grad_fn"], sorted(by_id[i]["grad_fn"] for i in n["inputs"])] for n in nodes]
    assert sorted(found) == sorted(expected["nodes"])  # no node for v or another constant
    assert nodes[0]["name"] == "y"
    leaves = {n["name"]: n["grad_fn"] for n in nodes if n["is_leaf"]}
    assert leaves == {"x": "AccumulateGrad", "w": "AccumulateGrad"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "import torch\ndef train(x):\n    (x * 2).sum().backward()\n"
            "x = torch.ones(2, requires_grad=True)\nprint(x * 2)\n",
            "the script calls no backward pass",
        ),
        (
            "import torch\ndef f(x):\n    return x * 2\nx = torch.ones(2, requires_grad=True)\n"
            "f(x).backward()\n",
            "line 5: the script stopped with RuntimeError: grad can be implicitly created "
            "only for scalar outputs",
        ),
        (
            "import torch\nimport os\nx = torch.ones(2, requires_grad=True)\n",
            "it does not import 'os'",
        ),
    ],
)
def test_a_script_the_commands_cannot_take_is_an_error(cli, script, text, message):
    result = cli("grad", "-f", script(text))
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_program_in_gradclis_notation_keeps_its_own_errors(cli):
    result = cli("grad", "-e", "y = foo(x)", "--x", "1")
    assert result.exit_code == 2
    assert "unknown function 'foo'" in result.stderr


def test_exact_refuses_a_script(cli, script):
    result = cli("grad", "-f", script(VECTOR), "--exact")
    assert result.exit_code == 2
    assert "--exact needs formulas" in result.stderr


def test_explain_walks_a_scripts_backward_pass_with_torchs_numbers(cli_json, script):
    pytest.importorskip("torch")
    text = VECTOR.replace("y = f(x, w)", "h = x * w\ny = torch.sin(h) + f(x, w)")
    expected = torch_says(
        text,
        "x.grad = w.grad = None\nh2 = x * w\nh2.retain_grad()\n"
        "(torch.sin(h2) + f(x, w)).backward(v)\n"
        "print(_json.dumps({'h': h2.grad.tolist(), 'x': x.grad.tolist(), "
        "'w': w.grad.tolist()}))",
    )
    found = cli_json("explain", "-f", script(text))
    walk = found["explain"]
    first = walk["forward"][0]
    assert first["statement"] == "h = MulBackward0(x, w)" and first["operation"] == "mul"
    rows = {row["node"]: row for row in walk["backward"]}
    close(rows["y (AddBackward0)"]["incoming"], [1.0, 0.1, 0.01])
    close(rows["h (MulBackward0)"]["incoming"], expected["h"])
    to_w = [p["gradient"] for row in walk["backward"] for p in row["passes_on"] if p["to"] == "w"]
    close(np.sum(to_w, axis=0), expected["w"])  # what reaches w, summed: w.grad
    close(found["grads"]["x"], expected["x"])


def test_export_refuses_a_script(cli, script):
    result = cli("export", "-f", script(VECTOR))
    assert result.exit_code == 2
    assert "a PyTorch script's program is its traced graph" in result.stderr


def test_a_scripts_hooks_are_said_to_be_left_out(cli_json, script):
    text = VECTOR.replace("y = f(x, w)", "x.register_hook(lambda g: g * 2)\ny = f(x, w)")
    found = cli_json("grad", "-f", script(text))
    assert any("hooks on its graph" in w and "not applied" in w for w in found["warnings"])
    plain = cli_json("grad", "-f", script(VECTOR))
    assert plain["warnings"] == []
    close(found["grads"]["x"], plain["grads"]["x"])  # the graph's own gradient, as said


def test_the_library_takes_a_script():
    pytest.importorskip("torch")
    import gradcli

    program = gradcli.program(VECTOR)
    expected = torch_says(
        VECTOR, "print(_json.dumps({'x': x.grad.tolist(), 'w': w.grad.tolist()}))"
    )
    assert program.inputs == ["x", "w"]
    close(program.grad().grads["x"], expected["x"])
    exact = program.grad(exact=True)
    close(exact.grads["w"], expected["w"])
    assert any("traced graph, which has no formulas" in w for w in exact.warnings)
