"""The run of a script: its state, its frames, and the script's functions and their calls.

``Run`` is one run's state: where the output goes, the globals, the steps and call depth
(``limits.py``), the memory tally of its tensors, torch's default dtype and random generator,
the names torch gives the nodes the engine builds otherwise, the warnings given.

A ``Frame`` holds the names of one call (the module's frame holds the globals) and the frame
of the function it was defined in (its closure), which free names are read from.

A ``Function`` is a ``def`` or ``lambda`` of the script: its parameters (``Parameters``,
defaults evaluated when the ``def`` ran), its body (a closure of the script IR) and its
closure frame. Calling it binds the arguments as Python does, with Python's TypeErrors; it
is also a Python callable, so that the engine (``jacobian(f, x)``) and the builtins
(``sorted(key=f)``) call it as they call any function. ``Builtin`` wraps every other callable
a script can reach (a builtin, a torch function, a method of a value): nothing else is ever
called.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from ...base import bounds
from ...base import torch_text as torchtext
from ...base.errors import GradcliError
from ...engine import torch_random
from ...lang.statement import Statement
from ..format_size import TextBudget
from .limits import MAX_CALLS, Steps

# How control leaves a statement (None: on to the next one)
BREAK, CONTINUE, RETURN = 1, 2, 3


class _Line(Statement):
    """A line of the script as errors name it (``line 7``: a script's statements are not
    numbered)."""

    @property
    def where(self) -> str:
        return f"line {self.line}"


class Frame:
    """The names of one call (``names``), the frame its function was defined in
    (``parent``), the run, and the value a ``return`` gave."""

    __slots__ = ("names", "parent", "run", "result")

    def __init__(self, names: dict[str, Any], parent: Frame | None, run: Run):
        self.names = names
        self.parent = parent
        self.run = run
        self.result: Any = None


class Run:
    """One run of a script: its output, its globals and its bounds."""

    def __init__(
        self,
        filename: str,
        lines: list[str],
        quoted: bool,
        seed: int = 0,
        out: TextIO | None = None,
        err: TextIO | None = None,
        max_steps: int | None = None,
    ):
        self.filename, self.lines, self.quoted, self.seed = filename, lines, quoted, seed
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.globals: dict[str, Any] = {}
        self.steps = Steps() if max_steps is None else Steps(max_steps)
        self.depth = 0  # the script's calls under way
        self.line = 0  # the line of the statement running (warnings name it)
        self.node_names: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.warned: set[tuple[int, str] | str] = set()
        self.tally = bounds.Tally()
        self.text = TextBudget(self.tally)
        self.default_dtype: np.dtype[Any] = np.dtype(np.float32)
        # torch's generator, which rand, randn and dropout draw from in the order the script
        # draws: seeded with --seed until the script's torch.manual_seed(n) seeds it with n
        self.generator = torch_random.Generator().manual_seed(seed)
        self.drawn: list[np.ndarray] = []  # what the random constructors gave, in order
        self.target: str | None = None  # the name the running statement assigns, if one
        self.print_options = torchtext.DEFAULT_OPTIONS  # torch.set_printoptions
        self.grad_fns: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.hooks: weakref.WeakKeyDictionary[Any, list[Any]] = weakref.WeakKeyDictionary()
        # register_post_accumulate_grad_hook's, called with the leaf after its .grad grew
        self.post_hooks: weakref.WeakKeyDictionary[Any, list[Any]] = weakref.WeakKeyDictionary()
        self.modules: dict[str, Any] = {}  # what the script may import, by dotted name
        self.builtins: dict[str, Any] = {}
        self.handling: list[BaseException] = []  # the exceptions of the except blocks running
        self.frames: list[Frame] = []  # the frames of the script's calls under way
        self.set_engine_default: Callable[[np.dtype[Any]], None] = lambda dtype: None
        # the script's classes of the library's objects, by Python class (library_objects)
        self.library_classes: dict[type, Any] = {}
        # how a library object is called (library_objects.call, for a module's forward)
        self.call_object: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None
        # told of each backward pass before it runs (outputs, gradients, inputs), where a
        # command traces the script (``script.traced``)
        self.record: Callable[[list[Any], list[Any] | None, Any], None] | None = None

    def statement(self, line: int | None = None) -> Statement:
        """The script's line ``line`` (the running one) as errors and budgets quote it."""
        line = self.line if line is None else line
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return _Line(line, line, text.strip())

    def source(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def warn(self, category: str, message: str, once: str | None = None) -> None:
        """A warning as Python's default filter shows it: once per line of the script and
        message, or once in the run where ``once`` names it (torch's TORCH_WARN_ONCE)."""
        key: tuple[int, str] | str = (self.line, message) if once is None else once
        if key in self.warned:
            return
        self.warned.add(key)
        self.out.flush()
        text = f"{self.filename}:{self.line}: {category}: {message}\n"
        if self.quoted and 0 < self.line <= len(self.lines):
            text += f"  {self.lines[self.line - 1].strip()}\n"
        self.err.write(text)
        self.err.flush()


@dataclass
class Parameters:
    """A function's parameters as Python binds them."""

    positional: list[str]  # positional-only first, then the others
    posonly: int
    defaults: tuple[Any, ...]  # of the last positional parameters
    keyword_only: list[str] = field(default_factory=list)
    keyword_defaults: dict[str, Any] = field(default_factory=dict)
    varargs: str | None = None
    varkw: str | None = None

    def bind(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The frame's names for a call with ``args`` and ``kwargs``; Python's TypeError
        where they do not fit."""
        positional = self.positional
        count = len(positional)
        bound: dict[str, Any] = {}
        if len(args) > count and self.varargs is None:
            given = len(args)
            takes = _counted(count, "positional argument")
            if self.defaults:
                takes = f"from {count - len(self.defaults)} to {count} positional arguments"
            was = "was" if given == 1 else "were"
            raise TypeError(f"{name}() takes {takes} but {given} {was} given")
        for parameter, value in zip(positional, args):
            bound[parameter] = value
        if self.varargs is not None:
            bound[self.varargs] = tuple(args[count:])
        extra: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in bound or (key in positional[: self.posonly] and key not in extra):
                if key in positional[: self.posonly] and self.varkw is not None:
                    extra[key] = value
                    continue
                if key in bound:
                    raise TypeError(f"{name}() got multiple values for argument '{key}'")
            if key in positional[self.posonly :] or key in self.keyword_only:
                bound[key] = value
            elif self.varkw is not None:
                extra[key] = value
            else:
                raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        first_default = count - len(self.defaults)
        missing = []
        for i, parameter in enumerate(positional):
            if parameter not in bound:
                if i >= first_default:
                    bound[parameter] = self.defaults[i - first_default]
                else:
                    missing.append(parameter)
        if missing:
            raise TypeError(
                f"{name}() missing {len(missing)} required positional "
                f"argument{'s' if len(missing) > 1 else ''}: {_listed(missing)}"
            )
        missing = []
        for parameter in self.keyword_only:
            if parameter not in bound:
                if parameter in self.keyword_defaults:
                    bound[parameter] = self.keyword_defaults[parameter]
                else:
                    missing.append(parameter)
        if missing:
            raise TypeError(
                f"{name}() missing {len(missing)} required keyword-only "
                f"argument{'s' if len(missing) > 1 else ''}: {_listed(missing)}"
            )
        if self.varkw is not None:
            bound[self.varkw] = extra
        return bound


def _counted(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def _listed(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + (", and " if len(quoted) > 2 else " and ") + quoted[-1]


class Function:
    """A ``def`` or ``lambda`` of the script (see the module docstring)."""

    __slots__ = (
        "name",
        "parameters",
        "body",
        "closure",
        "doc",
        "wrapped",
        "qualname",
        "line",
        "__weakref__",
    )

    def __init__(
        self,
        name: str,
        parameters: Parameters,
        body: Callable[[Frame], Any],
        closure: Frame,
        doc: str | None = None,
        line: int | None = None,
    ):
        self.name, self.parameters, self.body, self.closure = name, parameters, body, closure
        self.doc = doc
        #: a lambda's line: its body is one expression, no statement of its own names the line
        #: a warning inside it comes from (Python's is the lambda's)
        self.line = line
        self.wrapped: Callable[..., Any] | None = None  # a decorator's grad mode around it
        self.qualname = name  # where it was defined (Foo.method, f.<locals>.g), as Python shows

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        run = self.closure.run
        run.steps.step()
        run.depth += 1
        caller = run.line  # a warning after the call, in the caller's statement, names it
        if self.line is not None:
            run.line = self.line
        try:
            if run.depth > MAX_CALLS:
                raise GradcliError(
                    f"the script's calls nest more than {MAX_CALLS} deep (in {self.name})",
                    hint="a recursion that does not end? gradcli run takes calls this deep",
                )
            frame = Frame(self.parameters.bind(self.qualname, args, kwargs), self.closure, run)
            run.frames.append(frame)
            if self.wrapped is not None:
                with self.wrapped():
                    return self.body(frame)
            return self.body(frame)
        finally:
            run.depth -= 1
            run.line = caller
            if len(run.frames) > run.depth:
                run.frames.pop()

    def __repr__(self) -> str:
        return f"<function {self.qualname} at 0x{id(self):x}>"


class Builtin:
    """A callable the script may call that is not its own: ``fn`` with a name to show."""

    __slots__ = ("name", "fn", "shown")

    def __init__(self, name: str, fn: Callable[..., Any], shown: str | None = None):
        self.name, self.fn, self.shown = name, fn, shown

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return self.shown or f"<built-in function {self.name}>"


class Module:
    """A module a script imports (``torch``, ``math``): its name and attributes."""

    __slots__ = ("name", "attributes")

    def __init__(self, name: str, attributes: dict[str, Any]):
        self.name, self.attributes = name, attributes

    def __repr__(self) -> str:
        return f"<module '{self.name}'>"


# The runs under way (``interpreter.execute``'s), the innermost last: ``call`` reaches the
# running one's ``call_object`` for a value only the run knows how to call
RUNNING: list[Run] = []

# The Python classes a script may call and name (``int(x)``, ``isinstance(x, float)``)
SAFE_TYPES: frozenset[type] = frozenset(
    {int, float, bool, str, list, tuple, dict, set, frozenset, complex, range, slice, object}
)


def call(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``value(*args, **kwargs)`` for what a script may call; Python's TypeError else."""
    kind = type(value)
    if kind is Function or kind is Builtin or isinstance(value, Builtin):
        return value(*args, **kwargs)
    if kind is type and (value in SAFE_TYPES or issubclass(value, BaseException)):
        from .errors import SCRIPT_EXCEPTIONS

        if value in SAFE_TYPES or value in SCRIPT_EXCEPTIONS:
            return value(*args, **kwargs)
    maker = getattr(kind, "script_call", None)  # a value of ours that is callable
    if maker is not None:
        return maker(value, *args, **kwargs)
    if RUNNING and RUNNING[-1].call_object is not None:  # the library's (a module's forward)
        return RUNNING[-1].call_object(value, args, kwargs)
    raise TypeError(f"'{type_name(value)}' object is not callable")


def type_name(value: Any) -> str:
    """The name Python (or torch) gives the type of ``value`` in its messages."""
    named = getattr(type(value), "python_name", None)
    if isinstance(named, str):
        return named
    if type(value).__module__.startswith("gradcli.engine"):
        return "Tensor"
    if type(value) is Function:
        return "function"
    if type(value) is Builtin:
        return "builtin_function_or_method"
    if type(value) is Module:
        return "module"
    return type(value).__name__
