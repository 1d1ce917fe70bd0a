"""Programs whose text depends on which of torch's overloads a call takes, and on the dtypes and
generators torch has: each runs in gradcli's interpreter and, with torch 2.13, in Python's
interactive interpreter (``python_oracle``); stdout (addresses masked), exit status and
exception line must be the same.

- A number beside a tensor is torch's Scalar overload only where Python's reflected operator
  passes it (``2 - x`` is ``rsub(x, 2)``: RsubBackward1; ``2 / x`` is ``x.reciprocal() * 2``);
  ``torch.sub(2, x)``, ``torch.div(2, x)`` and a 0-d tensor (``two - x``, ``x ** two``) are
  the Tensor overloads (SubBackward0, DivBackward0, PowBackward1), with an edge for the 0-d
  operand; ``torch.div(x, y, rounding_mode=None)`` is DivBackward2.
- int8, int16 and uint8 as torch has them: printed with their dtype, promoted by torch's rules
  (uint8 + int8 is int16, a 0-d tensor or a number does not widen a tensor of its category:
  int32 + torch.tensor(3) is int32), wrapped past their range (uint8 + 300), sums in int64,
  torch's refusal of a constructor's number its dtype cannot hold.
- ``torch.Generator()`` objects: the samplers' ``generator=``, ``random_split``,
  ``DataLoader(shuffle=True, generator=g)`` and ``RandomSampler`` draw torch's numbers from
  them; ``torch.manual_seed`` returns ``torch.default_generator``.
- torch.utils.data's ``ConcatDataset`` (and ``a + b``), ``IterableDataset`` in a loader,
  ``SubsetRandomSampler`` and ``WeightedRandomSampler``, drawing torch's numbers.
"""

from __future__ import annotations

from python_oracle import compared_with_torch

_X = (
    "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    "y = torch.tensor([3.0, 4.0], requires_grad=True)\ntwo = torch.tensor(2.)\n"
)

