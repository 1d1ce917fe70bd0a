"""``torch.func.vmap`` over the engine: ``func`` mapped over a dimension of its inputs, with
``in_dims`` and ``out_dims`` (ints, None, or pytrees matching the arguments and the results),
nesting, and torch's errors.

The map runs ``func`` once per index of the mapped dimension, on the inputs' slices, and
stacks the results along ``out_dims``: for the functions vmap takes (no data-dependent
control flow across the batch, no side effects) that is what torch's batched evaluation
computes, and it composes with every transform, as each slice and the stack are
differentiable. Unlike torch's, ``func`` runs once per slice (a ``print`` in it prints each
time) and ``randomness="error"`` does not refuse random operations. The stacked result is
foreseen from the first slice's (its size times the batch's) before the other slices run.
Where nothing needs the graph, the numbers are those of the batched pass
(``vmap_batched.py``): the first slice's trace replayed once over the batch, rounded as
torch's batched evaluation rounds them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..base.engine_errors import DomainError, ShapeError
from .borrowed import stack
from .func import _checked_randomness
from .meter import foresee
from .pytree import TreeSpec, broadcast_prefix, flatten, unflatten
from .tensor import Tensor
from .vmap_batched import BatchedPass

Function = Callable[..., Any]


def _name(func: Any) -> str:
    """What torch calls the function in vmap's errors."""
    if hasattr(func, "__name__"):
        return str(func.__name__)
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _checked_out_dims(out_dims: Any, func: Function) -> None:
    for value in flatten(out_dims)[0]:
        if value is not None and not isinstance(value, int):
            raise DomainError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None "
                "or a python collection of ints representing where in the outputs the vmapped "
                "dimension should appear."
            )


def _mapped_inputs(
    in_dims: Any, args: tuple[Any, ...], func: Function
) -> tuple[int, list[int | None], list[Any], TreeSpec]:
    """The size of the mapped dimension, each argument leaf's mapped dimension (None: not
    mapped), the leaves, and the arguments' structure; torch's errors."""
    start = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
    if not isinstance(in_dims, (int, tuple)):
        raise DomainError(
            f"{start}expected `in_dims` to be int or a (potentially nested) tuple matching the "
            f"structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise DomainError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
            "you are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, spec = flatten(args)
    flat_dims = broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise DomainError(
            f"{start}in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    for i, (arg, dim) in enumerate(zip(flat_args, flat_dims)):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise DomainError(
                f"{start}Got in_dim={dim} for an input but in_dim must be either an integer "
                "dimension or None."
            )
        if not isinstance(arg, Tensor):
            raise DomainError(
                f"{start}Got in_dim={dim} for an input but the input is of type {type(arg)}. We "
                "cannot vmap over non-Tensor arguments, please use None as the respective in_dim"
            )
        if not -arg.ndim <= dim < arg.ndim:
            raise DomainError(
                f"{start}Got in_dim={dim} for some input, but that input is a Tensor of "
                f"dimensionality {arg.ndim} so expected in_dim to satisfy -{arg.ndim} <= in_dim "
                f"< {arg.ndim}."
            )
        flat_dims[i] = dim % arg.ndim
    sizes = [arg.shape[dim] for arg, dim in zip(flat_args, flat_dims) if dim is not None]
    if not sizes:
        raise DomainError("vmap: Expected at least one Tensor to vmap over")
    if any(size != sizes[0] for size in sizes):
        raise ShapeError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return sizes[0], flat_dims, flat_args, spec


def _slice(arg: Any, dim: int | None, index: int) -> Any:
    if dim is None:
        return arg
    return arg[(slice(None),) * dim + (index,)]


def _out_dims_for(output: Any, spec: TreeSpec, out_dims: Any, func: Function) -> list[Any]:
    """One out_dim per leaf of the output (torch's special case: a lone tensor takes an int,
    a 1-tuple or None)."""
    found: list[Any] | None
    if isinstance(output, Tensor):
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            found = list(out_dims)
        elif out_dims is None or isinstance(out_dims, int):
            found = [out_dims]
        else:
            found = None
    else:
        found = broadcast_prefix(out_dims, spec)
    if found is None:
        raise DomainError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            f"compatible with the structure of `outputs`. out_dims has structure "
            f"{flatten(out_dims)[1]} but outputs has structure {spec}."
        )
    return found


def _stacked(results: list[Any], out_dims: Any, func: Function) -> tuple[Any, list[Any]]:
    """The per-slice results joined: each tensor stacked along its out_dim (one of out_dim
    None is the first slice's, as it does not depend on the mapped dimension); and the
    out_dim of each leaf."""
    flat_first, spec = flatten(results[0])
    dims = _out_dims_for(results[0], spec, out_dims, func)
    columns = list(zip(*(flatten(r)[0] for r in results)))
    joined = []
    for column, dim in zip(columns, dims):
        if dim is None:
            joined.append(column[0])
            continue
        if not all(isinstance(value, Tensor) for value in column):
            kind = next(type(v) for v in column if not isinstance(v, Tensor))
            raise DomainError(
                f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                f"{kind}. Did you mean to set out_dims= to None for output?"
            )
        joined.append(stack(list(column), dim=dim))
    return unflatten(joined, spec), dims


def vmap(
    func: Function,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Function:
    """``torch.func.vmap``: ``func`` mapped over the dimension ``in_dims`` of its inputs, the
    results stacked along ``out_dims``. Keyword arguments are passed to ``func`` unmapped;
    ``randomness`` and ``chunk_size`` are checked as torch checks them."""
    _checked_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise DomainError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _checked_out_dims(out_dims, func)
        size, dims, flat_args, spec = _mapped_inputs(in_dims, args, func)
        if size == 0:
            raise ShapeError(
                f"vmap({_name(func)}): gradcli does not map over a dimension of size 0 (torch "
                "runs the function once on empty batches; here it is run once per element)"
            )

        batched = BatchedPass.tried(flat_args, dims)

        def one(b: int) -> Any:
            leaves = [_slice(a, d, b) for a, d in zip(flat_args, dims)]

            def call() -> Any:
                return func(*unflatten(leaves, spec), **kwargs)

            if batched is None:
                return call()
            return batched.run(b, [x for x, d in zip(leaves, dims) if d is not None], call)

        results = [one(0)]
        # the stacked result, foreseen from the first slice's before the others run
        each = sum(v.numel() for v in flatten(results[0])[0] if isinstance(v, Tensor))
        foresee(f"the result of vmap({_name(func)})", size * each)
        results.extend(one(b) for b in range(1, size))
        stacked, leaf_dims = _stacked(results, out_dims, func)
        if batched is not None:
            replaced = batched.replaced(stacked, leaf_dims, chunk_size)
            if replaced is not None:
                return replaced
        return stacked

    return wrapped
