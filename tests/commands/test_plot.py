"""plot: the function and its derivative as CSV, a chart and an image, with their warnings."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest


def test_plot_csv_holds_the_function_and_its_derivative(cli):
    result = cli("plot", "-e", "y = tanh(x)", "--x", "0", "--x-range", "-1:1", "--points", "5",
                 "--format", "csv")  # fmt: skip
    assert result.exit_code == 0
    header, *rows = result.stdout.strip().splitlines()
    assert header == "x,y,dy/dx"
    table = np.array([[float(c) for c in r.split(",")] for r in rows])
    np.testing.assert_allclose(table[:, 1], np.tanh(table[:, 0]), rtol=1e-15)
    np.testing.assert_allclose(table[:, 2], 1 - np.tanh(table[:, 0]) ** 2, rtol=1e-15)


def test_plot_draws_a_chart(cli):
    result = cli("plot", "-f", "samples/plot_tanh.gc")
    assert result.exit_code == 0
    assert "* y   o dy/dx" in result.stdout
    assert result.stdout.count("*") > 40


def test_plot_image_without_matplotlib_says_how_to_install(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    result = cli("plot", "-f", "samples/plot_tanh.gc", "--out", tmp_path / "p.png")
    assert result.exit_code == 2
    assert "pip install 'gradcli[plot]'" in result.stderr
    assert not (tmp_path / "p.png").exists()


def test_plot_image_with_a_folder_named_matplotlib_says_how_to_install(cli, tmp_path, monkeypatch):
    # a folder named matplotlib in the working directory (python -m) imports as a namespace
    # package, without __file__: taken for absent, not an internal error (no matplotlib.use)
    monkeypatch.setitem(sys.modules, "matplotlib", types.ModuleType("matplotlib"))
    result = cli("plot", "-f", "samples/plot_tanh.gc", "--out", tmp_path / "p.png")
    assert result.exit_code == 2, result.stderr
    assert "pip install 'gradcli[plot]'" in result.stderr


def test_plot_writes_the_same_image_every_run(cli, tmp_path):
    pytest.importorskip("matplotlib")  # in the test extra, so CI runs this
    for name in ("a.png", "b.png", "a.svg", "b.svg"):
        result = cli("plot", "-f", "samples/plot_tanh.gc", "--out", tmp_path / name)
        assert result.exit_code == 0 and f"wrote {tmp_path / name}" in result.stderr
    assert (tmp_path / "a.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert (tmp_path / "a.svg").read_text().count("<path") > 2
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    result = cli("plot", "-f", "samples/plot_tanh.gc", "--out", tmp_path / "p.gif")
    assert result.exit_code == 2 and "ending in .png or .svg" in result.stderr


def test_plot_image_warns_and_strict_fails_as_the_chart_does(cli, tmp_path):
    pytest.importorskip("matplotlib")
    args = ["plot", "-e", "y = log(x)", "--x-range", "-1:1", "--points", "5"]
    image = cli(*args, "--out", tmp_path / "p.svg")
    chart = cli(*args)
    warnings = [line for line in chart.stderr.splitlines() if line.startswith("warning")]
    assert warnings and image.stderr.splitlines()[: len(warnings)] == warnings
    assert image.exit_code == 0 and f"wrote {tmp_path / 'p.svg'}" in image.stderr
    strict = cli(*args, "--out", tmp_path / "q.svg", "--strict")
    assert strict.exit_code == 1 and (tmp_path / "q.svg").exists()
