"""Points in Zarr stores and Parquet files, and results written to them, in one process:
every point the same as the .npy batch's (the Dask path: test_dask.py)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from command_fixtures import measured

# gradcli[parquet] and gradcli[zarr] (zarr 3 needs Python 3.11)
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zarr = pytest.importorskip("zarr")

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
VJP = ["vjp", "-e", EXAMPLE2, "--v", "1,1,1"]
LAYER = "h = tanh(x @ W + b); y = sum(h * h)"  # a matrix input and a vector one


def _alone(cli, args: list[str], tmp_path) -> dict[str, np.ndarray]:
    """The single-process batch's results from .npz points (the oracle's own batch is
    checked against the formula in test_chunked_points.py)."""
    result = cli(*args, "--out", tmp_path / "alone.npz")
    assert result.exit_code == 0, result.stderr
    with np.load(tmp_path / "alone.npz") as arrays:
        return {k: arrays[k] for k in arrays.files}


def _columns(path, key: str, shape: tuple[int, ...]) -> np.ndarray:
    """A result read back from a Parquet --out: its column, or its elements' columns."""
    table = pq.read_table(path)
    if len(shape) == 1:
        return np.stack([table[f"{key}{i}"].to_numpy() for i in range(shape[0])], 1)
    return np.stack([np.asarray(v) for v in table[key].to_pylist()]) if shape else table[key]


@pytest.fixture
def x():
    return np.random.default_rng(11).standard_normal((20_000, 2))


@pytest.mark.parametrize("store", ["zarr array", "zarr group", "parquet elements", "parquet lists"])
@pytest.mark.parametrize("out", ["npz", "zarr", "parquet"])
def test_every_point_from_and_to_chunked_storage_equals_the_npy_batch(cli, tmp_path, x, store, out):
    np.save(tmp_path / "x.npy", x)
    expected = _alone(cli, [*VJP, "--batch", f"@{tmp_path}/x.npy"], tmp_path)
    if store == "zarr array":
        source = tmp_path / "p.zarr"
        zarr.create_array(source, shape=x.shape, chunks=(3_000, 2), dtype="f8")[:] = x
    elif store == "zarr group":
        source = tmp_path / "p.zarr"
        group = zarr.open_group(source, mode="w")
        group.create_array("x", shape=x.shape, chunks=(3_000, 2), dtype="f8")[:] = x
    elif store == "parquet elements":  # as pandas writes DataFrame(x, columns=["x0", "x1"])
        source = tmp_path / "p.parquet"
        pq.write_table(pa.table({"x0": x[:, 0], "x1": x[:, 1]}), source, row_group_size=7_000)
    else:
        source = tmp_path / "p.parquet"
        pq.write_table(pa.table({"x": pa.array(list(x))}), source, row_group_size=7_000)
    target = tmp_path / f"r.{out}"
    result = cli(*VJP, "--batch", f"@{source}", "--out", target)
    assert result.exit_code == 0, result.stderr
    assert "wrote 20000 points" in result.stderr
    for key, values in expected.items():
        if out == "npz":
            got = np.load(target)[key]
        elif out == "zarr":
            got = zarr.open_group(target, mode="r")[key][:]
        else:
            got = _columns(target, key, values.shape[1:])
        np.testing.assert_array_equal(got, values)
    if out == "zarr":  # chunked along the points like the input store, else a task's points
        chunks = zarr.open_group(target, mode="r")["grads.x"].chunks
        assert chunks == ((3_000, 2) if store.startswith("zarr") else (20_000, 2))
    assert not list(tmp_path.glob(".gradcli-*"))


