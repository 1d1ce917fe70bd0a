"""What 25 more scripts of public teaching code (d2l, UvA's deep learning course, Raschka's
LLMs-from-scratch, the PyTorch tutorials and notes, mrdbourke) found that gradcli did
otherwise than torch 2.13: each program here runs in gradcli's interpreter and, with torch, in
Python's interactive interpreter (``python_oracle``); stdout (object addresses masked), exit
status and exception line must be the same.

The causes fixed: ``nn.LazyConv1d/2d/3d`` (missing); the node of ``a @ b`` beyond matrices
(torch's matmul folds or batches the product and views it: ``UnsafeViewBackward0``, a vector
times a matrix ``SqueezeBackward4``, a matrix that needs a gradient times a batch a copy of the
transposed product; gradcli printed ``MatmulBackward0``, no torch name); the output node of a
float32 LSTM (torch's CPU runs each layer as one oneDNN operation,
``MkldnnRnnLayerBackward0``); ``torch.randint`` with its arguments named; ``x.__class__`` and
a class's ``__name__`` (refused); ``import torch.functional``; ``torch.range`` and ``arange``'s
arguments by name; ``torch.manual_seed(seed=...)`` and ``torch.random.manual_seed``.
"""

from __future__ import annotations

import pytest
from python_oracle import compared_with_torch, gradcli_run

from gradcli.base.errors import GradcliError

PROGRAMS = {
    "lazy convolutions": (
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "c = nn.LazyConv2d(1, kernel_size=(1, 2), bias=False)\nprint(c)\nprint(c.weight)\n"
        "Y = c(torch.ones(1, 1, 6, 8))\nprint(c, type(c))\nprint(c.weight, Y.shape, Y.grad_fn)\n"
        "c2 = nn.LazyConv2d(4, kernel_size=3, padding=1, stride=2)\nprint(c2)\n"
        "print(c2(torch.linspace(-1, 1, 192).reshape(3, 8, 8)).shape, c2)\n"
        "print(c2.weight.shape, c2.bias)\n"
        "c1 = nn.LazyConv1d(2, 3, groups=2, dilation=2)\nprint(c1)\n"
        "print(c1(torch.linspace(0, 1, 36).reshape(1, 4, 9)).shape, c1)\n"
        "c3 = nn.LazyConv3d(2, 1, padding='same')\n"
        "print(c3, c3(torch.ones(1, 2, 2, 2, 2)).shape, c3)\n"
        "net = nn.Sequential(nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid())\n"
        "print(net)\nprint(net(torch.linspace(-2, 2, 64).reshape(1, 1, 8, 8)).sum())\nprint(net)\n"
        "print(isinstance(c, nn.Conv2d), isinstance(c2, nn.LazyConv2d))\n"
        "try:\n    nn.LazyConv1d(2, 3, groups=2)(torch.ones(1, 3, 9))\n"
        "except ValueError as e:\n    print(e)\n"
        "nn.LazyConv2d(2, 3)(torch.ones(9))\n"
    ),
    "matmul's nodes": (
        "import torch\n"
        "shapes = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), "
        "((2, 2, 3), (3, 4)), ((2, 2, 3), (3,)), ((3,), (2, 3, 4)), ((2, 3), (2, 3, 4)), "
        "((2, 2, 3), (2, 3, 4)), ((2, 1, 2, 3), (2, 3, 4)), ((2, 2, 2, 3), (2, 2, 3, 4))]\n"
        "for a, b in shapes:\n"
        "    x = torch.ones(a, requires_grad=True)\n    y = torch.ones(b, requires_grad=True)\n"
        "    print(a, b, (x @ y).grad_fn, torch.matmul(x, y).grad_fn, x.matmul(y).grad_fn)\n"
        "for a, b, ga, gb in [((1, 3), (2, 3, 4), True, False), ((2, 3), (2, 3, 1), True, True), "
        "((2, 3), (2, 3, 4), False, True), ((2, 3), (2, 3, 4), True, False)]:\n"
        "    x = torch.ones(a, requires_grad=ga)\n    y = torch.ones(b, requires_grad=gb)\n"
        "    print(a, b, (x @ y).grad_fn)\n"
        "x = torch.ones(2, 3, requires_grad=True)\n(x @ torch.ones(2, 3, 4)).sum().backward()\n"
        "print(x.grad)\n"
    ),
    "an LSTM's output node": (
        "import torch, torch.nn as nn\ntorch.manual_seed(0)\n"
        "for mod in [nn.LSTM(3, 3), nn.GRU(3, 3), nn.RNN(3, 3), nn.LSTM(3, 3, 2), "
        "nn.LSTM(3, 3, batch_first=True), nn.LSTM(3, 3, bidirectional=True)]:\n"
        "    o, h = mod(torch.linspace(-1, 1, 15).reshape(5, 1, 3))\n"
        "    print(type(mod).__name__, o.grad_fn.name(), "
        "(h[0] if isinstance(h, tuple) else h).grad_fn.name())\n"
        "print(nn.LSTM(3, 3).double()(torch.ones(5, 1, 3, dtype=torch.float64))[0].grad_fn)\n"
        "print(nn.LSTM(3, 3)(torch.ones(5, 3))[0].grad_fn)\n"
        "o, _ = nn.LSTM(3, 2)(torch.linspace(0, 1, 12).reshape(4, 1, 3))\n"
        "o.sum().backward()\nprint(o)\n"
    ),
    "randint's arguments by name": (
        "import torch\ntorch.manual_seed(0)\n"
        "print(torch.randint(low=0, high=2, size=(5, 2), dtype=torch.float32))\n"
        "print(torch.randint(3, 10, (2, 2)), torch.randint(10, (3,)))\n"
        "print(torch.randint(high=5, size=(3,)), torch.randint(2, high=5, size=(3,)))\n"
        "print(torch.randint(0, 7, size=(4,), dtype=torch.float64), torch.randint(5, size=(2,)))\n"
    ),
    "a class's name": (
        "import torch\nimport torch.nn as nn\nclass A(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.name = self.__class__.__name__\nclass B:\n    pass\n"
        "def f(x):\n    return x\na = A()\n"
        "print(a.name, type(a).__name__, type(B()).__name__, B().__class__, B.__name__, type(a))\n"
        "print(nn.Linear.__name__, type(nn.Linear(1, 1)).__name__, type(torch.ones(1)).__name__)\n"
        "print(f.__name__, torch.relu.__name__, torch.__name__, nn.__name__, int.__name__)\n"
        "print(torch.ones(2).__class__, (3).__class__, type(None).__name__, "
        "[].__class__.__name__, nn.Linear(1, 1).__class__.__name__)\n"
        "print(torch.nn.functional.relu.__name__, torch.Tensor.__name__, nn.Module.__name__)\n"
        "try:\n    print(a.__name__)\nexcept AttributeError as e:\n    print(e)\n"
        "(3).__name__\n"
    ),
    "torch.functional": (
        "import torch\nimport torch.functional as F\nfrom torch.functional import einsum\n"
        "a = torch.ones(2, 3)\n"
        "print(F.einsum('ij->j', a), einsum('ij->i', a), F.split(a, 1))\n"
        "print(torch.functional.meshgrid(torch.ones(2), torch.ones(1), indexing='ij'))\n"
        "F.relu(a)\n"
    ),
    "torch.range, and arange's arguments by name": (
        "import torch\nprint(torch.range(0, 10), torch.range(1, 4, 0.5))\n"
        "print(torch.range(0, 3, dtype=torch.int64), torch.range(start=0, end=2))\n"
        "print(torch.range(1, 2.5, 0.5, requires_grad=True), torch.range(5, 1, -2))\n"
        "print(torch.range(-1, 1, 0.1), torch.range(0, 1, 0.3))\n"
        "print(torch.range(0, 10, 3, dtype=torch.float64), torch.range(10, 1, -3, "
        "dtype=torch.int32))\n"
        "print(torch.arange(start=0, end=10, step=1), torch.arange(0, end=4), "
        "torch.arange(end=3), torch.arange(1, 3, step=0.5))\n"
        "for f in [lambda: torch.range(5), lambda: torch.arange(start=1), "
        "lambda: torch.range(0, float('inf')), lambda: torch.range(0, 10, 0), "
        "lambda: torch.range(5, 1)]:\n"
        "    try:\n        f()\n    except (TypeError, RuntimeError) as e:\n"
        "        print(type(e).__name__, e)\n"
    ),
    "manual_seed's seed by name": (
        "import torch\ntorch.manual_seed(seed=42)\na = torch.randint(100, (4,))\n"
        "torch.random.manual_seed(seed=42)\n"
        "print(a, torch.randint(100, (4,)), torch.random.manual_seed(1))\n"
    ),
}


