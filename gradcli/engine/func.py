"""``torch.func``'s transforms over the engine: grad, grad_and_value, vjp, jvp, jacrev, jacfwd
and hessian (vmap is in ``vmap.py``), each a Python callable over any function of engine
tensors, with ``argnums``, ``has_aux``, pytrees of arguments and results, nesting
(``jacrev(jacrev(f))``, ``grad(grad(f))``) and torch's errors.

Each application of a transform is a *level* (``levels.py``): it differentiates with respect
to tensors of its own, so that nested transforms do not confuse their perturbations, and its
results keep their graph only where it reaches a tensor that requires grad outside it.

Forward mode (``jvp``, ``jacfwd``, and so ``hessian``'s forward-over-reverse) is computed by
the double-backward trick: ``J v`` is the gradient with respect to a cotangent ``u`` of
``J^T u``. The numbers are forward mode's; the engine's reverse rules are differentiable, so
every composition nests.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..base.engine_errors import DomainError, GradError, ScalarOutputError
from ..base.torch_text import dtype_repr
from .autograd_functional import _columns, _rows
from .forward_ad import check_dual
from .levels import Level, autograd_grad, dummies, zeros_like
from .pytree import TreeSpec, flatten, tree_map, unflatten
from .tensor import Tensor, is_grad_enabled, set_grad_enabled

ArgNums = int | tuple[int, ...]
Function = Callable[..., Any]


# -- argnums -----------------------------------------------------------------------------------


def _argnum(argnum: Any, count: int) -> int:
    if not isinstance(argnum, int):
        raise GradError(f"argnum must be int, got: {type(argnum)}")
    if -count <= argnum < count:
        return argnum % count
    raise GradError(f"Got argnum={argnum}, but only {count} positional inputs")


def _argnums(argnums: Any, count: int) -> ArgNums:
    """``argnums`` checked against ``count`` arguments, negative ones wrapped (torch's
    errors)."""
    if isinstance(argnums, int):
        return _argnum(argnums, count)
    if not isinstance(argnums, tuple):
        raise GradError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wrapped = tuple(_argnum(a, count) for a in argnums)
    if not wrapped:
        raise GradError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise GradError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


def _chosen(args: tuple[Any, ...], argnums: ArgNums) -> Any:
    """The argument ``argnums`` names, or the tuple of those it names."""
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[i] for i in argnums)


def _replaced(args: tuple[Any, ...], argnums: ArgNums, new: Any) -> tuple[Any, ...]:
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    given = dict(zip(argnums, new))
    return tuple(given.get(i, a) for i, a in enumerate(args))


def _level_inputs(level: Level, args: tuple[Any, ...], argnums: ArgNums) -> tuple[Any, Any]:
    """The level's own tensors for the arguments ``argnums`` names, and all the arguments with
    them in place."""
    own = tree_map(level.input, _chosen(args, argnums))
    return own, _replaced(args, argnums, own)


def _split_aux(output: Any, api: str) -> tuple[Any, Any]:
    if not (isinstance(output, tuple) and len(output) == 2):
        raise GradError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return output[0], output[1]


def _filled(found: Sequence[Tensor | None], like: Sequence[Tensor]) -> list[Tensor]:
    return [zeros_like(x) if g is None else g for g, x in zip(found, like)]


# -- grad ---------------------------------------------------------------------------------------


def grad_and_value(func: Function, argnums: ArgNums = 0, has_aux: bool = False) -> Function:
    """``torch.func.grad_and_value``: a function giving ``(gradient, value)`` of ``func``
    (``(gradient, (value, aux))`` with ``has_aux``); the gradient has the structure of the
    arguments ``argnums`` names."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        level = Level()
        api = "grad_and_value(f)(*args)"
        with set_grad_enabled(True):
            chosen = _argnums(argnums, len(args))
            own, arguments = _level_inputs(level, args, chosen)
            output = func(*arguments, **kwargs)
            aux = None
            if has_aux:
                output, aux = _split_aux(output, api)
            if not isinstance(output, Tensor):
                raise GradError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
            if output.ndim != 0:
                raise ScalarOutputError(
                    f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            leaves, spec = flatten(own)
            found = autograd_grad((output,), leaves, None, create_graph=True)
            gradient = unflatten(_filled(found, leaves), spec)
        value = level.lower(output)
        if has_aux:
            return level.lower(gradient), (value, level.lower(aux))
        return level.lower(gradient), value

    return wrapper


def grad(func: Function, argnums: ArgNums = 0, has_aux: bool = False) -> Function:
    """``torch.func.grad``: a function giving the gradient of ``func`` (a scalar tensor) with
    respect to the arguments ``argnums`` names (``(gradient, aux)`` with ``has_aux``)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


# -- vjp and jacrev -----------------------------------------------------------------------------


def _checked_outputs(output: Any, api: str) -> tuple[list[Tensor], TreeSpec]:
    """The output's tensors and structure; torch's errors for an empty or non-tensor output."""
    flat, spec = flatten(output)
    if not flat or (len(flat) == 1 and flat[0] is None):
        raise GradError(
            f"{api}: Expected f to be a function that has non-empty output (got output = {flat})"
        )
    for value in flat:
        if not isinstance(value, Tensor):
            raise GradError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(value)}"
            )
    return flat, spec


def _floating_outputs(flat: list[Tensor]) -> None:
    for value in flat:
        if value.dtype.kind not in "fc":
            raise GradError(
                "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                f"Tensor with dtype {dtype_repr(value.dtype)}"
            )


def _real(api: str, values: Any, inputs: bool) -> None:
    for i, value in enumerate(flatten(values)[0]):
        if isinstance(value, Tensor) and value.dtype.kind == "c":
            which = "inputs" if inputs else "outputs"
            raise GradError(
                f"{api}: Expected all {which} to be real but received complex tensor at "
                f"flattened input idx: {i}"
            )


def vjp(func: Function, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``torch.func.vjp``: ``(func(*primals), vjp_fn)``, ``vjp_fn(cotangents)`` giving the
    tuple of vector-Jacobian products, one per primal (and ``aux`` third with ``has_aux``)."""
    level = Level()
    api = "vjp(f, *primals)"
    with set_grad_enabled(True):
        own = tree_map(level.input, primals)
        output = func(*own)
        aux = None
        if has_aux:
            output, aux = _split_aux(output, api)
        flat_out, out_spec = _checked_outputs(output, api)
        _floating_outputs(flat_out)
    flat_own, own_spec = flatten(own)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None) -> Any:
        """The products of ``cotangents`` (shaped as the output) with the Jacobian."""
        flat_cot, cot_spec = flatten(cotangents)
        if cot_spec != out_spec:
            raise GradError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {cot_spec.pretty()}, primal output: "
                f"{out_spec.pretty()}"
            )
        with set_grad_enabled(True):
            found = autograd_grad(flat_out, flat_own, flat_cot, create_graph=True)
        products = unflatten(_filled(found, flat_own), own_spec)
        if create_graph is False or (create_graph is None and not is_grad_enabled()):
            return tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, products)
        return level.lower(products)

    if has_aux:
        return level.lower(output), vjp_fn, level.lower(aux)
    return level.lower(output), vjp_fn


