"""Errors to exit codes: a command's failures on stderr, each with its exit code, and stdout
whose own failures are said in one line (``OutputFailure``).

Exit codes: 0 success, 1 a check that ran and failed (check, --strict), 2 bad usage or bad
input (``GradcliError``, or an ``EngineError`` of the engine, told apart by its class), 70 an
internal error (a bug in gradcli: please report it), 74 stdout failed, 124 --timeout passed,
130 interrupted.
"""

import json
import os
import sys
import traceback
import warnings
from contextlib import contextmanager

import typer

from ..base.notice import say

INTERNAL = 70  # sysexits' EX_SOFTWARE: an internal software error
OUTPUT_FAILED = 74  # sysexits' EX_IOERR: the output could not be written


class OutputFailure(Exception):
    """stdout did not take the output: a full disk, a closed or failing descriptor, an encoding
    that cannot show a character. Said in one plain line, exit ``OUTPUT_FAILED``."""


def output_failure(exc: OSError | UnicodeError) -> OutputFailure:
    if isinstance(exc, UnicodeEncodeError):
        character = exc.object[exc.start]
        import unicodedata

        name = unicodedata.name(character, "")
        what = f"U+{ord(character):04X}" + (f" {name}" if name else "")
        return OutputFailure(
            f"cannot write the output: stdout's encoding ({exc.encoding}) cannot show "
            f"{character!r} ({what}); use a UTF-8 locale or set PYTHONIOENCODING=utf-8"
        )
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return OutputFailure(f"cannot write the output: {why}")


class CheckedStdout:
    """stdout whose failures (other than a closed pipe, which SIGPIPE ends quietly) are
    ``OutputFailure``s rather than whatever Python's stream raises."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str | bytes) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except (OSError, UnicodeEncodeError) as exc:
            raise output_failure(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, UnicodeEncodeError) as exc:
            raise output_failure(exc) from None

    @property
    def buffer(self) -> "CheckedStdout":
        """The binary stream beneath (JSON lines write bytes), its failures said as these."""
        return CheckedStdout(self._stream.buffer)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def discard_stdout() -> None:
    """Send what stdout still holds (and Python's final flush) to /dev/null: after a failed
    write there is nothing more to say there, and a second failure at exit would be noise."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass


def _complex_warning() -> type[Warning]:
    """numpy's warning that it dropped the imaginary part of a complex value."""
    import numpy as np

    return np.exceptions.ComplexWarning


def complex_refusal(exc: Warning) -> str:
    """The message for a complex value that reached something that takes real numbers."""
    return (
        "a complex value reached an operation or an output that takes real numbers, which "
        "would drop its imaginary part; take .real, .imag, .abs() or .angle() of it first "
        f"(numpy: {exc})"
    )


@contextmanager
def guard(debug: bool, as_json: bool = False):
    """Errors on stderr with their exit code, no traceback unless --debug: 2 for bad usage or
    input, 130 for Ctrl-C, 70 for a bug in gradcli. With ``as_json`` (--format json) an error
    is one JSON object, for the script that asked for JSON.

    Bad input is a ``GradcliError``, or an ``EngineError`` (the engine refused the values or
    shapes it was given), which gets the hint of its kind; any other exception is a bug.
    """
    from ..base.bounds import TIMED_OUT, TimedOut
    from ..base.errors import GradcliError, from_engine
    from ..ops.library import EngineError

    def fail(error: GradcliError, code: int) -> typer.Exit:
        if debug:
            traceback.print_exc()
        if as_json:  # one line, never wrapped: a script reads it
            sys.stderr.write(json.dumps(error.document()) + "\n")
        else:
            say(error.render())
        return typer.Exit(code)

    try:
        with warnings.catch_warnings():
            # gradcli reports non-finite values itself, with the statement that made them;
            # numpy's RuntimeWarnings (its file and line) would only be noise beside them
            warnings.simplefilter("ignore", RuntimeWarning)
            # a complex value is never cut to its real part without a word (numpy would warn
            # and drop the imaginary part): it is an error with a message
            warnings.simplefilter("error", _complex_warning())
            yield
    except TimedOut as exc:  # what was written stays; the exit code is timeout(1)'s
        raise fail(exc, TIMED_OUT) from None
    except GradcliError as exc:
        raise fail(exc, 2) from None
    except EngineError as exc:
        raise fail(from_engine(exc), 2) from None
    except _complex_warning() as exc:
        raise fail(GradcliError(complex_refusal(exc)), 2) from None
    except typer.Exit:
        raise
    except BrokenPipeError:
        # where SIGPIPE cannot end the process (see main): stop quietly, and keep Python's
        # final flush of stdout from failing again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(141) from None
    except OutputFailure as exc:
        discard_stdout()
        raise fail(GradcliError(str(exc)), OUTPUT_FAILED) from None
    except MemoryError:
        message = "out of memory: the values or the work are too large"
        hint = (
            "make the values smaller, or lower --max-elements so that gradcli refuses such "
            "sizes before it starts"
        )
        raise fail(GradcliError(message, hint=hint), 2) from None
    except KeyboardInterrupt:
        if as_json:
            raise fail(GradcliError("interrupted"), 130) from None
        say("interrupted")
        raise typer.Exit(130) from None
    except Exception as exc:  # a bug in gradcli, not the user's input
        how = "with the traceback above" if debug else "rerun with --debug for the traceback"
        message = f"{type(exc).__name__}: {exc} (a bug in gradcli: please report it, {how})"
        error = GradcliError(message, where="internal error")
        if as_json:
            raise fail(error, INTERNAL) from None
        if debug:
            traceback.print_exc()
        say(f"internal error: {message}")
        raise typer.Exit(INTERNAL) from None
