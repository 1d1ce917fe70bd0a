"""Issue 6: bad input never runs code, never crashes, never hangs.

Three targets, each fed random text, token soups of its own alphabet and mutations of valid
input:

- ``parse_program(text)`` returns a ``ParsedProgram`` or raises ``GradcliError``, nothing else;
- ``parse_value(text, "x", seed=0)`` returns a numpy array or raises ``GradcliError``;
- the command line (eval, grad, vjp, jacobian, jvp, hessian, check, graph, explain, with
  random options) exits 0, 1 (``check`` only: the methods disagree) or 2, and on 2 says
  ``error: ...`` (or click's ``Usage: ...``), never a traceback or an internal error.

Whatever sympy's parser is handed (it evaluates its input) must be the validator's plain form:
calls, names, numbers, commas and parentheses; no attribute, no string, and no name starting
with "_" but the validator's own markers.

Every case runs under a hang guard: an interval timer raises after ``BUDGET`` seconds, and
faulthandler ends the process with a traceback if even that cannot interrupt it.

The default run is short (a few hundred cases a target, derandomized: the same cases every
run). ``pytest -m fuzz tests/fuzz -s`` runs the long run, ``GRADCLI_FUZZ_EXAMPLES`` cases a
target (default 10,000); the summary at the end gives the cases, outcomes and slowest case.
Both are plain hypothesis tests: a failing case fails the test, shrunk by hypothesis to a
minimal example, which it prints as the falsifying case.
"""

from __future__ import annotations

import faulthandler
import io
import os
import re
import shlex
import signal
import threading
import time
import traceback
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import gradcli.lang.parse as parse_module
from gradcli.base import bounds
from gradcli.base.errors import GradcliError
from gradcli.cli.app import app
from gradcli.lang import ParsedProgram, parse_program
from gradcli.lang import functions as F
from gradcli.lang.functions import ALIASES, FUNCTIONS
from gradcli.lang.values import CONSTRUCTORS, parse_value

REPO = Path(__file__).resolve().parents[2]
SAMPLES = {path.name: path.read_text() for path in sorted((REPO / "samples").glob("*.gc"))}

# -- settings ------------------------------------------------------------------------------------

BUDGET = 10.0  # seconds a case may take before it counts as a hang (the machine is shared)
HARD_BUDGET = 60.0  # past the budget: if the timer cannot interrupt a case (one long C call),
# faulthandler ends the process with every thread's traceback
MAX_ELEMENTS = 100_000  # --max-elements of every fuzz run: no case may ask for gigabytes
LONG_EXAMPLES = int(os.environ.get("GRADCLI_FUZZ_EXAMPLES", "10000"))

