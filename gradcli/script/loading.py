"""A command's program from its text: gradcli's notation (``lang``), or, where that refuses a
PyTorch script, the script traced (``traced``).

A module apart from ``traced``, which imports the script interpreter's ``nn`` and the whole op
library: a command whose program is in gradcli's notation (nearly every call) imports neither.
"""

from __future__ import annotations

import ast

from ..base.errors import GradcliError


def is_pytorch_script(source: str) -> bool:
    """Whether ``source`` is Python that imports torch (``import torch``, ``from torch import
    nn``) and calls a backward pass (``.backward(``, ``torch.autograd.grad(``): a script for
    the interpreter, where gradcli's notation refuses it."""
    from ..lang.values import quiet_parse

    try:
        tree = quiet_parse(source, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(_imports_torch(node) for node in tree.body) and any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _PASSES
        for node in ast.walk(tree)
    )


_PASSES = ("backward", "grad")  # y.backward(v), torch.autograd.backward, torch.autograd.grad


def _imports_torch(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "torch" for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "torch"
    return False


def load_program(source: str, use_cache: bool = True, seed: int = 0, filename: str = "<stdin>"):
    """A command's program: in gradcli's notation (``lang``), or, where that refuses a
    PyTorch script, the script traced (``traced.trace_script``, imported only then)."""
    from ..lang import load_program as load_notation

    try:
        return load_notation(source, use_cache=use_cache)
    except GradcliError:
        if not is_pytorch_script(source):
            raise
    from .traced import trace_script

    return trace_script(source, filename, seed)
