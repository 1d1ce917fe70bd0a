"""Forward mode through a script's own pieces in ``gradcli run``: a custom
``torch.autograd.Function`` with ``jvp`` (``ctx.save_for_forward``, ``del ctx.attr``), checked
by ``gradcheck(check_forward_ad=True)``; a module's parameters made dual (``delattr``,
``setattr``) or given to ``torch.func.functional_call``; ``ctx.mark_dirty`` after a write
through ``x.numpy()``; and the engine's refusals as a script sees them, under torch's
exception classes. Each program runs in gradcli's interpreter and, with torch 2.13, in
Python's interactive interpreter (``python_oracle``): stdout (addresses masked), exit status
and the exception's line must be the same. Without torch, what can be asserted of gradcli
alone: the texts, and what ``delattr`` and ``setattr`` refuse.
"""

from __future__ import annotations

import pytest
from python_oracle import compared_with_torch, gradcli_run

from gradcli.base.errors import GradcliError

PRELUDE = (
    "import torch\nimport torch.nn as nn\nimport torch.autograd.forward_ad as fwAD\n"
    "torch.manual_seed(0)\n"
)
FN = (
    "class Fn(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, foo):\n"
    "        result = torch.exp(foo)\n        ctx.result = result\n"
    "        ctx.save_for_forward(foo)\n        return result\n"
    "    @staticmethod\n    def jvp(ctx, gI):\n"
    "        (foo,) = ctx.saved_tensors\n        gO = gI * ctx.result\n"
    "        del ctx.result\n        return gO + 0 * foo\n"
    "class Wrong(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, foo):\n        return foo * 2\n"
    "    @staticmethod\n    def backward(ctx, g):\n        return g * 4\n"
    "    @staticmethod\n    def jvp(ctx, g):\n        return g * 3\n"
    "class NoJvp(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, foo):\n        return foo * 2\n"
    "    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n"
    "x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.double, requires_grad=True)\n"
)
LINEAR = "model = nn.Linear(3, 2)\ndata = torch.linspace(-1, 1, 12).reshape(4, 3)\n"
PROGRAMS = {
    "a custom Function's jvp runs under forward mode": FN + "with fwAD.dual_level():\n"
    "    out = Fn.apply(fwAD.make_dual(x, torch.ones(3, dtype=torch.double)))\n"
    "    print(fwAD.unpack_dual(out).tangent, out)\n"
    "    print(fwAD.unpack_dual(Fn.apply(x)).tangent)\n"
    "print(torch.autograd.gradcheck(Fn.apply, (x,), check_forward_ad=True, "
    "check_backward_ad=False, check_undefined_grad=False))",
    "gradcheck checks the reverse rule first, then the forward one": FN
    + "try:\n    torch.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True)\n"
    "except RuntimeError as e:\n    print(type(e), 'forward mode' in str(e))\n"
    "torch.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True, check_backward_ad=False)",
    "a Function without jvp under forward mode": FN + "with fwAD.dual_level():\n"
    "    NoJvp.apply(fwAD.make_dual(x, torch.ones(3, dtype=torch.double)))",
    "save_for_forward takes tensors only": FN.replace(
        "ctx.save_for_forward(foo)", "ctx.save_for_forward(foo, 2)"
    )
    + "Fn.apply(x)",
    "a module's parameters made dual by delattr and setattr": LINEAR
    + "params = {name: p for name, p in model.named_parameters()}\n"
    "tangents = {name: torch.full_like(p, 0.5) + p for name, p in params.items()}\n"
    "with fwAD.dual_level():\n    for name, p in params.items():\n"
    "        delattr(model, name)\n"
    "        setattr(model, name, fwAD.make_dual(p, tangents[name]))\n"
    "    out = model(data)\n    jvp = fwAD.unpack_dual(out).tangent\n"
    "print(jvp, [n for n, _ in model.named_parameters()])\n"
    "from torch.func import functional_call\nmodel = nn.Linear(3, 2)\n"
    "with fwAD.dual_level():\n"
    "    duals = {n: fwAD.make_dual(p, tangents[n]) for n, p in params.items()}\n"
    "    out = functional_call(model, duals, data)\n"
    "    print(torch.allclose(fwAD.unpack_dual(out).tangent, jvp))\n"
    "print(model.weight.requires_grad, type(model.weight))\n"
    "print(functional_call(model, ({'weight': torch.ones(2, 3)}, {'bias': torch.zeros(2)}), "
    "(torch.ones(1, 3),)))\n"
    "print(torch.func.functional_call(model, {'bias': torch.ones(2)}, torch.zeros(3)))\n"
    "del model.bias\nmodel.bias",
    "functional_call's refusals": LINEAR + "from torch.func import functional_call\ntry:\n"
    "    functional_call(model, ({'weight': torch.ones(2, 3)}, {'weight': data}), data)\n"
    "except ValueError as e:\n    print(e)\n"
    "functional_call(model, {'weight': torch.ones(2, 3)}, data, strict=True)",
    "functional_call with tied weights and buffers": "from torch.func import functional_call\n"
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = nn.Linear(2, 2)\n        self.out = nn.Linear(2, 2)\n"
    "        self.out.weight = self.fc.weight\n        self.bn = nn.BatchNorm1d(2)\n"
    "    def forward(self, x):\n        return self.out(self.bn(self.fc(x)))\n"
    "net = Net()\nx = torch.arange(6.).reshape(3, 2)\n"
    "print(functional_call(net, {'fc.weight': torch.eye(2), 'bn.running_mean': torch.ones(2)}, "
    "(x,)))\nprint(net.bn.running_mean, net.fc.weight, net.out.weight is net.fc.weight)\n"
    "print(functional_call(net, {'fc.weight': torch.eye(2)}, x, tie_weights=False))\n"
    "for given in ({'fc.nothing': torch.eye(2)}, dict(net.named_parameters())):\n"
    "    try:\n        print(functional_call(net, given, x, strict=True))\n"
    "    except RuntimeError as e:\n        print(e)\n"
    "functional_call(net, dict(net.state_dict()), x, strict=True)",
    "a ctx's attribute the script did not set": "class Ctx(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, a):\n        ctx.kept = 1\n        del ctx.kept\n"
    "        del ctx.nothing\n        return a\n"
    "    @staticmethod\n    def backward(ctx, g):\n        return g\nCtx.apply(torch.ones(1))",
    "delattr of a name the module does not have": LINEAR + "delattr(model, 'nothing')",
    "mark_dirty after a write through numpy()": "class Inplace(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, x):\n        x_npy = x.numpy()\n"
    "        x_npy += 1\n        ctx.mark_dirty(x)\n        return x\n"
    "    @staticmethod\n    def backward(ctx, grad_output):\n        return grad_output\n"
    "a = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()\nb = a * a\n"
    "Inplace.apply(a)\nc = torch.tensor([1.0, 2.0])\nprint(Inplace.apply(c), c)\n"
    "b.backward()",
    "mark_dirty of a leaf that requires grad": "class Add(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, x):\n        x.add_(1)\n        ctx.mark_dirty(x)\n"
    "        return x\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    "with torch.no_grad():\n    print(Add.apply(torch.ones(2)))\n"
    "Add.apply(torch.ones(2, requires_grad=True))",
    "an input written in place is the output, another a new tensor": "class Add(torch."
    "autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n        x.add_(1)\n"
    "        ctx.mark_dirty(x)\n        return x, y\n"
    "    @staticmethod\n    def backward(ctx, g, h):\n        return g, h\n"
    "a = torch.tensor(1., requires_grad=True).clone()\nw = torch.ones(1, requires_grad=True)\n"
    "b = a * 2\nc, d = Add.apply(a, w)\nprint(c is a, a, d is w, d)\n"
    "p, q = torch.zeros(1), torch.ones(1)\nr, s = Add.apply(p, q)\nprint(r is p, s is q, r, p)\n"
    "with torch.no_grad():\n    r, s = Add.apply(a, w)\nprint(r is a, s is w, r, s, a)\n"
    "a.sum().backward()\nprint(w.grad)\nb.backward()",
    "mark_dirty of a tensor not returned": "class Lost(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, x):\n        ctx.mark_dirty(x)\n"
    "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    "Lost.apply(torch.ones(2, requires_grad=True).clone())",
    "numpy's augmented assignments are in place": "t = torch.zeros(3)\nn = t.numpy()\n"
    "n += 2\nn *= 3\nn -= 1\nn /= 2\nprint(t, n)\nm = n\nm **= 2\nprint(t)\n"
    "i = torch.arange(4).numpy()\ni //= 2\ni %= 1\nprint(i)\nn += [1]\nprint(t)\n"
    "try:\n    i += 1.5\nexcept TypeError as e:\n    print(e)\n"
    "n += [1, 2]",
    "the engine's errors under torch's classes": FN
    + "try:\n    torch.autograd.gradcheck(lambda t: t.sin(), (x,), eps=1e-1, atol=1e-9, "
    "rtol=1e-9)\nexcept RuntimeError as e:\n    print(type(e))\n"
    "try:\n    torch.autograd.functional.jacobian(lambda t: t, (x,), strategy='x')\n"
    "except AssertionError as e:\n    print(type(e), e)\n"
    "try:\n    torch.func.vjp(torch.sin, x)[1](torch.ones(2))\n"
    "except RuntimeError as e:\n    print(type(e), e)\n"
    "fwAD.make_dual(x, x)",
    "an engine error uncaught": FN + "(x * 2).backward(torch.ones(2))",
}