# Derandomized and without a database, like the other property tests: every run sees the
# same cases, so a result never depends on what an earlier run happened to find.
FUZZ = settings(
    deadline=None,  # the hang guard below measures time instead
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
SHORT_PROGRAMS = settings(FUZZ, max_examples=300)
SHORT_VALUES = settings(FUZZ, max_examples=300)
SHORT_CLI = settings(FUZZ, max_examples=300)
LONG = settings(FUZZ, max_examples=LONG_EXAMPLES)

# -- the alphabets -------------------------------------------------------------------------------

NAMES = ["x", "y", "z", "x0", "x1", "x2", "y0", "y1", "y3", "W", "b", "h0", "out", "v", "α"]
NUMBERS = [
    "0", "1", "-1", "2", "3", "-2", "2.5", "0.5", "1e308", "1e400", "-1e400", "1e-320",
    "99999999999999999999", "nan", "inf", "-inf", "1_000", "0x10", "1j", "007", "4.", ".5",
    "1" + "0" * 4400,  # past Python's 4,300-digit limit on reading an integer
]  # fmt: skip
FUNCTION_NAMES = sorted(FUNCTIONS) + sorted(ALIASES)
CONSTRUCTOR_NAMES = sorted(CONSTRUCTORS)
KEYWORDS = ["dim", "keepdim", "p", "min", "max", "reduction", "requires_grad", "condition",
            "other", "dim0", "dim1", "shape", "input", "target", "tensors"]  # fmt: skip
OPERATORS = ["+", "-", "*", "/", "**", "@", "=", ";", ",", "(", ")", "[", "]", ":", "..."]
PYTHON_WORDS = ["True", "False", "None", "lambda", "import", "pi", "e", "if", "for", "not"]
JUNK = [".", "__", "'", '"', "\n", "#", " ", "\t", "\\", "'sum'", "'mean'", "'none'", "{", "}",
        "%", "!", "<", ">", "==", ":=", "$", "`", "\x00", "\u2212", "\u00d7", "\u202e",
        "\u200b", "\ufeff", "ｘ", "𝑥", "__class__", "__import__('os')", "x.sum()"]  # fmt: skip
PROGRAM_TOKENS = (
    NAMES
    + NUMBERS
    + FUNCTION_NAMES
    + CONSTRUCTOR_NAMES
    + [f"{k}=" for k in KEYWORDS]
    + OPERATORS
    + PYTHON_WORDS
    + JUNK
)

DATA_FILES = ["@x.npy", "@m.npy", "@x.csv", "@x.json", "@a.npz", "@a.npz:a", "@a.npz:zz",
              "@bad.npy", "@obj.npy", "@str.npy", "@big.npy", "@bad.csv", "@bad.json",
              "@missing.npy", "@.", "@", "-"]  # fmt: skip
VALUE_TOKENS = (
    list("0123456789")
    + [",", "[", "]", "(", ")", "-", "+", ".", "e", "@", " ", "=", "*", "j", "_"]
    + CONSTRUCTOR_NAMES
    + ["nan", "inf", "True", "None", "x", "requires_grad=True", "'a'"]
    + ["1e308", "1e400", "1e-320", "99999999999999999999", "-1", "2.5", "1" + "0" * 4400]
    + DATA_FILES
)
VALID_VALUES = [
    "1,2", "[[1,2],[3,4]]", "randn(3,4)", "linspace(0,1,5)", "2.5", "-1", "ones(2,2)",
    "zeros(3)", "full(2,3, 0.5)", "eye(3)", "eye(2,3)", "arange(6)", "arange(0,1,0.25)",
    "rand(3)", "tensor([1,2])", "[nan, inf, -inf]", "[[1,2,3],[4,5,6]]", "1,2,3", "0",
    "zeros(0)", "[]", "[[]]", "ones(2,0)", "@x.npy", "@a.npz:a", "@x.csv", "@x.json",
]  # fmt: skip

COMMANDS = ["eval", "grad", "vjp", "jacobian", "jvp", "hessian", "check", "graph", "explain"]
_NUMBER = re.compile(r"(?<![\w.])\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?")

# -- strategies: mutations -----------------------------------------------------------------------


@st.composite
def mutated(draw, originals: list[str], tokens: list[str], numbers: list[str]):
    """A valid text with one to four edits: delete, duplicate or swap, insert a token,
    replace a number."""
    text = draw(st.sampled_from(originals))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "duplicate", "insert", "swap", "number"]))
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 40)))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(tokens)) + text[i:]
        elif kind == "swap" and n >= 2:
            a, b = sorted((min(i, n - 1), min(j, n - 1)))
            text = text[:a] + text[b] + text[a + 1 : b] + text[a] + text[b + 1 :] if a < b else text
        elif kind == "number":
            found = list(_NUMBER.finditer(text))
            if found:
                m = draw(st.sampled_from(found))
                text = text[: m.start()] + draw(st.sampled_from(numbers)) + text[m.end() :]
    return text


def soup(tokens: list[str], max_size: int = 30):
    separators = st.sampled_from(["", "", " ", " ", "\n", ";", ", "])
    pieces = st.lists(st.tuples(st.sampled_from(tokens), separators), max_size=max_size)
    return pieces.map(lambda ps: "".join(t + s for t, s in ps))


# -- strategies: programs ------------------------------------------------------------------------