torch_outcomes, test_the_script_prints_as_torch = compared_with_torch("teaching", PROGRAMS)


def test_a_lazy_convolution_becomes_its_convolution_at_the_first_call():
    out, status, _ = gradcli_run(
        "import torch\nfrom torch import nn\nc = nn.LazyConv2d(3, 2)\nprint(type(c).__name__)\n"
        "_ = c(torch.ones(1, 4, 5, 5))\nprint(type(c).__name__, c.in_channels, c.weight.shape)\n"
    )
    assert (out, status) == ("LazyConv2d\nConv2d 4 torch.Size([3, 4, 2, 2])\n", 0)


def test_a_product_of_batches_is_viewed_as_torchs():
    out, _, _ = gradcli_run(
        "import torch\nx = torch.ones(2, 2, 3, requires_grad=True)\n"
        "print((x @ torch.ones(3, 4)).grad_fn.name(), (torch.ones(3) @ x.mT).grad_fn.name())\n"
    )
    assert out == "UnsafeViewBackward0 UnsafeViewBackward0\n"


@pytest.mark.parametrize("reach", ["x.__dict__", "x.__class__.__bases__", "f.__code__"])
def test_other_dunders_stay_refused(reach):
    with pytest.raises(GradcliError, match="'__'"):
        gradcli_run(f"import torch\ndef f():\n    pass\nx = torch.ones(1)\nprint({reach})")
