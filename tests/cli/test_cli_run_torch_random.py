"""``gradcli run`` draws torch's numbers: after ``torch.manual_seed(n)`` a script prints what
torch prints (rand, randn on both of torch's normal paths, the *_like constructors, dropout,
float64), checked against torch running the same script as the interactive interpreter
does; the issue's own example is checked without torch."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GENERATOR = re.compile(r"<torch\._C\.Generator object at 0x[0-9a-f]+>")


def test_the_issues_example_prints_torchs_numbers(cli):
    script = "import torch\ntorch.manual_seed(0)\nx = torch.rand(3, requires_grad=True)\nprint(x)\n"
    done = cli("run", "-", input=script)
    assert done.exit_code == 0, done.stderr
    echo, printed = done.stdout.splitlines()
    assert GENERATOR.fullmatch(echo)
    assert printed == "tensor([0.4963, 0.7682, 0.0885], requires_grad=True)"


def test_without_manual_seed_the_seed_option_seeds_the_generator(cli):
    script = "import torch\nprint(torch.rand(3))\n"
    assert cli("run", "-", input=script).stdout == "tensor([0.4963, 0.7682, 0.0885])\n"
    again = cli("run", "-", "--seed", "1", input=script).stdout
    assert again == "tensor([0.7576, 0.2793, 0.4031])\n"  # torch.manual_seed(1)'s


def _torch_interactive(script: str) -> str:
    """What Python's interactive interpreter prints running ``script`` with torch (our own
    test text, never user text)."""
    torch = pytest.importorskip("torch")
    import ast

    namespace: dict = {"torch": torch}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for statement in ast.parse(script).body:
            code = compile(ast.Interactive([statement]), "<script>", "single")
            exec(code, namespace)  # the test's own script
    return out.getvalue()


SCRIPTS = {
    "seed post's network": "torch.manual_seed(0)\n"
    + (REPO / "tests" / "pytorch" / "seed_neural_network.py").read_text(),
    "seed post's example 1": "import torch\ntorch.manual_seed(0)\n"
    + (REPO / "tests" / "pytorch" / "seed_vjp_example1.py").read_text(),
    "both normal paths and the kept normal": (
        "import torch\ntorch.manual_seed(3)\na = torch.randn(3)\nb = torch.randn(20)\n"
        "c = torch.randn(1)\nd = torch.randn(4, 5, dtype=torch.float64)\nprint(a, b, c, d)\n"
    ),
    "like constructors and a loop": (
        "import torch\ntorch.manual_seed(7)\nx = torch.ones(2, 17)\n"
        "y = torch.rand_like(x)\nz = torch.randn_like(x, dtype=torch.float64)\n"
        "for i in range(3):\n    w = torch.rand(5)\n    print(w)\nprint(y, z)\n"
    ),
    "dropout": (
        "import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
        "x = torch.rand(40, requires_grad=True)\ny = F.dropout(x, 0.3)\n"
        "z = F.dropout(x, 0.0)\nu = torch.nn.functional.dropout(x.double(), 0.5)\n"
        "print(y)\nprint(u)\nprint(torch.rand(2))\ny.sum().backward()\nprint(x.grad)\n"
    ),
    "reseeding": (
        "import torch\ntorch.manual_seed(5)\na = torch.rand(3)\ntorch.manual_seed(5)\n"
        "b = torch.rand(3)\nprint(a, b)\n"
    ),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", SCRIPTS)
def test_a_seeded_script_prints_torchs_numbers(cli, name):
    expected = _torch_interactive(SCRIPTS[name])
    done = cli("run", "-", input=SCRIPTS[name])
    assert done.exit_code == 0, done.stderr
    assert GENERATOR.sub("<generator>", done.stdout) == GENERATOR.sub("<generator>", expected)


def test_a_seed_torch_cannot_take_is_torchs_value_error(cli):
    script = "import torch\nprint(torch.rand(2))\ntorch.manual_seed(18446744073709551616)\n"
    done = cli("run", "-", input=script)
    assert done.exit_code == 1
    assert done.stdout == "tensor([0.4963, 0.7682])\n"
    assert done.stderr.splitlines()[-1] == "ValueError: Overflow when unpacking long long"


def test_a_negative_seed_is_taken_modulo_2_to_the_64(cli):
    script = "import torch\ntorch.manual_seed(-1)\nprint(torch.rand(2))\n"
    done = cli("run", "-", input=script)
    # torch.manual_seed(-1) seeds with 2**64 - 1, whose low 32 bits are 2**32 - 1
    assert done.stdout.splitlines()[-1] == "tensor([0.9938, 0.5713])"
