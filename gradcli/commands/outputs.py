"""Several outputs in one call (``--of y,z``): which names ``--of`` gives, the vector of each
output (``--v y=...``), and the commands that answer one part per output.

grad and vjp differentiate the outputs together, as ``torch.autograd.backward([y, z])`` and
``torch.autograd.grad([y, z], xs, grad_outputs=[vy, vz])`` do: their gradients are the sums of
the outputs' (``compute._backward_calls``). jacobian, jvp, hessian, hvp and check answer each
output on its own (``per_output``), as ``torch.func.jacrev`` and ``torch.func.jvp`` of a
function that returns the tuple ``(y, z)`` do, in one ``Several`` record.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from ..base.errors import GradcliError, listing
from ..results import Derivatives, Several
from .table import several_commands

# the commands whose --of may name several outputs, as the command table says (uncertainty's:
# ``uncertainty.output_names``)
SEVERAL_COMMANDS = several_commands()

Asked = str | Sequence[str] | None  # --of's text ("y,z"), the names, or None (the default)


def outputs_asked(of: Asked) -> list[str] | None:
    """The names ``of`` gives ("y,z" or ["y", "z"]), each once; None for the default output."""
    if of is None:
        return None
    parts = of.split(",") if isinstance(of, str) else [str(name) for name in of]
    names = [name.strip() for name in parts if name.strip()]
    if not names:
        raise GradcliError(f"--of {of!r} names no output", hint="e.g. --of y, or --of y,z")
    for k, name in enumerate(names):
        if name in names[:k]:
            once = ",".join(dict.fromkeys(names))
            raise GradcliError(
                f"--of names {name!r} twice", hint=f"name each output once: --of {once}"
            )
    return names


def several(of: Asked) -> bool:
    """Whether ``of`` names more than one output."""
    names = outputs_asked(of)
    return names is not None and len(names) > 1


def one_output(of: Asked, command: str = "this") -> str | None:
    """The one output ``of`` names (None: the default), refusing several where ``command``
    takes one."""
    names = outputs_asked(of)
    if names is None:
        return None
    if len(names) > 1:
        raise GradcliError(
            f"{command} takes one output, and --of names {len(names)} ({listing(names)})",
            hint=f"several outputs are for {listing(SEVERAL_COMMANDS[:-1])} and uncertainty; "
            f"here give one, e.g. --of {names[0]}",
        )
    return names[0]


def refuse_several(of: Asked, what: str) -> None:
    """Refuse several outputs where ``what`` (an option) takes one."""
    names = outputs_asked(of)
    if names is not None and len(names) > 1:
        raise GradcliError(
            f"{what} takes one output, and --of names {len(names)} ({listing(names)})",
            hint=f"run it once per output: --of {names[0]}, then --of {names[1]}",
        )


Vectors = np.ndarray | Mapping[str, Any] | Sequence[Any] | None


def vectors_for(names: list[str], v: Vectors, option: str = "--v") -> list[Any]:
    """The vector of each output of ``names`` (None where none is given): ``v`` is one array
    (of the one output), a mapping from output names to vectors, or a sequence of vectors in
    the order of the names."""
    if v is None:
        return [None] * len(names)
    if isinstance(v, Mapping):
        for name in v:
            if name not in names:
                raise GradcliError(
                    f"{option} gives a vector for {name!r}, which is not an output of --of",
                    hint=f"the outputs are: {listing(names)}; write {option} NAME=VALUE for each",
                )
        missing = [name for name in names if name not in v]
        if missing:
            raise GradcliError(
                f"no {option} for the output{'s' * (len(missing) > 1)} {listing(missing)}",
                hint=f"give one vector per output: {_example(names, option)}",
            )
        return [v[name] for name in names]
    vectors = [v] if isinstance(v, np.ndarray) else list(v)  # an array is one vector
    if len(vectors) != len(names):
        raise GradcliError(
            f"{option} gives {len(vectors)} vector{'s' * (len(vectors) != 1)}, but --of names "
            f"{len(names)} output{'s' * (len(names) != 1)} ({listing(names)})",
            hint=f"give one vector per output: {_example(names, option)}",
        )
    return vectors


def _example(names: list[str], option: str) -> str:
    return " ".join(f"{option} {name}=VALUE" for name in names[:3])


R = TypeVar("R", bound=Derivatives)


def per_output(command: Callable[..., R]) -> Callable[..., R | Several]:
    """``command(bound, of, ...)`` once per output where ``of`` names several (their parts in
    one ``Several``, in --of's order), else once as it is."""

    @functools.wraps(command)
    def answer(bound: Any, of: Asked = None, *args: Any, **options: Any) -> R | Several:
        names = outputs_asked(of)
        if names is None or len(names) == 1:
            return command(bound, None if names is None else names[0], *args, **options)
        parts = tuple(command(bound, name, *args, **options) for name in names)
        warnings = tuple(dict.fromkeys(w for part in parts for w in part.warnings))
        return Several(output=",".join(names), parts=parts, warnings=warnings)

    return cast(Callable[..., R | Several], answer)


def read_vectors(items: list[str] | None, seed: int = 0) -> Vectors:
    """grad's and vjp's --v items: None; one ``VALUE`` (of the one output); ``NAME=VALUE``
    items, by output name; or several ``VALUE``s, one per output in --of's order."""
    from ..lang.values import parse_value

    if not items:
        return None
    pairs = [_item(item) for item in items]
    named = [name for name, _ in pairs if name is not None]
    if named and len(named) != len(pairs):
        raise GradcliError(
            "--v: give every vector as NAME=VALUE, or every one as a VALUE in --of's order",
            hint="e.g. --of y,z --v y=1,1,1 --v z=2, or --of y,z --v 1,1,1 --v 2",
        )
    if not named:
        values = [parse_value(text, "v", seed) for _, text in pairs]
        return values[0] if len(values) == 1 else values
    found: dict[str, np.ndarray] = {}
    for name, text in pairs:
        assert name is not None
        if name in found:
            raise GradcliError(f"--v gives {name!r} twice", hint="give one vector per output")
        found[name] = parse_value(text, f"--v {name}", seed)
    return found


def plain_vector(items: list[str] | None) -> str | None:
    """The text of the one --v ``VALUE`` (None: none given, or given otherwise)."""
    if items is None or len(items) != 1 or _item(items[0])[0] is not None:
        return None
    return items[0]


def _item(item: str) -> tuple[str | None, str]:
    """A --v item as (output name, value text): the name None for a plain ``VALUE``."""
    import unicodedata

    name, sep, value = item.partition("=")
    name = unicodedata.normalize("NFKC", name.strip())  # as Python reads a program's names
    if sep and name.isidentifier():
        return name, value
    return None, item
