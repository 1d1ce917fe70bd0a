"""Start-up: what a warm call (a cached program) imports, and the one command the application
builds for it.

A warm call must not import sympy, nor the modules only a first parse, a file input, another
command or an error needs: the test reads ``sys.modules`` of a gradcli process as it exits.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from gradcli.cli import app as cli

VJP = ("vjp", "-e", "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1", "--x", "1,2", "--v", "1,1,1")

#: What a warm ``vjp --format json`` leaves alone (each one imported lazily where it is used).
NOT_ON_THE_WARM_PATH = (
    "sympy",  # the parser's: a cache miss only
    "gradcli.lang.build",
    "gradcli.lang.parse",
    "gradcli.lang.validate",  # the validator: a cached program was validated when parsed
    "gradcli.lang.pytorch",  # PyTorch code's reader
    "gradcli.lang.syntax",  # explains refused text
    "gradcli.lang.reference",  # gradcli functions
    "gradcli.domains.symbolic",  # --symbolic, check
    "gradcli.batch.plan",  # --batch
    "gradcli.script.traced",  # a PyTorch script as a command's program
    "gradcli.nn",  # the script interpreter's torch.nn
    "gradcli.render.table",  # --format table
    "rich",  # tables (and Typer's help)
    "numpy.random",  # rand, randn, dropout
    "gradcli.engine.torch_random",  # torch's generator: rand, randn, dropout
    "hashlib",  # the cache's SHA-256 is Python's own (hashlib loads OpenSSL)
    "tempfile",  # writing a file, or a cache entry
    "csv",  # reading a .csv input
    "zipfile",  # reading a .npz input
    # typer 0.29 and later run each option's value through a pydantic validator; gradcli
    # reads its words itself (cli.command_words), and never needs it
    "pydantic",
    "typer._adapters",
)


# ``python -m gradcli ARGS`` that writes, as it exits, the names in sys.modules to a file
# (``-X importtime`` would miss the modules imported by ``importlib.import_module``)
MODULES_AT_EXIT = """
import atexit, runpy, sys
listing, sys.argv = sys.argv[1], ["gradcli", *sys.argv[2:]]
atexit.register(lambda: open(listing, "w").write("\\n".join(sorted(sys.modules))))
runpy.run_module("gradcli", run_name="__main__")
"""


def imported(args: tuple[str, ...], env: dict[str, str], listing) -> tuple[set[str], str]:
    """The modules ``gradcli ARGS`` imports, in a new process, and its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", MODULES_AT_EXIT, str(listing), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(listing.read_text().split()), done.stdout


def test_a_warm_call_imports_neither_sympy_nor_what_it_does_not_use(tmp_path):
    env = {**os.environ, "GRADCLI_CACHE_DIR": str(tmp_path / "cache")}
    args = (*VJP, "--format", "json")
    first, first_output = imported(args, env, tmp_path / "first")  # parses, fills the cache
    warm, warm_output = imported(args, env, tmp_path / "warm")
    assert warm_output == first_output
    assert {"sympy", "gradcli.lang.validate", "gradcli.lang.build"} <= first  # what a miss needs
    assert "gradcli.lang.cache" in warm and "gradcli.render.json_format" in warm
    top = {name.split(".")[0] for name in warm}
    found = [m for m in NOT_ON_THE_WARM_PATH if m in warm or ("." not in m and m in top)]
    assert not found, f"a warm call imported {found}"


@pytest.mark.parametrize("command", ["vjp", "eval", "functions", "run", "export"])
def test_a_call_builds_its_one_command(command, capsys):
    """Typer reads the signature of the command that runs, not of every one."""
    group = typer.main.get_command(cli.app)
    assert group.main([command, "--help"], standalone_mode=False) == 0
    assert list(group.commands) == [command]
    assert command in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--help"], []])
def test_the_list_of_commands_builds_them_all(argv, capsys):
    group = typer.main.get_command(cli.app)
    group.main(argv, standalone_mode=False)
    assert list(group.commands) == list(cli.COMMANDS) and len(cli.COMMANDS) > 10
    listing = capsys.readouterr().out
    assert all(name in listing for name in cli.COMMANDS)


