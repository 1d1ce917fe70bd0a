"""Python's builtins a tutorial uses, and the Python modules a script may import.

Each builtin is Python's own behaviour, written over the run so that what it consumes is
bounded (a step per item: ``list(range(10**12))`` stops at ``--max-steps``), what it shows is
shown as torch shows tensors (``print``, ``repr``, ``str``, ``format``), and nothing reaches
an attribute by name beyond the whitelist (``getattr``; ``setattr`` and ``delattr`` write and
delete as the statements ``x.a = v`` and ``del x.a`` do, never a name starting with ``__``).
``math``, ``functools`` (``partial``, ``reduce``), ``itertools``, ``operator``, ``random``
(Python's own generator) and ``collections.OrderedDict`` are modules of ``Builtin`` values in
the same way.
"""

from __future__ import annotations

import builtins as python
import collections
import itertools
import math
import operator as python_operator
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...base.errors import GradcliError
from ...lang import functions as F
from ...ops import library as gc
from . import classes, library_objects, limits, objects, printing, tensors
from .calls import call_op
from .errors import SCRIPT_EXCEPTIONS, TORCH_EXCEPTIONS
from .operators import binary, iterate, truth
from .runtime import SAFE_TYPES, Builtin, Function, Module, call, type_name

if TYPE_CHECKING:
    from .runtime import Run


