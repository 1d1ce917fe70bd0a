"""--batch on a Dask cluster (--dask): every point the same as in one process.

A two-worker LocalCluster (two processes) is started once for the module; the command line
connects to it by its address, as it would to any cluster, and once starts its own with
``--dask local:2``. Results are compared with the single-process batch point by point, for
every output (JSON lines, .npy, .npz, a folder of parts) and for points in a .npy file, in a
folder of .npy parts and on stdin.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from gradcli.batch.dask import local_cluster

distributed = pytest.importorskip("distributed")  # gradcli[dask]

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
VJP = ["vjp", "-e", EXAMPLE2, "--v", "1,1,1"]
LAYER = "h = tanh(x @ W + b); y = sum(h * h)"  # several inputs, one of them batched


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as local:
        yield local.scheduler_address


@pytest.fixture
def points(tmp_path):
    """300,000 seeded points of x (three tasks of the cluster), in a .npy file."""
    path = tmp_path / "points.npy"
    np.save(path, np.random.default_rng(5).standard_normal((300_000, 2)))
    return path


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_every_point_of_a_dask_batch_equals_the_single_process_one(cli, cluster, points, tmp_path):
    spec = f"@{points}"
    alone = cli(*VJP, "--batch", spec, "--out", tmp_path / "alone.npz")
    assert alone.exit_code == 0, alone.stderr
    spread = cli(*VJP, "--batch", spec, "--out", tmp_path / "spread.npz", "--dask", cluster)
    assert spread.exit_code == 0, spread.stderr
    assert "wrote 300000 points" in spread.stderr
    with np.load(tmp_path / "alone.npz") as one, np.load(tmp_path / "spread.npz") as many:
        assert sorted(many.files) == sorted(one.files) == ["grads.x", "values.y"]
        for key in one.files:
            np.testing.assert_array_equal(many[key], one[key])
    x = np.load(points)
    np.testing.assert_allclose(
        np.load(tmp_path / "spread.npz")["grads.x"], np.stack([4 * x[:, 0], 10 * x[:, 1] + 3], 1)
    )
    grads = cli(*VJP, "--batch", spec, "--out", tmp_path / "g.npy", "--dask", cluster)
    assert grads.exit_code == 0, grads.stderr
    with np.load(tmp_path / "alone.npz") as one:
        np.testing.assert_array_equal(np.load(tmp_path / "g.npy"), one["grads.x"])
    assert not list(tmp_path.glob(".gradcli-*"))  # the workers' scratch files are gone


def test_dask_json_lines_come_in_the_points_order(cli, cluster, points):
    alone = cli(*VJP, "--batch", f"@{points}")
    spread = cli(*VJP, "--batch", f"@{points}", "--dask", cluster)
    assert spread.exit_code == 0, spread.stderr
    assert spread.stdout == alone.stdout  # the same text, line by line
    assert len(spread.stdout.splitlines()) == 300_000


def test_points_in_parts_go_to_a_folder_of_parts(cli, cluster, tmp_path):
    rng = np.random.default_rng(7)
    source = tmp_path / "in"
    (source / "x").mkdir(parents=True)
    sizes = [1_000, 2_500, 10, 4_000]  # one task a part
    for i, size in enumerate(sizes):
        np.save(source / "x" / f"part-{i}.npy", rng.standard_normal((size, 3, 2)))
    weights = ["-i", "W=@" + str(tmp_path / "W.npy"), "-i", "b=0.5,-1,2"]
    np.save(tmp_path / "W.npy", rng.standard_normal((2, 3)))
    args = ["grad", "-e", LAYER, *weights, "--batch", f"@{source}"]
    alone = cli(*args, "--out", tmp_path / "alone.npz")
    assert alone.exit_code == 0, alone.stderr
    out = tmp_path / "out"
    spread = cli(*args, "--out", f"{out}/", "--dask", cluster)
    assert spread.exit_code == 0, spread.stderr
    names = ["grads.W", "grads.b", "grads.x", "values.y"]
    assert sorted(p.name for p in out.iterdir()) == [".gradcli-output.json", *names]
    with np.load(tmp_path / "alone.npz") as one:
        for key in one.files:
            parts = sorted((out / key).iterdir())
            assert [len(np.load(p)) for p in parts] == sizes
            np.testing.assert_array_equal(np.concatenate([np.load(p) for p in parts]), one[key])
    again = cli(*args, "--out", f"{out}/")  # one process writes the same parts, over the folder
    assert again.exit_code == 0, again.stderr
    for key in ("grads.x", "values.y"):
        for part in sorted((out / key).iterdir()):
            assert part.name.startswith("part-") and part.suffix == ".npy"
    back = cli(*VJP[:1], "-e", LAYER, *weights, "--v", "1", "--batch", f"@{out}/grads.x")
    assert back.exit_code == 0, back.stderr  # the parts read back as points


def test_zarr_and_parquet_points_go_to_zarr_and_parquet_on_the_cluster(cli, cluster, tmp_path):
    """Each Zarr chunk and Parquet row group is read by the worker that replays it, and the
    workers write the Zarr --out's chunks (each task whole ones) and the Parquet --out's parts."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zarr

    x = np.random.default_rng(9).standard_normal((300_000, 2))
    np.save(tmp_path / "x.npy", x)
    alone = cli(*VJP, "--batch", f"@{tmp_path}/x.npy", "--out", tmp_path / "alone.npz")
    assert alone.exit_code == 0, alone.stderr
    zarr.create_array(tmp_path / "p.zarr", shape=x.shape, chunks=(70_000, 2), dtype="f8")[:] = x
    table = pa.table({"x0": x[:, 0], "x1": x[:, 1]})
    pq.write_table(table, tmp_path / "p.parquet", row_group_size=110_000)
    with np.load(tmp_path / "alone.npz") as one:
        for source, out in (("p.zarr", "r.parquet"), ("p.parquet", "r.zarr")):
            args = [*VJP, "--batch", f"@{tmp_path}/{source}", "--out", tmp_path / out]
            spread = cli(*args, "--dask", cluster)
            assert spread.exit_code == 0, spread.stderr
            if out.endswith(".zarr"):
                group = zarr.open_group(tmp_path / out, mode="r")
                got = {k: group[k][:] for k in one.files}
            else:
                read = pq.read_table(tmp_path / out)
                got = {
                    k: np.stack([read[f"{k}{i}"].to_numpy() for i in range(one[k].shape[1])], 1)
                    for k in one.files
                }
            for key in one.files:
                np.testing.assert_array_equal(got[key], one[key])
    assert not list(tmp_path.glob(".gradcli-*"))


