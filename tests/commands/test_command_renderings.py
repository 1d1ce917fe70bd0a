"""Each command's table and JSON on its sample, against snapshots (rounded numbers), and
their numbers against torch at full precision."""

from __future__ import annotations

import pytest

SNAPSHOTS = [
    ("jvp", "-f", "samples/forward_mode.gc", "--t", "1,0"),
    ("hessian", "-f", "samples/rosenbrock_hessian.gc"),
    ("hvp", "-f", "samples/hvp_rosenbrock.gc", "--v", "1,0"),
    ("check", "-f", "samples/vjp_example2.gc"),
    ("graph", "-f", "samples/graph_network.gc"),
    ("explain", "-f", "samples/vjp_example2.gc", "--v", "1,1,1"),
    ("plot", "-f", "samples/plot_tanh.gc"),
    ("jacobian", "-f", "samples/heatmap_softmax.gc", "--heatmap"),
    ("grad", "-f", "samples/rosenbrock.gc", "--symbolic"),
]


@pytest.mark.parametrize("args", SNAPSHOTS, ids=[" ".join(a[:3]) for a in SNAPSHOTS])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_renderings_match_snapshots(cli, snapshot, args, fmt):
    result = cli(*args, "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == snapshot


@pytest.mark.parametrize("args", SNAPSHOTS, ids=[" ".join(a[:3]) for a in SNAPSHOTS])
def test_rendering_numbers_match_torch(cli_json, torch_oracle, args):
    """The numbers of test_renderings_match_snapshots' snapshots, at full precision."""
    torch_oracle(list(args), cli_json(*args))
