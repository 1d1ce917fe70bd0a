"""Lowering a script's imports: ``import torch``, ``import torch.nn.functional as F``,
``from torch.autograd.functional import jacobian``, ``from functools import partial``. A
script imports torch's modules and ``math``, ``functools``, ``itertools``, ``operator``,
``collections``, ``random``; any other import is refused before the script runs. ``Imports``
is a part of ``lower_statements.Statements``.
"""

from __future__ import annotations

import ast
from typing import Any

from . import objects
from .runtime import Frame

# What a script may import: torch's modules, and these Python modules
IMPORTABLE = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.autograd",
    "torch.autograd.functional",
    "torch.autograd.graph",
    "torch.autograd.forward_ad",
    "torch.autograd.function",
    "torch.func",
    "torch.linalg",
    "torch.special",
    "torch.functional",
    "torch.utils",
    "torch.utils.data",
    "math",
    "functools",
    "itertools",
    "operator",
    "collections",
    "random",
    "functorch",  # torch.func under its old name
    "numpy",  # what scripts make their data with (numpy_values.py)
)


class Imports:
    """The imports of ``Statements`` (which gives ``name_writer`` and ``refuse``)."""

    def name_writer(self, name: str, scope: Any) -> Any:  # Targets'
        raise NotImplementedError

    def refuse(self, node: ast.AST, message: str, hint: str | None = None) -> Exception:
        raise NotImplementedError

    def lower_Import(self, node: ast.Import, scope, expressions, interactive, function):
        bindings = []
        for alias in node.names:
            self._check_import(node, alias.name)
            if alias.asname is not None:
                bindings.append((self.name_writer(alias.asname, scope), alias.name))
            else:
                top = alias.name.split(".")[0]
                bindings.append((self.name_writer(top, scope), top))

        def bind(frame: Frame) -> None:
            for store, module in bindings:
                store(frame, frame.run.modules[module])

        return bind

    def lower_ImportFrom(self, node: ast.ImportFrom, scope, expressions, interactive, function):
        module = node.module or ""
        if module == "__future__":
            return lambda frame: None
        self._check_import(node, module)
        bindings = []
        for alias in node.names:
            if alias.name == "*":
                raise self.refuse(node, "gradcli run does not take 'import *'", "import the names")
            if alias.name.startswith("__"):
                raise self.refuse(node, f"gradcli run does not import {alias.name!r}")
            bindings.append((self.name_writer(alias.asname or alias.name, scope), alias.name))

        def bind(frame: Frame) -> None:
            run = frame.run
            source = run.modules[module]
            for store, name in bindings:
                dotted = f"{module}.{name}"
                if dotted in run.modules:
                    store(frame, run.modules[dotted])
                    continue
                try:
                    store(frame, objects.get(run, source, name))
                except AttributeError:
                    raise ImportError(f"cannot import name '{name}' from '{module}'") from None

        return bind

    def _check_import(self, node: ast.stmt, module: str) -> None:
        if module not in IMPORTABLE:
            top = module.split(".")[0]
            if top == "torch":
                raise self.refuse(
                    node,
                    f"gradcli run does not take {module} yet",
                    "gradcli run takes "
                    + ", ".join(m for m in IMPORTABLE if m.startswith("torch")),
                )
            raise self.refuse(
                node,
                f"gradcli reads PyTorch code: it does not import {module!r}",
                "import torch and its modules, numpy, math, functools, itertools, operator, random",
            )
