"""``torch.func`` (also ``functorch`` and ``torch.vmap``) and ``torch.autograd.forward_ad`` as a
script reaches them: the library's transforms (``gradcli.func``: ``engine/func.py``,
``engine/vmap.py``) and forward mode (``engine/forward_ad.py``), taking the script's functions
(a ``Function`` is a Python callable), with what they give back made something the script may
call and print as torch prints it (``<function f at 0x…>``).

The engine's refusals are turned into the exceptions torch raises (its ``RuntimeError``,
``ValueError``, ...), which the script may catch; a bound passed (``SizeError``: the run's
memory, see ``engine/meter.py``) is gradcli's error, exit 2.

``vmap`` runs the function once per slice (``engine/vmap.py``); its ``randomness`` is held to
torch's: ``"error"`` refuses a random draw with torch's RuntimeError, ``"same"`` gives every
slice the numbers of one draw (the generator is put back before each slice, and ends where
one slice's draws leave it, as torch's single draw does); ``"different"`` with a random draw
inside is refused (torch draws the batch at once, whose numbers slice by slice would not be).
``linearize`` gives ``jvp_fn`` computing ``jvp`` again at the primals for each call (torch
traces the function once; the numbers are the same).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ... import func as library
from ...base.errors import GradcliError
from ...engine import forward_ad
from ...engine.func import jvp as library_jvp
from ...engine.meter import zeros
from ...engine.vmap import _mapped_inputs
from ...ops import library as gc
from .errors import as_torch
from .library_objects import guarded
from .runtime import Builtin, Function, Module
from .vmap_slices import slicing

if TYPE_CHECKING:
    from .runtime import Run

# torch.func's transforms that take a function and give a function, by torch's names
_FUNCTION_TRANSFORMS = ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian")
RANDOM_IN_VMAP = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap"
)


class Transformed(Builtin):
    """What a transform gives back: a function the script calls, printed as torch prints
    it (``<function f at 0x…>``: the transformed function's own name, as functools.wraps
    keeps it)."""

    __slots__ = ("function_name",)
    python_name = "function"

    def __init__(self, function_name: str, fn: Callable[..., Any]):
        super().__init__(function_name, fn)
        self.function_name = function_name
        self.shown = f"<function {function_name} at 0x{id(self):x}>"


def _name_of(func: Any, otherwise: str) -> str:
    """The name torch shows for the transform of ``func``: ``func``'s own, else the
    transform's inner function's (``otherwise``)."""
    if isinstance(func, Function):
        return func.name
    if isinstance(func, Transformed):
        return func.function_name
    return otherwise


def _engine_errors(call: Callable[[], Any], name: str) -> Any:
    """``call()``, the library's refusals turned into torch's exceptions (see the module
    docstring)."""
    try:
        return call()
    except gc.SizeError:
        raise
    except gc.EngineError as exc:
        made = as_torch(exc, shapes=ValueError)  # torch.func's own checks: ValueError
        if made is None:
            raise GradcliError(f"{name}: {exc}") from None
        raise made from None


def _guarded(name: str, transform: Callable[..., Any]) -> Callable[..., Any]:
    """``transform`` with its refusals as torch's and the functions it gives callable."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return _callable(_engine_errors(lambda: transform(*args, **kwargs), name), name)

    return call


def _callable(value: Any, name: str) -> Any:
    """``value`` with each Python function in it (a transformed function, ``vjp_fn``) made
    one the script may call; tuples of them too."""
    if isinstance(value, tuple) and type(value) is tuple:
        return tuple(_callable(v, name) for v in value)
    if callable(value) and not isinstance(value, (gc.Tensor, Builtin, Function, type)):
        return Transformed(name, _guarded(name, value))
    return value


def _transform(name: str) -> Builtin:
    """torch.func's ``name`` (one of ``_FUNCTION_TRANSFORMS``) for the script."""
    transform = getattr(library, name)

    def make(func: Any, *args: Any, **kwargs: Any) -> Transformed:
        made = _engine_errors(lambda: transform(func, *args, **kwargs), name)
        inner = "wrapper" if name.startswith("grad") else "wrapper_fn"
        origin = "jacrev" if name == "hessian" else name
        return Transformed(_name_of(func, f"{origin}.<locals>.{inner}"), _guarded(name, made))

    return Builtin(name, make, f"<function {name} at 0x{id(transform):x}>")


def _vjp(func: Any, *primals: Any, **kwargs: Any) -> Any:
    found = _engine_errors(lambda: library.vjp(func, *primals, **kwargs), "vjp")
    shown = Transformed("_vjp_with_argnums.<locals>.wrapper", _guarded("vjp", found[1]))
    return (found[0], shown, *found[2:])


def _linearize(func: Any, *primals: Any) -> tuple[Any, Transformed]:
    """``torch.func.linearize``: ``(func(*primals), jvp_fn)``."""
    output = _engine_errors(
        lambda: library_jvp(
            func, primals, tuple(zeros(p.shape, p.dtype, "a tangent") for p in primals)
        )[0],
        "linearize",
    )

    def jvp_fn(*tangents: Any) -> Any:
        return library_jvp(func, primals, tangents)[1]

    return output, Transformed("linearize.<locals>.jvp_fn", _guarded("linearize", jvp_fn))


@contextlib.contextmanager
def _randomness(run: Run, randomness: Any) -> Iterator[Callable[[], None]]:
    """The slices of one vmap call under torch's ``randomness`` (see the module docstring):
    gives what to do before each slice."""
    generator = run.generator
    real = generator.engine
    if randomness == "same":
        start = (real.copy(), generator.next_double_normal, generator.next_float_normal)

        def again() -> None:
            engine, generator.next_double_normal, generator.next_float_normal = start
            generator.engine = engine.copy()

        yield again
        return
    generator.engine = _Refusing(real, randomness)  # type: ignore[assignment]
    try:
        yield lambda: None
    finally:
        if isinstance(generator.engine, _Refusing):
            generator.engine = real


