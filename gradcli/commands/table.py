"""The command table: one entry per command, which every front end reads, as the language
reads the op table.

An entry says what a command is: its name, its own options (beside the ones every program
command shares: the program, the values, --of, --wrt, --format, the limits), the function that
computes it, its result record (whose ``command`` names it: ``results``), whether --of may
name several outputs (``--of y,z``), how it computes --exact (its pieces in
``domains.exact``), whether it takes --symbolic, how --batch computes it (its ``Batching`` in
``batch.passes``: targets, checks, passes, sections), and what its ``:command`` in the REPL
reads after the output. The command line registers the commands in the table's order
(``cli.app``), each command's function named ``NAME_command`` and its ``Run`` holding the
name; the REPL lists and runs them (``cli.repl``); the library's ``Program`` checks a call's
options against it (``api``); ``--exact`` and ``--batch`` compute a command as its entry
says. Adding a command touches its own modules and one entry here.

Nothing here imports what computes: ``compute``, ``exact_answer`` and ``batch_passes`` name
their objects (``module:name``), imported when the command runs, so that reading the table
costs a start-up nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..base.records import record


@record(kw_only=False, frozen=True)
class Option:
    """One of a command's own options: its keyword (the library's, and the command line's
    --flag with ``_`` as ``-``), what it takes, and its default."""

    name: str
    kind: str  # flag, int, float, text, names, choice, vectors, named, tangents, value, path
    default: Any = None


@record(frozen=True)
class Command:
    """A command: see the module's docstring."""

    name: str
    compute: str | None  # "module:function" in gradcli.commands; None: the command line's own
    result: str | None = None  # the result record's class in ``gradcli.results``
    options: tuple[Option, ...] = ()
    several: bool = False  # --of may name several outputs
    exact_answer: str | None = None  # its --exact: "module:name" of its pieces in gradcli.domains
    symbolic: bool = False
    batch_passes: str | None = None  # its --batch: "module:name" of its Batching in gradcli.batch
    program: bool = True  # runs a program (takes --expr, --x, --of, ...)
    repl: str | None = None  # what its :command reads after the output (see ``REPL_ARGUMENTS``)
    repl_help: str = ""  # its line in the REPL's :help

    @property
    def exact(self) -> bool:
        """Whether it takes --exact."""
        return self.exact_answer is not None

    @property
    def batch(self) -> bool:
        """Whether it takes --batch."""
        return self.batch_passes is not None

    def function(self) -> Callable[..., Any]:
        """The function that computes the command (imported now)."""
        if self.compute is None:
            raise LookupError(f"{self.name} is the command line's own: it computes nothing")
        return _imported(self.compute, __package__)

    def exactly(self) -> Callable[..., Any]:
        """The function that gives the pieces of the command's exact answer (imported now):
        ``(command, problem, formulas, output, wrt, v)``, see ``domains.exact.answer``."""
        if self.exact_answer is None:
            raise LookupError(f"{self.name} takes no --exact")
        return _imported(self.exact_answer, "gradcli.domains")

    def batching(self) -> Any:
        """How --batch computes the command (a ``batch.passes.Batching``, imported now)."""
        if self.batch_passes is None:
            raise LookupError(f"{self.name} takes no --batch")
        return _imported(self.batch_passes, "gradcli.batch")

    def named_option(self) -> Option:
        """The option that takes ``NAME=VALUE`` items (jvp's tangents t, hvp's v), else v."""
        named = (option for option in self.options if option.kind in ("named", "tangents"))
        return next(named, Option("v", "named"))

    def usage(self) -> str:
        """The :command as the REPL's :help shows it."""
        words = REPL_ARGUMENTS[self.repl or ""].format(NAMED=self.named_option().name.upper())
        return f":{self.name} {words}"


def _imported(where: str, package: str | None) -> Any:
    """The object ``where`` names, ``module:name`` in ``package`` (its module imported at the
    first call; a batch of points asks at every run)."""
    found = _MODULES.get((where, package))
    if found is None:
        module, name = where.split(":")
        found = _MODULES[where, package] = (importlib.import_module(f".{module}", package), name)
    return getattr(*found)


_MODULES: dict[tuple[str, str | None], tuple[Any, str]] = {}


#: What a REPL :command reads after its output (OUT), by the ``repl`` of its entry: its usage.
REPL_ARGUMENTS = {
    "": "[OUT]",
    "vectors": "[OUT] [V]",  # the vector v, or one an output (grad)
    "vectors needed": "[OUT] V",  # the same, given (vjp)
    "wrt": "[OUT] [WRT]",  # comma-separated inputs
    "named": "[OUT] {NAMED}...",  # NAME=VALUE items, or VALUE for x (jvp's t, hvp's v)
    "vector": "[OUT] [V]",  # one vector v (explain)
    "drawing": "[OUT]",  # drawn in its own formats, after the other commands (graph)
}

