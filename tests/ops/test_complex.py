"""Complex numbers on the command line: values (--x 1+2j, -i z=[...]), literals (2j) and
complex(a, b) in programs, the gradients of grad and vjp and the tangents of jvp against
torch 2.13, tables and CSV showing each number whole, JSON as [real, imag] pairs, and the
refusals (a complex scalar without v, Jacobian-like commands, an operation torch does not
define for complex numbers, --exact), each a message and exit code 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def _complex(pairs) -> np.ndarray:
    """JSON's [real, imag] pairs as a complex array."""
    array = np.asarray(pairs, dtype=float)
    return array[..., 0] + 1j * array[..., 1]


Z = [1 + 2j, -3 - 1j]


def test_grad_of_a_real_function_of_complex_inputs_is_torchs(cli_json):
    torch = pytest.importorskip("torch")
    document = cli_json(
        "grad", "-e", "y = sum(abs(z)**2 + real(sin(z) * conj(z)))", "-i", "z=[1+2j,-3-1j]"
    )
    z = torch.tensor(Z, dtype=torch.complex128, requires_grad=True)
    ((z.abs() ** 2).sum() + (torch.sin(z) * z.conj()).real.sum()).backward()
    np.testing.assert_allclose(_complex(document["grads"]["z"]), z.grad.numpy(), rtol=1e-12)


def test_abs_squared_has_the_gradient_2z(cli_json):
    document = cli_json("grad", "-e", "y = abs(z)**2", "-i", "z=1+2j")
    assert document["grads"]["z"] == [2.0, 4.0]


def test_vjp_with_a_complex_v_and_jvp_with_a_complex_t_are_torchs(cli_json):
    torch = pytest.importorskip("torch")
    program = "y = exp(z) * z + 2j * z"
    vjp = cli_json("vjp", "-e", program, "-i", "z=[1+2j,-3-1j]", "--v", "1,1j")
    z = torch.tensor(Z, dtype=torch.complex128, requires_grad=True)
    (torch.exp(z) * z + 2j * z).backward(torch.tensor([1, 1j], dtype=torch.complex128))
    np.testing.assert_allclose(_complex(vjp["grads"]["z"]), z.grad.numpy(), rtol=1e-12)
    jvp = cli_json("jvp", "-e", program, "-i", "z=[1+2j,-3-1j]", "--t", "z=0.5j,1")
    _, tangent = torch.func.jvp(
        lambda z: torch.exp(z) * z + 2j * z,
        (torch.tensor(Z, dtype=torch.complex128),),
        (torch.tensor([0.5j, 1], dtype=torch.complex128),),
    )
    np.testing.assert_allclose(_complex(_tangent_of(jvp)), tangent.numpy(), rtol=1e-12)


def _tangent_of(document: dict):
    """The one array of a jvp document that is not the value."""
    arrays = [v for k, v in document.items() if isinstance(v, dict) and k != "values"]
    return next(iter(arrays[0].values()))


def test_real_inputs_through_complex_numbers_get_the_real_part(cli_json):
    document = cli_json("grad", "-e", "z = complex(a, 2 * a); y = abs(z * (1 - 1j))", "-i", "a=1.5")
    assert np.isclose(document["grads"]["a"], np.sqrt(10))  # |(1 + 2i)(1 - i)| a = sqrt(10) a


def test_tables_and_csv_show_each_complex_number_whole(cli):
    table = cli("eval", "-e", "y = z * z", "-i", "z=[1+2j,-3-1j]")
    assert table.exit_code == 0, table.stderr
    assert "-3+4j" in table.stdout and "8+6j" in table.stdout
    csv = cli("grad", "-e", "y = sum(abs(z)**2)", "-i", "z=[1+2j,-3-1j]", "--format", "csv")
    assert "grads.z,0,(2+4j)" in csv.stdout and "grads.z,1,(-6-2j)" in csv.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("grad", "-e", "y = sum(z * z)", "-i", "z=[1+2j,-3-1j]"), "only for real scalar outputs"),
        (("jacobian", "-e", "y = z * z", "-i", "z=[1+2j,-3-1j]"), "z is complex: this command"),
        (("hessian", "-e", "y = abs(z) ** 2", "-i", "z=1j"), "z is complex"),
        (("check", "-e", "y = z * 2", "-i", "z=1j"), "z is complex"),
        (("grad", "-e", "y = sum(relu(z))", "-i", "z=[1j]"), "relu is not defined for complex"),
        (
            ("vjp", "-e", "y = x * 2", "--x", "1,2", "--v", "1j,1"),
            "--v (for the output y) is complex",
        ),
        (("grad", "--exact", "-e", "y = abs(x * 2j)", "--x", "1"), "--exact computes with real"),
        (("eval", "-e", "y = z.to(torch.float32)", "-i", "z=1j"), "would drop its imaginary part"),
    ],
)
def test_what_complex_numbers_cannot_do_is_refused_with_a_message(cli, args, message):
    done = cli(*args)
    assert done.exit_code == 2, done.stdout
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_the_installed_gradcli_takes_complex_values():
    """The console script of the environment under test (beside its interpreter, which pytest
    may have been started by without that environment's bin on PATH), else PATH's."""
    beside = Path(sys.executable).with_name("gradcli")
    gradcli = str(beside) if beside.exists() else shutil.which("gradcli")
    assert gradcli is not None
    done = subprocess.run(
        [gradcli, "grad", "-e", "y = abs(z)**2", "-i", "z=3-4j", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    grads = json.loads(done.stdout)["grads"]["z"]
    assert np.allclose(grads, [6.0, -8.0])  # 2z
