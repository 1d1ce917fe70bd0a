"""A coverage-guided fuzzer (atheris, libFuzzer) over the text entry points of gradcli.

Not part of the test suite. Install atheris (``pip install atheris``), then:

    python tests/fuzz/atheris_harness.py CORPUS_DIR samples -max_total_time=300

Each input is decoded as UTF-8 and read three ways: as a whole program (parse, run with
[0.5, -1.5] for every input, then its gradient), as a value, and as a value for the program
``y = sum(x * x)``. The only acceptable failure is ``GradcliError``: anything else (and a
hang, which libFuzzer reports with ``-timeout``) is a finding, written to ``crash-*``.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import numpy as np

    from gradcli.base import bounds
    from gradcli.base.errors import GradcliError
    from gradcli.commands.compute import bind, grad
    from gradcli.lang import parse_program
    from gradcli.lang.values import parse_value

# Small limits keep each input cheap; the code paths are the same as at the defaults.
LIMITS = bounds.Limits(max_elements=10_000, max_length=2_000, max_depth=100)
SQUARES = parse_program("y = sum(x * x)")


def one_input(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    with bounds.using(LIMITS), np.errstate(all="ignore"):
        for attempt in (_program, _value, _value_in_a_program):
            try:
                attempt(text)
            except GradcliError:
                pass


def _program(text: str) -> None:
    program = parse_program(text)
    free = [n for n in program.inputs(set()) if n not in program.declared]
    bound = bind(program, {name: np.array([0.5, -1.5]) for name in free})
    grad(bound, None, None, [], [], 1)


def _value(text: str) -> None:
    parse_value(text, "x")


def _value_in_a_program(text: str) -> None:
    grad(bind(SQUARES, {"x": parse_value(text, "x")}), None, None, [], [], 1)


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
