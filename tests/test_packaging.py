"""What the package tells PyPI: a short page whose examples print what it shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_readme import _same

REPO = Path(__file__).resolve().parents[1]
PYPI_PAGE = REPO / "docs" / "pypi.md"


def test_pypi_gets_the_short_page():
    assert 'readme = "docs/pypi.md"' in (REPO / "pyproject.toml").read_text().splitlines()
    assert len(PYPI_PAGE.read_text().splitlines()) <= 60


def _blocks(text: str) -> list[list[str]]:
    """The lines of each fenced block of a Markdown text."""
    blocks: list[list[str]] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
            if inside:
                blocks.append([])
        elif inside:
            blocks[-1].append(line)
    return blocks


def _examples() -> list[tuple[str, list[str]]]:
    """The page's examples: (the command, with any here-document, the lines it prints)."""
    examples = []
    for lines in _blocks(PYPI_PAGE.read_text()):
        if not lines[0].startswith("$ gradcli "):
            continue
        end = lines.index("EOF") + 1 if lines[0].endswith("<<'EOF'") else 1
        examples.append(("\n".join(lines[:end])[2:], lines[end:]))
    return examples


def test_the_pypi_pages_examples_print_what_it_shows(tmp_path):
    examples = _examples()
    assert len(examples) == 3
    gradcli = f"{sys.executable} -m gradcli"
    for command, shown in examples:
        done = subprocess.run(
            ["bash", "-c", gradcli + command.removeprefix("gradcli")],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        if shown[0].startswith("{"):  # floats to 1e-6: the last bits are libm's
            assert _same(json.loads(done.stdout), json.loads(shown[0])), done.stdout
        else:
            assert done.stdout.splitlines() == shown
