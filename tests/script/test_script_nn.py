"""``torch.nn`` and ``torch.optim`` in ``gradcli run``: each program here runs in gradcli's
interpreter and, with torch 2.13, in Python's interactive interpreter (``python_oracle``);
stdout (object addresses masked), exit status and exception line must be the same. The
numbers are printed as torch prints tensors (four decimals) where torch's order of float32
arithmetic (its sums and matrix products) differs from numpy's in the last bits; seeded
programs check the layers' default initialization and ``nn.init`` digit for digit.
"""

from __future__ import annotations

import pytest
from python_oracle import gradcli_run, masked, torch_runs
from typer.testing import CliRunner

from gradcli.cli.app import app

PRELUDE = "import torch\nimport torch.nn as nn\nfrom torch import optim\ntorch.manual_seed(0)\n"
PROGRAMS = {
    "a seeded Linear": "m = nn.Linear(3, 1)\nprint(m)\nprint(m.weight)\nm.bias\n"
    "print(m(torch.ones(2, 3)))\nprint(m(torch.ones(3)), nn.Linear(2, 2, bias=False))\n"
    "print(m.in_features, m.out_features, m.weight.shape, m.weight.requires_grad)",
    "layers with parameters": "b = nn.Bilinear(2, 3, 2)\nprint(b, b(torch.ones(1, 2), "
    "torch.ones(1, 3)))\nc = nn.Conv1d(2, 3, 2)\nprint(c, c(torch.ones(1, 2, 4)).shape)\n"
    "c2 = nn.Conv2d(1, 2, 3, padding=1)\nprint(c2, c2.weight.shape, c2(torch.ones(1, 1, 4, 4))"
    ".shape)\ne = nn.Embedding(5, 3)\nprint(e, e(torch.tensor([0, 4])))\n"
    "ln = nn.LayerNorm(3)\nprint(ln, ln(torch.tensor([[1., 2., 4.]])))\n"
    "bn = nn.BatchNorm1d(2)\nprint(bn, bn(torch.tensor([[1., 2.], [3., 5.]])))\n"
    "print(bn.running_mean, bn.running_var)",
    "layers without parameters": "d = nn.Dropout(0.5)\nx = torch.ones(2, 4)\nprint(d, d(x))\n"
    "d.eval()\nprint(d(x), d.training)\nf = nn.Flatten()\nprint(f, f(torch.ones(2, 3, 4)).shape)\n"
    "u = nn.Unflatten(1, (2, 2))\nprint(u, u(x).shape)\nprint(nn.Identity()(x).shape)",
    "activations": "x = torch.tensor([[-2., -0.5, 0., 1.5]])\nfor a in [nn.ReLU(), "
    "nn.LeakyReLU(0.1), nn.Tanh(), nn.Sigmoid(), nn.GELU(), nn.SiLU(), nn.Softmax(dim=1), "
    "nn.LogSoftmax(dim=1), nn.ELU(), nn.Softplus(), nn.Hardtanh(), nn.Mish()]:\n"
    "    print(a, a(x))",
    "losses": "x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.2]], requires_grad=True)\n"
    "t = torch.tensor([[0., 1., 0.5], [1., 0., 0.]])\nc = torch.tensor([2, 0])\n"
    "for loss, target in [(nn.MSELoss(), t), (nn.L1Loss(), t), (nn.CrossEntropyLoss(), c), "
    "(nn.NLLLoss(), c), (nn.BCEWithLogitsLoss(), t), (nn.HuberLoss(delta=0.5), t), "
    "(nn.SmoothL1Loss(), t), (nn.MSELoss(reduction='sum'), t)]:\n"
    "    value = loss(x, target)\n    value.backward()\n    print(loss, value, x.grad)\n"
    "    x.grad = None\n"
    "print(nn.BCELoss()(torch.sigmoid(x), t))\n"
    "print(nn.KLDivLoss(reduction='batchmean')(x.log_softmax(1), t.softmax(1)))",
    "containers": "s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1), "
    "nn.Tanh()))\nprint(s)\ns\nprint(len(s), s[0], s[-1][0].weight)\nfor layer in s:\n"
    "    print(type(layer))\nprint(s(torch.ones(1, 2)))\n"
    "ml = nn.ModuleList([nn.Linear(1, 1) for i in range(2)])\nml.append(nn.ReLU())\nprint(ml)\n"
    "md = nn.ModuleDict({'act': nn.ReLU(), 'out': nn.Linear(2, 1)})\nprint(md, md['act'])\n"
    "from collections import OrderedDict\n"
    "named = nn.Sequential(OrderedDict([('fc', nn.Linear(2, 2)), ('act', nn.Sigmoid())]))\n"
    "print(named, named.fc)",
    "parameters and state": "s = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))\n"
    "print(s.parameters())\nlist(s.parameters())\n"
    "print([(name, p.shape) for name, p in s.named_parameters()])\n"
    "s.state_dict()\nprint(s.state_dict().keys())\nsd = s.state_dict()\n"
    "other = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))\n"
    "other.load_state_dict(sd)\nprint(other[2].bias)\n"
    "print(sum(p.numel() for p in s.parameters()))\n"
    "print(list(s.children())[1], len(list(s.modules())))",
    "Parameter": "p = nn.Parameter(torch.ones(2))\nprint(p)\np\nprint(p * 2, p + p, -p, p[0])\n"
    "print(type(p), isinstance(p, torch.Tensor), isinstance(p, nn.Parameter))\n"
    "print(p.requires_grad, p.grad, p.shape, p.dtype, p.is_leaf, p.sum())\n"
    "(p * p).sum().backward()\nprint(p.grad)\nprint(f'{p}')\nq = nn.Parameter(torch.zeros(1), "
    "requires_grad=False)\nprint(q)\nprint(str(p))",
    "module methods": "m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))\n"
    "print(m.training, m[1].training)\nm.eval()\nprint(m.training, m[1].training)\nm.train()\n"
    "out = m[0](torch.ones(1, 2)).sum()\nout.backward()\nprint(m[0].weight.grad)\n"
    "m.zero_grad()\nprint(m[0].weight.grad)\nm.requires_grad_(False)\nprint(m[0].weight)\n"
    "m.double()\nprint(m[0].bias.dtype)\nm.to(torch.float32)\nprint(m[0].bias.dtype)\n"
    "m.add_module('act', nn.ReLU())\nm.extra = nn.Tanh()\nprint(m)\n"
    "print([name for name, _ in m.named_modules()])",
    "init": "w = torch.empty(3, 5)\nfor f in [nn.init.uniform_, nn.init.normal_, "
    "nn.init.xavier_uniform_, nn.init.xavier_normal_, nn.init.kaiming_uniform_, "
    "nn.init.kaiming_normal_, nn.init.zeros_, nn.init.ones_]:\n    print(f(w))\n"
    "print(nn.init.constant_(w, 0.3), nn.init.calculate_gain('relu'))\n"
    "m = nn.Linear(2, 2)\nnn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain('tanh'))"
    "\nnn.init.zeros_(m.bias)\nprint(m.weight, m.bias)",
    "clip_grad_norm_": "m = nn.Linear(3, 2)\nm(torch.ones(4, 3)).sum().backward()\n"
    "print(nn.utils.clip_grad_norm_(m.parameters(), 1.0))\nprint(m.weight.grad, m.bias.grad)\n"
    "nn.utils.clip_grad_value_(m.parameters(), 0.1)\nprint(m.bias.grad)",
    "optimizers": "def train(make):\n    m = nn.Linear(2, 1)\n    opt = make(m.parameters())\n"
    "    x = torch.tensor([[1., 2.], [3., -1.], [0.5, 0.5]])\n    y = torch.tensor([[1.], [0.], "
    "[2.]])\n    for step in range(5):\n        opt.zero_grad()\n"
    "        loss = ((m(x) - y) ** 2).mean()\n        loss.backward()\n        opt.step()\n"
    "    print(opt)\n    print(m.weight, m.bias)\n"
    "train(lambda p: optim.SGD(p, lr=0.1))\n"
    "train(lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01))\n"
    "train(lambda p: optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.1, maximize=True))\n"
    "train(lambda p: optim.Adam(p, lr=0.01))\ntrain(lambda p: optim.AdamW(p, lr=0.01, "
    "amsgrad=True))\ntrain(lambda p: optim.RMSprop(p, lr=0.01, momentum=0.9))\n"
    "train(lambda p: optim.Adagrad(p, lr=0.1))",
    "optimizer state and groups": "m = nn.Linear(2, 1)\nopt = optim.SGD([{'params': [m.weight]}, "
    "{'params': [m.bias], 'lr': 0.5}], lr=0.1, momentum=0.9)\nopt\n"
    "m(torch.ones(1, 2)).sum().backward()\nopt.step()\nprint(m.bias)\n"
    "print(opt.param_groups[1]['lr'], len(opt.param_groups))\n"
    "for group in opt.param_groups:\n    group['lr'] = 0.01\n"
    "print(opt.state_dict()['param_groups'])\nprint(opt.state_dict()['state'])\nopt.zero_grad()\nprint(m.bias.grad)\n"
    "a = optim.Adam(m.parameters())\nprint(a.defaults['betas'], a.param_groups[0]['lr'])",
    "a step with a closure": "m = nn.Linear(1, 1)\nopt = optim.SGD(m.parameters(), lr=0.1)\n"
    "x = torch.tensor([[1.], [2.]])\ndef closure():\n    opt.zero_grad()\n"
    "    loss = ((m(x) - 1) ** 2).mean()\n    loss.backward()\n    return loss\n"
    "for i in range(3):\n    print(opt.step(closure))\nprint(m.weight)",
    "schedulers": "m = nn.Linear(1, 1)\nopt = optim.SGD(m.parameters(), lr=1.0)\n"
    "step = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)\n"
    "from torch.optim.lr_scheduler import ExponentialLR\nfor i in range(4):\n    opt.step()\n"
    "    step.step()\n    print(step.get_last_lr(), opt.param_groups[0]['lr'])\n"
    "opt2 = optim.SGD(m.parameters(), lr=1.0)\nexp = ExponentialLR(opt2, gamma=0.9)\n"
    "for i in range(3):\n    opt2.step()\n    exp.step()\nprint(exp.get_last_lr())",
    "a training loop": "model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))\n"
    "x = torch.linspace(-1, 1, 16).unsqueeze(1)\ny = x ** 2\nloss_fn = nn.MSELoss()\n"
    "opt = optim.Adam(model.parameters(), lr=0.05)\nfor t in range(30):\n"
    "    loss = loss_fn(model(x), y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    "    if t % 10 == 9:\n        print(t, f'{loss.item():.3f}')\nprint(model[2].bias)",
    "imports": "import torch.nn.functional as F\nfrom torch.nn import Linear, ReLU\n"
    "import torch.optim as optim2\nfrom torch.nn import init\nfrom torch.nn import functional\n"
    "print(Linear(1, 1), ReLU(), optim2.SGD, init.zeros_(torch.ones(1)), nn.Module, "
    "nn.Linear, torch.optim.Adam, F.relu(torch.tensor([-1., 1.])), "
    "functional.tanh(torch.zeros(1)))",
    "in-place samplers": "print(torch.empty(3, dtype=torch.long).random_(5))\n"
    "print(torch.empty(2, 3).uniform_(-1, 1), torch.empty(20).normal_(0, 2))\n"
    "print(torch.empty(4).random_(2, 9), torch.empty(5).bernoulli_(0.3), "
    "torch.empty(3).exponential_())\nw = torch.zeros(2, requires_grad=True)\n"
    "with torch.no_grad():\n    w.uniform_()\nprint(w)\nw.normal_()",
    "samplers": "print(torch.randint(0, 5, (3,)), torch.randint(10, (2, 2)), "
    "torch.randint(3, 10, size=(4,)))\nprint(torch.randperm(4), torch.randperm(30))\n"
    "print(torch.normal(0., 1., (2,)), torch.normal(torch.zeros(3), torch.ones(3)), "
    "torch.normal(torch.ones(2), 0.5))\nprint(torch.normal(2, 3, size=(1, 4)))\n"
    "print(torch.bernoulli(torch.tensor([0.5, 0.5, 0.2])), torch.bernoulli(torch.ones(3), 0.3))"
    "\nprint(torch.multinomial(torch.tensor([0.2, 0.8]), 2), "
    "torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 4, replacement=True))\n"
    "torch.randint(5, 2, (3,))",
    "hooks, devices and a replaced parameter": "m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())\n"
    "def hook(module, args, output):\n    print('hook', module, output.shape)\n"
    "h = m[0].register_forward_hook(hook)\nm(torch.ones(1, 2))\nh.remove()\nm(torch.ones(1, 2))\n"
    "m.to(torch.device('cpu'))\nm.to('cpu', torch.float64)\nprint(m[0].weight.dtype)\n"
    "m[0].weight.data.normal_(0, 0.01)\nm[0].bias.data.zero_()\nprint(m[0].weight, m[0].bias)\n"
    "m[0].weight = nn.Parameter(torch.ones(2, 2, dtype=torch.float64))\n"
    "print(list(m.parameters()))\nprint(f'{m}', str(m[1]), repr(m[1]))\n"
    "opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)\n"
    "m(torch.ones(1, 2, dtype=torch.float64)).sum().backward()\nopt.step()\nopt.state_dict()\n"
    "print(opt.param_groups)",
    "static and class methods": "print(nn.Transformer.generate_square_subsequent_mask(3))\n"
    "e = nn.Embedding.from_pretrained(torch.tensor([[1., 2.], [3., 4.]]))\n"
    "print(e, e(torch.tensor([1])))\nnn.Linear.nothing",
    "printed forms": "pl = nn.ParameterList([nn.Parameter(torch.ones(2)), "
    "nn.Parameter(torch.zeros(1, 3))])\nprint(pl)\n"
    "print(nn.ParameterDict({'a': nn.Parameter(torch.ones(2))}))\n"
    "print(nn.Embedding(4, 2, padding_idx=0), nn.Dropout(0.2), nn.BatchNorm1d(3), "
    "nn.LSTM(2, 3), nn.GRU(2, 3, batch_first=True))\nprint(nn.MultiheadAttention(4, 2))\n"
    "print(nn.LayerNorm(4), nn.GroupNorm(2, 4), nn.Conv2d(1, 2, 3), nn.MaxPool2d(2), "
    "nn.AvgPool2d(2), nn.Softmax(dim=1), nn.CrossEntropyLoss(), nn.Unflatten(1, (2, 2)))\n"
    "m = nn.Linear(1, 1)\nopt = optim.Adam(m.parameters())\n"
    "s = optim.lr_scheduler.StepLR(opt, 2)\ns\nm(torch.ones(1, 1)).sum().backward()\n"
    "opt.step()\nprint(opt.state)\nprint(type(s), type(opt))\nprint(m.parameters)\n"
    "print(nn.TransformerEncoderLayer(4, 2, dim_feedforward=8))\n"
    "print(opt.step, opt.zero_grad, m.state_dict, m.forward, s.step)",
    "functional batch_norm updates the statistics it is given": "import torch.nn.functional as F\n"
    "x = torch.arange(24.).reshape(8, 3).sin() * 3\n"
    "rm, rv = torch.zeros(3), torch.ones(3)\n"
    "print(F.batch_norm(x, rm, rv, training=True, momentum=0.2)[0], rm, rv)\n"
    "print(F.batch_norm(x, None, None, training=True)[0])\n"
    "x3 = torch.arange(40, dtype=torch.float64).reshape(4, 2, 5).cos() + 1\n"
    "rm, rv = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)\n"
    "F.batch_norm(x3, rm, rv, training=True, momentum=0.5)[0, 0, 0]\nprint(rm, rv)\n"
    "F.batch_norm(x, rm, rv)[0, 0]\nprint(rm, rv)\nF.batch_norm(x, None, None)",
    "errors": "opt = optim.SGD([], lr=0.1)",
    "an optimizer is not callable": "opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)\nopt()",
}


