"""``gradcli repl``: type statements one at a time, then ask for derivatives of what is typed.

A session keeps the statements typed so far (the program) and the values given with
``:set``; each command (``:grad``, ``:vjp``, ``:jacobian``, ...) binds them and calls the
command line's compute function (``compute``), and the answer is written by the command
line's renderers, in the session's ``:format``. A bad line prints the command line's error
and the session goes on; Ctrl-C cancels the line (or the computation), Ctrl-D ends.

Where the input is a terminal, lines are read with readline: history kept across sessions
in ``$XDG_DATA_HOME/gradcli/history`` (a private directory; a history that cannot be read or
written is left alone), tab completion of commands, names and functions.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..commands.compute import DTYPES
from ..commands.table import COMMANDS as TABLE
from ..commands.table import Command
from .guard import guard
from .options import Debug, Dtype, Seed, budget, check_choice, command

if TYPE_CHECKING:
    import numpy as np

    from ..base.errors import GradcliError
    from ..commands.compute import Bound
    from ..lang import ParsedProgram
    from ..results import Result

#: The table's commands the REPL runs as :commands, in :help's order: the drawings (graph) last.
REPL_COMMANDS = sorted(
    (command for command in TABLE if command.repl is not None),
    key=lambda command: command.repl == "drawing",
)

PROMPT, MORE = "gradcli> ", "     ... "
FORMATS = ("table", "json", "csv")
HISTORY_LENGTH = 1000

BANNER = "gradcli repl: statements like `y = x ** 2`, commands like :grad; :help lists them"
HELP_INTRO = """\
Statements (`name = expression`, `;` between them) add to the program; their values are shown.
An open bracket or a trailing \\ continues the statement on the next line.
Commands act on the program typed so far (OUT: the output, default the last assigned name; \
several, comma-separated: y,z, as --of; then V: NAME=VALUE for each, or VALUEs in order):"""
HELP_COMMANDS = (
    (":set NAME VALUE", "give an input a value (e.g. 1,2 or ones(2,2) or rand(3) or @x.npy)"),
    (":unset NAME", "forget an input's value"),
    *((command.usage(), command.repl_help) for command in REPL_COMMANDS),
    (":format [table|json|csv]", "how answers are written (now: {format})"),
    (":precision [N]", "significant digits in tables (now: {precision})"),
    (":program", "the statements and values so far"),
    (":undo", "drop the last statement"),
    (":clear", "drop every statement and value"),
    (":help", "this list"),
    (":quit", "end (or Ctrl-D); Ctrl-C cancels the line"),
)
NARROWEST_DESCRIPTION = 24  # narrower beside the commands, descriptions go under them
PLAIN_WIDTH = 80  # of the help off a terminal


def help_text(width: int, format: str = "table", precision: int = 4) -> str:
    """What ``:help`` prints, its sentences broken between words to ``width`` columns: each
    command, then its description beside it, or under it where the terminal leaves too
    little room beside."""
    from ..base.notice import wrap

    usage_width = max(len(usage) for usage, _ in HELP_COMMANDS)
    lines = [wrap(HELP_INTRO, width)]
    indent = 2 + usage_width + 1
    beside = width - indent >= NARROWEST_DESCRIPTION
    for usage, description in HELP_COMMANDS:
        text = description.format(format=format, precision=precision)
        under = " " * (indent if beside else 6)
        wrapped = textwrap.wrap(
            text,
            width - len(under),
            break_long_words=False,
            break_on_hyphens=False,
        )
        if beside:
            lines.append(f"  {usage:<{usage_width}} {wrapped[0]}")
            wrapped = wrapped[1:]
        else:
            lines.append(f"  {usage}")
        lines.extend(under + line for line in wrapped)
    return "\n".join(lines)


def _out(text: str) -> None:
    """``text`` on stdout, its sentences broken between words to the terminal's width."""
    from ..base.notice import say

    say(text, sys.stdout)


