"""Tensors in ``gradcli run``'s interpreter behave as torch's do: each program here runs in the
interpreter and, with torch 2.13, in Python's interactive interpreter (``python_oracle``);
stdout (object addresses masked), exit status and exception line must be the same."""

from __future__ import annotations

import io
import math

import pytest
from python_oracle import gradcli_run, masked, torch_outcomes_fixture

from gradcli.script.python.interpreter import run_script

PRELUDE = "import torch\nx = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)\n"
PROGRAMS = {
    "grad read, written and None": "print(x.grad)\n(x * x).sum().backward()\nprint(x.grad)\n"
    "x.grad = None\nprint(x.grad)\n(x ** 3).sum().backward()\nx.grad\nx.grad.zero_()\nx.grad",
    "grad_fn": "y = x * 2\nprint(y.grad_fn.name(), x.grad_fn, y.grad_fn)\n"
    "z = (y + 1).sum()\nprint(z.grad_fn.next_functions)\nprint(y.grad_fn is y.grad_fn)",
    "requires_grad and is_leaf": "w = torch.ones(2)\nprint(w.requires_grad, w.is_leaf)\n"
    "w.requires_grad = True\ny = w * 2\nprint(w.requires_grad, y.requires_grad, y.is_leaf)\n"
    "v = torch.zeros(2).requires_grad_()\nprint(v)\ny.requires_grad_(False)",
    "shape dtype ndim T": "m = torch.arange(6.).reshape(2, 3)\nprint(m.shape, m.dtype, m.ndim, "
    "m.T.shape, m.mT.shape, m.size(), m.size(1), m.dim(), m.numel())\nprint(m.shape[0], "
    "len(m), m.device, torch.arange(3).dtype, m.double().dtype, m.int().float().dtype)",
    "torch's version": "print(torch.__version__, torch.__version__ >= '2.0')\n"
    "torch.__version__\nimport math\nmath.__version__",
    "a number on an operator's left": "r = 7 / torch.arange(1.0, 30.0)\nprint(r.tolist())\n"
    "y = (3.3 / x + 2 * x + 1.5 + x).sum()\ny.backward()\nprint(y.item(), x.grad.tolist())\n"
    "print(2 / torch.tensor([1, 2, 4]), 0 / torch.tensor([0.0, 2.0]), True / x, 2.5 * x)",
    "type": "n = torch.tensor([1, 2])\nprint(n.type(), x.type(), (n > 1).type())\n"
    "f = n.type(torch.float)\nprint(f, f.type(), f.type(torch.float32) is f)\n"
    "print(x.type('torch.DoubleTensor'), x.type(dtype=torch.int64))\nx.type('torch.Nothing')",
    "item and tolist": "s = (x * x).sum()\nprint(s.item(), x.tolist(), x[0].item())\nx.item()",
    "data and detach": "d = x.data\nd[0] = 10.0\nprint(x)\n"
    "print(x.detach(), x.detach().requires_grad)"
    "\ny = x * 2\nprint(y.detach().is_leaf, y.clone(), x.clone().grad_fn)",
    "backward with an expression": "y = x * x\ny.backward(torch.ones_like(x) * 2, "
    "retain_graph=True)\nprint(x.grad)\ny.backward(gradient=torch.tensor([1., 0., 0.]))\n"
    "print(x.grad)",
    "backward inputs": "w = torch.tensor(2.0, requires_grad=True)\nloss = (w * x).sum()\n"
    "loss.backward(inputs=[w])\nprint(w.grad, x.grad)",
    "retain_grad and hooks": "y = x * 3\ny.retain_grad()\nh = x.register_hook(lambda g: g * 10)\n"
    "(y * y).sum().backward()\nprint(y.grad, x.grad)\nh.remove()",
    "grad modes": "with torch.no_grad():\n    a = x * 2\nwith torch.enable_grad():\n    b = x * 2\n"
    "with torch.inference_mode():\n    c = x * 2\nwith torch.set_grad_enabled(False):\n"
    "    d = x * 2\nprint(a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad)\n"
    "@torch.no_grad()\ndef f(t):\n    return t * 2\n"
    "print(f(x).requires_grad, torch.is_grad_enabled())",
    "in place": "y = x * 1\ny += 1\ny.mul_(2)\ny[0] = 5.0\nprint(y)\ny.sum().backward()\n"
    "print(x.grad)"
    "\nwith torch.no_grad():\n    x -= 0.1 * x.grad\nprint(x)\nx += 1",
    "constructors": "print(torch.Tensor([1, 2]), torch.tensor([1, 2]), torch.zeros(2, 3).shape, "
    "torch.ones((2,)), torch.full((2,), 7), torch.eye(2), torch.arange(1, 4), "
    "torch.linspace(0, 1, 3))\nprint(torch.FloatTensor([1]), torch.tensor(True), "
    "torch.zeros_like(x), torch.tensor([[1., 2.]], dtype=torch.float64))",
    "methods through the op table": "m = torch.tensor([[1., 5.], [3., 2.]], requires_grad=True)\n"
    "print(m.sum(0), m.sum(dim=1, keepdim=True), m.mean(), m.max(), m.max(1), m.abs().sqrt())\n"
    "print(torch.max(m, 0).indices, m.transpose(0, 1), m.permute(1, 0), m.view(-1),"
    " m.reshape(4, 1))",
    "functional API": "def f(t):\n    return (t ** 2).sum()\nprint(torch.autograd.grad(f(x), x))\n"
    "from torch.autograd.functional import jacobian, hessian\nprint(jacobian(lambda t: t * 2, x))"
    "\nprint(hessian(f, x))\nprint(torch.func.grad(f)(x))",
    "truthiness": "print(bool(torch.tensor(0.)), bool(torch.tensor([2])))\nif x:\n    pass",
    "iteration and unpacking": "for row in torch.eye(2):\n    print(row)\na, b, c = x\nprint(a, c)",
    "errors": "y = x * 2\ny.backward()",
    "numbers with tensors": "lr = 0.1\ny = x * lr + 2 ** 2 - x / 3\n"
    "print(y, 1 - x, 2 ** x.detach())",
}


