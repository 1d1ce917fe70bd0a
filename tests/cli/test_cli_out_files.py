"""``--out`` written atomically and never over an input: whole or not at all, through a
symlink, into a FIFO, and never a partial file after SIGKILL (issue 16's cases).
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from command_fixtures import REPO

from gradcli.batch import out as batch_out

# -- --out ------------------------------------------------------------------------------------


@pytest.fixture
def points(tmp_path) -> Path:
    path = tmp_path / "points.npy"
    np.save(path, np.arange(6.0).reshape(3, 2))
    return path


GRAD = ["grad", "-e", "y = sum(x*x)"]


@pytest.mark.parametrize("how", ["same", "symlink", "other path", "hard link", "an -i file"])
def test_out_naming_an_input_file_is_refused(cli, points, how):
    """On main --batch points.npy --out points.npy overwrote the points silently."""
    before = points.read_bytes()
    batch, out, extra = f"@{points}", str(points), []
    if how == "symlink":
        link = points.with_name("link.npy")
        link.symlink_to(points)
        out = str(link)
    elif how == "other path":
        (points.parent / "sub").mkdir()
        out = str(points.parent / "sub" / ".." / points.name)
    elif how == "hard link":
        linked = points.with_name("hard.npy")
        os.link(points, linked)
        out = str(linked)
    elif how == "an -i file":
        other = points.with_name("other.npy")
        np.save(other, np.ones((3, 2)))
        batch, extra = (
            f"@{other}",
            ["-e", "y = sum(x*x*W)", "-i", f"W=@{points.with_name('w.npy')}"],
        )
        np.save(points.with_name("w.npy"), np.ones(2))
        out = str(points.with_name("w.npy"))
        before = Path(out).read_bytes()
    command = GRAD if how != "an -i file" else ["grad"]
    result = cli(*command, *extra, "--batch", batch, "--out", out)
    assert result.exit_code == 2, result.output
    assert "is one of the command's input files" in result.stderr
    assert "hint: give --out another file name" in result.stderr
    assert Path(out).read_bytes() == before


def test_out_is_written_whole_or_not_at_all(cli, points, monkeypatch):
    """A write that fails leaves the previous file as it was, and no temporary file."""
    out = points.with_name("grads.npy")
    out.write_bytes(b"previous")

    def full_disk(*args, **options):  # the writer's first bytes: the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch_out, "npy_header", full_disk)
    result = cli(*GRAD, "--batch", f"@{points}", "--out", str(out))
    assert result.exit_code == 2
    assert "--out" in result.stderr and "No space left on device" in result.stderr
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in points.parent.iterdir()) == ["grads.npy", "points.npy"]


def test_out_is_written_and_keeps_a_new_files_mode(cli, points):
    out = points.with_name("grads.npz")
    result = cli(*GRAD, "--batch", f"@{points}", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["grads.x"], 2 * np.arange(6.0).reshape(3, 2))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in points.parent.iterdir()) == ["grads.npz", "points.npy"]


SLOW_WRITE = """
import sys, time
from gradcli.base.files import atomic_output
with atomic_output(sys.argv[1]) as temporary:
    with open(temporary, "wb") as f:
        f.write(b"new, part 1;")
        f.flush()
        print("writing", flush=True)
        time.sleep(60)
        f.write(b"new, part 2")
"""


def test_sigkill_during_an_atomic_write_leaves_the_previous_file(tmp_path):
    out = tmp_path / "results.npy"
    out.write_bytes(b"previous")
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITE, str(out)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline() == "writing\n"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert out.read_bytes() == b"previous"
    leftovers = [p.name for p in tmp_path.iterdir() if p != out]
    assert all(n.startswith(".gradcli-") and ".tmp" in n for n in leftovers), leftovers


# gradcli in a child whose --out writer writes its first chunk (a .npy whose header already
# holds every point's shape), says so on stderr, then stalls: a SIGKILL then lands
# inside the write of --out, every time
STALLING_GRADCLI = """
import sys, time
from gradcli.batch import out as batch
real = batch.OutFile.write
def stalling(self, chunk):
    real(self, chunk)
    for part in self.parts.values():
        part.file.flush()
    print("writing", file=sys.stderr, flush=True)
    time.sleep(120)
batch.OutFile.write = stalling
from gradcli.cli.app import main
sys.argv[0] = "gradcli"
main()
"""


@pytest.mark.parametrize("previous", [True, False], ids=["previous file", "no file"])
def test_sigkill_during_a_batch_out_write_never_leaves_a_partial_file(tmp_path, previous):
    """On main --out was written in place: a kill inside the write left a file of half the
    points that loads as if whole."""
    points = tmp_path / "points.npy"
    np.save(points, np.linspace(0, 1, 400).reshape(200, 2))
    out = tmp_path / "out.npy"
    if previous:
        out.write_bytes(b"previous")
    process = subprocess.Popen(
        [sys.executable, "-c", STALLING_GRADCLI, *GRAD, "--batch", f"@{points}", "--out", str(out)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr.readline() == "writing\n"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    if previous:
        assert out.read_bytes() == b"previous"
    else:
        assert not out.exists()
    leftovers = [p.name for p in tmp_path.iterdir() if p not in (out, points)]
    assert all(n.startswith(".gradcli-") for n in leftovers), leftovers


def test_out_through_a_symlink_replaces_its_target_and_keeps_the_link(cli, points):
    target = points.with_name("real.npy")
    target.write_bytes(b"previous")
    link = points.with_name("link.npy")
    link.symlink_to(target.name)
    result = cli(*GRAD, "--batch", f"@{points}", "--out", str(link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink()
    np.testing.assert_allclose(np.load(target), 2 * np.arange(6.0).reshape(3, 2))


def test_atomic_output_writes_a_fifo_in_place(tmp_path):
    import threading

    from gradcli.base.files import atomic_output

    fifo = tmp_path / "pipe.npy"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    with atomic_output(str(fifo)) as path:
        assert path == str(fifo)
        with open(path, "wb") as f:
            f.write(b"through the pipe")
    reader.join(timeout=30)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