class TypeName:
    """What ``type(x)`` gives for a value whose class a script may not call: its name."""

    python_name = "type"

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeName) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def builtins(run: Run) -> dict[str, Any]:
    """The builtins of one run."""

    def listed(value: Any) -> list[Any]:
        return list(iterate(run, value))

    def print_(
        *values: Any,
        sep: str | None = " ",
        end: str | None = "\n",
        file: Any = None,
        flush: bool = False,
    ) -> None:
        if file is not None:
            raise GradcliError("gradcli run prints to stdout only (print(..., file=) is not taken)")
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        run.out.write(sep.join(printing.text(run, v) for v in values) + end)

    def length(value: Any) -> int:
        if isinstance(value, gc.Tensor):
            if value.ndim == 0:
                raise TypeError("len() of a 0-d tensor")
            return value.shape[0]
        return python.len(value)

    def abs_(value: Any) -> Any:
        if isinstance(value, gc.Tensor):
            op = F.lookup("abs")
            assert op is not None
            return call_op(run, op, "abs", (value,), {})
        return python.abs(value)

    def sum_(values: Any, start: Any = 0) -> Any:
        total = start
        for value in iterate(run, values):
            total = binary(run, "+", total, value)
        return total

    def extreme(name: str, symbol: str) -> Callable[..., Any]:
        def pick(*values: Any, key: Any = None, default: Any = ...) -> Any:
            if len(values) == 1 and isinstance(values[0], gc.Tensor):
                values = tuple(iterate(run, values[0]))
            elif len(values) == 1:
                values = tuple(iterate(run, values[0]))
            if not values:
                if default is not ...:
                    return default
                raise ValueError(f"{name}() iterable argument is empty")
            best, best_key = values[0], values[0] if key is None else call(key, (values[0],), {})
            for value in values[1:]:
                k = value if key is None else call(key, (value,), {})
                if truth(binary(run, symbol, k, best_key)):
                    best, best_key = value, k
            return best

        return pick

    def sorted_(values: Any, key: Any = None, reverse: bool = False) -> list[Any]:
        items = listed(values)
        wrapped = None if key is None else (lambda v: call(key, (v,), {}))
        return python.sorted(items, key=wrapped, reverse=reverse)

    def isinstance_(value: Any, kinds: Any) -> bool:
        listed_kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        for kind in listed_kinds:
            if isinstance(kind, _Typed):
                kind = kind.kind
            if isinstance(kind, _TensorClass) or kind is _TORCH_TENSOR:
                if isinstance(value, gc.Tensor):
                    return True
            elif isinstance(kind, type) and (kind in SAFE_TYPES or kind in SCRIPT_EXCEPTIONS):
                if python.isinstance(value, kind):
                    return True
            elif isinstance(kind, library_objects.LibraryClass):
                if python.isinstance(value, kind.kind):
                    return True
            elif isinstance(kind, TypeName):
                if type_name(value) == kind.name or kind.name in getattr(value, "bases", ()):
                    return True
            elif isinstance(kind, classes.Class) or classes.as_base(kind) is not None:
                if classes.is_instance(value, kind):
                    return True
            else:
                raise TypeError("isinstance() arg 2 must be a type, a tuple of types, or a union")
        return False

    def issubclass_(kind: Any, bases: Any) -> bool:
        listed_bases = bases if isinstance(bases, tuple) else (bases,)
        for base in listed_bases:
            if isinstance(base, _Typed) and base.kind is object:
                base = classes.OBJECT
            if not isinstance(base, classes.Class) and classes.as_base(base) is None:
                raise TypeError("issubclass() arg 2 must be a class of the script or torch's")
            if classes.is_subclass(kind, base):
                return True
        return False

    def super_(*args: Any) -> classes.Super:
        if not args:
            raise RuntimeError("super(): no arguments")
        if len(args) != 2:
            raise TypeError("gradcli run takes super() or super(Class, instance)")
        return classes.Super(*args)

    def callable_(value: Any) -> bool:
        if isinstance(value, classes.ScriptObject):
            return classes.is_callable(value)
        return isinstance(value, (Function, Builtin, type, classes.Class, classes.LibraryBase))

    def type_(value: Any) -> Any:
        kind = type(value)
        named = wrapped.get(kind.__name__)
        if isinstance(named, _Typed) and named.kind is kind:  # type(x) is list
            return named
        if kind in SAFE_TYPES or kind in SCRIPT_EXCEPTIONS or kind in TORCH_EXCEPTIONS:
            return kind
        if kind is type(None):
            return TypeName("NoneType")
        if kind is gc.Tensor:
            return _TORCH_TENSOR
        scripted = classes.script_class(value)
        if scripted is not None:
            return scripted
        library = library_objects.class_of(run, value)  # nn.Linear, nn.Parameter
        if library is not None:
            return library
        return TypeName(type_name(value))

    def getattr_(value: Any, name: str, *default: Any) -> Any:
        if not isinstance(name, str):
            raise TypeError("attribute name must be string")
        try:
            return objects.get(run, value, name)
        except AttributeError:
            if default:
                return default[0]
            raise

    def setattr_(value: Any, name: str, new: Any) -> None:
        objects.set_value(run, value, _attribute_name(name, "write"), new)

    def delattr_(value: Any, name: str) -> None:
        objects.delete_value(run, value, _attribute_name(name, "delete"))

    def hasattr_(value: Any, name: str) -> bool:
        try:
            objects.get(run, value, name)
        except AttributeError:
            return False
        return True

    def map_(function: Any, *iterables: Any) -> Any:
        sources = [iterate(run, i) for i in iterables]
        return (call(function, args, {}) for args in zip(*sources))

    def filter_(function: Any, values: Any) -> Any:
        return (
            v
            for v in iterate(run, values)
            if (truth(v) if function is None else truth(call(function, (v,), {})))
        )

    def any_(values: Any) -> bool:
        return python.any(truth(v) for v in iterate(run, values))

    def all_(values: Any) -> bool:
        return python.all(truth(v) for v in iterate(run, values))

    def zip_(*iterables: Any, strict: bool = False) -> Any:
        return zip(*(iterate(run, i) for i in iterables), strict=strict)

    def enumerate_(values: Any, start: int = 0) -> Any:
        return enumerate(iterate(run, values), start)

    def reversed_(values: Any) -> Any:
        if isinstance(values, gc.Tensor):
            return python.reversed(listed(values))
        return run.steps.ticking(python.reversed(values))

    def round_(value: Any, digits: int | None = None) -> Any:
        if isinstance(value, gc.Tensor):
            op = F.lookup("round")
            assert op is not None
            return call_op(
                run, op, "round", (value,), {} if digits is None else {"decimals": digits}
            )
        return python.round(value, digits)

    def number(kind: type) -> Callable[..., Any]:
        def convert(value: Any = 0, *rest: Any) -> Any:
            if isinstance(value, gc.Tensor):
                return tensors.scalar_of(run, value, kind)
            if isinstance(value, str) and kind is int:
                limits.check_items(python.len(value), 1, "int()")
            return kind(value, *rest)

        return convert

    def str_(value: Any = "") -> str:
        return printing.text(run, value)

    def repr_(value: Any) -> str:
        return printing.show(run, value)

    def format_(value: Any, spec: str = "") -> str:
        return printing.formatted(run, value, spec)

    def sequence(kind: type) -> Callable[..., Any]:
        def make(values: Any = ()) -> Any:
            if isinstance(values, dict) and kind is dict:
                return dict(values)
            return kind(iterate(run, values))

        return make

    def dict_(values: Any = (), **kwargs: Any) -> dict[Any, Any]:
        made = dict(iterate(run, values.items() if isinstance(values, dict) else values))
        made.update(kwargs)
        return made

    def range_(*args: Any) -> range:
        return range(*(python_operator.index(_whole(a)) for a in args))

    def next_(iterator: Any, *default: Any) -> Any:
        return next(iterator, *default)

    def iter_(value: Any) -> Any:
        return iterate(run, value)

    def pow_(base: Any, exponent: Any, modulus: Any = None) -> Any:
        if modulus is not None:
            return python.pow(base, exponent, modulus)
        return binary(run, "**", base, exponent)

    def divmod_(a: Any, b: Any) -> Any:
        return binary(run, "//", a, b), binary(run, "%", a, b)

    made: dict[str, Any] = {
        "print": print_,
        "len": length,
        "abs": abs_,
        "sum": sum_,
        "min": extreme("min", "<"),
        "max": extreme("max", ">"),
        "sorted": sorted_,
        "isinstance": isinstance_,
        "type": type_,
        "getattr": getattr_,
        "hasattr": hasattr_,
        "setattr": setattr_,
        "delattr": delattr_,
        "map": map_,
        "filter": filter_,
        "any": any_,
        "all": all_,
        "zip": zip_,
        "enumerate": enumerate_,
        "reversed": reversed_,
        "round": round_,
        "repr": repr_,
        "format": format_,
        "next": next_,
        "iter": iter_,
        "pow": pow_,
        "divmod": divmod_,
        "callable": callable_,
        "issubclass": issubclass_,
        "chr": chr,
        "ord": ord,
        "hash": hash,
        "id": id,
        "hex": hex,
        "bin": bin,
        "oct": oct,
        "ascii": lambda v: ascii(printing.show(run, v)),
    }
    wrapped: dict[str, Any] = {name: Builtin(name, fn) for name, fn in made.items()}
    # Python's types, callable and named as Python's (int(x) of a tensor: its item)
    wrapped.update(
        {
            "int": _Typed(int, number(int)),
            "float": _Typed(float, number(float)),
            "bool": _Typed(bool, lambda v=False: truth(v)),
            "complex": _Typed(complex, number(complex)),
            "str": _Typed(str, str_),
            "list": _Typed(list, sequence(list)),
            "tuple": _Typed(tuple, sequence(tuple)),
            "set": _Typed(set, sequence(set)),
            "frozenset": _Typed(frozenset, sequence(frozenset)),
            "dict": _Typed(dict, dict_),
            "range": _Typed(range, range_),
            "slice": _Typed(slice, slice),
            "object": _Typed(object, object),
        }
    )
    wrapped.update(
        input=Builtin("input", _no_input),
        super=Builtin("super", super_, "<class 'super'>"),
        staticmethod=Builtin("staticmethod", classes.StaticMethod, "<class 'staticmethod'>"),
        classmethod=Builtin("classmethod", classes.ClassMethod, "<class 'classmethod'>"),
        property=Builtin("property", classes.Property, "<class 'property'>"),
        NotImplemented=NotImplemented,
    )
    for kind in SCRIPT_EXCEPTIONS:
        wrapped[kind.__name__] = kind
    wrapped["None"] = None
    wrapped["True"] = True
    wrapped["False"] = False
    return wrapped


