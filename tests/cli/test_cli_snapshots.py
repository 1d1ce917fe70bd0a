"""Snapshots of what people and scripts see: every sample, and each command on the seed examples.

Each sample's command comes from its ``# Run:`` comment, so a new sample is picked up without
editing this file. Regenerate after an intended change with ``pytest --snapshot-update``.
Snapshots keep 12 significant digits of a number; the ``*_match_torch`` tests check the same
commands' numbers at full precision.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from command_fixtures import SAMPLES, run_line

REPO = Path(__file__).resolve().parents[2]


def expected_exit(sample: Path) -> int:
    """0, unless the sample's comments say ``Exit N`` (a check that fails on purpose)."""
    match = re.search(r"^#.*\bExit (\d+)\b", sample.read_text(), re.MULTILINE)
    return int(match.group(1)) if match else 0


def with_format(args: list[str], fmt: str) -> list[str]:
    out, skip = [], False
    for word in args:
        if skip:
            skip = False
        elif word == "--format":
            skip = True
        elif not word.startswith("--format="):
            out.append(word)
    return [*out, "--format", fmt]


def captured(result) -> dict:
    return {"exit_code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr}


def test_the_samples_the_docs_name_exist_and_each_has_a_run_line():
    from gradcli.cli.app import COMMANDS

    pages = [REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    named = {name for page in pages for name in re.findall(r"samples/(\w+\.gc)", page.read_text())}
    assert named <= {sample.name for sample in SAMPLES}
    commands = set(COMMANDS)
    for sample in SAMPLES:
        args = run_line(sample)
        assert args[0] in commands, f"{sample.name}: unknown command {args[0]!r}"
        assert f"samples/{sample.name}" in args, "the Run line must use the sample itself"


@pytest.mark.parametrize("fmt", ["table", "json"])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_sample_output(sample, fmt, cli, parse_json, snapshot):
    """``table``: the Run line as written (its default output); ``json``: with --format json."""
    args = run_line(sample)
    result = cli(*(with_format(args, "json") if fmt == "json" else args))
    assert result.exit_code == expected_exit(sample), result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.strip(), "a sample prints its result"
    if fmt == "json":
        document = parse_json(result.stdout)
        assert document["command"] == run_line(sample)[0]
    else:
        assert "\x1b[" not in result.stdout, "no colour codes when stdout is not a terminal"
    assert captured(result) == snapshot


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_sample_numbers_match_torch(sample, cli, parse_json, torch_oracle):
    """The numbers of test_sample_output's snapshots (its tables show the same ones)."""
    args = with_format(run_line(sample), "json")
    result = cli(*args)
    assert result.exit_code == expected_exit(sample), result.stderr
    torch_oracle(args, parse_json(result.stdout))


# The seed post's examples, with the vector v where the output is not a scalar.
SEED_EXAMPLES = {
    "first_example": [],
    "neural_network": [],
    "vjp_example1": ["--v", "rand(3)"],
    "vjp_example2": ["--v", "1,1,1"],
    "log_general_case": ["--v", "[[3,2,0],[4,0,1]]"],
}
COMMANDS = {
    "eval": (["eval"], False),
    "grad": (["grad"], True),
    "vjp": (["vjp"], True),
    "jacobian": (["jacobian"], False),
    "jacobian-transpose": (["jacobian", "--transpose"], False),
}


def seed_args(example: str, command: str) -> list[str]:
    words, takes_v = COMMANDS[command]
    return [*words, "-f", f"samples/{example}.gc", *(SEED_EXAMPLES[example] if takes_v else [])]


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("example", list(SEED_EXAMPLES))
def test_seed_example_commands(example, command, fmt, cli, parse_json, csv_as_json, snapshot):
    """The CSV also holds the JSON's numbers to the last bit, so the oracle checks both."""
    words, _ = COMMANDS[command]
    result = cli(*seed_args(example, command), "--format", fmt)
    assert result.exit_code == 0, result.stderr
    if fmt == "json":
        assert parse_json(result.stdout)["command"] == words[0]
    elif fmt == "csv":
        assert result.stdout.startswith("tensor,")
        assert csv_as_json(*seed_args(example, command))
    else:
        assert "┃" in result.stdout
    assert captured(result) == snapshot


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("example", list(SEED_EXAMPLES))
def test_seed_example_numbers_match_torch(example, command, cli_json, torch_oracle):
    """The numbers of test_seed_example_commands' snapshots, in every format."""
    args = seed_args(example, command)
    torch_oracle(args, cli_json(*args))