def history_path() -> Path:
    """``$XDG_DATA_HOME/gradcli/history`` (``~/.local/share`` when the variable is unset or
    not an absolute path, as the XDG base directory specification says)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "gradcli" / "history"


@dataclass
class ReplSession:
    """A REPL session: the statements and the input values typed so far, and how answers are
    written."""

    dtype: str = "float64"
    seed: int = 0
    format: str = "table"
    precision: int = 4
    statements: list[str] = field(default_factory=list)
    given: dict[str, np.ndarray] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)  # as last shown
    done: bool = False

    # -- the program --------------------------------------------------------------------------

    def program(self, statements: list[str] | None = None) -> ParsedProgram:
        from ..base.errors import GradcliError
        from ..lang import load_program

        source = "\n".join(self.statements if statements is None else statements)
        if not source.strip():
            raise GradcliError(
                "there is no program yet", hint="type a statement first, e.g. y = x ** 2"
            )
        return load_program(source)

    def given_for(self, program: ParsedProgram) -> dict[str, np.ndarray]:
        """The values given for inputs of ``program`` (a value may wait for its statement)."""
        used = set(program.inputs(set(self.given)))
        return {n: a for n, a in self.given.items() if program.input_name(n) in used}

    def missing(self, program: ParsedProgram) -> list[str]:
        """The program's inputs that have no value yet."""
        given = self.given_for(program)
        inputs = program.inputs(set(given))
        known = {program.input_name(n) for n in given} | set(program.declared)
        return [name for name in inputs if name not in known]

    def bound(
        self, wrt: list[str] | None = None, tangents: list[str] | None = None, *, program=None
    ) -> Bound:
        from ..commands.compute import bind

        program = program or self.program()
        given = self.given_for(program)
        return bind(program, given, wrt, self.dtype, self.seed, None, tangents or ())

    # -- one line -----------------------------------------------------------------------------

    def handle(self, text: str) -> None:
        """Act on one complete input: a command (``:name ...``) or statements."""
        text = text.strip()
        if not text or text.startswith("#"):
            return
        if text.startswith(":"):
            name, _, rest = text[1:].partition(" ")
            self.command(name, rest.strip())
        else:
            self.add(text)

    def add(self, text: str) -> None:
        """Add statements to the program, showing the values they assign; a statement that
        does not parse or run is not added."""
        from ..base.errors import GradcliError
        from ..commands.compute import evaluate

        before = self.program(self.statements).targets if self.statements else []
        try:
            program = self.program([*self.statements, text])
            missing = self.missing(program)
            result = None if missing else evaluate(self.bound(program=program))
        except GradcliError as error:
            self.number_as_typed(error, text)
            raise
        new = [name for name in program.targets if name not in before] or program.targets[-1:]
        self.statements.append(text)  # it parsed (and ran, with values for its inputs): keep it
        if result is None:
            _say(missing_note([n.split("#")[0] for n in missing]))
            return
        self.values = dict(result.values)
        self.show(_only(result, new, program))

    def number_as_typed(self, error: GradcliError, text: str) -> None:
        """Make the place an error in the statements of ``text`` names their place as they
        were typed: statement 2 of the line typed (no number for a line of one statement),
        not statement 5, line 3 of the program the session has gathered."""
        from ..lang.validate import split_statements

        lines_before = "\n".join(self.statements).count("\n") + 1 if self.statements else 0
        statement = re.fullmatch(r"statement (\d+) \(line (\d+)\)", error.where or "")
        line = re.fullmatch(r"line (\d+), (column \d+)", error.where or "")
        if statement and int(statement[2]) > lines_before:
            before = len(split_statements("\n".join(self.statements))) if self.statements else 0
            several = len(split_statements(text)) > 1
            error.where = f"statement {int(statement[1]) - before}" if several else None
        elif line and int(line[1]) > lines_before:
            error.where = line[2]

    def command(self, name: str, rest: str) -> None:
        from ..base.errors import GradcliError

        action = COMMANDS.get(name)
        if action is None:
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=1)
            raise GradcliError(
                f"unknown command :{name}",
                hint=f"did you mean :{close[0]}?" if close else "type :help for the commands",
            )
        action(self, _words(rest))

    def show(self, result: Result) -> None:
        """Warnings to stderr and the result to stdout, as the command line writes them."""
        from ..base.bounds import check_rendering
        from ..render import Options, emit

        check_rendering(result, self.format)
        emit(result, self.format, Options(self.precision))

    def output_and_rest(self, words: list[str]) -> tuple[str | None, list[str]]:
        """The optional OUT of a command, taken when the first word names something of the
        program (an assigned name or the vector its elements make)."""
        if words and self.statements:
            program = self.program()
            names = set(program.targets) | set(program.groups())
            parts = words[0].split(",")
            if all(part in names for part in parts):  # y, or y,z
                return words[0], words[1:]
            unknown = [part for part in parts if part not in names]
            several = len(parts) > 1 and len(unknown) < len(parts)  # y,q: outputs, q unknown
            if several or (words[0].isidentifier() and words[0] not in ("nan", "inf")):
                from ..base.errors import GradcliError

                raise GradcliError(
                    f"the program has no output {unknown[0]!r}",
                    hint=f"names are: {', '.join(sorted(names))}",
                )
        return None, words

    def value(self, words: list[str], name: str) -> np.ndarray | None:
        from ..lang.values import parse_value

        return parse_value(" ".join(words), name, self.seed) if words else None

    def vectors(self, of: str | None, words: list[str]):
        """The vector v of :grad and :vjp: one value (its words joined), or of several
        outputs one word each (``outputs.read_vectors``)."""
        from ..commands.outputs import read_vectors, several

        return read_vectors(words, self.seed) if several(of) else self.value(words, "v")


