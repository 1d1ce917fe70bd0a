"""``torch.utils.data`` in ``gradcli run``: a script's ``Dataset``, ``TensorDataset``,
``DataLoader`` with torch's ``default_collate`` and torch's shuffled order, the samplers.

The programs run in gradcli's interpreter and, with torch 2.13, in Python's interactive
interpreter (``python_oracle``): stdout (addresses masked), exit status and exception line
must be the same. The lean tests hold the library's ``gradcli.utils.data`` to torch's numbers
without torch: the orders torch's ``RandomSampler`` gives after ``manual_seed(123)`` (from
``corpus_expected.json``'s record of rasbt_appendix_a_training_loop.py), the draw every pass
takes from the generator, ``random_split``'s permutation, the collated dtypes, and the
refusals.
"""

from __future__ import annotations

import numpy as np
import pytest
from python_oracle import compared_with_torch, gradcli_run

from gradcli.base.errors import GradcliError
from gradcli.engine.torch_random import Generator, using
from gradcli.ops import library as gc
from gradcli.utils import data

PROGRAMS = {
    "a script's Dataset, shuffled twice, then unshuffled": (
        "import torch\n"
        "from torch.utils.data import Dataset, DataLoader, TensorDataset\n"
        "class Pairs(Dataset):\n"
        "    def __init__(self, n):\n"
        "        self.x = torch.arange(n * 2.0).reshape(n, 2)\n"
        "        self.y = torch.arange(n) % 3\n"
        "    def __getitem__(self, i):\n"
        "        return self.x[i], self.y[i]\n"
        "    def __len__(self):\n"
        "        return len(self.y)\n"
        "torch.manual_seed(7)\n"
        "ds = Pairs(7)\n"
        "len(ds)\n"
        "isinstance(ds, Dataset)\n"
        "loader = DataLoader(ds, batch_size=3, shuffle=True)\n"
        "len(loader)\n"
        "for epoch in range(2):\n"
        "    for i, (x, y) in enumerate(loader):\n"
        "        print(epoch, i, x, y)\n"
        "print(torch.empty(2).uniform_())\n"
        "plain = DataLoader(ds, batch_size=4)\n"
        "for x, y in plain:\n"
        "    print(x.shape, y)\n"
        "print(torch.empty(2).uniform_())\n"
        "dropped = DataLoader(ds, batch_size=3, shuffle=True, drop_last=True)\n"
        "print(len(dropped), [y.tolist() for _, y in dropped])\n"
        "print(list(DataLoader(ds))[0])\n"
        "print(torch.empty(1).normal_())\n"
    ),
    "TensorDataset in a training loop": (
        "import torch\n"
        "import torch.utils.data as data\n"
        "torch.manual_seed(0)\n"
        "X = torch.empty(10, 3).normal_()\n"
        "y = (X.sum(1) > 0).long()\n"
        "ds = data.TensorDataset(X, y)\n"
        "print(len(ds), ds[2], ds[1:3], type(ds))\n"
        "ds.tensors[1]\n"
        "loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True)\n"
        "loader\n"
        "type(loader)\n"
        "for xb, yb in loader:\n"
        "    print(xb, yb)\n"
        "batches = list(loader)\n"
        "print(len(batches), batches[0][1])\n"
        "model = torch.nn.Linear(3, 2)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(3):\n"
        "    total = 0.0\n"
        "    for xb, yb in loader:\n"
        "        loss = torch.nn.functional.cross_entropy(model(xb), yb)\n"
        "        opt.zero_grad()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        total += loss.item() * len(yb)\n"
        "    print(epoch, round(total / len(ds), 4))\n"
        "print(data.Dataset, data.DataLoader, data.TensorDataset, data.RandomSampler)\n"
        "it = iter(loader)\n"
        "next(it)[1]\n"
    ),
    "default_collate, samplers and options": (
        "import torch\n"
        "from torch.utils.data import DataLoader, default_collate\n"
        "print(list(DataLoader([1, 2, 3, 4, 5], batch_size=2)))\n"
        "print(list(DataLoader([0.5, 1.5, 2.5], batch_size=2)))\n"
        "print(list(DataLoader([True, False, True], batch_size=3)))\n"
        "print(list(DataLoader([1, 2.5], batch_size=2)))\n"
        "print(list(DataLoader([True, 1], batch_size=2)))\n"
        'print(list(DataLoader([(1, 2.5, True, "a", {"k": 1.0}, [3, 4])] * 3, batch_size=2)))\n'
        'print(list(DataLoader([{"x": torch.ones(2), "y": 1}] * 2, batch_size=2)))\n'
        "print(list(DataLoader(range(5), batch_size=2)))\n"
        "print(default_collate([torch.zeros(2), torch.ones(2)]))\n"
        "print(default_collate([(1, 2), (3, 4)]))\n"
        "print(list(DataLoader([(1, 2), (3, 4)], batch_size=None)))\n"
        "print(list(DataLoader(list(range(6)), batch_size=2, collate_fn=lambda b: sum(b))))\n"
        "print(list(DataLoader(list(range(6)), batch_size=2, sampler=[5, 3, 1, 0])))\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "print(list(DataLoader([w * 2, w * 3], batch_size=2)))\n"
        "from torch.utils.data import BatchSampler, SequentialSampler, RandomSampler\n"
        "print(list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False)))\n"
        "print(list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=True)))\n"
        "torch.manual_seed(3)\n"
        "print(list(RandomSampler(range(6))), list(RandomSampler(range(6), num_samples=9)))\n"
        "print(list(RandomSampler(range(6), replacement=True, num_samples=40)))\n"
        "print(list(DataLoader(range(6), batch_sampler=[[0, 1], [4]])))\n"
        "print(torch.empty(1).uniform_())\n"
    ),
    "torch's errors": (
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset, Dataset\n"
        "def attempt(f):\n"
        "    try:\n"
        "        print(f())\n"
        "    except Exception as e:\n"
        "        print(type(e), e)\n"
        "attempt(lambda: DataLoader([1, 2, 3], batch_size=0))\n"
        "attempt(lambda: DataLoader([1, 2, 3], batch_size=2.5))\n"
        "attempt(lambda: DataLoader([1, 2, 3], num_workers=-1))\n"
        "attempt(lambda: DataLoader([1, 2, 3], sampler=[0, 1], shuffle=True))\n"
        "attempt(lambda: DataLoader([1, 2], batch_size=None, drop_last=True))\n"
        "attempt(lambda: DataLoader([1, 2], drop_last=1))\n"
        "attempt(lambda: DataLoader([1, 2], batch_sampler=[[0]], batch_size=2))\n"
        "attempt(lambda: list(DataLoader(5)))\n"
        "attempt(lambda: DataLoader(5, shuffle=True))\n"
        "attempt(lambda: DataLoader([], shuffle=True))\n"
        "attempt(lambda: TensorDataset(torch.zeros(3), torch.zeros(4)))\n"
        "attempt(lambda: list(DataLoader([torch.zeros(2), torch.zeros(3)], batch_size=2)))\n"
        "attempt(lambda: list(DataLoader([[1, 2], [3]], batch_size=2)))\n"
        "attempt(lambda: list(DataLoader([None, None], batch_size=2)))\n"
        "class Empty(Dataset):\n"
        "    pass\n"
        "attempt(lambda: Empty()[0])\n"
        "attempt(lambda: len(Empty()))\n"
        "loader = DataLoader([1, 2])\n"
        "def change():\n"
        "    loader.batch_size = 3\n"
        "attempt(change)\n"
        "attempt(lambda: DataLoader([1], bogus=1))\n"
    ),
    "numpy samples, a script's Sampler, batch_size=None": (
        "import torch\n"
        "import numpy as np\n"
        "from torch.utils.data import DataLoader, Dataset, Sampler\n"
        "class Arrays(Dataset):\n"
        "    def __init__(self):\n"
        "        self.data = np.arange(12.0).reshape(4, 3)\n"
        "    def __len__(self):\n"
        "        return 4\n"
        "    def __getitem__(self, i):\n"
        '        return {"x": self.data[i], "label": i % 2, "name": "row"}\n'
        "for batch in DataLoader(Arrays(), batch_size=3):\n"
        "    print(batch)\n"
        "class Backwards(Sampler):\n"
        "    def __init__(self, n):\n"
        "        self.n = n\n"
        "    def __iter__(self):\n"
        "        return iter(range(self.n - 1, -1, -1))\n"
        "    def __len__(self):\n"
        "        return self.n\n"
        "loader = DataLoader(Arrays(), batch_size=2, sampler=Backwards(4))\n"
        'print(len(loader), [b["label"] for b in loader])\n'
        "print(list(DataLoader(Arrays(), batch_size=None))[1])\n"
        "torch.manual_seed(5)\n"
        "g = DataLoader(list(range(10)), batch_size=4, shuffle=True)\n"
        "print(list(g), list(g), torch.randint(0, 100, (3,)))\n"
        "Backwards(2)\n"
        "print(Arrays(), DataLoader([1]).sampler, DataLoader([1]).batch_sampler)\n"
    ),
    "random_split and Subset": (
        "import torch\n"
        "from torch.utils.data import random_split, Subset, TensorDataset, DataLoader\n"
        "torch.manual_seed(42)\n"
        "ds = TensorDataset(torch.arange(10.0), torch.arange(10))\n"
        "train, test = random_split(ds, [0.7, 0.3])\n"
        "print(len(train), len(test), train.indices, test.indices, type(train))\n"
        "print(train[0], test[2])\n"
        "a, b, c = random_split(range(10), [0.34, 0.33, 0.33])\n"
        "print(list(a), list(b), list(c))\n"
        "parts = random_split(range(7), [3, 4])\n"
        "print([p.indices for p in parts])\n"
        "for xb, yb in DataLoader(train, batch_size=3, shuffle=True):\n"
        "    print(xb, yb)\n"
        "sub = Subset(ds, [1, 3, 5])\n"
        "print(len(sub), sub[1], list(DataLoader(sub, batch_size=2)))\n"
        "try:\n"
        "    random_split(range(5), [2, 2])\n"
        "except ValueError as e:\n"
        "    print(e)\n"
        "print(random_split(range(2), [0.5, 0.5, 0.0])[2].indices)\n"
        "print(torch.randint(0, 10, (4,)))\n"
    ),
    "a loader's attributes, and an exception raised in __getitem__": (
        "import torch\n"
        "from torch.utils.data import Dataset, DataLoader\n"
        "class Bad(Dataset):\n"
        "    def __len__(self):\n"
        "        return 3\n"
        "    def __getitem__(self, i):\n"
        "        if i == 2:\n"
        "            raise KeyError(i)\n"
        "        return torch.ones(2) * i\n"
        "loader = DataLoader(Bad(), batch_size=2)\n"
        "print(loader.batch_size, loader.drop_last, len(loader.dataset))\n"
        "print(loader.dataset, loader.generator)\n"
        "loader.sampler\n"
        "for b in loader:\n"
        "    print(b)\n"
    ),
    "a TensorDataset's rows: graphs, indices out of range, iteration": (
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "w = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)\n"
        "ds = TensorDataset(w, torch.tensor([1, 2, 3]))\n"
        "for xb, yb in DataLoader(ds, batch_size=2):\n"
        "    print(xb, yb)\n"
        "order = [-1, 0, 2, 1]\n"
        "print(list(DataLoader(TensorDataset(torch.arange(4)), batch_size=3, sampler=order)))\n"
        "try:\n"
        "    list(DataLoader(TensorDataset(torch.arange(4)), batch_size=2, sampler=[0, 7]))\n"
        "except IndexError as e:\n"
        "    print(e)\n"
        "for x, y in ds:\n"
        "    print(x, y)\n"
        "print(len(list(TensorDataset(torch.zeros(3, 2)))))\n"
    ),
}