_SHAPE = Option("shape", "names")
_V = Option("v", "vectors")
_WRT_FLAGS = (Option("symbolic", "flag", False), Option("exact", "flag", False), _SHAPE)

#: Every command, in the order of ``gradcli --help``.
COMMANDS: tuple[Command, ...] = (
    Command(
        name="eval",
        compute="compute:evaluate",
        result="Values",
        options=(Option("exact", "flag", False), _SHAPE),
        exact_answer="exact:values",
        batch_passes="passes:VALUES",
        repl="",
        repl_help="the value of every input and assigned name",
    ),
    Command(
        name="grad",
        compute="compute:grad",
        result="Grads",
        options=(
            _V,
            Option("show", "names"),
            Option("retain_grad", "names"),
            Option("repeat", "int", 1),
            *_WRT_FLAGS,
        ),
        several=True,
        exact_answer="exact:gradients",
        symbolic=True,
        batch_passes="passes:GRADIENTS",
        repl="vectors",
        repl_help="out.backward(v), then .grad of every input",
    ),
    Command(
        name="vjp",
        compute="compute:vjp",
        result="VJP",
        options=(_V, Option("symbolic", "flag", False)),
        several=True,
        symbolic=True,
        batch_passes="passes:GRADIENTS",
        repl="vectors needed",
        repl_help="J^T v for every input",
    ),
    Command(
        name="jacobian",
        compute="compute:jacobian",
        result="Jacobian",
        options=(
            Option("transpose", "flag", False),
            Option("heatmap", "flag", False),
            Option("mode", "choice", "auto"),
            *_WRT_FLAGS,
            Option("sparse", "flag", False),
            Option("out", "path"),
        ),
        several=True,
        exact_answer="exact:jacobians",
        symbolic=True,
        batch_passes="passes:JACOBIANS",
        repl="wrt",
        repl_help="the Jacobian (WRT: comma-separated inputs)",
    ),
    Command(
        name="jvp",
        compute="compute:jvp",
        result="JVP",
        options=(Option("t", "tangents"),),
        several=True,
        batch_passes="passes:TANGENTS",
        repl="named",
        repl_help="J t (T: VALUE for x, or NAME=VALUE)",
    ),
    Command(
        name="hessian",
        compute="compute:hessian",
        result="Hessian",
        options=_WRT_FLAGS,
        several=True,
        exact_answer="exact:hessians",
        symbolic=True,
        batch_passes="passes:HESSIANS",
        repl="wrt",
        repl_help="second derivatives of a scalar output",
    ),
    Command(
        name="hvp",
        compute="compute:hvp",
        result="HVP",
        options=(Option("v", "named"),),
        several=True,
        batch_passes="passes:HESSIAN_PRODUCTS",
        repl="named",
        repl_help="H v (V: VALUE for x, or NAME=VALUE)",
    ),
    Command(
        name="check",
        compute="compute:check",
        result="Check",
        options=(Option("atol", "float", 1e-5), Option("rtol", "float", 1e-3)),
        several=True,
        batch_passes="passes:FOUR_WAYS",
        repl="",
        repl_help="the Jacobian four ways",
    ),
    Command(
        name="graph",
        compute="compute:graph",
        result="Graph",
        repl="drawing",
        repl_help="the computational graph",
    ),
    Command(
        name="plot",
        compute="compute:plot",
        result="Plot",
        options=(
            Option("x_range", "text", "-3:3"),
            Option("direction", "value"),
            Option("points", "int"),
            Option("out", "path"),
            Option("width", "int"),
            Option("height", "int"),
        ),
    ),
    Command(
        name="explain",
        compute="explain.chain:explain",
        result="Explanation",
        options=(Option("v", "value"),),
        repl="vector",
        repl_help="the chain rule with numbers",
    ),
    Command(name="run", compute=None, program=False),
    Command(name="functions", compute=None, program=False),
    Command(name="repl", compute=None, program=False),
    Command(
        name="derivative",
        compute="derivative:derivative",
        result="HigherDerivatives",
        options=(Option("order", "int"), Option("taylor", "flag", False)),
    ),
    Command(
        name="export",
        compute="export:export",
        options=(Option("to", "choice", "torch"), Option("out", "path")),
    ),
    Command(
        name="uncertainty",
        compute="uncertainty:propagate",
        result="Uncertainty",
        options=(Option("cov", "value"), Option("second_order", "flag", False)),
        several=True,
    ),
)

BY_NAME: dict[str, Command] = {command.name: command for command in COMMANDS}


def entry(name: str) -> Command:
    """The table's entry of the command ``name``."""
    return BY_NAME[name]


def several_commands() -> tuple[str, ...]:
    """The commands whose --of may name several outputs, in the table's order."""
    return tuple(command.name for command in COMMANDS if command.several)
