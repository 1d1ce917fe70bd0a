"""The Tensor, the graph node, and the reverse-mode pass.

A Tensor wraps a numpy array. Applying a primitive (see ``primitives.py``) to tensors that
require grad records the graph's node on the result itself: the primitive, its input tensors
and its parameters, in the tensor's node slots (one object an operation, not two;
``grad_fn`` is a ``Node``, a view of them). ``backward`` runs those nodes newest first (the
reverse of their creation, as torch's engine runs them by sequence number), calling each
primitive's reverse rule. The rules are written with the engine's own operations, so with
``create_graph=True`` the backward pass itself builds a graph that can be differentiated
again.
"""

from __future__ import annotations

import functools
import itertools
import operator
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..base.engine_errors import FREED_GRAPH_ERROR as _FREED_GRAPH_ERROR
from ..base.engine_errors import NONLEAF_GRAD_WARNING as _NONLEAF_GRAD_WARNING
from ..base.engine_errors import (
    ComplexOutputError,
    DtypeError,
    EngineError,
    GradError,
    ScalarOutputError,
    SeedShapeError,
    ShapeError,
)
from ..base.engine_errors import complex_refusal as _complex_refusal
from ..base.engine_errors import operand_refusal as _refusal
from ..base.engine_errors import refuse_complex as _refuse_complex
from ..base.torch_text import size_repr
from ..ops.table import HOLOMORPHIC, Array, Op
from . import graph_hooks, sizes
from .graph_hooks import BUMPED, HOOKED, PACKED, SAVED_HOOKS

# the switches (modes.py), which the engine's modules import from here
from .modes import DEFAULT_DTYPE as DEFAULT_DTYPE
from .modes import NonfiniteTangent as NonfiniteTangent
from .modes import _forward_mode as _forward_mode
from .modes import _Mode as _Mode
from .modes import complex_of as complex_of
from .modes import default_complex as default_complex
from .modes import default_dtype as default_dtype
from .modes import default_floating as default_floating
from .modes import is_grad_enabled as is_grad_enabled
from .modes import no_grad as no_grad
from .modes import set_grad_enabled as set_grad_enabled
from .modes import watch_nonfinite as watch_nonfinite
from .modes import watch_rule, watch_tangent
from .modes import watched_nonfinite as watched_nonfinite
from .node import SEVERAL
from .node import Node as Node
from .node import inputs_of as inputs_of
from .ownership import Ownership
from .promotion import in_dtype_of, number_array, torch_dtype, truth_dtype
from .released import LARGE, REUSED, let_go, let_go_two, refuse_released, sole
from .sizes import METER, ROOM