torch_outcomes, test_the_script_prints_as_torch = compared_with_torch("data", PROGRAMS)


def _orders(loader: data.DataLoader, passes: int, seed: int = 123) -> list[list[list[int]]]:
    """The batches of ``passes`` passes over ``loader`` (of ``range``), after ``seed``."""
    with using(Generator().manual_seed(seed)):
        return [[batch.data.tolist() for batch in loader] for _ in range(passes)]


def test_the_library_names_it_as_torch_does():
    import gradcli

    assert gradcli.utils.data.DataLoader is data.DataLoader
    assert repr(data.TensorDataset(gc.zeros(1))).startswith(
        "<torch.utils.data.dataset.TensorDataset object at 0x"
    )


def test_a_shuffled_loader_gives_torchs_order():
    # torch's batches of the rasbt script: after manual_seed(123), the five samples in the
    # order 3 1 0 2 4, then 0 2 3 1 4 (the second loader, drop_last)
    loader = data.DataLoader(range(5), batch_size=2, shuffle=True)
    assert _orders(loader, 1) == [[[3, 1], [0, 2], [4]]]
    assert len(loader) == 3
    dropped = data.DataLoader(range(5), batch_size=2, shuffle=True, drop_last=True)
    with using(Generator().manual_seed(123)):
        first = [b.data.tolist() for b in loader]
        second = [b.data.tolist() for b in dropped]
    assert first == [[3, 1], [0, 2], [4]]
    assert second == [[0, 2], [3, 1]]
    assert len(dropped) == 2