_LITERALS = st.sampled_from(
    ["0", "1", "-1", "2", "-3", "5", "100", "2.5", "True", "False", "None",
     "'sum'", "'mean'", "'none'", "'bogus'", "1e400", "nan", "x"]
)  # fmt: skip
_KIND_LITERALS = {
    F.INT: ["0", "1", "-1", "2", "-2", "3", "7", "99999999999999999999"],
    F.OPT_INT: ["None", "0", "1", "-1", "2", "-3"],
    F.DIMS: ["None", "0", "-1", "(0, 1)", "(0, -1)", "[1, 0]", "(0, 0)", "()", "(5,)"],
    F.APPROXIMATE: ["'none'", "'tanh'", "'sigmoid'"],
    F.NORM_ORD: ["'fro'", "'nuc'", "1", "-1", "2", "1e400"],
    F.NUMBER: ["0", "1", "-1", "2", "0.5", "1e400", "-1e400", "1e-320"],
    F.OPT_NUMBER: ["None", "0", "1", "-1", "0.5", "1e400"],
    F.BOOL: ["True", "False"],
    F.REDUCTION: ["'mean'", "'sum'", "'none'"],
    F.KL_REDUCTION: ["'mean'", "'batchmean'", "'sum'", "'none'"],
    F.UPLO: ["'L'", "'U'", "'l'"],
    F.QR_MODE: ["'reduced'", "'complete'", "'r'", "'raw'"],
    F.SIZES: ["1", "2", "3", "-1", "0", "6", "4"],
    F.INTS: ["1", "(2, 1)", "(1, -1)", "(0, 1, 1, 0)", "(-1, 2)", "()", "(3,)"],
    F.PAD_MODE: ["'constant'", "'reflect'", "'replicate'", "'circular'", "'wrap'"],
    F.INDEXING: ["'ij'", "'xy'", "None", "'ji'", "'IJ'", "0"],
    F.EQUATION: ["'ij,jk->ik'", "'ii'", "'...i->i'", "'ij'", "'i,i'", "'->'", "'a-b'", "''"],
    F.SECTIONS: ["1", "2", "0", "-1", "[1, 2]", "[0, 3]", "[-1, 4]", "()"],
    F.DTYPE: ["torch.long", "torch.float32", "'int64'", "torch.bool", "float16", "torch.int"],
    F.OPT_DTYPE: ["None", "torch.float32", "torch.float64", "'int64'", "float16", "torch.bool"],
    F.ROUNDING_MODE: ["None", "'trunc'", "'floor'", "'round'", "0"],
}
assert set(_KIND_LITERALS) >= {p.kind for f in FUNCTIONS.values() for p in f.params} - {
    *F.OPERAND_KINDS,
    F.OUTPUT,  # which result of several a call gives: the validator's, never written
}, "a parameter kind without literals to try"
_INDEX_ITEMS = ["0", "1", "-1", "2", "5", "-7", ":", "1:", ":2", "::-1", "0:3:2", "...", "None",
                "99999999999999999999", "::0", "-1:"]  # fmt: skip


@st.composite
def calls(draw, children):
    """A call of a language function, its arguments mostly of the right kinds and number."""
    name = draw(st.sampled_from(FUNCTION_NAMES))
    function = FUNCTIONS[ALIASES.get(name, name)]

    def argument(param):
        if param.kind == F.TENSOR:
            return draw(children)
        if param.kind == F.OPT_TENSOR:  # an operand, or None to leave it out
            return draw(children | st.just("None"))
        if param.kind == F.TENSORS:
            return "[" + ", ".join(draw(st.lists(children, max_size=3))) + "]"
        if param.kind == F.VAR_TENSORS:  # einsum's operands: the rest of the arguments
            return ", ".join(draw(st.lists(children, min_size=1, max_size=3)))
        return draw(st.sampled_from(_KIND_LITERALS[param.kind]) | _LITERALS)

    params = [p for p in function.params if p.kind not in (F.SIZES, F.OUTPUT)]
    required = sum(p.default is F.REQUIRED for p in params)
    # mostly the required arguments, sometimes more, now and then one too few
    count = draw(
        st.sampled_from([required] * 6 + list(range(max(required - 1, 0), len(params) + 1)))
    )
    texts = [argument(p) for p in params[:count]]
    if any(p.kind == F.SIZES for p in function.params):
        texts += draw(st.lists(st.sampled_from(_KIND_LITERALS[F.SIZES]), max_size=3))
    later = params[count:]
    if later and draw(st.booleans()):  # an optional argument by keyword
        param = draw(st.sampled_from(later))
        texts.append(f"{param.name}={argument(param)}")
    # now and then a wrong keyword
    extra = draw(st.sampled_from([None] * 9 + KEYWORDS[:3]))
    if extra is not None:
        texts.append(f"{extra}={draw(_LITERALS)}")
    return f"{name}({', '.join(texts)})"


