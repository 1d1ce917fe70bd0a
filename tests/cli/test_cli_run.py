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

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli.engine.shapes import MESHGRID_WARNING
from gradcli.script.compile import compile_script
from gradcli.script.execute import NONLEAF_GRAD, ScriptRun
from gradcli.script.steps import ScriptError

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "pytorch"
SCRIPTS = sorted(CORPUS.glob("*.py")) + sorted((CORPUS / "run").glob("*.py"))
ORACLE = Path(__file__).with_name("torch_interactive.py")


def _relative(script: Path) -> str:
    return str(script.relative_to(REPO))


def _drawn(script: Path) -> list:
    """The values gradcli's rand, randn, rand_like and randn_like give the script's
    statements, in order (as gradcli run makes them: float32 unless told otherwise)."""
    session = ScriptRun(str(script), None, out=io.StringIO(), err=io.StringIO())
    with contextlib.suppress(ScriptError):
        session.run(compile_script(script.read_text()))
    return [values.tolist() for values in session.drawn]


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
    assert _anywhere(done.stdout) == _anywhere(expected["stdout"])
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


@pytest.mark.parametrize(
    "program, message",
    [
        ("for i in [1, 2]:\n    print(i)", "gradcli run takes a loop over range(...) only"),
        ("n = 2.5\nfor i in range(n):\n    print(i)", "range(...) takes whole numbers"),
        ("for i in range(3):\n    print(i)\nelse:\n    pass", "without else"),
        ("for i in range(3):\n    break", "gradcli run does not take break yet"),
        ("for i in range(1000000):\n    print(i)", "the script's loops make 2000000 steps"),
        ("for i in range(3):\n    print(i * 2)", "this computes a Python number"),
        (
            "for i in range(200):\n    for j in range(200):\n        print(i)",
            "the script's loops make 80200 steps",
        ),
        ("def f(x):\n    return f(x)\ny = f(torch.ones(2))", "f calls functions more than 32"),
        ("def f(x):\n    print(x)\n    return x", "f: line 2 is not an assignment to a name"),
        ("def f(x):\n    y = x", "f: gradcli run takes a function that ends with return"),
        ("def f(x=1):\n    return x", "f: gradcli run takes a function's parameters as plain"),
        ("f = lambda x: x\nx = torch.ones(2)\ny = f(x, x)", "f() takes 1 arguments (x), and"),
        ("f = lambda x: x\nx = torch.ones(2)\ny = f(w=x)", "f() got an unexpected or repeated"),
        (
            "def f(x):\n    return x + x\ndef g(x):\n    return f(f(f(f(x))))\n"
            "def h(x):\n    return g(g(g(g(x))))\nx = torch.ones(2)\ny = h(h(x))",
            "the expression grows beyond 20000 parts",
        ),
        ("while True:\n    pass", "gradcli run does not take while loops yet"),
        ("with open('f') as f:\n    pass", "with blocks other than `with torch.no_grad():`"),
        ("x = torch.ones(2)\nx[0] += 1", "an in-place operator (+=, -=, *=, /=) takes a name"),
        ("x = torch.ones(2)\nx //= 2", "the in-place operators taken are"),
        ("x = torch.ones(2)\nx.add_(1, alpha=2)", "add_ takes one argument, and no keywords"),
        ("x = torch.ones(2)\n(x * 2).mul_(2)", "mul_ is called on a name here"),
        ("lr = 0.1\nlr *= 2", "lr is a Python number: gradcli run does not compute with"),
        ("x = torch.ones(3)\ny = x[0:2]\ny += 1", "gradcli run does not write into views yet"),
        ("import os", "gradcli reads PyTorch code: it does not import 'os'"),
        ("x = torch.ones(2, dtype=torch.float16)", "gradcli has no dtype 'torch.float16'"),
        ("x = torch.ones(2)\nprint(x.foo())", "foo"),
        ("x = torch.ones(3)\ny = x[0:2]\ny[0] = 5.", "gradcli run does not write into views yet"),
        ("print('a'", "Python cannot parse the script"),
        (
            "x = torch.ones(2)\ny = x + torch.ones(2, requires_grad=True)",
            "ones(..., requires_grad=True) makes an input: it must be the whole right-hand",
        ),
        ("x = torch.ones(2)\ny = torch.full_like(x)", "full_like is missing its argument"),
        ("torch.set_default_dtype(torch.int64)", "takes torch.float32 or torch.float64"),
        ("torch.manual_seed(1.5)", "torch.manual_seed takes a whole number"),
        ("x = torch.ones(2)\nw = 3\nprint(f'{x:{w}}')", "a format spec written out"),
        ("x = torch.ones(2)\n(x * 2).retain_grad()", "retain_grad() is called on a name"),
        ("x = torch.ones(2)\n(x * 2).backward(x * 2)", "the gradient given to backward must"),
    ],
)
def test_what_gradcli_run_does_not_take_is_refused_before_it_runs(cli, program, message):
    done = cli("run", "-", input=program)
    assert done.exit_code == 2, done.stdout
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


