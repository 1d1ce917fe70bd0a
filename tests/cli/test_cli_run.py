"""``gradcli run SCRIPT``: the scripts of ``tests/pytorch`` (the seed post's examples verbatim)
and ``tests/pytorch/run`` (our own: float32 printing, reassignment, accumulation, warnings,
errors, ``torch.no_grad()``, node names) print exactly what torch prints.

Where torch is installed, each script is also run by real torch in a subprocess, as Python's
interactive interpreter runs it (``torch_interactive.py``: each statement compiled in 'single'
mode, so a bare ``x.grad`` prints its value), and stdout, stderr (warnings and the traceback's
frame in the script) and the exit status are compared character for character. For
``torch.rand``/``torch.randn``, torch is handed the values gradcli drew (gradcli's generator is
not torch's), and so for ``torch.rand_like``/``torch.randn_like``, so those scripts are
compared character for character too.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli.ops.arrays.shapes import MESHGRID_WARNING
from gradcli.script.python.interpreter import execute, lower, new_run
from gradcli.script.python.tensors import NONLEAF_GRAD, SCALAR_OF_GRAPH

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "pytorch"
SCRIPTS = sorted(CORPUS.glob("*.py")) + sorted((CORPUS / "run").glob("*.py"))
ORACLE = Path(__file__).with_name("torch_interactive.py")


def _relative(script: Path) -> str:
    return str(script.relative_to(REPO))


def _drawn(script: Path) -> list:
    """The values gradcli's rand, randn, rand_like and randn_like give the script's
    statements, in order (as gradcli run makes them: float32 unless told otherwise)."""
    source = script.read_text()
    run = new_run(source, str(script), out=io.StringIO(), err=io.StringIO())
    execute(run, lower(source))
    return [values.tolist() for values in run.drawn]


def _masked(text: str) -> str:
    """``text`` with object addresses masked (torch.manual_seed's generator, grad_fn)."""
    return re.sub(r"0x[0-9a-f]+", "0x…", text)


@pytest.fixture(scope="module")
def torch_outputs(tmp_path_factory) -> dict:
    """What torch prints for every script of the corpus (one subprocess for them all)."""
    pytest.importorskip("torch")
    jobs = tmp_path_factory.mktemp("torch") / "jobs.json"
    jobs.write_text(json.dumps([[_relative(s), _drawn(s)] for s in SCRIPTS]))
    command = [sys.executable, str(ORACLE), str(jobs)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _anywhere(text: str) -> str:
    """``text`` with the addresses of shown objects (``<torch._C.Generator object at
    0x7f..>``, which differ from run to run) written alike."""
    return re.sub(r" object at 0x[0-9a-f]+>", " object at 0x...>", text)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_a_script_prints_what_torch_prints(cli, script, torch_outputs):
    done = cli("run", _relative(script))
    expected = torch_outputs[_relative(script)]
    assert _masked(done.stdout) == _masked(expected["stdout"])
    assert done.stderr == expected["stderr"]
    assert done.exit_code == expected["status"]


def test_the_seed_posts_first_example(cli):
    done = cli("run", "tests/pytorch/seed_first_example.py")
    assert done.exit_code == 0 and done.stderr == ""
    assert done.stdout == "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n"
    example2 = cli("run", "tests/pytorch/seed_vjp_example2.py").stdout.splitlines()
    assert example2 == [
        "x:  tensor([1., 2.], requires_grad=True)",
        "y: tensor([ 1., 21.,  6.], grad_fn=<CopySlices>)",
        "x.grad: tensor([ 4., 23.])",
    ]


def test_float32_by_default_and_float64_when_asked(cli):
    program = (
        "import torch\na = torch.tensor([0.1, 0.2])\nb = torch.tensor([0.1], dtype=torch.float64)\n"
        "print(a.sum().item(), b.item(), a.dtype, b.dtype)\nb * 2\n"
    )
    done = cli("run", "-", input=program)
    assert done.stdout.splitlines() == [
        "0.30000001192092896 0.1 torch.float32 torch.float64",
        "tensor([0.2000], dtype=torch.float64)",
    ]


def test_a_non_scalar_backward_stops_the_script_after_what_it_printed(cli):
    done = cli("run", "tests/pytorch/run/scalar_output_error.py")
    assert done.exit_code == 1
    assert done.stdout == "y: tensor([1., 4., 9.], grad_fn=<MulBackward0>)\ntorch.Size([3])\n"
    assert done.stderr == (
        "Traceback (most recent call last):\n"
        f'  File "{CORPUS}/run/scalar_output_error.py", line 6, in <module>\n'
        "    y.backward()\n"
        "RuntimeError: grad can be implicitly created only for scalar outputs\n"
    )


def test_the_non_leaf_grad_warning_names_the_line_once(cli):
    done = cli("run", "tests/pytorch/run/nonleaf_grad_warning.py")
    warnings = [line for line in done.stderr.splitlines() if "UserWarning" in line]
    path = CORPUS / "run" / "nonleaf_grad_warning.py"
    assert warnings == [f"{path}:{n}: UserWarning: {NONLEAF_GRAD}" for n in (7, 8, 9)]
    assert "  print(y.grad, y.grad)" in done.stderr.splitlines()


def test_a_float_of_a_tensor_that_requires_grad_warns_once_in_torchs_words(cli, tmp_path):
    """torch 2.13 warns once a process where float() or complex() takes a tensor that requires
    grad with grad mode on (not int(), not .item(), not under no_grad); a second warning on
    the same line (the non-leaf's .grad) is still shown, as Python's filter shows it."""
    script = tmp_path / "scalar.py"
    script.write_text(
        "import torch\nx = torch.ones(1, requires_grad=True)\ny = x * 2\n"
        "with torch.no_grad():\n    print(float(y))\n"
        "print(int(y), y.item())\nprint(float(y), y.grad)\nprint(complex(y), float(x))\n"
    )
    done = cli("run", str(script))
    assert done.exit_code == 0
    first, second = SCALAR_OF_GRAPH.splitlines()
    assert done.stderr.splitlines() == [
        f"{script}:7: UserWarning: {first}",
        second,
        "  print(float(y), y.grad)",
        f"{script}:7: UserWarning: {NONLEAF_GRAD}",
        "  print(float(y), y.grad)",
    ]
    pytest.importorskip("torch")
    real = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert (done.stdout, done.stderr) == (real.stdout, real.stderr)


def test_meshgrid_without_indexing_warns_once_in_torchs_words(cli, tmp_path):
    """torch 2.13 warns where meshgrid is not given indexing, once in a process whichever line
    calls it (TORCH_WARN_ONCE); gradcli names the script's line (torch names its own
    functional.py). The words are those of a real run of the script, which prints the same."""
    torch = pytest.importorskip("torch")
    script = tmp_path / "grid.py"
    script.write_text(
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "a, b = torch.meshgrid(x, x * 2)\nc = torch.meshgrid([x])[0]\n"
        "d = torch.meshgrid(x, indexing='xy')[0]\nprint(a + b + c + d)\n"
    )
    done = cli("run", str(script))
    assert done.exit_code == 0
    assert done.stderr.splitlines() == [
        f"{script}:3: UserWarning: {MESHGRID_WARNING}",
        "  a, b = torch.meshgrid(x, x * 2)",
    ]
    real = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.stdout == real.stdout
    warned = [line for line in real.stderr.splitlines() if "UserWarning" in line]
    assert len(warned) == 1 and warned[0].endswith(f"UserWarning: {MESHGRID_WARNING}")
    assert torch.__version__.startswith("2.13")


def _real_python(script: Path, stdin: bool) -> subprocess.CompletedProcess:
    """``python script.py`` (or ``python - < script.py``) with torch: the run a user makes."""
    pytest.importorskip("torch")
    command = [sys.executable, "-"] if stdin else [sys.executable, _relative(script)]
    given = script.read_text() if stdin else None
    return subprocess.run(command, cwd=REPO, input=given, capture_output=True, text=True)


@pytest.mark.torch
@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
@pytest.mark.parametrize("name", ["nonleaf_grad_warning", "scalar_output_error"])
def test_warnings_and_errors_are_those_of_python_running_the_script(cli, name, stdin):
    """Against ``python script.py`` itself (no bare expression of these scripts shows a
    value): the same stdout, the same warning lines (with ``<stdin>`` and no source line for
    a script on stdin), the same last line of the traceback."""
    script = CORPUS / "run" / f"{name}.py"
    real = _real_python(script, stdin)
    done = cli("run", "-" if stdin else _relative(script), input=script.read_text())
    assert done.stdout == real.stdout
    assert done.exit_code == real.returncode

    def warning_lines(text: str) -> list[str]:
        lines = text.splitlines()
        return [t for i, t in enumerate(lines) if "Warning" in t or "Warning" in lines[i - 1]]

    assert warning_lines(done.stderr) == warning_lines(real.stderr)
    assert done.stderr.splitlines()[-1:] == real.stderr.splitlines()[-1:]


# What the old front end (a statement at a time through sympy) refused, and Python runs: the
# interpreter runs it as Python does (compared with python and torch in the test below)
_PYTHON_PROGRAMS = [
    "for i in [1, 2]:\n    print(i)",
    "n = 2.5\nfor i in range(n):\n    print(i)",
    "for i in range(3):\n    print(i)\nelse:\n    print('done')",
    "for i in range(3):\n    break\nprint(i)",
    "for i in range(3):\n    print(i * 2)",
    "def f(x):\n    print(x)\n    return x\nf(torch.ones(2))",
    "def f(x):\n    y = x\nprint(f(1))",
    "def f(x=1):\n    return x\nprint(f(), f(2))",
    "f = lambda x: x\nx = torch.ones(2)\ny = f(x, x)",
    "f = lambda x: x\nx = torch.ones(2)\ny = f(w=x)",
    "x = torch.ones(2)\nx[0] += 1\nprint(x)",
    "x = torch.ones(2)\nx //= 2\nprint(x)",
    "lr = 0.1\nlr *= 2\nprint(lr)",
    "x = torch.ones(2)\nprint(x.foo())",
    "x = torch.ones(2)\nw = 3\nprint(f'{x.sum():{w}}')",
    "x = torch.ones(2)\n(x * 2).retain_grad()",
    "x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.backward(x * 2)\nprint(x.grad)",
    "c = 2 * 3\nprint(c, c / 4, c // 4, -c % 4, 2 ** 10, 1e3 * c)",
    "x = torch.ones(2)\ny = x + torch.ones(2, requires_grad=True)\nprint(y)",
    "x = torch.ones(2)\ny = torch.zeros_like(x * 2)\nprint(y)",
    "torch.manual_seed(1.5)",
    "x = torch.ones(2, requires_grad=True)\ng = torch.autograd.grad((x * x).sum(), x)\nh = g * 2"
    "\nprint(h)",
    "x = torch.ones(2, requires_grad=True)\ng = torch.func.grad(lambda t: t.sum(), argnums=1)(x)",
    "x = torch.ones(2, requires_grad=True)\nJ = torch.autograd.functional.jacobian("
    "lambda a, b: a * b, x)",
    "a, *b = [1, 2, 3]\nprint(a, b)\nd = {'k': [i ** 2 for i in range(4) if i % 2]}\nprint(d)",
    "def outer():\n    n = 0\n    def inner():\n        nonlocal n\n        n += 1\n"
    "        return n\n    return inner\ncount = outer()\ncount()\nprint(count(), count())",
    "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print('caught', e)\nfinally:\n"
    "    print('finally')",
    "while True:\n    break\nprint(1 < 2 < 3, 3 > 2 > 5, not [], 0 or 'x', '' and 1)",
]


@pytest.mark.torch
@pytest.mark.parametrize("program", _PYTHON_PROGRAMS)
def test_python_that_the_old_front_end_refused_runs_as_python(cli, program, tmp_path):
    """Against Python's interactive interpreter with torch (``torch_interactive.py``): stdout,
    the exit status and the exception's line."""
    script = tmp_path / "script.py"
    script.write_text("import torch\n" + program + "\n")
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([[str(script), []]]))
    command = [sys.executable, str(ORACLE), str(jobs)]
    real = json.loads(subprocess.run(command, capture_output=True, text=True).stdout)
    expected = real[str(script)]
    done = cli("run", str(script))
    assert _masked(done.stdout) == _masked(expected["stdout"])
    assert done.exit_code == expected["status"]
    assert done.stderr.splitlines()[-1:] == expected["stderr"].splitlines()[-1:]


@pytest.mark.parametrize(
    "program, message",
    [
        (
            "class Net(torch.nn.Module):\n    def __getattribute__(self, name):\n        pass",
            "gradcli run does not honour __getattribute__ in a class",
        ),
        ("while True:\n    pass", "the script ran more than"),
        ("def f(x):\n    return f(x)\ny = f(torch.ones(2))", "the script's calls nest more"),
        ("x = torch.ones(2, dtype=torch.float16)", "gradcli has no torch.float16 yet"),
        ("x = torch.ones(2)\nx.__dict__", "attributes whose names start with '__'"),
        ("import os", "gradcli reads PyTorch code: it does not import 'os'"),
        ("import scipy", "it does not import 'scipy'"),
        ("layer = torch.nn.PixelShuffle(2)", "gradcli has no torch.nn.PixelShuffle yet"),
        ("print('a'", "Python cannot parse the script"),
        ("x = torch.ones(2)\ny = x.sum(axes=0)", "gradcli's sum takes no argument 'axes'"),
        ("print(' ' * 10**10)", "str * 10,000,000,000 would have"),
        ("x = 10 ** 10 ** 10", "10 ** 10000000000 would be an integer"),
        ("async def f():\n    pass", "gradcli run does not take async functions yet"),
    ],
)
def test_what_gradcli_run_does_not_take_is_refused(cli, program, message):
    done = cli("run", "-", "--max-steps", "100000", input=program)
    assert done.exit_code == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "program, last_line",
    [
        ("print(1)\nprint(q)", "NameError: name 'q' is not defined"),
        (
            "x = torch.ones(3, requires_grad=True)\nx[0] = 2.",
            "RuntimeError: a view of a leaf Variable that requires grad is being used in an "
            "in-place operation.",
        ),
        (
            "x = torch.ones(3, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()",
            "RuntimeError: Trying to backward through the graph a second time (or directly "
            "access saved tensors after they have already been freed).",
        ),
        ("x = torch.ones(3)\ny = x.sum()\ny.backward()", "RuntimeError: element 0 of tensors"),
        ("x = torch.ones(3)\nx.sum().item()\nx.item()", "RuntimeError: a Tensor with 3 elements"),
        ("x = torch.ones(2)\nx.retain_grad()", "RuntimeError: can't retain_grad on Tensor that"),
        (
            "x = torch.ones(2)\nprint(f'{x:.2f}')",
            "TypeError: unsupported format string passed to Tensor.__format__",
        ),
        (
            "x = torch.ones(2)\nprint(f'{x.shape:>3}')",
            "TypeError: unsupported format string passed to torch.Size.__format__",
        ),
        ("x = torch.ones(2)\nprint(f'{x.sum().item():q}')", "ValueError: Unknown format code"),
        (
            "x = torch.ones(2, requires_grad=True)\nprint(f'{x.grad:>5}')",
            "TypeError: unsupported format string passed to NoneType.__format__",
        ),
        (
            "x = torch.ones(2)\nprint(f'{x.tolist():>5}')",
            "TypeError: unsupported format string passed to list.__format__",
        ),
        (
            "x = torch.ones(2, requires_grad=True)\n(x * 2).backward()",
            "RuntimeError: grad can be implicitly created only for scalar outputs",
        ),
    ],
)
def test_torchs_errors_stop_the_script_with_exit_1(cli, program, last_line):
    done = cli("run", "-", input=program)
    assert done.exit_code == 1
    assert done.stderr.startswith('Traceback (most recent call last):\n  File "<stdin>", line')
    assert done.stderr.splitlines()[-1].startswith(last_line)