torch_outcomes, test_forward_pieces_are_as_torchs = compared_with_torch(
    "forward", PROGRAMS, PRELUDE
)


def _run(name: str) -> tuple[str, int, str]:
    return gradcli_run(PRELUDE + PROGRAMS[name])


def test_a_custom_functions_jvp_gives_the_tangent():
    stdout, status, _ = _run("a custom Function's jvp runs under forward mode")
    assert status == 0
    # the tangent of exp at x with tangent ones is exp(x), the primal printed beside it
    lines = stdout.splitlines()
    assert lines[1].startswith(
        "tensor([1.6487, 0.3679, 7.3891], dtype=torch.float64, grad_fn=<AddBackward0>) "
        "tensor([1.6487, 0.3679, 7.3891], dtype=torch.float64, grad_fn=<FnBackward>,"
    )
    assert lines[3:] == ["None", "True"]


def test_engine_errors_carry_torchs_class_names_not_gradclis():
    _, status, line = _run("a Function without jvp under forward mode")
    assert status == 1
    assert line == (
        "NotImplementedError: You must implement the jvp function for custom "
        "autograd.Function to use it with forward mode AD."
    )
    stdout, status, line = _run("the engine's errors under torch's classes")
    assert "<class 'torch.autograd.gradcheck.GradcheckError'>" in stdout
    assert "<class 'AssertionError'> Expected strategy" in stdout
    assert "<class 'RuntimeError'> Mismatch in shape: grad_output[0] has a shape of " in stdout
    assert status == 1 and line.startswith("RuntimeError: Trying to create a dual Tensor")
    _, status, line = _run("an engine error uncaught")
    assert line == (
        "RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and "
        "output[0] has a shape of torch.Size([3])."
    )
    stdout, status, _ = _run("gradcheck checks the reverse rule first, then the forward one")
    assert "<class 'torch.autograd.gradcheck.GradcheckError'> False" in stdout and status == 1