def test_points_from_stdin_travel_with_their_tasks(cli, cluster):
    text = "[1, 2]\n[0, 1]\n[3, -1]\n"
    spread = cli(*VJP, "--batch", "-", "--dask", cluster, input=text)
    assert spread.exit_code == 0, spread.stderr
    assert [line["grads"]["x"] for line in _lines(spread.stdout)] == [
        [4.0, 23.0],
        [0.0, 13.0],
        [12.0, -7.0],
    ]


def test_dask_local_starts_its_own_cluster(cli, tmp_path):
    np.save(tmp_path / "p.npy", np.arange(20.0).reshape(10, 2))
    alone = cli(*VJP, "--batch", f"@{tmp_path}/p.npy")
    spread = cli(*VJP, "--batch", f"@{tmp_path}/p.npy", "--dask", "local:2")
    assert spread.exit_code == 0, spread.stderr
    assert spread.stdout == alone.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--x", "1,2", "--dask", "local:2"], "--dask runs the points of --batch"),
        (["--batch", "-", "--dask", "local:0"], "local:N takes a number of workers from 1"),
        (["--batch", "-", "--dask", "somewhere"], "not an address of a Dask scheduler"),
    ],
)
def test_dask_refuses_what_it_cannot_run(cli, args, message):
    result = cli(*VJP, *args, input="[1, 2]\n")
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr


def test_a_program_whose_shapes_follow_its_values_stays_in_one_process(cli):
    program = ["eval", "-e", "y = sum(x[x > 0])", "--batch", "-", "--dask", "local:2"]
    result = cli(*program, input="[1, -2]\n[3, 4]\n")
    assert result.exit_code == 2, result.stderr
    assert "leave out --dask" in result.stderr