def test_aliases_follow_a_write_and_no_grad_writes_keep_the_leaf(cli):
    program = (
        "y = torch.zeros(3)\na = y\ny[1] = 2.\nprint(a)\n"
        "w = torch.ones(2, requires_grad=True)\ns = (w * w).sum()\ns.backward()\n"
        "with torch.no_grad():\n    w[0] = 5.\nprint(w, w.grad)\n"
    )
    done = cli("run", "-", input=program)
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tensor([0., 2., 0.])",
        "tensor([5., 1.], requires_grad=True) tensor([2., 2.])",
    ]


def test_the_run_pages_examples_show_what_gradcli_run_prints(cli):
    """The two ``gradcli run`` blocks of docs/commands/run.md, run for real."""
    tour = (REPO / "docs" / "commands" / "run.md").read_text()
    blocks = [b.split("```", 1)[0] for b in tour.split("```\n$ gradcli run ")[1:]]
    assert len(blocks) == 2
    for block in blocks:
        argument, rest = block.split("\n", 1)
        if argument == "- <<'EOF'":
            script, shown = rest.split("EOF\n", 1)
            done = cli("run", "-", input=script)
        else:
            done = cli("run", argument)
            shown = rest
        assert done.exit_code == 0
        assert done.stdout + done.stderr == shown


