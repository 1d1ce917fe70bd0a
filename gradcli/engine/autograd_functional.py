"""``torch.autograd.functional`` as torch has it: vjp, jvp, jacobian, hessian, vhp, hvp, with
tuples of inputs and outputs, ``v``, ``create_graph``, ``strict`` and ``vectorize``, torch's
result structure (tuples of tuples for several outputs and inputs) and torch's errors.

``functional.py`` is the engine's own numeric API, which the commands call: one tensor out,
the point as arrays, forward mode and batched replays for speed, a function called once per
basis vector where that is faster. This module is torch's contract for code written against
torch (``gradcli run``'s scripts, the library's ``gradcli.autograd.functional``): the
function is called exactly once, as torch calls it, so a script function that prints prints
once. ``vectorize`` is accepted and gives the same numbers (the rows are computed one by one).
Forward-mode Jacobians (and ``jvp``, as torch's own) use the double-backward trick: the
Jacobian-vector product is the gradient, with respect to a cotangent ``u``, of ``J^T u``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base.engine_errors import AssertedError, GradError, UnsupportedError, ValueKindError
from ..base.torch_text import size_repr
from .basis_passes import each_basis
from .borrowed import stack
from .levels import Level, autograd_grad, dummies, zeros_like
from .meter import foresee, zeros
from .tensor import Tensor, set_grad_enabled

Function = Callable[..., Any]


def _as_tuple(value: Any, what: str, function: str) -> tuple[bool, tuple[Tensor, ...]]:
    """Whether ``value`` is a tuple, and it as one; torch's TypeError for anything but a
    tensor or a tuple of tensors."""
    many = isinstance(value, tuple)
    values = value if many else (value,)
    for i, element in enumerate(values):
        if not isinstance(element, Tensor):
            where = f"the value at index {i}" if many else f"the given {what}"
            raise ValueKindError(
                f"The {what} given to {function} must be either a Tensor or a tuple of Tensors "
                f"but {where} has type {type(element)}."
            )
    return many, values


def _unpacked(result: Any, many: bool) -> Any:
    """The tuple, or its one element where the caller gave (or got) no tuple."""
    return result if many else result[0]


def _unpacked_blocks(blocks: Any, outs: bool, ins: bool) -> Any:
    """torch's shape of a Jacobian: a tuple (per output) of tuples (per input), each level
    unpacked where there was no tuple."""
    rows = blocks if ins else tuple(row[0] for row in blocks)
    return _unpacked(rows, outs)


def _prepared(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """The inputs the function is called with: connected to the caller's (an alias) where a
    graph is to be built through them, else fresh leaves of the same values."""
    with set_grad_enabled(True):
        return tuple(
            x[...] if create_graph and x.requires_grad else Tensor(x.data, requires_grad=True)
            for x in inputs
        )


def _vector(v: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    return tuple(t if create_graph and t.requires_grad else t.detach() for t in v)


def _finished(values: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    """The results detached from their graph unless one was asked for (nested tuples too)."""
    if create_graph:
        return values
    return tuple(
        v.detach() if isinstance(v, Tensor) else _finished(v, create_graph) for v in values
    )


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], many: bool) -> None:
    if len(v) != len(other):
        if many:
            raise GradError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise GradError("The given v should contain a single Tensor.")
    for i, (given, like) in enumerate(zip(v, other)):
        if given.shape != like.shape:
            prefix = f"Entry {i} in " if many else ""
            raise GradError(
                f"{prefix}v has invalid size: should be {size_repr(like.shape)} but got "
                f"{size_repr(given.shape)}."
            )


def _given_v(
    v: Any, like: tuple[Tensor, ...], like_many: bool, function: str, create_graph: bool, whose: str
) -> tuple[Tensor, ...] | None:
    """``v`` as a tuple checked against ``like`` (the outputs or the inputs), or None where
    it may be left out (a single element); torch's error where it may not."""
    if v is not None:
        _, vs = _as_tuple(v, "v", function)
        vs = _vector(vs, create_graph)
        _validate_v(vs, like, like_many)
        return vs
    if len(like) != 1 or like[0].numel() != 1:
        raise GradError(
            "The vector v can only be None if the "
            + (
                "user-provided function returns a single Tensor with a single element."
                if whose == "output"
                else "input to the user-provided function is a single Tensor with a single element."
            )
        )
    return None


