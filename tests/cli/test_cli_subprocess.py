"""The installed console script and ``python -m gradcli``, as real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gradcli

REPO = Path(__file__).resolve().parents[2]


def console_script() -> list[str]:
    """``gradcli`` on PATH, else next to this interpreter, else ``python -m gradcli``."""
    found = shutil.which("gradcli")
    if found is None:
        beside = Path(sys.executable).with_name("gradcli")
        found = str(beside) if beside.exists() else None
    return [found] if found else [sys.executable, "-m", "gradcli"]


def run(command: list[str], tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "GRADCLI_CACHE_DIR": str(tmp_path / "cache"), "PYTHONIOENCODING": "utf-8"}
    for name in ("FORCE_COLOR", "COLUMNS", "TTY_COMPATIBLE"):
        env.pop(name, None)
    return subprocess.run(
        command, capture_output=True, text=True, encoding="utf-8", cwd=REPO, env=env, timeout=120
    )


def test_console_script_computes_the_readme_example(tmp_path):
    result = run(
        [
            *console_script(),
            "vjp",
            "--expr",
            "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1",
            "--x",
            "1,2",
            "--v",
            "1,1,1",
            "--format",
            "json",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["grads"]["x"] == [4.0, 23.0]
    assert result.stderr == ""


def test_console_script_prints_a_plain_table_and_fails_with_exit_2(tmp_path):
    table = run([*console_script(), "grad", "-f", "samples/first_example.gc"], tmp_path)
    assert table.returncode == 0, table.stderr
    assert "│ [0] │ 4.5 │ 4.5 │" in table.stdout
    assert "\x1b[" not in table.stdout, "a pipe is not a terminal: no colour"

    bad = run([*console_script(), "grad", "-e", "y = sine(x)", "--x", "1"], tmp_path)
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert "unknown function 'sine'" in bad.stderr and "did you mean 'sin'?" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_python_m_gradcli_version(tmp_path):
    result = run([sys.executable, "-m", "gradcli", "--version"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"gradcli {gradcli.__version__}"