def expressions(names: tuple[str, ...]):
    """Well-formed expressions of the language's pieces, put together with little regard to
    shapes: they get past the parser and reach the interpreter and the engine."""
    leaves = st.sampled_from(names + ("pi", "e")) | st.sampled_from(NUMBERS[:15])

    def extend(children):
        binary = st.builds(
            lambda a, op, b: f"({a} {op} {b})", children, st.sampled_from(OPERATORS[:6]), children
        )
        indexed = st.builds(
            lambda a, items: f"{a}[{', '.join(items)}]",
            children,
            st.lists(st.sampled_from(_INDEX_ITEMS), min_size=1, max_size=3),
        )
        negated = children.map(lambda a: f"-{a}")
        return calls(children) | calls(children) | binary | indexed | negated

    return st.recursive(leaves, extend, max_leaves=8)


@st.composite
def structured_programs(draw):
    """One to four statements ``name = expression`` (or a constructor), y0/y1-style too;
    expressions use x (and x0, x1, x2, its elements), W, b and the names assigned before."""
    statements = []
    names = ("x", "x", "x0", "x1", "x2", "W", "b")
    targets = ["y", "z", "h0", "out", "y0", "y1", "y2", "W", "x", "b"]
    for target in draw(st.lists(st.sampled_from(targets), min_size=1, max_size=4, unique=True)):
        if draw(st.sampled_from([False] * 5 + [True])):
            args = draw(st.lists(_LITERALS, min_size=1, max_size=3))
            extra = draw(st.sampled_from(["", ", requires_grad=True", ", requires_grad=False"]))
            value = f"{draw(st.sampled_from(CONSTRUCTOR_NAMES))}({', '.join(args)}{extra})"
        else:
            value = draw(expressions(names))
        statements.append(f"{target} = {value}")
        names += (target,)
    return draw(st.sampled_from(["; ", "\n"])).join(statements)


