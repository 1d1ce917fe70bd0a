"""One pure function per command: a bound program in, a frozen result (``results``) out.

Nothing here prints or exits; errors are ``GradcliError``, or the engine's ``EngineError``
(whose class says what kind of refusal it is), for the command line to report.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from dataclasses import field
from typing import NamedTuple, TypeVar

import numpy as np

from ..base import bounds
from ..base.errors import LISTED, GradcliError, listing
from ..base.records import record
from ..lang import ParsedProgram, ir
from ..lang import functions as F
from ..lang.diagnose import backward_message, overflow_message, tangent_message
from ..lang.ir import is_constant, unseen
from ..lang.program import Assignment, RunLog
from ..ops import library as gc
from ..results import (
    HVP,
    JVP,
    VJP,
    Check,
    Coo,
    Difference,
    Grads,
    Graph,
    GraphNode,
    Hessian,
    Jacobian,
    Plot,
    Values,
)
from .outputs import (
    Asked,
    Vectors,
    one_output,
    outputs_asked,
    per_output,
    refuse_several,
    several,
    vectors_for,
)

DTYPES = {"float64": np.float64, "float32": np.float32}


@record(kw_only=False, frozen=False, eq=True)
class Bound:
    """A program with a value for each input, and which inputs require grad."""

    program: ParsedProgram
    arrays: dict[str, np.ndarray]
    requires_grad: dict[str, bool]
    dtype: type
    log: RunLog = field(default_factory=RunLog)
    seed: int = 0  # --seed: rand/randn values, and dropout's masks
    # what the inputs brought: NaN or inf given (which --strict refuses after the run), and
    # finite values the dtype could not hold (a warning; an error under --strict)
    nonfinite_inputs: list[str] = field(default_factory=list)
    overflowed: list[str] = field(default_factory=list)

    def leaves(self) -> dict[str, gc.Tensor]:
        """Fresh leaf tensors for one run of the program."""
        return {
            name: gc.Tensor(array, requires_grad=self.requires_grad[name])
            for name, array in self.arrays.items()
        }

    def run(self, leaves: dict[str, gc.Tensor]) -> dict[str, gc.Tensor]:
        with gc.dropout_seed(self.seed):  # every run drops the same elements
            return self.program.run(leaves, self.log)

    def engine(self, action):
        """Run ``action`` on the engine, reporting the nodes whose reverse rule first made a
        nan or inf. Its refusals are ``EngineError``s, which the command line reports by kind."""
        with np.errstate(all="ignore"), gc.watch_nonfinite() as found:
            result = action()
        for node in found:
            if isinstance(node, gc.NonfiniteTangent):
                self.log.nonfinite.append(tangent_message(node))
            else:
                self.log.nonfinite.append(backward_message(node, self.log.origins))
        return result

    def messages(self, *extra: str) -> tuple[str, ...]:
        """The warnings of all runs so far, each once: notes, then non-finite values."""
        return tuple(dict.fromkeys([*self.log.notes, *self.log.nonfinite, *extra]))


def _did_you_mean(name: str, choices) -> str | None:
    """A close name among ``choices``; else, for a name not plain ASCII, what it holds."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    return None if name.isascii() else _not_ascii(name)


def _not_ascii(name: str) -> str:
    """Which letters of ``name`` only look like ASCII ones (a Cyrillic 'х' is not an 'x')."""
    from ..lang.syntax import character_name

    letters = ", ".join(
        f"{c!r} is {character_name(c)}" for c in dict.fromkeys(name) if not c.isascii()
    )
    return f"{name!r} is not plain ASCII: {letters}"


def _inputs_are(inputs: list[str]) -> str:
    """The program's inputs, with a note on any name that only looks like ASCII."""
    notes = [_not_ascii(name) for name in inputs if not name.isascii()]
    names = [name.split("#")[0] for name in inputs if not is_constant(name)]
    return "; ".join([f"its inputs are: {listing(names, empty='none')}", *notes[:LISTED]])


def bind(
    program: ParsedProgram,
    given: dict[str, np.ndarray],
    wrt: list[str] | None = None,
    dtype: str = "float64",
    seed: int = 0,
    defaults: dict[str, np.ndarray] | None = None,
    tangents: Sequence[str] = (),
) -> Bound:
    """Give every input a value (from ``given``, its declared default, or ``defaults``) and a
    grad flag. ``defaults`` stand in for values a command makes itself (plot varies an input
    over a range, --batch has points for them); like ``given``, they decide whether ``x0``
    means ``x[0]``.

    Without ``wrt``, every input requires grad except those declared by a constructor without
    ``requires_grad=True`` (as in PyTorch, ``x = ones(8)`` is a constant). An input of
    gradcli's own ``tensor([1, 2])`` (whole numbers: int64) that is differentiated (it
    requires grad, ``wrt`` or ``tangents`` name it) is a floating input, as it was before
    integer tensors; torch's spelling ``torch.tensor([1, 2])`` is int64 whatever is asked.
    """
    if dtype not in DTYPES:
        raise GradcliError(f"unknown dtype {dtype!r}", hint="use float64 (default) or float32")
    # an input that PyTorch code writes into (x = torch.zeros(3); x[0] = ...) is given by its
    # own name, though the program calls its first value x#0
    given = {program.input_name(name): array for name, array in given.items()}
    wrt = None if wrt is None else [program.input_name(name) for name in wrt]
    defaults = defaults or {}
    inputs = program.inputs(set(given) | set(defaults))
    used = set(inputs)
    for name in wrt or ():
        if name not in used:
            raise GradcliError(
                f"--wrt names {name!r}, which is not an input of the program",
                hint=_did_you_mean(name, used) or _inputs_are(inputs),
            )
    for name in given:
        if name not in used:
            raise GradcliError(
                f"a value was given for {name!r}, but the program has no input {name!r}",
                hint=_did_you_mean(name, used) or _inputs_are(inputs),
            )
    with bounds.charging(bounds.Tally()):  # the inputs together, each before it is built
        return _bind(program, inputs, given, wrt, dtype, seed, defaults, tangents)


