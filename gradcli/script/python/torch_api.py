"""The ``torch`` namespace of a script: the modules it imports and every name in them.

``modules(run)`` gives the importable modules by their dotted names: ``torch``,
``torch.nn.functional``, ``torch.autograd``, ``torch.autograd.functional``, ``torch.func``,
``torch.linalg``, ``torch.special``, ``torch.nn`` and ``torch.optim`` with their submodules
(``torch_nn.py``) and the Python modules of ``builtins.py``. A torch module's functions are
the op table's entries torch has there (``lang/torch_names.json``, read from torch 2.13),
each bound by the entry's signature (``calls.py``); a name the language has but torch does
not have there (``torch.cbrt``) is torch's AttributeError; a name of torch's that gradcli
lacks is refused (exit 2).

Beside the operations: the constructors (``torch.tensor``, ``zeros``, ``rand``,
``zeros_like``, ``torch.Tensor``, ...) and the samplers (``torch_samplers.py``), the dtypes,
the grad modes (``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``:
``with`` blocks and decorators), ``manual_seed``, ``set_default_dtype``,
``set_printoptions``, ``allclose``, ``equal``.

``torch.func`` (also ``functorch``, ``torch.vmap``) and ``torch.autograd.forward_ad`` are
``func_api.py``'s: the library's transforms and forward mode, taking the script's functions.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import autograd as gradcli_autograd
from ...base import bounds
from ...base import torch_text as torchtext
from ...base.errors import GradcliError
from ...engine import creation, torch_random
from ...engine.torch_random import samplers
from ...lang import functions as F
from ...lang.pytorch import torch_has
from ...lang.values import CONSTRUCTORS, LIKE
from ...ops import library as gc
from . import (
    autograd,
    autograd_graph,
    builtins,
    custom_functions,
    func_api,
    numpy_values,
    printing,
    torch_data,
    torch_nn,
    torch_samplers,
)
from .calls import DTYPES, DType, call_op, dtype_of, numpy_name
from .library_objects import LibraryClass
from .printing import Size
from .runtime import Builtin, Function, Module, call
from .tensors import CPU, NODE, Device, read_grad
from .torch_samplers import generator_of

if TYPE_CHECKING:
    from .runtime import Run

#: what ``torch.__version__`` reads: the torch whose behaviour gradcli run follows
TORCH_VERSION = "2.13.0+cpu"
# The names of torch.functional (its __all__ in torch 2.13): torch's functions written in Python
TORCH_FUNCTIONAL = (
    "atleast_1d atleast_2d atleast_3d broadcast_shapes broadcast_tensors cartesian_prod "
    "block_diag cdist chain_matmul einsum istft lu norm meshgrid pca_lowrank split stft "
    "svd_lowrank tensordot unique unique_consecutive unravel_index"
).split()
INTEGER_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
RANGE_WARNING = (
    "torch.range is deprecated and will be removed in a future release because its behavior "
    "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
    "values in [start, end)."
)
COPY_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
    "or sourceTensor.detach().clone().requires_grad_(True), rather than "
    "torch.tensor(sourceTensor)."
)


class GradMode:
    """``torch.no_grad()``, ``torch.enable_grad()``, ``torch.set_grad_enabled(b)``,
    ``torch.inference_mode()``: a ``with`` block's grad mode, or a decorator's."""

    python_name = "torch.autograd.grad_mode"

    def __init__(self, enabled: bool, name: str):
        self.enabled, self.name = enabled, name
        self.stack: list[contextlib.AbstractContextManager[None]] = []

    def enter(self) -> None:
        manager = gc.set_grad_enabled(self.enabled)
        manager.__enter__()
        self.stack.append(manager)

    def exit(self) -> None:
        self.stack.pop().__exit__(None, None, None)

    @contextlib.contextmanager
    def around(self) -> Iterator[None]:
        with gc.set_grad_enabled(self.enabled):
            yield

    def script_call(self, function: Any) -> Any:
        """``@torch.no_grad()`` on a function: the function, run in this mode."""
        if isinstance(function, Function):
            made = Function(
                function.name,
                function.parameters,
                function.body,
                function.closure,
                function.doc,
                function.line,
            )
            made.wrapped = self.around
            return made
        raise TypeError(f"{self.name}() decorates a function")

    def __repr__(self) -> str:
        return f"<torch.autograd.grad_mode.{self.name} object at 0x{id(self):x}>"


class GeneratorClass(LibraryClass):
    """``torch.Generator``: ``torch.Generator()`` (or ``device='cpu'``) makes a generator of
    torch's default seed, whose methods (``manual_seed``, ``initial_seed``, ``seed``,
    ``get_state``, ``set_state``, ``clone``) are the engine's; ``generator=`` of a sampler,
    ``random_split`` or a ``DataLoader`` draws from it."""

    def script_call(self, device: Any = "cpu") -> Any:
        if str(device) != "cpu":
            raise GradcliError(
                f"gradcli computes on the CPU only: the device {str(device)!r} is not taken",
                hint="leave the device out, or give 'cpu'",
            )
        return torch_random.Generator()


def _check_fits(array: Any, dtype: np.dtype[Any], whole: bool, suffix: str) -> None:
    """torch's refusal of a number its integer dtype cannot hold (torch.tensor([300],
    dtype=torch.uint8)); an unsigned dtype takes the whole negatives of its magnitude (-1 is
    255), as torch's ``c10::overflows``."""
    array = np.asarray(array)
    if dtype.kind not in "iu" or array.dtype.kind not in "iuf" or not array.size:
        return
    info = np.iinfo(dtype)
    low = info.min if dtype.kind == "i" or not whole else -int(info.max)
    with np.errstate(invalid="ignore"):
        fits = bool(np.all((array >= low) & (array <= info.max)))
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {dtype}{suffix} without overflow")