def missing_note(missing: list[str]) -> str:
    """The note on inputs without a value and the ``:set`` that gives each: elements ``x0, x1``
    are given together, as the vector x (``:set x 1,2``), as ``--x 1,2`` gives them on the
    command line."""
    from ..lang.statement import element_of

    elements: dict[str, list[tuple[str, int]]] = {}
    for name in missing:
        parts = element_of(name)
        if parts is not None:
            elements.setdefault(parts[0], []).append((name, parts[1]))
    vectors = {base: found for base, found in elements.items() if len(found) > 1}
    said, sets = [], []
    for name in missing:
        parts = element_of(name)
        base = parts[0] if parts is not None and parts[0] in vectors else None
        if base is None:
            said.append(name)
            sets.append(f":set {name} VALUE")
        elif name == vectors[base][0][0]:
            size = max(index for _, index in vectors[base]) + 1
            example = ",".join(map(str, range(1, size + 1))) if size <= 4 else f"rand({size})"
            said.append(f"{', '.join(n for n, _ in vectors[base])} (elements of {base})")
            sets.append(f":set {base} VALUE (e.g. :set {base} {example})")
    them = "it" if len(sets) == 1 and not vectors else "them"
    return f"note: no value yet for {', '.join(said)}: give {them} with {' and '.join(sets)}"


# -- the commands ------------------------------------------------------------------------------


def _set(session: ReplSession, words: list[str]) -> None:
    from ..base.errors import GradcliError
    from ..commands.compute import evaluate
    from ..results import Values

    if len(words) < 2 or not words[0].isidentifier():
        raise GradcliError(":set takes a name and a value", hint="e.g. :set x 1,2")
    name = words[0]
    array = session.value(words[1:], name)
    assert array is not None
    previous = session.given.get(name)
    session.given[name] = array
    try:
        if session.statements:
            program = session.program()
            if name in session.given_for(program) and not session.missing(program):
                result = evaluate(session.bound(program=program))
                changed = [
                    n
                    for n, value in result.values.items()
                    if n == name or not _same(session.values.get(n), value)
                ]
                session.values = dict(result.values)
                session.show(_only(result, changed, program))  # the values it changes
                return
        session.show(Values(output=name, values={name: array}))
    except BaseException:
        if previous is None:
            del session.given[name]
        else:
            session.given[name] = previous
        raise


def _same(before: np.ndarray | None, after: np.ndarray) -> bool:
    """Whether a value shown before is the value now (nan where nan was)."""
    import numpy as np

    if before is None or np.shape(before) != np.shape(after):
        return False
    return bool(np.array_equal(before, after, equal_nan=np.asarray(after).dtype.kind in "fc"))


def _unset(session: ReplSession, words: list[str]) -> None:
    from ..base.errors import GradcliError

    for name in words:
        if session.given.pop(name, None) is None:
            raise GradcliError(f"{name!r} has no value given with :set")


