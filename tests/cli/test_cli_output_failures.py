"""Output failures said plainly: a full device, a closed stdout and an encoding that cannot
show a name are one plain line and exit 74 (issue 16's cases).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from command_fixtures import GRADCLI, REPO, run

# -- output failures ------------------------------------------------------------------------------

ARGS = ["eval", "-e", "y = x*2", "--x", "3"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize(
    "args, name",
    [
        (["export", "--to", "torch", "-e", "y = x*2", "--x", "1,2"], "e.py"),
        (["jacobian", "-e", "y = x*2", "--x", "1,2"], "J.npy"),
    ],
    ids=["export", "jacobian"],
)
def test_an_out_file_on_a_full_device_is_a_plain_error(tmp_path, args, name):
    """--out through a link to /dev/full: written in place (nothing can be renamed onto a
    device), and its failure is the user's error, exit 2 (it was an internal error, 70)."""
    (tmp_path / name).symlink_to("/dev/full")
    result = run([*args, "--out", str(tmp_path / name)])
    assert result.returncode == 2, result.stderr
    assert "cannot write: No space left on device" in result.stderr
    assert "internal" not in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_full_disk_is_one_plain_line_and_exit_74(fmt):
    """On main: internal error: OSError ..., exit 70."""
    with open("/dev/full", "w") as full:
        result = run([*ARGS, "--format", fmt], stdout=full)
    assert result.returncode == 74
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "No space left on device" in lines[0] and "internal" not in lines[0]


def test_a_closed_stdout_is_one_plain_line_and_exit_74():
    """On main: internal error: AttributeError: 'NoneType' object has no attribute ..."""
    result = subprocess.run(
        GRADCLI + ARGS,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        # close fd 1 in the child before Python starts
        preexec_fn=lambda: os.close(1),
        timeout=120,
    )
    assert result.returncode == 74
    assert result.stderr == "error: cannot write the output: stdout is closed\n"


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_an_encoding_that_cannot_show_a_name_is_one_plain_line_and_exit_74(fmt):
    result = run(
        ["eval", "-e", "y = xé*2", "-i", "xé=3,4", "--format", fmt],
        env={"PYTHONIOENCODING": "ascii"},
    )
    if fmt == "json":  # JSON escapes what is not ASCII: nothing to refuse
        assert result.returncode == 0 and json.loads(result.stdout)["values"]["y"] == [6, 8]
        return
    assert result.returncode == 74, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: cannot write the output: stdout's encoding (ascii)")
    assert "U+00E9" in line and "PYTHONIOENCODING=utf-8" in line


def test_an_ascii_locale_still_shows_ascii_output():
    result = run([*ARGS, "--format", "table"], env={"PYTHONIOENCODING": "ascii", "LANG": "C"})
    assert result.returncode == 0 and "| y |     6 |" in result.stdout