def test_a_zarr_group_and_a_folder_of_parquet_parts_give_several_inputs(cli, tmp_path):
    rng = np.random.default_rng(12)
    x, W = rng.standard_normal((5_000, 3, 2)), rng.standard_normal((5_000, 2, 3))
    np.savez(tmp_path / "p.npz", x=x, W=W)
    fixed = ["-i", "b=0.5,-1,2"]
    expected = _alone(cli, ["grad", "-e", LAYER, *fixed, "--batch", f"@{tmp_path}/p.npz"], tmp_path)
    group = zarr.open_group(tmp_path / "p.zarr", mode="w")
    for name, array in (("x", x), ("W", W)):
        group.create_array(name, shape=array.shape, chunks=(1_000, *array.shape[1:]), dtype="f8")
        group[name][:] = array
    (tmp_path / "parts").mkdir()
    for i, rows in enumerate([slice(0, 1_200), slice(1_200, 1_201), slice(1_201, 5_000)]):
        columns = {"x": pa.array(list(map(list, x[rows]))), "W": pa.array(list(map(list, W[rows])))}
        pq.write_table(
            pa.table(columns), tmp_path / "parts" / f"part-{i}.parquet", row_group_size=900
        )
    for source, out in (("p.zarr", "r.zarr"), ("parts", "r.parquet")):
        args = ["grad", "-e", LAYER, *fixed, "--batch", f"@{tmp_path}/{source}"]
        result = cli(*args, "--out", tmp_path / out)
        assert result.exit_code == 0, result.stderr
        for key, values in expected.items():
            if out.endswith(".zarr"):
                got = zarr.open_group(tmp_path / out, mode="r")[key][:]
            else:
                got = _columns(tmp_path / out, key, values.shape[1:])
            np.testing.assert_array_equal(got, values)


def test_scalar_columns_are_scalar_inputs_and_integers_are_read(cli, tmp_path):
    table = pa.table({"a": [1, 2, 3], "b": [0.5, -1.0, 2.0], "__index_level_0__": [7, 8, 9]})
    pq.write_table(table, tmp_path / "p.parquet")
    result = cli("grad", "-e", "y = a**2 * b", "--batch", f"@{tmp_path}/p.parquet")
    assert result.exit_code == 0, result.stderr
    assert [line.count('"a": ') for line in result.stdout.splitlines()] == [1, 1, 1]
    assert '"a": 1.0, "b": 1.0' in result.stdout.splitlines()[0]  # 2ab, a^2 at a=1, b=0.5


def test_bad_chunked_storage_is_the_users_error(cli, tmp_path):
    pq.write_table(pa.table({"x": [1.0, 2.0], "id": ["a", "b"]}), tmp_path / "s.parquet")
    pq.write_table(pa.table({"x": pa.array([[1.0, 2.0], [3.0]])}), tmp_path / "r.parquet")
    pq.write_table(pa.table({"x": pa.array([1.0, None])}), tmp_path / "n.parquet")
    zarr.open_group(tmp_path / "e.zarr", mode="w")
    zarr.create_array(tmp_path / "t.zarr", shape=(2,), dtype="U3")
    (tmp_path / "junk.parquet").write_text("not parquet")
    cases = {
        "s.parquet": "the column id holds string, not numbers",
        "r.parquet": "are not all of the shape (2,)",
        "n.parquet": "the column x has empty (null) cells",
        "e.zarr": "the Zarr group holds no arrays",
        "t.zarr": "not numbers",
        "junk.parquet": "cannot read it as Parquet",
        "none.zarr": "no such Zarr store",
    }
    for name, message in cases.items():
        result = cli("eval", "-e", "y = sum(x)", "--batch", f"@{tmp_path}/{name}")
        assert result.exit_code == 2, (name, result.stderr)
        assert message in result.stderr, (name, result.stderr)
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("module", "spec", "out", "extra"),
    [
        ("zarr", "p.zarr", None, "gradcli[zarr]"),
        ("pyarrow.parquet", "p.parquet", None, "gradcli[parquet]"),
        ("zarr", "p.npy", "r.zarr", "gradcli[zarr]"),
        ("pyarrow.parquet", "p.npy", "r.parquet", "gradcli[parquet]"),
    ],
)
def test_a_missing_extra_is_named(cli, tmp_path, monkeypatch, module, spec, out, extra):
    np.save(tmp_path / "p.npy", np.ones((2, 2)))
    zarr.create_array(tmp_path / "p.zarr", shape=(2, 2), dtype="f8")
    pq.write_table(pa.table({"x0": [1.0], "x1": [2.0]}), tmp_path / "p.parquet")
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    args = [*VJP, "--batch", f"@{tmp_path}/{spec}"]
    result = cli(*args, *(["--out", tmp_path / out] if out else []))
    assert result.exit_code == 2, result.stderr
    assert f"pip install '{extra}'" in result.stderr
    assert not (tmp_path / (out or "none")).exists()


