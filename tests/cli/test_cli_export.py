"""gradcli export: the scripts it writes run (torch 2.13, numpy, sympy) and print the numbers
gradcli computes, its value and Jacobian; the LaTeX shows the seed post's Jᵀ."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradcli  # noqa: F401 - fills the op table
from gradcli.ops.exporting import WRITTEN_OUT, torch_function, torch_method
from gradcli.ops.table import OPS

# (program, value arguments): each a program gradcli and torch both compute
PROGRAMS = [
    ("y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1", ["--x", "1,2"]),
    ("y = x + 2; z = y*y*3; out = mean(z)", ["--x", "ones(2,2)"]),
    ("y = log(x)", ["--x", "[[1,2,3],[4,5,6]]"]),
    (
        "z = torch.matmul(x, W) + b; loss = F.binary_cross_entropy_with_logits(z, y)",
        ["--x", "ones(3)", "-i", "W=randn(3,4)", "-i", "b=randn(4)", "-i", "y=zeros(4)"],
    ),
    (
        "s = F.softmax(x, dim=-1); g = F.gelu(x, approximate='tanh'); out = (s * g).sum()",
        ["--x", "[[0.5,-1,2],[1,0.3,-0.2]]"],
    ),
    (
        "r = x.reshape(2, 3).sum(dim=0, keepdim=True); q = r.expand(2, 3) * x.reshape(2, 3)",
        ["--x", "arange(6)"],
    ),
    (
        "d = torch.linalg.det(A) + torch.linalg.inv(A).sum(); n = torch.linalg.vector_norm(A)",
        ["-i", "A=[[2,1],[0.5,3]]"],
    ),
    ("values, indices = torch.max(x, 1); out = values * 2", ["--x", "[[1,5,2],[7,3,4]]"]),
    (
        "y = torch.empty(3)\ny[0] = x[0]**2\ny[1] = x[1] * x[2]\ny[2] = torch.sin(x[2])",
        ["--x", "0.5,1.5,2.5"],
    ),
    ("y = x + torch.eye(2); z = torch.clamp(y, min=0.5) ** 2", ["--x", "[[0.1,0.7],[1.2,-0.3]]"]),
    (
        "m = F.mse_loss(x, t, reduction='sum') + F.relu(x).mean()",
        ["--x", "0.5,-1,2", "-i", "t=1,1,1"],
    ),
    (
        "u = torch.einsum('ij,j->i', A, x); c = torch.cat([u, x * 3])",
        ["--x", "1,2", "-i", "A=[[1,2],[3,4]]"],
    ),
    # x.T, x.t() and transpose(v) of a vector: torch.t (torch.transpose needs two dims)
    ("m = x.reshape(2, 2); y = m.T @ m + m.t() + x.T @ x", ["--x", "1,2,3,4"]),
    # torch 2.13 has no cbrt: the script writes the real cube root out
    ("y = cbrt(x * 2) * x", ["--x", "-2,0.5,4"]),
]

FORMULA_PROGRAMS = [p for k, p in enumerate(PROGRAMS) if k in (0, 1, 2, 4, 6, 8, 11, 13)]


def _gradcli_jacobian(cli_json, program: str, values: list[str]) -> dict:
    doc = cli_json("jacobian", "-e", program, *values)
    return {
        "output": doc["output"],
        "value": doc["values"][doc["output"]],
        "jacobian": doc["jacobian"],
    }


def _run_in_process(script: str) -> dict:
    """The script run as __main__ in this process; torch's default dtype, which a torch
    script sets, is put back after it (later tests compare with torch's float32 default)."""
    out = io.StringIO()
    torch = sys.modules.get("torch")
    default = None if torch is None else torch.get_default_dtype()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(script, "<export>", "exec"), {"__name__": "__main__"})
    finally:
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_default_dtype(default or torch.float32)
    return json.loads(out.getvalue())


def _export(cli, to: str, program: str, values: list[str]) -> str:
    result = cli("export", "--to", to, "-e", program, *values)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _same(got: dict, expected: dict, rtol: float = 1e-10) -> None:
    assert got["output"] == expected["output"]
    np.testing.assert_allclose(
        np.array(got["value"], dtype=float),
        np.array(expected["value"], dtype=float),
        rtol=rtol,
        atol=1e-12,
    )
    assert set(got["jacobian"]) == set(expected["jacobian"])
    for name, jacobian in expected["jacobian"].items():
        np.testing.assert_allclose(
            np.array(got["jacobian"][name], dtype=float),
            np.array(jacobian, dtype=float),
            rtol=rtol,
            atol=1e-12,
        )


@pytest.mark.parametrize(("program", "values"), PROGRAMS)
def test_the_torch_export_computes_gradclis_numbers(cli, cli_json, program, values):
    pytest.importorskip("torch")
    script = _export(cli, "torch", program, values)
    _same(_run_in_process(script), _gradcli_jacobian(cli_json, program, values))


def test_the_torch_export_runs_as_a_script(cli, cli_json, tmp_path):
    pytest.importorskip("torch")
    program, values = PROGRAMS[0]
    path = tmp_path / "exported.py"
    result = cli("export", "--to", "torch", "-e", program, *values, "--out", path)
    assert result.exit_code == 0 and f"wrote {path}" in result.stderr
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, check=True)
    _same(json.loads(run.stdout), _gradcli_jacobian(cli_json, program, values))