def test_each_pass_draws_from_the_generator_as_torchs_does():
    """An unshuffled pass draws one 64-bit number (its base seed); a shuffled one draws two
    (and its permutation from a generator of its own)."""
    for shuffle, draws in ((False, 1), (True, 2)):
        generator = Generator().manual_seed(9)
        with using(generator):
            list(data.DataLoader(range(4), batch_size=3, shuffle=shuffle))
        expected = Generator().manual_seed(9)
        expected.random64(draws)
        assert generator.random64(1).tolist() == expected.random64(1).tolist()


def test_a_given_generator_orders_the_samples():
    generator = Generator().manual_seed(123)
    loader = data.DataLoader(range(5), batch_size=5, shuffle=True, generator=generator)
    seeded = Generator().manual_seed(123)
    seeded.random64(1)  # the pass's base seed, then the permutation from the same generator
    from gradcli.engine.torch_random import samplers

    assert [b.data.tolist() for b in loader] == [samplers.randperm(seeded, 5).tolist()]


def test_random_split_cuts_torchs_permutation():
    # torch's after manual_seed(42): randperm(10) is 2 6 1 8 4 5 0 9 3 7
    with using(Generator().manual_seed(42)):
        train, test = data.random_split(range(10), [0.7, 0.3])
    assert (train.indices, test.indices) == ([2, 6, 1, 8, 4, 5, 0], [9, 3, 7])
    assert [train[i] for i in range(3)] == [2, 6, 1] and len(test) == 3
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(range(5), [2, 2])