def _computed(command: Command) -> Callable[[ReplSession, list[str]], None]:
    """The :command of ``command``'s table entry: it reads the output and what the entry's
    ``repl`` says comes after it, binds the session's program and computes."""

    def act(session: ReplSession, words: list[str]) -> None:
        from ..base.errors import GradcliError

        of, rest = session.output_and_rest(words)
        compute, kind, name = command.function(), command.repl, command.name
        if kind == "vectors needed" and not rest:
            raise GradcliError(f":{name} needs the vector v", hint=f"e.g. :{name} y 1,1,1")
        if kind in ("vectors", "vectors needed"):
            result = compute(session.bound(), of, session.vectors(of, rest))
        elif kind == "wrt":
            wrt = [n.strip() for word in rest for n in word.split(",") if n.strip()] or None
            result = compute(session.bound(wrt), of, wrt)
        elif kind == "named":
            from ..lang.values import named_values

            option = command.named_option()
            named = named_values(rest, option.name, session.seed, bare="x")
            tangents = list(named) if option.kind == "tangents" else None
            result = compute(session.bound(tangents=tangents), of, named)
        elif kind == "vector":
            result = compute(session.bound(), of, session.value(rest, "v"))
        else:
            result = compute(session.bound(), of)
        if kind == "drawing":  # in its own formats (a table for csv), no warnings
            from ..render import Options, render

            render(result, "table" if session.format == "csv" else session.format, Options())
        else:
            session.show(result)

    return act


def _format(session: ReplSession, words: list[str]) -> None:
    if words:
        check_choice(":format", words[0], FORMATS)
        session.format = words[0]
    print(f"format: {session.format}")


def _precision(session: ReplSession, words: list[str]) -> None:
    from ..base.errors import GradcliError

    if words:
        if not words[0].isdigit() or not 1 <= int(words[0]) <= 17:
            raise GradcliError(f":precision {words[0]!r}", hint="give a whole number, 1 to 17")
        session.precision = int(words[0])
    print(f"precision: {session.precision}")


def _program(session: ReplSession, words: list[str]) -> None:
    from ..render import short

    for statement in session.statements:
        print(statement)
    for name, array in session.given.items():
        print(f":set {name} {short(array, session.precision)}")


def _undo(session: ReplSession, words: list[str]) -> None:
    if session.statements:
        print(f"dropped: {session.statements.pop()}")


def _clear(session: ReplSession, words: list[str]) -> None:
    session.statements.clear()
    session.given.clear()
    session.values.clear()


def _help(session: ReplSession, words: list[str]) -> None:
    from ..base.notice import terminal_width

    width = terminal_width(sys.stdout) or PLAIN_WIDTH
    print(help_text(width, session.format, session.precision))


def _quit(session: ReplSession, words: list[str]) -> None:
    session.done = True


COMMANDS: dict[str, Callable[[ReplSession, list[str]], None]] = {
    "set": _set,
    "unset": _unset,
    **{command.name: _computed(command) for command in REPL_COMMANDS},
    "format": _format,
    "precision": _precision,
    "program": _program,
    "undo": _undo,
    "clear": _clear,
    "help": _help,
    "quit": _quit,
    "exit": _quit,
}


# -- reading lines -----------------------------------------------------------------------------


def _say(text: str) -> None:
    from ..base.notice import say

    say(text)


def _only(result: Any, names: list[str] | None, program: ParsedProgram) -> Any:
    """An eval result cut down to ``names`` (all, for None), where a vector of elements
    (``y0 = ...; y1 = ...``) stands for its elements."""
    wanted = set(result.values if names is None else names)
    for base, elements in program.groups().items():
        if wanted & set(filter(None, elements)):
            wanted = (wanted | {base}) - set(elements)
    values = {n: a for n, a in result.values.items() if n in wanted}
    return replace(result, values=values or result.values)


def _words(text: str) -> list[str]:
    """``text`` split at spaces outside brackets: ``y ones(2, 2)`` is two words."""
    words, depth, current = [], 0, ""
    for character in text:
        if character in "([{":
            depth += 1
        elif character in ")]}":
            depth = max(0, depth - 1)
        if character.isspace() and depth == 0:
            if current:
                words.append(current)
            current = ""
        else:
            current += character
    return [*words, current] if current else words


def unfinished(lines: list[str]) -> bool:
    """Whether the statement of ``lines`` goes on on the next line: the last ends with
    ``\\``, or a bracket is still open."""
    if lines[-1].endswith("\\"):
        return True
    depth = 0
    for line in lines:
        for character in line.split("#", 1)[0]:
            depth += (character in "([{") - (character in ")]}")
    return depth > 0


def _join(lines: list[str]) -> str:
    return " ".join((line[:-1] if line.endswith("\\") else line).strip() for line in lines)


