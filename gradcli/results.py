"""What the commands answer: one frozen dataclass per kind of answer, names and numbers only.

A result holds arrays, floats, names and plain text (formulas, statements), never text made
for display: the renderers (``render``) choose the format and the digits. Each kind lists
the ``formats`` it can be written in; ``render.renderer`` finds how. The records inside a
result (a graph's nodes, explain's steps, check's differences) are named tuples, which cost
less to define at start-up than dataclasses.

Results hold numpy arrays, which do not compare as one boolean: they compare by identity.
"""

# No ``from __future__ import annotations``: a named tuple's field annotated with text is
# compiled as it is defined (``typing.NamedTuple`` makes a ``ForwardRef`` of it), some forty
# compiles at every start; annotations as objects cost nothing. (``Local``, which this module
# must not import, is named as text, where a named tuple does not read it.)
from dataclasses import field
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import numpy as np

from .base.records import record

if TYPE_CHECKING:
    from .commands.explain.local import Local

FORMATS = ("table", "json", "csv")


@record
class Result:
    """What every answer has: the output it is about, and the warnings of the runs."""

    formats: ClassVar[tuple[str, ...]] = FORMATS

    output: str
    warnings: tuple[str, ...] = ()


@record
class Values(Result):
    """``eval``: the value of every input and every assigned name."""

    command: ClassVar[str]  # named by the command table (see the end)

    values: dict[str, np.ndarray]


@record
class Derivatives(Result):
    """An answer about derivatives of the output, beside its value.

    grad and vjp of several outputs differentiated together (``--of y,z``: the gradients are
    the sums of theirs) hold each output's value in ``outputs``; ``output`` then names them
    all ("y,z") and ``value`` is the first's."""

    command: ClassVar[str]

    value: np.ndarray
    outputs: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def output_values(self) -> dict[str, np.ndarray]:
        """The value of each output, by name."""
        return self.outputs or {self.output: self.value}


@record
class Grads(Derivatives):
    """``grad``: ``.grad`` of every input (None when it has none), then of the intermediate
    names asked for (``--show``, ``--retain-grad``); ``formulas`` with ``--symbolic``."""

    command: ClassVar[str]  # named by the command table (see the end)

    grads: dict[str, np.ndarray | None]
    shown: dict[str, np.ndarray | None] = field(default_factory=dict)
    formulas: dict[str, np.ndarray] = field(default_factory=dict)  # name -> array of text


@record
class VJP(Derivatives):
    """``vjp``: J^T v for each ``--wrt`` name (an input or an intermediate)."""

    command: ClassVar[str]  # named by the command table (see the end)

    grads: dict[str, np.ndarray]
    formulas: dict[str, np.ndarray] = field(default_factory=dict)