torch_outcomes = torch_outcomes_fixture(PRELUDE, PROGRAMS)


@pytest.mark.torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_tensor_behaves_as_torchs(name, torch_outcomes):
    program = PRELUDE + PROGRAMS[name]
    assert masked(gradcli_run(program)) == masked(torch_outcomes[program])


TRANSPOSES = (
    "x = torch.ones(2, 3, requires_grad=True)\nx.t().grad_fn\nx.T.grad_fn\nx.mT.grad_fn\n"
    "x.transpose(0, 1).grad_fn\nx.permute(1, 0).grad_fn\n"
)


def test_a_transpose_node_is_named_by_its_spelling_as_torchs():
    """torch records x.t() as TBackward0 and x.T as a permute (the entry's "spelled"); the
    names are those torch 2.13 prints for this program."""
    out, status, _ = gradcli_run("import torch\n" + TRANSPOSES)
    names = [line.split()[0] for line in out.splitlines()]
    assert status == 0
    assert names == [
        "<TBackward0",
        "<PermuteBackward0",
        "<TransposeBackward0",
        "<TransposeBackward0",
        "<PermuteBackward0",
    ]


def _warnings(program: str) -> list[str]:
    """The lines of the warnings gradcli run writes for ``program`` (their first line each)."""
    out, err = io.StringIO(), io.StringIO()
    assert run_script(program, "<stdin>", out=out, err=err) == 0, err.getvalue()
    return [line.split(": ")[0] for line in err.getvalue().splitlines() if "Warning: " in line]


def test_a_warning_names_the_line_python_names():
    """As torch 2.13 under Python: a warning raised inside a lambda names the lambda's line,
    one raised after a call, still in the caller's statement, the caller's line (not the last
    line the called function ran)."""
    lam = (
        "import math, torch\nt = torch.tensor(2., requires_grad=True)\nf = (\n"
        "  lambda: math.exp(t))\nprint(f())\n"
    )
    assert _warnings(lam) == ["<stdin>:4"]
    after = (
        "import torch\nx = torch.tensor(2.5, requires_grad=True)\ndef f(v):\n"
        "    return v * 2\nprint(f(x).grad)\n"
    )
    assert _warnings(after) == ["<stdin>:5"]


def test_math_takes_a_one_element_tensor_as_python_does():
    """math's functions take a one-element tensor through torch's __float__ (with its warning
    where it requires grad) or __index__, and refuse others with torch's words."""
    program = (
        "import math, torch\nt = torch.tensor(2.5, requires_grad=True)\n"
        "print(math.exp(t), math.floor(t), math.gcd(torch.tensor(6), 4), "
        "math.factorial(torch.tensor(4)))\n"
        "print(math.isclose(t, 2.52, rel_tol=0.01), math.isclose(1., 1.1, abs_tol=t))\n"
        "math.exp(torch.ones(2))\n"
    )
    out, status, last = gradcli_run(program)
    assert out == f"{math.exp(2.5)!r} 2 2 24\nTrue True\n"
    assert status == 1
    assert last == "ValueError: only one element tensors can be converted to Python scalars"
    _, _, last = gradcli_run("import math, torch\nmath.gcd(torch.tensor(2.), 4)\n")
    assert last == (
        "TypeError: only integer tensors of a single element can be converted to an index"
    )
