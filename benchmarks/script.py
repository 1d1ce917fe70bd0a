"""``gradcli run`` against ``python`` with torch on the same PyTorch script.

Three scripts, written here (not taken from anywhere):

``training loop``
    a cubic fitted to sin(x) on 2,000 points by plain gradient descent, 2,000 steps (500 with
    ``--quick``), in the
    form of the PyTorch tutorials' first autograd example: the forward pass, ``backward()``,
    an update under ``torch.no_grad()`` and the gradients set to None, a loss printed every
    100 steps, the coefficients at the end.
``nn training``
    the PyTorch tutorials' two-layer network (64 samples of 1,000 features, 100 hidden units,
    10 outputs) as ``nn.Sequential(Linear, ReLU, Linear)``, trained with ``optim.SGD`` and
    ``MSELoss`` for 500 steps (100 with ``--quick``), a loss printed every 100 steps.
``straight script``
    1,000 statements ``h = torch.sin(h) * 1.01 + 0.1`` on a 4-element tensor, then
    ``backward()`` of their sum and the gradient printed.

Rows: each script as a whole process under ``gradcli run`` and under ``python`` with torch,
and each tool's floor (``gradcli run`` of a script that only imports torch; ``python -c
"import torch"``), so that a note can give the time without imports (a run's median less its
floor's). Both must print the same lines (numbers to ``rtol`` 1e-4: float32 sums may add in
another order) before anything is timed; a script gradcli refuses is named in the notes and
not timed. Ratios are to python with torch; CPU time, as everywhere in these benchmarks.
With ``--quick``: the training loop alone, without the floors, in 3 rounds, a process over
half a second of CPU (torch's) measured once, by the run that checked its output.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .harness import (
    PROCESS_FULL,
    PROCESS_QUICK,
    Result,
    add_ratios,
    command,
    cpu_times,
    first_calls,
    python_script,
    quick_skip,
    results_of,
    with_bytecode,
)

TITLE = (
    "`gradcli run` vs python with torch: a tutorial's training loop, nn and optim, "
    "a 1,000-statement script"
)

SUITE = "script"
TORCH = "python + torch"
GRADCLI = "gradcli run"
TORCH_FLOOR = "python -c 'import torch'"
GRADCLI_FLOOR = "gradcli run (import torch only)"
RTOL = 1e-4

LOOP = """import math
import torch

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
a = torch.tensor(0.1, requires_grad=True)
b = torch.tensor(-0.2, requires_grad=True)
c = torch.tensor(0.05, requires_grad=True)
d = torch.tensor(0.3, requires_grad=True)
rate = 1e-6
for step in range({steps}):
    guess = a + b * x + c * x ** 2 + d * x ** 3
    loss = (guess - y).pow(2).sum()
    if step % 100 == 99:
        print(step, loss.item())
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= rate * p.grad
            p.grad = None
print(f"y = {{a.item()}} + {{b.item()}} x + {{c.item()}} x^2 + {{d.item()}} x^3")
"""


NN_LOOP = """import torch

_ = torch.manual_seed(0)
x = torch.randn(64, 1000)
y = torch.randn(64, 10)
model = torch.nn.Sequential(
    torch.nn.Linear(1000, 100), torch.nn.ReLU(), torch.nn.Linear(100, 10)
)
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
for step in range({steps}):
    loss = loss_fn(model(x), y)
    if step % 100 == 99:
        print(step, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def straight(statements: int) -> str:
    """A script of ``statements`` steps of a chain on 4 elements, then its gradient."""
    steps = "h = torch.sin(h) * 1.01 + 0.1\n" * statements
    return (
        "import torch\n"
        "x = torch.tensor([0.5, -1.0, 2.0, 0.25], requires_grad=True)\n"
        f"h = x\n{steps}"
        "y = h.sum()\n"
        "y.backward()\n"
        "print(y.item())\n"
        "print(x.grad)\n"
    )


NOTES: list[str] = []
_NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def _same(got: str, want: str) -> bool:
    """The same lines, their numbers equal to ``RTOL``."""
    a, b = got.strip().splitlines(), want.strip().splitlines()
    if len(a) != len(b):
        return False
    for line_a, line_b in zip(a, b, strict=True):
        if _NUMBER.sub("#", line_a) != _NUMBER.sub("#", line_b):
            return False
        for x, y in zip(_NUMBER.findall(line_a), _NUMBER.findall(line_b), strict=True):
            if abs(float(x) - float(y)) > RTOL * max(abs(float(y)), 1e-12):
                return False
    return True


def _refusal(runs: dict[str, Callable[[], str]]) -> tuple[str | None, dict[str, float]]:
    """Why ``gradcli run`` (``runs[GRADCLI]``) does not run the script as torch does
    (``runs[TORCH]``; None: it does), and the CPU seconds of those two runs."""
    try:
        ours, first = first_calls({GRADCLI: runs[GRADCLI]})
    except RuntimeError as error:
        return str(error).splitlines()[-1][-200:], {}
    theirs, torch_first = first_calls({TORCH: runs[TORCH]})
    same = _same(ours[GRADCLI], theirs[TORCH])
    return (None if same else "prints other numbers than torch"), {**first, **torch_first}


def run(quick: bool = False) -> list[Result]:
    """Check, then time each script under both tools, with their floors."""
    root = Path(tempfile.mkdtemp(prefix="gradcli-bench-script-"))
    results: list[Result] = []
    NOTES.clear()
    try:
        env = {**with_bytecode(), "GRADCLI_CACHE_DIR": str(root / "cache")}
        gradcli = python_script("gradcli")
        (root / "floor.py").write_text("import torch\n")
        scripts = {
            "training loop": LOOP.format(steps=500 if quick else 2000),
            "nn training": NN_LOOP.format(steps=100 if quick else 500),
            "straight script": straight(1000),
        }
        if quick:  # each script is a torch process and a gradcli one; the first is enough
            left_out = list(scripts)[1:]
            quick_skip(SUITE, f"the scripts {' and '.join(left_out)} (a torch process each)")
            quick_skip(SUITE, "the floors (torch's import alone, 2.5 s) and the times without them")
            scripts = {name: text for name, text in scripts.items() if name not in left_out}
        floors = {
            TORCH_FLOOR: command([sys.executable, "-c", "import torch"]),
            GRADCLI_FLOOR: command([gradcli, "run", root / "floor.py"], env=env),
        }
        timing = PROCESS_QUICK if quick else PROCESS_FULL
        floors[GRADCLI_FLOOR]()  # writes the bytecode of gradcli run, which every run reads
        if quick:
            floors.clear()
        for name, text in scripts.items():
            path = root / f"{name.replace(' ', '_')}.py"
            path.write_text(text)
            runs = {
                TORCH: command([sys.executable, path]),
                GRADCLI: command([gradcli, "run", path], env=env),
                **floors,
            }
            why, first = _refusal(runs)
            if why is not None:
                NOTES.append(f"script.{name}: not timed: gradcli run does not match torch ({why})")
                continue
            times = cpu_times(runs, timing, first, runs)
            rows = add_ratios(results_of(SUITE, name, times, TORCH), "", {})
            results += rows
            if not floors:
                continue
            own = times[GRADCLI].median - times[GRADCLI_FLOOR].median
            torch_own = times[TORCH].median - times[TORCH_FLOOR].median
            NOTES.append(
                f"script.{name}: without imports, gradcli run {own * 1e3:.0f} ms, python + torch "
                f"{torch_own * 1e3:.0f} ms ({own / torch_own:.2f}x)"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results
