"""The passes ``--batch`` traces for each command, and how a chunk's rows fold back into each
point's results.

eval, grad, vjp, jvp and hvp trace one pass that gives a point's results (the vector v or the
tangents t are the same at every point). jacobian and hessian trace one product (a VJP, a JVP
or a Hessian-vector product) and replay it at every point with each basis vector: a chunk of
P points is one replay of P x (number of basis vectors) rows. check replays three passes, the
Jacobian in reverse mode, in forward mode, and the program's value at x + h e_k and x - h e_k
(finite differences), and compares them at each point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np

from ..base.errors import GradcliError, from_engine
from ..commands.compute import (
    MODES,
    Bound,
    _jacobian_inputs,
    _scalar_output,
    _targets,
    check_size,
    hvp_targets,
    hvp_vectors,
    output_of,
    tangents_of,
)
from ..engine.compile import NotBatchable, Tape, trace
from ..engine.functional import forward_pass
from ..ops import library as gc
from .batched import Specialised, specialise

Sections = dict[str, dict[str, np.ndarray]]  # section ("values", "grads", ...) -> name -> array


@dataclass(frozen=True)
class Settings:
    """What a command takes beside v and --wrt: jvp's tangents, hvp's vectors, jacobian's
    mode, check's tolerances."""

    tangents: dict[str, np.ndarray] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    mode: str = "auto"
    atol: float = 1e-5
    rtol: float = 1e-3