def test_shell_completion_lists_every_command():
    script = Path(sys.executable).with_name("gradcli")  # completion is keyed by its name
    if not script.exists():
        pytest.skip("gradcli is not installed beside this interpreter")
    env = {
        **os.environ,
        "_GRADCLI_COMPLETE": "complete_bash",
        "COMP_WORDS": "gradcli ",
        "COMP_CWORD": "1",
    }
    done = subprocess.run([script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == list(cli.COMMANDS)


def printed(*lines: str) -> list[str]:
    """The words a new Python process running ``lines`` prints."""
    code = "".join(f"{line}\n" for line in lines)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


@pytest.mark.parametrize("module", ["gradcli", "gradcli.cli.app"])
@pytest.mark.parametrize("before", [True, False])
def test_the_collector_is_as_it_was_after_the_imports(module, before):
    """Paused while gradcli's modules are imported, collection is on again after, unless the
    importer had it off; nothing is frozen: a library leaves the user's collector alone."""
    assert printed(
        "import gc, importlib",
        f"None if {before} else gc.disable()",
        f"importlib.import_module({module!r})",
        "print(gc.isenabled(), gc.get_freeze_count())",
    ) == [str(before), "0"]


@pytest.mark.parametrize("module", ["gradcli", "gradcli.cli.app"])
def test_the_imports_objects_are_not_left_young(module):
    """What the imports made (while the collector was paused) goes on in the oldest
    generation, unscanned: left young, the first collection after would scan all of it."""
    young, old = map(
        int,
        printed(
            "import gc, importlib",
            f"importlib.import_module({module!r})",
            "print(len(gc.get_objects(0)) + len(gc.get_objects(1)), len(gc.get_objects(2)))",
        ),
    )
    assert young < 10_000 < old


def test_the_imports_leave_what_the_user_froze_frozen():
    """A process that froze objects of its own keeps them frozen when it imports gradcli:
    neither given back to the collector nor joined by gradcli's."""
    assert printed(
        "import gc",
        "kept = [[] for _ in range(1000)]",
        "gc.freeze()",
        "frozen = gc.get_freeze_count()",
        "import gradcli",
        "print(gc.isenabled(), 1000 < gc.get_freeze_count() <= frozen)",
    ) == ["True", "True"]


def test_a_cache_miss_imports_sympy_with_the_collector_paused(tmp_path):
    """sympy's import (a first run) makes hundreds of thousands of objects: with the
    collector on, over 150 collections ran in a first vjp; paused, a few dozen in all."""
    *_, collections, parsed = printed(
        "import atexit, gc, os, sys",
        f"os.environ['GRADCLI_CACHE_DIR'] = {str(tmp_path / 'cache')!r}",
        "count = lambda: sum(s['collections'] for s in gc.get_stats())",
        "atexit.register(lambda: print(count(), 'sympy' in sys.modules))",
        f"sys.argv = ['gradcli', *{VJP!r}]",
        "from gradcli.cli.app import main",
        "main()",
    )
    assert parsed == "True" and int(collections) < 80


def test_only_the_first_import_of_sympy_freezes():
    """In the command line's process (a REPL's), the collector is paused, and what exists
    frozen, for sympy's first import only: a later parse leaves the session's objects alone."""
    assert printed(
        "import gc",
        "from gradcli.base import collector",
        "from gradcli.lang import parse_program",
        "collector.keep()",
        "parse_program('y = x**2')",
        "kept = gc.get_freeze_count()",
        "session = [[] for _ in range(1000)]",
        "parse_program('z = x**3')",
        "print(gc.isenabled(), gc.get_freeze_count() <= kept)",
    ) == ["True", "True"]


def test_the_command_line_freezes_what_its_imports_made():
    """``main`` (the console script) keeps the imports' objects out of later collections."""
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print(gc.get_freeze_count() > 10000, file=sys.stderr))\n"
        "sys.argv = ['gradcli', '--version']\n"
        "from gradcli.cli.app import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("gradcli ") and done.stderr.split()[-1] == "True"