class Coo(NamedTuple):
    """A sparse Jacobian block in coordinates: ``values[k]`` at row ``rows[k]`` (an output
    element, flat in C order) and column ``cols[k]`` (an input element) of a matrix of
    ``shape``; the other way round when the Jacobian is transposed."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    shape: tuple[int, int]
    input_shape: tuple[int, ...] = ()  # the shape of the input, whose elements are the columns


@record
class Jacobian(Derivatives):
    """``jacobian``: d out / d input for each input, laid out output.shape + input.shape, or
    input.shape + output.shape when ``transposed``; ``method`` says how it was computed
    (forward, reverse, structured) and ``reason`` why."""

    command: ClassVar[str]  # named by the command table (see the end)

    jacobians: dict[str, np.ndarray]
    transposed: bool = False
    method: str = ""  # "forward", "reverse" or "structured"
    reason: str = ""  # e.g. "3 input elements >= 3 outputs", "as asked"
    formulas: dict[str, np.ndarray] = field(default_factory=dict)
    # the blocks of a sparse Jacobian (--sparse), instead of ``jacobians``
    sparse: dict[str, Coo] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        """How and why in a phrase: ``reverse (3 input elements >= 3 outputs)``,
        ``structured: 1 colour of columns, forward (1 pass; ...)``."""
        if self.method == "structured":
            return f"structured: {self.reason}"
        return f"{self.method} ({self.reason})"


@record
class JVP(Derivatives):
    """``jvp``: J t, shaped like the output."""

    command: ClassVar[str]  # named by the command table (see the end)

    tangent: np.ndarray


@record
class Hessian(Derivatives):
    """``hessian``: the block d2 out / da db for each pair (a, b) of inputs."""

    command: ClassVar[str]  # named by the command table (see the end)

    blocks: dict[tuple[str, str], np.ndarray]


@record
class HVP(Derivatives):
    """``hvp``: H v for each input."""

    command: ClassVar[str]  # named by the command table (see the end)

    products: dict[str, np.ndarray]


class Difference(NamedTuple):
    """An entry where ``method`` differs from reverse mode: d out / d ``wrt`` at ``index``."""

    method: str
    wrt: str
    index: tuple[int, ...]  # type: ignore[assignment]  # a field named like tuple.index
    value: float
    reference: float  # reverse mode's


@record
class Check(Derivatives):
    """``check``: the Jacobian by each method (method -> input -> J), whether they agree, and
    the first entries where they do not."""

    command: ClassVar[str]  # named by the command table (see the end)

    jacobians: dict[str, dict[str, np.ndarray]]
    agree: bool
    worst: tuple[Difference, ...] = ()


@record
class Several(Result):
    """jacobian, jvp, hessian, hvp or check of several outputs (``--of y,z``): one part per
    output, each the command's own answer for it, in --of's order; ``output`` names them all
    ("y,z")."""

    parts: tuple[Derivatives, ...]

    @property
    def command(self) -> str:
        """The command that answered each part."""
        return self.parts[0].command

    @property
    def agree(self) -> bool:
        """check: whether the methods agree for every output."""
        return all(getattr(part, "agree", True) for part in self.parts)


class GraphNode(NamedTuple):
    """A node of the computational graph; ``inputs`` are the ids of the nodes it uses, and a
    constant's node holds its ``value``."""

    id: int
    name: str | None
    op: str
    shape: tuple[int, ...]
    is_leaf: bool
    requires_grad: bool
    grad_fn: str | None
    inputs: tuple[int, ...]
    value: np.ndarray | None


@record
class Graph(Result):
    """``graph``: the nodes from the output (id 0) down to the leaves."""

    command: ClassVar[str]  # named by the command table (see the end)
    formats: ClassVar[tuple[str, ...]] = ("table", "dot", "json")

    nodes: tuple[GraphNode, ...]


@record
class Plot(Result):
    """``plot``: the output and its derivative at each position along ``axis`` (an input, or
    s along a direction)."""

    command: ClassVar[str]  # named by the command table (see the end)

    axis: str
    positions: np.ndarray
    values: np.ndarray
    slopes: np.ndarray

    @property
    def derivative(self) -> str:
        """The derivative's name: ``dy/dx``, or ``dy/ds`` along a direction."""
        return f"d{self.output}/d{self.axis}"

    @property
    def series(self) -> dict[str, np.ndarray]:
        """The three series by name: the axis, the output, and its derivative."""
        return {self.axis: self.positions, self.output: self.values, self.derivative: self.slopes}


class Forward(NamedTuple):
    """One statement of the forward pass: its text, its operation, the value it made."""

    statement: str
    operation: str
    value: np.ndarray


class Passed(NamedTuple):
    """The part of a step's gradient that goes ``to`` one operand."""

    to: str
    gradient: np.ndarray


class Backward(NamedTuple):
    """One step of the backward pass: the gradient arriving at ``node``, its local
    derivatives by each operand, and what it passes on."""

    node: str
    local: tuple["Local", ...]
    incoming: np.ndarray
    passes_on: tuple[Passed, ...]