_CHECKS = {
    "outputs": (
        "Output {i} of the user-provided function does not require gradients. The outputs must "
        "be computed in a differentiable manner from the input when running in strict mode."
    ),
    "grad_inputs": (
        "The gradient with respect to input {i} is independent of the inputs of the "
        "user-provided function. This is not allowed in strict mode."
    ),
    "jacobian": (
        "While computing the hessian, found that the jacobian of the user-provided function "
        "with respect to input {i} is independent of the input. This is not allowed in strict "
        "mode. You should ensure that your function is twice differentiable and that the "
        "jacobian depends on the inputs (this would be violated by a linear function for "
        "example)."
    ),
    "hessian": (
        "The hessian of the user-provided function with respect to input {i} is independent "
        "of the input. This is not allowed in strict mode. You should ensure that your "
        "function is thrice differentiable and that the hessian depends on the inputs."
    ),
}


def _check_requires_grad(values: Sequence[Tensor | None], kind: str, strict: bool) -> None:
    """In strict mode, torch's error for a value that is None or does not require grad."""
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise GradError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if not value.requires_grad:
            raise GradError(_CHECKS[kind].format(i=i))


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(
    found: Sequence[Tensor | None],
    like: Sequence[Tensor],
    strict: bool,
    create_graph: bool,
    stage: str,
) -> tuple[Tensor, ...]:
    """Zeros for the results that are None, or torch's strict-mode errors."""
    result = []
    for i, (value, ref) in enumerate(zip(found, like)):
        if value is None:
            if strict:
                raise GradError(_INDEPENDENT[stage].format(i=i))
            value = zeros_like(ref)
        elif strict and create_graph and not value.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise GradError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        result.append(value)
    return tuple(result)


def _outputs(
    func: Function, xs: tuple[Tensor, ...], function: str
) -> tuple[bool, tuple[Tensor, ...]]:
    with set_grad_enabled(True):
        out = func(*xs)
    return _as_tuple(out, "outputs of the user-provided function", function)