def _attribute_name(name: Any, verb: str) -> str:
    """The name given to ``setattr``/``delattr``: a string, never one of Python's internals."""
    if not isinstance(name, str):
        raise TypeError(f"attribute name must be string, not '{type_name(name)}'")
    if name.startswith("__"):
        raise GradcliError(
            f"gradcli run does not {verb} attributes whose names start with '__' ({name!r})",
            hint="scripts change torch's attributes (x.grad, model.weight), not Python's internals",
        )
    return name


def _no_input(*prompt: Any) -> None:
    """``input()``: a script reads no terminal (the name is a value, as Python's is:
    torch's docs pass it where a tensor goes, ``Exp.apply(input)``)."""
    raise GradcliError(
        "gradcli run does not take input(): a script reads no terminal",
        hint="write the value into the script",
    )


def _whole(value: Any) -> Any:
    if isinstance(value, gc.Tensor) and value.ndim == 0 and value.dtype.kind in "iub":
        return value.data.item()
    return value


class _Typed(Builtin):
    """A Python type as a script calls it (``int(x)``) and names it (``isinstance(x, int)``)."""

    __slots__ = ("kind",)

    def __init__(self, kind: type, fn: Callable[..., Any]):
        super().__init__(kind.__name__, fn, f"<class '{kind.__name__}'>")
        self.kind = kind


