"""numpy beside torch in ``gradcli run`` (``numpy_values.py``): arrays made, handed to torch
and back, printed as numpy prints them. Each program runs in gradcli's interpreter and, with
torch 2.13 and numpy, in Python's interactive interpreter (``python_oracle``); stdout
(object addresses masked), exit status and exception line must be the same. What gradcli's
numpy does not take, and what would be too large, is refused before it runs (exit 2)."""

from __future__ import annotations

import pytest
from python_oracle import compared_with_torch, gradcli_run

from gradcli.base.errors import GradcliError

PRELUDE = "import torch\nimport numpy as np\n"
PROGRAMS = {
    "numpy() of a tensor that requires grad, with grad mode off": "x = torch.ones(2, "
    "requires_grad=True)\nwith torch.no_grad():\n    print(x.numpy())\nx.numpy()\n",
    "arrays made and printed": "a = np.array([[1, 2], [3, 4]])\nprint(a)\na\n"
    "print(a.shape, a.dtype, a.ndim, a.size, a.T)\n"
    "b = np.array([[3.3], [4.4]], dtype=np.float32)\nb\nprint(b, b.dtype)\n"
    "print(np.zeros((2, 3)), np.ones(3, dtype=np.int64), np.arange(5), np.arange(0., 1., .25))"
    "\nprint(np.linspace(0, 1, 5), np.float32(1.5), np.pi)\nprint(np.asarray([1.5, 2]))\n"
    "np.array([True, False])\nnp.array([1 + 2j])",
    "arrays computed": "a = np.arange(6).reshape(2, 3)\nprint(a * 2, a + a, a @ a.T, -a)\n"
    "print(a.sum(), a.mean(), a.max(axis=0), a.astype(np.float32), a.tolist())\n"
    "a[0, 1] = 10\na[1] = [7, 8, 9]\nprint(a, a[1], len(a))\nfor row in a:\n    print(row)",
    "to torch and back": "x = np.array([[1, 2], [3, 4]])\ny = torch.from_numpy(x)\nprint(y)\n"
    "z = y.numpy()\nprint(z)\nx[0, 0] = 9\nprint(y, z)\n"
    "f = torch.from_numpy(np.array([[3.3], [4.4]], dtype=np.float32))\nprint(f, f.dtype)\n"
    "t = torch.tensor(np.array([1.5, 2.5]))\nprint(t, t.dtype)\nx[0, 1] = 0\nprint(t)\n"
    "w = torch.ones(2, 2, requires_grad=True)\nprint(w.detach().numpy(), w.data.numpy())\n"
    "print(torch.tensor([[1., 2.], [3., 4.]]).numpy())",
    "numpy() of a tensor that requires grad": "w = torch.ones(2, requires_grad=True)\nw.numpy()",
    "from_numpy of a list": "torch.from_numpy([1, 2])",
    "arrays that do not broadcast": "np.ones(3) + np.ones(2)",
}


torch_outcomes, test_numpy_is_as_torchs = compared_with_torch("numpy", PROGRAMS, PRELUDE)


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ("np.zeros(10**12)", "elements; the limit is"),
        ("np.ones((10**6, 10**6))", "elements; the limit is"),
        ("np.arange(0, 10**13)", "elements; the limit is"),
        ("np.linspace(0, 1, 10**12)", "elements; the limit is"),
        ("a = np.ones((10**4, 1))\nb = np.ones((1, 10**5))\na * b", "elements; the limit is"),
        ("np.array(['a', 'b'])", "arrays of numbers only"),
        ("np.array([1], dtype=object)", "arrays of numbers only"),
        ("np.ones(2).astype(str)", "arrays of numbers only"),
        ("np.ones(2) + torch.ones(2)", "does not mix a numpy array and a tensor"),
        ("np.save('x.npy', np.ones(2))", "numpy has no np.save"),
        ("np.ones(2).tofile('x')", "do not take .tofile"),
        ("np.load('x.npy')", "numpy has no np.load"),
    ],
)
def test_what_gradcli_numpy_does_not_take_is_refused(program, message):
    with pytest.raises(GradcliError, match=message):
        gradcli_run(PRELUDE + program)


def test_a_dunder_of_an_array_is_refused_before_the_script_runs():
    with pytest.raises(GradcliError, match="'__'"):
        gradcli_run(PRELUDE + "print(1)\nnp.ones(2).__dict__")
