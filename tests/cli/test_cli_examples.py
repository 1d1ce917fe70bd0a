"""Every ``Example:`` of every command's --help runs, from an empty folder, as a user who
installed gradcli (not a clone) would type it into bash: a sample by its name
(``sample:NAME``), never a path of the repository. Run in-process, on the words bash makes
of the line, by the gradcli this test imports (the installed one, when run against an
installed package); a shell command after ``&&`` (the export's ``python y.py``) runs as a
process. ``gradcli repl, then: A  B`` types the lines A, B into the REPL."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from gradcli.base import samples as bundled
from gradcli.cli.app import app


def _examples() -> list[tuple[str, str]]:
    """(command, example line) for every ``Example:`` of every command's help."""
    group = typer.main.get_command(app)
    examples = []
    for name, command in sorted(group.commands.items()):  # type: ignore[attr-defined]
        for line in (command.help or "").splitlines():
            if line.strip().startswith("Example: "):
                examples.append((name, line.strip().removeprefix("Example: ")))
    return examples


EXAMPLES = _examples()


def _words(command: str) -> list[str]:
    """The words bash makes of a command line, as a user's shell would pass them."""
    done = subprocess.run(
        ["bash", "-c", 'words() { printf "%s\\0" "$@"; }; words ' + command],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"not a command line bash reads: {done.stderr}"
    return done.stdout.split("\0")[:-1]


def test_every_command_has_an_example():
    group = typer.main.get_command(app)
    assert {name for name, _ in EXAMPLES} == set(group.commands) - {"functions"}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "example"), EXAMPLES, ids=[e for _, e in EXAMPLES])
def test_the_example_runs_from_an_empty_folder(name, example, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gradcli, *after = example.split(" && ")
    typed = None
    if ", then: " in gradcli:  # the REPL: the lines typed into it
        gradcli, lines = gradcli.split(", then: ")
        typed = "".join(line.strip() + "\n" for line in lines.split("  ") if line.strip())
    words = _words(gradcli)
    assert words[:2] == ["gradcli", name]
    assert not any("samples/" in word or "tests/" in word for word in words), "use sample:NAME"
    done = CliRunner().invoke(app, words[1:], input=typed)
    # check's exit 1 is a check that ran and disagreed (at a kink), not a failure to run
    assert done.exit_code in ((0, 1) if name == "check" else (0,)), done.stderr or done.output
    assert done.stdout.strip() or any(tmp_path.iterdir()), "no output, no file written"
    for command in after:
        program, *args = _words(command)
        assert program == "python"
        ran = subprocess.run([sys.executable, *args], capture_output=True, text=True)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip()


def test_the_samples_are_listed_and_printed_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    listed = CliRunner().invoke(app, ["samples"])
    assert listed.exit_code == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names == [sample.name for sample in bundled.files()]
    assert {"vjp_example2.gc", "seed_first_example.py", "points.csv"} <= set(names)
    for name in ("vjp_example2", "vjp_example2.gc"):
        shown = CliRunner().invoke(app, ["samples", name])
        assert shown.exit_code == 0
        assert shown.stdout == (bundled.FOLDER / "vjp_example2.gc").read_text()


def test_a_sample_reads_as_its_file_does(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    by_path = CliRunner().invoke(app, ["vjp", "-f", "samples/vjp_example2.gc", "--v", "1,1,1"])
    monkeypatch.chdir(tmp_path)
    by_name = CliRunner().invoke(app, ["vjp", "-f", "sample:vjp_example2", "--v", "1,1,1"])
    assert by_name.exit_code == by_path.exit_code == 0
    assert by_name.stdout == by_path.stdout


def test_an_unknown_sample_is_the_users_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (["samples", "vjp_exampel2"], ["grad", "-f", "sample:vjp_exampel2"]):
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 2
        assert "no sample called 'vjp_exampel2'" in done.stderr
        assert "did you mean 'vjp_example2'? gradcli samples lists them" in done.stderr
