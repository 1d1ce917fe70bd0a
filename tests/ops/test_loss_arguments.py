"""The losses' positional arguments after target, as torch reads them (torch's deprecated
size_average): refused where torch would read a reduction as size_average, taken where torch
takes the reduction third."""

from __future__ import annotations

import inspect

import pytest

from gradcli.ops.table import OPS


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