class _TensorClass(Builtin):
    """``torch.Tensor``: a class for ``isinstance``, and ``torch.Tensor([1., 2.])``."""

    __slots__ = ()


_TORCH_TENSOR = TypeName("torch.Tensor")


def python_modules(run: Run) -> dict[str, Module]:
    """The Python modules a script may import."""

    def partial(function: Any, *args: Any, **kwargs: Any) -> Builtin:
        def partial_call(*more: Any, **more_kwargs: Any) -> Any:
            return call(function, (*args, *more), {**kwargs, **more_kwargs})

        return Builtin(
            "partial", partial_call, f"functools.partial({printing.show(run, function)})"
        )

    def reduce(function: Any, values: Any, *initial: Any) -> Any:
        items = iterate(run, values)
        try:
            total = initial[0] if initial else next(items)
        except StopIteration:
            raise TypeError("reduce() of empty iterable with no initial value") from None
        for value in items:
            total = call(function, (total, value), {})
        return total

    def ticking(name: str, make: Callable[..., Any]) -> Builtin:
        return Builtin(
            name,
            lambda *a, **k: run.steps.ticking(
                make(*(iterate(run, v) if not isinstance(v, int) else v for v in a), **k)
            ),
        )

    def of_numbers(name: str, function: Callable[..., Any]) -> Builtin:
        """``math.<name>``, which takes a one-element tensor as Python gives it to a C function
        of numbers: through torch's ``__float__`` (with its warning where the tensor requires
        grad) or, where it wants an integer, ``__index__``."""

        def number(place: int | str, value: Any) -> Any:
            """An argument (by place, or a keyword's name: isclose's rel_tol) as the C
            function receives it."""
            if not isinstance(value, gc.Tensor):
                return value
            if name in ("gcd", "factorial", "isqrt"):
                return tensors.index_of(value)
            if name == "trunc":  # math.trunc looks for __trunc__ only
                raise TypeError("type Tensor doesn't define __trunc__ method")
            if name == "ldexp" and place == 1:
                raise TypeError("Expected an int as second argument to ldexp.")
            return tensors.scalar_of(run, value, float)

        def call(*args: Any, **keywords: Any) -> Any:
            given = {k: number(k, v) for k, v in keywords.items()}
            return function(*(number(i, v) for i, v in enumerate(args)), **given)

        return Builtin(name, call)

    math_names: dict[str, Any] = {
        name: of_numbers(name, getattr(math, name))
        for name in (
            "sqrt exp log log2 log10 log1p expm1 sin cos tan asin acos atan atan2 sinh cosh tanh "
            "asinh acosh atanh floor ceil trunc fabs isclose isfinite isinf isnan hypot degrees "
            "radians erf erfc gamma lgamma copysign fmod gcd isqrt modf frexp "
            "ldexp pow"
        ).split()
    }
    math_names["factorial"] = of_numbers("factorial", _bounded_factorial)
    math_names.update(pi=math.pi, e=math.e, tau=math.tau, inf=math.inf, nan=math.nan)

    def operator_function(symbol: str) -> Callable[[Any, Any], Any]:
        return lambda a, b: binary(run, symbol, a, b)

    operators = {
        "add": "+",
        "sub": "-",
        "mul": "*",
        "truediv": "/",
        "floordiv": "//",
        "mod": "%",
        "pow": "**",
        "matmul": "@",
        "eq": "==",
        "ne": "!=",
        "lt": "<",
        "le": "<=",
        "gt": ">",
        "ge": ">=",
    }
    operator_names: dict[str, Any] = {
        name: Builtin(name, operator_function(symbol)) for name, symbol in operators.items()
    }
    operator_names["neg"] = Builtin("neg", lambda a: binary(run, "*", -1, a))
    operator_names["itemgetter"] = Builtin(
        "itemgetter",
        lambda *keys: Builtin(
            "itemgetter", lambda v: v[keys[0]] if len(keys) == 1 else tuple(v[k] for k in keys)
        ),
    )
    itertools_names = {
        "product": ticking("product", itertools.product),
        "chain": ticking("chain", itertools.chain),
        "combinations": ticking("combinations", itertools.combinations),
        "permutations": ticking("permutations", itertools.permutations),
        "islice": ticking("islice", itertools.islice),
        "count": Builtin(
            "count", lambda start=0, step=1: run.steps.ticking(itertools.count(start, step))
        ),
        "repeat": Builtin(
            "repeat",
            lambda v, times=None: run.steps.ticking(
                itertools.repeat(v) if times is None else itertools.repeat(v, times)
            ),
        ),
        "accumulate": ticking("accumulate", itertools.accumulate),
        "zip_longest": ticking("zip_longest", itertools.zip_longest),
    }
    return {
        "math": Module("math", math_names),
        "functools": Module(
            "functools",
            {"partial": Builtin("partial", partial), "reduce": Builtin("reduce", reduce)},
        ),
        "itertools": Module("itertools", itertools_names),
        "random": _random_module(),
        "operator": Module("operator", operator_names),
        "collections": Module(
            "collections",
            {
                "OrderedDict": Builtin(
                    "OrderedDict", lambda *a, **k: collections.OrderedDict(*a, **k)
                )
            },
        ),
    }