class Tensor:
    """A numpy array with autograd bookkeeping, shaped after ``torch.Tensor``."""

    __slots__ = (
        "data",
        "dtype",  # data.dtype, kept beside it: the engine reads it at every operation
        "requires_grad",
        "_grad",
        "_retains_grad",
        "tangent",
        # The node that made this tensor: its entry, None for a leaf (and for every tensor
        # that does not require grad). Only where it is not None are the others set: the
        # input tensors (``_first`` and ``_second``, see ``inputs_of``; None once released),
        # parameters, which inputs require grad, the place in the order of creation (the
        # reverse pass runs the newest first); and, unset until then (an operation writes two
        # slots less, the collector visits two less), the name where it is fixed (by the
        # call's spelling, see ``naming``, or at release, since some namers read the inputs)
        # and the Node that grad_fn gave (read with getattr).
        "_op",
        "_first",
        "_second",
        "_params",
        "_needs",
        "_order",
        "_name",
        "_node",
        # unset but for a node with hooks, saved tensors packed, or a tensor written in place:
        # graph_hooks' values for it, by kind (see graph_hooks._ByNode)
        "_attached",
        "__weakref__",
    )
    __array_priority__ = 1000  # so that ndarray <op> Tensor defers to Tensor's operators

    _op: Op | None
    # one or two inputs: the first (None once released) and the second (None for one); other
    # counts: the tuple of them, and SEVERAL (the reverse pass reads the slots themselves)
    _first: Any
    _second: Any
    _params: dict[str, Any]
    _needs: tuple[bool, ...]
    _order: int
    _name: str | None
    _node: Node | None
    _attached: dict[str, Any]

    def __init__(
        self, data: Any, requires_grad: bool = False, dtype: npt.DTypeLike | None = None
    ) -> None:
        array = np.asarray(data, dtype=dtype)
        if requires_grad and array.dtype.kind not in "fc":
            raise DtypeError(
                "only tensors of floating point and complex dtype can require gradients "
                f"(got {array.dtype})"
            )
        self.data = array
        self.dtype: np.dtype[Any] = array.dtype
        self.requires_grad = bool(requires_grad)  # a bool: apply indexes _NEEDS_TWO by it
        self._op: Op | None = None
        self._grad: Tensor | None = None
        self._retains_grad = False
        self.tangent: Tensor | None = None

    # -- attributes ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    def dim(self) -> int:
        return self.data.ndim

    def numel(self) -> int:
        return self.data.size

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        return self.shape if dim is None else self.shape[dim]

    @property
    def is_leaf(self) -> bool:
        return self._op is None

    @property
    def grad_fn(self) -> Node | None:
        """The node of the operation that made this tensor (None for a leaf)."""
        if self._op is None:
            return None
        node: Node | None = getattr(self, "_node", None)
        if node is None:
            node = self._node = Node(self)
        return node

    @property
    def _inputs(self) -> tuple[Tensor, ...] | None:
        """The input tensors of the node that made this tensor (None once released)."""
        return inputs_of(self)

    @_inputs.setter
    def _inputs(self, inputs: tuple[Tensor, ...] | None) -> None:
        if inputs is None:  # released
            self._first = self._second = None
        elif len(inputs) == 1:
            self._first, self._second = inputs[0], None
        elif len(inputs) == 2:
            self._first, self._second = inputs
        else:
            self._first, self._second = inputs, SEVERAL

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient; None (and a warning) on a non-leaf that did not retain it."""
        if not self.is_leaf and not self._retains_grad:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        self._grad = value

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        if not self.requires_grad:
            raise GradError("can't retain_grad on a Tensor that has requires_grad=False")
        if self._op is not None:
            self._retains_grad = True

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not self.is_leaf:
            raise GradError("requires_grad can only be changed on leaf tensors")
        if requires_grad and self.dtype.kind not in "fc":
            raise DtypeError(
                "only tensors of floating point and complex dtype can require gradients"
            )
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self) -> Tensor:
        """A new leaf sharing the data, cut from the graph."""
        return Tensor(self.data)

    def numpy(self) -> Array:
        return self.data

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> Array:
        """``numpy.asarray(tensor)``: the data (numpy's ``copy`` and ``dtype`` as asked). As in
        torch, a tensor that requires grad is refused (a ``GradError``, a RuntimeError, with
        torch's text): ``numpy.asarray(tensor.detach())`` takes its values out of the graph."""
        if self.requires_grad:
            raise GradError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        if dtype is None or np.dtype(dtype) == self.dtype:
            return self.data.copy() if copy else self.data
        if copy is False:
            raise ValueError(f"cannot make {self.dtype} data {np.dtype(dtype)} without a copy")
        return self.data.astype(dtype)

    def item(self) -> float:
        value: float = self.data.item()  # an int or a bool for those dtypes
        return value

    def tolist(self) -> Any:  # nested lists of the elements
        return self.data.tolist()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        """The slices along the first dimension, as torch iterates a tensor (``a, b = x``,
        ``for row in x``): the results of ``unbind``, each with its node."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind())

    def __repr__(self) -> str:
        """torch's text for this tensor (``torchtext.tensor_repr``), its default dtype the
        engine's (float64; ``gradcli run``'s float32): ``tensor([0.0000, 0.0770])``."""
        from ..base.torch_text import tensor_repr

        if self.dtype.kind not in "biufc":  # formulas (symbolic mode): no torch dtype
            return f"tensor({np.array2string(self.data, separator=', ', prefix='tensor(')})"
        # (a Node made here is not kept: no cycle)
        node = None if self._op is None else getattr(self, "_node", None) or Node(self)
        tangent = None
        if self.tangent is not None and _Mode.tangent_holders is not None:
            # a dual tensor inside forward_ad's level, as torch prints it: the tangent's
            # text (its number alone for a 0-d tangent: torch formats it by item())
            tangent = str(self.tangent.item()) if self.tangent.ndim == 0 else repr(self.tangent)
        return tensor_repr(
            self.data,
            requires_grad=self.requires_grad,
            grad_fn=None if node is None else node.name(),
            default_dtype=_Mode.default_float,
            tangent=tangent,
        )

    # -- autograd -----------------------------------------------------------------------------
    def backward(
        self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False
    ) -> None:
        """Accumulate d(self)/d(leaf) (times ``gradient``) into every leaf's ``.grad``."""
        backward([self], None if gradient is None else [gradient], retain_graph, create_graph)

    # The operators and methods are attached in ``methods.py``, from the primitive table; the
    # type checker is told of the ones the engine uses.
    if TYPE_CHECKING:

        def __add__(self, other: Any) -> Tensor: ...

        def __mul__(self, other: Any) -> Tensor: ...

        def __getitem__(self, index: Any) -> Tensor: ...

        def reshape(self, *shape: Any) -> Tensor: ...

        def sum(self, dim: Any = None, keepdim: bool = False) -> Tensor: ...

        def conj(self) -> Tensor: ...

        def unbind(self, dim: int = 0) -> tuple[Tensor, ...]: ...

        @property
        def real(self) -> Tensor: ...


# What an operation takes as an operand: a tensor, or what becomes one (a number, an array).
TensorLike = Tensor | npt.ArrayLike


def as_tensor(value: Any, dtype: npt.DTypeLike | None = None) -> Tensor:
    """``value`` unchanged if it is a Tensor, else a new constant tensor."""
    if isinstance(value, Tensor):
        return value
    if dtype is None:
        array = np.asarray(value)
        if array.dtype.kind in "iuf" and array.dtype != DEFAULT_DTYPE:
            array = array.astype(DEFAULT_DTYPE)
        return Tensor(array)
    return Tensor(np.asarray(value, dtype=dtype))


def _wrap(data: Array) -> Tensor:
    """A constant tensor around an array (a numpy scalar made one), unchecked (hot path)."""
    if type(data) is not _ndarray:  # a numpy scalar, as numpy gives for 0-d operands
        data = np.asarray(data)
    out = _new_tensor(Tensor)
    out.data = data
    out.dtype = data.dtype
    out.requires_grad = False
    out._op = None
    out._grad = None
    out._retains_grad = False
    out.tangent = None
    return out


_new_tensor = object.__new__
# Node.order: each node's place in the order of creation (a count of step 1: its next() is
# C arithmetic; the reverse pass's heap, smallest first, takes -order to run newest first)
_ORDER = itertools.count()


_data = operator.attrgetter("data")
_ndarray = np.ndarray
_NEEDS: dict[tuple[bool, ...], tuple[bool, ...]] = {}
_NEEDS_ONE = (True,)
# needs of two operands, indexed by their requires_grad (False is 0, True is 1)
_NEEDS_TWO = (((False, False), (False, True)), ((True, False), (True, True)))
_NEEDS_FIRST, _NEEDS_SECOND = _NEEDS_TWO[1][0], _NEEDS_TWO[0][1]
# _NEEDS_FIRST's value, told apart by identity: of an element-wise operation of a float64 tensor
# and a number's 0-d float64 constant (x * 1.01), whose result has the tensor's shape
# (made at run time: the compiler would merge a literal with _NEEDS_TWO's equal constant)
_NEEDS_A_NUMBER = tuple([True, False])
_requires_grad = operator.attrgetter("requires_grad")
_tangent = operator.attrgetter("tangent")


def apply(prim: Op, *args: Any, **params: Any) -> Tensor:
    """Run a primitive on tensors (or numbers), recording a graph node when needed.

    This runs once per operation of every eager program (and of every reverse rule), so it is
    written for speed: one or two operands go to ``apply_one`` and ``apply_two``, which read
    them without a loop; each operand's dtype is tested once against the result's (torch's
    dtype corrections, in ``promotion.torch_dtype``, apply only where they differ), and the
    graph node is made only where an operand requires grad.
    """
    count = len(args)
    if count == 2:
        return apply_two(args[0], args[1], prim, params)
    if count == 1:
        return apply_one(prim, args[0], params)
    forward = prim.forward
    assert forward is not None, f"{prim.name} is not a primitive"
    tensors = args
    for t in args:
        if type(t) is not Tensor:
            tensors = _coerce(args)
            break
    try:
        if not prim.complex:
            _refuse_complex(prim, tensors)
        arrays = tuple(map(_data, tensors))
        sizes.check(prim, arrays, params)  # before the value is allocated
        for t in tensors:
            if t._op is not None and t.data.size >= LARGE:
                let_go(t)
        out_data = forward(*arrays, **params)
        if type(out_data) is not _ndarray:
            out_data = np.asarray(out_data)
        if any(t.dtype is not out_data.dtype for t in tensors):
            forward, out_data = torch_dtype(
                forward, arrays, params, tensors, out_data, _Mode.default_float
            )
        needs = tuple(map(_requires_grad, tensors))
        if count <= 4:
            needs = _NEEDS.setdefault(needs, needs)
    except EngineError:
        raise
    except (TypeError, ValueError, IndexError) as exc:
        raise _refusal(prim, tensors, exc) from None
    return _output(prim, tensors, params, needs, out_data, forward)


def _output(
    prim: Op,
    tensors: tuple[Tensor, ...],
    params: dict[str, Any],
    needs: tuple[bool, ...],
    out_data: Array,
    forward: Callable[..., Any],
) -> Tensor:
    """The tensor of an operation's result, with the graph's node on it where an operand
    requires grad (and graphs are recorded); a tracer or forward mode is told of it.
    ``apply_one`` and ``apply_two`` do the same inline (a call less per operation)."""
    out = _new_tensor(Tensor)
    out.data = out_data
    out.dtype = out_data.dtype
    out._grad = None
    out._retains_grad = False
    out.tangent = None
    if True in needs and _Mode.grad_enabled and prim.differentiable:  # the node, on the output
        out.requires_grad = True
        out._op = prim
        out._first = tensors  # (of other than one or two: apply_one and apply_two take those)
        out._second = SEVERAL
        out._params = params
        out._needs = needs
        out._order = next(_ORDER)
    else:
        out.requires_grad = False
        out._op = None
    if _Mode.watching:  # a tracer, or forward mode
        _watched(prim, tensors, params, out, forward)
    return out


# The parameters of an operation given none (the default of apply_one and apply_two): shared,
# never written
_NO_PARAMS: dict[str, Any] = {}


def apply_one(prim: Op, a: Any, params: dict[str, Any] = _NO_PARAMS) -> Tensor:
    """``apply(prim, a, **params)``: what ``apply`` does, for one operand (``sin(x)``, most
    of the reverse rules' factors), called without the tuple and dict of apply's ``*args``
    and ``**params``; written out beside ``apply_two`` for the same reason."""
    if type(a) is not Tensor:
        (a,) = _coerce((a,))
    forward = prim.forward
    assert forward is not None, f"{prim.name} is not a primitive"
    x = a.data
    x_dtype = a.dtype
    try:
        if x_dtype is not DEFAULT_DTYPE and not prim.complex and x_dtype.kind == "c":
            raise DtypeError(_complex_refusal(prim, x_dtype))
        # the size of the value, checked before it is allocated (sizes.check, inline)
        rule = prim.size
        count = x.size if rule is None else rule(x, **params)
        if count > ROOM[0]:
            sizes.refuse_over(prim.name, count, (x,))
        if (count >= LARGE or (rule is not None and x.size >= LARGE)) and a._op is not None:
            let_go(a)  # what no rule reads under the operand goes before the value comes
        fast = prim.forward_float64  # float64's ufunc (rounded_once's itself: a frame less)
        if fast is not None and x_dtype is DEFAULT_DTYPE and not params:
            out_data = fast(x)
            read = False  # (float64 for certain: its dtype is not read)
        else:
            out_data = forward(x, **params) if params else forward(x)
            read = True
        if type(out_data) is not _ndarray:
            out_data = np.asarray(out_data)
        dtype = out_data.dtype if read else x_dtype
        # else numpy's dtype is torch's; a dtype given (x.to(torch.float32)) is the result's
        if x_dtype is not dtype and "dtype" not in params:
            forward, out_data = torch_dtype(
                forward, (x,), params, (a,), out_data, _Mode.default_float
            )
            dtype = out_data.dtype
    except EngineError:
        raise
    except (TypeError, ValueError, IndexError) as exc:
        raise _refusal(prim, (a,), exc) from None
    out = _new_tensor(Tensor)  # _output(...), inline
    out.data = out_data
    out.dtype = dtype
    out._grad = None
    out._retains_grad = False
    out.tangent = None
    if a.requires_grad and _Mode.grad_enabled and prim.differentiable:
        out.requires_grad = True
        out._op = prim
        out._first = a
        out._second = None
        out._params = params
        out._needs = _NEEDS_ONE
        out._order = next(_ORDER)
    else:
        out.requires_grad = False
        out._op = None
    if _Mode.watching:  # a tracer, or forward mode
        _watched(prim, (a,), params, out, forward)
    return out


def apply_two(a: Any, b: Any, prim: Op, params: dict[str, Any] = _NO_PARAMS) -> Tensor:
    """``apply(prim, a, b, **params)``: what ``apply`` does, for two operands (``a * b``, the
    reverse rules' products; first: an operator's special method is this code with ``prim`` its
    default, ``primitives._direct``), called without apply's ``*args`` and ``**params`` (about
    1 k instructions of ~10 k): written out beside apply, not shared with it through a call."""
    number = False  # whether b is a number's 0-d float64 constant beside a float64 tensor a
    if type(b) is not Tensor:
        if type(a) is Tensor and a.dtype is DEFAULT_DTYPE and (type(b) is float or type(b) is int):
            # x * 1.01: the number's constant by one dict read (_coerce's first case, inline;
            # a zero, whose sign the dict cannot tell, is never a key: _coerce takes it)
            constant = _DEFAULT_NUMBERS.get(b)
            if constant is None:
                a, b = _coerce((a, b))
            else:
                b = constant
            number = True
        else:
            a, b = _coerce((a, b))
    elif type(a) is not Tensor:
        a, b = _coerce((a, b))
    forward = prim.forward
    assert forward is not None, f"{prim.name} is not a primitive"
    x = a.data
    y = b.data
    x_dtype = a.dtype
    y_dtype = b.dtype
    try:
        # (a number's constant beside a float64 tensor: both float64, and its one element)
        float64 = number or (x_dtype is DEFAULT_DTYPE and y_dtype is DEFAULT_DTYPE)
        if not float64 and not prim.complex:
            _refuse_complex(prim, (a, b))
        # the size of the value, checked before it is allocated (sizes.check, inline): an
        # element-wise result is at most the product of its operands' sizes
        rule = prim.size
        if rule is not None:
            count = rule(x, y, **params)
            if count > ROOM[0]:
                sizes.refuse_over(prim.name, count, (x, y))
            if count >= LARGE or x.size >= LARGE or y.size >= LARGE:
                let_go_two(a, b)
        else:
            count = x.size if number else x.size * y.size
            if count > ROOM[0]:
                sizes.refuse_over(prim.name, sizes.broadcast_count((x, y)), (x, y))
            if count >= LARGE:
                let_go_two(a, b)
        out_data = forward(x, y, **params) if params else forward(x, y)
        if type(out_data) is not _ndarray:
            out_data = np.asarray(out_data)
        if float64 and not params and prim.forward_float64 is not None:
            dtype = DEFAULT_DTYPE  # (a ufunc's float64 for certain: not read)
        elif x_dtype is not (dtype := out_data.dtype) or y_dtype is not dtype:  # else torch's
            forward, out_data = torch_dtype(
                forward, (x, y), params, (a, b), out_data, _Mode.default_float
            )
            dtype = out_data.dtype
    except EngineError:
        raise
    except (TypeError, ValueError, IndexError) as exc:
        raise _refusal(prim, (a, b), exc) from None
    out = _new_tensor(Tensor)  # _output(...), inline
    out.data = out_data
    out.dtype = dtype
    out._grad = None
    out._retains_grad = False
    out.tangent = None
    if (a.requires_grad or b.requires_grad) and _Mode.grad_enabled and prim.differentiable:
        out.requires_grad = True
        out._op = prim
        out._first = a
        out._second = b
        out._params = params
        # one tuple per pattern: fewer objects for the collector; an element-wise result of a
        # number has a's shape, which the reverse pass then need not test (_NEEDS_A_NUMBER)
        if number and rule is None:
            out._needs = _NEEDS_A_NUMBER
        else:
            out._needs = _NEEDS_TWO[a.requires_grad][b.requires_grad]
        out._order = next(_ORDER)
    else:
        out.requires_grad = False
        out._op = None
    if _Mode.watching:  # a tracer, or forward mode
        _watched(prim, (a, b), params, out, forward)
    return out


def _watched(
    prim: Op,
    tensors: Sequence[Tensor],
    params: dict[str, Any],
    out: Tensor,
    forward: Callable[..., Any],
) -> None:
    """What ``apply`` does beyond the operation while a program is traced (the step is
    recorded), forward mode runs (the output's tangent is computed) or a run meters its
    values (the meter is told of the output: ``meter.py``)."""
    meter = METER[0]
    if meter is not None:
        meter(out)
    # the slots behind the properties tracer and forward_active (for each value a run meters)
    tracer = _Mode._tracer
    if tracer is not None:
        tracer.record(prim, tensors, params, out, forward)
    if SAVED_HOOKS and out._op is not None:  # saved_tensors_hooks: pack what the node saves
        graph_hooks.pack(out)
    if _Mode._forward_active and prim.differentiable:
        tangents = list(map(_tangent, tensors))  # no comprehension's, generator's frames
        for tangent in tangents:
            if tangent is not None:
                out.tangent = tangent_of(prim, tensors, params, out.data, tangents)
                if _Mode.tangent_holders is not None:
                    _Mode.tangent_holders.append(weakref.ref(out))
                break


def tangent_of(
    prim: Op,
    tensors: Sequence[Tensor],
    params: dict[str, Any],
    out_data: Array,
    tangents: Sequence[Tensor | None],
) -> Tensor:
    """The tangent of ``out_data``, ``prim``'s value at ``tensors``, along their ``tangents``
    (None: no tangent), by its forward rule, as forward mode computes it (and watches it for
    a nan or inf the rule made)."""
    assert prim.jvp is not None, f"{prim.name} has no forward rule"
    # _forward_mode(False) without a generator's frames, and without the property's
    # ``rewatch`` twice a tangent: ``watching`` set as it would set it, and put back as it was
    # (the rule leaves the tracer, the hooks and the meter as it found them)
    previous, watching = _Mode._forward_active, _Mode.watching
    if previous:
        _Mode._forward_active = False
        _Mode.watching = _Mode._tracer is not None or bool(SAVED_HOOKS) or METER[0] is not None
    try:
        tangent = prim.jvp(tangents, _wrap(out_data), *tensors, **params)
        if tangent.data.shape != out_data.shape:  # (the data's: no property's call)
            tangent = tangent.expand(out_data.shape)
    finally:
        _Mode._forward_active = previous
        _Mode.watching = watching
    if _Mode.nonfinite_watch is not None:
        watch_tangent(prim, tensors, tangents, tangent)
    return tangent  # type: ignore[no-any-return] # a forward rule's result is a tensor


def _coerce(args: Sequence[Any]) -> tuple[Tensor, ...]:
    """Turn numbers into tensors of the floating dtype of the tensor operands; a whole number
    (a Python int) beside integer or boolean tensors only is an int64, as in torch."""
    if len(args) == 2:  # the usual case, a number beside a floating tensor, without the loops
        a, b = args
        if type(a) is Tensor and (type(b) is float or type(b) is int):
            if a.dtype is DEFAULT_DTYPE and b:  # (x * 1.01) one dict read, keyed by the number
                constant = _DEFAULT_NUMBERS.get(b)
                return a, _default_number(b) if constant is None else constant
            if a.dtype.kind == "f":
                return a, _scalar(b, a.dtype)
        if type(b) is Tensor and (type(a) is float or type(a) is int):
            if b.dtype is DEFAULT_DTYPE and a:
                constant = _DEFAULT_NUMBERS.get(a)
                return _default_number(a) if constant is None else constant, b
            if b.dtype.kind == "f":
                return _scalar(a, b.dtype), b
    dtype = None
    integral: list[np.dtype[Any]] = []
    for a in args:
        if isinstance(a, Tensor):
            found = a.dtype
            if found.kind in "fc":
                dtype = found if dtype is None else np.promote_types(dtype, found)
            elif found.kind in "iu":
                integral.append(found)
            else:  # a boolean tensor and a whole number: int64
                integral.append(np.dtype(np.int64))
    whole = functools.reduce(np.promote_types, integral) if integral and dtype is None else None
    coerced = []
    for a in args:
        if isinstance(a, Tensor):
            coerced.append(a)
        elif isinstance(a, int) and not isinstance(a, bool):
            coerced.append(_scalar(a, whole or dtype or _Mode.default_float))
        elif isinstance(a, bool) and dtype is None:  # True beside integers is of their dtype
            coerced.append(_scalar(a, truth_dtype([t for t in args if isinstance(t, Tensor)])))
        elif isinstance(a, (int, float)):
            coerced.append(_scalar(a, dtype or _Mode.default_float))
        elif isinstance(a, complex):  # 1j beside float32 is complex64, as in torch
            coerced.append(_scalar(a, complex_of(dtype or _Mode.default_float)))
        else:
            coerced.append(as_tensor(a, dtype))
    return tuple(coerced)


_SCALARS: dict[tuple[Any, ...], Tensor] = {}


def _scalar(value: complex, dtype: np.dtype[Any]) -> Tensor:
    """A constant 0-d tensor; those of recent numbers are reused (nothing writes to them: their
    arrays are read-only, and a tensor that does not require grad is never given a gradient
    or a tangent)."""
    # -0.0 == 0.0 (same hash), but 1 / -0.0 is -inf, so a zero's sign is part of the key
    key = (type(value), value, dtype) if value else (type(value), value, dtype, str(value))
    constant = _SCALARS.get(key)
    if constant is None:
        if len(_SCALARS) > 4096:
            _SCALARS.clear()
        array = number_array(value, dtype)
        array.flags.writeable = False
        constant = _SCALARS[key] = _wrap(array)
    return constant


# The constants of nonzero numbers (int or float) beside a tensor of the default dtype, keyed
# by the number alone: an int and a float of one value give the same float64 constant
_DEFAULT_NUMBERS: dict[float, Tensor] = {}


def _default_number(value: float) -> Tensor:
    if len(_DEFAULT_NUMBERS) > 4096:
        _DEFAULT_NUMBERS.clear()
    constant = _DEFAULT_NUMBERS[value] = _scalar(value, DEFAULT_DTYPE)
    return constant


# -- the reverse pass -------------------------------------------------------------------------


def _initial_gradient(output: Tensor, gradient: Any, i: int = 0) -> Tensor:
    if gradient is None:
        if output.data.size != 1:
            raise ScalarOutputError("grad can be implicitly created only for scalar outputs")
        if output.dtype.kind == "c":
            raise ComplexOutputError(
                "grad can be implicitly created only for real scalar outputs but got "
                f"torch.{output.dtype}"
            )
        return _wrap(np.ones(output.shape, dtype=output.dtype))
    given = as_tensor(gradient, output.dtype)
    if given.shape != output.shape:
        raise SeedShapeError(
            f"Mismatch in shape: grad_output[{i}] has a shape of {size_repr(given.shape)} and "
            f"output[{i}] has a shape of {size_repr(output.shape)}."
        )
    return given


def _run_backward(
    outputs: Sequence[Tensor],
    gradients: Sequence[Any] | None,
    retain_graph: bool,
    create_graph: bool,
    capture: Sequence[Tensor] | None,
) -> dict[int, Tensor]:
    """The shared reverse pass of ``backward`` and ``grad``.

    With ``capture`` None, leaf gradients are accumulated into ``.grad``; otherwise nothing is
    written and the cotangents of the captured tensors are returned, keyed by ``id``.

    Nodes run newest first (by ``Node.order``, as torch's engine runs them by sequence
    number): a node is made after every node of its inputs, so by the time it is taken from
    the heap, every consumer has sent it its cotangent. Only the nodes that receive a
    cotangent are visited, and no separate topological sort is needed. This loop runs once
    per node of every backward pass, so the sending of cotangents, the node's output and its
    release are written inline.

    A node whose entry has a rule on float64 arrays (``Op.vjp_arrays``) runs it where no
    graph is built and nothing watches (no hooks, tracer, forward mode, meter or nonfinite
    watch): its cotangents travel as bare arrays (numpy scalars for 0-d values), made tensors
    only where a tensor rule, a hook, a leaf or ``grad`` receives them.
    """
    if gradients is None:
        gradients = [None] * len(outputs)
    if len(gradients) != len(outputs):
        raise ShapeError(f"got {len(gradients)} gradients for {len(outputs)} outputs")
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise GradError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    seeds = [_initial_gradient(o, g, i) for i, (o, g) in enumerate(zip(outputs, gradients))]

    # A node is the tensor it made (which holds it, see Tensor): node -> the cotangent of its
    # output, summed so far; (-order, node) of each in a heap. Tensors hash by identity.
    cotangents: dict[Tensor, Any] = {}
    heap: list[tuple[int, Tensor]] = []
    leaf_cotangents: dict[int, tuple[Tensor, Tensor]] = {}  # id(leaf) -> (leaf, cotangent)

    captured_nodes = {t for t in capture or () if t._op is not None}
    found: dict[int, Tensor] = {}
    watch = _Mode.nonfinite_watch
    # whether rules run plainly (on arrays where they have one): no graph built, no nonfinite
    # watch, no capture (what a node's hooks, the watching modes or a retained gradient add)
    plain_pass = not create_graph and watch is None and not captured_nodes
    # and no hooks nor watching modes: tested again after a rule on tensors (which may run code
    # that sets them), not at each node
    quiet = plain_pass and not (HOOKED or PACKED or _Mode.watching)

    # Each round sends the cotangents of one node's inputs, then runs the next node. The first
    # round sends the seeds to the outputs. A node that is the only one waiting (the heap is
    # empty and the round sends to no other: a chain) is run next without the heap. A
    # cotangent is a Tensor, or an array a rule on arrays made.
    # the inputs of the node that ran last: its slots (``inputs_of``), and their sequence,
    # made where the loop below sends to them (a chain's round reads the slots)
    first: Any = None
    second: Any = None
    inputs: Sequence[Tensor] | None = outputs
    needs: Sequence[bool] = [True] * len(outputs)
    input_cotangents: Sequence[Any] = seeds
    real = False  # whether they are float64 for certain (a rule on arrays made them)
    with set_grad_enabled(create_graph):
        while True:
            # the one node waiting, kept off the heap and out of the dict, with its cotangent
            only: Tensor | None = None
            only_cotangent: Any = None  # its cotangent, set while only is set
            if real and not cotangents:
                # A chain's round, hand-inlined (the pass's most frequent, 80 bytecodes less): a
                # rule on float64 arrays made the one cotangent wanted (needs, apply's tuples),
                # and no other node waits. Where it is a node's, not released, that node runs
                # next; else the loop below sends it (a leaf, None, a released node).
                if needs is _NEEDS_ONE or needs is _NEEDS_A_NUMBER or needs is _NEEDS_FIRST:
                    only, only_cotangent = first, input_cotangents[0]
                elif needs is _NEEDS_SECOND:
                    only, only_cotangent = second, input_cotangents[1]
                if only is not None and (
                    only_cotangent is None or only._op is None or only._first is None
                ):
                    only = only_cotangent = None
            if only is None:  # the loop sends each cotangent
                if inputs is None:
                    if second is None:
                        inputs = (first,)
                    else:
                        inputs = first if second is SEVERAL else (first, second)
                # (an index, not zip: a zip and its tuples cost more than the loop on one or two)
                last = len(inputs) - 1
                if len(input_cotangents) <= last:  # as zip, to the shorter
                    last = len(input_cotangents) - 1
                i = -1
                while i < last:
                    i += 1
                    if not needs[i]:
                        continue
                    tensor = inputs[i]
                    input_cotangent = input_cotangents[i]
                    if input_cotangent is None:
                        if tensor._op is not None:  # no cotangent for it: was it released?
                            refuse_released(tensor)
                        continue
                    if not real and input_cotangent.dtype is not tensor.dtype:
                        input_cotangent = in_dtype_of(tensor.dtype, input_cotangent)
                    if tensor._op is None:  # a leaf
                        key = id(tensor)
                        if key in leaf_cotangents:
                            input_cotangent = _sum(leaf_cotangents[key][1], input_cotangent)
                        elif not isinstance(input_cotangent, Tensor):  # an array
                            input_cotangent = _wrap(input_cotangent)
                        leaf_cotangents[key] = (tensor, input_cotangent)
                    elif only is None and not cotangents:  # no other node waits (nor the heap)
                        if tensor._first is None:
                            raise GradError(_FREED_GRAPH_ERROR)
                        only = tensor
                        only_cotangent = input_cotangent
                    elif tensor is only:  # sent twice in one round (x + x)
                        only_cotangent = _sum(only_cotangent, input_cotangent)
                    elif tensor in cotangents:
                        cotangents[tensor] = _sum(cotangents[tensor], input_cotangent)
                    elif tensor._first is None:
                        raise GradError(_FREED_GRAPH_ERROR)
                    else:
                        if only is not None:
                            cotangents[only] = only_cotangent
                            heappush(heap, (-only._order, only))
                            only = only_cotangent = None
                        cotangents[tensor] = input_cotangent
                        heappush(heap, (-tensor._order, tensor))
            if only is not None:
                node = only
                cotangent = only_cotangent
            elif heap:
                node = heappop(heap)[1]
                cotangent = cotangents.pop(node)
            else:
                break

            # a node (not a leaf: only nodes are sent here), not released (refused when sent a
            # cotangent)
            prim: Op = node._op  # type: ignore[assignment]
            first = node._first  # (of one input or two: the entries with rules on arrays)
            second = node._second
            inputs = None
            needs = node._needs
            fast: Callable[..., Any] = prim.vjp_arrays  # type: ignore[assignment]
            # plain: no graph is built, and no hook, watch, capture or retained gradient reads
            # the node: its rule is all that runs
            plain = quiet and not node._retains_grad
            # the rule on arrays runs where the cotangent and every operand are float64 and the
            # cotangent (the largest value the rule makes) fits the room vjp's operations check
            ready = False
            if plain and fast is not None:
                if type(cotangent) is _ndarray or not isinstance(cotangent, Tensor):  # (cheaper)
                    g: Array = cotangent  # made by a rule on float64 arrays: float64
                else:
                    g = cotangent.data
                size = g.size
                if (g is cotangent or g.dtype is DEFAULT_DTYPE) and size <= ROOM[0]:
                    if second is None or needs is _NEEDS_A_NUMBER:  # (its result has a's shape)
                        ready = first.dtype is DEFAULT_DTYPE
                    else:  # (the entries with rules on arrays take one operand or two)
                        ready = (
                            first.dtype is DEFAULT_DTYPE
                            and second.dtype is DEFAULT_DTYPE
                            and size != 0
                        )
                        # an operand whose cotangent is needed and has not g's shape (of g's
                        # ndim and size, it has g's shape, the broadcast of theirs) takes the
                        # rule for any shape, where there is one (a bias's sum, a product's)
                        ndim = g.ndim
                        x, y = first.data, second.data
                        if ready and not (
                            (not needs[0] or (x.size == size and x.ndim == ndim))
                            and (not needs[1] or (y.size == size and y.ndim == ndim))
                        ):
                            fast = prim.vjp_arrays_any_shape  # type: ignore[assignment]
                            ready = fast is not None
            real = ready
            if ready:
                # a rule on arrays; then along a chain, while its one cotangent goes to a node
                # whose rule on arrays takes it the same way (of one operand, or of a tensor and
                # a number) and no other node waits (nor will), that node's, without the sends
                chain = not cotangents and (
                    needs is _NEEDS_ONE or needs is _NEEDS_A_NUMBER or needs is _NEEDS_FIRST
                )
                only = None
                while True:
                    if BUMPED:  # a tensor the rule reads was written in place since: torch's error
                        graph_hooks.check_versions(node)
                    out_data = node.data if prim.vjp_reads_out else None
                    params = node._params  # (log_softmax's dim, a sum's dims: the rule's keywords)
                    if not retain_graph:  # release the saved values (the inputs are sent)
                        if prim.released_plainly:  # (what _release comes down to)
                            node._first = node._second = None
                        elif prim.saved is not False:
                            _release(node, prim)
                    # the pass holds the node no more: where nothing else does, its value goes
                    # before the rule makes the cotangents (torch keeps no output no rule reads)
                    node = None  # type: ignore[assignment]
                    if out_data is not None and prim.vjp_arrays_into is not None:
                        tensor = x = y = None
                        if out_data.size >= REUSED and sole(out_data):
                            fast = prim.vjp_arrays_into  # (the output's tensor is gone)
                    if params:
                        operands = (first,) if second is None else (first, second)
                        on_array = fast(g, out_data, *(t.data for t in operands), needs, **params)
                    elif second is None:
                        on_array = fast(g, out_data, first.data, needs)
                    elif needs is _NEEDS_A_NUMBER and prim.vjp_arrays_passes:
                        on_array = (g, None)  # (what the rule gives: x + 0.1's cotangent is g)
                    else:
                        on_array = fast(g, out_data, first.data, second.data, needs)
                    if on_array is None:  # the rule declines (a broadcast operand): vjp runs
                        vjp: Callable[..., Any] = prim.vjp  # type: ignore[assignment]
                        output = None if out_data is None else _wrap(out_data)
                        operands = (first,) if second is None else (first, second)
                        on_array = vjp(_wrap(g), output, *operands, needs=needs, **params)
                        real = False
                        break
                    if not chain:
                        break
                    node = first  # the next node of the chain, where it is one
                    g = on_array[0]
                    sized = prim.vjp_arrays_sized  # (g no larger than the one checked: not read)
                    prim = node._op
                    if prim is None or g is None or node._retains_grad:
                        break  # (a leaf, no cotangent, a gradient retained)
                    fast = prim.vjp_arrays  # type: ignore[assignment]
                    operand = node._first
                    kind = node._needs  # (_NEEDS_ONE: of one operand, the second None)
                    if (
                        fast is None
                        or operand is None  # (released)
                        or (kind is not _NEEDS_ONE and kind is not _NEEDS_A_NUMBER)
                        or operand.dtype is not DEFAULT_DTYPE
                        or (not sized and g.size > ROOM[0])
                    ):
                        break
                    first = operand
                    second = node._second
                    needs = kind
                node = operand = None  # type: ignore[assignment]
                input_cotangents = on_array
            elif plain and cotangent.dtype is DEFAULT_DTYPE and not node._params:
                # its rule on tensors, called plainly (what _vjp_on_tensors comes down to)
                if BUMPED:
                    graph_hooks.check_versions(node)
                if not isinstance(cotangent, Tensor):  # an array
                    cotangent = _wrap(cotangent)
                vjp = prim.vjp  # type: ignore[assignment]
                output = _wrap(node.data) if prim.vjp_reads_out else None
                if second is None:
                    input_cotangents = vjp(cotangent, output, first, needs=needs)
                elif second is SEVERAL:
                    input_cotangents = vjp(cotangent, output, *first, needs=needs)
                else:
                    input_cotangents = vjp(cotangent, output, first, second, needs=needs)
            else:
                if not isinstance(cotangent, Tensor):  # an array
                    cotangent = _wrap(cotangent)
                input_cotangents = _vjp_on_tensors(
                    node, cotangent, create_graph, capture, captured_nodes, found, watch
                )
            if not ready:
                if not retain_graph and prim.saved is not False:
                    _release(node, prim)
                quiet = plain_pass and not (HOOKED or PACKED or _Mode.watching)

    if capture is None:
        # the last cotangents sent are leaves' too: these names must not hold them, so that
        # _accumulate_leaves can tell which arrays the pass alone holds
        input_cotangent = on_array = None
        input_cotangents = ()
        _accumulate_leaves(leaf_cotangents, create_graph)
    else:
        for leaf, cotangent in leaf_cotangents.values():
            found.setdefault(id(leaf), cotangent)
    return found


def _sum(first: Any, second: Any) -> Tensor:
    """Two cotangents of one tensor summed (as tensors: an array a rule on arrays made is
    wrapped)."""
    if not isinstance(first, Tensor):
        first = _wrap(first)
    if not isinstance(second, Tensor):
        second = _wrap(second)
    total: Tensor = first + second
    return total


def _release(node: Tensor, prim: Op) -> None:
    """Release the values a node saved (``Op.saved``), once its rule has what it reads: a
    second pass that reaches it raises torch's error."""
    saves = prim.saved
    if saves is True or (saves is not False and saves(Node(node))):
        if type(prim.backward_name) is not str:  # a namer may read the inputs
            node._name = Node(node).name()
        node._first = node._second = None


def _vjp_on_tensors(
    node: Tensor,
    cotangent: Tensor,
    create_graph: bool,
    capture: Sequence[Tensor] | None,
    captured_nodes: set[Tensor],
    found: dict[int, Tensor],
    watch: list[Node | NonfiniteTangent] | None,
) -> Sequence[Tensor | None]:
    """A node's input cotangents by its entry's ``vjp``, on tensors: with its hooks, the
    capture of its cotangent, the gradient it retains, the saved-tensor hooks' values, the
    conjugates of a holomorphic entry's complex operands and the nonfinite watch."""
    if HOOKED:  # hooks on nodes (Node.register_prehook, register_hook)
        cotangent = graph_hooks.before(node, cotangent)
    if captured_nodes and node in captured_nodes:
        found[id(node)] = cotangent
    if node._retains_grad and capture is None:
        _accumulate(node, cotangent, create_graph)
    prim = node._op
    assert prim is not None
    vjp = prim.vjp
    assert vjp is not None, f"{prim.name} has no reverse rule"
    inputs = operands = inputs_of(node)
    assert inputs is not None and operands is not None
    needs = node._needs
    # the output for the rule: the tensor itself when building a graph, else a constant
    # around its values, or None for a rule that never reads it
    output: Tensor | None
    if create_graph:
        output = node
    elif prim.vjp_reads_out:
        output = _wrap(node.data)
    else:
        output = None
    if BUMPED:  # a tensor the rule reads was written in place since: torch's error
        graph_hooks.check_versions(node)
    if PACKED:  # saved_tensors_hooks: the rule reads what unpack gives
        operands, output = graph_hooks.unpacked(node, operands, output)
    dtype = cotangent.dtype
    if dtype is not DEFAULT_DTYPE and dtype.kind == "c" and prim.complex == HOLOMORPHIC:
        # torch's convention, g conj(f'(z)): the rule, written as for real numbers, at
        # conj(z), since f(conj z) = conj(f(z)) for every holomorphic entry here
        if output is None:
            operands = tuple(t.conj() for t in inputs)
        else:
            conjugated = tuple(t.conj() for t in [output, *inputs])
            output, operands = conjugated[0], conjugated[1:]
    params = node._params
    input_cotangents: Sequence[Tensor | None]
    if params:
        input_cotangents = vjp(cotangent, output, *operands, needs=needs, **params)
    elif len(operands) == 2:  # most nodes: a plain call (no tuple, no dict made)
        input_cotangents = vjp(cotangent, output, operands[0], operands[1], needs=needs)
    elif len(operands) == 1:
        input_cotangents = vjp(cotangent, output, operands[0], needs=needs)
    else:
        input_cotangents = vjp(cotangent, output, *operands, needs=needs)
    if HOOKED:
        input_cotangents = graph_hooks.after(node, input_cotangents, cotangent)
    if watch is not None:
        watch_rule(watch, node, cotangent, inputs, input_cotangents)
    return input_cotangents


def _accumulate_leaves(
    leaf_cotangents: dict[int, tuple[Tensor, Tensor]], create_graph: bool
) -> None:
    """Accumulate each leaf's cotangent into its ``.grad``: a first gradient is an array of
    its own, the cotangent's where the pass alone holds it (``ownership``), else a copy."""
    for leaf, cotangent in leaf_cotangents.values():
        if leaf._grad is None and not create_graph and _OWNERSHIP.owned(cotangent):
            leaf._grad = _wrap(cotangent.data)
        else:
            _accumulate(leaf, cotangent, create_graph)


_OWNERSHIP = Ownership()  # calibrated at the module's end, once _accumulate is defined


def _accumulate(tensor: Tensor, cotangent: Tensor, create_graph: bool) -> None:
    if not create_graph:
        cotangent = Tensor(cotangent.data)
    if tensor._grad is None:
        # A fresh array: later accumulation must never write into a view of user data.
        tensor._grad = cotangent if cotangent._op is not None else Tensor(np.array(cotangent.data))
    else:
        with set_grad_enabled(create_graph):
            tensor._grad = tensor._grad + cotangent


def backward(
    tensors: Sequence[Tensor],
    grad_tensors: Sequence[Any] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
) -> None:
    """``torch.autograd.backward``: accumulate gradients of ``tensors`` into leaf ``.grad``."""
    if retain_graph is None:
        retain_graph = create_graph
    _run_backward(list(tensors), grad_tensors, retain_graph, create_graph, capture=None)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor | None, ...]:
    """``torch.autograd.grad``: the gradients of ``outputs`` w.r.t. ``inputs``, returned.

    Never touches ``.grad``. ``grad_outputs`` is the vector of the vector-Jacobian product,
    required for non-scalar outputs.
    """
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if isinstance(grad_outputs, Tensor) or (
        grad_outputs is not None and len(outputs) == 1 and not _is_sequence_of_grads(grad_outputs)
    ):
        grad_outputs = [grad_outputs]
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise GradError(f"input {i} of grad() does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    found = _run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=inputs)
    result = []
    for i, t in enumerate(inputs):
        g = found.get(id(t))
        if g is None and not allow_unused:
            raise GradError(
                f"input {i} of grad() was not used in the graph of the outputs; "
                "pass allow_unused=True to get None for it"
            )
        if g is not None and not create_graph:
            g = Tensor(g.data)
        result.append(g)
    return tuple(result)


def _is_sequence_of_grads(value: object) -> bool:
    return isinstance(value, (list, tuple)) and all(
        isinstance(v, Tensor) or v is None for v in value
    )


def _probe_ownership() -> None:
    leaf = Tensor(np.zeros(1), requires_grad=True)
    _accumulate_leaves({id(leaf): (leaf, _wrap(np.zeros(1)))}, False)


_OWNERSHIP.calibrate(_probe_ownership)
graph_hooks.connect(set_grad_enabled, _Mode.rewatch, lambda: next(_ORDER))
