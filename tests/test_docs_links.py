"""Every relative link of README.md and docs/ points to a file of the repository, and every
link to a heading (``page.md#heading``, ``#heading``) to a heading that page has."""

from __future__ import annotations

import re

import pytest
from doc_examples import PAGES, REPO, fenced_blocks

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text outside fenced blocks and inline code, where links are links."""
    lines = text.splitlines()
    for line, _, body in fenced_blocks(text):
        for k in range(line - 1, line + len(body) + 1):
            if k < len(lines):
                lines[k] = ""
    return re.sub(r"`[^`\n]*`", "", "\n".join(lines))


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as
    hyphens, a repeated one numbered (-1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for line in _prose(text.replace("`", "")).splitlines():
        heading = re.match(r"#{1,6} (.*)", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(text: str) -> list[str]:
    """The relative links of a page's text (not http:, mailto: ...)."""
    return [
        target
        for target in _LINK.findall(_prose(text))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_into_the_repository(page):
    for target in links(page.read_text()):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.is_relative_to(REPO) and file.exists(), f"{page.name}: {target}"
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file.read_text()), f"{page.name}: {target}"


def test_the_checker_sees_links_and_headings():
    text = "# Commands\n\n## The commands\n\n## A `--flag`, and more\n\n## Commands\n"
    assert anchors(text) == {"commands", "the-commands", "a---flag-and-more", "commands-1"}
    text = "[a](docs/a.md), [b](#b) `[c](c.md)` [d](https://x.org)\n```\n[e](e.md)\n```\n"
    assert links(text) == ["docs/a.md", "#b"]


def test_the_readme_links_every_page_of_docs():
    """No page is left out of reach: the README links every page of docs/ but the command
    pages (which docs/commands.md lists) and the generated API page (which library.md links)."""
    readme = links((REPO / "README.md").read_text())
    linked = {(REPO / target.partition("#")[0]).resolve() for target in readme}
    for page in sorted((REPO / "docs").glob("*.md")):
        assert page in linked, page.name
    listed = {
        (REPO / "docs" / target.partition("#")[0]).resolve()
        for target in links((REPO / "docs" / "commands.md").read_text())
    }
    for page in sorted((REPO / "docs" / "commands").glob("*.md")):
        assert page in listed, page.name
