"""No text given to gradcli runs as code: hostile programs and values are rejected unparsed."""

from __future__ import annotations

import builtins
import re
import tracemalloc
import zipfile

import numpy as np
import pytest
from hostile import HOSTILE_OPTIONS, HOSTILE_PROGRAMS, HOSTILE_RUN, HOSTILE_SCRIPTS

import gradcli.lang.parse as parse_module


class _Payload:
    """Unpickling this would create the canary file."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture
def canary(tmp_path):
    """A path that no hostile input may create, and a pickle that would create it."""
    target = tmp_path / "pwned"
    pickled = tmp_path / "payload.npy"
    np.save(pickled, np.array([_Payload(target)], dtype=object), allow_pickle=True)
    yield target, pickled
    assert not target.exists(), "a hostile input ran code"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["payload.npy"]


def _assert_rejected(result, message: str) -> None:
    """Exit 2 with an actionable error: what (the message), where and what would be right
    (a caret, a hint or the option named). How long a rejection takes is measured by
    ``python -m benchmarks rejections``."""
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("error: "), result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "^" in result.stderr or "hint: " in result.stderr or " --" in result.stderr


@pytest.fixture
def parse_expr_calls(monkeypatch):
    """Replace sympy's parser (which evals) in gradcli.lang.parse with a recorder."""
    calls = []
    real = parse_module.parse_expr

    def recording(text, *args, **kwargs):
        # the parser sees placeholders only (_n0, _n1, ...), each bound to what it stands for
        names = re.findall(r"[^\W\d]\w*", re.sub(r"\d[\w.+-]*", "0", text))
        assert all(re.fullmatch(r"_n\d+|True|False", n) for n in names), text
        calls.append(parse_module.written(text, kwargs["local_dict"]))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(parse_module, "parse_expr", recording)
    return calls


@pytest.fixture
def eval_exec_calls(monkeypatch):
    """Record every string handed to builtins.eval and builtins.exec (typer evals annotations)."""
    calls = []
    real_eval, real_exec = builtins.eval, builtins.exec

    def spy_eval(source, *args, **kwargs):
        calls.append(source)
        return real_eval(source, *args, **kwargs)

    def spy_exec(source, *args, **kwargs):
        calls.append(source)
        return real_exec(source, *args, **kwargs)

    monkeypatch.setattr(builtins, "eval", spy_eval)
    monkeypatch.setattr(builtins, "exec", spy_exec)
    return calls


@pytest.mark.parametrize("name", list(HOSTILE_PROGRAMS))
def test_hostile_program_is_rejected_before_sympy(
    cli, canary, parse_expr_calls, eval_exec_calls, name
):
    program, message = HOSTILE_PROGRAMS[name]
    program = program.format(c=canary[0])
    result = cli("grad", "-e", program, "--x", "1", "--no-cache")
    _assert_rejected(result, message)
    # sympy's parser sees only the harmless statements beside a hostile one, if any
    assert set(parse_expr_calls) <= {"mul(w, x)", "add(\u0445, 1)"}, parse_expr_calls
    assert not [c for c in eval_exec_calls if isinstance(c, str) and program in c]


@pytest.mark.parametrize("name", list(HOSTILE_OPTIONS))
def test_hostile_value_or_option_is_rejected(cli, canary, eval_exec_calls, name):
    options, message = HOSTILE_OPTIONS[name]
    options = [o.format(c=canary[0], pickle=canary[1]) for o in options]
    result = cli("vjp", "-e", "y = x * 1", *options, "--no-cache")
    _assert_rejected(result, message)
    assert not [c for c in eval_exec_calls if isinstance(c, str) and "touch" in c]


