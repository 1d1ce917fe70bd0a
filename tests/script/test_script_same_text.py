"""Scripts that ran but printed other text than torch: each program here runs in gradcli's
interpreter and, with torch 2.13, in Python's interactive interpreter (``python_oracle``);
stdout (object addresses masked), exit status and exception line must be the same.

The causes fixed: torch.autograd.functional's options (``create_graph`` kept the outputs'
graphs in torch, gradcli dropped them), the node of a reduction's reverse rule (torch's
``unsqueeze``, whose own reverse is ``SqueezeBackward1``), a tensor index in a write outside
any graph (``g[h < 0] = 0`` wrote every element), and float32 transcendental functions
(numpy's float32 ``exp`` is an ulp off torch's where torch's is the correctly rounded one),
``torch.accelerator`` (none on gradcli's CPU), torch's text for a grad that is not one, and
``math``'s functions of a one-element tensor (Python takes it through torch's ``__float__`` or
``__index__``; gradcli refused it).
"""

from __future__ import annotations

import numpy as np
import pytest
from python_oracle import compared_with_torch, gradcli_run, masked

from gradcli.base.errors import GradcliError
from gradcli.ops import library as gc

# torch's other names of operations (torch.absolute is abs), called as functions and methods
_ALIASED = [
    *("torch.absolute(x)", "torch.arccos(x)", "torch.arcsin(x)", "torch.arctan(x)"),
    *("torch.arccosh(z)", "torch.arcsinh(x)", "torch.arctanh(x)", "torch.concat([x, x])"),
    *("torch.concatenate([x, z], 1)", "torch.divide(x, z)", "torch.true_divide(x, 2)"),
    *("torch.multiply(x, z)", "torch.subtract(x, z)", "torch.negative(x)", "torch.fix(z * 3)"),
    *("torch.moveaxis(x, 0, 1)", "torch.swapaxes(x, 0, 1)", "torch.swapdims(x, 1, 0)"),
    *("torch.special.expit(x)", "torch.special.psi(z)", "torch.special.gammaln(z)"),
    *("x.absolute()", "x.arccos()", "x.divide(z)", "x.multiply(3)", "x.subtract(1)"),
    *("x.negative()", "x.fix()", "x.moveaxis(1, 0)", "x.swapaxes(0, 1)", "x.arctanh()"),
]
_ALIAS_OF = {"absolute": "abs", "arccos": "acos", "concat": "cat", "divide": "div"}
_ALIAS_OF |= {"multiply": "mul", "negative": "neg", "fix": "trunc", "swapaxes": "transpose"}
_ALIAS_OF |= {"moveaxis": "movedim", "special.expit": "sigmoid", "special.psi": "digamma"}