PROGRAMS = {
    "reflected sub and div": _X
    + "print(torch.sub(2, x), torch.div(2, x), 2 - x, 2 / x)\n"
    + "print(two - x, two / x, x - two, x / two, torch.sub(two, x), torch.div(two, x))\n"
    + "print(x - y, x / y, torch.sub(2, x, alpha=3), x.sub(2), x.div(2), 2.5 - x)\n"
    + "for z in (2 / x, 2 - x, two - x, two / x, torch.sub(2, x), x - 2, x / 2):\n"
    + "    print(z.grad_fn.next_functions)\n"
    + "(2 - x).sum().backward()\nprint(x.grad)\nx.grad = None\n"
    + "(two / x).sum().backward()\nprint(x.grad)\n",
    "rsub": _X
    + "print(torch.rsub(x, 2), torch.rsub(x, y), torch.rsub(x, two), torch.rsub(x, 2, alpha=3))\n"
    + "print(torch.rsub(x, 2).grad_fn.next_functions, torch.rsub(x, y).grad_fn.next_functions)\n"
    + "print(torch.rsub(x, two).grad_fn.next_functions)\n"
    + "t = torch.tensor([1., 2.])\nn = torch.tensor([1, 2])\n"
    + "print(2 - t, two - t, torch.rsub(t, 2, alpha=2), torch.rsub(t, t), 3 - n, 2.5 - n)\n"
    + "torch.rsub(x, y, alpha=2).sum().backward()\nprint(x.grad, y.grad)\n"
    + "print(hasattr(x, 'rsub'))\n",
    "a 0-d tensor is a tensor operand": _X
    + "print(2 ** x, two ** x, x ** two, x ** 2, torch.pow(2, x), torch.pow(x, two))\n"
    + "print((two ** x).grad_fn.next_functions, (x ** two).grad_fn.next_functions)\n"
    + "print(torch.lerp(x, y, two), torch.lerp(x, y, 0.5))\n"
    + "print(torch.lerp(x, y, two).grad_fn.next_functions)\n",
    "div's rounding modes": _X
    + "print(torch.div(x, y, rounding_mode=None), torch.div(x, 2, rounding_mode=None))\n"
    + "print(x.div(y, rounding_mode=None), torch.div(x, y, rounding_mode='floor'))\n"
    + "print(torch.div(x, y), torch.divide(x, y, rounding_mode=None))\n"
    + "print(torch.div(x, y, rounding_mode=None).grad_fn.next_functions)\n",
    "int8, int16 and uint8": "import torch\n"
    + "a = torch.tensor([200, 100, 3], dtype=torch.uint8)\n"
    + "b = torch.tensor([-100, 100, 3], dtype=torch.int8)\n"
    + "c = torch.tensor([1000, -2, 3], dtype=torch.int16)\n"
    + "print(a, b, c, a.dtype, torch.short, torch.int8, a + b, (a + b).dtype)\n"
    + "print(a + a, b + b, b * b, c * c, a - 201, b - 100, a + 300, b + -300)\n"
    + "print(a + 1, (a + 1).dtype, a + 1.5, (a * 2.5).dtype, a / 2, a // 3, b // 3, b % 3)\n"
    + "print(a.to(torch.int8), b.to(torch.uint8), c.to(torch.int8), c.to(torch.uint8))\n"
    + "x = torch.tensor([1.7, -2.5, 300.0])\n"
    + "print(x.to(torch.uint8), x.to(torch.int8), x.short(), x.byte(), x.char(), a.float())\n"
    + "print(a.sum(), a.sum().dtype, b.sum().dtype, c.sum().dtype, a.max(), b.min(), -b)\n"
    + "print(a == 200, a > b, a.tolist(), b[0].item(), a < 300, a * True, a.sin(), b.exp())\n"
    + "print(torch.zeros(2, dtype=torch.uint8), torch.arange(5, dtype=torch.int16))\n"
    + "print(a + torch.tensor(3), (b + torch.tensor([3])).dtype, ~b, a & 3, a | b)\n"
    + "print(torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(3))\n"
    + "print(torch.tensor([1.]) + torch.tensor(3., dtype=torch.float64))\n"
    + "print(torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(2.5, dtype=torch.float64))\n"
    + "print(torch.tensor([2, 3]) * True, torch.tensor([True, False]) * True)\n"
    + "print(torch.tensor([-1, 255], dtype=torch.uint8), torch.full((2,), -3, dtype=torch.int16))\n"
    + "torch.tensor([300], dtype=torch.uint8)\n",
    "a number past an integer dtype": "import torch\n"
    + "print(torch.tensor([1, 2], dtype=torch.int32) + 2**40)\n"
    + "torch.full((2,), 300, dtype=torch.uint8)\n",
    "torch.Generator": (
        "import torch\n"
        "from torch.utils.data import TensorDataset, DataLoader, RandomSampler, random_split\n"
        "torch.manual_seed(5)\n"
        "g = torch.Generator().manual_seed(42)\n"
        "print(g, type(g), isinstance(g, torch.Generator), g.initial_seed())\n"
        "print(torch.randn(3, generator=g), torch.rand(2, generator=g))\n"
        "print(torch.randint(0, 10, (4,), generator=g), torch.randperm(5, generator=g))\n"
        "print(torch.normal(0., 1., (2,), generator=g), torch.randint(0, 100, (3,)))\n"
        "print(torch.bernoulli(torch.full((4,), 0.5), generator=g))\n"
        "w = torch.tensor([0.2, 0.3, 0.5])\n"
        "print(torch.multinomial(w, 4, replacement=True, generator=g))\n"
        "g2 = torch.Generator()\n"
        "print(g2.initial_seed(), torch.randn(2, generator=g2))\n"
        "g2.manual_seed(7)\n"
        "print(torch.randn(2, generator=g2), torch.manual_seed(3) is torch.default_generator)\n"
        "ds = TensorDataset(torch.arange(10.))\n"
        "a, b = random_split(ds, [7, 3], generator=torch.Generator().manual_seed(0))\n"
        "print(len(a), len(b), a.indices, b.indices)\n"
        "a, b = random_split(ds, [0.5, 0.5], generator=g)\n"
        "print(a.indices, b.indices)\n"
        "g1 = torch.Generator().manual_seed(1)\n"
        "dl = DataLoader(ds, batch_size=4, shuffle=True, generator=g1)\n"
        "for (x,) in dl:\n"
        "    print(x)\n"
        "for (x,) in dl:\n"
        "    print(x)\n"
        "print(list(RandomSampler(range(6), generator=torch.Generator().manual_seed(3))))\n"
        "print(list(RandomSampler(range(6), replacement=True, num_samples=4, generator=g)))\n"
        "print(torch.randint(0, 100, (3,)))\n"
        "h = torch.Generator()\n"
        "h.set_state(g.get_state())\n"
        "print(torch.randn(2, generator=g), torch.randn(2, generator=h))\n"
        "s = g.get_state()\n"
        "print(torch.rand(2, generator=g))\n"
        "g.set_state(s)\n"
        "print(torch.rand(2, generator=g))\n"
        "print(s.dtype, s.shape, g.device)\n"
    ),
    "a generator's state refused": "import torch\ng = torch.Generator()\n"
    + "g.set_state(torch.zeros(3, dtype=torch.uint8))\n",
    "ConcatDataset and the subset and weighted samplers": (
        "import torch\n"
        "from torch.utils.data import TensorDataset, ConcatDataset, DataLoader\n"
        "from torch.utils.data import SubsetRandomSampler, WeightedRandomSampler\n"
        "torch.manual_seed(0)\n"
        "a = TensorDataset(torch.arange(4.))\n"
        "b = TensorDataset(torch.arange(10., 13.))\n"
        "c = ConcatDataset([a, b])\n"
        "print(len(c), c.cumulative_sizes, c[0], c[4], c[-1], c[6])\n"
        "d = a + b\n"
        "print(type(d), len(d), d[5])\n"
        "for (x,) in DataLoader(c, batch_size=3, shuffle=True):\n"
        "    print(x)\n"
        "s = SubsetRandomSampler([10, 20, 30, 40, 50])\n"
        "print(list(s), len(s), list(s))\n"
        "print(list(SubsetRandomSampler(range(6), generator=torch.Generator().manual_seed(2))))\n"
        "w = WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], 6)\n"
        "print(list(w), len(w), w.weights)\n"
        "g4 = torch.Generator().manual_seed(4)\n"
        "t = torch.tensor([1., 2., 3.])\n"
        "w = WeightedRandomSampler(t, 3, replacement=False, generator=g4)\n"
        "print(list(w))\n"
        "subset = SubsetRandomSampler([0, 2, 3])\n"
        "for (x,) in DataLoader(a, batch_size=2, sampler=subset):\n"
        "    print(x)\n"
        "weighted = WeightedRandomSampler([1., 1., 5., 1.], 5)\n"
        "for (x,) in DataLoader(a, batch_size=2, sampler=weighted):\n"
        "    print(x)\n"
        "print(torch.randint(0, 100, (3,)))\n"
        "try:\n"
        "    c[-20]\n"
        "except ValueError as e:\n"
        "    print(e)\n"
    ),
    "IterableDataset": (
        "import torch\n"
        "from torch.utils.data import IterableDataset, DataLoader, ConcatDataset\n"
        "torch.manual_seed(0)\n"
        "class Stream(IterableDataset):\n"
        "    def __init__(self, n):\n"
        "        self.n = n\n"
        "    def __iter__(self):\n"
        "        return iter([torch.tensor([float(i), float(i * i)]) for i in range(self.n)])\n"
        "class Sized(Stream):\n"
        "    def __len__(self):\n"
        "        return self.n\n"
        "s = Stream(7)\n"
        "for batch in DataLoader(s, batch_size=3):\n"
        "    print(batch)\n"
        "for batch in DataLoader(s, batch_size=3, drop_last=True):\n"
        "    print(batch)\n"
        "print(list(DataLoader(s, batch_size=None))[:2])\n"
        "print(len(DataLoader(Sized(7), batch_size=3)))\n"
        "print(len(DataLoader(Sized(7), batch_size=3, drop_last=True)))\n"
        "print(torch.randint(0, 100, (3,)))\n"
        "class Numbers(IterableDataset):\n"
        "    def __iter__(self):\n"
        "        return iter([1, 2, 3, 4, 5])\n"
        "print(list(DataLoader(Numbers(), batch_size=2)))\n"
        "print(isinstance(s, torch.utils.data.Dataset), isinstance(s, IterableDataset))\n"
        "try:\n"
        "    DataLoader(s, shuffle=True)\n"
        "except ValueError as e:\n"
        "    print(e)\n"
        "try:\n"
        "    ConcatDataset([s])\n"
        "except AssertionError as e:\n"
        "    print(e)\n"
        "loader = DataLoader(Sized(5), batch_size=2)\n"
        "print(len(loader))\n"
    ),
}

torch_outcomes, test_the_script_prints_as_torch = compared_with_torch("overloads", PROGRAMS)