@pytest.mark.parametrize("name", list(HOSTILE_SCRIPTS))
def test_a_script_builds_no_text_beyond_the_budget(cli, name):
    """Format widths and precisions, nested f-strings and tolist() are charged to
    --max-memory before their text is made: what Python allocates in the run stays small."""
    statements, status, message = HOSTILE_SCRIPTS[name]
    script = f"import torch\nx = torch.tensor(2.0, requires_grad=True)\n{statements}\n"
    cli("run", "-", input="import torch\nx = torch.ones(2)\nprint(x * 2)\n")  # imports done
    tracemalloc.start()
    try:
        result = cli("run", "-", "--max-memory", "50MB", "--max-steps", "100000", input=script)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == status, result.stderr
    assert message in result.stderr, result.stderr
    assert "internal error" not in result.stderr
    if status == 2:
        _assert_rejected(result, message)
    assert peak < 20 * 10**6, f"{peak:,} bytes allocated"


def test_the_parse_expr_spy_does_see_valid_programs(cli, parse_expr_calls):
    """The control for the test above: a valid program does reach sympy's parser."""
    result = cli("grad", "-e", "y = sum(x * 2)", "--x", "1,2", "--no-cache")
    assert result.exit_code == 0
    assert parse_expr_calls == ["sum(mul(x, 2), _none, False, _none)"]


def test_the_program_file_is_checked_like_an_expression(cli, tmp_path, parse_expr_calls):
    program = tmp_path / "evil.gc"
    program.write_text("x = ones(2)\ny = __import__('os').system('echo hacked')\n")
    result = cli("eval", "-f", str(program), "--no-cache")
    assert result.exit_code == 2
    assert "statement 2 (line 2)" in result.stderr and "attribute access" in result.stderr
    assert parse_expr_calls == []


def _touch_attempts(target) -> list[str]:
    path = str(target)
    return [
        f"y = __import__('pathlib').Path('{path}').touch()",
        f"y = open('{path}', 'w')",
        f"y = exec(\"open('{path}', 'w')\")",
        f"y = eval(\"open('{path}', 'w')\")",
        f"y = [open('{path}', 'w') for i in x]",
        f"y = (lambda: open('{path}', 'w'))()",
        f"y = x; z = open('{path}', 'w')",
    ]


@pytest.mark.parametrize("attempt", range(7))
def test_no_file_is_created_by_a_program(cli, tmp_path, attempt):
    target = tmp_path / "pwned"
    program = _touch_attempts(target)[attempt]
    for command in ("eval", "grad", "vjp", "jacobian"):
        result = cli(command, "-e", program, "--x", "1", "--no-cache")
        assert result.exit_code == 2
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("attempt", range(3))
def test_no_file_is_created_by_a_value(cli, tmp_path, attempt):
    target = tmp_path / "pwned"
    value = [
        f"__import__('pathlib').Path('{target}').touch()",
        f"open('{target}', 'w')",
        f"ones(open('{target}', 'w'))",
    ][attempt]
    for option in (["--x", value], ["-i", f"x={value}"], ["-i", "x=1", "--v", value]):
        result = cli("vjp", "-e", "y = x * 1", *option)
        assert result.exit_code == 2
        assert "Traceback" not in result.stderr
    assert not target.exists()


def test_hostile_constructor_arguments_in_a_program(cli, tmp_path):
    target = tmp_path / "pwned"
    result = cli(
        "eval", "-e", f"w = ones(__import__('pathlib').Path('{target}').touch())", "--no-cache"
    )
    assert result.exit_code == 2
    assert "not allowed in a value" in result.stderr
    assert not target.exists()


def test_sympy_names_in_a_program_are_plain_inputs(cli_json):
    """Names that mean something to sympy (S, N, I, E, Symbol) are inputs like any other."""
    document = cli_json(
        "eval",
        "-e",
        "y = S + N + I + E + Symbol + Integer",
        "-i",
        "S=1",
        "-i",
        "N=2",
        "-i",
        "I=3",
        "-i",
        "E=4",
        "-i",
        "Symbol=5",
        "-i",
        "Integer=6",
    )
    assert document["values"]["y"] == 21.0


