"""``torch.func`` (``functorch``, ``torch.vmap``) and ``torch.autograd.forward_ad`` in
``gradcli run``: each program runs in gradcli's interpreter and, with torch 2.13, in Python's
interactive interpreter (``python_oracle``); stdout (object addresses masked), exit status and
the exception's line must be the same.

And the memory a script's transforms take: every value the engine makes while a script runs
is held in the run's --max-memory tally while it lives (``engine/meter.py``), a Jacobian's or
a vmap's whole is foreseen before it is computed. Measured on a child process (its peak
resident size), under an address-space limit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from python_oracle import gradcli_run, masked, torch_outcomes_fixture

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_cli_bounds import measured  # noqa: E402 - the memory of a child process

PRELUDE = (
    "import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
    "def f(x):\n    return (x.sin() * x).sum()\n"
    "def g(x, y):\n    return x * y.cos()\n"
    "x = torch.tensor([0.5, -1.0, 2.0])\ny = torch.tensor([1.0, 2.0, 3.0])\n"
)
PROGRAMS = {
    "grad, argnums and has_aux": "from torch.func import grad, grad_and_value\n"
    "print(grad(f)(x))\nprint(grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y))\n"
    "def h(a):\n    s = (a ** 2).sum()\n    return s, a * 2\n"
    "print(grad(h, has_aux=True)(x))\nprint(grad_and_value(f)(x))\nprint(grad(grad(torch.sin))("
    "torch.tensor(1.0)))",
    "grad of a leaf that requires grad keeps the graph": "w = x.clone().requires_grad_()\n"
    "d = torch.func.grad(f)(w)\nprint(d)\nd.sum().backward()\nprint(w.grad)",
    "vjp and jvp": "from torch.func import vjp, jvp\nout, fn = vjp(g, x, y)\n"
    "print(out, fn(torch.ones(3)))\nprint(jvp(g, (x, y), (torch.ones(3), torch.zeros(3))))",
    "jacrev, jacfwd, hessian": "from torch.func import jacrev, jacfwd, hessian\n"
    "print(jacrev(g)(x, y))\nprint(jacfwd(g)(x, y), jacrev(g, argnums=(0, 1))(x, y))\n"
    "print(hessian(f)(x))\n"
    "print(jacfwd(jacrev(f))(x))",
    "linearize": "from torch.func import linearize\nout, jvp_fn = linearize(torch.sin, x)\n"
    "print(out, jvp_fn(torch.ones(3)))\njvp_fn",
    "vmap, in_dims and out_dims": "m = torch.arange(6.).reshape(2, 3)\n"
    "print(torch.vmap(torch.dot)(m, m))\nprint(torch.func.vmap(g, in_dims=(1, None))(m, y[:2]))\n"
    "print(torch.vmap(lambda r: r * 2, out_dims=1)(m))\n"
    "print(torch.vmap(torch.vmap(lambda a: a.exp()))(m))\n"
    "print(torch.vmap(torch.func.grad(f))(m))",
    # torch runs a vmapped function once over the batch: F.linear of a batch of vectors is one
    # matrix product, rounded unlike one product per vector; a batched sum follows the
    # input's layout (in_dims=1 sums down its columns)
    "vmap computes as one batched pass": "w = torch.arange(1023.).reshape(33, 31).sin()\n"
    "b = torch.arange(33.).cos()\nxs = (torch.arange(1984.).reshape(64, 31) * 0.37).cos() * 2\n"
    "def predict(weight, bias, r):\n"
    "    return F.linear(r, weight, bias).tanh()\n"
    "j0 = torch.vmap(torch.func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(w, b, xs)\n"
    "def summed(weight, bias, r):\n    return predict(weight, bias, r).sum(0)\n"
    "j1 = torch.func.jacrev(summed, argnums=2)(w, b, xs).movedim(1, 0)\n"
    "print(torch.equal(j0, j1), torch.allclose(j0, j1), j0.shape)\n"
    "print(torch.equal(torch.vmap(lambda r: r @ w.T)(xs), xs @ w.T))\n"
    "print(torch.equal(torch.vmap(lambda r: w @ r, out_dims=1)(xs), w @ xs.T))\n"
    "print(torch.equal(torch.vmap(lambda r: r.sin().sum(), in_dims=1)(xs), xs.sin().sum(0)))",
    "vmap keeps the graph to a captured leaf": "w = torch.ones(3, requires_grad=True)\n"
    "m = torch.arange(6.).reshape(2, 3) / 4\nout = torch.vmap(lambda r: (r * w).exp())(m)\n"
    "out.sum().backward()\nprint(out.detach(), w.grad)",
    "vmap's errors": "m = torch.ones(2, 3)\ntry:\n    torch.vmap(g, in_dims=(0, 0))(m, y)\n"
    "except ValueError as e:\n    print('caught', e)\ntorch.vmap(g, in_dims=2)(m, m)",
    "vmap randomness error": "torch.vmap(lambda r: F.dropout(r, 0.5))(torch.ones(3, 4))",
    "vmap randomness same": "print(torch.vmap(lambda r: F.dropout(r, 0.5), randomness='same')"
    "(torch.ones(3, 4)))\nprint(F.dropout(torch.ones(4), 0.5))",
    "vmap randomness refused value": "torch.vmap(f, randomness='sometimes')",
    "vmap of a backward pass frees its graph once": "w = y.clone().requires_grad_()\n"
    "z = w ** 2\ndef rows(v):\n    return torch.autograd.grad(z, w, v)\n"
    "print(torch.vmap(rows)(torch.eye(3)))\nz.sum().backward()",
    "transforms print as torch's functions": "from torch.func import grad, jacrev, vmap, vjp\n"
    "print(grad(f), jacrev(f), vmap(f), grad(grad(f)), grad(lambda t: t.sum()))\n"
    "print(vjp(f, x)[1])\nprint(torch.vmap, grad)\nvmap(f)",
    "functorch's names": "from functorch import vmap, grad, jacrev\nimport functorch as ft\n"
    "print(vmap(grad(f))(torch.ones(2, 3)), ft.jacfwd(g)(x, y))",
    "grad's errors are torch's": "torch.func.grad(g)(x, y)",
    "forward_ad": "import torch.autograd.forward_ad as fwAD\n"
    "with fwAD.dual_level():\n    d = fwAD.make_dual(x, torch.ones(3))\n    print(d)\n"
    "    out = fwAD.unpack_dual(d.sin() * y)\n    print(out)\n    p, t = out\n"
    "    print(t is out.tangent, out.primal, fwAD.make_dual(torch.tensor(2.0), "
    "torch.tensor(0.5)) ** 2)\n"
    "print(fwAD.unpack_dual(d), d)\nfwAD.make_dual(x, x)",
}


torch_outcomes = torch_outcomes_fixture(PRELUDE, PROGRAMS)


@pytest.mark.torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_transform_behaves_as_torchs(name, torch_outcomes):
    program = PRELUDE + PROGRAMS[name]
    assert masked(gradcli_run(program)) == masked(torch_outcomes[program])


def test_vmap_randomness_different_with_a_draw_is_refused_not_wrong():
    """torch draws the batch's numbers at once: slice by slice they would not be torch's."""
    program = "import torch\nF = torch.nn.functional\n"
    program += "torch.vmap(lambda r: F.dropout(r), randomness='different')(torch.ones(3, 4))\n"
    with pytest.raises(Exception, match="randomness='different'"):
        gradcli_run(program)


def test_vmap_runs_each_slice_where_one_program_is_not_the_function():
    """The batched pass replays the first slice's trace: a branch on a value, or a value read
    into Python, makes another program for other slices, which then stand as computed."""
    program = (
        "import torch\nm = torch.tensor([[1.0, 2.0], [-3.0, 1.0], [0.5, 0.25]])\n"
        "def branch(r):\n    if r.sum() > 0:\n        return r * 2\n    return r - 1\n"
        "print(torch.vmap(branch)(m).tolist())\n"
        "print(torch.vmap(lambda r: r * r.sum().item())(m).tolist())\n"
    )
    out, status, _ = gradcli_run(program)
    assert status == 0
    assert out.splitlines() == [
        "[[2.0, 4.0], [-4.0, 0.0], [1.0, 0.5]]",
        "[[3.0, 6.0], [6.0, -2.0], [0.375, 0.1875]]",
    ]


# -- memory ------------------------------------------------------------------------------------

NESTED = (
    "import torch\nfrom torch.func import jacfwd\n"
    "J = jacfwd(jacfwd(torch.sin))(torch.randn(3000))\n"
)
# each slice's result is a million elements; the batch makes it 25 billion (100 GB)
BATCHED = (
    "import torch\nx = torch.ones(25000, 1)\ny = torch.vmap(lambda r: r * torch.ones(1000000))(x)\n"
)
# the notebook's jacfwd(jacfwd(predict)) where x requires grad: the rows keep their graphs,
# which grow as Din^3 (600 MB at Din 128, tens of GB at 512 before the meter)
KEPT = (
    "import torch\nimport torch.nn.functional as F\nfrom torch.func import jacfwd\n"
    "torch.manual_seed(0)\ndef predict(weight, bias, x):\n"
    "    return F.linear(x, weight, bias).tanh()\n"
    "weight, bias = torch.randn(32, 128), torch.randn(32)\n"
    "x = torch.randn(128, requires_grad=True)\n"
    "h = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)\nprint(h.shape)\n"
)


def _script(tmp_path, text: str) -> str:
    path = tmp_path / "script.py"
    path.write_text(text)
    return str(path)


def test_a_nested_jacobian_of_100_gb_is_refused_before_it_is_computed(tmp_path):
    report = measured(["run", _script(tmp_path, NESTED)], tmp_path)
    assert report["code"] == 2, report["stderr"]
    assert "the Jacobian would have 27,000,000,000 elements" in report["stderr"]
    assert "line 3" in report["stderr"] and "Traceback" not in report["stderr"]
    assert report["peak_mb"] < 600, report


def test_a_vmap_of_100_gb_is_refused_after_its_first_slice(tmp_path):
    args = ["run", _script(tmp_path, BATCHED), "--max-memory", "2GB", "--max-elements", str(10**12)]
    report = measured(args, tmp_path)
    assert report["code"] == 2, report["stderr"]
    assert "the result of vmap(<lambda>) would need 200 GB of memory" in report["stderr"]
    assert "--max-memory" in report["stderr"]
    assert report["peak_mb"] < 600, report


def test_a_vmap_whose_batched_pass_would_pass_the_limits_runs_slice_by_slice(tmp_path):
    """Each slice holds two million elements, the batched pass would hold a hundred million
    at once (400 MB): past --max-elements 50000000 (the default), so the slices stand, as
    computed within the limits, and the run ends well; with room for it, the batched pass
    runs."""
    script = _script(
        tmp_path,
        "import torch\nx = torch.ones(100, 1)\n"
        "y = torch.vmap(lambda r: (r * torch.ones(1000000)).sum())(x)\nprint(y.shape, y[0])\n",
    )
    limits = ["--max-memory", "16GB"]
    report = measured(["run", script, *limits, "--max-elements", "50000000"], tmp_path)
    assert report["code"] == 0, report["stderr"]
    assert report["stdout"].endswith("torch.Size([100]) tensor(1000000.)\n")
    assert report["peak_mb"] < 250, report
    report = measured(["run", script, *limits, "--max-elements", str(10**9)], tmp_path)
    assert report["code"] == 0, report["stderr"]
    assert report["peak_mb"] > 400, report


def test_values_a_transform_keeps_are_held_against_the_budget(tmp_path):
    """Each value below the room, their sum past it: refused, exit 2, before it is made; the
    same script within the budget prints torch's shape."""
    script = _script(tmp_path, KEPT)
    report = measured(["run", script, "--max-memory", "300MB"], tmp_path)
    assert report["code"] == 2, report["stderr"]
    assert "the run would need at least" in report["stderr"], report["stderr"]
    assert "the budget is 300 MB (--max-memory)" in report["stderr"]
    assert report["peak_mb"] < 450, report
    report = measured(["run", script, "--max-memory", "4GB"], tmp_path, limit_mb=4000)
    assert report["code"] == 0, report["stderr"]
    assert report["stdout"].endswith("torch.Size([32, 128, 128])\n")


