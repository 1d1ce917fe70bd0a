"""The steps of a ``gradcli run`` script: one plain record per statement, and their form in
the parse cache.

A ``Step`` holds what its statement does as data (its kind, its names, the typed IR of its
expressions), so that a script run again reads its steps from the cache and needs neither
sympy nor the validator; ``step_json`` and ``step_from_json`` write and read that form, and
refuse anything that is not a step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, astuple, dataclass, field, fields
from typing import Any

from ..lang import functions as F
from ..lang import pytorch
from ..lang.ir import Node, from_json, to_json
from ..lang.statement import Statement

# What a shown value may be followed by: attributes, and methods called without arguments
ATTRIBUTES = ("grad", "shape", "dtype", "requires_grad", "is_leaf")
METHODS = ("item", "tolist", "numel", "size", "dim", "zero_")


class ScriptError(Exception):
    """An error torch (or Python) raises at a statement: the script stops there, as Python
    stops, with ``kind: message`` after the traceback's frame; exit 1."""

    def __init__(
        self, statement: Statement, kind: str, message: str, span: tuple[int, int] | None = None
    ):
        super().__init__(f"{kind}: {message}")
        self.statement, self.kind, self.message = statement, kind, message
        self.span = span  # the columns of the statement's text at fault: Python's carets


@dataclass(frozen=True)
class Shown:
    """One value a statement shows: a literal (a string, a number, None), or the value of
    ``ir`` followed by ``access`` (``x.grad.shape``: ``Name("x")``, ``("grad", "shape")``;
    a method as ``"item()"``). ``line`` is the script's line of the value."""

    line: int
    literal: str | int | float | bool | None = None
    ir: Node | None = None
    access: tuple[str, ...] = ()
    columns: dict[str, int] = field(default_factory=dict)
    several: bool = False  # ir is the first result of a call that gives several: show them all
    # an f-string: its ``pieces`` (literals, and values each with the ``spec`` and
    # ``conversion`` of its ``{value!r:spec}``), joined
    fstring: bool = False
    pieces: tuple[Shown, ...] = ()
    spec: str = ""
    conversion: int = -1  # Python's: -1 none, ord("r") !r, ord("s") !s, ord("a") !a
    span: tuple[int, int] | None = None  # an f-string's columns in the statement's text


@dataclass(frozen=True)
class Gradients:
    """A ``torch.autograd.grad`` call of an ``autograd`` step: the step's ``shown`` holds its
    ``outputs`` outputs, then its ``inputs`` inputs, then its ``grad_outputs`` gradients
    (None: not given; a literal None for an output left to its implicit 1)."""

    outputs: int
    inputs: int
    grad_outputs: int | None
    retain_graph: bool | None
    create_graph: bool
    allow_unused: bool
    unpack: bool = False


@dataclass(frozen=True)
class Functional:
    """A call of torch.autograd.functional's ``name`` (or ``grad``: torch.func.grad's): the
    step's ``shown`` holds its ``inputs`` inputs, then its ``vectors`` vectors v (None: no v);
    ``many``/``many_vectors``: given as a tuple; ``argnums``: torch.func.grad's."""

    name: str
    inputs: int
    many: bool
    vectors: int | None
    many_vectors: bool
    argnums: int = 0
    unpack: bool = False


@dataclass(frozen=True)
class Step:
    """One statement, ready to run.

    ``kind`` is ``assign`` (``target = ir``), ``number`` (``target = number``, a Python
    number), ``create`` (``target`` made by a torch
    constructor, ``constructor`` its text, ``dtype`` given or None), ``write`` (``y[0] = ...``:
    ``ir`` is the setitem of ``target``), ``backward``, ``print`` (``shown`` joined by ``sep``,
    then ``end``), ``show`` (a bare expression: its repr unless None), ``nothing`` (an import).
    ``autograd`` (``torch.autograd.grad``: ``shown`` its outputs, inputs and grad_outputs,
    ``grad`` what they are; its tuple goes to ``target``, or its item ``item`` does, or it is
    unpacked into ``targets``, or shown when the statement is the call alone).
    ``update`` (``y += e``, ``y.add_(e)``, ``y.zero_()``: ``ir`` the new value of
    ``target``, written into it as torch does; ``node_name`` the name of its node where
    torch's differs from the operation's; ``shows``: a method, whose value is shown).
    ``functional`` (torch.autograd.functional's jacobian, hessian, vjp, jvp, or
    torch.func.grad: ``ir`` the function's result over its ``parameters``, ``shown`` its
    inputs and vectors; the result placed as an ``autograd`` step's is).
    ``no_grad``: inside ``with torch.no_grad():``. ``retain`` (``target.retain_grad()``),
    ``default_dtype`` (``torch.set_default_dtype``: ``dtype``), ``seed``
    (``torch.manual_seed``: ``number``). ``raise``: Python's ``error`` (its kind, message and
    the columns of its carets) when the script gets there (``torch.cbrt``: torch has none).
    """

    kind: str
    statement: Statement
    target: str | None = None
    ir: Node | None = None
    constructor: str | None = None
    dtype: str | None = None
    backward: pytorch.Backward | None = None
    shown: tuple[Shown, ...] = ()
    sep: str = " "
    end: str = "\n"
    columns: dict[str, int] = field(default_factory=dict)
    no_grad: bool = False
    number: int | float | None = None
    targets: tuple[str, ...] = ()
    item: int | None = None
    grad: Gradients | None = None
    node_name: str | None = None
    shows: bool = False
    parameters: tuple[str, ...] = ()
    functional: Functional | None = None
    error: tuple[str, str, int, int] | None = None


