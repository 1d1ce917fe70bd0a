"""``gradcli repl`` fed from a pipe (no terminal: no prompts, no readline): the same answers
as the commands, errors that do not end the session. The terminal itself (prompts, Tab,
history, Ctrl-C) is tests/terminal/test_terminal_repl.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradcli import repl

EXAMPLE = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"


def _session(cli, *lines: str):
    return cli("repl", input="\n".join(lines) + "\n")


def _documents(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_each_command_answers_as_the_command_line_does(cli):
    """The same compute function and renderer: the JSON of each REPL command is the
    command's, for the program typed so far."""
    commands = [
        (":grad y1", ["grad", "--of", "y1"]),
        (":vjp y 1,1,1", ["vjp", "--v", "1,1,1"]),
        (":jacobian", ["jacobian"]),
        (":jvp 1,0", ["jvp", "--t", "1,0"]),
        (":hessian y1", ["hessian", "--of", "y1"]),
        (":hvp y1 x=0,1", ["hvp", "--of", "y1", "--v", "x=0,1"]),
        (":check", ["check"]),
        (":explain y 1,2,3", ["explain", "--v", "1,2,3"]),
        (":eval", ["eval"]),
        (":graph y2", ["graph", "--of", "y2"]),
    ]
    done = _session(cli, ":format json", EXAMPLE, ":set x 1,2", *(line for line, _ in commands))
    assert done.exit_code == 0, done.stderr
    documents = _documents(done.stdout)
    shown = documents[0]["values"]  # :set shows every value
    assert shown["x"] == [1.0, 2.0] and shown["y"] == [1.0, 21.0, 6.0]
    for (line, args), document in zip(commands, documents[1:], strict=True):
        expected = cli(*args, "-e", EXAMPLE, "--x", "1,2", "--format", "json")
        assert document == json.loads(expected.stdout), line


def test_statements_show_the_values_they_assign(cli):
    done = _session(cli, ":format json", ":set x 1,2", "y = x * 3", "z = sum(y); w = z + 1")
    assert [d["values"] for d in _documents(done.stdout)] == [
        {"x": [1.0, 2.0]},
        {"y": [3.0, 6.0]},
        {"z": 9.0, "w": 10.0},
    ]


def test_a_bad_line_is_reported_and_left_out_and_the_session_goes_on(cli):
    done = _session(
        cli,
        "y = x + 2",
        "z = y @ y @ y",
        ":set x ones(2, 2)",
        "bad = y[7]",
        ":vjp y ones(3)",
        ":format json",
        ":eval",
    )
    assert done.exit_code == 2  # from a pipe a failed line tells in the exit status
    errors = done.stderr.splitlines()
    assert "note: no value yet for x: give it with :set NAME VALUE" in errors
    assert any(line.startswith("error:") and "bad = y[7]" in done.stderr for line in errors)
    assert "error: --v has shape (3,) but the output y has shape (2, 2)" in errors
    (values,) = _documents(done.stdout)
    assert list(values["values"]) == ["x", "y", "z"]  # `bad` was not kept


def test_a_name_that_is_no_output_is_said_to_be_none(cli):
    # it was read as the vector v: "v: the name 'nothere' is not allowed in a value"
    done = _session(cli, "y = x ** 2", ":set x 1,2", ":grad nothere", ":vjp nan,1")
    errors = done.stderr.splitlines()
    assert "error: the program has no output 'nothere'" in errors
    assert "hint: names are: y" in errors
    assert done.stdout.count("J^T v for x") == 1  # nan is a value, not a name
    # of several outputs, the one the program lacks (it was read as --wrt, or as the vector)
    done = _session(cli, "y = x ** 2", "z = sum(x)", ":set x 1,2", ":jacobian y,q", ":grad z,q")
    assert done.stderr.splitlines().count("error: the program has no output 'q'") == 2


def test_only_a_failed_line_makes_a_piped_session_fail(cli):
    assert _session(cli, "y = x + 2", ":set x 1", ":grad").exit_code == 0
    assert _session(cli, ":grad").exit_code == 2  # no program yet


def test_a_value_waits_for_the_statement_that_uses_it(cli):
    done = _session(cli, ":format json", ":set w 2", "out = w * 5", ":grad")
    assert _documents(done.stdout)[-1]["grads"] == {"w": 5.0}


def test_undo_clear_program_and_help(cli):
    done = _session(
        cli,
        ":set x 1",
        "y = x + 1",
        "z = y * 2",
        ":undo",
        ":program",
        ":clear",
        ":program",
        ":help",
        ":quit",
        "never = 1",
    )
    assert done.exit_code == 0, done.stderr
    assert "dropped: z = y * 2" in done.stdout
    assert "y = x + 1\n:set x 1\n" in done.stdout
    for command in repl.COMMANDS:
        assert f":{command}" in done.stdout or command == "exit"
    assert "never" not in done.stdout


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (":gard", "error: unknown command :gard"),
        (":format xml", "error: :format: 'xml' is not one of table, json, csv"),
        (":precision 0", "error: :precision '0'"),
        (":set x", "error: :set takes a name and a value"),
        (":unset q", "error: 'q' has no value given with :set"),
        (":vjp", "error: :vjp needs the vector v"),
        (":vjp 1", "error: there is no program yet"),
    ],
)
def test_bad_commands_say_what_is_wrong(cli, line, message):
    done = _session(cli, line)
    assert done.exit_code == 2
    assert done.stderr.splitlines()[0] == message


def test_repl_help_has_an_example(cli):
    done = cli("repl", "--help")
    assert done.exit_code == 0 and "Example: gradcli repl" in done.stdout


def test_plain_gradcli_off_a_terminal_prints_the_usage(cli):
    done = cli()
    assert "Usage" in done.stdout + done.stderr and "gradcli repl:" not in done.stdout


def test_completion_offers_commands_names_and_functions():
    session = repl.Session(statements=["total = sum(x)"])
    complete = repl.Completer(session)
    assert complete.candidates(":ja") == [":jacobian"]
    assert "total" in complete.candidates("to") and "x" in complete.candidates("x")
    assert complete.candidates("logsumex") == ["logsumexp"]
    assert "randn" in complete.candidates("rand")  # constructors too
    assert [complete(":he", i) for i in range(3)] == [":help", ":hessian", None]


def test_continued_lines():
    assert repl.unfinished(["y = sum("]) and repl.unfinished(["y = x + \\"])
    assert not repl.unfinished(["y = sum(x)  # (a comment"])
    assert repl.unfinished(["y = f(", "x, ["]) and not repl.unfinished(["y = f(", "x)"])


def test_the_history_lives_in_the_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert repl.history_path() == tmp_path / "gradcli" / "history"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/path")  # the specification says: ignore it
    assert repl.history_path() == Path.home() / ".local" / "share" / "gradcli" / "history"
