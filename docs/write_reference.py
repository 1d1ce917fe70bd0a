"""Write the function reference of docs/language.md from the op table:
``python docs/write_reference.py``.

The reference is what ``gradcli functions --format markdown`` prints, between the page's two
marker lines; ``tests/test_readme.py`` fails while the two differ.
"""

from __future__ import annotations

from pathlib import Path

from gradcli.lang import reference

PAGE = Path(__file__).resolve().parent / "language.md"
START, END = "<!-- functions: start -->\n", "<!-- functions: end -->\n"


def with_reference(text: str) -> str:
    """``text`` with the part between the markers replaced by the reference."""
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    return before + START + reference.markdown() + END + after


if __name__ == "__main__":
    PAGE.write_text(with_reference(PAGE.read_text()))
