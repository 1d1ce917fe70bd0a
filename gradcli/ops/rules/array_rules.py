"""The reverse rules on float64 arrays (``Op.vjp_arrays``) of the element-wise entries a reverse
pass runs most: each the very numpy calls its entry's ``vjp`` makes through ``apply`` for float64
values, so bit for bit its cotangents, without the tensors, nodes and calls between (relu's, from
``MASKED`` elements, the same bits by a mask of whole bits). The pass uses them where it builds no
graph and no tracer, forward mode or meter watches (``tensor._run_backward``); a binary rule is not
called for a broadcast operand, whose cotangent ``vjp`` sums back.
``tests/ops/rules/test_array_rules.py`` checks each against its ``vjp``. Set here, on the entries
``primitives`` declares, as ``complexes`` sets abs's."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ..elementwise.activations import relu
from ..elementwise.elementary import cos, exp, log, sigmoid, sin, tanh
from ..primitives import _sum_to_forward, divide, mul, neg
from ..table import OPS, Array

Cotangents = tuple[Array | None, Array | None] | None


# A binary rule is called only where each operand whose cotangent is needed has the
# cotangent's shape (the pass checks it: a broadcast operand's cotangent ``vjp`` sums back).


def _mul(g: Array, out: None, a: Array, b: Array, needs: tuple[bool, ...]) -> Cotangents:
    """g * b and g * a: the partials (b, a), each a tensor factor mul's entry applies."""
    return (g * b if needs[0] else None, g * a if needs[1] else None)


def _add(g: Array, out: None, a: Array, b: Array, needs: tuple[bool, ...]) -> Cotangents:
    """g for each operand (partials 1 and 1: the cotangent itself, as ``vjp`` passes it on)."""
    return (g if needs[0] else None, g if needs[1] else None)


def _sub(g: Array, out: None, a: Array, b: Array, needs: tuple[bool, ...]) -> Cotangents:
    """g and -g (partials 1 and -1: neg(g), as ``vjp``'s scaling by -1 makes it)."""
    return (g if needs[0] else None, np.negative(g) if needs[1] else None)


def _summed(g: Array, x: Array) -> Array:
    """g summed back to the shape of the operand x that was broadcast to it (sum_to's forward,
    as ``vjp`` applies it), or g itself where x has its shape."""
    return g if x.shape == g.shape else _sum_to_forward(g, x.shape)


def _add_any_shape(g: Array, out: None, a: Array, b: Array, needs: tuple[bool, ...]) -> Cotangents:
    """add's cotangents where an operand was broadcast (a bias): g summed back to its shape."""
    return (_summed(g, a) if needs[0] else None, _summed(g, b) if needs[1] else None)


def _sub_any_shape(g: Array, out: None, a: Array, b: Array, needs: tuple[bool, ...]) -> Cotangents:
    """sub's: g and -g, each summed back to a broadcast operand's shape."""
    return (_summed(g, a) if needs[0] else None, _summed(np.negative(g), b) if needs[1] else None)


def _div(g: Array, out: Array, a: Array, b: Array, needs: tuple[bool, ...]) -> Cotangents:
    """g * reciprocal(b) and g * neg(div(out, b))."""
    return (g * np.reciprocal(b) if needs[0] else None, g * -(out / b) if needs[1] else None)


# one operand's, g times the derivative as the entry's rule computes it (rounded_once's
# functions are numpy's own for float64); each keyed by its entry's function
_UNARY: dict[Any, Any] = {
    sin: lambda g, out, x, needs: (g * np.cos(x),),
    cos: lambda g, out, x, needs: (g * -np.sin(x),),  # neg(sin(x))
    exp: lambda g, out, x, needs: (g * out,),
    log: lambda g, out, x, needs: (g * np.reciprocal(x),),
    tanh: lambda g, out, x, needs: (g * (1.0 - out * out),),  # sub(1.0, mul(out, out))
    sigmoid: lambda g, out, x, needs: (g * (out * (1.0 - out)),),
    neg: lambda g, out, x, needs: (np.negative(g),),  # (a factor of -1: neg(g))
}


#: Elements from which relu's rule keeps g's bits by a mask of whole bits rather than where
#: (measured: where's branch on each element of a mixed mask costs more from about 4,096; at
#: 64x512, 160 us against 50 us; below, the mask's three calls cost more than where's one)
MASKED = 1 << 12


def _relu(g: Array, out: Array, x: Array, needs: tuple[bool, ...]) -> tuple[Array]:
    """The selection Selected(mask(out > 0)) makes through where: where(out > 0, g, 0.0); from
    ``MASKED`` elements the same bits as g's bits and'ed with a mask of every bit where
    out > 0 and none elsewhere (+0.0), without where's branch on each element."""
    if g.size < MASKED or g.shape != out.shape:
        return (np.where(out > 0, g, 0.0),)
    return (_kept(g, out > 0, np.empty(g.shape, np.int64)),)


_UNARY[relu] = _relu


def _relu_into(g: Array, out: Array, x: Array, needs: tuple[bool, ...]) -> tuple[Array]:
    """relu's rule from ``MASKED`` elements, its mask and result written into ``out`` (which
    the pass alone holds, as hand numpy writes ``g *= z > 0``; two masked copies into it, one
    of g where out > 0 and one of 0.0 elsewhere, took 6 times as long: 23.6 ms against 4.0 ms
    at 4,096 x 512)."""
    return (_kept(g, out > 0, out.view(np.int64)),)


def _kept(g: Array, positive: Array, keep: Array) -> Array:
    """g's bits where ``positive``, +0.0 elsewhere: and'ed with ``keep`` (int64, g's shape),
    which is made -1 (every bit) there and 0 elsewhere."""
    np.copyto(keep, positive)
    np.negative(keep, out=keep)
    return np.bitwise_and(keep, g.view(np.int64), out=keep).view(np.float64)


def _entries_by_call() -> dict[Any, list[Any]]:
    """The op table's entries by their calls (unwrapped): read once, not once a rule."""
    entries: dict[Any, list[Any]] = {}
    for op in OPS.values():
        if op.call is not None:
            entries.setdefault(inspect.unwrap(op.call), []).append(op)
    return entries


def _entry(function: Any, entries: dict[Any, list[Any]]) -> Any:
    """The op table's entry whose call ``function`` is (one only)."""
    (entry,) = entries.get(function, [])
    return entry


_ENTRIES = _entries_by_call()
for _function, _rule in {mul: _mul, divide: _div, **_UNARY}.items():
    _entry(_function, _ENTRIES).vjp_arrays = _rule
    _entry(_function, _ENTRIES).vjp_arrays_sized = True  # (element-wise: g's size, or less)
# add's and sub's calls are their public ones (with alpha), not the entries' functions
OPS["add"].vjp_arrays = _add
OPS["sub"].vjp_arrays = _sub
OPS["add"].vjp_arrays_any_shape = _add_any_shape
OPS["sub"].vjp_arrays_any_shape = _sub_any_shape
for _name in ("add", "sub"):  # (g, None) for (True, False); a broadcast operand's summed
    OPS[_name].vjp_arrays_passes = OPS[_name].vjp_arrays_sized = True
_entry(relu, _ENTRIES).vjp_arrays_into = _relu_into