@pytest.fixture(scope="module")
def torch_outcomes(tmp_path_factory):
    pytest.importorskip("torch")
    return torch_runs([PRELUDE + p for p in PROGRAMS.values()], tmp_path_factory.mktemp("nn"))


@pytest.mark.torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_nn_and_optim_behave_as_torchs(name, torch_outcomes):
    program = PRELUDE + PROGRAMS[name]
    assert masked(gradcli_run(program)) == masked(torch_outcomes[program])


def _refused(program: str, *options: str) -> str:
    """gradcli run's refusal of ``program`` (exit 2, nothing run past it): its message."""
    done = CliRunner().invoke(app, ["run", *options, "-"], input=program)
    assert done.exit_code == 2, (done.stdout, done.stderr)
    return done.stderr


@pytest.mark.parametrize(
    "reach", ["m._parameters", "m._modules['0']", "m._buffers", "m._forward_hooks"]
)
def test_a_modules_internals_are_refused(reach):
    stderr = _refused(f"import torch.nn as nn\nm = nn.Sequential(nn.Linear(1, 1))\nprint({reach})")
    assert "gradcli run reads and writes the public attributes of a Sequential" in stderr
    assert "named_parameters()" in stderr


def test_writing_a_modules_internals_is_refused():
    stderr = _refused("import torch.nn as nn\nm = nn.Linear(1, 1)\nm._parameters = {}")
    assert "not '_parameters' (its internals)" in stderr