class _Refusing:
    """A generator's engine that refuses to draw (inside vmap), else is the one it holds."""

    def __init__(self, engine: Any, randomness: Any):
        self.engine, self.randomness = engine, randomness

    def refuse(self, count: int) -> Any:
        if self.randomness == "different":
            raise GradcliError(
                "gradcli's vmap runs the function once per slice, so a random draw inside "
                "vmap(..., randomness='different') would not give torch's numbers",
                hint="draw the batch's numbers before vmap and pass them in",
            )
        raise RuntimeError(RANDOM_IN_VMAP)

    draw32 = draw64 = refuse

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


def _vmap(run: Run) -> Builtin:
    """``torch.func.vmap`` (``torch.vmap``, ``functorch.vmap``) for the script."""

    def vmap(
        func: Any,
        in_dims: Any = 0,
        out_dims: Any = 0,
        randomness: Any = "error",
        *,
        chunk_size: Any = None,
    ) -> Transformed:
        name = _name_of(func, "vmap.<locals>.wrapped")
        before: list[tuple[Callable[[], None], Callable[[], None]]] = []

        def per_slice(*args: Any, **kwargs: Any) -> Any:
            for step in before[-1]:  # the randomness, the slices to come
                step()
            return func(*args, **kwargs)

        per_slice.__name__ = name if isinstance(func, (Function, Transformed)) else repr(func)
        mapped = _engine_errors(
            lambda: library.vmap(per_slice, in_dims, out_dims, randomness, chunk_size=chunk_size),
            "vmap",
        )

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                count = _mapped_inputs(in_dims, args, per_slice)[0]
            except gc.EngineError:  # the mapped call refuses them, in torch's words
                count = 0
            with _randomness(run, randomness) as again, slicing(count) as started:
                before.append((again, started))
                try:
                    return _engine_errors(lambda: mapped(*args, **kwargs), "vmap")
                finally:
                    before.pop()

        return Transformed(name, call)

    return Builtin("vmap", vmap, f"<function vmap at 0x{id(library.vmap):x}>")


def func_module(run: Run, missing: Callable[[str], Any]) -> Module:
    """``torch.func`` (and ``functorch``): the transforms, ``vmap``, ``vjp``, ``jvp``,
    ``linearize``, ``functional_call``."""
    names: dict[str, Any] = {name: _transform(name) for name in _FUNCTION_TRANSFORMS}
    names.update(
        vmap=_vmap(run),
        vjp=Builtin("vjp", _vjp, f"<function vjp at 0x{id(library.vjp):x}>"),
        jvp=Builtin(
            "jvp", _guarded("jvp", library.jvp), f"<function jvp at 0x{id(library.jvp):x}>"
        ),
        linearize=Builtin("linearize", _linearize),
        functional_call=Builtin(
            "functional_call",
            lambda *args, **kwargs: guarded(run, library.functional_call, *args, **kwargs),
            f"<function functional_call at 0x{id(library.functional_call):x}>",
        ),
        __missing__=missing,
    )
    return Module("torch.func", names)


def functorch_module(run: Run, func: Module) -> Module:
    """``functorch``: torch.func's names, each transform warning first, as functorch's
    deprecated ones do (once per line of the script and name, Python's default)."""

    def deprecated(name: str, transform: Builtin) -> Builtin:
        new = "torch.vmap" if name == "vmap" else f"torch.func.{name}"
        message = (
            "We've integrated functorch into PyTorch. As the final step of the integration, "
            f"`functorch.{name}` is deprecated as of PyTorch 2.0 and will be deleted in a "
            f"future version of PyTorch >= 2.3. Please use `{new}` instead; see the PyTorch "
            "2.0 release notes and/or the `torch.func` migration guide for more details "
            "https://pytorch.org/docs/main/func.migrating.html"
        )

        def warned(*args: Any, **kwargs: Any) -> Any:
            run.warn("FutureWarning", message, f"{run.line}: functorch.{name}")
            return transform(*args, **kwargs)

        return Builtin(name, warned, transform.shown)

    names = dict(func.attributes)
    for name in (*_FUNCTION_TRANSFORMS, "vmap", "vjp", "jvp"):
        names[name] = deprecated(name, names[name])
    return Module("functorch", names)


class DualLevel:
    """``with fwAD.dual_level():`` (a ``with`` block of the script)."""

    python_name = "torch.autograd.forward_ad.dual_level"

    def enter(self) -> None:
        _engine_errors(forward_ad.enter_dual_level, "dual_level")

    def exit(self) -> None:
        forward_ad.exit_dual_level()


def forward_ad_module(missing: Callable[[str], Any]) -> Module:
    """``torch.autograd.forward_ad``: ``dual_level``, ``make_dual``, ``unpack_dual``,
    ``enter_dual_level``, ``exit_dual_level``."""
    names: dict[str, Any] = {
        name: Builtin(name, _plain(name))
        for name in ("make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level")
    }
    names.update(
        dual_level=Builtin(
            "dual_level", DualLevel, "<class 'torch.autograd.forward_ad.dual_level'>"
        ),
        __missing__=missing,
    )
    return Module("torch.autograd.forward_ad", names)


def _plain(name: str) -> Callable[..., Any]:
    function = getattr(forward_ad, name)
    return lambda *args, **kwargs: _engine_errors(lambda: function(*args, **kwargs), name)