def test_a_tensor_datasets_batch_is_its_rows():
    """Rows taken at once where no tensor requires grad; stacked (torch's graph) where one
    does; and a TensorDataset ends Python's iteration with IndexError, as torch's does."""
    x = gc.Tensor(np.arange(8.0).reshape(4, 2))
    rows = next(iter(data.DataLoader(data.TensorDataset(x), batch_size=3, sampler=[3, -4, 1])))
    assert rows[0].data.tolist() == [[6.0, 7.0], [0.0, 1.0], [2.0, 3.0]]
    w = gc.Tensor(np.arange(4.0).reshape(2, 2), requires_grad=True)
    stacked = next(iter(data.DataLoader(data.TensorDataset(w), batch_size=2)))[0]
    assert stacked.requires_grad and stacked.data.tolist() == w.data.tolist()
    assert len(list(data.TensorDataset(x))) == 4


def test_default_collate_gives_torchs_dtypes_and_structure():
    collate = data.default_collate
    assert collate([1.5, 2.0]).dtype == np.float64
    assert collate([1, 2]).dtype == np.int64
    assert collate([True, False]).dtype == np.bool_
    assert collate([True, 1]).dtype == np.int64
    with gc.default_dtype(np.float32):
        assert collate([1, 2.5]).dtype == np.float32
    stacked = collate([gc.Tensor(np.ones(2, np.float32)), gc.Tensor(np.zeros(2, np.float32))])
    assert stacked.shape == (2, 2) and stacked.dtype == np.float32
    fields = collate([(1, "a", {"k": 0.5}, [2, 3]), (4, "b", {"k": 1.5}, [5, 6])])
    assert isinstance(fields, list) and len(fields) == 4
    assert fields[0].data.tolist() == [1, 4] and fields[1] == ("a", "b")
    assert fields[2]["k"].data.tolist() == [0.5, 1.5]
    assert [t.data.tolist() for t in fields[3]] == [[2, 5], [3, 6]]
    assert collate([np.arange(3.0), np.arange(3.0)]).dtype == np.float64


