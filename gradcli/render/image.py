"""Images of plots with matplotlib, an optional dependency (the ``[plot]`` extra)."""

from __future__ import annotations

from pathlib import Path

from ..base.errors import GradcliError, optional_module
from ..base.files import atomic_output
from ..results import Plot


def save_plot(result: Plot, path: str) -> None:
    """Write the function and its derivative to a .png or .svg file."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".png", ".svg"):
        raise GradcliError(f"cannot write {path!r}", hint="give a file name ending in .png or .svg")
    missing = "writing an image needs matplotlib, which is not installed"
    matplotlib = optional_module("matplotlib", missing, "plot")
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "gradcli"  # the same ids in the SVG every run
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    axes.plot(result.positions, result.values, label=result.output)
    axes.plot(result.positions, result.slopes, label=result.derivative, linestyle="--")
    axes.axhline(0, color="grey", linewidth=0.5)
    axes.set_xlabel(result.axis)
    axes.legend()
    try:
        with atomic_output(path) as temporary:
            figure.savefig(temporary, metadata={"Date": None} if suffix == ".svg" else None)
    finally:
        plt.close(figure)
