"""The functional API, after ``torch.autograd.functional``: vjp, jvp, jacobian, hessian, hvp.

Each takes a function of tensors and the point to evaluate it at. ``jvp`` is true forward
mode: tangents ride along the forward pass through each primitive's forward rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.engine_errors import DomainError, GradError, ScalarOutputError, ShapeError
from ..ops.table import Array
from .modes import _Mode
from .tensor import Tensor, as_tensor, grad, set_grad_enabled

if TYPE_CHECKING:
    from .compile import Tape

Inputs = Tensor | Sequence[Tensor]


def _leaves(inputs: Inputs, requires_grad: bool) -> tuple[bool, tuple[Tensor, ...]]:
    """Fresh leaves holding the inputs' values, and whether the caller passed a sequence."""
    many = not isinstance(inputs, Tensor)
    xs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    return many, tuple(Tensor(as_tensor(x).data, requires_grad=requires_grad) for x in xs)


def _arrays(inputs: Inputs) -> list[Array]:
    """The values of the inputs, as ``_leaves`` holds them (for a caller that wants the
    arrays alone, without the leaves)."""
    xs = (inputs,) if isinstance(inputs, Tensor) else inputs
    return [as_tensor(x).data for x in xs]


def _matching(values: Any, xs: tuple[Tensor, ...], what: str) -> tuple[Tensor, ...]:
    values = (values,) if len(xs) == 1 and not isinstance(values, (tuple, list)) else tuple(values)
    if len(values) != len(xs):
        raise ShapeError(f"{what}: expected {len(xs)} tensors, got {len(values)}")
    result = tuple(as_tensor(v, x.dtype) for v, x in zip(values, xs))
    for v, x in zip(result, xs):
        if v.shape != x.shape:
            raise ShapeError(f"{what}: a tensor of shape {v.shape} was given for shape {x.shape}")
    return result


def _or_zeros(gradients: Sequence[Tensor | None], like: Sequence[Tensor]) -> tuple[Tensor, ...]:
    return tuple(
        Tensor(np.zeros(x.shape, dtype=x.dtype)) if g is None else g
        for g, x in zip(gradients, like)
    )


def _unpack(many: bool, values: tuple[Any, ...]) -> Any:  # the tuple, or its one element
    return values if many else values[0]


