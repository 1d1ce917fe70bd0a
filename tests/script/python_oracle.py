"""What Python's interactive interpreter prints for our own test programs, and what ``gradcli
run``'s interpreter prints for them: the oracle of tests/script's tests of the interpreter.

``python_run`` runs one of our own test programs (never user text) as the interactive
interpreter does, each top-level statement compiled in 'single' mode; ``torch_runs`` runs
several with torch, in a subprocess (``tests/cli/torch_interactive.py``); ``gradcli_run`` runs
one through gradcli's interpreter. Each gives (stdout, exit status, the exception's line).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import subprocess
import sys
import traceback
from pathlib import Path

from gradcli.script.python.interpreter import run_script

REPO = Path(__file__).resolve().parents[2]
TORCH_INTERACTIVE = REPO / "tests" / "cli" / "torch_interactive.py"

Outcome = tuple[str, int, str]


def python_run(program: str) -> Outcome:
    """Our own ``program`` in Python's interactive mode (test tooling, not user text)."""
    out = io.StringIO()
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(out):
        for statement in ast.parse(program).body:
            code = compile(ast.Interactive([statement]), "<stdin>", "single")
            try:
                exec(code, namespace)  # our own test program
            except Exception as exc:  # noqa: BLE001 - the program's exception is the outcome
                line = traceback.format_exception_only(type(exc), exc)[-1].strip()
                return out.getvalue(), 1, line
    return out.getvalue(), 0, ""


def masked(outcome: Outcome) -> Outcome:
    """An outcome with its objects' addresses masked (``<... object at 0x…>``)."""
    stdout, status, line = outcome
    return re.sub(r"0x[0-9a-f]+", "0x…", stdout), status, line


def gradcli_run(program: str, **limits: int) -> Outcome:
    """``program`` through gradcli run's interpreter."""
    out, err = io.StringIO(), io.StringIO()
    status = run_script(program, "<stdin>", out=out, err=err, **limits)
    lines = err.getvalue().strip().splitlines()
    return out.getvalue(), status, lines[-1] if status and lines else ""


def torch_runs(programs: list[str], folder: Path) -> dict[str, Outcome]:
    """Each of ``programs`` (our own) run with torch in Python's interactive mode."""
    jobs = []
    for k, program in enumerate(programs):
        script = folder / f"program_{k}.py"
        script.write_text(program)
        jobs.append([str(script), []])
    listed = folder / "jobs.json"
    listed.write_text(json.dumps(jobs))
    done = subprocess.run(
        [sys.executable, str(TORCH_INTERACTIVE), str(listed)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    outcomes = {}
    for program, (script, _) in zip(programs, jobs):
        record = found[script]
        lines = record["stderr"].strip().splitlines()
        outcomes[program] = (
            record["stdout"],
            record["status"],
            lines[-1] if record["status"] else "",
        )
    return outcomes
