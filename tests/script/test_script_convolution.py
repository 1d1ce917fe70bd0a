"""Convolution and pooling in ``gradcli run`` with a setting per spatial dim, as torch's
docstrings write them (issue 30): the layers print as torch prints them, compute torch's
shapes, and refuse bad settings with torch's ``RuntimeError`` (caught by the script, or its
traceback, exit 1); a convolution too large for the limits is refused before it is made."""

from __future__ import annotations

import pytest
from python_oracle import gradcli_run, masked, torch_runs
from typer.testing import CliRunner

from gradcli.cli.app import app

# the inputs: values without a draw (the oracle hands torch's randn the values gradcli drew)
PRELUDE = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
    "def ramp(*shape):\n    n = 1\n    for s in shape:\n        n *= s\n"
    "    return torch.linspace(-1, 1, n).reshape(shape).sin()\n"
)
PROGRAMS = {
    "layers with a setting per dim": (
        "layers = [nn.Conv2d(2, 3, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1)),\n"
        "    nn.Conv1d(2, 3, (3,), stride=[2], padding=1), nn.Conv3d(2, 3, (1, 2, 3)),\n"
        "    nn.ConvTranspose2d(2, 3, (3, 5), stride=(2, 1), padding=(4, 2)),\n"
        "    nn.ConvTranspose2d(2, 3, 3, stride=(2, 3), output_padding=(1, 2)),\n"
        "    nn.MaxPool2d((3, 2), stride=(2, 1)), nn.MaxPool2d([3, 2], dilation=(1, 2)),\n"
        "    nn.AvgPool2d((3, 2), stride=(2, 1), padding=[1, 1], ceil_mode=True)]\n"
        "inputs = [ramp(2, 2, 10, 12), ramp(2, 9), ramp(1, 2, 3, 4, 5),\n"
        "    ramp(2, 2, 9, 7), ramp(2, 4, 4), ramp(2, 2, 10, 12),\n"
        "    ramp(1, 2, 7, 8), ramp(2, 2, 10, 12)]\n"
        "for layer, x in zip(layers, inputs):\n"
        "    x = x.requires_grad_(True)\n"
        "    y = layer(x)\n"
        "    y.sum().backward()\n"
        "    print(layer, tuple(y.shape), y.grad_fn.name(), x.grad.shape)"
    ),
    "the 1-D and 3-D modules": (
        "layers = [nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1, output_padding=1),\n"
        "    nn.ConvTranspose3d(2, 3, (2, 3, 2), stride=(1, 2, 1)), nn.MaxPool1d(3, stride=2),\n"
        "    nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0)),\n"
        "    nn.AvgPool1d(3, stride=2, padding=1), nn.AvgPool3d((2, 3, 2), ceil_mode=True)]\n"
        "inputs = [ramp(2, 2, 5), ramp(1, 2, 3, 3, 4), ramp(2, 7), ramp(1, 2, 4, 5, 6),\n"
        "    ramp(2, 3, 8), ramp(2, 4, 5, 6)]\n"
        "for layer, x in zip(layers, inputs):\n"
        "    x = x.requires_grad_(True)\n"
        "    y = layer(x)\n"
        "    y.sum().backward()\n"
        "    print(layer, tuple(y.shape), y.grad_fn.name(), x.grad.shape)"
    ),
    "the output size of a transposed convolution": (
        "x = ramp(1, 4, 12, 12)\n"
        "down = nn.Conv2d(4, 4, 3, stride=2, padding=1)\n"
        "up = nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1)\n"
        "h = down(x)\nprint(h.size())\n"
        "print(up(h, output_size=x.size()).size(), up(h, output_size=[11, 11]).size())\n"
        "try:\n    up(h, output_size=(14, 14))\nexcept ValueError as e:\n    print(e)"
    ),
    "bad settings are torch's RuntimeError": (
        "x = torch.ones(1, 2, 5, 5)\nw = torch.ones(4, 2, 3, 3)\n"
        "calls = [lambda: F.conv2d(x, w, stride=-1), lambda: F.conv2d(x, w, stride=(1, 1, 1)),\n"
        "    lambda: F.conv2d(x, w, dilation=(3, 1)), lambda: F.max_pool2d(x, (6, 2)),\n"
        "    lambda: F.max_pool2d(x, 2, stride=(1, -1)), lambda: F.avg_pool2d(x, (2, 2, 2)),\n"
        "    lambda: F.conv_transpose2d(x, w.transpose(0, 1), output_padding=(0, 1)),\n"
        "    lambda: nn.Conv2d(2, 4, 3, stride=(1, 1, 1))(x), lambda: nn.MaxPool2d((1, 2, 3))(x)]\n"
        "for call in calls:\n"
        "    try:\n        call()\n    except RuntimeError as e:\n        print(e)\n"
        "F.conv2d(x, torch.ones(4, 2, 7, 8), padding=(1, 1))"
    ),
}


@pytest.fixture(scope="module")
def torch_outcomes(tmp_path_factory):
    pytest.importorskip("torch")
    return torch_runs([PRELUDE + p for p in PROGRAMS.values()], tmp_path_factory.mktemp("conv"))


@pytest.mark.torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_convolution_and_pooling_run_as_torchs(name, torch_outcomes):
    program = PRELUDE + PROGRAMS[name]
    assert masked(gradcli_run(program)) == masked(torch_outcomes[program])


def test_a_bad_setting_ends_the_script_with_torchs_runtime_error():
    program = (
        PRELUDE
        + "print('before')\n"
        + "F.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2), stride=(1, -1))"
    )
    stdout, status, line = gradcli_run(program)
    assert stdout.endswith("\nbefore\n") and status == 1
    assert line == "RuntimeError: non-positive stride is not supported"


@pytest.mark.parametrize(
    ("program", "option"),
    [
        (
            "y = F.conv2d(torch.ones(1, 1, 1, 2), torch.ones(1, 1, 1, 2), padding=(100000000, 0))",
            "--max-elements",
        ),
        (  # the transposed convolution's scatter was not counted before it was made
            "y = F.conv_transpose2d(torch.ones(1, 1, 1, 2), torch.ones(1, 1, 1, 2), "
            "stride=(1, 10000000))",
            "--max-memory",
        ),
        (
            "y = F.conv_transpose2d(torch.ones(1, 1, 1, 2), torch.ones(1, 1, 1, 2), "
            "stride=(1, 100000000))",
            "--max-elements",
        ),
        (
            "y = nn.Conv2d(1, 1, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))"
            "(torch.ones(20, 1, 800, 1000))",
            "--max-memory",
        ),
    ],
)
def test_a_convolution_too_large_is_refused_before_it_is_made(program, option):
    """Exit 2 naming the option that raises the limit; the line before it ran."""
    done = CliRunner().invoke(
        app, ["run", "--max-memory", "200MB", "-"], input=PRELUDE + "print('before')\n" + program
    )
    assert done.exit_code == 2, (done.stdout, done.stderr)
    assert done.stdout.endswith("before\n")
    assert option in done.stderr and "Traceback" not in done.stderr
