"""The command table (``gradcli.commands.table``) against the front ends that read it: the
command line registers its commands, in its order, each with the table's own options and their
defaults; the library's ``Program`` has a method per computing command, taking no --exact,
--symbolic or --batch the table does not give the command; the REPL runs its commands."""

from __future__ import annotations

import importlib
import inspect

import pytest

from gradcli.api import Program
from gradcli.cli import app
from gradcli.cli import repl as repl_module
from gradcli.commands import outputs
from gradcli.commands.table import COMMANDS, entry

BATCH_OPTIONS = {"batch", "out", "dask"}  # --batch's, which take the points and their results


def cli_function(name: str):
    """The command line's function of the command ``name`` (as its module defines it)."""
    module = importlib.import_module(app.COMMANDS[name], "gradcli.cli")
    return getattr(module, f"{name}_command")


def own_parameters(name: str) -> dict[str, inspect.Parameter]:
    """The command line's own options of ``name`` (the program commands' shared ones aside)."""
    parameters = list(inspect.signature(cli_function(name)).parameters.values())
    if entry(name).program:
        parameters = parameters[1:]  # the Run of the shared options
    return {p.name: p for p in parameters}


def test_the_command_line_lists_the_table_in_its_order():
    """The table's commands, then ``samples``, which computes nothing."""
    assert list(app.COMMANDS) == [command.name for command in COMMANDS] + ["samples"]


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.program], ids=lambda c: c.name)
def test_the_command_line_takes_the_table_s_options(command):
    own = own_parameters(command.name)
    expected = {option.name for option in command.options}
    assert set(own) == expected | (BATCH_OPTIONS if command.batch else set())
    for option in command.options:
        assert own[option.name].default == option.default, option.name
    assert ("exact" in own) == command.exact
    assert ("symbolic" in own) == command.symbolic


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.compute], ids=lambda c: c.name)
def test_the_library_has_a_method_per_command(command):
    method = getattr(Program, command.name)
    parameters = inspect.signature(method).parameters
    assert ("exact" in parameters) == command.exact
    assert "symbolic" not in parameters or command.symbolic
    assert "batch" not in parameters or command.batch
    assert callable(command.function())


def test_several_outputs_are_the_table_s():
    assert outputs.SEVERAL_COMMANDS == tuple(c.name for c in COMMANDS if c.several)
    assert "uncertainty" in outputs.SEVERAL_COMMANDS and "eval" not in outputs.SEVERAL_COMMANDS


def test_the_repl_runs_the_table_s_commands():
    wanted = {command.name for command in COMMANDS if command.repl is not None}
    assert wanted <= set(repl_module.COMMANDS)
    assert {name for name in repl_module.COMMANDS if name in app.COMMANDS} == wanted
    usages = [usage for usage, _ in repl_module.HELP_COMMANDS]
    assert ":jvp [OUT] T..." in usages and ":hvp [OUT] V..." in usages