def _random_module() -> Module:
    """``random``: Python's own generator (the Mersenne twister), one for the run, so that
    ``random.seed(0)`` then ``random.randint(4, 6)`` gives the numbers Python gives."""
    generator = random.Random()

    def sample(population: Any, k: int, *, counts: Any = None) -> list[Any]:
        if isinstance(k, int):
            limits.check_items(k, 8, "random.sample's list")
        return generator.sample(population, k, counts=counts)

    def shuffle(items: Any) -> None:
        if isinstance(items, gc.Tensor):  # its rows are views: Python's swaps would alias them
            raise GradcliError("gradcli run's random.shuffle takes a list, not a tensor")
        generator.shuffle(items)

    functions: dict[str, Callable[..., Any]] = {
        "seed": lambda a=None, version=2: generator.seed(a, version),
        "random": generator.random,
        "uniform": generator.uniform,
        "randint": generator.randint,
        "randrange": generator.randrange,
        "choice": generator.choice,
        "shuffle": shuffle,
        "gauss": generator.gauss,
        "normalvariate": generator.normalvariate,
        "sample": sample,
    }
    return Module("random", {name: Builtin(name, f) for name, f in functions.items()})


def _bounded_factorial(n: int) -> int:
    if isinstance(n, int) and n > 20_000:
        limits.check_int_bits(n * max(n.bit_length() - 1, 1), f"factorial({n})")
    return math.factorial(n)
