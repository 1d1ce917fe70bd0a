"""The library API of the commands: ``gradcli.program(text)`` and its methods.

A ``Program`` is a parsed program; each of its methods is one command of the command line
(``eval``, ``grad``, ``vjp``, ``jacobian``, ``jvp``, ``hessian``, ``hvp``, ``check``,
``graph``, ``plot``, ``explain``) and returns the very result record the command renders
(``gradcli.results``), computed by the same function (``gradcli.compute``)::

    >>> import gradcli
    >>> p = gradcli.program("y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1")
    >>> p.vjp(x=[1, 2], v=[1, 1, 1]).grads["x"]
    array([ 4., 23.])

Input values are keyword arguments named after the inputs (or the ``inputs`` mapping, for an
input whose name is also a parameter's, such as ``v``): a number, nested lists, a numpy
array, an engine ``Tensor``, or text in the command line's value syntax (``"ones(2,2)"``,
``"rand(3)"``, ``"@x.npy"``). ``text(result, "json")`` is what the command prints.

Bad input raises ``GradcliError`` (``gradcli.errors``), or the engine's ``EngineError``
(``ShapeError``, ``DomainError``, ...), never an internal exception.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from .compute import Bound
    from .lang import Program as Parsed
    from .results import (
        HVP,
        JVP,
        VJP,
        Check,
        Explanation,
        Grads,
        Graph,
        Hessian,
        Jacobian,
        Plot,
        Result,
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
    """

    def __init__(
        self, source: str, *, dtype: str = "float64", seed: int = 0, use_cache: bool = True
    ) -> None:
        from .compute import DTYPES
        from .errors import GradcliError
        from .lang import load_program

        if dtype not in DTYPES:
            raise GradcliError(
                f"dtype {dtype!r} is not one of {', '.join(DTYPES)}", hint="use float64 or float32"
            )
        self.source = source
        self.dtype = dtype
        self.seed = seed
        self.parsed: Parsed = load_program(source, use_cache=use_cache)

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

    # -- binding values ------------------------------------------------------------------------

    def _given(self, inputs: Mapping[str, Any] | None, named: dict[str, Any]) -> dict:
        values = {**(inputs or {}), **named}
        return {name: self._array(value, name) for name, value in values.items()}

    def _array(self, value: Any, name: str) -> np.ndarray:
        """An input value (or v, t) as the command line would read it."""
        import numpy as np

        from .values import parse_value

        from .engine import Tensor

        if isinstance(value, str):
            return parse_value(value, name, self.seed)
        if isinstance(value, Tensor):  # its values: a program binds fresh leaves of its own
            return np.asarray(value.detach())
        return np.asarray(value)

    def _bind(
        self,
        inputs: Mapping[str, Any] | None,
        named: dict[str, Any],
        wrt: Sequence[str] | None = None,
        defaults: Any = None,
        tangents: Sequence[str] = (),
    ) -> Bound:
        from .compute import bind

        given = self._given(inputs, named)
        extra = {} if defaults is None else defaults(self.parsed, given)
        wanted = None if wrt is None else _listed(wrt)
        return bind(self.parsed, given, wanted, self.dtype, self.seed, extra, tangents)

    def _vector(self, value: Any, name: str) -> np.ndarray | None:
        return None if value is None else self._array(value, name)

    # -- the commands ----------------------------------------------------------------------------

    def eval(
        self,
        *,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Values:
        """``gradcli eval``: the value of every input and every assigned name."""
        from .compute import evaluate

        return evaluate(self._bind(inputs, values, wrt), of)

    def grad(
        self,
        *,
        v: Any = None,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        show: Sequence[str] = (),
        retain_grad: Sequence[str] = (),
        repeat: int = 1,
        symbolic: bool = False,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Grads:
        """``gradcli grad``: ``out.backward(v)`` (``repeat`` times), then ``.grad`` of every
        input, and of the intermediate names ``show`` and ``retain_grad``."""
        from .compute import grad

        bound = self._bind(inputs, values, wrt)
        vector = self._vector(v, "v")
        return grad(bound, of, vector, list(show), list(retain_grad), repeat, symbolic)

    def vjp(
        self,
        *,
        v: Any = None,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        symbolic: bool = False,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> VJP:
        """``gradcli vjp``: ``torch.autograd.grad(out, wrt, grad_outputs=v)``, J^T v for each
        name of ``wrt`` (inputs or intermediate names; default: every input)."""
        from .compute import vjp

        bound = self._bind(inputs, values)
        wanted = None if wrt is None else _listed(wrt)
        return vjp(bound, of, self._vector(v, "v"), wanted, symbolic)

    def jacobian(
        self,
        *,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        transpose: bool = False,
        mode: str = "auto",
        symbolic: bool = False,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Jacobian:
        """``gradcli jacobian``: d out / d input for each input (output.shape + input.shape;
        the other way round with ``transpose``); ``mode`` is ``auto``, ``forward`` or
        ``reverse``."""
        from .compute import jacobian

        bound = self._bind(inputs, values, wrt)
        wanted = None if wrt is None else _listed(wrt)
        return jacobian(bound, of, wanted, transpose, mode, symbolic)

    def jvp(
        self,
        *,
        t: Any,
        of: str | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> JVP:
        """``gradcli jvp``: forward mode J t. ``t`` is the tangent of ``x``, or a mapping from
        input names to tangents (the others are 0)."""
        from .compute import jvp

        tangents = {
            name: self._array(value, f"t for {name}")
            for name, value in (t.items() if isinstance(t, Mapping) else [("x", t)])
        }
        bound = self._bind(inputs, values, tangents=list(tangents))
        return jvp(bound, of, tangents)

    def hessian(
        self,
        *,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Hessian:
        """``gradcli hessian``: second derivatives of a scalar output, for each pair of
        ``wrt`` inputs."""
        from .compute import hessian

        bound = self._bind(inputs, values, wrt)
        return hessian(bound, of, None if wrt is None else _listed(wrt))

    def hvp(
        self,
        *,
        v: Any,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> HVP:
        """``gradcli hvp``: H v of a scalar output. ``v`` is the vector for ``x``, or a mapping
        from input names to vectors."""
        from .compute import hvp

        vectors = {
            name: self._array(value, f"v for {name}")
            for name, value in (v.items() if isinstance(v, Mapping) else [("x", v)])
        }
        bound = self._bind(inputs, values, wrt)
        return hvp(bound, of, vectors, None if wrt is None else _listed(wrt))

    def check(
        self,
        *,
        of: str | None = None,
        wrt: Sequence[str] | None = None,
        atol: float = 1e-5,
        rtol: float = 1e-3,
        inputs: Mapping[str, Any] | None = None,
        **values: Any,
    ) -> Check:
        """``gradcli check``: the Jacobian by reverse and forward mode, finite differences
        and sympy; ``result.agree`` says whether they agree within the tolerances."""
        from .compute import check

        bound = self._bind(inputs, values, wrt)
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
        from .compute import graph

        return graph(self._bind(inputs, values, wrt), of)

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
        from .compute import plot, plot_defaults

        varied = None if wrt is None else _listed(wrt)
        line = self._vector(direction, "--direction")
        bound = self._bind(inputs, values, wrt, plot_defaults(varied, line))
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
        from .explain import explain

        bound = self._bind(inputs, values, wrt)
        return explain(bound, of, self._vector(v, "v"))


def _listed(names: Sequence[str] | str) -> list[str]:
    """``wrt`` as a list: ``"x,w"`` (as the command line writes it) or ``["x", "w"]``."""
    if isinstance(names, str):
        return [n.strip() for n in names.split(",") if n.strip()]
    return list(names)
