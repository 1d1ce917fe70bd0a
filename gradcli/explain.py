"""``gradcli explain``: the chain rule with numbers, statement by statement.

Runs the program once with every intermediate keeping its gradient, then reports the forward
pass (each statement's operation and value) and the backward pass in reverse order (the
gradient arriving at each statement, its local derivative as a sympy formula, and what it
passes on to each operand), ending with the leaf gradients. For small programs it also shows
the symbolic J^T, v and J^T v, as the seed post does, and says when the Jacobian is diagonal.
"""

from __future__ import annotations

import numpy as np

from . import engine as gc
from .compute import Bound, GradcliError, Result, _cotangent, _function_of, output_of
from .lang.validate import element_of
from .render import format_number


def short(array, precision: int = 4, limit: int = 8) -> str:
    """A compact text of an array: all elements when few, else its shape and range."""
    array = np.asarray(array, dtype=float)
    if array.size <= limit:
        body = np.array2string(
            array, separator=", ", formatter={"float_kind": lambda v: format_number(v, precision)}
        )
        return body.replace("\n", "")
    low, high = (format_number(float(f(array)), precision) for f in (np.min, np.max))
    return f"shape {array.shape}, from {low} to {high}"


def _operands(ir, env: dict) -> list[str]:
    """The names a statement reads, elements (x0) mapped to their vector (x)."""
    from .lang.program import _refs

    names = []
    for name in _refs(ir):
        if name not in env:
            parts = element_of(name)
            name = parts[0] if parts and parts[0] in env else name
        if name in env and name not in names:
            names.append(name)
    return names


def _requires_grad(name: str, env: dict) -> bool:
    """Whether a name (or the vector an element name ``x0`` belongs to) requires grad."""
    if name in env:
        return env[name].requires_grad
    parts = element_of(name)
    return bool(parts) and parts[0] in env and env[parts[0]].requires_grad


def explain(bound: Bound, of: str | None = None, v: np.ndarray | None = None) -> Result:
    """The forward and backward passes of ``out.backward(v)``, step by step."""
    from .symbolic import local_derivatives, symbolic_values

    leaves = bound.leaves()
    env = bound.run(leaves)
    name, out = output_of(bound, env, of)
    if not out.requires_grad:
        raise GradcliError(
            f"the output {name} does not depend on any input that requires grad",
            hint="choose inputs with --wrt",
        )
    statements = [a for a in bound.program.assignments if a.ir is not None]
    for a in statements:
        tensor = env[a.target]
        if tensor.requires_grad and not tensor.is_leaf:
            tensor.retain_grad()
    if not out.is_leaf:
        out.retain_grad()
    gradient = _cotangent(v, out, name, bound.dtype)
    bound.engine(lambda: out.backward(gradient, retain_graph=True))

    forward = [
        {
            "statement": a.statement.text,
            "operation": a.ir[1] if a.ir[0] == "call" else a.ir[0],
            "value": short(env[a.target].data),
        }
        for a in statements
    ]
    backward = []
    for a in reversed(statements):
        tensor = env[a.target]
        incoming = tensor._grad
        if incoming is None:
            continue
        passes = []
        for operand in _operands(a.ir, env):
            if not env[operand].requires_grad:
                continue
            (part,) = bound.engine(
                lambda o=operand, t=tensor, g=incoming: gc.grad(
                    t, [env[o]], g, retain_graph=True, allow_unused=True
                )
            )
            if part is not None:
                passes.append({"to": operand, "gradient": short(part.data)})
        backward.append(
            {
                "node": a.target,
                "local": [
                    {"wrt": w, "derivative": d}
                    for w, d in local_derivatives(a.ir)
                    if _requires_grad(w, env)
                ],
                "incoming": short(incoming.data),
                "passes_on": passes,
            }
        )
    grads = {n: (None if t._grad is None else t._grad.data) for n, t in leaves.items()}
    details = {
        "forward": forward,
        "backward": backward,
        "notes": _notes(bound, name, out, env, leaves, gradient),
    }
    details.update(_symbolic_jt(bound, name, out, leaves, gradient, symbolic_values))
    return Result(
        "explain",
        name,
        values={name: out.data},
        grads=grads,
        warnings=bound.messages(),
        explain=details,
    )


def _notes(bound, name, out, env, leaves, gradient) -> list[str]:
    """Say when an output's Jacobian is diagonal: the vjp is then v times dy/dx entry-wise."""
    from .symbolic import local_derivatives

    notes = []
    targets = [n for n, t in leaves.items() if t.requires_grad and t.shape == out.shape]
    for target in targets:
        n = out.numel()
        if n < 2:
            continue
        function = _function_of(bound, name, [target])
        matrix = gc.jacobian(function, gc.Tensor(bound.arrays[target])).data.reshape(n, n)
        if np.count_nonzero(matrix - np.diag(np.diag(matrix))) == 0:
            final = [a for a in bound.program.assignments if a.target == name and a.ir is not None]
            formula = ""
            if final:
                local = dict(local_derivatives(final[0].ir))
                if target in local:
                    formula = f" = {local[target]}"
            v = "v" if gradient is not None else "1"
            notes.append(
                f"d{name}/d{target} is diagonal: of its {n}x{n} = {n * n} entries only the {n} on "
                f"the diagonal can be non-zero, so J^T {v} = {v} * d{name}/d{target}{formula}, "
                "entry by entry"
            )
    return notes


def _symbolic_jt(bound, name, out, leaves, gradient, symbolic_values) -> dict:
    """J^T as formulas, v, and J^T v, for a 1-D output of few elements and 1-D inputs."""
    import sympy as sp

    from .symbolic import NotSymbolic, formula_text, time_budget

    targets = [n for n, t in leaves.items() if t.requires_grad]
    if (
        out.ndim != 1
        or out.numel() > 8
        or any(leaves[t].ndim != 1 or leaves[t].numel() > 8 for t in targets)
    ):
        return {}
    try:
        with time_budget():
            expressions, symbols = symbolic_values(bound.program, bound.arrays, targets, name)
            rows = {
                t: [
                    [formula_text(sp.diff(sp.sympify(e), s)) for e in expressions.reshape(-1)]
                    for s in symbols[t].reshape(-1)
                ]
                for t in targets
            }
    except NotSymbolic:  # not symbolic here, or too slow: no formulas
        return {}
    except Exception:  # noqa: BLE001 - a program sympy cannot follow simply gets no formulas
        return {}
    v = np.ones(out.shape) if gradient is None else gradient.data
    return {
        "jacobian_t": rows,
        "symbols": {t: [str(s) for s in symbols[t].reshape(-1)] for t in targets},
        "v": [format_number(float(x), 6) for x in v.reshape(-1)],
        "jt_v": {t: short(leaves[t]._grad.data) for t in targets if leaves[t]._grad is not None},
    }