@st.composite
def assignment_soups(draw):
    """Statements that start as assignments and go on as token soup."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(NAMES + ["_x", "__x", "sum", "pi"]))
        parts.append(f"{target} = {draw(soup(PROGRAM_TOKENS, 12))}")
    return "; ".join(parts)


def programs(valid_weight: int = 1):
    """Random text, token soups and mutated samples; ``valid_weight`` draws more of the
    strategies whose programs often parse (mutated samples, structured programs), so that
    more cases reach the interpreter and the engine."""
    sample_mutations = mutated(list(SAMPLES.values()), PROGRAM_TOKENS, NUMBERS)
    return st.one_of(
        st.text(),
        st.text(st.characters(codec="utf-8"), max_size=200),
        soup(PROGRAM_TOKENS),
        assignment_soups(),
        *[sample_mutations, structured_programs()] * valid_weight,
        sample_mutations,
        st.sampled_from(list(SAMPLES.values())) if valid_weight > 1 else st.nothing(),
    )


# -- strategies: values --------------------------------------------------------------------------


def values(valid_weight: int = 1):
    return st.one_of(
        st.text(max_size=60),
        soup(VALUE_TOKENS, 20),
        mutated(VALID_VALUES, VALUE_TOKENS, NUMBERS),
        mutated(VALID_VALUES, VALUE_TOKENS, NUMBERS),
        *[st.sampled_from(VALID_VALUES)] * valid_weight,
    )


# -- strategies: command lines -------------------------------------------------------------------

STDIN = [None, "[1, 2]", "[[1, 2], [3, 4]]", "not json", "{}", "y = x * 2", ""]


@st.composite
def command_lines(draw):
    """``[command, --expr=PROGRAM, --x=VALUE, options...]`` and the text for stdin."""
    command = draw(st.sampled_from(COMMANDS))
    program = draw(programs(valid_weight=5))
    stdin = draw(st.sampled_from(STDIN))
    args = [command]
    if draw(st.integers(0, 9)) == 0:
        args.append("--file=-")  # the program on stdin
        stdin = program
    else:
        args.append(f"--expr={program}")
    if draw(st.booleans()):
        args.append(f"--x={draw(values(valid_weight=4))}")
    own = {
        "grad": ["--v", "--symbolic"],
        "vjp": ["--v", "--symbolic"],
        "explain": ["--v"],
        "jvp": ["--t"],
        "jacobian": ["--transpose", "--mode", "--symbolic", "--heatmap"],
        "check": ["--atol", "--rtol"],
    }.get(command, [])
    options = draw(
        st.lists(
            st.sampled_from(own + ["--wrt", "--of", "--format", "--dtype", "--seed", "-i"]),
            max_size=4,
            unique=True,
        )
    )
    # now and then an option the command may not have
    stray = draw(st.sampled_from([None] * 45 + ["--v", "--t", "--bogus", "--heatmap", "--show"]))
    if stray is not None:
        options.append(stray)
    for option in options:
        if option in ("--transpose", "--symbolic", "--heatmap"):
            args.append(option)
        elif option in ("--v", "--t"):
            args.append(f"{option}={draw(values(valid_weight=4))}")
        elif option == "-i":
            name = draw(st.sampled_from(NAMES + ["", "1x", "x=", "_"]))
            args.append(f"--input={name}={draw(values())}")
        elif option == "--wrt":
            args.append(f"--wrt={','.join(draw(st.lists(st.sampled_from(NAMES), max_size=3)))}")
        elif option == "--of":
            args.append(f"--of={draw(st.sampled_from(NAMES + ['', 'nothing']))}")
        elif option == "--format":
            args.append(f"--format={draw(st.sampled_from(['json', 'csv', 'table', 'dot', 'x']))}")
        elif option == "--dtype":
            args.append(f"--dtype={draw(st.sampled_from(['float32', 'float32', 'int8']))}")
        elif option == "--seed":
            args.append(
                f"--seed={draw(st.sampled_from(['1', '0', '7', '1', '0', '7', '-1', 'a']))}"
            )
        elif option == "--mode":
            args.append(f"--mode={draw(st.sampled_from(['forward', 'reverse', 'auto', '?']))}")
        else:  # --atol, --rtol
            args.append(f"{option}={draw(st.sampled_from(['0', '1e-12', 'nan', '-1', '1']))}")
    args += ["--no-cache", f"--max-elements={MAX_ELEMENTS}"]
    return args, stdin


# the warnings Python's default filters do not print
_HIDDEN = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)

# -- the hang guard --------------------------------------------------------------------------


class Hang(BaseException):
    """Raised by the timer in a case over budget; a BaseException, so that no ``except
    Exception`` on the way (the CLI's own guard, CliRunner) turns it into an ordinary error."""


def _alarm(signum, frame):
    raise Hang()


def guarded(stats, target: str, case: str, run, budget: float = BUDGET):
    """``run()`` under the hang guard; its outcome (a short word) and the time go to ``stats``.

    ``run`` returns ``(outcome, detail)``; anything it raises is recorded as a crash and
    re-raised. A case over ``budget`` seconds fails the test with its input.
    """
    main = threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGALRM")
    start = time.perf_counter()  # before the timer is armed: a case's time holds all of its budget
    if main:
        previous = signal.signal(signal.SIGALRM, _alarm)
        # fires after the budget, then every 0.5 s, in case something swallows the first
        signal.setitimer(signal.ITIMER_REAL, budget, 0.5)
    faulthandler.dump_traceback_later(budget + HARD_BUDGET, exit=True)
    hung = False
    try:
        outcome, detail = run()
    except Hang:
        hung = True
    except BaseException:
        stats.record(target, "crash", time.perf_counter() - start, case)
        raise
    finally:
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        faulthandler.cancel_dump_traceback_later()
    elapsed = time.perf_counter() - start
    if hung:
        stats.record(target, "hang", elapsed, case)
        raise AssertionError(f"{target}: a case ran over {budget} s: {case}")
    stats.record(target, outcome, elapsed, case)
    return outcome, detail


class _Tally:
    def __init__(self):
        self.outcomes = []

    def record(self, target, outcome, seconds, case):
        self.outcomes.append((outcome, seconds))


def test_the_hang_guard_stops_a_case_over_budget():
    tally = _Tally()

    def endless():
        while True:
            pass

    with pytest.raises(AssertionError, match="ran over 0.2 s: spin"):
        guarded(tally, "self-test", "spin", endless, budget=0.2)
    assert guarded(tally, "self-test", "quick", lambda: ("done", 1), budget=0.2) == ("done", 1)
    time.sleep(0.4)  # the timer is off again: no stray Hang after the case
    [(hang, spun), (done, _)] = tally.outcomes
    assert (hang, done) == ("hang", "done")
    assert spun >= 0.2, "the guard never stops a case before its budget"


def test_a_failing_case_reaches_hypothesis_which_shrinks_it():
    """A case that fails under the hang guard fails the test as hypothesis reports failures:
    with the smallest failing input, not the first one it happened to find."""
    fails_and_shrinks()


def fails_and_shrinks() -> None:
    """The check of the test above."""
    tally = _Tally()

    def run(n: int):
        assert n < 1000, f"{n} is too large"
        return "result", n

    @settings(FUZZ, max_examples=100)
    @given(n=st.integers(0, 10**9))
    def fuzz(n):
        guarded(tally, "self-test", str(n), lambda: run(n))

    with pytest.raises(AssertionError) as info:
        fuzz()
    assert str(info.value).startswith("1000 is too large")
    assert "fuzz(\n    n=1000,\n)" in "\n".join(info.value.__notes__)
    assert {"crash", "result"} <= {outcome for outcome, _ in tally.outcomes}


# -- "never runs code": what sympy's parser is handed --------------------------------------------

_OWN_NAMES = {"_index", "_slice", "_list", "_none", "_inf", "_ellipsis", "_newaxis", "_tuple"}


def plain_form_problem(text: str) -> str | None:
    """Why ``text`` is not the validator's plain form (calls, names, numbers), or None."""
    # a name may hold "__" inside (x__class__ is an ordinary name, a plain sympy Symbol); no
    # name may start with "_" but the validator's own markers
    rest = _NUMBER.sub("0", text)
    # a minus only as the sign of a literal argument: f(x, -1), (-_inf)
    rest = re.sub(r"(?:^|(?<=[(,]))(\s*)-(?=0|_inf\b)", r"\1", rest)
    extra = {c for c in rest if not (c.isalnum() or c == "_" or c.isspace())} - set("(),")
    if extra:
        return f"the characters {''.join(sorted(extra))!r}"
    for name in re.findall(r"[^\W\d]\w*", rest):
        if name.startswith("_") and not (name in _OWN_NAMES or name[:3] in ("_s_", "_u_")):
            return f"the name {name!r}"
    return None


class SympySpy:
    """Every text handed to sympy's parser since the last ``take``."""

    def __init__(self):
        self.seen: list[str] = []

    def take(self) -> list[str]:
        seen, self.seen = self.seen, []
        return seen

    def __repr__(self) -> str:
        return "SympySpy()"


@pytest.fixture
def sympy_inputs(monkeypatch) -> SympySpy:
    spy = SympySpy()
    real = parse_module.parse_expr

    def recording(text, *args, **kwargs):
        # as the checked text wrote it (the parser itself sees placeholders: _n0, _n1, ...)
        spy.seen.append(parse_module.written(text, kwargs["local_dict"]))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(parse_module, "parse_expr", recording)
    return spy


def assert_plain(spy: SympySpy, case: str) -> None:
    for text in spy.take():
        problem = plain_form_problem(text)
        assert problem is None, f"sympy's parser was handed {problem}: {text!r}\ncase: {case}"


def test_the_plain_form_check_tells_plain_from_not():
    assert plain_form_problem("add(mul(x0, 2.5), _index(x, _slice(_none, 1e+300, -1)))") is None
    assert plain_form_problem("sum(x, _none, False, _s_sum, (-_inf), 1e-05)") is None
    assert plain_form_problem("-0.5") is None
    for text in ("x.sum()", "__import__('os')", "a + b", "f(x - 1)", "_secret(x)", "'s'", "x[0]"):
        assert plain_form_problem(text) is not None


# -- data files for @file values, and the working directory of every case ------------------------


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    """A working directory with the files the value alphabet names (some of them damaged)."""
    root = tmp_path_factory.mktemp("fuzz-data")
    np.save(root / "x.npy", np.array([1.0, 2.0]))
    np.save(root / "m.npy", np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.save(root / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    np.save(root / "str.npy", np.array(["a", "b"]))
    with open(root / "big.npy", "wb") as f:  # a header promising 10^12 elements, no data
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)}
        )
    np.savez(root / "a.npz", a=np.arange(3.0), b=np.eye(2))
    (root / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    (root / "x.csv").write_text("1,2\n")
    (root / "bad.csv").write_text("1,2\n3,x\n")
    (root / "x.json").write_text("[1, 2]")
    (root / "bad.json").write_text("[1, [2")
    return root


@pytest.fixture
def in_data_dir(data_dir, monkeypatch, tmp_path):
    monkeypatch.chdir(data_dir)
    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM", "COLORTERM"):
        monkeypatch.delenv(name, raising=False)
    return data_dir


@contextmanager
def quiet():
    """Catch Python's warnings; ``warned()`` says whether one that Python would print came.

    Only the command line fails on such a warning (it would reach the user's stderr); here
    the tally counts the cases with one.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield lambda: " (with a Python warning)" if _visible(caught) else ""


def _visible(caught) -> list:
    return [w for w in caught if not issubclass(w.category, _HIDDEN)]


# -- target (a): parse_program -------------------------------------------------------------------


def check_parse_program(stats, seen: SympySpy, text: str) -> None:
    seen.take()

    def run():
        with quiet() as warned:
            try:
                return "result" + warned(), parse_program(text)
            except GradcliError as exc:
                return "error" + warned(), exc

    outcome, detail = guarded(stats, "parse_program", repr(text), run)
    if outcome.startswith("result"):
        assert isinstance(detail, ParsedProgram), f"{type(detail).__name__} for {text!r}"
    else:
        assert detail.render().startswith("error: ")
    assert_plain(seen, repr(text))


@SHORT_PROGRAMS
@given(text=programs())
def test_parse_program_returns_a_program_or_an_error(fuzz_stats, sympy_inputs, text):
    check_parse_program(fuzz_stats, sympy_inputs, text)


@pytest.mark.fuzz
@LONG
@given(text=programs())
def test_long_parse_program(fuzz_stats, sympy_inputs, text):
    check_parse_program(fuzz_stats, sympy_inputs, text)


# -- target (b): parse_value ---------------------------------------------------------------------


def check_parse_value(stats, text: str, stdin: str) -> None:
    def run():
        with quiet() as warned:
            try:
                # a value "-" reads stdin: give it a stream, never the terminal
                with bounds.using(bounds.Limits(max_elements=MAX_ELEMENTS)):
                    array = parse_value(text, "x", seed=0, stdin=io.StringIO(stdin))
                return "result" + warned(), array
            except GradcliError as exc:
                return "error" + warned(), exc

    case = f"{text!r} (stdin {stdin!r})"
    outcome, detail = guarded(stats, "parse_value", case, run)
    if outcome.startswith("result"):
        assert isinstance(detail, np.ndarray), f"{type(detail).__name__} for {case}"
    else:
        assert detail.render().startswith("error: ")


_STDIN_VALUES = st.sampled_from([s for s in STDIN if s is not None])


@SHORT_VALUES
@given(text=values(), stdin=_STDIN_VALUES)
def test_parse_value_returns_an_array_or_an_error(fuzz_stats, in_data_dir, text, stdin):
    check_parse_value(fuzz_stats, text, stdin)


@pytest.mark.fuzz
@LONG
@given(text=values(), stdin=_STDIN_VALUES)
def test_long_parse_value(fuzz_stats, in_data_dir, text, stdin):
    check_parse_value(fuzz_stats, text, stdin)


# -- target (c): the command line ----------------------------------------------------------------

RUNNER = CliRunner()


def check_cli(
    stats, seen: SympySpy, args: list[str], stdin: str | None, target: str = "cli"
) -> None:
    seen.take()
    case = "gradcli " + shlex.join(args) + ("" if stdin is None else f"  <<< {stdin!r}")

    def run():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = RUNNER.invoke(app, args, input=stdin)
        result.python_warnings = _visible(caught)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            return "crash", result
        return {0: "exit 0", 1: "exit 1", 2: "exit 2"}.get(result.exit_code, "exit other"), result

    outcome, result = guarded(stats, target, case, run)
    stderr = result.stderr
    last = (stderr.strip().splitlines() or [""])[-1]
    if outcome == "crash":
        exc = result.exception
        trace = "".join(traceback.format_exception(*result.exc_info))
        raise AssertionError(
            f"an exception escaped the command line: {type(exc).__name__}: {exc}\n{trace}\n{case}"
        )
    assert result.exit_code in (0, 1, 2), f"exit {result.exit_code}: {last}\n{stderr}\n{case}"
    assert "Traceback (most recent call last)" not in stderr, (
        f"a traceback: {last}\n{stderr}\n{case}"
    )
    assert not re.search(r"^internal error", stderr, re.M), f"{last}\n{stderr}\n{case}"
    if result.exit_code == 1:
        assert args[0] == "check", f"exit 1 from {args[0]}: {last}\n{stderr}\n{case}"
    if result.exit_code == 2:
        # gradcli's "error: ..." (warnings may come first, over several lines), or under
        # --format json one JSON object with its "error", or click's usage error: "Usage: ..."
        # and a box, or the box alone ("Option '--transpose' does not take a value.")
        first = stderr.split("\n", 1)[0]
        assert first.startswith(
            ("error: ", "Usage:", "warning: ", "╭─ Error", '{"error": ')
        ) and re.search(r'^(error: |Usage:|╭─ Error|{"error": )', stderr, re.M), (
            f"exit 2 without an error message: {stderr[:2000]!r}\n{case}"
        )
    # In-process, Python's warnings are caught, not printed; a real run prints them on stderr
    # (once per place, with Python's default filters), ahead of gradcli's own message.
    for w in result.python_warnings:
        raise AssertionError(
            f"a Python warning would reach stderr: {w.category.__name__}: {w.message}\n"
            f"({w.filename}:{w.lineno})\n{case}"
        )
    assert_plain(seen, case)


@SHORT_CLI
@given(case=command_lines())
def test_command_line_exits_0_1_or_2_with_a_message(fuzz_stats, sympy_inputs, in_data_dir, case):
    check_cli(fuzz_stats, sympy_inputs, *case)


@pytest.mark.fuzz
@LONG
@given(case=command_lines())
def test_long_command_line(fuzz_stats, sympy_inputs, in_data_dir, case):
    check_cli(fuzz_stats, sympy_inputs, *case)


# -- what the fuzz found: minimal reproducers, fixed, kept as regression cases -------------------
# Each is a case the fuzz found, reduced by hand; ``was`` says how gradcli failed on it.


def _found(name: str, was: str, *args: str, stdin: str | None = None):
    return pytest.param([*args, "--no-cache", f"--max-elements={MAX_ELEMENTS}"], stdin, id=name)


FOUND = [
    _found(
        "symbolic-simplify-ran-for-minutes",
        "over 60 s: sympy's simplify on gradient formulas with a random matrix's float constants",
        "vjp", f"--file={REPO / 'samples' / 'matrix_expression.gc'}", "--symbolic",
    ),
    _found(
        "export-complex",
        "internal error: TypeError: float() argument must be a string or a real number, not "
        "'complex' (export.py writing a complex input's literal for torch)",
        "export", "--to=torch", "--expr=y = x * 2", "--x=1+2j",
    ),
    _found(
        "symbolic-mean",
        "internal error: AttributeError: 'Add' object has no attribute 'size' "
        "(symbolic.py: mean of an object array divides a 0-d array and gets a sympy "
        "expression, not an array; also grad/vjp/jacobian --symbolic, and "
        "check -f samples/first_example.gc)",
        "check", "--expr=y = mean(x)", "--x=1,2",
    ),
    _found(
        "empty-columns-table",
        "internal error: ValueError: cannot reshape array of size 0 into shape (0) "
        "(render/table.py array_table on a value of two or more dimensions whose last one "
        "is 0: [[],[]], ones(2,0), eye(0); --format json is fine)",
        "eval", "--expr=y = x", "--x=[[],[]]",
    ),
    _found(
        "syntax-warning-program",
        "Python's SyntaxWarning 'invalid decimal literal' (from ast.parse) is printed on "
        "stderr ahead of the error",
        "eval", "--expr=y = 1if x else 2",
    ),
    _found(
        "syntax-warning-value",
        "Python's SyntaxWarning 'invalid decimal literal' (from ast.parse of a value) is "
        "printed on stderr ahead of the error",
        "eval", "--expr=y = x", "--x=1if 1 else 2",
    ),
    _found(
        "symbolic-mean-of-empty",
        "internal error: ZeroDivisionError: division by zero (symbolic.py: mean "
        "divides by x.size, 0 for an empty input)",
        "check", "--expr=y = mean(x)", "--x=zeros(0)",
    ),
    _found(
        "mean-of-empty-warning",
        "numpy's RuntimeWarning 'Mean of empty slice' (file, line and source) is printed on "
        "stderr by the forward-mode Jacobian of mean over an empty input (exit 0)",
        "jacobian", "--expr=y = mean(x)", "--x=zeros(0)",
    ),
    _found(
        "linspace-overflow-warning",
        "numpy's RuntimeWarnings 'overflow encountered in subtract' and 'invalid value "
        "encountered in multiply' are printed on stderr by a value linspace(-1e308, 1e308, 5) "
        "(exit 0)",
        "eval", "--expr=y = x", "--x=linspace(-1e308, 1e308, 5)",
    ),
]  # fmt: skip


@pytest.mark.parametrize("args, stdin", FOUND)
def test_what_the_fuzz_found_stays_fixed(fuzz_stats, sympy_inputs, in_data_dir, args, stdin):
    check_cli(fuzz_stats, sympy_inputs, args, stdin, target="found")