def _bind(
    program: ParsedProgram,
    inputs: list[str],
    given: dict[str, np.ndarray],
    wrt: list[str] | None,
    dtype: str,
    seed: int,
    defaults: dict[str, np.ndarray],
    tangents: Sequence[str],
) -> Bound:
    """``bind``'s values, once the names are checked."""
    arrays, requires_grad = {}, {}
    made: dict[str, np.ndarray] = {}  # the values the program's constructors make
    for name in inputs:
        declared_grad = True
        if name in given:
            array = given[name]
            bounds.check_bytes(np.asarray(array).nbytes, f"the input {name}")
            if name in program.declared:
                declared_grad = program.declared_value(name, seed, build=False)[1]
        elif name in program.declared:
            built, declared_grad = program.declared_value(name, seed)
            assert built is not None  # declared_value builds unless told not to
            array = made[name] = built
        elif name in defaults:
            array = defaults[name]
        else:
            flag = "--x VALUE" if name == "x" else f"-i {name}=VALUE"
            hint = f"give it with {flag}"
            if not name.isascii():
                hint += f"; note: {_not_ascii(name)}"
            raise GradcliError(f"no value for the input {name!r}", hint=hint)
        integral, written = (
            program.declared_dtype(name) if name in program.declared else (None, False)
        )
        wants_grad = declared_grad if wrt is None else name in wrt
        differentiated = wants_grad or name in tangents
        if integral is None or (differentiated and not written):
            arrays[name] = np.asarray(array, dtype=_input_dtype(array, DTYPES[dtype]))
            requires_grad[name] = wants_grad
            continue
        if wants_grad:
            raise GradcliError(
                f"{name.split('#')[0]} is an integer tensor ({integral}): only Tensors of "
                "floating point and complex dtype can require gradients",
                hint="write its numbers as floats (tensor([1., 2.])) to differentiate it",
            )
        arrays[name] = integer_input(name.split("#")[0], array, integral)
        requires_grad[name] = False
    bound = Bound(program, arrays, requires_grad, DTYPES[dtype], seed=seed)
    for name, array in arrays.items():
        if name in made:  # written in the program: its statement is where it appears
            _check_input(bound, name, made[name], array, program.declared[name])
        else:
            _check_input(bound, name, given.get(name, defaults.get(name)), array)
    return bound


def _input_dtype(array: np.ndarray, floating: type) -> np.dtype:
    """An input's dtype: the run's floating dtype, or for a complex value the complex dtype
    that follows it (complex64 with float32, as torch's default complex dtype follows its
    default floating dtype)."""
    if np.asarray(array).dtype.kind != "c":
        return np.dtype(floating)
    return np.dtype(np.complex64 if np.dtype(floating).itemsize <= 4 else np.complex128)