def test_the_outermost_jacobian_builds_no_graph_it_would_cut(tmp_path):
    """The functorch notebook's hessian and jacfwd(jacfwd(predict)) at 32 x 256 (at 32 x 512
    they took past 24 GB): within a few hundred MB."""
    script = KEPT.replace("128, requires_grad=True", "256").replace("32, 128", "32, 256")
    script = script.replace(
        "print(h.shape)",
        "print(torch.allclose(h, torch.func.hessian("
        "predict, argnums=2)(weight, bias, x)), h.shape)",
    )
    report = measured(["run", _script(tmp_path, script)], tmp_path)
    assert report["code"] == 0, report["stderr"]
    assert report["stdout"].endswith("True torch.Size([32, 256, 256])\n")
    assert report["peak_mb"] < 400, report


def test_create_graph_keeps_the_graph_for_a_second_derivative():
    """torch.autograd.grad's retain_graph defaults to create_graph: a gradient taken with
    create_graph=True can be differentiated again (it stopped with "backward through the
    graph a second time")."""
    out, status, _ = gradcli_run(
        "import torch\n"
        "x = torch.tensor([0.5, -1.0], requires_grad=True)\n"
        "g, = torch.autograd.grad(torch.tanh(x).sum(), x, create_graph=True)\n"
        "h, = torch.autograd.grad(g.sum(), x)\n"
        "print([round(v, 6) for v in h.tolist()])\n"
    )
    assert status == 0 and out.strip().splitlines()[-1] == "[-0.726862, 0.6397]"