def _plain(value: Any, run: Run) -> Any:
    """``torch.tensor``'s data as nested Python numbers (0-d tensors as their numbers)."""
    if isinstance(value, gc.Tensor):
        return value.data.tolist()
    if isinstance(value, (list, tuple)):
        run.steps.step()
        return [_plain(v, run) for v in value]
    if isinstance(value, (bool, int, float, complex)):
        return value
    raise TypeError(f"new(): invalid data type '{type(value).__name__}'")


def _kind(value: Any) -> str:
    """The widest kind of the numbers in ``value``: 'b', 'i', 'f' or 'c'."""
    if isinstance(value, list):
        kinds = {_kind(v) for v in value} or {"f"}
        for kind in "cfib":
            if kind in kinds:
                return kind
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, complex):
        return "c"
    return "f"


def _leaf_when_asked(operation: Any) -> Callable[..., Any]:
    """A constructor that is an operation of the table (``zeros_like``), taking the
    constructors' ``requires_grad=`` (a leaf of the value) and ``device=``/``memory_format=``."""

    def make(
        *args: Any,
        requires_grad: bool = False,
        device: Any = None,
        memory_format: Any = None,
        **named: Any,
    ) -> Any:
        value = operation(*args, **named)
        if not isinstance(requires_grad, bool):
            raise TypeError("requires_grad must be True or False")
        return value.detach().requires_grad_(True) if requires_grad else value

    return make


