"""jacobian: structured Jacobians at the command line (the structured path by default,
``--mode dense`` for the dense passes, ``--sparse``: the non-zeros in tables and as COO in
JSON, automatic when the pattern is sparse and J large, and ``--out J.npy`` / ``J.npz``), the
modes agreeing, and --heatmap's signs."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.commands.compute import AUTO_SPARSE

STENCIL = "y = x[2:] - 2*x[1:-1] + x[:-2]"
EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"


def _stencil(n: int) -> np.ndarray:
    want = np.zeros((n - 2, n))
    for i in range(n - 2):
        want[i, i : i + 3] = (1, -2, 1)
    return want


def test_the_structured_jacobian_equals_the_dense_one(cli_json):
    x = "[0.5, -1.0, 2.0, 0.25]"
    structured = cli_json("jacobian", "-e", "y = sin(x) * x", "--x", x)
    dense = cli_json("jacobian", "-e", "y = sin(x) * x", "--x", x, "--mode", "dense")
    assert structured["mode"] == "structured"
    assert structured["mode_reason"].startswith("1 colour of columns, forward (1 pass")
    assert dense["mode"] == "reverse"
    assert dense["mode_reason"] == "4 input elements >= 4 outputs"
    np.testing.assert_allclose(structured["jacobian"]["x"], dense["jacobian"]["x"], rtol=1e-14)
    assert np.count_nonzero(structured["jacobian"]["x"]) == 4


def test_a_dense_program_keeps_the_dense_passes(cli_json):
    doc = cli_json("jacobian", "-e", EXAMPLE2, "--x", "1,2")
    assert (doc["mode"], doc["mode_reason"]) == ("forward", "2 input elements < 3 outputs")


def test_sparse_json_is_coo(cli_json):
    doc = cli_json("jacobian", "-e", STENCIL, "--x", "linspace(0, 1, 7)", "--sparse")
    coo = doc["jacobian"]["x"]
    assert coo["shape"] == [5, 7] and len(coo["values"]) == 15
    dense = np.zeros(coo["shape"])
    dense[coo["rows"], coo["cols"]] = coo["values"]
    np.testing.assert_array_equal(dense, _stencil(7))
    assert doc["layout"].startswith("COO")
    assert doc["mode"] == "structured" and "3 colours of columns" in doc["mode_reason"]


def test_sparse_json_of_a_transposed_jacobian_swaps_rows_and_cols(cli_json):
    doc = cli_json("jacobian", "-e", STENCIL, "--x", "linspace(0, 1, 6)", "--sparse", "--transpose")
    coo = doc["jacobian"]["x"]
    dense = np.zeros(coo["shape"])
    dense[coo["rows"], coo["cols"]] = coo["values"]
    np.testing.assert_array_equal(dense, _stencil(6).T)


def test_sparse_table_lists_the_non_zeros(cli):
    result = cli("jacobian", "-e", "y = x**2", "--x", "1,2,3", "--sparse")
    assert result.exit_code == 0, result.stderr
    assert "dy/dx  3x3, 3 non-zeros" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.startswith("│ y[")]
    assert [row.split("│")[1:4] for row in rows] == [
        [" y[0] ", " x[0]   ", "     2 "],
        [" y[1] ", " x[1]   ", "     4 "],
        [" y[2] ", " x[2]   ", "     6 "],
    ]


def test_a_large_sparse_table_shows_its_first_and_last_non_zeros(cli):
    result = cli("jacobian", "-e", "y = 3 * x", "--x", "ones(100)", "--sparse")
    assert result.exit_code == 0, result.stderr
    assert "100 non-zeros, first and last shown" in result.stdout
    assert "y[99]" in result.stdout and "y[50]" not in result.stdout


def test_a_large_sparse_jacobian_is_given_sparse_by_itself(cli_json):
    # 2,000 x 2,000 dense would be 4 million elements: the 2,000 non-zeros are given instead
    doc = cli_json("jacobian", "-e", "y = exp(x)", "--x", "zeros(2000)")
    coo = doc["jacobian"]["x"]
    assert coo["shape"] == [2000, 2000] and coo["values"] == [1.0] * 2000
    assert coo["rows"] == coo["cols"] == list(range(2000))


def test_csv_holds_every_value_of_a_large_sparse_jacobian_unless_sparse_is_asked(cli):
    # CSV is one value a row, zeros too: the stencil's Jacobian, sparse by itself elsewhere
    # (more elements than AUTO_SPARSE), goes dense there (a reviewer found it refused), and
    # --sparse --format csv stays refused
    n = 1100  # the smallest round size past AUTO_SPARSE: 1,208,900 rows of CSV
    assert (n - 2) * n > AUTO_SPARSE
    program = ["jacobian", "-e", "y = x[2:] - 2*x[1:-1] + x[:-2]", "--x", f"arange({n})"]
    result = cli(*program, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = [line.split(",") for line in result.stdout.splitlines() if line.startswith("jacobian.x")]
    assert len(rows) == (n - 2) * n
    nonzero = {(int(r[1]), int(r[2])): float(r[3]) for r in rows if float(r[3]) != 0}
    assert nonzero == {
        **{(i, i): 1.0 for i in range(n - 2)},
        **{(i, i + 1): -2.0 for i in range(n - 2)},
        **{(i, i + 2): 1.0 for i in range(n - 2)},
    }


def test_a_heatmap_shades_a_dense_jacobian_and_is_refused_with_sparse(cli):
    # --sparse --heatmap dropped the heatmap without a word
    result = cli("jacobian", "-e", "y = exp(x)", "--x", "zeros(3)", "--sparse", "--heatmap")
    assert result.exit_code == 2
    assert "--heatmap shades the cells of a dense Jacobian" in result.stderr
    # 2,000 x 2,000: sparse by itself in a table, dense (summarised) with --heatmap
    result = cli("jacobian", "-e", "y = exp(x)", "--x", "zeros(2000)", "--heatmap")
    assert result.exit_code == 0, result.stderr
    assert "non-zeros" not in result.stdout and "dy/dx" in result.stdout


def test_an_elementwise_jacobian_beyond_max_elements_dense_is_computed_sparse(cli_json):
    doc = cli_json("jacobian", "-e", "y = x * x", "--x", "ones(5000)", "--max-elements", "100000")
    assert len(doc["jacobian"]["x"]["values"]) == 5000


def test_dense_mode_refuses_what_does_not_fit(cli):
    result = cli(
        "jacobian",
        "-e",
        "y = x * x",
        "--x",
        "ones(5000)",
        "--max-elements",
        "100000",
        "--mode",
        "dense",
    )
    assert result.exit_code == 2
    assert "--max-elements" in result.stderr


def test_sparse_of_a_dense_mode_gives_the_non_zeros(cli_json):
    doc = cli_json("jacobian", "-e", EXAMPLE2, "--x", "1,2", "--sparse", "--mode", "reverse")
    coo = doc["jacobian"]["x"]
    assert coo["rows"] == [0, 1, 1, 2] and coo["cols"] == [0, 0, 1, 1]
    assert coo["values"] == [2.0, 2.0, 20.0, 3.0]


def test_out_npy_and_npz(cli, tmp_path):
    npy, npz = tmp_path / "J.npy", tmp_path / "J.npz"
    result = cli("jacobian", "-e", "y = x ** 3", "--x", "1,2", "--out", npy)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and f"wrote the Jacobian of y to {npy}" in result.stderr
    np.testing.assert_array_equal(np.load(npy), [[3.0, 0.0], [0.0, 12.0]])
    result = cli("jacobian", "-e", "y = x * w", "--x", "1,2", "-i", "w=3,4", "--wrt", "x,w",
                 "--out", npz)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with np.load(npz) as saved:
        assert sorted(saved) == ["w", "x"]
        np.testing.assert_array_equal(saved["x"], [[3.0, 0.0], [0.0, 4.0]])
        np.testing.assert_array_equal(saved["w"], [[1.0, 0.0], [0.0, 2.0]])


def test_out_npz_of_a_sparse_jacobian_is_coo(cli, tmp_path):
    path = tmp_path / "J.npz"
    result = cli("jacobian", "-e", STENCIL, "--x", "linspace(0, 1, 9)", "--sparse", "--out", path)
    assert result.exit_code == 0, result.stderr
    assert "wrote the non-zeros of the Jacobian" in result.stderr
    with np.load(path) as saved:
        assert sorted(saved) == ["cols", "rows", "shape", "values"]
        dense = np.zeros(tuple(saved["shape"]))
        dense[saved["rows"], saved["cols"]] = saved["values"]
    np.testing.assert_array_equal(dense, _stencil(9))
    several = tmp_path / "K.npz"
    result = cli("jacobian", "-e", "y = x * w", "--x", "1,2", "-i", "w=3,4", "--wrt", "x,w",
                 "--sparse", "--out", several)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with np.load(several) as saved:
        assert sorted(saved) == [
            f"{n}.{k}" for n in "wx" for k in ("cols", "rows", "shape", "values")
        ]
        np.testing.assert_array_equal(saved["w.values"], [1.0, 2.0])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--out", "J.txt"], "--out J.txt: unknown file type"),
        (["--out", "no/such/J.npy"], "no such folder"),
        (["--sparse", "--out", "{tmp}/J.npy"], "a sparse Jacobian is written as coordinates"),
        (["--sparse", "--format", "csv"], "a sparse Jacobian is printed as a table or JSON"),
        (["--sparse", "--symbolic"], "--symbolic gives dense formulas"),
    ],
)
def test_refusals(cli, tmp_path, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = cli("jacobian", "-e", "y = x ** 2", "--x", "1,2,3", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_out_npy_of_several_inputs_asks_for_npz(cli, tmp_path):
    result = cli("jacobian", "-e", "y = x * w", "--x", "1,2", "-i", "w=3,4", "--wrt", "x,w",
                 "--mode", "dense", "--out", tmp_path / "J.npy")  # fmt: skip
    assert result.exit_code == 2
    assert "there are 2 Jacobians (x, w)" in result.stderr and "J.npz" in result.stderr


def test_heatmap_without_colour_shows_signs_and_blank_zeros(cli):
    result = cli("jacobian", "-e", "y = x[0:3] * x[1:4]", "--x", "1,2,3,-4", "--heatmap")
    assert result.exit_code == 0
    row = next(line for line in result.stdout.splitlines() if line.startswith("│ y[2]"))
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells == ["y[2]", "", "", "-████", "+███"]


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_jacobian_modes_agree(cli_json, mode):
    doc = cli_json("jacobian", "-e", EXAMPLE2, "--x", "1,2", "--mode", mode)
    assert doc["jacobian"]["x"] == [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]]
    assert doc["mode"].startswith("forward" if mode in ("forward", "auto") else "reverse")