class Completer:
    """Tab completion: commands after ``:``, else the session's names and the functions."""

    def __init__(self, session: ReplSession) -> None:
        self.session = session
        self.matches: list[str] = []

    def candidates(self, text: str) -> list[str]:
        if text.startswith(":"):
            return sorted(f":{name}" for name in COMMANDS if f":{name}".startswith(text))
        from ..lang.functions import FUNCTIONS
        from ..lang.reference import CONSTANTS
        from ..lang.values import CONSTRUCTORS

        names: set[str] = set(self.session.given)
        if self.session.statements:
            try:
                program = self.session.program()
                names |= set(program.targets) | set(program.groups())
                names |= {n.split("#")[0] for n in program.inputs(set(self.session.given))}
            except Exception:  # a completion never fails: the names it could read
                pass
        words = names | set(FUNCTIONS) | set(CONSTRUCTORS) | set(CONSTANTS)
        return sorted(word for word in words if word.startswith(text))

    def __call__(self, text: str, state: int) -> str | None:
        if state == 0:
            self.matches = self.candidates(text)
        return self.matches[state] if state < len(self.matches) else None


@contextmanager
def _readline(session: ReplSession) -> Iterator[None]:
    """readline's history (read at the start, appended line by line) and completion."""
    try:
        import readline
    except ImportError:  # no readline on this Python: plain input
        yield
        return
    readline.set_completer(Completer(session))
    readline.set_completer_delims(" \t\n`~!@#$%^&*()-=+[{]}\\|;'\",<>/?")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    with kept_history(readline, history_path()):
        yield


@contextmanager
def kept_history(readline: Any, path: Path) -> Iterator[None]:
    """readline's history read from ``path`` at the start and written back at the end."""
    readline.set_history_length(HISTORY_LENGTH)
    try:
        readline.read_history_file(path)
    except (OSError, ValueError):  # none yet, or unreadable: start without
        pass
    try:
        yield
    finally:
        _save_history(readline, path)


def _save_history(readline: Any, path: Path) -> None:
    """Write the history to ``path`` in a private directory; a failure only loses it."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        readline.write_history_file(path)
        os.chmod(path, 0o600)
    except OSError:
        pass


def _lines(interactive: bool) -> Iterator[str | None]:
    """Complete inputs (continued lines joined); None after Ctrl-C at the prompt."""
    lines: list[str] = []
    while True:
        prompt = (MORE if lines else PROMPT) if interactive else ""
        try:
            line = input(prompt)
        except KeyboardInterrupt:  # cancel the line (and any continued ones)
            if interactive:
                sys.stdout.write("\n")
            lines = []
            yield None
            continue
        except EOFError:
            if interactive:
                sys.stdout.write("\n")
            if lines:
                yield _join(lines)
            return
        lines.append(line)
        if not lines[0].lstrip().startswith(":") and unfinished(lines):
            continue
        text, lines = _join(lines), []
        yield text


def main(dtype: str = "float64", seed: int = 0, debug: bool = False) -> int:
    """Run a session on stdin; the exit status (0, or 2 when the input is not a terminal
    and a line failed, so that a script fed to the REPL tells its failure)."""
    from ..base import bounds
    from ..base.bounds import Limits

    session = ReplSession(dtype=dtype, seed=seed)
    interactive = sys.stdin.isatty()
    failed = False
    if interactive:
        _out(BANNER)
    with _readline(session) if interactive else _nothing():
        for text in _lines(interactive):
            if text is None:
                continue
            try:
                with guard(debug, as_json=session.format == "json"), bounds.using(Limits()):
                    with budget("repl", None, None):
                        session.handle(text)
            except typer.Exit as stop:
                failed = failed or stop.exit_code not in (0, 130)
            sys.stdout.flush()
            if session.done:
                break
    return 2 if failed and not interactive else 0


@contextmanager
def _nothing() -> Iterator[None]:
    yield


@command("repl")
def repl_command(seed: Seed = 0, dtype: Dtype = "float64", debug: Debug = False) -> None:
    """An interactive session: statements persist, and :grad, :vjp, :jacobian... act on them.

    Plain `gradcli` in a terminal starts it too. :set NAME VALUE gives an input a value,
    :format json, :help lists the commands; Ctrl-C cancels a line, Ctrl-D ends.

    Example: gradcli repl, then: y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1  :set x 1,2  :vjp y 1,1,1
    """
    with guard(debug):
        check_choice("--dtype", dtype, tuple(DTYPES))
    raise typer.Exit(main(dtype, seed, debug))