class Constructors:
    """torch's constructors for one run (its default dtype, generator and memory)."""

    def __init__(self, run: Run):
        self.run = run

    def rng(self, dtype: Any = None, generator: Any = None) -> samplers.NumpyStyle:
        """The run's torch generator (or ``generator``), drawing torch's numbers of ``dtype``
        (the default floating dtype: None)."""
        drawing = generator or self.run.generator
        return samplers.NumpyStyle(drawing, dtype or self.run.default_dtype)

    def dtype(self, dtype: Any, default: Any = None) -> np.dtype[Any]:
        """The dtype a constructor makes: ``dtype=``, else ``default``, else the default
        floating dtype."""
        if dtype is not None:
            return np.dtype(numpy_name(dtype, "dtype"))
        return self.run.default_dtype if default is None else np.dtype(default)

    def made(self, array: Any, dtype: Any, requires_grad: Any, default: Any = None) -> gc.Tensor:
        run = self.run
        chosen = np.dtype(numpy_name(dtype, "dtype")) if dtype is not None else default
        chosen = run.default_dtype if chosen is None else np.dtype(chosen)
        array = np.asarray(array)
        if array.dtype.kind == "c" and chosen.kind == "f":
            chosen = np.dtype(np.complex64 if chosen.itemsize <= 4 else np.complex128)
        if not isinstance(requires_grad, bool):
            raise TypeError("requires_grad must be True or False")
        if requires_grad and chosen.kind not in "fc":
            raise RuntimeError(INTEGER_GRAD)
        return gc.Tensor(array.astype(chosen), requires_grad)

    def sizes(self, size: tuple[Any, ...], name: str) -> list[int]:
        if len(size) == 1 and isinstance(size[0], (list, tuple)):
            size = tuple(size[0])
        found = []
        for n in size:
            if isinstance(n, gc.Tensor) and n.ndim == 0:
                n = n.data.item()
            if isinstance(n, bool) or not isinstance(n, int):
                raise TypeError(
                    f"{name}(): argument 'size' must be tuple of ints, but found element of "
                    f"type {type(n).__name__}"
                )
            if n < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {n}: {list(size)}"
                )
            found.append(n)
        return found

    def build(
        self, name: str, args: list[Any], dtype: Any = None, generator: Any = None
    ) -> np.ndarray:
        """The constructor ``name`` of gradcli's values; a random one draws torch's numbers
        of ``dtype`` from the run's generator (or ``generator``)."""
        with bounds.charging(self.run.tally):
            return np.asarray(CONSTRUCTORS[name](args, self.rng(dtype, generator)))

    # -- the constructors
    def tensor(
        self, data: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None
    ) -> gc.Tensor:
        if isinstance(data, gc.Tensor):
            self.run.warn("UserWarning", COPY_WARNING)
            return self.made(data.data.copy(), dtype, requires_grad, data.dtype)
        if isinstance(data, np.ndarray):  # torch.tensor(a): a copy, of the array's dtype
            array = numpy_values.from_numpy(data).data.copy()
            return self.made(array, dtype, requires_grad, array.dtype)
        plain = _plain(data, self.run)
        kind = _kind(plain)
        default = {"b": np.dtype(bool), "i": np.dtype(np.int64)}.get(kind)
        array = self.build("tensor", [plain])
        if dtype is not None:
            _check_fits(array, np.dtype(numpy_name(dtype, "dtype")), kind != "f", "")
        return self.made(array, dtype, requires_grad, default)

    def filled(self, name: str) -> Callable[..., gc.Tensor]:
        def make(
            *size: Any,
            dtype: Any = None,
            requires_grad: bool = False,
            device: Any = None,
            out: Any = None,
            **named: Any,
        ) -> gc.Tensor:
            if "size" in named:  # torch.randn(size=(2, 3))
                size = (named.pop("size"),)
            drawing = None
            if "generator" in named and name in ("rand", "randn"):
                drawing = generator_of(self.run, named.pop("generator"), name)
            if named:
                unexpected = next(iter(named))
                raise TypeError(f"{name}() got an unexpected keyword argument '{unexpected}'")
            shape = self.sizes(size, name)
            drawn = self.dtype(dtype) if name in ("rand", "randn") else None
            array = self.build(name if name != "empty" else "zeros", list(shape), drawn, drawing)
            if name in ("rand", "randn"):
                tensor = self.made(array, dtype, requires_grad)
                if drawing is None:  # (a generator's numbers are its own, not the run's)
                    self.run.drawn.append(tensor.data.copy())
                return tensor
            return self.made(array, dtype, requires_grad)

        return make

    def full(
        self,
        size: Any,
        fill_value: Any,
        dtype: Any = None,
        requires_grad: bool = False,
        device: Any = None,
    ) -> gc.Tensor:
        shape = self.sizes(tuple(size) if isinstance(size, (list, tuple)) else (size,), "full")
        if isinstance(fill_value, gc.Tensor):
            fill_value = fill_value.data.item()
        default = {"b": np.dtype(bool), "i": np.dtype(np.int64)}.get(_kind(fill_value))
        with bounds.charging(self.run.tally):
            bounds.check_elements(math.prod(shape), f"full{tuple(shape)}")
        array = np.full(shape, fill_value)
        if dtype is not None:
            # C's name: uint8_t
            _check_fits(array, np.dtype(numpy_name(dtype, "dtype")), default is not None, "_t")
        return self.made(array, dtype, requires_grad, default)

    def eye(
        self,
        n: int,
        m: int | None = None,
        dtype: Any = None,
        requires_grad: bool = False,
        device: Any = None,
    ) -> gc.Tensor:
        return self.made(self.build("eye", [n] if m is None else [n, m]), dtype, requires_grad)

    def arange(
        self,
        *args: Any,
        dtype: Any = None,
        requires_grad: bool = False,
        device: Any = None,
        **named: Any,
    ) -> gc.Tensor:
        numbers = _bounds("arange", args, named)
        whole = all(isinstance(a, int) for a in numbers)
        array = self.build("arange", numbers)
        return self.made(array, dtype, requires_grad, np.dtype(np.int64) if whole else None)

    def range(
        self,
        *args: Any,
        dtype: Any = None,
        requires_grad: bool = False,
        device: Any = None,
        **named: Any,
    ) -> gc.Tensor:
        """torch.range (deprecated): from start to end included, of the default dtype
        whatever the numbers; each value ``start + i * step`` in double (int64 for an integer
        dtype), then of the dtype."""
        self.run.warn("UserWarning", RANGE_WARNING)
        numbers = _bounds("range", args, named)
        if len(numbers) < 2:
            raise TypeError('range() missing 1 required positional arguments: "end"')
        start, end, step = (*numbers, 1)[:3]
        chosen = np.dtype(numpy_name(dtype, "dtype")) if dtype is not None else None
        kind = self.run.default_dtype if chosen is None else chosen
        exact: Any = int if kind.kind in "iub" else float
        first, last, stride = exact(start), exact(end), exact(step)
        if stride == 0:
            raise RuntimeError("step must be nonzero")
        if not (math.isfinite(first) and math.isfinite(last)):
            raise RuntimeError(f"unsupported range: {first:g} -> {last:g}")  # C++ ostream's
        if not ((stride > 0 and last >= first) or (stride < 0 and last <= first)):
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        count = int((last - first) / stride + 1) if exact is float else (last - first) // stride + 1
        with bounds.charging(self.run.tally):
            bounds.check_elements(count, f"range{tuple(numbers)}")
        places = np.arange(count, dtype=np.int64 if exact is int else np.float64)
        return self.made(first + places * stride, dtype, requires_grad)

    def linspace(
        self,
        start: Any,
        end: Any,
        steps: int,
        dtype: Any = None,
        requires_grad: bool = False,
        device: Any = None,
    ) -> gc.Tensor:
        array = self.build("linspace", [start, end, steps])
        kind = self.made(array[:0], dtype, False).dtype
        if len(array) > 1 and kind in (np.float32, np.float64):  # torch's last bits
            array = creation.linspace_like_torch(array[0], array[-1], len(array), kind)
        return self.made(array, dtype, requires_grad)

    def like(self, name: str) -> Callable[..., gc.Tensor]:
        made_as = name.removesuffix("_like")

        def make(
            source: Any,
            *rest: Any,
            dtype: Any = None,
            requires_grad: bool = False,
            device: Any = None,
            fill_value: Any = None,
            memory_format: Any = None,
        ) -> gc.Tensor:
            if not isinstance(source, gc.Tensor):
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor")
            shape = list(source.shape)
            if made_as == "full":
                fill = rest[0] if rest else fill_value
                with bounds.charging(self.run.tally):
                    bounds.check_elements(math.prod(shape), f"{name}{tuple(shape)}")
                array = np.full(shape, fill)
            else:
                drawn = self.dtype(dtype, source.dtype) if made_as in ("rand", "randn") else None
                array = self.build(made_as if made_as != "empty" else "zeros", shape, drawn)
                array = array.reshape(shape)
            tensor = self.made(array, dtype, requires_grad, source.dtype)
            if made_as in ("rand", "randn"):
                self.run.drawn.append(tensor.data.copy())
            return tensor

        return make

    def legacy(self, dtype: str | None) -> Callable[..., gc.Tensor]:
        """``torch.Tensor([...])`` and ``torch.FloatTensor``: data, or sizes."""

        def make(*args: Any) -> gc.Tensor:
            if len(args) == 1 and isinstance(args[0], (list, tuple, gc.Tensor)):
                data = args[0].data.tolist() if isinstance(args[0], gc.Tensor) else args[0]
                plain = _plain(data, self.run)
                array = self.build("tensor", [plain]) if plain != [] else np.zeros(0)
                return self.made(array, dtype, False)
            shape = self.sizes(args, "Tensor")
            return self.made(self.build("zeros", shape), dtype, False)

        return make