class SymbolicJT(NamedTuple):
    """J^T as formulas (a row per input element, a column per output element), the symbols
    of each input's elements, the vector v, and J^T v for each input."""

    jacobian_t: dict[str, list[list[str]]]
    symbols: dict[str, list[str]]
    v: np.ndarray
    jt_v: dict[str, np.ndarray]


@record
class Explanation(Derivatives):
    """``explain``: the forward pass, the backward pass, the leaf gradients, notes (plain
    statements), and for small programs the symbolic J^T v."""

    command: ClassVar[str]  # named by the command table (see the end)

    grads: dict[str, np.ndarray | None]
    forward: tuple[Forward, ...]
    backward: tuple[Backward, ...]
    notes: tuple[str, ...] = ()
    symbolic: SymbolicJT | None = None


@record
class Points(Result):
    """``--batch``: one chunk of points, numbered from ``first``; arrays with a leading point
    dimension by section, as the command's JSON names them: ``values`` (the output's), then
    ``grads`` (grad, vjp), ``jacobian``, ``jvp``, ``hvp``, ``hessian`` (by ``a,b``), or
    ``check`` (``agree`` and ``max_error``)."""

    formats: ClassVar[tuple[str, ...]] = ("json",)  # JSON lines (--out writes arrays)

    command: str
    first: int
    sections: dict[str, dict[str, np.ndarray]]

    @property
    def values(self) -> dict[str, np.ndarray]:
        """The output's values."""
        return self.sections["values"]

    @property
    def grads(self) -> dict[str, np.ndarray]:
        """grad's and vjp's gradients (empty for the other commands)."""
        return self.sections.get("grads", {})


class ExactBlock(NamedTuple):
    """One array of an exact answer: ``kind`` as a render ``Block``'s ("array", "jacobian",
    "hessian", whose ``name`` is the pair "a,b"), the simplified texts, their floats (None
    for formulas without a point), and whether every element is exact."""

    kind: str
    name: str
    label: str
    texts: np.ndarray  # object array of text
    numbers: np.ndarray | None
    exact: bool


@record
class Exact(Result):
    """``--exact`` (numbers computed with sympy, ``point``) and ``--symbolic`` without values
    (formulas of the inputs) of eval, grad, jacobian and hessian; ``shape`` is the output's."""

    shape: tuple[int, ...]
    blocks: tuple[ExactBlock, ...]
    point: bool
    command: str


def _power(name: str, power: int) -> str:
    """``2`` as in dx2, ``^2`` after an element (dx[1]^2); nothing for the first power."""
    if power == 1:
        return ""
    return f"^{power}" if name.endswith("]") else str(power)


@record
class HigherDerivatives(Derivatives):
    """``derivative``: the successive partial derivatives of a scalar output by the inputs
    of ``wrt`` in turn (``derivatives[k]`` is by ``wrt[0]``, ..., ``wrt[k]``), each input
    element named as ``x`` or ``x[1]``; with ``taylor``, the Taylor coefficients
    f^(k)(x) / k! for k = 0, 1, ..., along the one input."""

    command: ClassVar[str]  # named by the command table (see the end)

    wrt: tuple[str, ...]
    derivatives: np.ndarray
    taylor: np.ndarray | None = None

    def label(self, k: int) -> str:
        """``d3f/dx2dz`` for the derivative by ``wrt[:k + 1]`` (the powers of repeats)."""
        runs: list[list] = []
        for name in self.wrt[: k + 1]:
            if runs and runs[-1][0] == name:
                runs[-1][1] += 1
            else:
                runs.append([name, 1])
        order = "" if k == 0 else str(k + 1)
        below = "".join(f"d{n}" + _power(n, p) for n, p in runs)
        return f"d{order}{self.output}/{below}"


def _named_by_the_table() -> None:
    """Each record's ``command``: the name of the command whose entry in the command table
    gives it as its result (``commands.table``)."""
    from .commands.table import COMMANDS

    for command in COMMANDS:
        kind = globals().get(command.result or "")
        if kind is not None:
            kind.command = command.name


_named_by_the_table()