def vjp(
    func: Function, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``torch.autograd.functional.vjp``: (func(inputs), v^T J), each a tensor or a tuple as
    the outputs and the inputs are."""
    ins_many, xs = _as_tuple(inputs, "inputs", "vjp")
    xs = _prepared(xs, create_graph)
    outs_many, outs = _outputs(func, xs, "vjp")
    _check_requires_grad(outs, "outputs", strict)
    vs = _given_v(v, outs, outs_many, "vjp", create_graph, "output")
    found = autograd_grad(outs, xs, vs, create_graph=create_graph)
    products = _fill_in_zeros(found, xs, strict, create_graph, "back")
    return (
        _unpacked(_finished(outs, create_graph), outs_many),
        _unpacked(_finished(products, create_graph), ins_many),
    )


def jvp(
    func: Function, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``torch.autograd.functional.jvp``: (func(inputs), J v), by the double-backward trick
    as torch's."""
    ins_many, xs = _as_tuple(inputs, "inputs", "jvp")
    xs = _prepared(xs, create_graph)
    vs = _given_v(v, xs, ins_many, "jvp", create_graph, "input")
    outs_many, outs = _outputs(func, xs, "jvp")
    _check_requires_grad(outs, "outputs", strict)
    us = dummies(outs)
    pulled = autograd_grad(outs, xs, us, create_graph=True)
    _check_requires_grad(pulled, "grad_inputs", strict)
    found = autograd_grad(pulled, us, vs, create_graph=create_graph)
    products = _fill_in_zeros(found, outs, strict, create_graph, "back_trick")
    return (
        _unpacked(_finished(outs, create_graph), outs_many),
        _unpacked(_finished(products, create_graph), outs_many),
    )


def _rows(
    outs: tuple[Tensor, ...],
    xs: tuple[Tensor, ...],
    create_graph: bool,
    strict: bool,
    together: bool = False,
) -> tuple[tuple[Tensor, ...], ...]:
    """The Jacobian's blocks (per output, per input), a backward pass per output element.
    ``together`` joins the rows of each input as torch's vectorized pass does (one tensor of
    every output's rows, split), so that an input's blocks require grad alike."""
    foresee("the Jacobian", _elements(outs) * _elements(xs))
    rows: list[list[list[Tensor]]] = [[[] for _ in xs] for _ in outs]
    for i, out in enumerate(outs):

        def row(e: Tensor, out: Tensor = out) -> tuple[Tensor | None, ...]:
            # the cotangent e_k: what seeding the output's element k sends back to the output
            return autograd_grad((out,), xs, (e,), create_graph, retain_graph=True)

        passes = each_basis(row, out.shape, out.dtype, (out,), not create_graph)
        for found in passes:
            for j, (value, x) in enumerate(zip(found, xs)):
                if value is None:
                    if strict:
                        raise GradError(
                            f"Output {i} of the user-provided function is independent of input "
                            f"{j}. This is not allowed in strict mode."
                        )
                    value = zeros_like(x)
                elif strict and create_graph and not value.requires_grad:
                    raise GradError(
                        "The jacobian of the user-provided function is independent of input "
                        f"{i}. This is not allowed in strict mode when create_graph=True."
                    )
                rows[i][j].append(value)
    if not together:
        return tuple(
            tuple(_joined(rows[i][j], 0, out.shape, x) for j, x in enumerate(xs))
            for i, out in enumerate(outs)
        )
    sizes = [out.numel() for out in outs]
    per_input = []
    for j, x in enumerate(xs):
        whole = _joined([r for i in range(len(outs)) for r in rows[i][j]], 0, (sum(sizes),), x)
        starts = np.cumsum([0, *sizes])
        per_input.append(
            [
                whole[starts[i] : starts[i + 1]].reshape(out.shape + x.shape)
                for i, out in enumerate(outs)
            ]
        )
    return tuple(tuple(per_input[j][i] for j in range(len(xs))) for i in range(len(outs)))


def _elements(values: Sequence[Tensor]) -> int:
    return sum(v.numel() for v in values)


def _joined(parts: list[Tensor], dim: int, out_shape: tuple[int, ...], x: Tensor) -> Tensor:
    """Rows (``dim`` 0) or columns (``dim`` -1) of one Jacobian block, stacked and shaped
    ``out_shape + x.shape``; zeros where there are none."""
    if not parts:
        return zeros(out_shape + x.shape, x.dtype, "a Jacobian")
    return stack(parts, dim=dim).reshape(out_shape + x.shape)


def _columns(
    outs: tuple[Tensor, ...],
    xs: tuple[Tensor, ...],
    create_graph: bool,
    us: tuple[Tensor, ...] | None = None,
) -> tuple[tuple[Tensor, ...], ...]:
    """The Jacobian's blocks (per output, per input), a Jacobian-vector product per input
    element, by the double-backward trick: ``J^T u`` once, then its gradient in ``u`` (the
    cotangents ``us``, zeros that require grad: new ones if not given)."""
    foresee("the Jacobian", _elements(outs) * _elements(xs))
    us = dummies(outs) if us is None else us
    pulled = autograd_grad(outs, xs, us, create_graph=True)
    columns: list[list[list[Tensor]]] = [[[] for _ in xs] for _ in outs]
    for j, (x, through) in enumerate(zip(xs, pulled)):

        def column(e: Tensor, through: Tensor | None = through) -> tuple[Tensor | None, ...]:
            return autograd_grad((through,), us, (e,), create_graph, retain_graph=True)

        passes = each_basis(column, x.shape, x.dtype, (through,), not create_graph)
        for found in passes:
            for i, (value, out) in enumerate(zip(found, outs)):
                columns[i][j].append(zeros_like(out) if value is None else value)
    return tuple(
        tuple(_joined(columns[i][j], -1, out.shape, x) for j, x in enumerate(xs))
        for i, out in enumerate(outs)
    )


def jacobian(
    func: Function,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """``torch.autograd.functional.jacobian``: the block ``output.shape + input.shape`` of each
    output and input; a tensor, a tuple, or a tuple (per output) of tuples (per input) (lists
    for strategy "forward-mode", as torch's)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertedError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    outs_many, ins_many, blocks = _jacobian(
        func, inputs, create_graph, strict, vectorize, strategy, inputs_own=False
    )
    return _unpacked_blocks(blocks, outs_many, ins_many)


def _jacobian(
    func: Function,
    inputs: Any,
    create_graph: bool,
    strict: bool,
    vectorize: bool,
    strategy: str,
    inputs_own: bool,
) -> tuple[bool, bool, Any]:
    """Whether the outputs and the inputs are tuples, and the Jacobian's blocks (per output,
    per input). By forward mode, a block keeps its graph where it reaches a tensor that
    requires grad, the inputs among them if ``inputs_own`` (the gradient of hessian's
    forward-over-reverse, as torch's), none of the function's own."""
    if strategy == "forward-mode":
        if create_graph:
            raise UnsupportedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        if strict:
            raise GradError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.'
            )
    ins_many, xs = _as_tuple(inputs, "inputs", "jacobian")
    if strategy == "forward-mode":
        if not vectorize:
            raise UnsupportedError(  # torch's words, its missing space too
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
        level = Level()
        own = tuple(level.input(x) for x in xs)
        outs_many, outs = _outputs(func, own, "jacobian")
        blocks = _columns(outs, own, True, tuple(level.leaf(u) for u in dummies(outs)))
        if inputs_own:
            level.private.difference_update(id(x) for x in own)
        return outs_many, ins_many, [list(row) for row in level.lower(blocks)]
    xs = _prepared(xs, create_graph)
    outs_many, outs = _outputs(func, xs, "jacobian")
    _check_requires_grad(outs, "outputs", strict)
    if vectorize and strict:
        raise GradError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
            "supported together. Please either set `strict=False` or `vectorize=False`."
        )
    blocks = _rows(outs, xs, create_graph, strict, together=vectorize)
    return outs_many, ins_many, _finished(blocks, create_graph)


def _single_output(func: Function, xs: tuple[Tensor, ...], function: str, strict: bool) -> Tensor:
    """``func(*xs)``, which must be one tensor of one element (torch's errors)."""
    with set_grad_enabled(True):
        out = func(*xs)
    many, outs = _as_tuple(out, "outputs of the user-provided function", function)
    _check_requires_grad(outs, "outputs", strict)
    if many:
        raise GradError(f"The function given to {function} should return a single Tensor")
    if outs[0].numel() != 1:
        raise GradError(
            f"The Tensor returned by the function given to {function} should contain a single "
            "element"
        )
    return outs[0]


def hessian(
    func: Function,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """``torch.autograd.functional.hessian`` of a function with one element out: the
    Jacobian of its gradient, a tensor or a tuple of tuples ``H[i][j]``."""
    ins_many, xs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertedError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def gradient(*values: Tensor) -> tuple[Tensor, ...]:
        out = _single_output(func, values, "hessian", strict).reshape(())
        (jac,) = _rows((out,), values, True, False)  # torch's inner jacobian is not strict
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    _, _, blocks = _jacobian(
        gradient, xs, create_graph, strict, vectorize, outer_jacobian_strategy, inputs_own=True
    )
    return _unpacked_blocks(blocks, ins_many, ins_many)


def _second_order(
    func: Function, inputs: Any, v: Any, create_graph: bool, strict: bool, function: str
) -> tuple[bool, tuple[Tensor, ...], Tensor, tuple[Tensor, ...], tuple[Tensor, ...] | None]:
    """What vhp and hvp share: the inputs, the output, its gradient (with its graph) and v."""
    ins_many, xs = _as_tuple(inputs, "inputs", function)
    xs = _prepared(xs, create_graph)
    vs = _given_v(v, xs, ins_many, function, create_graph, "input")
    out = _single_output(func, xs, function, strict)
    found = autograd_grad((out,), xs, None, create_graph=True)
    _check_requires_grad(found, "jacobian", strict)
    return ins_many, xs, out, found, vs  # type: ignore[return-value]


def vhp(
    func: Function, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Tensor, Any]:
    """``torch.autograd.functional.vhp``: (func(inputs), v^T H)."""
    ins_many, xs, out, gradients, vs = _second_order(func, inputs, v, create_graph, strict, "vhp")
    found = autograd_grad(gradients, xs, vs, create_graph=create_graph)
    products = _fill_in_zeros(found, xs, strict, create_graph, "double_back")
    return (
        _finished((out,), create_graph)[0],
        _unpacked(_finished(products, create_graph), ins_many),
    )


def hvp(
    func: Function, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Tensor, Any]:
    """``torch.autograd.functional.hvp``: (func(inputs), H v), by the double-backward trick
    as torch's."""
    ins_many, xs, out, gradients, vs = _second_order(func, inputs, v, create_graph, strict, "hvp")
    us = dummies(xs)
    twice = autograd_grad(gradients, xs, us, create_graph=True)
    _check_requires_grad(gradients, "hessian", strict)
    found = autograd_grad(twice, us, vs, create_graph=create_graph)
    products = _fill_in_zeros(found, xs, strict, create_graph, "double_back_trick")
    return (
        _finished((out,), create_graph)[0],
        _unpacked(_finished(products, create_graph), ins_many),
    )
