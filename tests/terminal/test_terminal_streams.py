"""Output that is never lost: batches run from a terminal, closed pipes, Ctrl-C.

These run the installed gradcli as a real process, as a person's shell would: stdout to a
file or a pipe, stderr on a pseudo-terminal (where the progress bar draws), and SIGINT sent
to the process group as Ctrl-C sends it.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from .screen import REPO, gradcli_command, run_in_terminal


@pytest.fixture
def many_points(tmp_path):
    path = tmp_path / "points.npy"
    np.save(path, np.arange(20_000.0))
    return path


def test_a_batch_run_from_a_terminal_writes_every_line_to_stdout(many_points, tmp_path):
    """The progress bar draws on the terminal's stderr and never captures the results."""
    out = tmp_path / "out.jsonl"
    args = ["eval", "-e", "y = x**2", "--x", "1", "--batch", f"@{many_points}"]
    with open(out, "w") as stdout:
        screen = run_in_terminal(args + ["--format", "json"], 80, stdout=stdout)
    assert screen.status == 0, screen.text
    lines = out.read_text().splitlines()
    assert len(lines) == 20_000
    assert json.loads(lines[-1]) == {"point": 19_999, "values": {"y": 19_999.0**2}}
    assert "point" not in screen.text, "no result reached the terminal"


def test_batch_points_give_the_inputs_their_shape_without_x(tmp_path):
    points = tmp_path / "points.npy"
    np.save(points, np.array([[1.0, 2.0], [3.0, 4.0]]))
    done = subprocess.run(
        gradcli_command() + ["grad", "-e", "y = sum(x**2)", "--batch", f"@{points}"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    grads = [json.loads(line)["grads"]["x"] for line in done.stdout.splitlines()]
    assert grads == [[2.0, 4.0], [6.0, 8.0]]


def test_ctrl_c_during_a_batch_keeps_complete_lines_and_says_how_many(tmp_path):
    points = tmp_path / "points.npy"
    np.save(points, np.arange(3_000_000.0))
    out = tmp_path / "out.jsonl"
    # 64 elements a point (about 10 s in all on a quiet machine): a batch of scalars was over
    # before the Ctrl-C once chunks were read and written faster
    program = "y = sum(cumsum(x * ones(64), 0) ** 2)"
    args = ["grad", "-e", program, "--x", "1", "--batch", f"@{points}"]
    with open(out, "w") as stdout:
        # Ctrl-C once the first results have been written (the bar shows on stderr by then), and
        # no sooner than 2.5 s, when the bar has drawn
        written = lambda: out.stat().st_size > 0  # noqa: E731
        screen = run_in_terminal(
            args, 80, stdout=stdout, interrupt_after=2.5, interrupt_once=written
        )
    assert screen.status == 130, screen.text
    text = out.read_text()
    assert text.endswith("\n"), "the output ends with a whole line"
    lines = text.splitlines()
    assert 0 < len(lines) < 3_000_000
    assert [json.loads(line)["point"] for line in lines[-3:]] == list(
        range(len(lines) - 3, len(lines))
    )
    said = [line for line in screen.lines if line.strip()]
    assert said == [f"interrupted: wrote {len(lines)} of 3000000 points"]


def _closed_pipe(args: list[str]) -> tuple[int, str, str]:
    """Run gradcli into a pipe whose reader stops after the first line, like ``| head -1``."""
    process = subprocess.Popen(
        gradcli_command() + args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    first = process.stdout.readline().decode()
    process.stdout.close()
    status = process.wait(timeout=120)
    return status, first, process.stderr.read().decode()


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "-e", "y = x*1.5", "--x", "arange(900)", "--format", "table"],
        ["eval", "-e", "y = x*1.5", "--x", "arange(20000)", "--format", "csv"],
    ],
    ids=["table", "csv"],
)
def test_a_closed_pipe_ends_gradcli_quietly(args):
    status, first, errors = _closed_pipe(args)
    assert first
    assert status in (0, -13, 141), errors  # -13: ended by SIGPIPE, 141 to a shell
    assert errors == ""


def test_a_closed_pipe_ends_a_batch_quietly(many_points):
    status, first, errors = _closed_pipe(
        ["eval", "-e", "y = x**2", "--x", "1", "--batch", f"@{many_points}"]
    )
    assert json.loads(first)["point"] == 0
    assert status in (0, -13, 141), errors
    assert errors == ""


def test_ctrl_c_during_a_jacobian_batch_keeps_complete_lines(tmp_path):
    """The commands whose batch replays a point with each basis vector stop as grad's does."""
    points = tmp_path / "points.npy"
    np.save(points, np.ones((400_000, 16)))
    out = tmp_path / "out.jsonl"
    args = ["jacobian", "-e", "y = cumsum(x, 0) ** 2", "--batch", f"@{points}"]
    with open(out, "w") as stdout:
        # once the first results are written (under load, 2.5 s can come before them)
        written = lambda: out.stat().st_size > 0  # noqa: E731
        screen = run_in_terminal(
            args, 80, stdout=stdout, interrupt_after=2.5, interrupt_once=written
        )
    assert screen.status == 130, screen.text
    text = out.read_text()
    assert text.endswith("\n"), "the output ends with a whole line"
    lines = text.splitlines()
    assert 0 < len(lines) < 400_000
    assert json.loads(lines[-1])["point"] == len(lines) - 1
    said = [line for line in screen.lines if line.strip()]
    assert said == [f"interrupted: wrote {len(lines)} of 400000 points"]


def test_a_closed_pipe_ends_a_hessian_batch_quietly(many_points):
    status, first, errors = _closed_pipe(
        ["hessian", "-e", "y = x**3", "--x", "1", "--batch", f"@{many_points}"]
    )
    assert json.loads(first)["hessian"]["x,x"] == 0.0
    assert status in (0, -13, 141), errors
    assert errors == ""