def _allclose(
    a: gc.Tensor, b: gc.Tensor, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False
) -> bool:
    return bool(np.allclose(a.data, b.data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _equal(a: gc.Tensor, b: gc.Tensor) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a.data, b.data))


def modules(run: Run) -> dict[str, Module]:
    """Every module a script may import, by its dotted name (see the module docstring)."""
    has = torch_has()

    def functions(module: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name in has.get(module, ()):
            op = F.lookup(name)
            if op is None:
                continue
            found[name] = _operation(run, op, name)
        return found

    def missing(module: str) -> Callable[[str], Any]:
        def lookup(name: str) -> Any:
            if name.startswith("_") or F.lookup(name) is not None:
                raise AttributeError(f"module '{module}' has no attribute '{name}'")
            raise GradcliError(
                f"gradcli has no {module}.{name} yet",
                hint="see `gradcli functions` for what gradcli has",
            )

        return lookup

    make = Constructors(run)
    torch_names = functions("torch")
    for name in ("zeros", "ones", "empty", "rand", "randn"):
        torch_names[name] = Builtin(name, make.filled(name))
    for name in LIKE:  # rand_like and the others the op table does not have as operations
        if F.lookup(name) is None:
            torch_names[name] = Builtin(name, make.like(name))
        else:  # zeros_like(x, requires_grad=True): the operation's value, made a leaf
            torch_names[name] = Builtin(name, _leaf_when_asked(torch_names[name]))
    torch_names.update(torch_samplers.samplers_of(make))
    torch_names.update(
        tensor=Builtin("tensor", make.tensor),
        full=Builtin("full", make.full),
        eye=Builtin("eye", make.eye),
        arange=Builtin("arange", make.arange),
        range=Builtin("range", make.range),
        linspace=Builtin("linspace", make.linspace),
        FloatTensor=Builtin("FloatTensor", make.legacy("float32")),
        DoubleTensor=Builtin("DoubleTensor", make.legacy("float64")),
        LongTensor=Builtin("LongTensor", make.legacy("int64")),
    )
    tensor_class = builtins._TensorClass("Tensor", make.legacy(None), "<class 'torch.Tensor'>")
    torch_names["Tensor"] = tensor_class
    kind = torch_random.Generator
    generator_class = run.library_classes.get(kind)
    if generator_class is None:
        generator_class = GeneratorClass(run, kind, "torch._C.Generator")
        run.library_classes[kind] = generator_class
    torch_names["Generator"] = generator_class
    torch_names["default_generator"] = run.generator
    torch_names.update({name: dtype for name, dtype in DTYPES.items()})

    def manual_seed(seed: int) -> torch_random.Generator:  # torch.manual_seed(seed=42) too
        if isinstance(seed, gc.Tensor):
            seed = seed.data.item()
        try:
            run.generator.manual_seed(int(seed))  # torch's int(seed)
        except gc.DomainError as exc:  # a seed torch cannot take: torch's ValueError
            raise ValueError(str(exc)) from None
        return run.generator  # torch.default_generator

    def set_default_dtype(dtype: Any) -> None:
        name = numpy_name(dtype, "set_default_dtype")
        if name not in ("float32", "float64"):
            raise TypeError("only floating-point types are supported as the default type")
        run.default_dtype = np.dtype(name)
        run.set_engine_default(run.default_dtype)

    def set_printoptions(**options: Any) -> None:
        try:
            run.print_options = torchtext.set_printoptions(run.print_options, **options)
        except TypeError as exc:
            raise GradcliError(f"torch.set_printoptions: {exc}") from None

    def numel(tensor: gc.Tensor) -> int:
        return tensor.numel()

    torch_names.update(
        no_grad=Builtin("no_grad", lambda: GradMode(False, "no_grad")),
        enable_grad=Builtin("enable_grad", lambda: GradMode(True, "enable_grad")),
        set_grad_enabled=Builtin("set_grad_enabled", _set_grad_enabled),
        inference_mode=Builtin(
            "inference_mode", lambda mode=True: GradMode(not mode, "inference_mode")
        ),
        is_grad_enabled=Builtin("is_grad_enabled", _grad_enabled),
        manual_seed=Builtin("manual_seed", manual_seed),
        set_default_dtype=Builtin("set_default_dtype", set_default_dtype),
        get_default_dtype=Builtin("get_default_dtype", lambda: dtype_of(run.default_dtype)),
        set_printoptions=Builtin("set_printoptions", set_printoptions),
        is_tensor=Builtin("is_tensor", lambda v: isinstance(v, gc.Tensor)),
        numel=Builtin("numel", numel),
        allclose=Builtin("allclose", _allclose),
        equal=Builtin("equal", _equal),
        Size=Builtin("Size", lambda shape=(): Size(tuple(shape)), "<class 'torch.Size'>"),
        device=Builtin("device", lambda kind="cpu": CPU if kind == "cpu" else _no_device(kind)),
        set_default_device=Builtin("set_default_device", _set_default_device),
        from_numpy=Builtin("from_numpy", numpy_values.from_numpy),
        get_default_device=Builtin("get_default_device", lambda: CPU),
        pi=math.pi,
        e=math.e,
        inf=math.inf,
        nan=math.nan,
        __missing__=missing("torch"),
    )
    autograd_functional = Module(
        "torch.autograd.functional",
        {
            name: Builtin(name, autograd.functional(name))
            for name in ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")
        }
        | {"__missing__": missing("torch.autograd.functional")},
    )
    graph = autograd_graph.module(run, missing("torch.autograd.graph"), builtins.TypeName(NODE))
    forward_ad = func_api.forward_ad_module(missing("torch.autograd.forward_ad"))
    autograd_module = Module(
        "torch.autograd",
        {
            "graph": graph,
            "grad": Builtin("grad", lambda *a, **k: autograd.grad(run, *a, **k)),
            "backward": Builtin("backward", lambda *a, **k: autograd.backward_of(run, *a, **k)),
            "functional": autograd_functional,
            "forward_ad": forward_ad,
            "Variable": Builtin(
                "Variable",
                lambda data, requires_grad=False: gc.Tensor(data.data, requires_grad),
                "<class 'torch.autograd.variable.Variable'>",
            ),
            "__missing__": missing("torch.autograd"),
        },
    )
    function_base = custom_functions.function_class()
    function_module = custom_functions.function_module(
        function_base, missing("torch.autograd.function")
    )
    autograd_module.attributes.update(
        Function=function_base,
        function=function_module,
        gradcheck=Builtin("gradcheck", gradcli_autograd.gradcheck),
        gradgradcheck=Builtin("gradgradcheck", gradcli_autograd.gradgradcheck),
    )
    func_module = func_api.func_module(run, missing("torch.func"))
    functional = Module(
        "torch.nn.functional",
        functions("torch.nn.functional") | {"__missing__": missing("torch.nn.functional")},
    )
    library = torch_nn.modules(run, functional, missing)
    library.update(torch_data.modules(run, missing))
    nn = library["torch.nn"]
    linalg = Module(
        "torch.linalg", functions("torch.linalg") | {"__missing__": missing("torch.linalg")}
    )
    special = Module(
        "torch.special", functions("torch.special") | {"__missing__": missing("torch.special")}
    )
    accelerator = Module(
        "torch.accelerator",
        {
            "is_available": Builtin("is_available", lambda: False),
            "current_accelerator": Builtin(
                "current_accelerator", lambda check_available=False: None
            ),
            "device_count": Builtin("device_count", lambda: 0),
            "__missing__": missing("torch.accelerator"),
        },
    )
    cuda = Module(
        "torch.cuda",
        {
            "is_available": Builtin("is_available", lambda: False),
            "device_count": Builtin("device_count", lambda: 0),
            "__missing__": missing("torch.cuda"),
        },
    )
    # torch.functional: a module of torch's functions written in Python (torch.einsum is
    # torch.functional.einsum), those of them gradcli has
    functional_module = Module(
        "torch.functional",
        {name: torch_names[name] for name in TORCH_FUNCTIONAL if name in torch_names}
        | {"__missing__": missing("torch.functional")},
    )
    torch_names.update(
        functional=functional_module,
        autograd=autograd_module,
        func=func_module,
        nn=nn,
        optim=library["torch.optim"],
        linalg=linalg,
        special=special,
        utils=library["torch.utils"],
    )
    # torch.random: the module of torch's own manual_seed (torch.random.manual_seed(42))
    random = Module(
        "torch.random",
        {"manual_seed": torch_names["manual_seed"], "__missing__": missing("torch.random")},
    )
    torch_names.update(accelerator=accelerator, cuda=cuda, random=random)
    torch_names["vmap"] = func_module.attributes["vmap"]  # torch.vmap is torch.func.vmap
    torch_names["__version__"] = TORCH_VERSION
    torch = Module("torch", torch_names)
    found = {
        "torch": torch,
        "torch.autograd": autograd_module,
        "torch.autograd.functional": autograd_functional,
        "torch.autograd.graph": graph,
        "torch.autograd.forward_ad": forward_ad,
        "torch.autograd.function": function_module,
        "torch.func": func_module,
        "torch.nn.functional": functional,
        "torch.linalg": linalg,
        "torch.special": special,
        "torch.functional": functional_module,
        "functorch": func_api.functorch_module(run, func_module),
    }
    found.update(library)
    found.update(builtins.python_modules(run))
    found["numpy"] = numpy_values.module(run)
    return found


def _operation(run: Run, op: F.Op, name: str) -> Builtin:
    """torch's function ``name``: the entry ``op``, its arguments bound by its signature."""
    return Builtin(
        name,
        lambda *args, **kwargs: call_op(run, op, name, args, kwargs),
        f"<built-in method {name} of type object at 0x{id(op):x}>",
    )


def _bounds(name: str, args: tuple[Any, ...], named: dict[str, Any]) -> list[Any]:
    """arange's and range's numbers, ``(end)``, ``(start, end)`` or ``(start, end, step)``,
    each given by position or by name (``arange(start=0, end=10, step=1)``), as numbers."""
    slots = ["start", "end", "step"]
    for key in named:
        if key not in slots:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    if named:
        given = dict(zip(slots, args))
        for key, value in named.items():
            if key in given:
                raise TypeError(f"{name}() got multiple values for argument '{key}'")
            given[key] = value
        if "end" not in given:
            raise TypeError(f'{name}() missing 1 required positional arguments: "end"')
        args = tuple(given.get(key, default) for key, default in zip(slots, (0, None, 1)))
    return [a.data.item() if isinstance(a, gc.Tensor) else a for a in args]


class _SetGradEnabled(GradMode):
    """``torch.set_grad_enabled(mode)``: the mode is set when it is called (as a function, it
    stays), and a ``with`` block puts the one before back at its end."""

    def __init__(self, enabled: bool):
        super().__init__(enabled, "set_grad_enabled")
        from ...engine.tensor import _Mode

        self.previous = _Mode.grad_enabled
        _Mode.grad_enabled = enabled

    def enter(self) -> None:
        pass

    def exit(self) -> None:
        from ...engine.tensor import _Mode

        _Mode.grad_enabled = self.previous


def _set_grad_enabled(mode: Any) -> GradMode:
    return _SetGradEnabled(bool(mode))


def _grad_enabled() -> bool:
    from ...engine.tensor import _Mode

    return _Mode.grad_enabled


def _set_default_device(device: Any) -> None:
    """``torch.set_default_device``: the CPU (or None, torch's default) is the one gradcli has."""
    if device is not None and device != CPU:
        _no_device(str(device))


def _no_device(kind: str) -> Device:
    raise GradcliError(f"gradcli computes on the CPU only: torch.device({kind!r}) is not taken")


__all__ = ["modules", "GradMode", "read_grad", "printing", "call", "DType"]