@pytest.mark.parametrize("reach", ["m.__dict__", "m.__class__.__mro__", "m.weight.__dict__"])
def test_a_modules_python_internals_are_refused(reach):
    stderr = _refused(f"import torch.nn as nn\nm = nn.Linear(1, 1)\nprint({reach})")
    assert "does not read attributes whose names start with '__'" in stderr


def test_a_layer_too_large_for_the_memory_is_refused_before_it_is_made():
    """10^10 weights: refused by --max-memory before numpy allocates them (exit 2), and the
    lines before it ran."""
    program = "import torch.nn as nn\nprint('before')\nm = nn.Linear(100000, 100000)\nprint(2)"
    done = CliRunner().invoke(
        app, ["run", "--max-elements", "100000000000", "--max-memory", "1G", "-"], input=program
    )
    assert done.exit_code == 2
    assert done.stdout == "before\n"
    assert "making a layer's parameter would need 80.0 GB of memory" in done.stderr
    assert "(--max-memory)" in done.stderr


def test_layers_together_too_large_for_the_memory_are_refused():
    """Each layer fits; the run's tally counts them all (a list of a hundred 1000x1000)."""
    stderr = _refused(
        "import torch.nn as nn\nms = [nn.Linear(1000, 1000) for i in range(100)]",
        "--max-memory",
        "200M",
    )
    assert "the budget is 200 MB (--max-memory)" in stderr


