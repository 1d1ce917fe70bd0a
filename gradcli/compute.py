"""One pure function per command: a bound program in, a frozen ``Result`` out.

Nothing here prints or exits; errors are ``GradcliError`` for the command line to report.
"""

from __future__ import annotations

import difflib
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import engine as gc
from .errors import GradcliError
from .lang import Program

DTYPES = {"float64": np.float64, "float32": np.float32}


@dataclass(frozen=True)
class Result:
    """What a command computed, ready for any renderer."""

    command: str
    output: str
    values: dict[str, np.ndarray] = field(default_factory=dict)
    grads: dict[str, np.ndarray | None] = field(default_factory=dict)
    jacobian: dict[str, np.ndarray] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    transposed: bool = False  # jacobian entries are J^T (input.shape + output.shape)


@dataclass
class Bound:
    """A program with a value for each input, and which inputs require grad."""

    program: Program
    arrays: dict[str, np.ndarray]
    requires_grad: dict[str, bool]
    dtype: type
    notes: list[str] = field(default_factory=list)

    def leaves(self) -> dict[str, gc.Tensor]:
        """Fresh leaf tensors for one run of the program."""
        return {
            name: gc.Tensor(array, requires_grad=self.requires_grad[name])
            for name, array in self.arrays.items()
        }

    def run(self, leaves: dict[str, gc.Tensor]) -> dict[str, gc.Tensor]:
        return self.program.run(leaves, self.notes)


def _did_you_mean(name: str, choices) -> str | None:
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f"did you mean {close[0]!r}?" if close else None


def bind(
    program: Program,
    given: dict[str, np.ndarray],
    wrt: list[str] | None = None,
    dtype: str = "float64",
    seed: int = 0,
) -> Bound:
    """Give every input a value (from ``given`` or its declared default) and a grad flag.

    Without ``wrt``, every input requires grad except those declared by a constructor without
    ``requires_grad=True`` (as in PyTorch, ``x = ones(8)`` is a constant).
    """
    if dtype not in DTYPES:
        raise GradcliError(f"unknown dtype {dtype!r}", hint="use float64 (default) or float32")
    inputs = program.inputs(set(given))
    used = set(inputs)
    for name in given:
        if name not in used:
            raise GradcliError(
                f"a value was given for {name!r}, but the program has no input {name!r}",
                hint=_did_you_mean(name, used) or f"its inputs are: {', '.join(inputs) or 'none'}",
            )
    arrays, requires_grad = {}, {}
    for name in inputs:
        declared_grad = True
        if name in given:
            array = given[name]
            if name in program.declared:
                declared_grad = program.declared_value(name, seed)[1]
        elif name in program.declared:
            array, declared_grad = program.declared_value(name, seed)
        else:
            flag = "--x VALUE" if name == "x" else f"-i {name}=VALUE"
            raise GradcliError(f"no value for the input {name!r}", hint=f"give it with {flag}")
        arrays[name] = np.asarray(array, dtype=DTYPES[dtype])
        requires_grad[name] = declared_grad if wrt is None else name in wrt
    return Bound(program, arrays, requires_grad, DTYPES[dtype])


def _check_names(bound: Bound, names: list[str], env: dict, what: str) -> None:
    for name in names:
        if name not in env:
            raise GradcliError(
                f"{what} names {name!r}, which the program does not define",
                hint=_did_you_mean(name, env) or f"names are: {', '.join(env)}",
            )


def output_of(bound: Bound, env: dict, of: str | None) -> tuple[str, gc.Tensor]:
    name = of or bound.program.default_output()
    _check_names(bound, [name], env, "--of")
    return name, env[name]


def _cotangent(v: np.ndarray | None, out: gc.Tensor, name: str, dtype) -> gc.Tensor | None:
    if v is None:
        return None
    v = np.asarray(v, dtype=dtype)
    if v.shape != out.shape:
        raise GradcliError(
            f"--v has shape {v.shape} but the output {name} has shape {out.shape}",
            hint=f"give a vector v of shape {out.shape}",
        )
    return gc.Tensor(v)


def _engine_errors(action):
    """Run ``action``, turning the engine's semantic errors into user errors (exit 2)."""
    try:
        with np.errstate(all="ignore"):
            return action()
    except RuntimeError as exc:
        hint = None
        if "implicitly created only for scalar outputs" in str(exc):
            hint = "the output is not a scalar: give the vector v with --v"
        raise GradcliError(str(exc), hint=hint) from None


