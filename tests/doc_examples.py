"""The shell examples of README.md and docs/, read from the pages and run for real.

An example is a fenced block with no info string whose first line starts with ``$ ``: each
``$ `` line is a command (a here-document's lines belong to it), the lines after it until the
next ``$ `` line (blank lines at their end aside) are what it prints, stdout and stderr
together. ``$ echo $?`` shows the exit code of the command before it; a command not followed
by one must exit 0. What is shown is compared line by line (trailing blanks aside):

- ``...`` alone stands for any number of lines left out;
- a line holding ``...`` stands for a line with any text where each ``...`` is;
- a JSON line is compared as JSON, floats to within 1e-6 (the last bits of libm differ between
  CPUs), keys and everything else exactly;
- in any other line, a number written with 10 or more significant digits is compared to
  within 1e-6, the rest of the line as text.

An HTML comment on the line before the opening fence says how to run it:

- ``<!-- example: terminal 80 -->``: stdout is a pseudo-terminal 80 columns wide and 24 lines
  high (``terminal 80x50``: 50 lines), ``NO_COLOR`` set and escape sequences removed, as on a
  person's screen;
- ``<!-- example: numbers vary (REASON) -->``: its numbers change from run to run (timing);
  every number matches any number, the text around them is compared;
- ``<!-- example: needs zarr, jq -->``: skipped where a module cannot be imported or a program
  is not on the PATH;
- ``<!-- example: not run (REASON) -->``: shown only; the reason names the test that runs it.

Commands run in bash in a folder of their own per page, holding links to the repository's
``samples`` and ``tests``, with ``gradcli`` and ``python`` this interpreter; the examples of
one page run in order there, so a file that one writes (``points.npy``) is there for the next.
A ``gradcli repl`` example's lines starting ``gradcli> `` are what is typed, given on stdin.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
import threading
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
PROMPT = "gradcli> "
_ANNOTATION = re.compile(r"<!-- example: (.*?) -->")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@dataclass
class Command:
    """One ``$ `` line (with its here-document) and the lines shown after it."""

    text: str
    shown: list[str] = field(default_factory=list)


@dataclass
class Example:
    """One example block of a page: where it is, how to run it, its commands."""

    page: Path
    line: int
    commands: list[Command]
    annotation: str = ""

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def needs(self) -> list[str]:
        found = re.match(r"needs (.*)", self.annotation)
        return [m.strip() for m in found.group(1).split(",")] if found else []

    @property
    def terminal(self) -> tuple[int, int] | None:
        """(columns, lines) of the terminal the example runs in; None: not a terminal."""
        found = re.match(r"terminal (\d+)(?:x(\d+))?", self.annotation)
        return (int(found.group(1)), int(found.group(2) or 24)) if found else None

    @property
    def numbers_vary(self) -> bool:
        return self.annotation.startswith("numbers vary")

    @property
    def not_run(self) -> bool:
        return self.annotation.startswith("not run")


def fenced_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """Every fenced block of a Markdown text: (line of its fence, info string, its lines)."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("```"):
            info, start = lines[i][3:].strip(), i
            i += 1
            body = []
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append((start + 1, info, body))
        i += 1
    return blocks


def _commands(body: list[str]) -> list[Command]:
    commands: list[Command] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith("$ "):
            text = line[2:]
            heredoc = re.search(r"<<-?'?(\w+)'?", text)
            if heredoc:
                end = body.index(heredoc.group(1), i + 1)
                text = "\n".join([text, *body[i + 1 : end + 1]])
                i = end
            commands.append(Command(text))
        else:
            commands[-1].shown.append(line)
        i += 1
    for command in commands:  # a blank line between two commands only separates them
        while command.shown and not command.shown[-1].strip():
            command.shown.pop()
    return commands


def examples(page: Path) -> list[Example]:
    """The example blocks of one page, in order."""
    text = page.read_text()
    lines = text.splitlines()
    found = []
    for line, info, body in fenced_blocks(text):
        if info or not body or not body[0].startswith("$ "):
            continue
        before = lines[line - 2] if line >= 2 else ""
        note = _ANNOTATION.search(before)
        found.append(Example(page, line, _commands(body), note.group(1) if note else ""))
    return found


def all_examples() -> list[Example]:
    """The example blocks of README.md and of every page under docs/."""
    return [example for page in PAGES for example in examples(page)]


def same(got, want) -> bool:
    """JSON values equal, floats to 1e-6 (the last bits of libm differ between CPUs)."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(same(got[k], want[k]) for k in want)
        )
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same, got, want))
    if isinstance(want, float) and not isinstance(got, bool):
        return isinstance(got, (int, float)) and abs(got - want) <= 1e-6 * max(1.0, abs(want))
    return type(got) is type(want) and got == want


def _digits(number: str) -> int:
    mantissa = re.split(r"[eE]", number)[0].lstrip("+-").replace(".", "").lstrip("0")
    return len(mantissa)


def _numbers_match(got: str, want: str, vary: bool) -> bool:
    if vary:
        return True
    if _digits(want) >= 10 or _digits(got) >= 10:
        return abs(float(got) - float(want)) <= 1e-6 * max(1.0, abs(float(want)))
    return got == want


def line_matches(got: str, want: str, vary: bool = False) -> bool:
    """Whether a printed line is the line shown (the rules of this module's docstring)."""
    got, want = got.rstrip(), want.rstrip()
    if "..." in want:
        pattern = ".*".join(re.escape(part) for part in want.split("..."))
        return re.fullmatch(pattern, got, re.DOTALL) is not None
    if want.startswith(("{", "[")):
        try:
            wanted = json.loads(want)
        except ValueError:
            pass
        else:
            try:
                return same(json.loads(got), wanted)
            except ValueError:
                return False
    got_text, want_text = _NUMBER.split(got), _NUMBER.split(want)
    if got_text != want_text:
        return False
    return all(
        _numbers_match(g, w, vary)
        for g, w in zip(_NUMBER.findall(got), _NUMBER.findall(want), strict=True)
    )


def output_matches(shown: list[str], stdout: str, stderr: str, vary: bool = False) -> str:
    """ "" when the lines shown are what was printed, else what differs.

    The shown lines interleave stdout's and stderr's: each must be the next line of one of
    them, or after ``...`` a later one; at the end nothing may be left that no ``...`` skips.
    """
    streams = {"stdout": stdout.splitlines(), "stderr": stderr.splitlines()}
    at = {"stdout": 0, "stderr": 0}
    open_skip = {"stdout": False, "stderr": False}
    for want in shown:
        if want.strip() == "...":
            open_skip = {"stdout": True, "stderr": True}
            continue
        for name, lines in streams.items():
            end = len(lines) if open_skip[name] else min(at[name] + 1, len(lines))
            hit = next(
                (k for k in range(at[name], end) if line_matches(lines[k], want, vary)), None
            )
            if hit is not None:
                at[name], open_skip[name] = hit + 1, False
                break
        else:
            return f"not printed where shown: {want!r}"
    for name, lines in streams.items():
        if at[name] < len(lines) and not open_skip[name]:
            return f"printed on {name} but not shown: {lines[at[name]]!r}"
    return ""


def _environment(bin_dir: Path) -> dict[str, str]:
    bin_dir.mkdir(exist_ok=True)
    for name, argv in (("gradcli", f'"{sys.executable}" -m gradcli'), ("python", sys.executable)):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
        shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    for name in ("COLUMNS", "LINES", "FORCE_COLOR"):
        env.pop(name, None)
    return env


def folder(base: Path) -> tuple[Path, dict[str, str]]:
    """A working folder for a page's examples and the environment they run in."""
    work = base / "work"
    work.mkdir(parents=True, exist_ok=True)
    for name in ("samples", "tests"):
        if not (work / name).exists():
            (work / name).symlink_to(REPO / name)
    return work, _environment(base / "bin")


def _on_terminal(
    text: str, stdin: str, size: tuple[int, int], cwd: Path, env: dict[str, str]
) -> tuple[int, str, str]:
    master, slave = pty.openpty()
    columns, lines = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    done = subprocess.run(
        ["bash", "-c", text],
        input=stdin,
        stdout=slave,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**env, "NO_COLOR": "1", "TERM": "xterm"},
        timeout=120,
    )
    os.close(slave)
    reader.join()
    os.close(master)
    printed = _ESCAPE.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")
    return done.returncode, printed, done.stderr


def run(example: Example, cwd: Path, env: dict[str, str]) -> list[str]:
    """Run an example's commands; what differs from what the page shows (empty: nothing)."""
    problems: list[str] = []
    last: int | None = None
    commands = example.commands
    for k, command in enumerate(commands):
        if command.text.strip() == "echo $?":
            if [str(last)] != command.shown:
                problems.append(f"exit code {last}, shown {command.shown}")
            continue
        shown, stdin = command.shown, ""
        if command.text.split()[:2] == ["gradcli", "repl"]:
            stdin = "".join(line[len(PROMPT) :] + "\n" for line in shown if line.startswith(PROMPT))
            shown = [line for line in shown if not line.startswith(PROMPT)]
        if example.terminal:
            last, stdout, stderr = _on_terminal(command.text, stdin, example.terminal, cwd, env)
        else:
            done = subprocess.run(
                ["bash", "-c", command.text],
                input=stdin,
                capture_output=True,
                text=True,
                cwd=cwd,
                env=env,
                timeout=120,
            )
            last, stdout, stderr = done.returncode, done.stdout, done.stderr
        followed_by_code = k + 1 < len(commands) and commands[k + 1].text.strip() == "echo $?"
        if last != 0 and not followed_by_code:
            problems.append(f"$ {command.text}\nexit code {last}; stderr:\n{stderr}")
        differs = output_matches(shown, stdout, stderr, example.numbers_vary)
        if differs:
            problems.append(f"$ {command.text}\n{differs}\nstdout:\n{stdout}\nstderr:\n{stderr}")
    return problems


def missing(example: Example) -> list[str]:
    """What an example needs that is not here: a module to import or a program (``jq``)."""
    return [name for name in example.needs if not _module(name) and shutil.which(name) is None]


def _module(name: str) -> bool:
    """Whether ``name`` imports as an installed module: not as a namespace package, which a
    folder of that name in the working directory makes of it (an in-process test's)."""
    try:
        spec = importlib.util.find_spec(name)
    except ValueError:  # in sys.modules without a spec
        return False
    return spec is not None and spec.origin not in (None, "namespace")
