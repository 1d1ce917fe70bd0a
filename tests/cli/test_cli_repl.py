"""``gradcli repl`` fed from a pipe (no terminal: no prompts, no readline): the same answers
as the commands, errors that do not end the session. The terminal itself (prompts, Tab,
history, Ctrl-C) is tests/terminal/test_terminal_repl.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradcli.cli import repl

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
    shown = documents[0]["values"]  # :set shows every value it changes
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
    assert "note: no value yet for x: give it with :set x VALUE" in errors
    assert any(line.startswith("error:") and "bad = y[7]" in done.stderr for line in errors)
    assert "error: --v has shape (3,) but the output y has shape (2, 2)" in errors
    (values,) = _documents(done.stdout)
    assert list(values["values"]) == ["x", "y", "z"]  # `bad` was not kept


def test_the_note_on_elements_without_values_gives_them_as_one_vector(cli):
    """x0 and x1 are the vector x's elements (as --x 1,2 gives them): the note says
    ``:set x 1,2``, not ``:set NAME VALUE`` (which led to two scalar inputs), and doing what it
    says gives the values."""
    done = _session(cli, ":format json", EXAMPLE, ":set x 1,2")
    assert done.stderr.splitlines() == [
        "note: no value yet for x0, x1 (elements of x): give them with :set x VALUE "
        "(e.g. :set x 1,2)"
    ]
    assert _documents(done.stdout)[0]["values"]["y"] == [1.0, 21.0, 6.0]


@pytest.mark.parametrize(
    ("missing", "note"),
    [
        (["x"], "note: no value yet for x: give it with :set x VALUE"),
        (["h0"], "note: no value yet for h0: give it with :set h0 VALUE"),  # a name, alone
        (
            ["x0", "x1", "w"],
            "note: no value yet for x0, x1 (elements of x), w: give them with "
            ":set x VALUE (e.g. :set x 1,2) and :set w VALUE",
        ),
        (
            ["a0", "a5"],
            "note: no value yet for a0, a5 (elements of a): give them with "
            ":set a VALUE (e.g. :set a rand(6))",
        ),
    ],
)
def test_the_note_names_the_set_for_each_input(missing, note):
    assert repl.missing_note(missing) == note


def test_set_shows_only_the_values_it_changes(cli):
    """:set x shows x and what depends on it, not every input and value again."""
    done = _session(
        cli,
        ":format json",
        "y = x * 2",
        "w = a + 1",
        ":set a 5",
        ":set x 1",
        ":set x 3",
        ":set x 3",
    )
    assert done.exit_code == 0, done.stderr
    assert [d["values"] for d in _documents(done.stdout)] == [
        {"a": 5.0},  # x has no value yet: a alone (w waits for nothing, but y does)
        {"x": 1.0, "y": 2.0, "a": 5.0, "w": 6.0},  # the program's values, all new
        {"x": 3.0, "y": 6.0},
        {"x": 3.0},  # the same value again: nothing else changes
    ]


def test_an_error_numbers_statements_as_they_were_typed(cli):
    """Not "statement 4 (line 2)" of the program gathered so far: the typed line's own
    statement, numbered only when the line holds several."""
    done = _session(cli, EXAMPLE, "z = sinn(y0)", "w = y0; q = y1 /", "bad = \u00ab")
    errors = done.stderr.splitlines()
    assert "error: unknown function 'sinn'" in errors
    assert "error: statement 2: nothing follows '/': it needs a value on its right" in errors
    assert not any("line 2" in line or "statement 4" in line for line in errors), errors
    assert any(line.startswith("error: column 7: the character U+00AB") for line in errors)
    # the same statement as a program of its own: the command line's words after "where"
    cli_error = cli("eval", "-e", "z = sinn(y0)", "--x", "1").stderr.splitlines()
    assert cli_error[0] == "error: statement 1 (line 1): unknown function 'sinn'"
    start = errors.index("error: unknown function 'sinn'")
    assert errors[start + 1 : start + len(cli_error)] == cli_error[1:]


@pytest.mark.parametrize("width", [40, 80, 100])
def test_help_breaks_between_words_at_any_width(width):
    text = repl.help_text(width)
    lines = text.splitlines()
    assert max(map(len, lines)) <= width
    assert text.split() == repl.help_text(10_000).split()  # every word whole, in order
    assert len(lines) > len(repl.HELP_COMMANDS)


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
    session = repl.ReplSession(statements=["total = sum(x)"])
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
