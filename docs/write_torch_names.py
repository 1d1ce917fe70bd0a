"""Write ``gradcli/lang/torch_names.json`` from the installed PyTorch:
``python docs/write_torch_names.py`` (with torch 2.13.0 installed).

It records which of the language's function names each of torch's modules has (and which
of its tensor methods torch.Tensor has in place, ``x.sin_()``), so that
``torch.cbrt(x)`` (torch 2.13 has no cbrt) or ``F.sin(x)`` are what PyTorch makes of them
without torch installed: ``gradcli run`` raises torch's AttributeError at that statement,
and a program is told where the function is. ``tests/cli/test_cli_torch_names.py`` fails while
the file and the installed torch differ. It is data (JSON), not code: a fact of torch's that
the op table's entries do not declare, and no second description of an operation.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from gradcli.lang import functions as F

TARGET = Path(__file__).resolve().parents[1] / "gradcli" / "lang" / "torch_names.json"
MODULES = ("torch", "torch.nn.functional", "torch.linalg", "torch.special")


def names_in(module: str) -> list[str]:
    """The language's function names (and aliases) that ``module`` has, sorted."""
    imported = importlib.import_module(module)
    return sorted(n for n in {*F.FUNCTIONS, *F.ALIASES} if hasattr(imported, n))


def text() -> str:
    import torch

    version = torch.__version__.split("+")[0]
    document = {
        "torch": version,
        "has": {module: names_in(module) for module in MODULES},
        # the language's tensor methods whose in-place form torch.Tensor has (x.sin_())
        "in_place": sorted(m for m in F.METHODS if hasattr(torch.Tensor, m + "_")),
    }
    return json.dumps(document, indent=1) + "\n"


if __name__ == "__main__":
    TARGET.write_text(text())
