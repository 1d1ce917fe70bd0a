"""The command line's side of ``--exact`` and ``--symbolic`` without values (see ``exact``)."""

from __future__ import annotations

import numpy as np

from ..base.errors import GradcliError


def _values(run) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The --x and -i values: (exact ones, float ones), each read exactly where its text is
    an exact value (``exact.exact_value``), else as gradcli reads any value."""
    from ..domains.exact import exact_value
    from ..lang.values import parse_value

    items = [] if run.x is None else [("x", run.x)]
    for item in run.inputs or []:
        name, sep, text = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise GradcliError(
                f"cannot read -i {item!r}", hint="write -i NAME=VALUE, e.g. -i W=randn(8,10)"
            )
        items.append((name.strip(), text))
    exact, floats = {}, {}
    for name, text in items:
        if name in exact or name in floats:
            raise GradcliError(f"the input {name!r} is given twice")
        value = exact_value(text, name)
        if value is None:
            floats[name] = parse_value(text, name, run.seed)
        else:
            exact[name] = value
    return exact, floats


def answered(
    run,
    exact: bool,
    symbolic: bool,
    shape: list[str] | None,
    v: str | None = None,
    batch: str | None = None,
    others: list[str] | None = None,
) -> bool:
    """Answer ``run.command`` exactly (``--exact``) or as formulas (``--symbolic`` where an
    input has no value, or ``--shape`` is given) and return True; False when the command's
    own float answer is wanted, or is the fallback (the reason is then among ``run.notes``)."""
    if not (exact or symbolic or shape) or (batch is not None and not (exact or shape)):
        return False  # --symbolic with --batch: the batch's own answer, as before
    refused = [*(others or []), *(["--batch"] if batch is not None else [])]
    from ..commands.outputs import refuse_several
    from ..domains.exact import Problem, answer, approximate_array, exact_value, read_shapes
    from ..domains.symbolic import NotSymbolic
    from ..lang.source import read_source
    from ..script.loading import load_program

    source = read_source(run.program, run.expr, run.file)
    filename = "<stdin>" if run.file in (None, "-") else run.file
    program = load_program(source, not run.no_cache, run.seed, filename)
    if program.TRACED:  # a PyTorch script: its numbers, with a note
        if exact or shape:
            from ..lang.program import NO_FORMULAS

            raise GradcliError(f"{'--exact' if exact else '--shape'} needs formulas: {NO_FORMULAS}")
        return False
    values, floats = _values(run)
    shapes = read_shapes(shape)
    given = set(values) | set(floats) | set(shapes)
    missing = [n for n in program.inputs(given) if n not in given and n not in program.declared]
    formulas = bool(shapes) or (symbolic and bool(missing))
    if not (exact or formulas):
        return False
    flag = "--exact" if exact else "--symbolic without values"
    refuse_several(run.of, flag)
    if refused:
        raise GradcliError(
            f"{flag} does not take {', '.join(refused)}", hint=f"leave out {refused[0]}"
        )
    vector = None
    if v is not None:
        vector = exact_value(v, "v")
        if vector is None:
            from ..domains.exact import floats_as_numbers
            from ..lang.values import parse_value

            vector = floats_as_numbers(parse_value(v, "v", run.seed))[0]
    wrt = None if run.wrt is None else [n.strip() for n in run.wrt.split(",") if n.strip()]
    try:
        problem = Problem(program, values, floats, shapes, run.seed, point=not formulas)
        result = answer(run.command, problem, run.of, wrt, vector)
    except NotSymbolic as exc:
        if formulas:
            raise GradcliError(
                f"no formulas: {exc}", hint="give the inputs values for the float answer"
            ) from None
        run.notes.append(f"not exact: {exc}; the numbers are floats")
        run.read = {**{n: approximate_array(a) for n, a in values.items()}, **floats}
        return False
    from ..render import Options, emit

    emit(result, run.format, Options(run.precision))
    return True