# -- the parse cache -----------------------------------------------------------------------------


def step_json(step: Step) -> dict[str, Any]:
    data = {f.name: getattr(step, f.name) for f in fields(step)}
    data["statement"] = [step.statement.number, step.statement.line, step.statement.text]
    data["ir"] = None if step.ir is None else to_json(step.ir)
    data["backward"] = None if step.backward is None else list(astuple(step.backward))
    data["grad"] = None if step.grad is None else asdict(step.grad)
    data["functional"] = None if step.functional is None else asdict(step.functional)
    data["shown"] = [_shown_json(s) for s in step.shown]
    return data


def _shown_json(shown: Shown) -> dict[str, Any]:
    data = {f.name: getattr(shown, f.name) for f in fields(shown)}
    data["ir"] = None if shown.ir is None else to_json(shown.ir)
    data["pieces"] = [_shown_json(p) for p in shown.pieces]
    return data


def _shown_from_json(data: dict[str, Any]) -> Shown:
    """The shown item ``_shown_json`` wrote; an error for anything else."""
    shown = Shown(
        **{
            **data,
            "ir": None if data["ir"] is None else from_json(data["ir"], F.PROGRAM_OPS),
            "access": tuple(data["access"]),
            "pieces": tuple(_shown_from_json(p) for p in data["pieces"]),
            "span": None if data["span"] is None else tuple(data["span"]),
        }
    )
    known = {*ATTRIBUTES, *(f"{m}()" for m in METHODS)}
    if not isinstance(shown.literal, (str, int, float, type(None))):
        raise ValueError("not a literal")
    if not set(shown.access) <= known:
        raise ValueError(f"not an attribute shown: {shown.access}")
    if not isinstance(shown.spec, str) or shown.conversion not in CONVERSIONS:
        raise ValueError("not a format")
    return shown


def step_from_json(data: dict[str, Any]) -> Step:
    """The step ``_step_json`` wrote; an error for anything else (an IR calling an operation
    the language does not have, a kind no step has)."""
    if data["kind"] not in _KINDS:
        raise ValueError(f"not a step: {data['kind']!r}")
    if data["dtype"] not in (None, *pytorch.DTYPES.values()):
        raise ValueError(f"not a dtype: {data['dtype']!r}")
    given = dict(data)
    given["statement"] = Statement(*data["statement"])
    given["ir"] = None if data["ir"] is None else from_json(data["ir"], F.PROGRAM_OPS)
    output, gradient, retain, inputs, zero = data["backward"] or (None,) * 5
    given["backward"] = (
        None
        if output is None
        else pytorch.Backward(
            output, gradient, bool(retain), None if inputs is None else tuple(inputs), bool(zero)
        )
    )
    given["grad"] = None if data["grad"] is None else Gradients(**data["grad"])
    given["functional"] = None if data["functional"] is None else Functional(**data["functional"])
    given["targets"] = tuple(data["targets"])
    given["parameters"] = tuple(data["parameters"])
    given["error"] = None if data["error"] is None else tuple(data["error"])
    given["shown"] = tuple(_shown_from_json(s) for s in data["shown"])
    return Step(**given)


_KINDS = (
    "assign",
    "number",
    "create",
    "write",
    "backward",
    "print",
    "show",
    "nothing",
    "autograd",
    "update",
    "functional",
    "retain",
    "default_dtype",
    "seed",
    "raise",
)
CONVERSIONS: dict[int, Callable[[Any], str]] = {
    -1: format,
    ord("s"): str,
    ord("r"): repr,
    ord("a"): ascii,
}


# -- from text to steps ------------------------------------------------------------------------