def _reverse(
    out: Tensor,
    xs: Sequence[Tensor],
    v: Tensor | None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple[Tensor, ...]:
    if not out.requires_grad:
        return _or_zeros([None] * len(xs), xs)
    found = grad(
        out, xs, v, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True
    )
    return _or_zeros(found, xs)


def vjp(func: Callable[..., Tensor], inputs: Inputs, v: Any = None) -> tuple[Tensor, Any]:
    """(func(inputs), J^T v). ``v`` may be omitted only for a scalar output."""
    many, xs = _leaves(inputs, requires_grad=True)
    out = func(*xs)
    if v is not None:
        v = _matching(v, (out,), "vjp: v")[0]
    return out.detach(), _unpack(many, _reverse(out, xs, v))


def jvp(func: Callable[..., Tensor], inputs: Inputs, v: Any = None) -> tuple[Tensor, Tensor]:
    """(func(inputs), J v) by forward mode. ``v`` may be omitted only for a scalar input."""
    out, tangent = forward_pass(func, inputs, v)
    return out.detach(), tangent.detach()


def forward_pass(
    func: Callable[..., Tensor], inputs: Inputs, v: Any = None
) -> tuple[Tensor, Tensor]:
    """``jvp``'s (func(inputs), J v) as forward mode made them, not detached: for a pass being
    traced (``--batch``), whose tape then ends with the values themselves, not with steps
    that copy them (a detached tensor's array is its own: the same bits)."""
    many, xs = _leaves(inputs, requires_grad=False)
    if v is None:
        if len(xs) != 1 or xs[0].numel() != 1:
            raise GradError("v can be omitted only when the input is a single scalar")
        v = Tensor(np.ones(xs[0].shape, dtype=xs[0].dtype))
    for x, t in zip(xs, _matching(v, xs, "jvp: v")):
        x.tangent = t
    # _forward_mode(True) and set_grad_enabled(False), without two generators' frames
    forward, recording = _Mode.forward_active, _Mode.grad_enabled
    _Mode.forward_active, _Mode.grad_enabled = True, False
    try:
        out = func(*xs)
    finally:
        _Mode.grad_enabled = recording
        _Mode.forward_active = forward
    tangent = out.tangent
    if tangent is None:
        tangent = Tensor(np.zeros(out.shape, dtype=out.dtype))
    return out, tangent


def _basis(shape: tuple[int, ...], dtype: np.dtype[Any], k: int) -> Tensor:
    e = np.zeros(int(np.prod(shape)), dtype=dtype)
    e[k] = 1
    return Tensor(e.reshape(shape))


def jacobian(
    func: Callable[..., Tensor],
    inputs: Inputs,
    strategy: str = "reverse-mode",
    vectorize: bool = False,
    max_batch_elements: int | None = None,
) -> Any:  # a Tensor for one input, a tuple of them for several
    """d func / d inputs, laid out as output.shape + input.shape (one per input).

    ``strategy`` is "reverse-mode" (a backward pass per output element) or "forward-mode" (a
    forward pass per input element). With ``vectorize`` the pass is traced once and replayed
    with all basis vectors at once along a batch dimension (``compile.run_batched``), in
    chunks small enough that no batched value has more than ``max_batch_elements``; a
    computation that cannot be batched falls back to one pass per basis vector.
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise DomainError(f'strategy must be "reverse-mode" or "forward-mode", got {strategy!r}')
    many = not isinstance(inputs, Tensor)
    if vectorize:
        from .compile import NotBatchable

        try:
            blocks = _batched_jacobian(func, inputs, strategy, max_batch_elements)
        except NotBatchable:
            blocks = _looped_jacobian(func, inputs, strategy)
    else:
        blocks = _looped_jacobian(func, inputs, strategy)
    return _unpack(many, tuple(Tensor(b) for b in blocks))


def _looped_jacobian(
    func: Callable[..., Tensor], inputs: Inputs, strategy: str
) -> tuple[Array, ...]:
    if strategy == "reverse-mode":
        _, xs = _leaves(inputs, requires_grad=True)
        out = func(*xs)
        rows = [
            _reverse(out, xs, _basis(out.shape, out.dtype, k), retain_graph=True)
            for k in range(out.numel())
        ]
        return tuple(
            np.stack([row[i].data for row in rows]).reshape(out.shape + x.shape)
            if rows
            else np.zeros(out.shape + x.shape, dtype=x.dtype)
            for i, x in enumerate(xs)
        )
    _, xs = _leaves(inputs, requires_grad=False)
    blocks = []
    for i, x in enumerate(xs):
        columns = []
        for k in range(x.numel()):
            tangents = [
                _basis(x.shape, x.dtype, k) if j == i else np.zeros(y.shape, y.dtype)
                for j, y in enumerate(xs)
            ]
            out, column = jvp(func, xs, tangents)
            columns.append(column.data)
        out_shape = out.shape if columns else func(*xs).shape
        stacked = np.stack(columns, axis=-1) if columns else np.zeros(out_shape + (0,))
        blocks.append(stacked.reshape(out_shape + x.shape))
    return tuple(blocks)


def _batched_jacobian(
    func: Callable[..., Tensor], inputs: Inputs, strategy: str, max_elements: int | None
) -> tuple[Array, ...]:
    """All basis vectors replayed along a batch dimension, in chunks within ``max_elements``:
    a batched VJP (reverse) or batched JVPs (forward)."""
    from .compile import trace

    _, xs = _leaves(inputs, requires_grad=False)
    arrays = [x.data for x in xs]
    with set_grad_enabled(False):
        out_shape, out_dtype = (lambda o: (o.shape, o.dtype))(func(*[Tensor(a) for a in arrays]))
    if strategy == "reverse-mode":

        def cotangent_pass(seed: Tensor, *values: Tensor) -> list[Tensor]:
            for value in values:
                value.requires_grad = True
            return list(_reverse(func(*values), values, seed))

        tape = trace(cotangent_pass, np.zeros(out_shape, out_dtype), *arrays)
        rows = _replay_basis(tape, out_shape, out_dtype, arrays, max_elements)
        return tuple(np.asarray(r).reshape(out_shape + x.shape) for r, x in zip(rows, xs))
    blocks = []
    for i, x in enumerate(xs):

        def tangent_pass(tangent: Tensor, *values: Tensor, i: int = i) -> list[Tensor]:
            tangents = [
                tangent if j == i else np.zeros(v.shape, v.dtype) for j, v in enumerate(values)
            ]
            return [jvp(func, values, tangents)[1]]

        tape = trace(tangent_pass, np.zeros(x.shape, x.dtype), *arrays)
        (columns,) = _replay_basis(tape, x.shape, x.dtype, arrays, max_elements)
        columns = np.moveaxis(np.asarray(columns).reshape((x.numel(),) + out_shape), 0, -1)
        blocks.append(columns.reshape(out_shape + x.shape))
    return tuple(blocks)


def _replay_basis(
    tape: Tape,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    arrays: Sequence[Array],
    max_elements: int | None,
) -> list[Array]:
    """Replay ``tape`` with every basis vector of ``shape`` as its first, batched, input.

    The basis goes in chunks (each built only when its turn comes) small enough that no
    batched value holds more than ``max_elements``; the outputs are joined again.
    """
    from .compile import batch_size, run_batched

    n = int(np.prod(shape))
    chunk = batch_size(tape, max_elements) or max(n, 1)
    flags = [True] + [False] * len(arrays)
    parts = []
    for start in range(0, max(n, 1), chunk):
        stop = min(start + chunk, n)
        basis = np.zeros((stop - start, n), dtype)
        basis[np.arange(stop - start), np.arange(start, stop)] = 1
        parts.append(run_batched(tape, [basis.reshape((stop - start, *shape)), *arrays], flags))
    return [np.concatenate(column) for column in zip(*parts)]


def hessian(func: Callable[..., Tensor], inputs: Inputs) -> Any:  # a Tensor, or a tuple of tuples
    """Second derivatives of a scalar function, by differentiating its own gradient.

    For one input the result has shape input.shape + input.shape; for several, a tuple of
    tuples ``H[i][j]`` of shape inputs[i].shape + inputs[j].shape.
    """
    many, xs = _leaves(inputs, requires_grad=True)
    out = func(*xs)
    if out.numel() != 1:
        raise ScalarOutputError(f"hessian needs a scalar output, got shape {out.shape}")
    gradients = _reverse(out, xs, None, create_graph=True)
    blocks = []
    for gi, xi in zip(gradients, xs):
        rows = []
        flat = gi.reshape(-1)
        for k in range(xi.numel()):
            element = flat[k]
            rows.append(_reverse(element, xs, None, retain_graph=True))
        blocks.append(
            tuple(
                Tensor(
                    np.stack([r[j].data for r in rows]).reshape(xi.shape + xj.shape)
                    if rows
                    else np.zeros(xi.shape + xj.shape, dtype=xj.dtype)
                )
                for j, xj in enumerate(xs)
            )
        )
    return tuple(tuple(row) for row in blocks) if many else blocks[0][0]


def hvp(func: Callable[..., Tensor], inputs: Inputs, v: Any) -> tuple[Tensor, Any]:
    """(func(inputs), H v) for a scalar function, without forming H."""
    many, xs = _leaves(inputs, requires_grad=True)
    vs = _matching(v, xs, "hvp: v")
    out = func(*xs)
    if out.numel() != 1:
        raise ScalarOutputError(f"hvp needs a scalar output, got shape {out.shape}")
    gradients = _reverse(out, xs, None, create_graph=True)
    terms = [(g * t).sum() for g, t in zip(gradients, vs)]
    inner = terms[0]
    for term in terms[1:]:
        inner = inner + term
    return out.detach(), _unpack(many, _reverse(inner, xs, None))