@pytest.mark.parametrize(
    ("make", "kind", "message"),
    [
        (lambda: data.DataLoader([1], batch_size=0), ValueError, "batch_size=0"),
        (lambda: data.DataLoader([1], sampler=[0], shuffle=True), ValueError, "exclusive"),
        (lambda: data.DataLoader([], shuffle=True), ValueError, "num_samples=0"),
        (lambda: data.TensorDataset(gc.zeros(2), gc.zeros(3)), AssertionError, "Size mismatch"),
        (lambda: data.default_collate([None]), TypeError, "found <class 'NoneType'>"),
        (lambda: data.default_collate([[1], [2, 3]]), RuntimeError, "equal size"),
    ],
)
def test_bad_arguments_get_torchs_errors(make, kind, message):
    with pytest.raises(kind, match=message):
        make()


def test_a_batch_of_unequal_tensors_says_which_entry_differs():
    with pytest.raises(gc.ShapeError, match=r"but got \[2\] at entry 0 and \[3\] at entry 2"):
        data.default_collate([gc.zeros(2), gc.zeros(2), gc.zeros(3)])


def test_a_scripts_dataset_is_batched():
    program = (
        "import torch\nfrom torch.utils.data import Dataset, DataLoader\n"
        "class Squares(Dataset):\n    def __len__(self):\n        return 5\n"
        "    def __getitem__(self, i):\n        return i * i, float(i)\n"
        "torch.manual_seed(123)\n"
        "for n, (s, f) in enumerate(DataLoader(Squares(), batch_size=2, shuffle=True)):\n"
        "    print(n, s.tolist(), f.dtype)\n"
    )
    out, status, _ = gradcli_run(program)
    assert status == 0
    assert out.splitlines()[1:] == [
        "0 [9, 1] torch.float64",
        "1 [0, 4] torch.float64",
        "2 [16] torch.float64",
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("DataLoader([1, 2], num_workers=2)", "one process"),
        ("DataLoader([1, 2], pin_memory=True)", "pin_memory"),
        ("torch.utils.data.ChainDataset", "no torch.utils.data.ChainDataset"),
    ],
)
def test_what_gradcli_lacks_is_refused(call, message):
    with pytest.raises(GradcliError, match=message):
        gradcli_run("import torch\nfrom torch.utils.data import DataLoader\n" + call + "\n")
