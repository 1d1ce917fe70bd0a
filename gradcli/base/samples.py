"""The samples that come with gradcli: programs, PyTorch scripts and points, shipped in the
package (``gradcli/samples``), listed and printed by ``gradcli samples``, and read wherever a
file is by the name ``sample:NAME`` (``-f sample:vjp_example2``, ``gradcli run
sample:seed_first_example``, ``--batch @sample:points.csv``), so that the examples of
``--help`` run from any folder after ``pip install gradcli``."""

from __future__ import annotations

import difflib
from pathlib import Path

from .errors import GradcliError

PREFIX = "sample:"
FOLDER = Path(__file__).resolve().parent.parent / "samples"  # gradcli/samples
# what a sample without a first comment holds, by its suffix
KINDS = {".csv": "points for --batch, one x a row", ".py": "a PyTorch script for gradcli run"}


def files() -> list[Path]:
    """Every sample's file, by name."""
    return sorted(path for path in FOLDER.iterdir() if path.is_file())


def path(name: str) -> Path:
    """The file of the sample called ``name`` (with or without its suffix)."""
    for candidate in files():
        if name in (candidate.name, candidate.stem):
            return candidate
    known = [candidate.stem for candidate in files()]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    raise GradcliError(
        f"no sample called {name!r}",
        hint=(f"did you mean {close[0]!r}? " if close else "") + "gradcli samples lists them",
    )


def summary(sample: Path) -> str:
    """A sample's first comment line, or what its kind of file holds."""
    first = sample.read_text(encoding="utf-8").partition("\n")[0]
    if first.startswith("# "):
        return first[2:]
    return KINDS.get(sample.suffix, "")


def listing() -> str:
    """The samples, one a line: the name, then what it is."""
    samples = files()
    width = max(len(sample.name) for sample in samples)
    lines = [f"{sample.name:<{width}}  {summary(sample)}".rstrip() for sample in samples]
    return "\n".join(lines) + "\n"
