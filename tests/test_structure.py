"""The house keeps its shape: no import circle, the command line on top, small rooms.

The imports are read from the source with ``ast`` (deferred ones inside functions included,
those under ``if TYPE_CHECKING:`` left out, as they never run). Importing ``gradcli.a.b``
runs ``gradcli/a/__init__.py`` too, so an import also reaches each package above its target
that is not already a package of the importing module.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gradcli"


def _modules() -> dict[str, Path]:
    """Every module of gradcli by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["gradcli", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(name: str, path: Path) -> set[str]:
    """The gradcli modules that module ``name`` (at ``path``) imports when its code runs."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets.add(source)
            targets.update(f"{source}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    reached: set[str] = set()
    for target in targets:
        if target not in MODULES:
            continue
        parts = target.split(".")
        for i in range(2, len(parts) + 1):
            step = ".".join(parts[:i])
            if step in MODULES and step not in ancestors and step != name:
                reached.add(step)
    return reached


GRAPH = {name: _imported(name, path) for name, path in MODULES.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_import_graph_has_no_circle():
    circles = _circles(GRAPH)
    described = [
        " <-> ".join(c)
        + ": "
        + "; ".join(f"{a} -> {b}" for a in c for b in sorted(GRAPH[a]) if b in c)
        for c in circles
    ]
    assert not circles, "\n".join(described)


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_nothing_imports_the_command_line():
    """Only the command line itself and ``python -m gradcli`` import ``gradcli.cli``."""
    importers = sorted(
        name
        for name, reached in GRAPH.items()
        if not (name == "gradcli.cli" or name.startswith("gradcli.cli."))
        and name != "gradcli.__main__"
        and any(r == "gradcli.cli" or r.startswith("gradcli.cli.") for r in reached)
    )
    assert importers == []


def test_the_top_level_keeps_at_most_eight_modules():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_room_is_too_big(name):
    """A module of at most 1,200 lines; a class of at most 400."""
    text = MODULES[name].read_text()
    assert text.count("\n") <= 1200, f"{name}: {text.count(chr(10))} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
            assert lines <= 400, f"{name}.{node.name}: {lines} lines"


# -- one command, one entry --------------------------------------------------------------------

#: Where gradcli's own PyTorch lives: its functions torch.autograd.grad, .functional.jacobian,
#: torch.func.vjp, ... carry the names of the commands but are torch's, not the commands
#: (``ops/library.py`` is the library's namespace, ``gc.jacobian`` and ``gc.hessian`` among it).
PYTORCH = ("engine", "ops/library.py", "autograd", "func.py", "script", "nn", "optim")

#: A command's name as a word of something else, where it is one (module, name): why.
OTHER_MEANINGS = {
    ("lang/values.py", "eval"): "the mode of Python's own ast.parse",
    ("lang/pytorch.py", "grad"): "a tensor's .grad attribute",
    ("lang/check_expressions.py", "grad"): "a tensor's .grad attribute",
    ("ops/explaining.py", "jacobian"): "the kind of a local derivative in explain's steps",
    ("ops/exporting.py", "jacobian"): "a name the scripts of export write and print",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstrings' nodes in ``tree``."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)  # type: ignore[attr-defined]
        for node in ast.walk(tree)
        if isinstance(node, kinds) and ast.get_docstring(node, clean=False) is not None
    }


@functools.cache
def _named(path: Path) -> frozenset[str]:
    """The strings a module writes as constants in its code (docstrings aside, and the mode
    of Python's own ``ast.parse(text, mode="eval")``): how code looks a command up or branches
    on one."""
    tree = ast.parse(path.read_text())
    skipped = _docstrings(tree) | {
        id(keyword.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "mode"
    }
    return frozenset(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skipped
    )


def _naming(command: str) -> list[str]:
    """The modules outside ``render/`` and gradcli's PyTorch that name ``command`` as code."""
    found = []
    for path in MODULES.values():
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(("render/", *PYTORCH)) or (where, command) in OTHER_MEANINGS:
            continue
        if command in _named(path):
            found.append(where)
    return sorted(found)


def test_each_command_is_named_in_at_most_three_modules():
    """The command table names each command, the library's ``Program`` has its method, and
    at most one more module (the one that computes it) says its name: the command line, the
    REPL, --exact and --batch read the table."""
    from gradcli.commands.table import COMMANDS

    too_many = {}
    for command in (c.name for c in COMMANDS if c.program):
        naming = _naming(command)
        assert {"commands/table.py", "api.py"} <= set(naming), (command, naming)
        if len(naming) > 3:
            too_many[command] = naming
    assert not too_many, too_many


def test_each_other_meaning_is_still_there():
    """A name excused as a word of something else is still used so where it is excused."""
    stale = [(where, name) for where, name in OTHER_MEANINGS if name not in _named(PACKAGE / where)]
    assert not stale, stale
