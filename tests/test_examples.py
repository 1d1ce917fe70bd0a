"""Every shell example of README.md and docs/ prints what its page shows (tests/doc_examples.py
says how a page marks an example and how the output is compared)."""

from __future__ import annotations

import pytest
from doc_examples import REPO, Example, all_examples, folder, line_matches, missing, run

EXAMPLES = all_examples()
_FOLDERS: dict = {}


def _page_folder(example: Example, tmp_path_factory) -> tuple:
    """The page's folder, after the page's earlier examples ran in it (they write files that
    later ones read, as a reader's shell would hold them)."""
    if example.page not in _FOLDERS:
        work, env = folder(tmp_path_factory.mktemp(example.page.stem))
        _FOLDERS[example.page] = (work, env, set())
    work, env, done = _FOLDERS[example.page]
    for earlier in EXAMPLES:
        if earlier.page == example.page and earlier.line < example.line:
            if earlier.line not in done and not earlier.not_run and not missing(earlier):
                run(earlier, work, env)
                done.add(earlier.line)
    done.add(example.line)
    return work, env


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_the_example_prints_what_its_page_shows(example, tmp_path_factory):
    if example.not_run:
        pytest.skip(f"{example.name}: {example.annotation}")
    absent = missing(example)
    if absent:
        pytest.skip(f"{example.name} needs {', '.join(absent)}")
    work, env = _page_folder(example, tmp_path_factory)
    problems = run(example, work, env)
    assert not problems, "\n\n".join(problems)


def test_every_page_with_a_gradcli_command_in_a_block_has_it_checked():
    """A block that shows a `$ gradcli` command is an example (no info string, first line a
    command), so that none is left out of the check by its layout."""
    from doc_examples import PAGES, fenced_blocks

    checked = {(e.page, e.line) for e in EXAMPLES}
    for page in PAGES:
        for line, _info, body in fenced_blocks(page.read_text()):
            if any(text.startswith("$ gradcli") for text in body):
                assert (page, line) in checked, f"{page.relative_to(REPO)}:{line}"


@pytest.mark.parametrize(
    ("got", "want", "same"),
    [
        ("│ x │   4 │  23 │", "│ x │   4 │  23 │", True),
        ("│ x │ 4.0 │  23 │", "│ x │   4 │  23 │", False),  # padding is text
        ("│ b │ 0.4200 │", "│ b │   0.42 │", False),
        ("y,0,2.8018812680339340", "y,0,2.8018812680339336", True),  # the last bits
        ("y,0,2.8019812680339336", "y,0,2.8018812680339336", False),
        ('{"x": [4.0, 23.0]}', '{"x": [4.0000000000001, 23.0]}', True),
        ('{"x": [4.0, 23.0]}', '{"x": [4.0, 23.0], "w": []}', False),
        ('{"x": 4}', '{"x": 4.0}', True),
        ('{"x": "4"}', '{"x": 4.0}', False),
        ("warning: z.grad: Reading .grad of ...", "warning: z.grad: ...", True),
        ("warning: y.grad: Reading", "warning: z.grad: ...", False),
    ],
)
def test_a_line_is_compared_as_the_checker_says(got, want, same):
    assert line_matches(got, want) is same


def test_numbers_that_vary_match_any_number_and_nothing_else():
    shown = "error: timed out after 1 s (--timeout) (backward pass 2980 of 10000)"
    assert line_matches(shown.replace("2980", "3121"), shown, vary=True)
    assert not line_matches(shown.replace("2980", "3121"), shown)
    assert not line_matches(shown.replace("backward", "forward"), shown, vary=True)
