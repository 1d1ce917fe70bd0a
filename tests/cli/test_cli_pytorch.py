"""PyTorch code pasted as a program: the scripts of ``tests/pytorch`` (the seed post's
examples verbatim, and snippets of our own) give torch's gradients in ``grad`` and ``vjp``.

Each script is run by gradcli, and (where torch is installed) by torch itself: the test
executes our own test scripts with torch, its ``rand``/``randn`` handing out the values
gradcli drew for those statements (gradcli's generator is not torch's), and compares every
leaf's ``.grad``.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "pytorch").glob("*.py"))


def _torch_with(values: list[np.ndarray]):
    """torch, except that rand and randn return ``values`` in turn (float64)."""
    torch = pytest.importorskip("torch")
    queue = list(values)

    def drawn(*sizes, requires_grad=False):
        value = torch.tensor(queue.pop(0), dtype=torch.float64)
        assert tuple(value.shape) == tuple(sizes)
        return value.requires_grad_(requires_grad)

    fake = types.SimpleNamespace(**{n: getattr(torch, n) for n in dir(torch) if n[:1] != "_"})
    fake.rand = fake.randn = drawn
    fake.set_default_dtype = torch.set_default_dtype
    fake.autograd = types.SimpleNamespace(grad=_recording(torch.autograd.grad))
    return torch, fake


def _recording(grad):
    """``torch.autograd.grad``, also adding what it returns for each input to that input's
    ``.grad``: what ``gradcli grad`` shows for a script's torch.autograd.grad calls."""

    def recorded(outputs, inputs, *args, **kwargs):
        found = grad(outputs, inputs, *args, **kwargs)
        listed = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        for tensor, value in zip(listed, found):
            if value is not None:
                value = value.detach()
                tensor.grad = value if tensor.grad is None else tensor.grad + value
        return found

    return recorded


def _torch_grads(script: Path, values: dict[str, np.ndarray]) -> dict:
    text = script.read_text()
    randoms = [
        values[line.split("=")[0].strip()]
        for line in text.splitlines()
        if "torch.rand" in line and "=" in line
    ]
    torch, fake = _torch_with(randoms)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # gradcli runs in float64
    try:
        namespace = {"torch": fake, "print": lambda *a: None, "F": torch.nn.functional}
        code = "\n".join(
            line for line in text.splitlines() if not line.startswith(("import", "from"))
        )
        exec(compile(code, str(script), "exec"), namespace)  # our own test script, not user text
    finally:
        torch.set_default_dtype(previous)
    return {
        name: (None if value.grad is None else value.grad.numpy())
        for name, value in namespace.items()
        if isinstance(value, torch.Tensor) and value.is_leaf and name in values
    }


@pytest.mark.torch
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_a_pasted_script_gives_torchs_gradients(cli, script):
    done = cli("grad", "-f", str(script), "--format", "json")
    assert done.exit_code == 0, done.stderr
    grads = json.loads(done.stdout)["grads"]
    values = json.loads(cli("eval", "-f", str(script), "--format", "json").stdout)["values"]
    inputs = {name: np.asarray(values[name]) for name in grads}
    expected = _torch_grads(script, inputs)
    assert set(expected) == set(grads)
    for name, want in expected.items():
        if want is None:
            assert grads[name] is None, name
        else:
            np.testing.assert_allclose(grads[name], want, rtol=1e-12, atol=1e-14, err_msg=name)


def test_the_seed_posts_numbers(cli_json):
    first = cli_json("grad", "-f", "tests/pytorch/seed_first_example.py")
    assert first["output"] == "out" and first["values"]["out"] == 27.0
    assert first["grads"]["x"] == [[4.5, 4.5], [4.5, 4.5]]
    general = cli_json("grad", "-f", "tests/pytorch/seed_general_case.py")["grads"]["x"]
    np.testing.assert_allclose(general, [[3.0, 1.0, 0.0], [1.0, 0.0, 1 / 6]], rtol=1e-15)
    # y = x + 2: J is the identity, so x.grad is the v the script drew
    example = cli_json("eval", "-f", "tests/pytorch/seed_vjp_example1.py")["values"]
    grads = cli_json("grad", "-f", "tests/pytorch/seed_vjp_example1.py")["grads"]
    assert grads["x"] == example["v"] and grads["v"] is None


def test_vjp_takes_the_scripts_cotangent_and_sums_its_backward_calls(cli_json):
    general = cli_json("vjp", "-f", "tests/pytorch/seed_general_case.py")
    np.testing.assert_allclose(general["grads"]["x"], [[3, 1, 0], [1, 0, 1 / 6]], rtol=1e-15)
    twice = cli_json("vjp", "-f", "tests/pytorch/accumulate_twice.py")  # 2 * (2x)
    assert twice["grads"]["x"] == [4.0, 8.0, 12.0]
    given = cli_json("vjp", "-f", "tests/pytorch/seed_general_case.py", "--v", "ones(2, 3)")
    np.testing.assert_allclose(given["grads"]["x"], 1 / np.array([[1, 2, 3], [4, 5, 6]]))