def test_a_missing_script_is_named(cli):
    done = cli("run", "no_such_script.py")
    assert done.exit_code == 2
    assert "gradcli run: no such file: no_such_script.py" in done.stderr


_GRAD_ERRORS = {
    "scalar": "y = x * 2\ntorch.autograd.grad(y, x)",
    "input without grad": "a = torch.ones(2)\ny = (x * a).sum()\ntorch.autograd.grad(y, [x, a])",
    "unused": "u = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n"
    "torch.autograd.grad(y, [x, u])",
    "freed": "y = (x * 2).sum()\ng = torch.autograd.grad(y, x)\ntorch.autograd.grad(y, x)",
    "shape": "y = x * 2\ntorch.autograd.grad(y, x, torch.ones(3))",
    "count": "y = x * 2\ntorch.autograd.grad([y, y], x, torch.ones(2))",
    "unpack": "y = (x * 2).sum()\na, b = torch.autograd.grad(y, x)",
    "unpack one": "u = torch.ones(2, requires_grad=True)\ny = (x * u).sum()\n"
    "a, = torch.autograd.grad(y, [x, u])",
    "item": "y = (x * 2).sum()\na = torch.autograd.grad(y, x)[1]",
    "item later": "y = (x * 2).sum()\ng = torch.autograd.grad(y, x)\nprint(g[0])\nprint(g[3])",
    "output without grad": "a = torch.ones(2)\ntorch.autograd.grad(a.sum(), x)",
    "in place on a leaf": "y = x * 2\ny += 1\nprint(y)\nx += 1",
    "in-place method on a leaf": "x.mul_(2)",
    "zero_ on a leaf": "x.zero_()",
    "hessian of a vector": "def f(t):\n    return t * 2\ntorch.autograd.functional.hessian(f, x)",
    "vjp without v": "def f(t):\n    return t * 2\ntorch.autograd.functional.vjp(f, x)",
    "jvp without v": "f = lambda t: t * 2\ntorch.autograd.functional.jvp(f, x)",
    "func.grad of a vector": "torch.func.grad(lambda t: t * 2)(x)",
}


