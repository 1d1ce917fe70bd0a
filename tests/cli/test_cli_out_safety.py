"""--out never removes what gradcli did not write (a folder, a Zarr store, an input, the
working folder), in one process and with --dask; gradcli's own earlier --out is replaced; and
chunked points whose blocks would pass --max-memory are refused before a block is read."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest
from hostile import EXPANDING_STORES, HOSTILE_OUTPUTS

from gradcli.base.errors import GradcliError
from gradcli.base.files import MANIFEST
from gradcli.batch.stores.base import replace_folder

# every test here writes or reads Zarr stores and Parquet files (the optional extras): without
# them the module is skipped, and CI runs it with gradcli[all] installed
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zarr = pytest.importorskip("zarr")

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
VJP = ["vjp", "-e", EXAMPLE2, "--v", "1,1,1"]
POINTS = np.random.default_rng(27).standard_normal((50, 2))


def _tree(root) -> dict[str, tuple[int, bytes | None]]:
    """Every path under ``root``: its mode, and a file's bytes."""
    found = {}
    for folder, _, names in os.walk(root):
        found[folder] = (os.lstat(folder).st_mode, None)
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                found[path] = (os.lstat(path).st_mode, f.read())
    return found


@pytest.fixture
def work(tmp_path, monkeypatch):
    """The working folder of HOSTILE_OUTPUTS, and $HOME beside it (see hostile.py)."""
    work, home = tmp_path / "work", tmp_path / "home"
    for folder in (work / "data", work / "outdir", home):
        folder.mkdir(parents=True)
    (home / ".profile").write_text("mine\n")
    np.save(work / "points.npy", POINTS)
    np.save(work / "data" / "points.npy", POINTS)
    np.savez(work / "p.npz", x=POINTS)
    zarr.create_array(work / "p.zarr", shape=POINTS.shape, chunks=(20, 2), dtype="f8")[:] = POINTS
    zarr.create_array(work / "store.zarr", shape=(3,), dtype="f8")[:] = [1, 2, 3]
    pq.write_table(pa.table({"x0": POINTS[:, 0], "x1": POINTS[:, 1]}), work / "p.parquet")
    (work / "outdir" / "thesis.txt").write_text("precious\n")
    os.chmod(work / "outdir", 0o751)  # a mode of the user's own, which must stay
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    return work


@pytest.mark.parametrize("dask", [None, "local:1"])
@pytest.mark.parametrize("name", list(HOSTILE_OUTPUTS))
def test_out_never_removes_what_gradcli_did_not_write(cli, work, name, dask):
    batch, out, message = HOSTILE_OUTPUTS[name]
    out = out.format(home=work.parent / "home")
    before = _tree(work.parent)
    result = cli(*VJP, "--batch", batch, "--out", out, *(["--dask", dask] if dask else []))
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert _tree(work.parent) == before  # contents and modes


def test_a_users_folder_is_refused_with_a_way_out(cli, work):
    result = cli(*VJP, "--batch", "@points.npy", "--out", "outdir")
    assert result.stderr.splitlines() == [
        "error: --out outdir is a folder that gradcli did not write, and it is not empty; "
        "gradcli replaces only a folder it wrote itself (its earlier --out)",
        "hint: give --out a new folder's name, or move or remove outdir yourself",
    ]
    assert stat.S_IMODE(os.stat(work / "outdir").st_mode) == 0o751


def _results(path, form: str) -> np.ndarray:
    """grads.x as the --out of each form holds it."""
    if form == "folder":
        parts = sorted((path / "grads.x").iterdir())
        return np.concatenate([np.load(p) for p in parts])
    if form == "npy":
        return np.load(path)
    if form == "npz":
        return np.load(path)["grads.x"]
    if form == "zarr":
        return zarr.open_group(path, mode="r")["grads.x"][:]
    table = pq.read_table(path)
    return np.stack([table["grads.x0"].to_numpy(), table["grads.x1"].to_numpy()], 1)


FORMS = {"folder": "r/", "npy": "r.npy", "npz": "r.npz", "zarr": "r.zarr", "parquet": "r.parquet"}


@pytest.mark.parametrize("form", list(FORMS))
def test_gradclis_own_earlier_out_is_replaced(cli, work, form):
    """A command run again writes over its own --out; a folder keeps the mode it was given."""
    out = FORMS[form]
    first = cli(*VJP, "--batch", "@points.npy", "--out", out)
    assert first.exit_code == 0, first.stderr
    np.save("fewer.npy", POINTS[:7] * 2)
    target = work / out.rstrip("/")
    if target.is_dir():
        os.chmod(target, 0o751)
    again = cli(*VJP, "--batch", "@fewer.npy", "--out", out)
    assert again.exit_code == 0, again.stderr
    x0, x1 = (POINTS[:7] * 2).T
    np.testing.assert_allclose(_results(target, form), np.stack([4 * x0, 10 * x1 + 3], 1))
    if target.is_dir():
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o751
    assert not [p for p in os.listdir(work) if p.startswith(".gradcli-")]


def test_a_users_file_is_replaced_whole_as_before(cli, work):
    """A file --out (.npy, .npz, .parquet) that is not an input is replaced, atomically."""
    (work / "r.npy").write_text("an old file\n")
    result = cli(*VJP, "--batch", "@points.npy", "--out", "r.npy")
    assert result.exit_code == 0, result.stderr
    assert np.load(work / "r.npy").shape == (50, 2)