@pytest.mark.parametrize(("program", "values"), FORMULA_PROGRAMS)
@pytest.mark.parametrize("to", ["numpy", "sympy"])
def test_the_formula_exports_compute_gradclis_numbers(cli, cli_json, to, program, values):
    script = _export(cli, to, program, values)
    _same(_run_in_process(script), _gradcli_jacobian(cli_json, program, values), rtol=1e-9)


@pytest.mark.parametrize(("program", "values"), FORMULA_PROGRAMS[:4])
def test_the_jax_export_computes_gradclis_numbers(cli, cli_json, program, values):
    """JAX differentiates the formulas itself (jax.jacfwd); it runs where JAX is installed
    (it is not among the test dependencies)."""
    pytest.importorskip("jax")
    script = _export(cli, "jax", program, values)
    _same(_run_in_process(script), _gradcli_jacobian(cli_json, program, values), rtol=1e-9)


def test_a_function_the_printers_cannot_write_is_refused(cli):
    result = cli("export", "--to", "numpy", "-e", "f = torch.lgamma(x)", "--x", "1.5")
    assert result.exit_code == 2
    assert "cannot write polygamma" in result.stderr
    result = cli("export", "--to", "jax", "-e", "f = torch.erf(x)", "--x", "1.5")
    assert result.exit_code == 2
    assert "cannot write erf" in result.stderr


def test_latex_writes_the_seed_posts_transposed_jacobian(cli):
    text = _export(cli, "latex", *PROGRAMS[0])
    assert r"y_{1} &= x_{0}^{2} + 5 x_{1}^{2}" in text
    partials = r"\frac{\partial y_{0}}{\partial x_{0}} & \frac{\partial y_{1}}{\partial x_{0}}"
    assert partials in text
    assert r"\begin{pmatrix} 2 x_{0} & 2 x_{0} & 0 \\ 0 & 10 x_{1} & 3 \end{pmatrix}" in text
    assert r"\begin{pmatrix} 2 & 2 & 0 \\ 0 & 20 & 3 \end{pmatrix}" in text


def test_every_entry_names_a_torch_callable():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F  # noqa: N812 - as the scripts import it

    spaces = {"torch": torch, "F": F, "torch.linalg": torch.linalg}
    for op in OPS.values():
        if not op.in_language or op.operator is not None or op.name in WRITTEN_OUT:
            continue
        method = torch_method(op)
        if method is not None:
            assert callable(getattr(torch.Tensor, method)), op.name
            continue
        module, _, name = torch_function(op).rpartition(".")
        assert callable(getattr(spaces[module], name)), f"{op.name}: {torch_function(op)}"


@pytest.mark.parametrize(
    ("to", "program", "message"),
    [
        ("torch", "y = F.dropout(x, 0.5)", "cannot write dropout"),
        ("numpy", "y = torch.clamp(x, min=0.5)", "clamp has no symbolic form"),
        ("toch", "y = x", "--to: 'toch' is not one of"),
    ],
)
def test_what_an_exporter_cannot_write_is_refused(cli, to, program, message):
    result = cli("export", "--to", to, "-e", program, "--x", "1,2")
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples").glob("*.gc"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("to", ["torch", "numpy"])
def test_every_sample_exports_or_says_why_not(cli, to, sample):
    """Each sample's export computes gradcli's numbers; where gradcli has no Jacobian (no
    input requires grad) or the exporter cannot write an operation, exit 2 with the reason."""
    if to == "torch":
        pytest.importorskip("torch")
    path = sample.relative_to(sample.parents[1]).as_posix()
    result = cli("export", "--to", to, "-f", path)
    jacobian = cli("jacobian", "-f", path, "--format", "json")
    if jacobian.exit_code:
        assert result.exit_code == 2 and "no input requires grad" in result.stderr
        return
    if to == "numpy" and result.exit_code:
        assert result.exit_code == 2 and "cannot here" in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    doc = json.loads(jacobian.stdout)
    expected = {
        "output": doc["output"],
        "value": doc["values"][doc["output"]],
        "jacobian": doc["jacobian"],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # softmax without dim, as torch warns
        _same(_run_in_process(result.stdout), expected, rtol=1e-8)


@pytest.mark.parametrize(("to", "name"), [("torch", "F"), ("numpy", "numpy"), ("sympy", "point")])
def test_a_value_named_as_the_script_names_something_is_refused(cli, to, name):
    result = cli("export", "--to", to, "-e", f"y = {name} * x", "--x", "1,2", "-i", f"{name}=3")
    assert result.exit_code == 2
    assert f"cannot name a value {name}" in result.stderr


@pytest.mark.torch
def test_values_named_as_the_scripts_own_are_kept_apart(cli, cli_json):
    """A constant called value stays the program's (the script's own names start with _)."""
    program, values = "y = value * x", ["--x", "1,2", "-i", "value=3", "--wrt", "x"]
    script = _export(cli, "torch", program, values)
    _same(_run_in_process(script), _gradcli_jacobian(cli_json, program, values))
