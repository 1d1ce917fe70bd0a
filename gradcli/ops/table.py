"""The op table: every operation gradcli knows, one entry each, holding everything about it.

An entry (``Op``) is read by every part of gradcli that needs to know an operation:

- the engine: ``forward`` (numpy), ``vjp`` and ``jvp`` (written in differentiable operations,
  so derivatives can be differentiated again), ``backward_name`` (PyTorch's ``grad_fn`` name);
- the language: ``params`` (the signature the validator checks calls against), ``summary``,
  ``aliases`` and ``operator``, how the language writes it besides a call (``+`` is ``add``,
  ``-x`` is ``neg``, ``[]`` indexing, ``ELEMENTS`` the vector of elements ``y0, y1, ...``);
  ``call`` is the function a program calls;
- the tensor methods: ``methods`` (``x.sum()``);
- the compiler: ``batch``, how a traced step acts when its arguments carry a leading batch
  dimension (compiled replay, vectorized Jacobians, ``--batch``);
- sympy: ``symbolic``, the operation on arrays of formulas (``--symbolic``, ``check``,
  ``explain``), or the reason it has none; ``formula``, one element's formula;
- explain: ``explain``, the local derivative of an operation that is not element-wise;
- the parser: ``fold``, whether arithmetic on numbers alone is done while parsing;
- NaN provenance: ``nonfinite`` and ``nonfinite_backward``, why the forward value or a
  derivative can be NaN or infinite, in words;
- ``gradcli functions``: ``kink``, PyTorch's convention at kinks and ties.

An operation that is a primitive of the engine has a ``forward``; one built from others (a
loss, ``dot``) has only a ``call``. Adding an operation is one entry plus its row in the
sweep test (``tests/engine/engine_optable.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ..engine.tensor import Tensor

REQUIRED = object()

# The ufuncs of two float64 operands whose value is float64 (``Op.forward_float64``)
_FLOAT64_UFUNCS = (np.add, np.subtract, np.multiply, np.divide)

# What an operation does with complex operands (``Op.complex``)
HOLOMORPHIC = "holomorphic"
COMPLEX_RULES = "its own rules"

# Parameter kinds: what an argument of a call may be.
TENSOR = "tensor"  # any expression
TENSORS = "tensors"  # a list of expressions: stack([a, b])
OPT_TENSOR = "tensor or None"  # an expression, or None for an operand left out: linear's bias
VAR_TENSORS = "*tensors"  # the rest of the positional arguments, expressions: einsum(eq, a, b)
# the kinds of a call's operands (not options)
OPERAND_KINDS = (TENSOR, TENSORS, OPT_TENSOR, VAR_TENSORS)
INT = "int"  # a whole number, possibly negative (a dim)
OPT_INT = "int or None"
DIMS = "an int, a tuple of ints, or None"  # dims to reduce over: sum(x, dim=(0, 1))
NUMBER = "number"
OPT_NUMBER = "number or None"
BOOL = "True or False"
REDUCTIONS = ("mean", "sum", "none")  # what a loss's reduction may be
REDUCTION = "'mean', 'sum' or 'none'"
APPROXIMATIONS = ("none", "tanh")  # what gelu's approximate may be
APPROXIMATE = "'none' or 'tanh'"
NORM_ORD = "a number, 'fro' or 'nuc'"  # matrix_norm's ord
KL_REDUCTIONS = ("mean", "batchmean", "sum", "none")  # what kl_div's reduction may be
KL_REDUCTION = "'mean', 'batchmean', 'sum' or 'none'"
DTYPE = (
    "a dtype: torch.float32, torch.float64, torch.long, torch.int32, torch.int16, torch.int8, "
    "torch.uint8, torch.bool, torch.complex64 or torch.complex128"
)
OPT_DTYPE = "a dtype or None"  # the dtype a reduction computes in: sum(x, dtype=torch.float32)
# the dtypes by the names a program may give them (torch.long is int64), as numpy names them
DTYPE_NAMES = {
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "int64": "int64",
    "long": "int64",
    "int32": "int32",
    "int": "int32",
    "int16": "int16",
    "short": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
    "complex64": "complex64",
    "cfloat": "complex64",
    "complex128": "complex128",
    "cdouble": "complex128",
}
ROUNDING_MODES = (None, "trunc", "floor")  # how div rounds its quotient (None: not at all)
ROUNDING_MODE = "None, 'trunc' or 'floor'"
UPLOS = ("L", "U", "l", "u")  # which triangle eigh reads (either case, as torch)
UPLO = "'L' or 'U'"
QR_MODES = ("reduced", "complete", "r")  # what qr's mode may be
QR_MODE = "'reduced', 'complete' or 'r'"
SIZES = "sizes"  # the rest of the positional arguments, whole numbers: reshape(x, 2, 3)
INTS = "an int or a tuple of ints"  # a shape or a padding: unflatten(x, 0, (2, 3))
OPT_INTS = DIMS  # a size per dim, or None for its default: max_pool2d's stride
PAD_MODES = ("constant", "reflect", "replicate", "circular")  # what pad's mode may be
PAD_MODE = "'constant', 'reflect', 'replicate' or 'circular'"
# einsum's equation: letters, ',', '->', '...' and spaces, nothing else (validate checks it)
EQUATION = "a string of letters, ',', '->', '...' and spaces"
SECTIONS = "an int or a list of ints"  # split's split_size_or_sections
INDEXINGS = ("ij", "xy")  # what meshgrid's indexing may be (None: 'ij', with torch's warning)
INDEXING = "'ij', 'xy' or None"
# Which result of an operation with several (values, indices = max(x, 1)) a call gives: (k,
# count), the k-th of them, and how many names take them (0: one is taken, as in
# sort(x).values). Never written in a program: the validator gives it (see ``outputs``).
OUTPUT = "output"

# The vector a program makes of element assignments (y0 = ...; y1 = ... makes y): an operator.
ELEMENTS = "y0, y1, ..."

Rule = Callable[..., Any]
# The arrays the engine and the rules pass around: floating values, boolean masks, integer
# indices, and object arrays of sympy formulas alike.
Array = npt.NDArray[Any]
# Object arrays whose elements are sympy formulas (the symbolic rules' values).
Objects = npt.NDArray[np.object_]
# What a numpy function gives back: an array, or a numpy scalar where the result is 0-d (numpy's
# stubs also type most operations on an Array as Any).
NumpyResult = Any
# A ``call``: an operation as the engine exports it. Its type is fixed (not the decorated
# function's own signature) so that type checkers know it before the function is defined: the
# rules of an entry, declared above its call, call it.
Call = Callable[..., "Tensor"]


@dataclass(frozen=True)
class Param:
    """One parameter of an operation as a program calls it."""

    name: str
    kind: str
    default: object = REQUIRED


@dataclass(eq=False)
class Op:
    """One operation (see the module docstring for who reads which field).

    ``vjp(cotangent, out, *inputs, needs, **params)`` returns one cotangent (or None) per
    input; ``needs[i]`` tells whether input ``i`` requires grad, so rules can skip work.
    ``jvp(tangents, out, *inputs, **params)`` returns the output tangent; a missing input
    tangent is None. ``batch(forward, params, values, batched, ranks, size)`` computes the
    step with a leading batch dimension on the ``batched`` values (see ``ops.batching``).
    ``pattern(step)`` gives the sparsity pattern of the result from its arguments' (see
    ``ops.patterns``; None: every element depends on all).
    ``symbolic(*arrays, *literals)`` computes it on object arrays of sympy formulas;
    ``formula(sympy, *elements)`` gives one element's formula where the array rule is
    missing (piecewise functions, which only explain shows). ``explain(slot, vary)`` is the
    local derivative ``explain`` shows for an operation that is not element-wise (see
    ``ops.explaining``).
    ``backward_name`` is PyTorch's name of the operation's node: a string, or a function of the
    node (a primitive's) or of the call's arguments (an operation built from others) where
    torch's overloads name it differently.
    ``size(*arrays, **params)``, of a primitive, is the number of elements its forward will
    allocate for the arrays and parameters it is given, worked out before it runs (None: the
    broadcast of the operands; see ``engine.sizes``).
    """

    name: str
    summary: str = ""
    forward: Callable[..., Any] | None = None
    vjp: Rule | None = None
    jvp: Rule | None = None
    # a primitive's may be a function of its node; a composite's, of its call's arguments
    backward_name: str | Callable[[Any], str] = ""
    differentiable: bool = True
    batch: Rule | None = None
    # which input elements each element of the result depends on (ops.patterns); None: dense
    pattern: Rule | None = None
    params: tuple[Param, ...] = ()  # empty: programs do not call it by name
    call: Callable[..., Any] | None = None
    aliases: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    operator: str | None = None
    symbolic: Rule | str | None = None
    formula: Rule | None = None
    explain: Rule | None = None
    fold: bool = False
    nonfinite: str = "overflow or an invalid operation"
    nonfinite_backward: str = "overflow or an invalid operation"
    kink: str = ""
    size: Callable[..., int] | None = None
    # property: a property name (x.T); base_e: the operation that e ** x is (for pow); glyph:
    # the mathematical sign messages suggest it for (sqrt: √); warning: the call's arguments ->
    # the UserWarning torch gives for them, or None (warn_once: torch gives it once in a
    # process, not once per line); varargs: a TENSORS parameter, first, that also takes the
    # tensors as positional arguments (torch's *tensors: meshgrid(a, b) or meshgrid([a, b]));
    # built_name: the backward_name of a primitive's call where it builds the result from other
    # operations (clamp's tensor bounds); positional: the parameters a call may give by
    # position, in torch's order where it is not the signature's (nll_loss(input, target,
    # weight)), the others by name only; by_place: its float32 value in torch's order follows
    # each element's place in the array (sigmoid, silu: SLEEF's exp over whole vectors, the C
    # library's over the rest), so that a point's elements batched are not computed as alone
    # (a replay that keeps each point's bits, PER_POINT, refuses it)
    extra: dict[str, Any] = field(default_factory=dict)
    # complex operands: "" refuses them (torch's error); HOLOMORPHIC: the rules, written as for
    # real numbers, hold for complex ones, the engine taking the reverse rule at the conjugated
    # operands for torch's convention (conj(J)^T g); COMPLEX_RULES: the rules themselves follow
    # torch's convention
    complex: str = ""
    # whether torch's node of it saves a tensor for its backward (its operands' or its result's
    # values), so that a second backward after the first freed the graph raises; False: the
    # rule reads only shapes and parameters (add, sum, reshape), and a second backward runs,
    # as in torch; or a function of the node where torch saves only what the gradients asked
    # for need (remainder(x, c) saves nothing for x alone) or its overloads differ
    saved: bool | Callable[[Any], bool] = True
    # whether ``vjp`` reads its ``out`` argument; False (the element-wise factories find it
    # from the rule's code): the engine passes None, making no tensor of the saved output.
    # Who gives an entry another ``vjp`` afterwards sets this too (complexes.py, for abs).
    vjp_reads_out: bool = True
    # whether ``vjp`` reads its operands' values (not only their shapes and dtypes); False (add,
    # relu, whose rule reads its output: the factories find it from the rule's code) lets the
    # engine release the values of a tensor under the node that no one else holds
    # (``released.let_go``). Who gives an entry another ``vjp`` afterwards sets this too.
    vjp_reads_inputs: bool = True
    # ``vjp`` on arrays, for the reverse pass that builds no graph, where every operand and
    # the cotangent are float64 (the engine's default dtype): ``(cotangent, out, *inputs,
    # needs, **params)``, all numpy arrays (``out`` None where ``vjp_reads_out`` is False), the
    # node's parameters as keywords (log_softmax's dim), returns one
    # array (or None) per input, computed by the very numpy calls ``vjp`` makes through
    # ``apply`` for those dtypes (so bit for bit its values), or None where ``vjp`` must run;
    # the pass calls it only where each operand whose cotangent is needed has the cotangent's
    # shape (else ``vjp_arrays_any_shape``); ``ops/rules/array_rules.py`` sets them. None:
    # ``vjp`` always runs.
    vjp_arrays: Rule | None = None
    # ``vjp_arrays`` (the same arguments) where an operand whose cotangent is needed has
    # another shape than the cotangent: a broadcast operand's cotangent summed back (add,
    # sub), a matrix product's (matmul); None there, or where it returns None: ``vjp`` runs
    vjp_arrays_any_shape: Rule | None = None
    # ``vjp_arrays`` of a unary entry that reads ``out``, writing the cotangent into ``out``'s
    # memory: the pass calls it where it alone holds the output's array (its tensor is gone)
    # and the array is large (``released.REUSED``), as hand-written numpy reuses an array after
    # its last use (``g *= mask``)
    vjp_arrays_into: Rule | None = None
    # whether ``vjp_arrays`` gives the first operand the cotangent itself where the second's
    # is not needed (add, sub): the pass then passes it on without calling the rule
    vjp_arrays_passes: bool = False
    # whether no cotangent ``vjp_arrays`` gives (nor its any-shape and into rules) is larger than
    # the cotangent it is given (element-wise rules): a chain's pass then need not read its size
    vjp_arrays_sized: bool = False
    # ``forward`` for float64 operands alone and no parameters where its value is float64 for
    # certain (a ufunc of float64 to float64): the ufunc itself where ``forward`` is a
    # ``single_precision.rounded_once`` wrapper (its ``float64``: a Python frame less an
    # operation, sin, exp), or add's, sub's, mul's, div's; else None. ``tensor.apply_one`` and
    # ``apply_two`` call it there and do not read the value's dtype (an attribute lookup)
    forward_float64: Callable[..., Any] | None = field(init=False, default=None)
    # whether a node's release (``tensor._release``) drops its inputs and nothing else: it
    # saves them all (``saved`` True) and its name is fixed (no namer reads the inputs)
    released_plainly: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        float64 = getattr(self.forward, "float64", None)
        self.forward_float64 = self.forward if self.forward in _FLOAT64_UFUNCS else float64
        self.released_plainly = self.saved is True and isinstance(self.backward_name, str)

    @property
    def in_language(self) -> bool:
        """Whether programs may call it by name."""
        return bool(self.params)

    @property
    def outputs(self) -> tuple[str, ...]:
        """The names of the results of an operation that gives several (``("values",
        "indices")``; ``("0", "1", ...)`` for a plain tuple, of any length where
        ``extra["count"]`` says so); empty for an operation with one result."""
        return tuple(self.extra.get("outputs", ()))

    @property
    def options(self) -> tuple[Param, ...]:
        """The parameters that are options (dims, flags, numbers), not operands, in order."""
        return tuple(p for p in self.params if p.kind not in OPERAND_KINDS)

    def arranged(self, operands: list[Any], options: tuple[Any, ...] | list[Any]) -> list[Any]:
        """A call's arguments in signature order, from its operands and its options apart (as
        the IR holds them): layer_norm(input, normalized_shape, weight, ...) puts an option
        between operands."""
        if not self.params or not options:  # y[0] = ..., or operands alone: in their order
            return [*operands, *options]
        given, rest = list(operands), list(options)
        ordered = []
        for p in self.params:
            source = given if p.kind in OPERAND_KINDS else rest
            if p.kind in (SIZES, VAR_TENSORS) or not source:  # the rest, or left to defaults
                break
            ordered.append(source.pop(0))
        return [*ordered, *given, *rest]

    def signature(self) -> str:
        """``sum(input, dim=None, keepdim=False)``, as ``gradcli functions`` lists it."""
        parts = []
        positional = self.extra.get("positional")  # torch's positional order, the rest named
        params = self.params
        if positional is not None:
            first = [p for name in positional for p in self.params if p.name == name]
            params = (*first, Param("*", "*"), *(p for p in self.params if p not in first))
        for p in params:
            if p.kind == OUTPUT:
                continue
            if p.kind == "*":
                parts.append("*")
                continue
            if p.kind in (SIZES, VAR_TENSORS) or (p.kind == TENSORS and self.extra.get("varargs")):
                parts.append(f"*{p.name}")
            elif p.default is REQUIRED:
                parts.append(p.name)
            else:
                parts.append(f"{p.name}={p.default!r}")
        return f"{self.name}({', '.join(parts)})"


OPS: dict[str, Op] = {}

#: The batch rules that give every point the bits its own step gives it (element-wise steps,
#: moves of data), each to itself, and the rules that do not to a variant that does (matmul's:
#: each row as its own product rounds it); a replay that must keep each point's bits
#: (``compile.run_batched``'s ``each_alone``) takes only these, and not for an entry whose
#: values follow each element's place in the array (``extra["by_place"]``). Filled by
#: ``ops.batching``.
PER_POINT: dict[Rule, Rule] = {}


def register(op: Op) -> Op:
    """Add ``op`` to the table; a name is declared once."""
    if op.name in OPS:
        raise ValueError(f"the operation {op.name!r} is declared twice")
    OPS[op.name] = op
    return op


def public(name: str) -> Callable[[Call], Call]:
    """Make the decorated function the ``call`` of the entry ``name`` (a wrapper that checks
    its arguments, or a composite built from other operations)."""

    def attach(function: Call) -> Call:
        OPS[name].call = function
        return function

    return attach


def made_public(name: str, call: Call, function: str, doc: str) -> Call:
    """``public(name)`` for a ``call`` that a factory makes for several entries: named
    ``function`` (as a function written out would be) with the docstring ``doc``."""
    call.__name__ = call.__qualname__ = function
    call.__doc__ = doc
    return public(name)(call)


def call_of(name: str) -> Call:
    """The call of the entry ``name``, for an engine module that uses an operation declared
    by a module above it (``matrix_norm``'s ``svd``, in ``decompositions.py``): read
    from the table when it runs, so that the module need not import the one above."""
    call = OPS[name].call
    if call is None:
        raise KeyError(f"the operation {name!r} has no call")
    return call
