"""The library API of the commands: ``gradcli.program(text)`` and its methods.

A ``Program`` is a parsed program; each of its methods is one command of the command line
(``eval``, ``grad``, ``vjp``, ``jacobian``, ``jvp``, ``hessian``, ``hvp``, ``check``,
``graph``, ``plot``, ``explain``, ``derivative``, ``uncertainty``, ``export``) and returns the
very result record the command renders (``gradcli.results``), computed by the same function
(``gradcli.commands.compute``)::

    >>> import gradcli
    >>> p = gradcli.program("y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1")
    >>> p.vjp(x=[1, 2], v=[1, 1, 1]).grads["x"]
    array([ 4., 23.])

Input values are keyword arguments named after the inputs (or the ``inputs`` mapping, for an
input whose name is also a parameter's, such as ``v``): a number, nested lists, a numpy
array, an engine ``Tensor``, or text in the command line's value syntax (``"ones(2,2)"``,
``"rand(3)"``, ``"@x.npy"``). ``text(result, "json")`` is what the command prints.

``exact=True`` (``eval``, ``grad``, ``jacobian``, ``hessian``: ``--exact``) computes with
sympy and returns an ``Exact`` record; ``batch=`` (``eval``, ``grad``, ``vjp``: ``--batch``)
runs the command at many points and returns one ``Points`` record whose arrays stack the
points' results along a first dimension, as numpy's vectorized functions do.

Bad input raises ``GradcliError`` (``gradcli.base.errors``), or the engine's ``EngineError``
(``ShapeError``, ``DomainError``, ...), never an internal exception. A keyword argument that
is neither a parameter of the method nor an input of the program raises ``ArgumentError``,
both a ``GradcliError`` and a ``TypeError`` (Python's error for an unexpected keyword
argument), naming the argument, the method's parameters and the program's inputs::

    >>> p.vjp(x=[1, 2], vv=[1, 1, 1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gradcli.base.errors.ArgumentError: vjp() got an unexpected keyword argument 'vv' (did you ...
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .base.errors import ArgumentError, GradcliError

if TYPE_CHECKING:
    import numpy as np

    from .commands.compute import Bound
    from .commands.uncertainty import Uncertainty
    from .lang import ParsedProgram
    from .results import (
        HVP,
        JVP,
        VJP,
        Check,
        Exact,
        Explanation,
        Grads,
        Graph,
        Hessian,
        HigherDerivatives,
        Jacobian,
        Plot,
        Points,
        Result,
        Several,
        Values,
    )

__all__ = ["Program", "program", "text"]


def program(
    source: str, *, dtype: str = "float64", seed: int = 0, use_cache: bool = True
) -> Program:
    """Parse ``source`` (statements ``name = expression`` separated by ``;`` or newlines, as
    ``gradcli eval -e SOURCE``) into a ``Program``.

    ``dtype`` is ``"float64"`` or ``"float32"`` (``--dtype``); ``seed`` seeds ``rand`` and
    ``randn`` values and dropout (``--seed``); ``use_cache=False`` parses afresh
    (``--no-cache``). A program that does not parse raises ``GradcliError``.
    """
    return Program(source, dtype=dtype, seed=seed, use_cache=use_cache)


def text(result: Result, format: str = "table", precision: int = 4) -> str:
    """What the command line prints for ``result`` with ``--format format`` (``table``,
    ``json``, ``csv``; a graph also ``dot``) and ``--precision precision``, as a string.
    Warnings are not part of it: they are ``result.warnings``."""
    from .render import Options, render

    out = io.StringIO()
    render(result, format, Options(precision), out)
    return out.getvalue()


class Program:
    """A parsed program, whose methods are the commands (see ``gradcli.program``).

    Every method takes the values of the program's inputs as keyword arguments (``x=[1, 2]``)
    and/or as the mapping ``inputs``; ``of`` names the output (default: the last assigned
    name, as ``--of``) and ``wrt`` the inputs that require grad (default: all of them, as
    ``--wrt``). Each call binds fresh values: nothing is kept from one call to the next.

    ``of`` may name several outputs, ``"y,z"`` or ``["y", "z"]`` (as ``--of y,z``): ``grad``
    and ``vjp`` differentiate them together, as ``torch.autograd.backward([y, z])`` does
    (the gradients are sums; ``v`` is then a mapping from output names to vectors, or a
    list of one vector per output), and ``jacobian``, ``jvp``, ``hessian``, ``hvp`` and
    ``check`` answer each on its own, in one ``Several`` record (``result.parts``)::

        >>> import gradcli
        >>> p = gradcli.program("y = x**2; z = sum(x)")
        >>> p.vjp(x=[1, 2], of="y,z", v={"y": [1, 1], "z": 2}).grads["x"]
        array([4., 6.])
        >>> [part.jacobians["x"].tolist() for part in p.jacobian(x=[1, 2], of="y,z").parts]
        [[[2.0, 0.0], [0.0, 4.0]], [1.0, 1.0]]
    """

    def __init__(
        self, source: str, *, dtype: str = "float64", seed: int = 0, use_cache: bool = True
    ) -> None:
        from .commands.compute import DTYPES

        if dtype not in DTYPES:
            raise GradcliError(
                f"dtype {dtype!r} is not one of {', '.join(DTYPES)}", hint="use float64 or float32"
            )
        self.source = source
        self.dtype = dtype
        self.seed = seed
        self.parsed: ParsedProgram = _parsed(source, use_cache, seed)

    def __repr__(self) -> str:
        return f"gradcli.program({self.source!r})"

    @property
    def targets(self) -> list[str]:
        """The assigned names, in order."""
        return list(self.parsed.targets)

    @property
    def inputs(self) -> list[str]:
        """The inputs of the program (the names it uses and never assigns, and those a
        constructor declares), as they are before any value is given."""
        return [name.split("#")[0] for name in self.parsed.inputs(set())]

    # -- the commands ----------------------------------------------------------------------------

    def eval(
        self,
        *,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        exact: bool = False,
        batch: Any = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Values | Exact | Points:
        """``gradcli eval``: the value of every input and every assigned name (``exact``:
        computed with sympy; ``batch``: the output at every point; see ``grad``)."""
        from .commands.compute import evaluate

        def floats(inputs: Mapping[str, Any] | None, values: dict[str, Any]) -> Values:
            return evaluate(_bind(self, "eval", inputs, values, wrt), of)

        return _call(self, "eval", floats, inputs, values, of, wrt, exact=exact, batch=batch)

    def grad(
        self,
        *,
        v: Any = None,
        of: str | Sequence[str] | None = None,
        wrt: Sequence[str] | None = None,
        show: Sequence[str] = (),
        retain_grad: Sequence[str] = (),
        repeat: int = 1,
        symbolic: bool = False,
        exact: bool = False,
        batch: Any = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Grads | Exact | Points:
        """``gradcli grad``: ``out.backward(v)`` (``repeat`` times), then ``.grad`` of every
        input, and of the intermediate names ``show`` and ``retain_grad``.

        ``exact=True`` computes with sympy (an ``Exact`` record; floats, saying why first
        among the warnings, where sympy cannot). ``batch`` runs at many points: an array
        whose first dimension counts the points of x, a mapping from input names to such
        arrays, or the command line's ``"@points.npy"`` (``.csv``, ``.npz``); the result is
        one ``Points`` record, the values and gradients stacked along a first dimension::

            >>> import gradcli
            >>> p = gradcli.program("f = sum(x**2)")
            >>> p.grad(batch=[[1, 2], [3, 4]]).grads["x"]
            array([[2., 4.],
                   [6., 8.]])
            >>> p.grad(x="1/3,1/2", exact=True).blocks[1].texts
            array(['2/3', '1'], dtype=object)
        """
        from .commands.compute import grad

        def floats(inputs: Mapping[str, Any] | None, values: dict[str, Any]) -> Grads:
            bound = _bind(self, "grad", inputs, values, wrt)
            vector = _vectors(self, v, of)
            return grad(bound, of, vector, list(show), list(retain_grad), repeat, symbolic)

        return _call(self, "grad", floats, inputs, values, of, wrt, v, exact, batch)

    def vjp(
        self,
        *,
        v: Any = None,
        of: str | Sequence[str] | None = None,
        wrt: Sequence[str] | None = None,
        symbolic: bool = False,
        batch: Any = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> VJP | Points:
        """``gradcli vjp``: ``torch.autograd.grad(out, wrt, grad_outputs=v)``, J^T v for each
        name of ``wrt`` (inputs or intermediate names; default: every input). ``batch``: at
        many points, stacked (see ``grad``)."""
        from .commands.compute import vjp

        def floats(inputs: Mapping[str, Any] | None, values: dict[str, Any]) -> VJP:
            bound = _bind(self, "vjp", inputs, values)  # wrt may name intermediate nodes here
            wanted = None if wrt is None else _listed(wrt)
            return vjp(bound, of, _vectors(self, v, of), wanted, symbolic)

        return _call(self, "vjp", floats, inputs, values, of, wrt, v, batch=batch, use_wrt=False)

    def jacobian(
        self,
        *,
        of: str | Sequence[str] | None = None,
        wrt: Sequence[str] | None = None,
        transpose: bool = False,
        mode: str = "auto",
        sparse: bool | None = None,
        symbolic: bool = False,
        exact: bool = False,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Jacobian | Several | Exact:
        """``gradcli jacobian``: d out / d input for each input (output.shape + input.shape;
        the other way round with ``transpose``); ``mode`` is ``auto``, ``forward``,
        ``reverse`` or ``dense`` (``--mode``). ``sparse=True`` gives the non-zeros as
        coordinates (``result.sparse``, ``Coo`` records), ``False`` always dense; ``None``
        (the default) sparse when J is large and its pattern sparse, as the command line.
        ``exact=True``: computed with sympy (see ``grad``)::

            >>> import gradcli
            >>> J = gradcli.program("y = x**2").jacobian(x=[1, 2, 3], sparse=True)
            >>> J.sparse["x"].values
            array([2., 4., 6.])
        """
        from .commands.compute import MODES, jacobian

        def floats(inputs: Mapping[str, Any] | None, values: dict[str, Any]) -> Jacobian | Several:
            bound = _bind(self, "jacobian", inputs, values, wrt)
            wanted = None if wrt is None else _listed(wrt)
            return jacobian(bound, of, wanted, transpose, mode, symbolic, sparse)

        _choose(MODES, mode=mode)
        return _call(self, "jacobian", floats, inputs, values, of, wrt, exact=exact)

    def jvp(
        self,
        *,
        t: Any,
        of: str | Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> JVP | Several:
        """``gradcli jvp``: forward mode J t. ``t`` is the tangent of ``x``, or a mapping from
        input names to tangents (the others are 0)."""
        from .commands.compute import jvp

        tangents = _named(self, t, "t")
        bound = _bind(self, "jvp", inputs, values, tangents=list(tangents))
        return jvp(bound, of, tangents)

    def hessian(
        self,
        *,
        of: str | Sequence[str] | None = None,
        wrt: Sequence[str] | None = None,
        exact: bool = False,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Hessian | Several | Exact:
        """``gradcli hessian``: second derivatives of a scalar output, for each pair of
        ``wrt`` inputs (``exact=True``: computed with sympy, see ``grad``)."""
        from .commands.compute import hessian

        def floats(inputs: Mapping[str, Any] | None, values: dict[str, Any]) -> Hessian | Several:
            bound = _bind(self, "hessian", inputs, values, wrt)
            return hessian(bound, of, None if wrt is None else _listed(wrt))

        return _call(self, "hessian", floats, inputs, values, of, wrt, exact=exact)

    def hvp(
        self,
        *,
        v: Any,
        of: str | Sequence[str] | None = None,
        wrt: Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> HVP | Several:
        """``gradcli hvp``: H v of a scalar output. ``v`` is the vector for ``x``, or a mapping
        from input names to vectors."""
        from .commands.compute import hvp

        vectors = _named(self, v, "v")
        bound = _bind(self, "hvp", inputs, values, wrt)
        return hvp(bound, of, vectors, None if wrt is None else _listed(wrt))

    def check(
        self,
        *,
        of: str | Sequence[str] | None = None,
        wrt: Sequence[str] | None = None,
        atol: float = 1e-5,
        rtol: float = 1e-3,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Check | Several:
        """``gradcli check``: the Jacobian by reverse and forward mode, finite differences
        and sympy; ``result.agree`` says whether they agree within the tolerances."""
        from .commands.compute import check

        bound = _bind(self, "check", inputs, values, wrt)
        return check(bound, of, None if wrt is None else _listed(wrt), atol, rtol)

    def graph(
        self,
        *,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Graph:
        """``gradcli graph``: the computational graph's nodes (``wrt``: which inputs require
        grad, as ``--wrt``)."""
        from .commands.compute import graph

        return graph(_bind(self, "graph", inputs, values, wrt), of)

    def plot(
        self,
        *,
        x_range: tuple[float, float] = (-3.0, 3.0),
        wrt: Sequence[str] | None = None,
        direction: Any = None,
        points: int = 101,
        of: str | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Plot:
        """``gradcli plot``: the output and its derivative at ``points`` points of ``x_range``
        of one input (or along ``direction``); the input that varies needs no value."""
        from .commands.compute import plot, plot_defaults

        varied = None if wrt is None else _listed(wrt)
        line = _vector(self, direction, "--direction")
        bound = _bind(self, "plot", inputs, values, wrt, plot_defaults(varied, line))
        low, high = x_range
        return plot(bound, of, (float(low), float(high)), varied, line, points)

    def explain(
        self,
        *,
        v: Any = None,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Explanation:
        """``gradcli explain``: the chain rule with numbers (forward pass, backward pass,
        local derivatives, J^T v)."""
        from .commands.explain.chain import explain

        bound = _bind(self, "explain", inputs, values, wrt)
        return explain(bound, of, _vector(self, v, "v"))

    def derivative(
        self,
        *,
        order: int | None = None,
        wrt: Sequence[str] | None = None,
        taylor: bool = False,
        of: str | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> HigherDerivatives:
        """``gradcli derivative``: derivatives of any order of a scalar output, by the inputs
        (or elements, ``"x[1]"``) of ``wrt`` in turn; ``order`` k with one input is
        d^k f/dx^k; ``taylor=True``: the Taylor coefficients f^(k)(x)/k! up to ``order``::

            >>> import gradcli
            >>> p = gradcli.program("f = x**3 * z**2")
            >>> p.derivative(x=2, z=3, order=3, wrt="x,x,z").derivatives
            array([108., 108.,  72.])
        """
        from .commands.derivative import derivative

        _check_order(order)
        bound = _bind(self, "derivative", inputs, values)  # wrt names elements here (x[1])
        return derivative(bound, of, None if wrt is None else _listed(wrt), order, taylor)

    def uncertainty(
        self,
        *,
        sd: Mapping[str, Any] | None = None,
        cov: Any = None,
        of: Sequence[str] | None = None,
        wrt: Sequence[str] | None = None,
        second_order: bool = False,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Uncertainty:
        """``gradcli uncertainty``: each output's value, standard deviation and correlations
        (first order, J Σ Jᵀ), from the inputs' standard deviations ``sd`` (input name to
        one number or one per element; or a value's text ``"1.0±0.1"``, as on the command
        line) or their covariance ``cov`` (of ``wrt``'s elements, flattened in order);
        ``second_order=True`` adds the mean corrected by ½ tr(H Σ)::

            >>> import gradcli
            >>> p = gradcli.program("y = x0 * x1")
            >>> p.uncertainty(x=[1, 2], sd={"x": [0.1, 0.2]}).deviations["y"]
            array(0.28284271)
        """
        import numpy as np

        from .commands.uncertainty import deviation, propagate, split

        given = {**(inputs or {}), **values}
        spreads: dict[str, Any] = dict(sd or {})
        for name, value in given.items():
            if isinstance(value, str):
                given[name], spread = split(value)
                if spread is not None:
                    spreads[name] = spread
        named = {n: v for n, v in given.items() if n in values}
        bound = _bind(
            self, "uncertainty", {n: v for n, v in given.items() if n not in named}, named
        )
        unknown = [n for n in spreads if n not in bound.arrays]
        if unknown:
            raise GradcliError(
                f"sd gives a standard deviation of {unknown[0]!r}, which is not an input",
                hint=f"the inputs are: {', '.join(bound.arrays)}",
            )
        deviations = {
            name: deviation(
                value if isinstance(value, str) else _numbers(value, f"sd of {name}"),
                name,
                bound.arrays[name],
                self.seed,
            )
            for name, value in spreads.items()
        }
        matrix = None if cov is None else np.asarray(_array(self, cov, "cov"))
        names = None if of is None else _listed(of)
        wanted = None if wrt is None else _listed(wrt)
        return propagate(bound, names, deviations, matrix, wanted, second_order)

    def export(
        self,
        *,
        to: str = "torch",
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> str:
        """``gradcli export``: the program as the text of a runnable ``torch``, ``numpy``,
        ``jax`` or ``sympy`` script (which prints the output and its Jacobian by ``wrt`` at
        the given point as JSON), or as ``latex`` formulas::

            >>> import gradcli
            >>> latex = gradcli.program("y = x**2").export(to="latex", x=3)
            >>> latex.splitlines()[1]
            'y &= x^{2}'
        """
        from .commands.export import export
        from .ops.exporting import TARGETS

        _choose(TARGETS, to=to)
        bound = _bind(self, "export", inputs, values)
        return export(bound, of, None if wrt is None else _listed(wrt), to)


# -- binding a call's values to the program ------------------------------------------------


def _parsed(source: str, use_cache: bool, seed: int) -> ParsedProgram:
    """The program of ``source``: gradcli's notation, or a PyTorch script traced
    (``script.loading``), imported by name as the command table imports what computes, so that
    the package's import graph (which type checkers walk) does not reach the script wing."""
    import importlib

    loading = importlib.import_module(".script.loading", __package__)
    program: ParsedProgram = loading.load_program(source, use_cache, seed)
    return program


def _call(
    program: Program,
    command: str,
    floats: Callable[[Mapping[str, Any] | None, dict[str, Any]], Any],
    inputs: Mapping[str, Any] | None,
    values: dict[str, Any],
    of: str | Sequence[str] | None,
    wrt: Sequence[str] | None,
    v: Any = None,
    exact: bool = False,
    batch: Any = None,
    use_wrt: bool = True,
) -> Any:
    """A call of ``command``: with ``exact``, sympy's answer (``_exactly``); with ``batch``,
    the answer at every point (``_batch``; ``use_wrt``: whether ``wrt`` says which inputs
    require grad, else which names to differentiate by); else ``floats(inputs, values)``."""
    if exact and batch is not None:
        raise GradcliError("exact=True does not take batch", hint="leave out batch")
    if exact:
        return _exactly(program, command, inputs, values, of, wrt, v, floats)
    if batch is not None:
        vector = _vector(program, v, "v")
        return _batch(program, command, batch, inputs, values, of, vector, wrt, use_wrt)
    return floats(inputs, values)


def _given(program: Program, command: str, inputs: Mapping[str, Any] | None, named: dict) -> dict:
    """The input values of a call of ``command``, each keyword argument checked to be an
    input of the program (an unknown one is a misspelt parameter, more likely than not)."""
    values = {**(inputs or {}), **named}
    known = program.parsed.inputs(set(values))
    unknown = [name for name in named if name not in known]
    if unknown:
        raise _unexpected(command, unknown[0], [n.split("#")[0] for n in known])
    return values


def _array(program: Program, value: Any, name: str) -> np.ndarray:
    """An input value (or v, t) as the command line would read it."""
    import numpy as np

    from .lang.values import parse_value
    from .ops.library import Tensor

    if isinstance(value, str):
        return parse_value(value, name, program.seed)
    if isinstance(value, Tensor):  # its values: a program binds fresh leaves of its own
        return np.asarray(value.detach())
    return np.asarray(value)


def _bind(
    program: Program,
    command: str,
    inputs: Mapping[str, Any] | None,
    named: dict[str, Any],
    wrt: Sequence[str] | None = None,
    defaults: Any = None,
    tangents: Sequence[str] = (),
) -> Bound:
    from .commands.compute import bind

    given = {n: _array(program, v, n) for n, v in _given(program, command, inputs, named).items()}
    extra = {} if defaults is None else defaults(program.parsed, given)
    wanted = None if wrt is None else _listed(wrt)
    return bind(program.parsed, given, wanted, program.dtype, program.seed, extra, tangents)


def _vector(program: Program, value: Any, name: str) -> np.ndarray | None:
    return None if value is None else _array(program, value, name)


def _vectors(program: Program, value: Any, of: str | Sequence[str] | None) -> Any:
    """``v`` of grad and vjp: one vector, or with several outputs a mapping from their
    names to vectors or a list of one vector per output (``outputs.vectors_for``)."""
    from .commands.outputs import several

    if isinstance(value, Mapping):
        return {name: _array(program, v, f"v for {name}") for name, v in value.items()}
    if several(of) and isinstance(value, (list, tuple)):
        return [_array(program, v, "v") for v in value]
    return _vector(program, value, "v")


def _exactly(
    program: Program,
    command: str,
    inputs: Mapping[str, Any] | None,
    named: dict[str, Any],
    of: str | Sequence[str] | None,
    wrt: Sequence[str] | None,
    v: Any,
    floats: Callable[[Mapping[str, Any], dict[str, Any]], Any],
) -> Any:
    """``--exact``: the answer computed with sympy, each value read exactly where it can
    be (text as the command line reads it; numbers by their decimal digits, so 0.1 is
    1/10). Where sympy cannot give one, ``floats(inputs, values)``, the command's float
    answer, saying why first among its warnings."""
    from dataclasses import replace

    from .commands.outputs import one_output, refuse_several
    from .domains.exact import (
        Problem,
        answer,
        approximate_array,
        exact_value,
        floats_as_numbers,
    )
    from .domains.symbolic import NotSymbolic

    refuse_several(of, "exact=True")
    of = one_output(of)

    def read(value: Any, name: str) -> np.ndarray | None:
        text = value if isinstance(value, str) else repr(_array(program, value, name).tolist())
        return exact_value(text, name)

    exact, inexact = {}, {}
    for name, value in _given(program, command, inputs, named).items():
        number = read(value, name)
        if number is None:
            inexact[name] = _array(program, value, name)
        else:
            exact[name] = number
    vector = None if v is None else read(v, "v")
    if v is not None and vector is None:
        vector = floats_as_numbers(_array(program, v, "v"))[0]
    try:
        problem = Problem(program.parsed, exact, inexact, {}, program.seed, point=True)
        return answer(command, problem, of, None if wrt is None else _listed(wrt), vector)
    except NotSymbolic as exc:
        approximate = {n: approximate_array(a) for n, a in exact.items()}
        result = floats({**approximate, **inexact}, {})
        note = f"not exact: {exc}; the numbers are floats"
        return replace(result, warnings=(note, *result.warnings))


def _batch(
    program: Program,
    command: str,
    batch: Any,
    inputs: Mapping[str, Any] | None,
    named: dict[str, Any],
    of: str | Sequence[str] | None,
    v: np.ndarray | None,
    wrt: Sequence[str] | None,
    use_wrt: bool,
) -> Points:
    """``--batch``: the command at every point, the chunks' results stacked into one
    ``Points`` (numbered from 0)."""
    import numpy as np

    from .batch import plan as batches
    from .commands.outputs import one_output, refuse_several
    from .results import Points

    refuse_several(of, "batch")
    of = one_output(of)

    if isinstance(batch, str):
        points = batches.read_points(batch)
    elif isinstance(batch, Mapping):
        points = {n: np.asarray(_array(program, a, n), dtype=float) for n, a in batch.items()}
    else:
        points = {"x": np.asarray(_array(program, batch, "x"), dtype=float)}
    batches.count(points)
    defaults = batches.shape_defaults(points)
    bound = _bind(program, command, inputs, named, wrt if use_wrt else None, defaults)
    if isinstance(batch, str):
        points = batches.fit_rows(points, batch, bound)
    wanted = None if wrt is None or use_wrt else _listed(wrt)
    chunks = list(batches.run(bound, command, points, of, v, wanted))
    stacked = {
        part: {k: np.concatenate([c.sections[part][k] for c in chunks]) for k in parts}
        for part, parts in chunks[0].sections.items()
    }
    return Points(
        command=command,
        output=chunks[0].output,
        first=0,
        sections=stacked,
        warnings=bound.messages(),
    )


def _named(program: Program, value: Any, what: str) -> dict[str, np.ndarray]:
    """jvp's ``t``, hvp's ``v``: the value for ``x``, or a mapping from input names to values."""
    pairs = value.items() if isinstance(value, Mapping) else [("x", value)]
    return {name: _array(program, given, f"{what} for {name}") for name, given in pairs}


def _check_order(order: Any) -> None:
    """Refuse a derivative's ``order`` that is not a whole number of at least 1."""
    if order is not None and (isinstance(order, bool) or not isinstance(order, int)):
        raise GradcliError(f"order must be a whole number, not {order!r}", hint="e.g. order=3")
    if order is not None and order < 1:
        raise GradcliError(f"order must be at least 1, not {order}", hint="e.g. order=3")


def _listed(names: Sequence[str] | str) -> list[str]:
    """``wrt`` as a list: ``"x,w"`` (as the command line writes it) or ``["x", "w"]``."""
    if isinstance(names, str):
        return [n.strip() for n in names.split(",") if n.strip()]
    return list(names)


def _numbers(value: Any, what: str) -> np.ndarray:
    """A value that must be numbers, as a float array."""
    import numpy as np

    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise GradcliError(f"{what} must be numbers, not {value!r}") from None


def _choose(choices: Sequence[str], **given: str) -> None:
    """Refuse a parameter's value (the one keyword argument) that is not one of ``choices``."""
    import difflib

    ((parameter, value),) = given.items()
    if value in choices:
        return
    close = difflib.get_close_matches(str(value), list(choices), n=1, cutoff=0.5)
    raise GradcliError(
        f"{parameter}={value!r} is not one of {', '.join(choices)}",
        hint=f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(choices)}",
    )


def _unexpected(command: str, name: str, known: list[str]) -> ArgumentError:
    """A keyword argument of ``command`` that is neither its parameter nor an input."""
    import difflib
    import inspect

    signature = inspect.signature(getattr(Program, command))
    parameters = [p.name for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY]
    close = difflib.get_close_matches(name, [*parameters, *known], n=1)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    return ArgumentError(
        f"{command}() got an unexpected keyword argument {name!r}{guess}: it is neither a "
        f"parameter of {command} ({', '.join(parameters)}) nor an input of the program "
        f"({', '.join(known) or 'it has none'})",
        hint="give the inputs' values as keyword arguments named after them, or in inputs=",
    )