PROGRAMS = {
    "functional with create_graph": (
        "import torch\nfrom torch.autograd.functional import jvp, vjp, hvp, vhp, jacobian, "
        "hessian\ndef exp_reducer(x):\n    return x.exp().sum(dim=1)\n"
        "inputs = torch.tensor([[0.5, 0.25, 0.75], [0.1, 0.2, 0.3], [0.9, 0.6, 0.4]])\n"
        "v = torch.ones(3, 3)\n"
        "jvp(exp_reducer, inputs, v, create_graph=True)\n"
        "vjp(exp_reducer, inputs, torch.ones(3), create_graph=True)\n"
        "def pow_reducer(x):\n    return x.pow(3).sum()\n"
        "hvp(pow_reducer, inputs, v, create_graph=True)\n"
        "vhp(pow_reducer, inputs, v, create_graph=True)\n"
        "jacobian(exp_reducer, inputs, create_graph=True).grad_fn\n"
        "hessian(pow_reducer, inputs, create_graph=True).grad_fn\n"
        "jvp(exp_reducer, inputs, v, strict=True)\n"
    ),
    "functional refusals": (
        "import torch\nfrom torch.autograd.functional import hessian, vjp\n"
        "vjp(lambda t: t * 2, torch.ones(2), torch.ones(3))\n"
    ),
    "hessian of a vector function": (
        "import torch\nfrom torch.autograd.functional import hessian\n"
        "hessian(lambda t: t * 2, torch.ones(2))\n"
    ),
    "a reduction's reverse node": (
        "import torch\nx = torch.ones(2, 3, requires_grad=True)\n"
        "u = torch.zeros(2, requires_grad=True)\n"
        "g, = torch.autograd.grad(x.sum(1), x, u, create_graph=True)\n"
        "print(g.grad_fn, g.grad_fn.next_functions[0][0].name())\n"
        "h, = torch.autograd.grad(g, u, torch.ones(2, 3), create_graph=True)\n"
        "print(x.unsqueeze(1).grad_fn.name())\n"
    ),
    "a mask write outside a graph": (
        "import torch\nh = torch.tensor([[1., -2.], [-3., 4.]])\ng = torch.ones(2, 2)\n"
        "g[h < 0] = 0\nprint(g)\ng[torch.tensor([0, 1]), torch.tensor([1, 0])] = 5\nprint(g)\n"
        "g[torch.tensor([1])] = 7\nprint(g)\ng[h > 0] = torch.tensor([8., 9.])\nprint(g)\n"
        "g[...] = 3\nprint(g)\ng[()] = 2\nprint(g)"
    ),
    "float32 functions": (
        "import torch\nx = torch.tensor([12., 10., 1.5, -3.25, 7.75, 0.1])\n"
        "print(torch.exp(x), x.tanh(), x.sin(), x.cos(), x.log1p(), x.expm1())\n"
        "print(x.exp().sum().item(), x.sinh(), x.cosh(), x.atan(), x.abs().log(), x.tan())"
    ),
    "torch.accelerator on a machine without one": (
        "import torch\nprint(torch.accelerator.is_available(), "
        "torch.accelerator.current_accelerator(), torch.accelerator.device_count())\n"
        "print(torch.cuda.is_available(), torch.cuda.device_count())\n"
        "torch.set_default_device('cpu')\ntorch.set_default_device(torch.device('cpu'))\n"
        "torch.set_default_device(None)\nprint(torch.get_default_device())\n"
        "x = torch.ones(2, requires_grad=True)\nx.grad = 0.\n"
    ),
    "math's functions of one-element tensors": (
        "import math, torch\nt = torch.tensor(2.5, requires_grad=True)\n"
        "print(math.exp(t), math.floor(t), math.ceil(t), math.isclose(t, 2.5), math.pow(t, 2))\n"
        "print(math.hypot(torch.tensor(3.), torch.tensor(4.)), math.exp(torch.tensor([2.])))\n"
        "print(math.gcd(torch.tensor(6), 4), math.factorial(torch.tensor(5)), "
        "math.isqrt(torch.tensor(True)), math.exp(torch.tensor(2, dtype=torch.int32)))\n"
        "print(math.isclose(t, 2.52, rel_tol=torch.tensor(.01)), math.log(torch.tensor(8.), 2))\n"
        "for f in (lambda: math.exp(torch.ones(2)), lambda: math.gcd(torch.tensor(2.), 4), "
        "lambda: math.trunc(t), lambda: math.ldexp(t, torch.tensor(3)), lambda: float(t[None, None]"
        ".expand(1, 2)), lambda: math.log(t - t), lambda: math.floor(t / 0)):\n"
        "    try:\n        f()\n    except Exception as e:\n        print(repr(e))\n"
    ),
    "torch's other names of operations": (
        "import torch\nx = torch.tensor([[0.25, -0.5], [0.75, 0.1]], dtype=torch.float64, "
        "requires_grad=True)\nz = torch.tensor([[1.5, 2.5], [3.5, 1.25]], dtype=torch.float64, "
        "requires_grad=True)\n"
        + "".join(f"print({call}, {call}.grad_fn.next_functions)\n" for call in _ALIASED)
        + "print(torch.greater(x, z), torch.less_equal(x, 0.2), x.not_equal(z), "
        "x.greater_equal(0.1), torch.less(x, z), torch.greater_equal(z, x))\n"
        "sum(y.sum() for y in (" + ", ".join(_ALIASED) + ")).backward()\n"
        "print(x.grad, z.grad)\nw = x.detach().clone()\nw.absolute_(); w.multiply_(2); "
        "w.divide_(3); w.negative_(); w.arctan_(); w.fix_(); w.swapaxes_(0, 1)\nprint(w)\n"
        "print(torch.multiply(2, x).grad_fn, x.true_divide(z).dtype)\n"
    ),
}


torch_outcomes, test_the_script_prints_as_torch = compared_with_torch("same_text", PROGRAMS)


def test_torchs_other_names_compute_as_the_operations_they_name():
    """Each alias's script prints what the same script with the operation's own name prints
    (the names only: values, nodes and their edges)."""
    for alias, own in _ALIAS_OF.items():
        calls = [call.replace(f".{alias}(", f".{own}(") for call in _ALIASED]
        assert calls != _ALIASED
        program = "".join(f"print({a}, {a}.grad_fn.next_functions)\n" for a in _ALIASED)
        renamed = "".join(f"print({c}, {c}.grad_fn.next_functions)\n" for c in calls)
        prelude = (
            "import torch\nx = torch.tensor([[0.25, -0.5], [0.75, 0.1]], requires_grad=True)\n"
            "z = torch.tensor([[1.5, 2.5], [3.5, 1.25]], requires_grad=True)\n"
        )
        found = masked(gradcli_run(prelude + program))
        assert found[1:] == (0, "")
        expected = masked(gradcli_run(prelude + renamed))[0]
        assert found[0].replace(alias, own) == expected.replace(alias, own)


def test_a_float32_function_is_rounded_once_from_float64():
    x = np.array([12.0, 10.0], dtype=np.float32)
    found = gc.exp(gc.Tensor(x)).data
    assert found.dtype == np.float32
    # the correctly rounded values (numpy's float32 exp gives 162754.78125, 22026.466797)
    assert found.tolist() == [162754.796875, 22026.46484375]
    assert gc.exp(gc.Tensor(np.array([1.0]))).data.dtype == np.float64


@pytest.mark.parametrize(
    "program",
    ["torch.set_default_device('cuda')", "torch.set_default_device(torch.device('mps'))"],
)
def test_a_device_gradcli_lacks_is_refused(program):
    with pytest.raises(GradcliError, match="computes on the CPU only"):
        gradcli_run("import torch\n" + program)
