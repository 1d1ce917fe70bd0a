"""Points in chunked storage in one process: a .npy file read a chunk of rows at a time, a
folder of .npy parts, and --out DIR/ (a folder of parts for each result)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from command_fixtures import measured

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
VJP = ["vjp", "-e", EXAMPLE2, "--v", "1,1,1"]


def _grads(x: np.ndarray) -> np.ndarray:
    return np.stack([4 * x[:, 0], 10 * x[:, 1] + 3], 1)


def test_a_big_npy_of_points_is_never_held_whole(tmp_path):
    """4,000,000 points: 64 MB of points and 64 MB of gradients, in the memory of one chunk
    (read whole and converted, the points alone took 128 MB)."""
    x = np.random.default_rng(3).standard_normal((4_000_000, 2))
    np.save(tmp_path / "p.npy", x)
    out = tmp_path / "g.npy"
    report = measured([*VJP, "--batch", f"@{tmp_path}/p.npy", "--out", str(out)], tmp_path)
    assert report["code"] == 0, report["stderr"]
    assert report["peak_mb"] < 110, report
    np.testing.assert_allclose(np.load(out), _grads(x))


def test_points_in_npy_of_any_layout_and_dtype_give_the_same_lines(cli, tmp_path):
    x = np.random.default_rng(4).integers(-5, 5, (6, 2)).astype(float)
    layouts = {"c": x, "f": np.asfortranarray(x), "i": x.astype(np.int64), "s": x.astype("<f4")}
    lines = set()
    for name, array in layouts.items():
        np.save(tmp_path / f"{name}.npy", array)
        result = cli(*VJP, "--batch", f"@{tmp_path}/{name}.npy")
        assert result.exit_code == 0, result.stderr
        lines.add(result.stdout)
    assert len(lines) == 1
    (text,) = lines
    assert [json.loads(line)["grads"]["x"] for line in text.splitlines()] == _grads(x).tolist()


def test_a_npy_cut_short_is_refused(cli, tmp_path):
    np.save(tmp_path / "p.npy", np.ones((5, 2)))
    data = (tmp_path / "p.npy").read_bytes()
    (tmp_path / "p.npy").write_bytes(data[:-8])
    result = cli(*VJP, "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 2
    assert "is cut short" in result.stderr and "hint:" in result.stderr


def test_a_folder_of_parts_reads_as_its_parts_in_order(cli, tmp_path):
    rng = np.random.default_rng(5)
    parts = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]
    (tmp_path / "in").mkdir()
    for i, part in enumerate(parts):
        np.save(tmp_path / "in" / f"part-{i}.npy", part)
    (tmp_path / "in" / "notes.txt").write_text("not a part")
    result = cli(*VJP, "--batch", f"@{tmp_path}/in", "--out", f"{tmp_path}/out/")
    assert result.exit_code == 0, result.stderr
    assert "wrote 8 points" in result.stderr
    grads = [np.load(p) for p in sorted((tmp_path / "out" / "grads.x").iterdir())]
    np.testing.assert_allclose(np.concatenate(grads), _grads(np.concatenate(parts)))
    assert not list(tmp_path.glob(".gradcli-*"))


def test_parts_of_other_shapes_or_none_are_refused(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    empty = cli(*VJP, "--batch", f"@{tmp_path}/empty")
    assert empty.exit_code == 2 and "holds no .npy parts" in empty.stderr
    (tmp_path / "mixed").mkdir()
    np.save(tmp_path / "mixed" / "a.npy", np.ones((2, 2)))
    np.save(tmp_path / "mixed" / "b.npy", np.ones((2, 3)))
    mixed = cli(*VJP, "--batch", f"@{tmp_path}/mixed")
    assert mixed.exit_code == 2 and "points of different shapes" in mixed.stderr


def test_json_lines_write_every_number_as_python_does_whichever_path_writes_them(cli, tmp_path):
    """The fast writer (orjson, a whole array at a time) and the exact one (json.dumps per
    point, taken for a chunk holding an infinity) give the same text for the same point:
    1e-05 and 1.5e-09 are not 0.00001 and 1.5e-9, booleans are true/false."""
    values = [1e-5, -1.5e-9, 2.0, 3e20, 0.1, 1 / 3, 123456789.0, 1e16, 5e-324, 0.0]
    for extra in ([], [np.inf]):
        np.save(tmp_path / "p.npy", np.array(values + extra))
        for program, name, expected in [("y = x * 1", "y", values), ("b = x > 1", "b", None)]:
            result = cli("eval", "-e", program, "--batch", f"@{tmp_path}/p.npy")
            assert result.exit_code == 0, result.stderr
            lines = result.stdout.splitlines()[: len(values)]
            for i, (line, v) in enumerate(zip(lines, expected or [v > 1 for v in values])):
                assert line == json.dumps({"point": i, "values": {name: v}}), line


def test_json_lines_of_points_of_several_elements_are_json_s_own_text(cli, tmp_path):
    """Each line is what json.dumps writes for what it reads back as, for points of two
    elements of every size from 1e-9 to 1e20 (many below 1e-4, which orjson writes otherwise)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2000, 2)) * 10.0 ** rng.integers(-9, 20, (2000, 2))
    np.save(tmp_path / "p.npy", x)
    result = cli(*VJP, "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(x)
    assert all(line == json.dumps(json.loads(line)) for line in lines)
    assert [json.loads(line)["grads"]["x"] for line in lines] == _grads(x).tolist()


@pytest.mark.parametrize(
    ("program", "point"),
    [
        ("y = x[0:0]", []),
        ("y = reshape(x, (2, 1))[:, 0:0]", [[], []]),
        ("y = reshape(x, (2, 1))[:, 0:0] > 1", [[], []]),
    ],
)
def test_json_lines_of_points_of_no_elements_are_json_s_own_text(cli, tmp_path, program, point):
    np.save(tmp_path / "p.npy", np.arange(6.0).reshape(3, 2))
    result = cli("eval", "-e", program, "--of", "y", "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        json.dumps({"point": i, "values": {"y": point}}) for i in range(3)
    ]


def test_a_npy_of_no_points_says_so_with_or_without_a_sample_point(cli, tmp_path):
    # without --x, the program was bound first and the error named the input x0 of x
    np.save(tmp_path / "none.npy", np.zeros((0, 2)))
    for sample in ([], ["--x", "1,2"]):
        result = cli(*VJP, *sample, "--batch", f"@{tmp_path}/none.npy")
        assert result.exit_code == 2
        assert "--batch: no points for x" in result.stderr, result.stderr


def test_json_lines_escape_a_name_as_json_dumps_does_whichever_path_writes_them(cli, tmp_path):
    """A name that is not ASCII is ``\\u03b8`` in every line: the fast writer wrote it raw (and
    an infinity in the chunk, taking the exact path, escaped it)."""
    for values in ([1.0, 2.0], [1.0, np.inf]):
        np.save(tmp_path / "p.npy", np.array(values))
        result = cli("eval", "-e", "θ = x * 2", "--batch", f"@{tmp_path}/p.npy")
        assert result.exit_code == 0, result.stderr
        assert result.stdout.splitlines()[0] == '{"point": 0, "values": {"\\u03b8": 2.0}}'


def test_json_lines_of_complex_points_are_pairs_as_json_format_writes_them(cli, tmp_path):
    """Each complex number as [real, imag] (on main the fast writer cast them to booleans:
    "y": true)."""
    np.save(tmp_path / "p.npy", np.array([1.0, -2.5]))
    result = cli("eval", "-e", "y = x * 1j + 0.5", "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        '{"point": 0, "values": {"y": [0.5, 1.0]}}',
        '{"point": 1, "values": {"y": [0.5, -2.5]}}',
    ]