@pytest.mark.parametrize(
    ("module", "args", "extra"),
    [
        ("zarr", ["--out", "{tmp}/r.zarr"], "zarr"),
        ("pyarrow.parquet", ["--out", "{tmp}/r.parquet"], "parquet"),
        ("distributed", ["--dask", "local:1"], "dask"),
    ],
)
def test_a_folder_named_like_an_extra_is_not_the_package(
    cli, tmp_path, monkeypatch, module, args, extra
):
    # under python -m, a folder named zarr in the working directory imports as a namespace
    # package (no __file__): it was an internal error (no open_group), now the extra is named;
    # base.errors.optional_module takes such a module for absent for every extra
    monkeypatch.setitem(sys.modules, module, types.ModuleType(module))
    np.save(tmp_path / "p.npy", np.ones((2, 2)))
    result = cli(*VJP, "--batch", f"@{tmp_path}/p.npy", *(a.format(tmp=tmp_path) for a in args))
    assert result.exit_code == 2, result.stderr
    assert f"pip install 'gradcli[{extra}]'" in result.stderr


def test_a_batch_stopped_by_the_timeout_keeps_the_points_done_in_zarr(cli, tmp_path):
    total = 2_000_000
    source = tmp_path / "p.zarr"
    zarr.create_array(source, shape=(total,), chunks=(100_000,), dtype="f8")[:] = np.arange(
        float(total)
    )
    text = "w = ones(200); y = sum(sin(x*w))"
    args = ["grad", "-e", text, "--batch", f"@{source}", "--out", tmp_path / "r.zarr"]
    result = cli(*args, "--timeout", "1")
    assert result.exit_code == 124, result.stderr
    done = int(result.stderr.split(": wrote ")[1].split(" of ")[0])
    grads = zarr.open_group(tmp_path / "r.zarr", mode="r")["grads.x"][:]
    assert grads.shape == (done,) and done < total
    np.testing.assert_allclose(grads, 200 * np.cos(np.arange(done)), atol=1e-9)


@pytest.mark.parametrize(("source", "out"), [("p.zarr", "r.parquet"), ("p.parquet", "r.zarr")])
def test_a_million_points_in_chunked_storage_stay_in_bounded_memory(tmp_path, source, out):
    """10^6 points (16 MB of points, 40 MB of results): never held whole."""
    x = np.random.default_rng(13).standard_normal((1_000_000, 2))
    if source.endswith(".zarr"):
        zarr.create_array(tmp_path / source, shape=x.shape, chunks=(50_000, 2), dtype="f8")[:] = x
    else:
        columns = {"x0": x[:, 0], "x1": x[:, 1]}
        pq.write_table(pa.table(columns), tmp_path / source, row_group_size=100_000)
    args = [*VJP, "--batch", f"@{tmp_path}/{source}", "--out", str(tmp_path / out)]
    report = measured(args, tmp_path, limit_mb=4000)  # zarr's threads reserve address space
    assert report["code"] == 0, report["stderr"]
    assert report["peak_mb"] < 250, report
    grads = (
        _columns(tmp_path / out, "grads.x", (2,))
        if out.endswith(".parquet")
        else zarr.open_group(tmp_path / out, mode="r")["grads.x"][:]
    )
    np.testing.assert_allclose(grads, np.stack([4 * x[:, 0], 10 * x[:, 1] + 3], 1))