@dataclass
class Pass:
    """A traced pass and the rows it is replayed at: one a point; or, with ``seeds`` (each an
    array of the seed vectors of one of the tape's last inputs), one a point and seed vector;
    or, with ``differenced`` (the inputs' positions among the tape's), the 2 n points
    x +- h e_k of a point's n elements of those inputs, whose outputs come back as the
    difference quotients. ``function`` is the traced one, for a replay point by point;
    ``dtypes`` the dtype of each of the tape's slots as traced (the tape's own, which the
    tracing read off the values it kept: ``batched.slot_dtypes``, which replays the tape
    for them, gives the same for every slot a step of the tape makes)."""

    tape: Tape
    seeds: tuple[np.ndarray, ...] = ()
    differenced: tuple[int, ...] = ()
    function: Callable | None = None
    dtypes: tuple = ()
    # the tape specialised to the levels of its inputs (``batched.specialise``), by levels
    specialised: dict = field(default_factory=dict, repr=False, compare=False)

    def rows(self) -> int:
        """The rows of the replay a point takes."""
        if self.differenced:
            return 2 * sum(
                int(np.prod(self.tape.shapes[self.tape.inputs[i]])) for i in self.differenced
            )
        return len(self.seeds[0]) if self.seeds else 1

    def replay(
        self, arrays: list, batched: list[bool], size: int, bound: Bound | None, first: int = 0
    ) -> list:
        """The outputs at ``size`` points (``arrays``: each input's, ``batched`` where it has a
        leading point dimension; the first numbered ``first``): arrays of (size, ...), or
        (size, seeds, ...) with seeds."""
        where = (bound, first, self.rows())
        if self.differenced:
            return self._differences(arrays, batched, size, where)
        if not self.seeds:
            return replayed(self, arrays, batched, size, where)
        rows = len(self.seeds[0])
        tiled = [np.tile(s, (size,) + (1,) * (s.ndim - 1)) for s in self.seeds]
        levels = (*(int(b) for b in batched), *(2 for _ in self.seeds))
        program = self.program(levels)
        if program is not None:
            with np.errstate(all="ignore"):
                return program.run([*arrays, *tiled], size, grouped=True)
        arrays = [np.repeat(a, rows, axis=0) if b else a for a, b in zip(arrays, batched)]
        flags = [*batched, *(True for _ in self.seeds)]
        outputs = replayed(self, [*arrays, *tiled], flags, size * rows, where)
        return [o.reshape((size, rows) + o.shape[1:]) for o in outputs]

    def program(self, levels: tuple[int, ...]) -> Specialised | None:
        """The tape specialised to its inputs' ``levels``, made at the first replay (None
        where a step has no batch rule)."""
        if levels not in self.specialised:
            try:
                rows = len(self.seeds[0]) if self.seeds else 1
                self.specialised[levels] = specialise(self.tape, levels, self.dtypes, rows)
            except NotBatchable:
                self.specialised[levels] = None
        return self.specialised[levels]

    def _differences(self, arrays: list, batched: list[bool], size: int, where) -> list:
        """Central differences with the step eps^(1/3) scaled to each coordinate's magnitude,
        as ``compute.finite_difference_jacobian`` takes them: (size, n, *output.shape)."""
        arrays, batched = list(arrays), list(batched)
        for i in self.differenced:  # every point differs in these inputs
            if not batched[i]:
                arrays[i] = np.broadcast_to(arrays[i], (size,) + np.shape(arrays[i]))
                batched[i] = True
        rows = self.rows()
        expanded = [np.repeat(a, rows, axis=0) if b else a for a, b in zip(arrays, batched)]
        steps, offset = [], 0
        for i in self.differenced:
            dtype = expanded[i].dtype
            base = np.asarray(arrays[i]).reshape(size, -1)
            m = base.shape[1]
            h = (np.finfo(dtype).eps ** (1 / 3) * np.maximum(1.0, np.abs(base))).astype(dtype)
            moved = expanded[i].reshape(size, rows // 2, 2, m)
            k = np.arange(m)
            moved[:, offset + k, 0, k] += h
            moved[:, offset + k, 1, k] -= h
            expanded[i] = moved.reshape(expanded[i].shape)
            steps.append(h)
            offset += m
        (values,) = replayed(self, expanded, batched, size * rows, where)
        values = values.reshape((size, rows // 2, 2) + values.shape[1:])
        h = np.concatenate(steps, axis=1).reshape((size, rows // 2) + (1,) * (values.ndim - 3))
        return [(values[:, :, 0] - values[:, :, 1]) / (2 * h)]


@contextmanager
def at_point(index: int) -> Iterator[None]:
    """Errors of the user's kind raised for one point say which point (numbered from 0)."""
    try:
        yield
    except GradcliError as exc:
        raise GradcliError(f"--batch: point {index}: {exc.message}", hint=exc.hint) from None
    except gc.EngineError as exc:
        error = from_engine(exc)
        raise GradcliError(f"--batch: point {index}: {error.message}", hint=error.hint) from None


def replayed(step: Pass, arrays: list, batched: list[bool], size: int, where: tuple) -> list:
    """``step``'s tape replayed at ``size`` rows at once; where an operation has no batch rule,
    row by row; where the shapes follow each row's values (x[x > 0]), traced anew at each.
    ``where``: the bound program (where it was traced), the number of the first point and
    the rows a point takes."""
    with np.errstate(all="ignore"):
        program = step.program(tuple(int(b) for b in batched))
        if program is not None:
            return program.run(arrays, size)
        if not step.tape.dynamic:
            return _row_by_row(step.tape, arrays, batched, size)
        bound, first, per = where
        assert bound is not None, "a dynamic tape is replayed where it was traced"
        return _each_traced(bound, step.function, arrays, batched, size, first, per)


def _row_by_row(tape: Tape, arrays: list, batched: list[bool], count: int) -> list:
    rows = [tape.run(*[a[i] if b else a for a, b in zip(arrays, batched)]) for i in range(count)]
    return [np.stack(column) for column in zip(*rows)]


def _each_traced(
    bound: Bound, function, arrays: list, batched: list[bool], count: int, first: int, rows_per: int
) -> list:
    """The pass run on the engine at each row: for a program whose shapes follow its values (a
    mask computed from the inputs), which no tape of one point replays at another. An error
    names the point of its row (``rows_per`` rows a point, the first point ``first``)."""
    rows = []
    for i in range(count):
        values = [gc.Tensor(np.array(a[i] if b else a)) for a, b in zip(arrays, batched)]
        with at_point(first + i // rows_per):
            rows.append([o.numpy() for o in bound.engine(partial(function, *values))])
    shapes = {tuple(np.shape(r[0])) for r in rows}
    if len(shapes) > 1:
        raise GradcliError(
            f"--batch: the output has a different shape at different points ({sorted(shapes)})",
            hint="reduce it to one shape (sum, mean, ...), or give the points one at a time",
        )
    return [np.stack(column) for column in zip(*rows)]


# -- the traced functions -----------------------------------------------------------------------


class Retrace(Exception):
    """The pass traced before the output was known does not fit it (a Jacobian wanted in
    reverse mode): the plan is made again the long way, the program run first."""


@dataclass
class Output:
    """The output the passes differentiate, ``asked`` by --of (None: the default): named and
    its value known from a run of the program at the bound point, or else by the first run
    of the pass being traced, which then hands them to ``check`` (the refusals that read the
    output; ``Retrace`` where the pass does not fit it) before it goes on past the program."""

    bound: Bound
    asked: str | None
    name: str | None = None
    out: gc.Tensor | None = None
    check: Callable[[str, gc.Tensor], None] | None = None

    def of(self, env: dict[str, gc.Tensor]) -> gc.Tensor:
        """The output in ``env``, the values of one run of the program."""
        if self.name is None:
            self.name, self.out = output_of(self.bound, env, self.asked)
            if self.check is not None:
                self.check(self.name, self.out)
        return env[self.name]


def _of_inputs(output: Output, names: list[str]) -> Callable:
    """The program's output as a function of all its inputs, in ``names``' order."""
    return lambda *values: output.of(output.bound.run(dict(zip(names, values))))


def _reverse(output: Output, names: list[str], targets: list[str], v, seeded: bool):
    """(inputs..., [seed]) -> [output, *J^T seed for each target]: the seed is v (fixed, or
    None for a scalar output) or, ``seeded``, the tape's last input."""
    bound = output.bound

    def one_pass(*values):
        leaves = dict(zip(names, values[: len(names)]))
        for t in targets:
            leaves[t].requires_grad = True
        result = output.of(bound.run(leaves))
        if not targets:
            return [result]
        seed = (
            values[-1] if seeded else None if v is None else gc.Tensor(np.asarray(v, bound.dtype))
        )
        if seeded and result.shape != seed.shape:  # x[x > 0]: the rows of J vary in number
            raise GradcliError(
                f"the output {output.name} has shape {result.shape} here, but {seed.shape} at the "
                "point the pass was traced at",
                hint="reduce it to one shape (sum, mean, ...), or give the points one at a time",
            )
        grads = gc.grad(result, [leaves[t] for t in targets], seed, allow_unused=True)
        zeros = [gc.zeros(*leaves[t].shape, dtype=bound.dtype) for t in targets]
        return [result, *(z if g is None else g for g, z in zip(grads, zeros))]

    return one_pass


def _tangent(output: Output, names: list[str], targets: list[str], fixed: dict):
    """(inputs..., a tangent for each target) -> [output, J t]; ``fixed`` tangents (jvp's
    --t) instead when ``targets`` is empty, zero for the inputs neither gives."""
    bound, function = output.bound, _of_inputs(output, names)

    def one_pass(*values):
        given = dict(zip(targets, values[len(names) :]))
        given.update({n: gc.Tensor(np.asarray(t, bound.dtype)) for n, t in fixed.items()})
        tangents = [
            given.get(n, gc.Tensor(np.zeros(np.shape(v.data), bound.dtype)))
            for n, v in zip(names, values)
        ]
        return list(forward_pass(function, tuple(values[: len(names)]), tangents))

    return one_pass


def _hvp(output: Output, names: list[str], targets: list[str], fixed: dict):
    """(inputs..., [a vector for each target]) -> [output, *H v for each target]; ``fixed``
    vectors (hvp's --v) instead when the tape takes none."""
    bound = output.bound

    def one_pass(*values):
        inputs = dict(zip(names, values[: len(names)]))
        given = values[len(names) :] or [
            gc.Tensor(np.asarray(fixed[t], bound.dtype)) for t in targets
        ]

        def function(*xs):
            return output.of(bound.run({**inputs, **dict(zip(targets, xs))})).reshape(())

        out, products = gc.hvp(function, tuple(inputs[t] for t in targets), tuple(given))
        products = products if isinstance(products, tuple) else (products,)
        return [out, *products]

    return one_pass


def _basis(shapes: list[tuple[int, ...]], dtype) -> tuple[np.ndarray, ...]:
    """The basis vectors of the inputs of ``shapes`` together: for each input, an array of
    (n, *shape) whose row k is e_k where k is one of its elements, zero elsewhere."""
    sizes = [int(np.prod(s)) for s in shapes]
    identity = np.eye(sum(sizes), dtype=dtype)
    starts = np.cumsum([0, *sizes])
    return tuple(identity[:, a:b].reshape((-1, *s)) for a, b, s in zip(starts, starts[1:], shapes))


# -- a command's passes, and how their outputs fold into sections ------------------------------


@dataclass
class Layout:
    """What folds a command's outputs into the sections of its results."""

    command: str
    output: str
    shape: tuple[int, ...]  # the output's
    targets: list[str]
    shapes: dict[str, tuple[int, ...]]  # of the targets
    sections: Callable[[Layout, list[list]], Sections]  # the command's own (``Batching.fold``)
    forward: bool = False  # jacobian: computed in forward mode
    atol: float = 1e-5
    rtol: float = 1e-3

    def fold(self, outputs: list[list]) -> Sections:
        """The sections of a chunk's results from the outputs of each pass."""
        first = outputs[0]
        value = first[0][:, 0] if first[0].ndim > len(self.shape) + 1 else first[0]
        sections: Sections = {"values": {self.output: value}}
        sections.update(self.sections(self, outputs))
        return sections

    def split(self, rows: np.ndarray, after: tuple[int, ...]) -> dict[str, np.ndarray]:
        """Rows (size, n, *after), one a basis vector of the targets, as a block
        (size, *target.shape, *after) per target."""
        blocks, start = {}, 0
        for t in self.targets:
            m = int(np.prod(self.shapes[t]))
            blocks[t] = rows[:, start : start + m].reshape((len(rows), *self.shapes[t], *after))
            start += m
        return blocks

    def columns(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Rows (size, n, *output.shape), one a column of J, as J (size, *output, *target)."""
        k = len(self.shape)
        return {
            t: np.moveaxis(
                block, tuple(range(1, 1 + len(self.shapes[t]))), tuple(range(1 + k, block.ndim))
            )
            for t, block in self.split(rows, self.shape).items()
        }

    def jacobian(self, outputs: list, forward: bool) -> dict[str, np.ndarray]:
        """The Jacobian by target from a reverse pass's outputs (or a forward one's)."""
        if forward:
            return self.columns(outputs[1])
        return {
            t: g.reshape((len(g), *self.shape, *self.shapes[t]))
            for t, g in zip(self.targets, outputs[1:])
        }

    def compare(self, reference: dict, others: list[dict]) -> dict[str, np.ndarray]:
        """check at each point: whether every method agrees with reverse mode (within atol and
        rtol, as ``compute.check``), and the largest |method - reverse| (inf where one of the
        two is NaN and the other not)."""
        size = len(next(iter(reference.values())))
        agree, error = np.ones(size, bool), np.zeros(size)
        for method in others:
            for t, a in reference.items():
                b = method[t]
                close = np.isclose(b, a, rtol=self.rtol, atol=self.atol, equal_nan=True)
                agree &= close.reshape(size, -1).all(axis=1)
                with np.errstate(invalid="ignore"):
                    gap = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(b - a))
                gap = np.where(np.isnan(gap), np.inf, gap).reshape(size, -1)
                if gap.shape[1]:
                    error = np.maximum(error, gap.max(axis=1))
        return {"agree": agree, "max_error": error}


@dataclass
class Tracing:
    """What a command's passes are traced from at the bound point: the ``output`` (its name
    and value, known before the tracing or from its first pass), the inputs (``names``, at
    their values ``start``), the ``targets`` and the basis vectors of their elements, and the
    ``layout`` the passes fold by."""

    bound: Bound
    output: Output
    targets: list[str]
    layout: Layout
    names: list[str] = field(init=False)
    start: list = field(init=False)

    def __post_init__(self) -> None:
        self.names = list(self.bound.arrays)
        self.start = [self.bound.arrays[n] for n in self.names]

    @cached_property
    def basis(self) -> tuple[np.ndarray, ...]:
        """The basis vectors of the targets (``_basis``), made where a pass takes them."""
        return _basis([self.layout.shapes[t] for t in self.targets], self.bound.dtype)

    @property
    def name(self) -> str:
        assert self.output.name is not None, "the output is known once the program ran"
        return self.output.name

    @property
    def out(self) -> gc.Tensor:
        assert self.output.out is not None, "the output is known once the program ran"
        return self.output.out

    def traced(self, function, *seeds, differenced=()) -> Pass:
        """``function`` traced at the bound point (with the first of each of ``seeds``)."""
        examples = [*self.start, *(s[0] for s in seeds)]
        tape = self.bound.engine(lambda: trace(function, *examples))
        return Pass(tape, tuple(seeds), differenced, function, tape.dtypes)

    def reverse(self, v, seeded: bool = False) -> Callable:
        """The output and J^T v for each target (see ``_reverse``)."""
        return _reverse(self.output, self.names, self.targets, v, seeded)

    def sizes(self) -> tuple[int, int]:
        """The elements of the targets together, and of the output; refused when either has
        none (a Jacobian without elements)."""
        n_in = sum(int(np.prod(s)) for s in self.layout.shapes.values())
        n_out = self.out.numel()
        if not n_in or not n_out:
            raise GradcliError(
                f"--batch: the Jacobian of {self.name} has no elements (the output has "
                f"{n_out}, the inputs {n_in})",
                hint="differentiate an output and inputs that hold elements",
            )
        return n_in, n_out

    def reverse_jacobian(self) -> Pass:
        """J^T replayed with each basis vector of the output as the cotangent."""
        n_out = self.out.numel()
        cotangents: np.ndarray = np.eye(n_out, dtype=self.bound.dtype).reshape(
            (n_out, *self.out.shape)
        )
        return self.traced(self.reverse(None, True), cotangents)

    def forward_jacobian(self) -> Pass:
        """J replayed with each basis vector of the targets as the tangent."""
        return self.traced(_tangent(self.output, self.names, self.targets, {}), *self.basis)


Targets = Callable[[Bound, "list[str] | None", Settings], list[str]]
Settle = Callable[[Bound, str, str, gc.Tensor, list[str], Settings], Settings]
Early = Callable[[Bound, list[str], Settings], Settings]


@dataclass(frozen=True)
class Batching:
    """How --batch computes a command (named by its entry in ``commands.table``): the inputs
    it differentiates by (``targets``), what it refuses at one point before any tracing and
    the settings it then takes (``settle``), the passes it traces (``trace``), and the
    sections of each point's results their outputs fold into (``fold``). ``implicit_v``: v
    may be left out for a scalar output only (grad, vjp).

    ``once``: its passes may be traced before the program has run (``plan.plan`` then runs it
    once, in the first pass, not once alone and again in the pass), with the settings that
    ``early`` reads without the output (what ``settle`` gives where it needs none of it); the
    output is then checked by ``refuses`` (None: ``settle``), given the settings ``early``
    gave: what ``settle`` checks of the output, without settling again what ``early`` has."""

    targets: Targets
    settle: Settle
    trace: Callable[[Tracing, object, Settings], list[Pass]]
    fold: Callable[[Layout, list[list]], Sections]
    implicit_v: bool = False
    early: Early = lambda bound, targets, settings: settings
    once: bool = True
    refuses: Settle | None = None


def _no_targets(bound: Bound, wrt: list[str] | None, settings: Settings) -> list[str]:
    return []


def _wrt_targets(bound: Bound, wrt: list[str] | None, settings: Settings) -> list[str]:
    return _targets(bound, wrt)


def _vector_targets(bound: Bound, wrt: list[str] | None, settings: Settings) -> list[str]:
    return hvp_targets(bound, settings.vectors, wrt)


def _as_given(bound, command, name, out, targets, settings: Settings) -> Settings:
    return settings


def _tangents_read(bound, command, name, out, targets, settings: Settings) -> Settings:
    return _tangents_early(bound, targets, settings)


def _vectors_read(bound, command, name, out, targets, settings: Settings) -> Settings:
    _scalar_output(name, out, command)
    return _vectors_early(bound, targets, settings)


def _scalar_checked(bound, command, name, out, targets, settings: Settings) -> Settings:
    _scalar_output(name, out, command)
    return settings


def _second_derivatives(bound, command, name, out, targets, settings: Settings) -> Settings:
    _scalar_output(name, out, command)
    _jacobian_inputs(bound, name, out, targets)
    return settings


def _jacobian_settled(bound, command, name, out, targets, settings: Settings) -> Settings:
    _jacobian_inputs(bound, name, out, targets)
    if settings.mode not in MODES:
        raise GradcliError(f"unknown mode {settings.mode!r}", hint=f"use one of {', '.join(MODES)}")
    return settings


def _tolerances_checked(bound, command, name, out, targets, settings: Settings) -> Settings:
    check_size(bound, name, out, targets, settings.atol, settings.rtol)
    return settings


def _trace_reverse(tracing: Tracing, v, settings: Settings) -> list[Pass]:
    return [tracing.traced(tracing.reverse(v))]


# Settings made by their fields, not by ``dataclasses.replace`` (its walk over the fields is
# some 160 bytecodes, twice a batch of jvp or hvp)
def _tangents_early(bound: Bound, targets: list[str], settings: Settings) -> Settings:
    tangents = tangents_of(bound, settings.tangents)
    return Settings(tangents, settings.vectors, settings.mode, settings.atol, settings.rtol)


def _vectors_early(bound: Bound, targets: list[str], settings: Settings) -> Settings:
    vectors = hvp_vectors(bound, targets, settings.vectors)
    return Settings(settings.tangents, vectors, settings.mode, settings.atol, settings.rtol)


def _trace_tangents(tracing: Tracing, v, settings: Settings) -> list[Pass]:
    t = tracing
    return [t.traced(_tangent(t.output, t.names, [], settings.tangents))]


def _trace_vectors(tracing: Tracing, v, settings: Settings) -> list[Pass]:
    t = tracing
    return [t.traced(_hvp(t.output, t.names, t.targets, settings.vectors))]


def _trace_basis_products(tracing: Tracing, v, settings: Settings) -> list[Pass]:
    t = tracing
    return [t.traced(_hvp(t.output, t.names, t.targets, {}), *t.basis)]


def _trace_jacobian(tracing: Tracing, v, settings: Settings) -> list[Pass]:
    mode, layout = settings.mode, tracing.layout
    if tracing.output.name is None:  # the program not run yet: forward mode, if it fits
        if mode not in ("forward", "auto", "dense"):
            raise Retrace(mode)  # a reverse pass's seeds take the output's shape
        check = tracing.output.check

        def fits(name: str, out: gc.Tensor) -> None:
            if check is not None:
                check(name, out)
            n_in, n_out = tracing.sizes()
            if not (mode == "forward" or n_in < n_out):
                raise Retrace(mode)

        tracing.output.check = fits
        layout.forward = True
        return [tracing.forward_jacobian()]
    n_in, n_out = tracing.sizes()
    layout.forward = mode == "forward" or (mode in ("auto", "dense") and n_in < n_out)
    return [tracing.forward_jacobian() if layout.forward else tracing.reverse_jacobian()]


def _trace_four_ways(tracing: Tracing, v, settings: Settings) -> list[Pass]:
    t = tracing
    t.sizes()
    t.layout.atol, t.layout.rtol = settings.atol, settings.rtol
    value = _reverse(t.output, t.names, [], None, False)
    positions = tuple(t.names.index(target) for target in t.targets)
    reverse, forward = t.reverse_jacobian(), t.forward_jacobian()
    return [reverse, forward, t.traced(value, differenced=positions)]


def _no_sections(layout: Layout, outputs: list[list]) -> Sections:
    return {}


def _gradients(layout: Layout, outputs: list[list]) -> Sections:
    return {"grads": dict(zip(layout.targets, outputs[0][1:]))}


def _of_output(layout: Layout, outputs: list[list]) -> Sections:
    return {layout.command: {layout.output: outputs[0][1]}}


def _by_target(layout: Layout, outputs: list[list]) -> Sections:
    return {layout.command: dict(zip(layout.targets, outputs[0][1:]))}


def _jacobians(layout: Layout, outputs: list[list]) -> Sections:
    return {layout.command: layout.jacobian(outputs[0], layout.forward)}


def _hessian_blocks(layout: Layout, outputs: list[list]) -> Sections:
    targets = layout.targets
    rows = {b: layout.split(p, layout.shapes[b]) for b, p in zip(targets, outputs[0][1:])}
    return {layout.command: {f"{a},{b}": rows[b][a] for a in targets for b in targets}}


def _agreement(layout: Layout, outputs: list[list]) -> Sections:
    reference = layout.jacobian(outputs[0], False)
    others = [layout.jacobian(outputs[1], True), layout.columns(outputs[2][0])]
    return {layout.command: layout.compare(reference, others)}


#: The ways --batch computes a command; each command's entry in ``commands.table`` names its.
VALUES = Batching(_no_targets, _as_given, _trace_reverse, _no_sections)
GRADIENTS = Batching(_wrt_targets, _as_given, _trace_reverse, _gradients, implicit_v=True)
TANGENTS = Batching(
    _no_targets, _tangents_read, _trace_tangents, _of_output, early=_tangents_early,
    refuses=_as_given,
)  # fmt: skip
HESSIAN_PRODUCTS = Batching(
    _vector_targets, _vectors_read, _trace_vectors, _by_target, early=_vectors_early,
    refuses=_scalar_checked,
)  # fmt: skip
JACOBIANS = Batching(_wrt_targets, _jacobian_settled, _trace_jacobian, _jacobians)
HESSIANS = Batching(_wrt_targets, _second_derivatives, _trace_basis_products, _hessian_blocks)
# its first pass's seeds take the output's shape
FOUR_WAYS = Batching(_wrt_targets, _tolerances_checked, _trace_four_ways, _agreement, once=False)


def passes(
    bound: Bound,
    command: str,
    batching: Batching,
    output: Output,
    targets: list[str],
    v,
    settings: Settings,
) -> tuple[list[Pass], Layout]:
    """Trace the passes of ``command`` (computed as ``batching`` says) at the bound point
    (see the module's docstring); the ``output``, where not known yet, is found by the first
    pass's run of the program."""
    shapes = {t: bound.arrays[t].shape for t in targets}
    layout = Layout(command, output.name or "", (), targets, shapes, batching.fold)
    steps = batching.trace(Tracing(bound, output, targets, layout), v, settings)
    assert output.name is not None and output.out is not None, "a pass runs the program"
    layout.output, layout.shape = output.name, tuple(output.out.shape)
    return steps, layout