def test_mark_dirty_refuses_the_backward_of_a_node_that_saved_the_input():
    stdout, status, line = _run("mark_dirty after a write through numpy()")
    assert stdout.endswith(
        "tensor(2., dtype=torch.float64, grad_fn=<InplaceBackward>)\n"
        "tensor([2., 3.]) tensor([2., 3.])\n"
    )
    assert status == 1
    assert line.startswith(
        "RuntimeError: one of the variables needed for gradient computation has been modified "
        "by an inplace operation: [torch.DoubleTensor []], which is output 0 of Inplace, is "
        "at version 1; expected version 0 instead."
    )


def test_functional_call_puts_the_parameters_back():
    stdout, status, line = _run("a module's parameters made dual by delattr and setattr")
    # after delattr and setattr the dual tensors are plain attributes, no parameters
    parameter = "<class 'torch.nn.parameter.Parameter'>"
    assert f"]], grad_fn=<AddBackward0>) []\nTrue\nTrue {parameter}" in stdout
    assert stdout.endswith("tensor([[3., 3.]])\ntensor([1., 1.], grad_fn=<ViewBackward0>)\n")
    assert (status, line) == (1, "AttributeError: 'Linear' object has no attribute 'bias'")


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ("delattr(model, '__dict__')", "does not delete attributes whose names start with '__'"),
        ("setattr(model, '__class__', 1)", "does not write attributes whose names start with '__'"),
        ("delattr(model, '_parameters')", "not '_parameters' \\(its internals\\)"),
        ("delattr(model, 'in_features')", "registered parameters, buffers and submodules only"),
        ("delattr(data, 'grad')", "deletes the attributes of the script's own objects only"),
        ("del data.grad", "deletes the attributes of the script's own objects only"),
        ("setattr(model, 'forward', print)\nf = []\ndelattr(f, 'append')", "own objects only"),
    ],
)
def test_delattr_and_setattr_keep_to_the_scripts_own_attributes(program, message):
    with pytest.raises(GradcliError, match=message):
        gradcli_run(PRELUDE + LINEAR + program)


def test_setattr_and_delattr_take_attribute_names_as_strings():
    _, status, line = gradcli_run(PRELUDE + LINEAR + "setattr(model, 1, 2)")
    assert (status, line) == (1, "TypeError: attribute name must be string, not 'int'")
    stdout, status, _ = gradcli_run(
        "class A:\n    pass\na = A()\nsetattr(a, 'v', 3)\nprint(a.v)\ndelattr(a, 'v')\n"
        "print(hasattr(a, 'v'))"
    )
    assert (stdout, status) == ("3\nFalse\n", 0)