def _assembled(blocks: list[list[Tensor]], out_spec: TreeSpec, own: Any, argnums: ArgNums) -> Any:
    """torch's structure of a Jacobian: the output's structure, each output's entry having the
    structure of the differentiated arguments (one argument's own for an int ``argnums``)."""
    spec = flatten(own if isinstance(argnums, tuple) else (own,))[1]
    per_output = []
    for row in blocks:
        entry = unflatten(row, spec)
        per_output.append(entry[0] if isinstance(argnums, int) else entry)
    return unflatten(per_output, out_spec)


def jacrev(
    func: Function,
    argnums: ArgNums = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Function:
    """``torch.func.jacrev``: a function giving the Jacobian of ``func`` with respect to the
    arguments ``argnums`` names, by reverse mode (``(jacobian, aux)`` with ``has_aux``).
    ``chunk_size`` is accepted (the rows are computed one by one)."""
    if not (chunk_size is None or chunk_size > 0):
        raise DomainError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian_of(
        func, argnums, has_aux, "jacrev", lambda level, outs, xs, kept: _rows(outs, xs, kept, False)
    )


def _jacobian_of(
    func: Function,
    argnums: ArgNums,
    has_aux: bool,
    name: str,
    blocks_of: Callable[[Level, tuple[Tensor, ...], tuple[Tensor, ...], bool], Any],
) -> Function:
    """What jacrev and jacfwd share: a function that differentiates ``func`` at a level of
    its own, ``blocks_of(level, outputs, inputs, kept)`` giving the Jacobian's blocks (per
    output, per input), put in torch's structure. The blocks keep their graph (``kept``)
    only where the outputs reach a tensor that requires grad outside the level (an
    enclosing transform's, or the caller's): elsewhere the level would cut it anyway, and
    a graph per row or column is what made ``jacfwd(jacfwd(f))`` of a 512-wide layer take
    tens of GB."""
    api = "vjp(f, *primals)" if name == "jacrev" else _JVP

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        _real(name, args, inputs=True)
        level = Level()
        with set_grad_enabled(True):
            chosen = _argnums(argnums, len(args))
            own, arguments = _level_inputs(level, args, chosen)
            output = func(*arguments)
            aux = None
            if has_aux:
                output, aux = _split_aux(output, api)
            flat_out, out_spec = _checked_outputs(output, api)
            if name == "jacrev":
                _floating_outputs(flat_out)
            _real(name, flat_out, inputs=False)
            kept = level.reaches_outside(flat_out)
            blocks = blocks_of(level, tuple(flat_out), tuple(flatten(own)[0]), kept)
        jacobian = level.lower(_assembled(blocks, out_spec, own, chosen))
        return (jacobian, level.lower(aux)) if has_aux else jacobian

    return wrapper


# -- jvp and jacfwd -----------------------------------------------------------------------------

_JVP = "jvp(f, primals, tangents)"


def _checked_tangents(flat_primals: list[Any], flat_tangents: list[Any]) -> None:
    for what, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        if not flat:
            raise GradError(f"{_JVP}: Expected {what} to contain at least one Tensor.")
        for value in flat:
            if not isinstance(value, Tensor):
                raise GradError(
                    f"{_JVP}: Expected {what} to only contain Tensors, got {type(value)}"
                )
    for primal, tangent in zip(flat_primals, flat_tangents):
        check_dual(primal, tangent)


def jvp(
    func: Function,
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """``torch.func.jvp``: ``(func(*primals), J tangents)`` (and ``aux`` third with
    ``has_aux``); ``primals`` is a tuple of the arguments, ``tangents`` of the same
    structure."""
    if not isinstance(primals, tuple):
        raise GradError(
            f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_primals, primals_spec = flatten(primals)
    flat_tangents, tangents_spec = flatten(tangents)
    if primals_spec != tangents_spec:
        raise GradError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {primals_spec} and tangents with structure {tangents_spec}"
        )
    _checked_tangents(flat_primals, flat_tangents)
    level = Level()
    with set_grad_enabled(True):
        own = [level.input(p) for p in flat_primals]
        output = func(*unflatten(own, primals_spec))
        aux = None
        if has_aux:
            output, aux = _split_aux(output, _JVP)
        flat_out, out_spec = _checked_outputs(output, _JVP)
        us = [level.leaf(u) for u in dummies(flat_out)]
        pulled = autograd_grad(flat_out, own, us, create_graph=True)
        pushed = autograd_grad(pulled, us, flat_tangents, create_graph=True)
    if strict and any(t is None for t in pushed):
        raise GradError(
            "jvp(f, primals, tangents, strict=True): The output of f is independent of the "
            "inputs. This is not allowed with strict=True."
        )
    result = (
        level.lower(output),
        level.lower(unflatten(_filled(pushed, flat_out), out_spec)),
    )
    return (*result, level.lower(aux)) if has_aux else result


def jacfwd(
    func: Function, argnums: ArgNums = 0, has_aux: bool = False, *, randomness: str = "error"
) -> Function:
    """``torch.func.jacfwd``: a function giving the Jacobian of ``func`` with respect to the
    arguments ``argnums`` names, a Jacobian-vector product per input element
    (``(jacobian, aux)`` with ``has_aux``)."""
    _checked_randomness(randomness)

    def blocks_of(
        level: Level, outs: tuple[Tensor, ...], xs: tuple[Tensor, ...], kept: bool
    ) -> Any:
        return _columns(outs, xs, kept, tuple(level.leaf(u) for u in dummies(outs)))

    return _jacobian_of(func, argnums, has_aux, "jacfwd", blocks_of)


def hessian(func: Function, argnums: ArgNums = 0) -> Function:
    """``torch.func.hessian``: ``jacfwd(jacrev(func, argnums), argnums)``, forward over
    reverse, as torch's."""
    return jacfwd(jacrev(func, argnums), argnums)


def _checked_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise GradError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
