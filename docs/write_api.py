"""Write docs/api.md, the library API's reference, from docstrings: ``python docs/write_api.py``.

The page is ``gradcli``'s and ``gradcli.api``'s docstrings, each method of ``Program`` with its
signature, and the result records (``gradcli.results``) the methods return with their fields;
``tests/test_api.py`` fails while the page and the docstrings differ.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from pathlib import Path

import gradcli
from gradcli import api, results
from gradcli.commands import uncertainty

PAGE = Path(__file__).resolve().parent / "api.md"

# the results the methods return, in the order of the commands
RESULTS = (
    results.Values,
    results.Grads,
    results.VJP,
    results.Jacobian,
    results.JVP,
    results.Hessian,
    results.HVP,
    results.Check,
    results.Graph,
    results.Plot,
    results.Explanation,
    results.HigherDerivatives,
    uncertainty.Uncertainty,
    results.Exact,
    results.ExactBlock,
    results.Points,
)


def _signature(function: Callable[..., object], name: str) -> str:
    """``name(parameters) -> returns`` as the source writes it, one parameter a line when
    they do not fit on one."""
    signature = inspect.signature(function)
    parts, starred = [], False
    for parameter in signature.parameters.values():
        if parameter.name == "self":
            continue
        if parameter.kind is parameter.KEYWORD_ONLY and not starred:
            parts.append("*")
        starred = starred or parameter.kind in (parameter.KEYWORD_ONLY, parameter.VAR_KEYWORD)
        text = ("**" if parameter.kind is parameter.VAR_KEYWORD else "") + parameter.name
        if parameter.annotation is not parameter.empty:
            text += f": {parameter.annotation}"
        if parameter.default is not parameter.empty:
            text += f" = {parameter.default!r}"
        parts.append(text)
    returns = f" -> {signature.return_annotation}"
    line = f"{name}({', '.join(parts)}){returns}"
    if len(line) > 90:
        line = f"{name}(\n" + "".join(f"    {part},\n" for part in parts) + f"){returns}"
    return f"```python\n{line}\n```\n"


def _doc(thing: object) -> str:
    return (inspect.getdoc(thing) or "") + "\n"


def _fields(kind: type) -> str:
    if hasattr(kind, "_fields"):  # a named tuple
        names = list(kind._fields)
    else:
        names = [f.name for f in dataclasses.fields(kind)]  # type: ignore[arg-type]
    return "Fields: " + ", ".join(f"`{name}`" for name in names) + ".\n"


def page() -> str:
    """The whole page."""
    parts = [
        "# The library API\n",
        "<!-- Written by docs/write_api.py from the docstrings: edit those, then run it. -->\n",
        "## `import gradcli`\n",
        _doc(gradcli),
        "## `gradcli.api`\n",
        _doc(api),
    ]
    for name in ("program", "text"):
        function = getattr(api, name)
        parts += [
            f"### `gradcli.{name}`\n",
            _signature(function, f"gradcli.{name}"),
            _doc(function),
        ]
    parts += ["### `gradcli.Program`\n", _doc(api.Program)]
    for attribute in ("targets", "inputs"):
        parts += [f"#### `Program.{attribute}`\n", _doc(getattr(api.Program, attribute))]
    for name, method in vars(api.Program).items():  # in the order of the class
        if name.startswith("_") or not inspect.isfunction(method):
            continue
        parts += [f"#### `Program.{name}`\n", _signature(method, name), _doc(method)]
    parts += ["## Results (`gradcli.results`)\n", _doc(results)]
    for kind in RESULTS:
        parts += [f"### `{kind.__name__}`\n", _doc(kind), _fields(kind)]
    return "\n".join(parts)


if __name__ == "__main__":
    PAGE.write_text(page())