def integer_input(name: str, array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The value of an integer (or boolean) input: whole numbers (0 and 1), kept as such."""
    values = np.asarray(array)
    if values.dtype.kind == "f" and not np.all(values == np.round(values)):
        raise GradcliError(
            f"{name} is an integer tensor ({dtype}): its values must be whole numbers",
            hint=f"give whole numbers, e.g. -i {name}=0,2",
        )
    if dtype == np.bool_ and not np.all((values == 0) | (values == 1)):
        raise GradcliError(
            f"{name} is a boolean tensor: its values must be 0 or 1",
            hint=f"give 0 and 1, e.g. -i {name}=1,0",
        )
    return values.astype(dtype)


def _check_input(
    bound: Bound, name: str, original, array: np.ndarray, made: Assignment | None = None
) -> None:
    """Note what ``array``, the value of input ``name`` as computed in (converted from
    ``original``, when given), holds that is not finite, and where it came from: ``made``,
    the statement of a value the program makes (``full(2, 2, 1e400)``, a declared input's
    default), or the value given for it."""
    if array.dtype.kind != "f" or bool(np.isfinite(array).all()):
        return
    label = f"the input {name}"
    if made is not None:
        statement = made.statement
        label = f"{statement.where} `{statement.text}`: {made.constructor}"
    bad = ~np.isfinite(array)
    if original is not None:
        with np.errstate(all="ignore"):
            before = np.asarray(original, dtype=np.float64)
        lost = bad & np.isfinite(before)
        if lost.any():
            limit = float(np.finfo(array.dtype).max)
            first = float(before[lost].reshape(-1)[0])
            message = (
                f"{label}: {plural(int(lost.sum()), 'finite value')} beyond "
                f"{array.dtype}'s range (±{limit:.4g}) became ±inf (the first: {first:g})"
            )
            bound.overflowed.append(message)
            bound.log.notes.append(message)
            bad &= ~lost
    if bad.any():
        nans = int(np.isnan(array[bad]).sum())
        infs = int(bad.sum()) - nans
        kinds = ((nans, plural(nans, "NaN")), (infs, plural(infs, "inf")))
        held = " and ".join(text for count, text in kinds if count)
        index = ", ".join(str(int(i)) for i in np.argwhere(bad)[0])
        if made is not None:  # a warning at the statement, as for any value it computes
            written = overflow_message(made.statement) or f"{label} holds {held}"
            if written not in bound.log.nonfinite:
                bound.log.nonfinite.append(written)
            return
        where = "" if array.ndim == 0 else f" (the first at {name}[{index}])"
        bound.nonfinite_inputs.append(f"{label} holds {held}{where}")


def plural(count: int, thing: str) -> str:
    """``1 NaN``, ``3 NaNs``, ``2 finite values``, with thousands separated."""
    return f"{count:,} {thing}" if count == 1 else f"{count:,} {thing}s"


def no_gradient(name: str, out: gc.Tensor) -> GradcliError:
    """The error for the gradient of an output that has none: a boolean (a comparison's
    result, in PyTorch's words), or a value no input that requires grad reaches."""
    if out.dtype == np.bool_:
        return GradcliError(
            f"the output {name} is a boolean, which carries no gradient: element 0 of tensors "
            "does not require grad and does not have a grad_fn",
            hint="differentiate a number made with it, as where(x > 0, x, 0) or x * (x > 0)",
        )
    return GradcliError(
        f"the output {name} does not depend on any input that requires grad",
        hint="choose inputs with --wrt",
    )


def _check_names(names: list[str], env: dict, what: str, every: bool = False) -> None:
    """Refuse a name the program does not define, suggesting a close one; with ``every``,
    listing the names there are as well."""
    for name in names:
        if name not in env:
            close = _did_you_mean(name, env)
            listed = f"names are: {listing(env)}"
            raise GradcliError(
                f"{what} names {name!r}, which the program does not define",
                hint=f"{close} ({listed})" if close and every else close or listed,
            )


def output_of(bound: Bound, env: dict, of: Asked) -> tuple[str, gc.Tensor]:
    """The output ``of`` names (one), or the program's default output."""
    of = one_output(of)
    name = of or bound.program.default_output()
    if of is None and name not in env:  # elements of different shapes do not make a vector
        name = bound.program.targets[-1]
    _check_names([name], env, "--of", every=True)
    return name, env[name]


def vector_like(v, like: np.dtype, dtype, what: str) -> np.ndarray:
    """A vector (v, a tangent) for a tensor of dtype ``like``: in the run's ``dtype``, or in
    ``like`` where that is complex; a complex vector for a real tensor is refused (it would
    lose its imaginary part)."""
    if np.asarray(v).dtype.kind == "c" and like.kind != "c":
        raise GradcliError(
            f"{what} is complex, but the tensor it is for is real ({like})",
            hint="give a real vector; a complex one is for a complex tensor",
        )
    return np.asarray(v, dtype=like if like.kind == "c" else dtype)


def _cotangent(
    v: np.ndarray | None, out: gc.Tensor, name: str, dtype, given: str = "--v"
) -> gc.Tensor | None:
    """v as the cotangent of ``out``; ``given`` names where v came from."""
    if v is None:
        return None
    v = vector_like(v, out.dtype, dtype, f"{given} (for the output {name})")
    if v.shape != out.shape:
        raise GradcliError(
            f"{given} has shape {v.shape} but the output {name} has shape {out.shape}",
            hint=f"give a vector v of shape {out.shape}",
        )
    return gc.Tensor(v)


def evaluate(bound: Bound, of: str | None = None) -> Values:
    """The value of every input and every assigned name (``of``, when given, must be one)."""
    env = bound.run(bound.leaves())
    return Values(
        output=output_of(bound, env, of)[0],
        values={name: t.data for name, t in env.items() if not unseen(name)},
        warnings=bound.messages(),
    )


def grad(
    bound: Bound,
    of: Asked = None,
    v: Vectors = None,
    show: Sequence[str] = (),
    retain: Sequence[str] = (),
    repeat: int = 1,
    symbolic: bool = False,
) -> Grads:
    """``out.backward(v)`` (``repeat`` times), then ``.grad`` of every input and shown node;
    with ``symbolic``, sympy's formulas of the inputs' gradients too. Of several outputs
    (``of`` "y,z"), ``torch.autograd.backward([y, z], grad_tensors=v)``: the sums of their
    gradients, each output scalar or given its vector."""
    if repeat < 1:
        raise GradcliError("--repeat must be at least 1")
    joint = _together(of, symbolic)
    leaves = bound.leaves()
    env = bound.run(leaves)
    _check_names([*show, *retain], env, "--show/--retain-grad")
    for node in retain:
        if env[node].is_leaf:
            continue
        env[node].retain_grad()
    calls = _backward_calls(bound, env, of, v)
    for call in calls if joint else ():
        _implicit(call)
    for r in range(repeat):  # the graph is kept for the next repetition
        bounds.tick(f"backward pass {r + 1} of {repeat}")
        for call in calls:
            out, gradient, inputs = call.out, call.cotangent, call.inputs
            if call.zero:
                _zero_grad(call.name, out)
                continue
            if not out.requires_grad:
                raise no_gradient(call.name, out)
            keep = call.keep or r < repeat - 1
            if inputs is None:
                bound.engine(lambda o=out, g=gradient, k=keep: o.backward(g, retain_graph=k))
            else:  # torch.autograd.grad(out, inputs): the gradients of those inputs alone
                _accumulate_into(bound, out, gradient, keep, [env[i] for i in inputs])
    messages: list[str] = []
    shown = [n for n in dict.fromkeys([*show, *retain]) if n not in leaves]
    result = Grads(
        **_outputs(calls, joint),
        grads=_grads_of(env, [n for n in leaves if not unseen(n)], messages),
        shown=_grads_of(env, shown, messages),
        warnings=bound.messages(*messages),
    )
    return _with_formulas_of(result, bound, calls) if symbolic else result


def _implicit(call: _Pass) -> None:
    """torch's refusal of an output that is not a scalar and has no vector, naming it."""
    if call.cotangent is None and call.out.numel() != 1:
        shape = tuple(call.out.shape)
        raise GradcliError(
            f"grad can be implicitly created only for scalar outputs: {call.name} has shape "
            f"{shape}",
            hint=f"give a vector for each output, e.g. --v {call.name}='ones{shape}' (one --v "
            "NAME=VALUE per output)",
        )


def _with_formulas_of(result: Symbolic, bound: Bound, calls: list[_Pass]) -> Symbolic:
    """``with_formulas`` for the cotangent of the one backward pass that made ``result``."""
    from dataclasses import replace

    passes = sum(not c.zero for c in calls)
    if len(calls) > 1:
        why = "no symbolic form: " + (
            f"the program calls backward {passes} times"
            if passes > 1
            else "the program resets a .grad (x.grad.zero_())"
        )
        return replace(result, warnings=(*result.warnings, why))
    cotangent = calls[0].cotangent
    return with_formulas(result, bound, None if cotangent is None else cotangent.data)


def _accumulate_into(
    bound: Bound, out: gc.Tensor, cotangent: gc.Tensor | None, keep: bool, inputs: list
) -> None:
    """``out.backward(cotangent, inputs=inputs)``: ``.grad`` of those inputs alone."""
    for i, tensor in enumerate(inputs):
        if not tensor.requires_grad:
            raise GradcliError(
                f"input {i} of torch.autograd.grad does not require grad: One of the "
                "differentiated Tensors does not require grad",
                hint="make it with requires_grad=True",
            )
    found = bound.engine(
        lambda: gc.grad(out, inputs, cotangent, retain_graph=keep, allow_unused=True)
    )
    for tensor, g in zip(inputs, found):
        if g is not None:
            tensor.grad = g if tensor.grad is None else tensor.grad + g


class _Pass(NamedTuple):
    """A backward pass to run: of ``out`` (named ``name``) with ``cotangent``, to ``inputs``
    (None: every leaf); or, with ``zero``, the reset of ``out.grad`` (x.grad.zero_())."""

    name: str
    out: gc.Tensor
    cotangent: gc.Tensor | None
    keep: bool
    inputs: tuple[str, ...] | None = None
    zero: bool = False


def _zero_grad(name: str, tensor: gc.Tensor) -> None:
    """``tensor.grad.zero_()``."""
    if tensor.grad is None:
        raise GradcliError(
            f"{name}.grad is None where the program calls {name}.grad.zero_() ('NoneType' "
            "object has no attribute 'zero_')",
            hint=f"call backward() on an output of {name} first",
        )
    tensor.grad = gc.Tensor(np.zeros_like(tensor.grad.data))


def _backward_calls(bound: Bound, env: dict, of: Asked, v: Vectors) -> list[_Pass]:
    """The backward passes to run: the program's own ``y.backward(v)``,
    ``torch.autograd.grad(y, inputs, v)`` and ``x.grad.zero_()`` where it has passes and the
    command names neither --of nor --v, else one pass of each output of --of (the default
    output) with its vector of ``v`` (see ``outputs.vectors_for``), the graph kept for the
    next."""
    if of is None and v is None and bound.program.passes:
        calls = []
        for call in bound.program.backward:
            named = [call.output, *filter(None, [call.gradient]), *(call.inputs or ())]
            _check_names(named, env, "backward")
            out = env[call.output]
            if call.zero_grad:
                calls.append(_Pass(call.output, out, None, False, zero=True))
                continue
            gradient = None if call.gradient is None else env[call.gradient].data
            cotangent = _cotangent(gradient, out, call.output, bound.dtype, str(call.gradient))
            calls.append(_Pass(call.output, out, cotangent, call.retain_graph, call.inputs))
        return calls
    names = outputs_asked(of) or [output_of(bound, env, None)[0]]
    calls = []
    for k, vector in enumerate(vectors_for(names, v)):
        name, out = output_of(bound, env, names[k])
        given = "--v" if len(names) == 1 else f"--v {name}"
        cotangent = _cotangent(vector, out, name, bound.dtype, given)
        calls.append(_Pass(name, out, cotangent, k < len(names) - 1))  # one graph for all
    return calls


def _together(of: Asked, symbolic: bool) -> bool:
    """Whether ``of`` names several outputs, refusing ``--symbolic`` for them."""
    if symbolic:
        refuse_several(of, "--symbolic")
    return several(of)


def _outputs(calls: list[_Pass], joint: bool) -> dict:
    """The result's fields that name its output: the last pass's, or for ``joint`` outputs
    (several, differentiated together) all of theirs (see ``results.Derivatives``)."""
    if not joint:
        last = next(c for c in reversed(calls) if not c.zero)
        return {"output": last.name, "value": last.out.data}
    outputs = {c.name: c.out.data for c in calls}
    return {"output": ",".join(outputs), "value": calls[0].out.data, "outputs": outputs}


def _grads_of(env: dict, names, messages: list[str]) -> dict[str, np.ndarray | None]:
    """``.grad`` of each of ``names``; PyTorch's warnings on reading it go to ``messages``."""
    grads = {}
    for node in names:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = env[node].grad
        messages.extend(f"{node}.grad: {w.message}" for w in caught)
        grads[node] = None if value is None else value.data
    return grads


def vjp(
    bound: Bound,
    of: Asked = None,
    v: Vectors = None,
    wrt: list[str] | None = None,
    symbolic: bool = False,
) -> VJP:
    """``torch.autograd.grad(out, wrt, grad_outputs=v)``: J^T v per name; nothing accumulates.
    With ``symbolic``, sympy's formulas of the inputs' products too. Of several outputs
    (``of`` "y,z", ``v`` a vector each: see ``outputs.vectors_for``), the sum of their J^T v,
    as ``torch.autograd.grad([y, z], wrt, grad_outputs=[vy, vz])``."""
    joint = _together(of, symbolic)
    leaves = bound.leaves()
    env = bound.run(leaves)
    calls = _backward_calls(bound, env, of, v)
    passes = [c for c in calls if not c.zero]
    asked = [i for call in passes for i in call.inputs or ()]
    every = [n for n, leaf in leaves.items() if leaf.requires_grad]
    # the inputs of the program's torch.autograd.grad calls, where they all name them
    targets = wrt or (list(dict.fromkeys(asked)) if all(c.inputs for c in passes) else every)
    _check_names(targets, env, "--wrt")
    tensors = [env[t] for t in targets]
    for t, tensor in zip(targets, tensors):
        if not tensor.requires_grad:
            raise GradcliError(f"{t} does not require grad", hint="name it in --wrt")
    grads: dict[str, np.ndarray] = {
        t: np.zeros(x.shape, x.dtype if x.dtype.kind == "c" else bound.dtype)
        for t, x in zip(targets, tensors)
    }
    for name, out, cotangent, _, inputs, zero in calls:
        if zero:  # x.grad.zero_(): what the passes before it gave x is dropped
            if name in grads:
                grads[name] = np.zeros_like(grads[name])
            continue
        if cotangent is None and out.numel() != 1:
            flag = f"--v {name}=" if joint else "--v "
            raise GradcliError(
                f"the output {name} has shape {out.shape}: vjp needs the vector v",
                hint=f"give --v with shape {out.shape}, e.g. {flag}'ones{tuple(out.shape)}'",
            )
        if out.requires_grad:  # the sum of J^T v over the program's backward calls
            found = bound.engine(
                lambda o=out, c=cotangent: gc.grad(
                    o, tensors, c, retain_graph=True, allow_unused=True
                )
            )
            for t, g in zip(targets, found):
                if g is not None and (inputs is None or t in inputs):
                    grads[t] = grads[t] + g.data
    result = VJP(**_outputs(calls, joint), grads=grads, warnings=bound.messages())
    return _with_formulas_of(result, bound, calls) if symbolic else result


MODES = ("auto", "forward", "reverse", "dense")
# a Jacobian of more elements than this whose pattern is sparse is given sparse (COO)
AUTO_SPARSE = 1 << 20


@per_output
def jacobian(
    bound: Bound,
    of: Asked = None,
    wrt: list[str] | None = None,
    transpose: bool = False,
    mode: str = "auto",
    symbolic: bool = False,
    sparse: bool | None = None,
) -> Jacobian:
    """d out / d input for each ``wrt`` input, laid out output.shape + input.shape (with
    ``transpose``, input.shape + output.shape); with ``symbolic``, sympy's formulas too.

    ``auto`` takes the Jacobian's structure where it pays (``engine.structured``: its
    sparsity pattern, then one pass per colour of columns or rows, or a row scaling of a
    product with a constant matrix); elsewhere, and always in the other modes, all basis
    vectors go through one traced pass at once: a batched VJP (``reverse``, one row per output
    element) or a batched JVP (``forward``, one column per input element); ``dense`` picks
    forward mode when the inputs have fewer elements than the output. With ``sparse`` (or,
    when it is None, where the pattern is sparse and the dense Jacobian would have more than
    ``AUTO_SPARSE`` elements), the blocks are given as coordinates of their non-zeros.

    Of several outputs (``of`` "y,z"), jvp, hessian, hvp and check too: one answer each, in a
    ``Several`` (``outputs.per_output``).
    """
    if mode not in MODES:
        raise GradcliError(f"unknown mode {mode!r}", hint=f"use one of {', '.join(MODES)}")
    if sparse and symbolic:
        raise _no_sparse_formulas()
    targets = _targets(bound, wrt)
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    function = _function_of(bound, name, targets)
    start = tuple(gc.Tensor(bound.arrays[t]) for t in targets)
    most = bounds.limits().max_elements
    found = _structured(bound, function, start, most) if mode == "auto" else None
    if found is not None:
        return _structured_result(bound, name, out, targets, found, transpose, sparse, symbolic)
    n_in = _jacobian_inputs(bound, name, out, targets)
    if mode in ("auto", "dense"):
        mode = "forward" if n_in < out.numel() else "reverse"
        why = f"{n_in} input elements {'<' if mode == 'forward' else '>='} {out.numel()} outputs"
    else:
        why = "as asked"
    blocks = bound.engine(
        lambda: gc.jacobian(
            function, start, strategy=f"{mode}-mode", vectorize=True, max_batch_elements=most
        )
    )
    jac = {}
    for t, block in zip(targets, blocks):
        jac[t] = _transposed(block.data, out.ndim) if transpose else block.data
    coo = {}
    if sparse:
        from ..engine.structured import Sparse

        for t, block in zip(targets, blocks):
            found_coo = Sparse.of(block.data.reshape(out.numel(), -1))
            coo[t] = _coo(found_coo, transpose, bound.arrays[t].shape)
        jac = {}
    result = Jacobian(
        output=name,
        value=out.data,
        jacobians=jac,
        transposed=transpose,
        method=mode,
        reason=why,
        warnings=bound.messages(),
        sparse=coo,
    )
    return with_formulas(result, bound) if symbolic else result


def _structured(bound: Bound, function, start, most: int):
    """The structured Jacobian (``engine.structured``), or None where it does not pay."""
    from ..engine.structured import NotStructured, structured_jacobian

    try:
        return bound.engine(lambda: structured_jacobian(function, start, most))
    except NotStructured:
        return None


def _coo(block, transpose: bool, input_shape: tuple[int, ...]) -> Coo:
    """An engine ``Sparse`` block as the result's coordinates (swapped for J^T)."""
    if transpose:
        swapped = (block.shape[1], block.shape[0])
        return Coo(block.cols, block.rows, block.values, swapped, input_shape)
    return Coo(block.rows, block.cols, block.values, block.shape, input_shape)


def _structured_result(
    bound: Bound,
    name: str,
    out,
    targets,
    found,
    transpose: bool,
    sparse: bool | None,
    symbolic: bool,
) -> Jacobian:
    """The result of a structured Jacobian: dense blocks, or (``sparse``, or sparse and
    large) coordinates."""
    from ..engine.structured import Sparse

    n_in = sum(bound.arrays[t].size for t in targets)
    dense_size = out.numel() * n_in
    nonzeros = sum(b.values.size if isinstance(b, Sparse) else b.size for b in found.blocks)
    large = dense_size > AUTO_SPARSE and nonzeros * 10 <= dense_size
    as_sparse = bool(sparse) or (sparse is None and large)
    jac, coo = {}, {}
    if as_sparse:
        bounds.check_elements(nonzeros, f"the non-zeros of the Jacobian of {name}")
        for t, block in zip(targets, found.blocks):
            as_coo = block if isinstance(block, Sparse) else Sparse.of(block)
            coo[t] = _coo(as_coo, transpose, bound.arrays[t].shape)
    else:
        _jacobian_inputs(bound, name, out, targets)
        for t, block in zip(targets, found.blocks):
            matrix = block.dense() if isinstance(block, Sparse) else block
            dense = matrix.reshape(out.shape + bound.arrays[t].shape)
            jac[t] = _transposed(dense, out.ndim) if transpose else dense
    passes = f"{found.passes} pass{'es' * (found.passes != 1)}"
    result = Jacobian(
        output=name,
        value=out.data,
        jacobians=jac,
        transposed=transpose,
        method="structured",
        reason=f"{found.how} ({passes}; --mode dense for the dense passes)",
        warnings=bound.messages(),
        sparse=coo,
    )
    if symbolic and coo:
        raise _no_sparse_formulas()
    return with_formulas(result, bound) if symbolic else result


def _no_sparse_formulas() -> GradcliError:
    return GradcliError(
        "--symbolic gives dense formulas, and this Jacobian is sparse",
        hint="leave out --symbolic, or take a smaller instance without --sparse",
    )


def _jacobian_inputs(bound: Bound, name: str, out: gc.Tensor, targets: list[str]) -> int:
    """How many input elements ``targets`` have, once their Jacobian with ``out`` is known to
    fit ``--max-elements``."""
    real_numbers(name, out)
    n_in = sum(bound.arrays[t].size for t in targets)
    bounds.check_elements(out.numel() * n_in, f"the Jacobian of {name}")
    return n_in


def _transposed(jacobian: np.ndarray, out_ndim: int) -> np.ndarray:
    """J laid out output.shape + input.shape, as J^T: input.shape + output.shape."""
    axes = tuple(range(out_ndim, jacobian.ndim)) + tuple(range(out_ndim))
    return np.transpose(jacobian, axes)


def _function_of(bound: Bound, name: str, targets: list[str]):
    """The program as a function of the ``targets`` inputs, the others held at their values."""

    def function(*values):
        leaves = {n: gc.Tensor(array) for n, array in bound.arrays.items()}
        leaves.update(zip(targets, values))
        return bound.run(leaves)[name]

    return function


# The commands that take complex numbers; the others (a Jacobian, a Hessian, check, plot,
# derivative, uncertainty) refuse them, as torch.autograd.functional.jacobian refuses a
# complex output: PyTorch defines the gradient of a real function of complex numbers, not a
# complex Jacobian
COMPLEX_COMMANDS = "eval, grad, vjp, jvp and run"


def real_numbers(name: str, tensor: gc.Tensor | np.ndarray) -> None:
    """Refuse a complex input or output where the command takes real numbers only."""
    if np.asarray(tensor.data if isinstance(tensor, gc.Tensor) else tensor).dtype.kind == "c":
        raise GradcliError(
            f"{name} is complex: this command takes real numbers only (complex numbers are "
            f"for {COMPLEX_COMMANDS}, with PyTorch's gradients of real functions of them)",
            hint="differentiate a real function (abs(z)**2, z.real) with grad or vjp, or give "
            "the real and imaginary parts as inputs of their own: z = complex(a, b)",
        )


def _targets(bound: Bound, wrt: list[str] | None) -> list[str]:
    for name, array in bound.arrays.items():
        real_numbers(name, array)
    targets = wrt or [n for n in bound.arrays if bound.requires_grad[n]]
    _check_names(targets, bound.arrays, "--wrt")
    if not targets:
        raise GradcliError("no input requires grad", hint="name the inputs with --wrt")
    return targets


def _scalar_output(name: str, out: gc.Tensor, command: str) -> None:
    real_numbers(name, out)
    if out.numel() != 1:
        raise GradcliError(
            f"{command} needs a scalar output, but {name} has shape {out.shape}",
            hint="choose a scalar output with --of, or reduce it, e.g. out = sum(y)",
        )


@per_output
def jvp(bound: Bound, of: Asked, tangents: dict[str, np.ndarray]) -> JVP:
    """Forward mode: J t, with a tangent per input (zero where none is given)."""
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    names = list(bound.arrays)
    vectors = [gc.Tensor(t) for t in tangents_of(bound, tangents).values()]
    function = _function_of(bound, name, names)
    start = tuple(gc.Tensor(bound.arrays[n]) for n in names)
    _, tangent = bound.engine(lambda: gc.jvp(function, start, vectors))
    return JVP(output=name, value=out.data, tangent=tangent.data, warnings=bound.messages())


def tangents_of(bound: Bound, tangents: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """jvp's tangent of every input (zero where --t gives none), checked against its shape."""
    _check_names(list(tangents), bound.arrays, "--t")
    found = {}
    for n in bound.arrays:
        tangent = tangents.get(n)
        if tangent is None:
            tangent = np.zeros(bound.arrays[n].shape)
        tangent = vector_like(tangent, bound.arrays[n].dtype, bound.dtype, f"--t {n}")
        if tangent.shape != bound.arrays[n].shape:
            raise GradcliError(
                f"the tangent of {n} has shape {tangent.shape}, but {n} has shape "
                f"{bound.arrays[n].shape}",
                hint=f"give --t {n}=VALUE with shape {bound.arrays[n].shape}",
            )
        found[n] = tangent
    return found


@per_output
def hessian(bound: Bound, of: Asked = None, wrt: list[str] | None = None) -> Hessian:
    """Second derivatives of a scalar output for each pair of ``wrt`` inputs."""
    targets = _targets(bound, wrt)
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    _scalar_output(name, out, "hessian")
    bounds.check_elements(sum(bound.arrays[t].size for t in targets) ** 2, f"the Hessian of {name}")
    function = _function_of(bound, name, targets)
    start = tuple(gc.Tensor(bound.arrays[t]) for t in targets)
    blocks = bound.engine(lambda: gc.hessian(lambda *xs: function(*xs).reshape(()), start))
    return Hessian(
        output=name,
        value=out.data,
        blocks={
            (a, b): blocks[i][j].data for i, a in enumerate(targets) for j, b in enumerate(targets)
        },
        warnings=bound.messages(),
    )


@per_output
def hvp(
    bound: Bound, of: Asked, vectors: dict[str, np.ndarray], wrt: list[str] | None = None
) -> HVP:
    """H v of a scalar output without forming H (a double backward pass)."""
    targets = hvp_targets(bound, vectors, wrt)
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    _scalar_output(name, out, "hvp")
    v = tuple(hvp_vectors(bound, targets, vectors).values())
    function = _function_of(bound, name, targets)
    start = tuple(gc.Tensor(bound.arrays[t]) for t in targets)
    _, products = bound.engine(
        lambda: gc.hvp(lambda *xs: function(*xs).reshape(()), start, tuple(gc.Tensor(a) for a in v))
    )
    return HVP(
        output=name,
        value=out.data,
        products={t: p.data for t, p in zip(targets, products)},
        warnings=bound.messages(),
    )


def hvp_targets(bound: Bound, vectors: dict, wrt: list[str] | None) -> list[str]:
    """The inputs of hvp: --wrt, else those --v gives vectors for, else all that require grad."""
    return _targets(bound, wrt or list(vectors) or None)


def hvp_vectors(bound: Bound, targets: list[str], vectors: dict) -> dict[str, np.ndarray]:
    """hvp's vector v of each target, checked against its shape."""
    missing = [t for t in targets if t not in vectors]
    if missing:
        raise GradcliError(
            f"no vector v for {listing(missing)}",
            hint="give --v VALUE for x, or --v NAME=VALUE for each input",
        )
    found: dict[str, np.ndarray] = {t: np.asarray(vectors[t], dtype=bound.dtype) for t in targets}
    for t, vector in found.items():
        if vector.shape != bound.arrays[t].shape:
            raise GradcliError(
                f"v for {t} has shape {vector.shape}, but {t} has shape {bound.arrays[t].shape}",
                hint=f"give --v {t}=VALUE of shape {bound.arrays[t].shape}",
            )
    return found


def finite_difference_jacobian(function, point: np.ndarray, out_shape, dtype) -> np.ndarray:
    """Central differences, step eps^(1/3) scaled to each coordinate's magnitude."""
    eps = np.finfo(dtype).eps
    columns = []
    flat = point.reshape(-1)
    for k in range(flat.size):
        bounds.tick(f"finite differences, element {k + 1} of {flat.size}")
        h = eps ** (1 / 3) * max(1.0, abs(float(flat[k])))
        plus, minus = flat.copy(), flat.copy()
        plus[k] += h
        minus[k] -= h
        f_plus = function(gc.Tensor(plus.reshape(point.shape))).data
        f_minus = function(gc.Tensor(minus.reshape(point.shape))).data
        columns.append((f_plus - f_minus) / (2 * h))
    if not columns:
        return np.zeros(tuple(out_shape) + point.shape, dtype)
    return np.stack(columns, axis=-1).reshape(tuple(out_shape) + point.shape)


CHECK_PASSES = 10_000  # check's methods go element by element: more would take minutes


@per_output
def check(
    bound: Bound,
    of: Asked = None,
    wrt: list[str] | None = None,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> Check:
    """The Jacobian three or four independent ways, and whether they agree."""
    from ..domains.symbolic import symbolic_jacobian

    targets = _targets(bound, wrt)
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    check_size(bound, name, out, targets, atol, rtol)
    methods: dict[str, dict[str, np.ndarray]] = {
        "reverse": {},
        "forward": {},
        "finite differences": {},
    }
    with np.errstate(all="ignore"):
        for t in targets:

            def function(value, t=t):
                return _function_of(bound, name, [t])(value)

            start = gc.Tensor(bound.arrays[t])
            for method, strategy in (("reverse", "reverse-mode"), ("forward", "forward-mode")):
                with bounds.doing(f"computing the Jacobian of {name} by {t} in {method} mode"):
                    methods[method][t] = bound.engine(
                        lambda f=function, s=start, how=strategy: gc.jacobian(f, s, strategy=how)
                    ).data
            with bounds.doing(f"computing the Jacobian of {name} by {t} by finite differences"):
                methods["finite differences"][t] = finite_difference_jacobian(
                    function, bound.arrays[t], out.shape, bound.dtype
                )
    notes = _cut_gradients(bound.program)
    symbolic, reason = symbolic_jacobian(bound, name, targets)
    if symbolic is not None:
        methods["symbolic"] = symbolic
    else:
        notes.append(f"no symbolic check: {reason}")
    worst = []
    agree = True
    reference = methods["reverse"]
    for method, jacobians in methods.items():
        if method == "reverse":
            continue
        for t in targets:
            a, b = reference[t], jacobians[t]
            bad = ~np.isclose(b, a, rtol=rtol, atol=atol, equal_nan=True)
            if bad.any():
                agree = False
                for index in map(tuple, np.argwhere(bad)[:10]):  # argwhere: 0-d arrays too
                    at = tuple(int(i) for i in index)
                    worst.append(Difference(method, t, at, float(b[index]), float(a[index])))
    return Check(
        output=name,
        value=out.data,
        jacobians=methods,
        agree=agree,
        worst=tuple(worst[:10]),
        warnings=bound.messages(*notes),
    )


def check_size(
    bound: Bound, name: str, out: gc.Tensor, targets: list[str], atol: float, rtol: float
) -> None:
    """Refuse tolerances that are not finite numbers >= 0, and a Jacobian too large for
    check's passes element by element."""
    for option, tolerance in (("--atol", atol), ("--rtol", rtol)):
        if not (np.isfinite(tolerance) and tolerance >= 0):
            raise GradcliError(
                f"{option} must be a finite number >= 0, got {tolerance}", hint="e.g. 1e-5"
            )
    n_in = _jacobian_inputs(bound, name, out, targets)
    if max(n_in, out.numel()) > CHECK_PASSES:
        raise GradcliError(
            f"check runs one pass per element: {name} has {out.numel():,} elements and the "
            f"inputs {n_in:,}; it checks at most {CHECK_PASSES:,}",
            hint="check a smaller instance of the program; `jacobian` computes large ones",
        )


def _cut_gradients(program: ParsedProgram) -> list[str]:
    """Check's notes on the statements that cut the gradient on purpose (x.detach()): there the
    derivatives differ from finite differences, which see the value change."""
    notes = []
    for a in program.assignments:
        used = ir.operations(a.ir) if a.ir is not None else []
        cut = [op for op in used if F.OPS[op].extra.get("cuts_gradient")]
        if cut:
            notes.append(
                f"{a.statement.where} calls {', '.join(cut)}, which cuts the gradient: finite "
                "differences see through it, so they differ from the derivatives there"
            )
    return notes


def graph(bound: Bound, of: str | None = None) -> Graph:
    """The computational graph of the output: one ``GraphNode`` per node, output first; a
    constant's node holds its value."""
    leaves = bound.leaves()
    env = bound.run(leaves)
    name, out = output_of(bound, env, of)
    names: dict[int, str] = {}
    for n, tensor in env.items():
        if not is_constant(n):  # x + torch.eye(2): shown as a constant, with its value
            names.setdefault(id(tensor), n)
    nodes: list[GraphNode] = []
    ids: dict[int, int] = {}

    def node_id(tensor) -> int:
        key = id(tensor)
        if key not in ids:
            ids[key] = len(ids)
            pending.append(tensor)
        return ids[key]

    pending: list = []
    inputs_ = {id(t) for n, t in leaves.items() if not is_constant(n)}
    # a traced PyTorch script's graph as torch builds it: no node for a tensor that requires
    # no grad, an AccumulateGrad for each leaf that does
    traced = bound.program.TRACED
    node_id(out)
    while pending:
        tensor = pending.pop(0)
        fn = tensor.grad_fn
        operands = [] if fn is None else [t for t in fn.inputs if t.requires_grad or not traced]
        inputs = [node_id(t) for t in operands]
        op = fn.prim.name if fn is not None else ("input" if id(tensor) in inputs_ else "constant")
        leaf_fn = "AccumulateGrad" if traced and tensor.requires_grad else None
        nodes.append(
            GraphNode(
                id=ids[id(tensor)],
                name=names.get(id(tensor)),
                op=op,
                shape=tuple(tensor.shape),
                is_leaf=tensor.is_leaf,
                requires_grad=tensor.requires_grad,
                grad_fn=fn.name() if fn is not None else leaf_fn,
                inputs=tuple(inputs),
                value=tensor.data if op == "constant" else None,
            )
        )
    return Graph(output=name, nodes=tuple(nodes), warnings=bound.messages())


def parse_range(text: str) -> tuple[float, float]:
    """``-3:3`` to (-3.0, 3.0)."""
    low, sep, high = text.partition(":")
    try:
        bounds = float(low), float(high)
    except ValueError:
        bounds = None
    if not sep or bounds is None or not np.all(np.isfinite(bounds)):
        raise GradcliError(f"cannot read the range {text!r}", hint="write LOW:HIGH, e.g. -3:3")
    if not bounds[0] < bounds[1]:
        raise GradcliError(f"the range {text!r} is empty: LOW must be below HIGH", hint="e.g. -3:3")
    return bounds


def plot_defaults(varied: list[str] | None, direction: np.ndarray | None):
    """``defaults`` for ``bind`` (see there): the one input plot varies needs no value, zero
    (shaped like ``direction``) where the command line gives it none."""

    def defaults(program: ParsedProgram, given: dict) -> dict[str, np.ndarray]:
        free = [n for n in program.inputs(set(given)) if n not in given | program.declared.keys()]
        names = varied or free
        if len(names) == 1 and names[0] in free:
            return {names[0]: np.zeros(() if direction is None else direction.shape)}
        return {}

    return defaults


def plot(
    bound: Bound,
    of: str | None,
    span: tuple[float, float],
    wrt: list[str] | None = None,
    direction: np.ndarray | None = None,
    points: int = 101,
) -> Plot:
    """The output and its derivative along a line: one input set to s, or base + s * direction.

    The derivative is computed by forward mode at every point.
    """
    if points < 2:
        raise GradcliError("--points must be at least 2")
    targets = _targets(bound, wrt)
    if len(targets) != 1:
        raise GradcliError(
            f"plot varies one input, got {listing(targets)}", hint="name it with --wrt"
        )
    (target,) = targets
    base = bound.arrays[target]
    if direction is None:
        if base.size != 1:
            raise GradcliError(
                f"{target} has shape {base.shape}: give --direction to plot along a line",
                hint=f"e.g. --direction 'ones{tuple(base.shape)}'",
            )
        start, step = np.zeros_like(base), np.ones_like(base)
    else:
        step = np.asarray(direction, dtype=bound.dtype)
        if step.shape != base.shape:
            raise GradcliError(
                f"--direction has shape {step.shape}, but {target} has shape {base.shape}",
                hint=f"give a direction of shape {base.shape}",
            )
        start = base
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    _scalar_output(name, out, "plot")
    function = _function_of(bound, name, [target])
    s = np.linspace(span[0], span[1], points)
    values, slopes = np.empty(points), np.empty(points)
    for i, si in enumerate(s):
        bounds.tick(f"point {i + 1} of {points}")
        point = gc.Tensor(np.asarray(start + si * step, dtype=bound.dtype))
        value, slope = bound.engine(lambda p=point: gc.jvp(function, p, gc.Tensor(step)))
        values[i], slopes[i] = float(value.data.reshape(())), float(slope.data.reshape(()))
    return Plot(
        output=name,
        axis=target if direction is None else "s",
        positions=s,
        values=values,
        slopes=slopes,
        warnings=bound.messages(),
    )


Symbolic = TypeVar("Symbolic", Grads, VJP, Jacobian)


def with_formulas(result: Symbolic, bound: Bound, v: np.ndarray | None = None) -> Symbolic:
    """``result`` (``Grads``, ``VJP`` or ``Jacobian``) with sympy's formulas of its
    derivatives (``--symbolic``); when there are none, with a warning that says why."""
    from dataclasses import replace

    from ..domains.symbolic import gradient_formulas, jacobian_formulas

    if isinstance(result, Jacobian):
        formulas, reason = jacobian_formulas(bound, result.output, list(result.jacobians))
        if formulas and result.transposed:
            k = np.ndim(result.value)
            formulas = {n: _transposed(f, k) for n, f in formulas.items()}
    else:
        targets = [n for n, g in result.grads.items() if g is not None and n in bound.arrays]
        formulas, reason = gradient_formulas(bound, result.output, targets, v)
    if formulas is None:
        return replace(result, warnings=(*result.warnings, f"no symbolic form: {reason}"))
    return replace(result, formulas=formulas)