def _odd_files(folder) -> None:
    """Files whose reading once crashed gradcli: each must now be a plain error."""
    with (folder / "huge.npy").open("wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f8", "fortran_order": False, "shape": (10**400,)}
        )
    np.save(folder / "deep.npy", np.ones((1,) * 40))
    with zipfile.ZipFile(folder / "text.npz", "w") as archive:
        archive.writestr("notes.txt", "hello")
    np.savez(folder / "empty.npz")
    (folder / "wide.csv").write_text('"' + "1" * 200_000 + '"\n')


ODD_INPUTS = {
    "int-beyond-float": (["--x", "1" + "0" * 400], "x: a whole number of about 401 digits"),
    "json-4301-digits": (["--x", "-"], "a whole number of more than 4,300 digits"),
    "npy-shape-huge": (["--x", "@huge.npy"], "too many dimensions, or one too large"),
    "npy-40-dimensions": (["--x", "@deep.npy"], "too many dimensions, or one too large"),
    "list-40-deep": (["--x", "[" * 40 + "1" + "]" * 40], "at most 32 dimensions"),
    "npz-text-member": (["--x", "@text.npz"], "holds 'notes.txt', which is not a .npy array"),
    "npz-empty": (["--x", "@empty.npz"], "the archive holds no arrays"),
    "csv-wide-field": (["--x", "@wide.csv"], "field larger than field limit"),
    "not-utf8": (["--x", "1\udc85"], "--x: the text is not valid UTF-8"),
    "limit-beyond": (["--x", "1", "--max-elements", str(10**30)], "between 1 and"),
    "at-nothing": (["--x", "@"], "@ needs a file name"),
    "nested-call": (["--x", "-ones(2)"], "x: a nested call is not allowed in a value"),
    "huge-constructor": (["--x", "ones(2, 1" + "0" * 320 + ")"], "beyond the range of a float"),
}


@pytest.mark.parametrize("name", list(ODD_INPUTS))
def test_odd_inputs_are_errors_not_crashes(cli, tmp_path, monkeypatch, name):
    _odd_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    options, message = ODD_INPUTS[name]
    result = cli("eval", "-e", "y = x * 2", *options, input="[1" + "0" * 5000 + "]")
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr


@pytest.mark.parametrize(
    "program, message",
    [
        ("y += x", "'y' is written into before it is assigned"),
        ("y: int = x", "found an annotation"),
        ("y = x\v+ 1", "U+000B a control character"),
        ("y = x[1" + "0" * 30 + "]", "the index 1e+30 is too large"),
        ("y = reshape(x, 1" + "0" * 20 + ")", "size of reshape is too large"),
    ],
)
def test_odd_programs_are_errors_not_crashes(cli, program, message):
    result = cli("eval", "-e", program, "--x", "1,2", "--no-cache")
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_sympy_is_bounded_in_time_and_size(cli):
    """Exact powers are never built, and a formula sympy cannot finish in its budget is left
    out with a note; the numbers still come out."""
    power = cli("grad", "-e", "y = x**(2**2**2**30)", "--x", "2", "--symbolic")
    assert power.exit_code == 0
    assert "no symbolic form: a power of numbers beyond float range" in power.stderr
    nested = cli("check", "-e", "y = exp(exp(exp(exp(exp(x)))))", "--x", "1")
    assert "no symbolic check: sympy took longer than 5 s" in nested.stderr


@pytest.mark.parametrize("name", list(HOSTILE_RUN))
def test_a_hostile_script_is_refused_and_nothing_of_it_runs(cli, tmp_path, name):
    """Dunder attributes by every path, imports of other modules, the builtins that reach
    files and code, a format field's attribute: refused with exit 2; no canary is made."""
    canary = tmp_path / "canary"
    program, message = HOSTILE_RUN[name]
    script = "import torch\nprint('before')\n" + program.replace("{c}", str(canary)) + "\n"
    result = cli("run", "-", input=script)
    assert result.exit_code == (1 if name == "torch-internals" else 2), result.stderr
    assert message in result.stderr, result.stderr
    assert not canary.exists()
    assert "internal error" not in result.stderr
    if name not in ("getattr-dunder", "format-method", "torch-internals"):
        assert result.stdout == ""  # refused as the script was read: nothing of it ran
