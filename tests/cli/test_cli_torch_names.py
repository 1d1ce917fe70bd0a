"""Which of the language's functions each torch module has (``gradcli/lang/torch_names.json``,
written from torch 2.13), and what a program or ``gradcli run`` makes of a function torch does
not have in the module it is taken from."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gradcli.lang import pytorch

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_recorded_names_are_the_installed_torchs():
    torch = pytest.importorskip("torch")
    if not torch.__version__.startswith("2.13."):
        pytest.skip("the names are torch 2.13's")
    sys.path.insert(0, str(DOCS))
    try:
        from write_torch_names import TARGET, text
    finally:
        sys.path.remove(str(DOCS))
    assert TARGET.read_text() == text(), "run: python docs/write_torch_names.py"


def test_where_torch_has_a_function():
    assert pytorch.where_torch_has("gelu") == ["torch.nn.functional"]
    assert pytorch.where_torch_has("sin") == ["torch"]
    assert pytorch.where_torch_has("cbrt") == []  # gradcli's own


@pytest.mark.parametrize(
    ("program", "message", "hint"),
    [
        ("y = torch.cbrt(x)", "PyTorch 2.13 has no torch.cbrt", "cbrt is gradcli's own"),
        ("y = torch.gelu(x)", "no torch.gelu", "PyTorch's is torch.nn.functional.gelu"),
        ("y = F.sin(x)", "no torch.nn.functional.sin", "PyTorch's is torch.sin"),
        ("y = torch.linalg.sin(x)", "no torch.linalg.sin", "write sin(...)"),
    ],
)
def test_a_program_is_told_where_torch_has_the_function(cli, program, message, hint):
    done = cli("grad", "-e", program, "--x", "1")
    assert done.exit_code == 2
    assert message in done.stderr and hint in done.stderr
    assert "Traceback" not in done.stderr


def test_cbrt_is_the_real_cube_root_in_a_program(cli_json):
    document = cli_json("grad", "-e", "y = cbrt(x).sum()", "--x", "-8,0,27")
    assert document["values"]["y"] == pytest.approx(1.0)
    gx = document["grads"]["x"]
    assert gx[1] is None  # 1 / (3 cbrt(0) ** 2) = inf, as its entry says: JSON's null
    assert [gx[0], gx[2]] == pytest.approx([1 / 12, 1 / 27])


@pytest.mark.parametrize(
    ("program", "last_line", "carets"),
    [
        (
            "x = torch.ones(2)\nprint(x)\ny = 2 * torch.cbrt(x) + 1",
            "AttributeError: module 'torch' has no attribute 'cbrt'",
            "            ^^^^^^^^^^",
        ),
        (
            "x = torch.ones(2)\nprint(x)\ny = x.cbrt()",
            "AttributeError: 'Tensor' object has no attribute 'cbrt'",
            "        ^^^^^^",
        ),
        (
            "import torch.nn.functional as F\nx = torch.ones(2)\nprint(x)\nprint(F.sin(x))",
            "AttributeError: module 'torch.nn.functional' has no attribute 'sin'",
            "          ^^^^^",
        ),
    ],
)
def test_gradcli_run_raises_torchs_error_when_the_script_gets_there(
    cli, tmp_path, program, last_line, carets
):
    script = tmp_path / "script.py"
    script.write_text("import torch\n" + program + "\n")
    done = cli("run", str(script))
    assert done.exit_code == 1
    assert done.stdout == "tensor([1., 1.])\n"  # what ran before it is shown
    lines = done.stderr.splitlines()
    assert lines[-1] == last_line
    assert lines[-2] == carets