def test_a_shape_error_in_a_forward_is_torchs_runtime_error():
    out, status, line = gradcli_run("import torch\nm = torch.nn.Linear(3, 1)\nm(torch.ones(2, 2))")
    assert status == 1
    assert line.startswith("RuntimeError: ")


def test_a_mask_too_large_is_refused_before_it_is_made():
    stderr = _refused(
        "import torch.nn as nn\nm = nn.Transformer.generate_square_subsequent_mask(10**6)"
    )
    assert "generate_square_subsequent_mask would have 1,000,000,000,000 elements" in stderr


@pytest.mark.parametrize(
    "moved", ["m.to('cuda')", "m.to('cuda:0')", "nn.Linear(1, 1, device='mps')"]
)
def test_a_module_on_another_device_is_refused(moved):
    stderr = _refused(f"import torch.nn as nn\nm = nn.Linear(1, 1)\n{moved}")
    assert "gradcli computes on the CPU only" in stderr


def test_the_librarys_warnings_are_the_scripts_as_torchs():
    """torch warns of a scheduler stepped before its optimizer at the script's line."""
    program = (
        "import torch\nfrom torch import nn, optim\nm = nn.Linear(1, 1)\n"
        "opt = optim.SGD(m.parameters(), lr=0.1)\ns = optim.lr_scheduler.StepLR(opt, 1)\n"
        "s.step()\nprint('done')"
    )
    done = CliRunner().invoke(app, ["run", "-"], input=program)
    assert done.exit_code == 0
    assert done.stdout == "done\n"
    assert done.stderr.startswith(
        "<stdin>:6: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`."
    )