def evaluate(bound: Bound) -> Result:
    """The value of every input and every assigned name."""
    env = bound.run(bound.leaves())
    return Result(
        "eval",
        bound.program.default_output(),
        values={name: t.data for name, t in env.items()},
        warnings=tuple(bound.notes),
    )


def grad(
    bound: Bound,
    of: str | None = None,
    v: np.ndarray | None = None,
    show: list[str] = (),
    retain: list[str] = (),
    repeat: int = 1,
) -> Result:
    """``out.backward(v)`` (``repeat`` times), then ``.grad`` of every input and shown node."""
    if repeat < 1:
        raise GradcliError("--repeat must be at least 1")
    leaves = bound.leaves()
    env = bound.run(leaves)
    name, out = output_of(bound, env, of)
    _check_names(bound, [*show, *retain], env, "--show/--retain-grad")
    if not out.requires_grad:
        raise GradcliError(
            f"the output {name} does not depend on any input that requires grad",
            hint="choose inputs with --wrt",
        )
    for node in retain:
        if env[node].is_leaf:
            continue
        env[node].retain_grad()
    gradient = _cotangent(v, out, name, bound.dtype)
    for i in range(repeat):
        _engine_errors(lambda: out.backward(gradient, retain_graph=i < repeat - 1))
    messages = list(bound.notes)
    grads: dict[str, np.ndarray | None] = {}
    for node in [*leaves, *(n for n in [*show, *retain] if n not in leaves)]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = env[node].grad
        messages.extend(f"{node}.grad: {w.message}" for w in caught)
        grads[node] = None if value is None else value.data
    return Result("grad", name, values={name: out.data}, grads=grads, warnings=tuple(messages))


def vjp(
    bound: Bound, of: str | None = None, v: np.ndarray | None = None, wrt: list[str] | None = None
) -> Result:
    """``torch.autograd.grad(out, wrt, grad_outputs=v)``: J^T v for each name; nothing accumulates."""
    leaves = bound.leaves()
    env = bound.run(leaves)
    name, out = output_of(bound, env, of)
    targets = wrt or [n for n, leaf in leaves.items() if leaf.requires_grad]
    _check_names(bound, targets, env, "--wrt")
    if v is None and out.numel() != 1:
        raise GradcliError(
            f"the output {name} has shape {out.shape}: vjp needs the vector v",
            hint=f"give --v with shape {out.shape}, e.g. --v ones{out.shape if len(out.shape) > 1 else '(' + str(out.shape[0]) + ')'}",
        )
    tensors = [env[t] for t in targets]
    for t, tensor in zip(targets, tensors):
        if not tensor.requires_grad:
            raise GradcliError(f"{t} does not require grad", hint="name it in --wrt")
    if not out.requires_grad:
        found = [None] * len(tensors)
    else:
        cotangent = _cotangent(v, out, name, bound.dtype)
        found = _engine_errors(lambda: gc.grad(out, tensors, cotangent, allow_unused=True))
    grads = {
        t: (np.zeros(tensor.shape, bound.dtype) if g is None else g.data)
        for t, tensor, g in zip(targets, tensors, found)
    }
    return Result("vjp", name, values={name: out.data}, grads=grads, warnings=tuple(bound.notes))


def jacobian(
    bound: Bound, of: str | None = None, wrt: list[str] | None = None, transpose: bool = False
) -> Result:
    """d out / d input for each ``wrt`` input, laid out output.shape + input.shape."""
    names = list(bound.arrays)
    targets = wrt or [n for n in names if bound.requires_grad[n]]
    _check_names(bound, targets, bound.arrays, "--wrt")
    env0 = bound.run(bound.leaves())
    name, out0 = output_of(bound, env0, of)

    def function(*values):
        leaves = {n: gc.Tensor(bound.arrays[n]) for n in names}
        leaves.update(zip(targets, values))
        return bound.program.run(leaves)[name]

    blocks = _engine_errors(
        lambda: gc.jacobian(function, tuple(gc.Tensor(bound.arrays[t]) for t in targets))
    )
    jac = {}
    for t, block in zip(targets, blocks):
        array = block.data
        if transpose:
            k = out0.ndim
            array = np.transpose(array, tuple(range(k, array.ndim)) + tuple(range(k)))
        jac[t] = array
    return Result(
        "jacobian",
        name,
        values={name: out0.data},
        jacobian=jac,
        warnings=tuple(dict.fromkeys(bound.notes)),
        transposed=transpose,
    )