@pytest.mark.parametrize("out", ["r.npy", "r/"])
def test_a_dask_batch_stopped_by_the_timeout_keeps_the_chunks_done_from_the_first(
    cli, cluster, tmp_path, out
):
    total = 2_000_000  # 16 tasks: several seconds of work on two workers
    np.save(tmp_path / "p.npy", np.arange(float(total)))
    text = "w = ones(200); y = sum(sin(x*w))"
    assert cli("eval", "-e", text, "--x", "1").exit_code == 0  # parsed: the cache holds it
    program = ["grad", "-e", text, "--batch", f"@{tmp_path}/p.npy"]
    result = cli(*program, "--out", f"{tmp_path}/{out}", "--dask", cluster, "--timeout", "2")
    assert result.exit_code == 124, result.stderr
    done = int(result.stderr.split(": wrote ")[1].split(" of ")[0])
    assert 0 <= done < total
    if out.endswith("/"):
        parts = sorted((tmp_path / "r" / "grads.x").iterdir())
        grads = np.concatenate([np.load(p) for p in parts]) if parts else np.zeros(0)
    else:
        grads = np.load(tmp_path / out)
    assert grads.shape == (done,)
    np.testing.assert_allclose(grads, 200 * np.cos(np.arange(done)), atol=1e-9)
    assert not list(tmp_path.glob(".gradcli-*"))


def test_the_other_commands_batch_on_the_cluster_as_in_one_process(cli, cluster, tmp_path):
    """jacobian's JSON lines, and check's verdict from workers that write --out themselves."""
    np.save(tmp_path / "p.npy", np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]]))
    spec = f"@{tmp_path}/p.npy"
    jacobian = ["jacobian", "-e", EXAMPLE2, "--batch", spec]
    alone, spread = cli(*jacobian), cli(*jacobian, "--dask", cluster)
    assert spread.exit_code == 0, spread.stderr
    assert spread.stdout == alone.stdout
    check = ["check", "-e", "y = relu(x - 1)", "--batch", spec, "--out", tmp_path / "c.npz"]
    verdict = cli(*check, "--dask", cluster)
    assert verdict.exit_code == 1, verdict.stderr
    assert "check: the methods disagree at 1 of 3 points (0)" in verdict.stderr
    with np.load(tmp_path / "c.npz") as saved:
        assert saved["check.agree"].tolist() == [False, True, True]


def test_a_dask_out_replaces_only_gradclis_own_folder(cli, cluster, tmp_path):
    """A user's folder is refused untouched; the cluster's own --out folder or Zarr store
    is replaced by the next run (issue 27: it used to remove any folder)."""
    import zarr

    np.save(tmp_path / "x.npy", np.random.default_rng(6).standard_normal((300, 2)))
    np.save(tmp_path / "fewer.npy", np.arange(8.0).reshape(4, 2))
    users = tmp_path / "users"
    users.mkdir()
    (users / "thesis.txt").write_text("precious\n")
    refused = cli(*VJP, "--batch", f"@{tmp_path}/x.npy", "--out", f"{users}/", "--dask", cluster)
    assert refused.exit_code == 2
    assert "is a folder that gradcli did not write" in refused.stderr
    assert [p.name for p in users.iterdir()] == ["thesis.txt"]
    for out in (tmp_path / "r", tmp_path / "r.zarr"):
        for points in ("x.npy", "fewer.npy"):
            args = [*VJP, "--batch", f"@{tmp_path}/{points}", "--out", f"{out}/"]
            result = cli(*args, "--dask", cluster)
            assert result.exit_code == 0, result.stderr
        if out.suffix == ".zarr":
            grads = zarr.open_group(out, mode="r")["grads.x"][:]
        else:
            grads = np.concatenate([np.load(p) for p in sorted((out / "grads.x").iterdir())])
        x = np.arange(8.0).reshape(4, 2)
        np.testing.assert_array_equal(grads, np.stack([4 * x[:, 0], 10 * x[:, 1] + 3], 1))
