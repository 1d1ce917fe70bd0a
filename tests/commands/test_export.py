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
# the targets whose export is code: each runs, where its library is installed
# torch's scripts need torch (the marker, so that CI's run with torch takes them); JAX is no
# test dependency, and its scripts run where it is installed
CODE_TARGETS = [pytest.param("torch", marks=pytest.mark.torch), "numpy", "jax", "sympy"]


def _needs(to: str) -> None:
    """Skip a script whose library is not installed (torch and JAX are optional)."""
    if to in ("torch", "jax"):
        pytest.importorskip(to)


def _runs_as_gradcli_computes(cli, to: str, args: list[str], rtol: float = 1e-8) -> bool:
    """``export --to to`` of ``args`` runs and prints gradcli's value and Jacobian (True);
    where gradcli has no Jacobian (no input requires grad) or the formula exporters no
    formulas, exit 2 with the reason (False)."""
    result = cli("export", "--to", to, *args)
    jacobian = cli("jacobian", *args, "--format", "json")
    if jacobian.exit_code:
        assert result.exit_code == 2 and "no input requires grad" in result.stderr
        return False
    if to != "torch" and result.exit_code:
        assert result.exit_code == 2, result.stderr
        assert "cannot here" in result.stderr or "cannot write" in result.stderr
        return False
    assert result.exit_code == 0, result.stderr
    doc = json.loads(jacobian.stdout)
    expected = {
        "output": doc["output"],
        "value": doc["values"][doc["output"]],
        "jacobian": doc["jacobian"],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # softmax without dim, as torch warns
        _same(_run_in_process(result.stdout), expected, rtol=rtol)
    return True


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("to", CODE_TARGETS)
def test_every_sample_exports_or_says_why_not(cli, to, sample):
    """Each sample's export computes gradcli's numbers; where gradcli has no Jacobian (no
    input requires grad) or the exporter cannot write an operation, exit 2 with the reason."""
    _needs(to)
    path = sample.relative_to(sample.parents[1]).as_posix()
    _runs_as_gradcli_computes(cli, to, ["-f", path])
    latex = cli("export", "--to", "latex", "-f", path)
    assert latex.exit_code in (0, 2), latex.stderr
    assert latex.exit_code == 0 or "error:" in latex.stderr


# Names a program may give its values that a script could mistake for its own: Python's
# builtins, the scripts' modules and values, sympy's (the sympy script parses its formulas),
# names like the scripts' made-up ones (jacobian_x, x_v0) and like x's symbols (x_0)
ODD_NAMES = (
    "print float int list len range type id input open object str map bool exec eval self "
    "json torch F numpy np math jax sympy scipy mpmath program jacobian_x x_v0 symbols names "
    "output point at_point shape value jacobian derivatives text expression f s d row "
    "E I S N O Q beta gamma zeta field Symbol Abs Piecewise nan inf match case t T j x_0"
).split()


def _odd_program(names: list[str]) -> list[str]:
    """y = x * (1.5*print + 2*float + ...) + sin(x) * print * float..., each name an input."""
    terms = " + ".join(f"{k + 1.5} * {n}" for k, n in enumerate(names))
    product = " * ".join(names[:4])
    values = [a for k, n in enumerate(names) for a in ("-i", f"{n}={0.1 * (k % 7) + 0.3}")]
    program = f"y = x * ({terms}) + sin(x) * {product}"
    return ["-e", program, "--x", "0.5,-1.5", *values, "--wrt", ",".join(["x", *names])]


@pytest.mark.parametrize("to", CODE_TARGETS)
def test_values_with_odd_names_export_and_run(cli, to):
    _needs(to)
    for k in range(0, len(ODD_NAMES), 12):  # a dozen at a time: the formulas stay small
        assert _runs_as_gradcli_computes(cli, to, _odd_program(ODD_NAMES[k : k + 12]))


ODD_VALUES = {"x": "0.5,-1.5", "x_v0": "0.7", "print": "1.5", "float": "-2", "torch": "3"}
ODD_VALUES |= {"F": "0.25", "json": "1.25"}


@pytest.mark.parametrize("to", CODE_TARGETS)
@pytest.mark.parametrize(
    "program",
    [
        # h[0] = ...: h's earlier value is h#0 (the torch script writes into h itself)
        "h = x * print; h[0] = x[1] * float; y = h * x_v0",
        # y0, y1: the group y, stacked by the torch script
        "y0 = x[0] * torch; y1 = x[1] * F; out = sum(y) * json",
    ],
)
def test_written_and_grouped_values_with_odd_names_export_and_run(cli, to, program):
    _needs(to)
    inputs = gradcli.program(program).inputs
    values = [a for n in inputs for a in ("-i", f"{n}={ODD_VALUES[n]}")]
    assert _runs_as_gradcli_computes(cli, to, ["-e", program, *values, "--wrt", ",".join(inputs)])


@pytest.mark.parametrize("to", CODE_TARGETS)
def test_an_empty_input_exports_and_runs(cli, to):
    _needs(to)
    args = ["-e", "y = sum(x) + 2 * w", "--x", "zeros(0)", "-i", "w=3"]
    assert _runs_as_gradcli_computes(cli, to, args)


@pytest.mark.parametrize("to", [*CODE_TARGETS, "latex"])
def test_a_complex_input_or_output_is_refused(cli, to):
    # the scripts print the Jacobian, which torch (and gradcli) take of real numbers only
    for args, name in [
        (["-e", "y = x * 2", "--x", "1+2j"], "x"),
        (["-e", "y = complex(x, x)", "--x", "1"], "y"),
    ]:
        result = cli("export", "--to", to, *args)
        assert result.exit_code == 2, result.stderr
        assert f"error: {name} is complex: this command takes real numbers only" in result.stderr
        assert "hint: differentiate a real function" in result.stderr