@pytest.mark.torch
@pytest.mark.parametrize("name", _GRAD_ERRORS)
def test_torch_autograd_grads_errors_are_torchs(cli, name, tmp_path):
    """What torch.autograd.grad (and an in-place operation) refuses, checked as torch checks
    it, in its words: against
    ``python -`` with torch, running the same script."""
    script = tmp_path / "script.py"
    script.write_text(
        "import torch\nx = torch.ones(2, requires_grad=True)\n" + _GRAD_ERRORS[name] + "\n"
    )
    real = _real_python(script, stdin=True)
    done = cli("run", "-", input=script.read_text())
    assert done.exit_code == real.returncode == 1
    assert done.stdout == real.stdout
    assert done.stderr.splitlines()[-1] == real.stderr.splitlines()[-1]


def test_manual_seed_repeats_what_rand_draws_and_seeds_differ(cli):
    """torch.manual_seed(n) starts the generator again: the same seed draws the same
    numbers, another seed other numbers, and each statement (each loop iteration) draws anew.
    Each bare torch.manual_seed line shows the generator, as the interactive interpreter does."""
    program = (
        "torch.manual_seed(3)\na = torch.rand(4)\nb = torch.randn_like(a)\n"
        "torch.manual_seed(3)\nc = torch.rand(4)\nd = torch.randn_like(a)\n"
        "torch.manual_seed(4)\ng = torch.rand(4)\n"
        "for i in range(2):\n    f = torch.rand(4)\n    print(f)\n"
        "print(a, b)\nprint(c, d)\nprint(g)\n"
    )
    lines = cli("run", "-", input=program).stdout.splitlines()
    assert all(line.startswith("<torch._C.Generator object at 0x") for line in lines[:3])
    loop, (ab, cd, g) = lines[3:5], lines[5:]
    assert ab == cd and ab.split(") ")[0] + ")" != g
    assert loop[0] != loop[1] and g not in loop
