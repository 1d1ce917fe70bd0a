"""A result's arrays in the order tables show them (``blocks``), each a ``Block``: what
``table.py`` lays out. Kept out of the package's ``__init__``, which every format imports:
JSON and CSV write a result's fields as they are."""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch
from typing import NamedTuple

import numpy as np

from .. import results as R


class Block(NamedTuple):
    """One array of a result as tables show it: ``kind`` is "array", "jacobian"
    (rows of the output, columns of the input ``name``; the other way round when
    ``transposed``) or "hessian" (``name`` is the pair "a,b")."""

    kind: str
    name: str
    label: str
    array: np.ndarray | None
    transposed: bool = False


@singledispatch
def blocks(result: R.Result) -> list[Block]:
    """Every array of the result, in display order."""
    raise TypeError(f"{type(result).__name__} has no arrays to show")


@blocks.register
def _(result: R.Values) -> list[Block]:
    return [Block("array", name, name, value) for name, value in result.values.items()]


def _value(result: R.Derivatives) -> list[Block]:
    return [Block("array", name, name, value) for name, value in result.output_values.items()]


def _gradients(arrays: dict, label: Callable[[str], str], formulas: dict) -> list[Block]:
    """Gradient-like arrays, then their formulas (``--symbolic``), labelled by ``label``."""
    items = [Block("array", name, label(name), value) for name, value in arrays.items()]
    items += [Block("array", n, f"{label(n)} (symbolic)", f) for n, f in formulas.items()]
    return items


def _grad(name: str) -> str:
    return f"{name}.grad"


@blocks.register
def _(result: R.Grads) -> list[Block]:
    return _value(result) + _gradients({**result.grads, **result.shown}, _grad, result.formulas)


@blocks.register
def _(result: R.Explanation) -> list[Block]:
    return _value(result) + _gradients(result.grads, _grad, {})


@blocks.register
def _(result: R.VJP) -> list[Block]:
    return _value(result) + _gradients(result.grads, lambda n: f"J^T v for {n}", result.formulas)


@blocks.register
def _(result: R.Jacobian) -> list[Block]:
    t = result.transposed

    def label(name: str) -> str:
        return f"d{result.output}/d{name}" + ("^T" if t else "")

    items = [Block("jacobian", n, label(n), j, t) for n, j in result.jacobians.items()]
    items += [
        Block("jacobian", n, f"{label(n)} (symbolic)", f, t) for n, f in result.formulas.items()
    ]
    return _value(result) + items


@blocks.register
def _(result: R.JVP) -> list[Block]:
    return _value(result) + [
        Block("array", result.output, f"J t for {result.output}", result.tangent)
    ]


@blocks.register
def _(result: R.Hessian) -> list[Block]:
    return _value(result) + [
        Block("hessian", f"{a},{b}", f"d2{result.output}/d{a}d{b}", value)
        for (a, b), value in result.blocks.items()
    ]


@blocks.register
def _(result: R.HVP) -> list[Block]:
    return _value(result) + [
        Block("array", name, f"H v for {name}", value) for name, value in result.products.items()
    ]


@blocks.register
def _(result: R.Check) -> list[Block]:
    return _value(result) + [
        Block("jacobian", name, f"d{result.output}/d{name} by {method}", value)
        for method, jacobians in result.jacobians.items()
        for name, value in jacobians.items()
    ]


@blocks.register
def _(result: R.Several) -> list[Block]:
    """Each output's blocks in turn; a label that two outputs share (hvp's ``H v for x``)
    names its output, ``H v for x (of y)``."""
    parts = [(part.output, blocks(part)) for part in result.parts]
    labels = [block.label for _, found in parts for block in found]
    shared = {label for label in labels if labels.count(label) > 1}
    return [
        block._replace(label=f"{block.label} (of {output})") if block.label in shared else block
        for output, found in parts
        for block in found
    ]
