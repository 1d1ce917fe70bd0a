"""The last review's reliability cases: --batch with an explicit --format table, a batch on
stdin whose points change shape, the sign of zero in derivative's JSON, what --shape takes,
and the losses' positional arguments after target (torch's deprecated size_average)."""

from __future__ import annotations

import inspect
import json

import pytest

from gradcli.ops.table import OPS

SQUARES = ("-e", "f = sum(x**2)")


@pytest.mark.parametrize("command", ["eval", "grad", "vjp"])
def test_batch_refuses_an_explicit_table_and_streams_json_lines_by_default(cli, command):
    done = cli(command, *SQUARES, "--batch", "-", "--format", "table", input="[1, 2]\n")
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.startswith("error: --batch writes JSON lines, one a point")
    assert "hint: leave out --format table" in done.stderr
    default = cli(command, *SQUARES, "--batch", "-", input="[1, 2]\n")
    assert default.exit_code == 0, default.stderr
    assert json.loads(default.stdout)["values"]["f"] == 5.0


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("[1, 2]\n[3, 4]\n[5]\n", "line 3: the point of x has shape (1,), but line 1's has (2,)"),
        ('{"x": [1, 2]}\n{"x": [1, 2, 3]}\n', "line 2: the point of x has shape (3,)"),
        ("[1, 2]\n[[1, 2], [3]]\n", "line 2: the point of x has rows of different lengths"),
    ],
)
def test_a_batch_on_stdin_names_the_line_whose_point_has_another_shape(cli, lines, message):
    done = cli("grad", *SQUARES, "--batch", "-", input=lines)
    assert done.exit_code == 2 and done.stdout == ""
    head, rest = message.split(": the point", 1)
    assert f"error: --batch -: {head}: the point" in done.stderr
    assert rest.split(", but")[0] in done.stderr


def test_a_batch_names_the_line_of_another_input_shape(cli):
    lines = '{"x": [1, 2], "w": 1}\n{"x": [3, 4], "w": [1, 2]}\n'
    done = cli("grad", "-e", "f = sum(w * x**2)", "--batch", "-", input=lines)
    assert done.exit_code == 2
    assert "line 2: the point of w has shape (2,), but line 1's has shape ()" in done.stderr


def test_derivatives_zeros_keep_their_sign_as_grads_and_torchs_do(cli_json):
    """The JSON of every command keeps the sign of a zero (IEEE's, which torch computes and
    prints as -0.): derivative's first derivative is grad's, to the sign."""
    torch = pytest.importorskip("torch")
    x = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    (expected,) = torch.autograd.grad(-(x**2), x)
    args = ("-e", "f = -(x**2)", "--x", "0")
    derivative = cli_json("derivative", *args, "--order", "2")["derivatives"]
    grad = cli_json("grad", *args)["grads"]["x"]
    first = derivative[0]["value"]
    assert json.dumps(first) == json.dumps(grad) == json.dumps(expected.item()) == "-0.0"
    assert derivative[1]["value"] == -2.0


@pytest.mark.parametrize(
    ("shape", "why"),
    [
        ("x=-1", "the size '-1' is negative"),
        ("x=2,-3", "the size '-3' is negative"),
        ("x=0", "the size '0' leaves the input without elements"),
        ("x=a", "the size 'a' is not a whole number"),
        ("x=1.5", "the size '1.5' is not a whole number"),
        ("x", "it is not NAME=SIZES"),
        ("=3", "it is not NAME=SIZES"),
    ],
)
def test_a_bad_shape_says_what_a_shape_is(cli, shape, why):
    done = cli("grad", "-e", "f = sum(x**3)", "--symbolic", "--shape", shape)
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: cannot read --shape {shape!r}: {why}")
    assert "hint: a shape is NAME= followed by the sizes" in done.stderr


def _torch_losses():
    """The op table's losses (a reduction parameter) beside torch's functional signature."""
    functional = pytest.importorskip("torch.nn.functional")
    for name, op in OPS.items():
        if any(p.name == "reduction" for p in op.params) and hasattr(functional, name):
            yield name, op, list(inspect.signature(getattr(functional, name)).parameters)


@pytest.mark.torch
def test_the_losses_positional_arguments_are_torchs():
    """Where torch's signature has the deprecated size_average, a call gives by position only
    what comes before it; elsewhere gradcli's order is torch's, up to the reduction."""
    for name, op, theirs in _torch_losses():
        ours = op.extra.get("positional") or [p.name for p in op.params]
        if "size_average" in theirs:
            assert list(ours) == theirs[: theirs.index("size_average")], name
        else:
            stop = theirs.index("reduction") + 1
            assert list(ours)[:stop] == theirs[:stop], name


@pytest.mark.parametrize(
    ("call", "given"),
    [
        ('out = mse_loss(a, b, "sum")', "mse_loss takes 2 positional arguments"),
        ('out = l1_loss(a, b, "sum")', "l1_loss takes 2 positional arguments"),
        ("out = hinge_embedding_loss(a, b, 1.0, 'sum')", "takes 3 positional arguments"),
    ],
)
def test_a_reduction_where_torch_reads_size_average_is_refused(cli, call, given):
    """torch reads mse_loss(a, b, "sum") as size_average="sum": the mean, not the sum; gradcli
    refuses it rather than give the sum, and says why."""
    done = cli("eval", "-e", call, "-i", "a=1,2", "-i", "b=1,-1")
    assert done.exit_code == 2 and done.stdout == ""
    assert given in done.stderr
    assert "torch reads the next one as its deprecated size_average" in done.stderr
    assert "e.g. reduction='sum'" in done.stderr


def test_a_reduction_third_where_torch_takes_it_there(cli_json):
    """huber_loss(input, target, reduction): torch's third positional is the reduction."""
    torch = pytest.importorskip("torch")
    a, b = torch.tensor([1.0, 2.0], dtype=torch.float64), torch.zeros(2, dtype=torch.float64)
    expected = torch.nn.functional.huber_loss(a, b, "sum").item()
    document = cli_json("eval", "-e", 'out = huber_loss(a, b, "sum")', "-i", "a=1,2", "-i", "b=0,0")
    assert document["values"]["out"] == pytest.approx(expected, rel=1e-12)
