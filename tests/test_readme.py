"""The README opens with the two set-up commands, and they stay true; the pages of docs/ hold
the reference the README points to (the function reference, the batch and several-outputs
examples), checked here as they were in the README; tests/test_examples.py runs every example."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from doc_examples import same as _same

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


def _installs(lines: list[str]) -> list[int]:
    """The lines of a shell script that install a package (pip's own upgrade aside)."""
    commands = [(i, line) for i, line in enumerate(lines) if not line.lstrip().startswith("#")]
    return [i for i, line in commands if "install" in line and "--upgrade pip" not in line]


def test_ci_runs_the_readme_test_command_before_it_installs_torch_or_an_extra():
    """CI runs the README's test command as a newcomer would, in a venv holding only what it
    installs: no install (torch, the extras, the linters) comes before it in .ci/run, and
    those go into another venv, by .ci/with-torch, which .ci/run starts beside it."""
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    readme = lines.index(_setup_commands()[1])
    assert _installs(lines) == [readme]
    assert "source .ci/venv/bin/activate" in lines[:readme]
    assert "setsid bash .ci/with-torch >.ci/with-torch.log 2>&1 &" in lines
    second = (REPO / ".ci" / "with-torch").read_text().splitlines()
    assert "source .ci/venv-all/bin/activate" in second
    assert "source .ci/venv/bin/activate" not in second
    assert any("torch==2.13.0" in second[i] and "all" in second[i] for i in _installs(second))


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
    text = (REPO / "docs" / "language.md").read_text()
    assert text == with_reference(text), "run: python docs/write_reference.py"


def _batch_examples() -> list[tuple[list[str], list[str]]]:
    """docs/batch.md's batch-mode examples at its three points: (arguments, printed lines)."""
    text = (REPO / "docs" / "batch.md").read_text()
    section = text.split("**Batch mode.**", 1)[1].split("**Big batches.**", 1)[0]
    examples = []
    for block in section.split("```\n")[1::2]:
        lines = block.splitlines()
        commands = [i for i, line in enumerate(lines) if line.startswith("$ ")]
        for start, end in zip(commands, [*commands[1:], len(lines)]):
            if lines[start].startswith("$ gradcli "):
                examples.append((shlex.split(lines[start][2:])[1:], lines[start + 1 : end]))
    return examples


def test_the_batch_examples_print_what_their_page_shows(tmp_path):
    import numpy

    numpy.save(tmp_path / "points.npy", numpy.array([[1, 2], [0, 1], [3, -1]]))
    examples = _batch_examples()
    commands = {args[0] for args, _ in examples}
    assert {"vjp", "jacobian", "check"} <= commands
    for args, shown in examples:
        if "--dask" in args:
            continue  # the Dask section's own tests start clusters
        done = subprocess.run(
            [sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, cwd=tmp_path
        )
        said = [line for line in shown if not line.startswith("{")]
        lines = [json.loads(line) for line in shown if line.startswith("{")]
        assert done.returncode == (1 if said and said[0].startswith("check:") else 0), done.stderr
        got = [json.loads(line) for line in done.stdout.splitlines()]
        assert _same(got, lines), (args, done.stdout)
        assert done.stderr.splitlines() == said


def test_the_several_outputs_examples_print_what_their_page_shows():
    """Each example of docs/several-outputs.md, run for real: its JSON line (floats to 1e-6),
    or its table's lines as shown, in order, where "..." stands for lines left out."""
    section = (REPO / "docs" / "several-outputs.md").read_text()
    (block,) = section.split("```\n")[1::2]
    lines = block.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("$ gradcli ")]
    assert len(starts) == 5
    for start, end in zip(starts, [*starts[1:], len(lines)]):
        args = shlex.split(lines[start][2:])[1:]
        done = subprocess.run(
            [sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, cwd=REPO
        )
        assert done.returncode == 0, done.stderr
        shown = lines[start + 1 : end]
        if shown[0].startswith("{"):
            assert _same(json.loads(done.stdout), json.loads(shown[0])), (args, done.stdout)
            continue
        printed, k, skipping = done.stdout.splitlines(), 0, False
        for line in shown:  # the next line printed, or after "..." a later one
            if line == "...":
                skipping = True
                continue
            assert line in printed[k:], (line, done.stdout)
            if skipping:
                k = printed.index(line, k)
            assert printed[k] == line, (line, done.stdout)
            k, skipping = k + 1, False