def test_a_script_run_again_is_read_from_the_parse_cache(cli, tmp_path, monkeypatch):
    from gradcli.lang.cache import entry_path, seal
    from gradcli.script.run import load_steps

    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(tmp_path))
    source = (CORPUS / "seed_first_example.py").read_text()
    first = cli("run", "-", input=source)
    entry = entry_path(source, "script")
    assert entry is not None
    data = json.loads(entry.read_text())["content"]
    assert data["source"] == source and load_steps(source) == compile_script(source)
    # an entry whose IR is not the parser's (an operation the language lacks) is made again,
    # even when its checksum holds
    data["steps"][2]["ir"] = ["call", "os.system", [], []]
    entry.write_text(json.dumps(seal(source, "script", data)))
    again = cli("run", "-", input=source)
    assert again.stdout == first.stdout and again.exit_code == 0
    assert json.loads(entry.read_text())["content"]["steps"][2]["ir"] != [
        "call",
        "os.system",
        [],
        [],
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


def test_a_computed_python_number_is_refused(cli):
    done = cli("run", "-", input="c = 2 * 3")
    assert done.exit_code == 2
    assert "this computes a Python number, which gradcli run does not do yet" in done.stderr


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


@pytest.mark.parametrize(
    "program, message",
    [
        ("g = torch.autograd.grad(y)", "torch.autograd.grad needs inputs"),
        ("g = torch.autograd.grad(y, x * 2)", "the inputs of torch.autograd.grad must be names"),
        ("g = torch.autograd.grad(y, x, create_graph=c)", "create_graph of torch.autograd"),
        ("g = torch.autograd.grad(y, x, foo=1)", "not 'foo'"),
        ("_g = torch.autograd.grad(y, x)", "names may not start with '_'"),
        ("g = torch.autograd.grad(y, x)[i]", "taken by a whole number"),
        ("y = (x * x).sum()\ng = torch.autograd.grad(y, x)\nh = g * 2", "g is a tuple"),
        ("J = torch.autograd.functional.jacobian(q, x)", "the function handed on must be"),
        ("J = torch.autograd.functional.jacobian(lambda a, b: a * b, x)", "takes 2 arguments"),
        (
            "J = torch.autograd.functional.jacobian(lambda t: t, x, create_graph=True)",
            "create_graph and strict left False",
        ),
        ("g = torch.func.grad(lambda t: t.sum(), argnums=(0,))(x)", "argnums=<whole number>"),
        ("g = torch.func.grad(lambda t: t.sum(), argnums=1)(x)", "argnums=1 of torch.func.grad"),
    ],
)
def test_torch_autograd_grad_written_as_gradcli_does_not_take_it(cli, program, message):
    script = "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\n" + program
    done = cli("run", "-", input=script)
    assert done.exit_code == 2, done.stdout
    assert message in done.stderr
    assert "Traceback" not in done.stderr


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
    shown = cli("run", "-", input=program).stdout.splitlines()
    lines = [line for line in shown if not line.startswith("<torch._C.Generator object at 0x")]
    assert len(shown) - len(lines) == 3
    loop, (ab, cd, g) = lines[:2], lines[2:]
    assert ab == cd and ab.split(") ")[0] + ")" != g
    assert loop[0] != loop[1] and g not in loop


def test_f_strings_are_read_back_from_the_parse_cache(cli, tmp_path, monkeypatch):
    from gradcli.script.run import load_steps

    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(tmp_path))
    source = (CORPUS / "run" / "retain_and_fstrings.py").read_text()
    first = cli("run", "-", input=source)
    assert load_steps(source) == compile_script(source)
    again = cli("run", "-", input=source)
    assert again.stdout == first.stdout and again.exit_code == first.exit_code == 0
