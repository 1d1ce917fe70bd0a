"""The README opens with the two set-up commands, and they stay true."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands():
    assert (REPO / "README.md").read_text().startswith("# gradcli\n\n```sh\n")
    install_and_run, install_and_test = _setup_commands()
    assert install_and_run.startswith("pip install -e . && gradcli ")
    assert install_and_test == "pip install -e '.[test]' && python -m pytest"


def test_ci_runs_the_readme_test_command():
    assert _setup_commands()[1] in (REPO / ".ci" / "run").read_text().splitlines()


def test_the_main_job_prints_the_seed_answer():
    """The gradcli part of the first command, run for real, gives x.grad = [4, 23]."""
    command = _setup_commands()[0].split(" && ", 1)[1]
    args = shlex.split(command)[1:] + ["--format", "json", "--no-cache"]
    done = subprocess.run(
        [sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["grads"]["x"] == [4.0, 23.0]


def test_the_function_reference_is_the_op_tables():
    sys.path.insert(0, str(REPO / "docs"))
    try:
        from write_reference import with_reference
    finally:
        sys.path.pop(0)
    text = (REPO / "README.md").read_text()
    assert text == with_reference(text), "run: python docs/write_reference.py"