@pytest.mark.torch
@pytest.mark.parametrize("stem", ["autograd_grad_two_inputs", "autograd_grad_item"])
def test_vjp_takes_torch_autograd_grads_output_inputs_and_cotangent(cli_json, stem):
    """The script's torch.autograd.grad calls decide the output, the cotangent and the inputs
    (no --wrt, no --v): vjp gives what torch's calls return, as grad does."""
    script = SCRIPTS[[s.stem for s in SCRIPTS].index(stem)]
    values = cli_json("eval", "-f", str(script))["values"]
    found = cli_json("vjp", "-f", str(script))["grads"]
    expected = _torch_grads(script, {n: np.asarray(values[n]) for n in ("x", "w")})
    assert set(found) == {n for n, g in expected.items() if g is not None}
    for name, value in found.items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-12, err_msg=name)


@pytest.mark.parametrize(
    "program, message",
    [
        (
            "x = torch.ones(3, requires_grad=True)\ny = sum(x * x)\n"
            "g, = torch.autograd.grad(y, x, create_graph=True)\nz = sum(g)",
            "'g' holds what torch.autograd.grad returned (statement 3)",
        ),
        (
            "x = torch.ones(3, requires_grad=True)\ny = x * 2\n"
            "g = torch.autograd.grad(y, x, torch.ones(3))",
            "the grad_outputs of torch.autograd.grad must be one name here",
        ),
        (
            "x = torch.ones(3, requires_grad=True)\ny = sum(x)\ng = torch.autograd.grad([y, y], x)",
            "torch.autograd.grad takes one output, a name, here",
        ),
        (
            "x = torch.ones(3, requires_grad=True)\ny = x * 2\nv = torch.ones(3)\n"
            "g = torch.autograd.grad(y, v, v)",
            "One of the differentiated Tensors does not require grad",
        ),
        (
            "x = torch.ones(3, requires_grad=True)\nx += 1\ny = sum(x)",
            "a leaf Variable that requires grad is being used in an in-place operation.",
        ),
        (
            "x = torch.ones(3, requires_grad=True)\nx.zero_()\ny = sum(x)",
            "a leaf Variable that requires grad is being used in an in-place operation.",
        ),
        (
            "x = torch.ones(3, requires_grad=True)\nx.grad.zero_()\ny = sum(x)\ny.backward()",
            "x.grad is None where the program calls x.grad.zero_()",
        ),
        ("y = x * 2\ny[0] += 1", "an in-place operator (+=, -=, *=, /=) takes a name here"),
        (
            "x = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()",
            "grad can be implicitly created only for scalar outputs",
        ),
        (
            # x * x saved x, which the first backward freed (a sum alone saves nothing, and a
            # second backward through it runs, as in torch)
            "x = torch.ones(3, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()",
            "Trying to backward through the graph a second time",
        ),
        ("import os\ny = x", "gradcli reads PyTorch code: it does not import 'os'"),
        (
            "x = torch.ones(3, dtype=torch.float64)\ny = sum(x)",
            "dtype= is not supported on an input yet",
        ),
        (
            "y = x * 2\ny.backward(torch.ones(3))",
            "the gradient given to backward must be a name here",
        ),
        (
            "x = torch.ones(3, requires_grad=True)\ny = x * 2\nv = torch.ones(2)\ny.backward(v)",
            "v has shape (2,) but the output y has shape (3,)",
        ),
        (
            "x = torch.zeros(3, requires_grad=True)\nx[0] = 2\ny = sum(x)",
            "a leaf Variable that requires grad is being used in an in-place operation.",
        ),
        ("y[0] = x", "'y' is written into before it is assigned"),
        ("y = torch.zeros(2)\ny[5] = x\nz = sum(y * x)", "the index does not fit the shape (2,)"),
        ("y = torch.zeros(2)\ny[0] = x\nz = sum(y * x)", "shape [3] cannot be broadcast"),
        (
            "y = torch.zeros(3, requires_grad=True) / 3 + x",
            "zeros(..., requires_grad=True) makes an input: it must be the whole right-hand side",
        ),
        (
            "y = sum(x * torch.rand_like(x))",
            "torch.rand_like is taken by gradcli run",
        ),
        ("torch.manual_seed(0)\ny = sum(x)", "a program takes torch.manual_seed as an option"),
        ("torch.set_default_dtype(torch.float64)\ny = sum(x)", "--dtype float32"),
        ("y = sum(x * torch.ones(3, dtype=torch.float64))", "dtype= is not supported on an"),
    ],
)
def test_pytorch_code_gradcli_cannot_take_is_refused_clearly(cli, program, message):
    done = cli("grad", "-e", program, "--x", "1,2,3")
    assert done.exit_code == 2, done.stdout
    assert message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("program", ["A", "import torch", "import torch\nprint(x)\nx.grad"])
def test_a_program_that_assigns_nothing_is_refused(cli, program):
    done = cli("eval", "-e", program)
    assert done.exit_code == 2 and "the program assigns nothing" in done.stderr


def test_a_constructor_inside_an_expression_is_a_constant_that_results_do_not_name(cli_json, cli):
    program = "y = sum((x + torch.ones(3)) * torch.full((3,), 2.))"
    grads = cli_json("grad", "-e", program, "--x", "1,2,3")["grads"]
    assert list(grads) == ["x"] and grads["x"] == [2.0, 2.0, 2.0]
    values = cli_json("eval", "-e", program, "--x", "1,2,3")["values"]
    assert set(values) == {"x", "y"} and values["y"] == 18.0
    graph = cli("graph", "-e", program, "--x", "1,2,3")
    assert graph.exit_code == 0 and "_c1" not in graph.stdout
    assert graph.stdout.count("constant [1, 1, 1]") == 1
