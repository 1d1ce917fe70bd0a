"""docs/commands/ has a page per command, and each page's options are the command's: every
option the command takes is named on its page or among the options every command takes
(docs/commands.md), and every option its Options section names is one the command takes."""

from __future__ import annotations

import re

import pytest
import typer
from doc_examples import REPO
from typer.main import get_command

from gradcli.cli.app import app

_GROUP = get_command(app)
_CONTEXT = typer.Context(_GROUP)
# every command, built as ``gradcli --help`` builds them (the group makes one when asked)
COMMANDS = {
    name: _GROUP.get_command(_CONTEXT, name)  # type: ignore[attr-defined]
    for name in _GROUP.list_commands(_CONTEXT)  # type: ignore[attr-defined]
}
DOCS = REPO / "docs"


def _section(text: str, heading: str) -> str:
    return text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _named(text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z0-9-]*", text))


def test_every_command_has_a_page_and_no_page_is_a_stray():
    pages = {page.stem for page in (DOCS / "commands").glob("*.md")}
    assert pages == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_page_names_every_option_and_no_other(name):
    options = {o for p in COMMANDS[name].params for o in p.opts if o.startswith("--")}
    page = (DOCS / "commands" / f"{name}.md").read_text()
    shared = _section((DOCS / "commands.md").read_text(), "Options every command takes")
    assert options - _named(page) - _named(shared) == set(), "options left out of the page"
    assert _named(_section(page, "Options")) - options == set(), "options the command lacks"