def test_an_empty_folder_is_filled_and_keeps_its_mode(cli, work):
    (work / "empty").mkdir(mode=0o750)
    os.chmod(work / "empty", 0o750)
    result = cli(*VJP, "--batch", "@points.npy", "--out", "empty")
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(work / "empty")) == [MANIFEST, "grads.x", "values.y"]
    assert stat.S_IMODE(os.stat(work / "empty").st_mode) == 0o750


def test_gradclis_own_folder_is_not_replaced_when_it_holds_an_input(cli, work):
    assert cli(*VJP, "--batch", "@points.npy", "--out", "r/").exit_code == 0
    before = _tree(work / "r")
    result = cli(*VJP, "--batch", "@r/grads.x", "--out", "r/")
    assert result.exit_code == 2
    input_part = "r/grads.x/part-000000.npy"
    assert f"--out r/ holds the command's input {input_part}, which gradcli never" in result.stderr
    assert _tree(work / "r") == before
    os.link(work / "points.npy", work / "r" / "grads.x" / "linked.npy")  # the input by a 2nd name
    before = _tree(work / "r")
    result = cli(*VJP, "--batch", "@points.npy", "--out", "r/")
    assert result.exit_code == 2
    assert "the same file as the command's input points.npy" in result.stderr
    assert _tree(work / "r") == before


def test_a_folder_that_appears_while_the_batch_runs_is_not_replaced(work):
    """The last check, as the results are renamed into place: the folder may have changed."""
    (work / "new").mkdir()
    (work / "late").mkdir()
    (work / "late" / "notes.txt").write_text("written while the batch ran\n")
    with pytest.raises(GradcliError, match="is a folder that gradcli did not write"):
        replace_folder(str(work / "new"), "late")
    assert (work / "late" / "notes.txt").read_text() == "written while the batch ran\n"
    assert (work / "new").is_dir()


def _expanding(kind: str, rows: int, folder) -> str:
    """A small file whose metadata declares a block of ``rows`` points of x (two numbers)."""
    if kind == "zarr":  # metadata alone: no chunk is written
        zarr.create_array(folder / "big.zarr", shape=(rows, 2), chunks=(rows, 2), dtype="f8")
        return "big.zarr"
    if kind == "zarr-wide":  # 100 points, in one chunk declared far beyond them
        array = zarr.create_array(folder / "big.zarr", shape=(100, 2), chunks=(rows, 2), dtype="f8")
        array[:] = 1.0
        return "big.zarr"
    zeros = np.zeros(rows)  # a constant column: a few KB on disk
    pq.write_table(
        pa.table({"x0": zeros, "x1": zeros}), folder / "big.parquet", row_group_size=rows
    )
    return "big.parquet"


@pytest.mark.parametrize("name", list(EXPANDING_STORES))
def test_a_block_past_the_budget_is_refused_before_it_is_read(cli, tmp_path, monkeypatch, name):
    kind, rows, budget, message = EXPANDING_STORES[name]
    source = tmp_path / _expanding(kind, rows, tmp_path)
    assert sum(f.stat().st_size for f in [source, *source.rglob("*")] if f.is_file()) < 100_000

    def no_reading(*args, **kwargs):
        raise AssertionError("a block was read")

    monkeypatch.setattr(zarr.Array, "__getitem__", no_reading)
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", no_reading)
    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", no_reading)
    result = cli(*VJP, "--batch", f"@{source}", "--max-memory", budget, "--out", tmp_path / "r.npz")
    assert result.exit_code == 2, result.stderr
    error, hint = result.stderr.splitlines()
    assert error.startswith(f"error: --batch ({source}, ")
    assert message in error
    assert "32.0 MB" in error  # the declared numbers: 2 x 2,000,000 (or 2 x 1,000,000, twice)
    assert error.endswith("the budget is 20.0 MB (--max-memory)")
    assert hint.startswith("hint: raise the budget with --max-memory ")
    assert not (tmp_path / "r.npz").exists()


def test_blocks_within_the_budget_are_read(cli, tmp_path):
    """The control: the same points, in blocks that fit, under the same budget."""
    x = np.random.default_rng(5).standard_normal((40_000, 2))
    zarr.create_array(tmp_path / "p.zarr", shape=x.shape, chunks=(5_000, 2), dtype="f8")[:] = x
    pq.write_table(pa.table({"x0": x[:, 0], "x1": x[:, 1]}), tmp_path / "p.parquet", 5_000)
    for source in ("p.zarr", "p.parquet"):
        out = tmp_path / f"{source}.npz"
        result = cli(*VJP, "--batch", f"@{tmp_path / source}", "--max-memory", "20MB", "--out", out)
        assert result.exit_code == 0, result.stderr
        np.testing.assert_allclose(
            np.load(out)["grads.x"], np.stack([4 * x[:, 0], 10 * x[:, 1] + 3], 1)
        )


@pytest.mark.parametrize("out", ["r/", "r.zarr"])
def test_a_file_put_into_gradclis_folder_since_is_not_removed(cli, work, out):
    assert cli(*VJP, "--batch", "@points.npy", "--out", out).exit_code == 0
    (work / out.rstrip("/") / "notes.txt").write_text("mine\n")
    before = _tree(work / out.rstrip("/"))
    result = cli(*VJP, "--batch", "@points.npy", "--out", out)
    assert result.exit_code == 2
    assert f"--out {out} was written by gradcli, but it now holds notes.txt, which gradcli " in (
        result.stderr
    )
    assert f"hint: move it out of {out}, or give --out a new folder's name" in result.stderr
    assert _tree(work / out.rstrip("/")) == before
