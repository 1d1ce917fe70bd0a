"""The library API (``gradcli.program``): its methods are the commands, and return the very
results the command line renders; checked against the command line and against torch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import gradcli
from gradcli.errors import GradcliError
from gradcli.results import VJP

REPO = Path(__file__).resolve().parents[2]

# (command, sample, the method's keyword arguments, the same as command-line options)
CASES = [
    ("eval", "first_example.gc", {}, []),
    ("grad", "first_example.gc", {"show": ["y", "z"]}, ["--show", "y,z"]),
    ("grad", "neural_network.gc", {}, []),
    ("vjp", "vjp_example2.gc", {"v": "1,1,1"}, ["--v", "1,1,1"]),
    ("vjp", "log_general_case.gc", {"v": [[3, 2, 0], [4, 0, 1]]}, ["--v", "[[3,2,0],[4,0,1]]"]),
    ("jacobian", "vjp_example2.gc", {"transpose": True}, ["--transpose"]),
    ("jacobian", "heatmap_softmax.gc", {}, []),
    ("jvp", "forward_mode.gc", {"t": [1, 0]}, ["--t", "1,0"]),
    ("hessian", "rosenbrock_hessian.gc", {}, []),
    ("hvp", "hvp_rosenbrock.gc", {"v": "1,0"}, ["--v", "1,0"]),
    ("check", "check_kink.gc", {}, []),
    ("graph", "graph_network.gc", {}, []),
    ("graph", "graph_network.gc", {"wrt": "W"}, ["--wrt", "W"]),
    ("plot", "plot_tanh.gc", {"x_range": (-3, 3), "points": 7}, ["--points", "7"]),
    ("explain", "explain_log.gc", {"v": [[3, 2, 0], [4, 0, 1]]}, ["--v", "[[3,2,0],[4,0,1]]"]),
]

ORACLE_CASES = [case for case in CASES if "--wrt" not in case[3]]  # the oracle's own inputs


def _result(command: str, sample: str, options: dict):
    program = gradcli.program((REPO / "samples" / sample).read_text())
    return getattr(program, command)(**options)


@pytest.mark.parametrize(("command", "sample", "options", "flags"), CASES)
def test_each_method_returns_what_the_command_renders(cli, command, sample, options, flags):
    """The method's result, rendered by ``gradcli.text``, is the command's output to the
    character, in JSON and as a table."""
    result = _result(command, sample, options)
    assert result.command == command
    args = [command, "-f", f"samples/{sample}", *flags]
    status = 1 if command == "check" and not result.agree else 0  # check exits 1 then
    for fmt in ("json", "table"):
        done = cli(*args, "--format", fmt)
        assert done.exit_code == status, done.stderr
        assert gradcli.text(result, fmt) == done.stdout


@pytest.mark.parametrize(("command", "sample", "options", "flags"), ORACLE_CASES)
def test_each_method_agrees_with_torch(torch_oracle, command, sample, options, flags):
    result = _result(command, sample, options)
    torch_oracle(
        [command, "-f", f"samples/{sample}", *flags], json.loads(gradcli.text(result, "json"))
    )


def test_the_issues_example_is_the_seed_posts_answer():
    """y = (x0², x0² + 5 x1², 3 x1) at x = (1, 2): J^T v = (4, 23), as torch computes it."""
    torch = pytest.importorskip("torch")
    result = gradcli.program("y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1").vjp(x=[1, 2], v=[1, 1, 1])
    assert isinstance(result, VJP)
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = torch.stack([x[0] ** 2, x[0] ** 2 + 5 * x[1] ** 2, 3 * x[1]])
    (expected,) = torch.autograd.grad(y, x, torch.ones(3, dtype=torch.float64))
    np.testing.assert_allclose(result.grads["x"], expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(result.value, y.detach().numpy(), rtol=1e-12)
    assert result.output == "y" and result.warnings == ()


def test_inputs_may_be_numbers_lists_arrays_tensors_or_value_text():
    program = gradcli.program("out = sum(w * x)")
    x = gradcli.tensor([1.0, 2.0])
    given = [
        {"w": [3, 4], "x": x},
        {"w": np.array([3.0, 4.0]), "x": "1,2"},
        {"w": "[3, 4]", "x": np.array([1, 2])},
        {"inputs": {"w": [3.0, 4.0]}, "x": [1, 2]},
    ]
    for values in given:
        result = program.grad(**values)
        assert float(result.value) == 11.0
        np.testing.assert_array_equal(result.grads["w"], [1.0, 2.0])
        np.testing.assert_array_equal(result.grads["x"], [3.0, 4.0])
    assert program.grad(w=2, x=[1, 2], wrt=["w"]).grads == {"w": 3.0, "x": None}
    assert program.inputs == ["w", "x"] and program.targets == ["out"]


def test_an_input_named_like_a_parameter_is_given_in_inputs():
    """``v`` is vjp's vector; an input called v takes the ``inputs`` mapping."""
    result = gradcli.program("y = v * 2").vjp(inputs={"v": [1.0, 3.0]}, v=[1.0, 1.0])
    np.testing.assert_array_equal(result.grads["v"], [2.0, 2.0])


def test_float32_and_seeded_values_as_on_the_command_line(cli):
    program = gradcli.program("y = sin(x)", dtype="float32", seed=3)
    result = program.eval(x="randn(4)")
    assert result.values["y"].dtype == np.float32
    args = ["-e", "y = sin(x)", "--x", "randn(4)", "--seed", 3, "--dtype", "float32"]
    done = cli("eval", *args, "--format", "csv")
    assert gradcli.text(result, "csv") == done.stdout


def test_bad_input_raises_the_command_lines_error(cli):
    """The same error, word for word, as the command prints (exit 2)."""
    source = "y = x ** 2; out = sum(y)"
    program = gradcli.program(source)
    cases = [
        (lambda: program.grad(), ["grad"]),
        (lambda: program.grad(x=[1, 2], wrt=["z"]), ["grad", "--x", "1,2", "--wrt", "z"]),
        (lambda: program.grad(x=[1, 2], of="yy"), ["grad", "--x", "1,2", "--of", "yy"]),
        (lambda: program.vjp(x=[1, 2], v=[1, 2, 3]), ["vjp", "--x", "1,2", "--v", "1,2,3"]),
        (lambda: program.eval(x="ones(2"), ["eval", "--x", "ones(2"]),
    ]
    for call, args in cases:
        with pytest.raises(GradcliError) as caught:
            call()
        done = cli(args[0], "-e", source, *args[1:])
        assert done.exit_code == 2
        assert caught.value.render() == done.stderr.rstrip("\n")
    with pytest.raises(GradcliError, match="unknown function 'sinn'"):
        gradcli.program("y = sinn(x)")
    with pytest.raises(GradcliError, match="dtype 'float16'"):
        gradcli.program("y = x", dtype="float16")


def test_numpy_asarray_takes_an_engine_tensor():
    t = gradcli.tensor([[1.0, 2.0], [3.0, 4.0]])
    array = np.asarray(t)
    assert isinstance(array, np.ndarray) and array.dtype == np.float64
    assert np.shares_memory(array, t.data)  # no copy unless asked, as for torch on the CPU
    np.testing.assert_array_equal(array, [[1.0, 2.0], [3.0, 4.0]])
    copied = np.array(t, copy=True)
    assert not np.shares_memory(copied, t.data)
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError):
        np.array(t, dtype=np.float32, copy=False)
    out = (gradcli.tensor([1.0, 2.0], requires_grad=True) ** 2).sum()
    assert np.asarray(out.detach()).shape == () and float(np.asarray(out.detach())) == 5.0
    # numpy's operators still defer to the tensor's: the graph is kept, not converted away
    leaf = gradcli.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    for product in (np.float64(2) * leaf, np.ones((2, 2)) * leaf, leaf * np.float32(3)):
        assert isinstance(product, gradcli.Tensor) and product.grad_fn is not None


def test_numpy_asarray_refuses_a_tensor_that_requires_grad_as_torch_does():
    """torch 2.13 refuses ``numpy.asarray`` of a tensor in a graph (a leaf that requires grad,
    or a result computed from one), with a RuntimeError: the same error, word for word."""
    torch = pytest.importorskip("torch")
    leaf = gradcli.tensor([1.0, 2.0], requires_grad=True)
    torch_leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    pairs = [(leaf, torch_leaf), (leaf * 2, torch_leaf * 2)]
    for ours, theirs in pairs:
        for convert in (np.asarray, np.array, lambda t: np.asarray(t, dtype=np.float32)):
            with pytest.raises(RuntimeError) as expected:
                convert(theirs)
            with pytest.raises(RuntimeError) as caught:
                convert(ours)
            assert str(caught.value) == str(expected.value)
        np.testing.assert_array_equal(np.asarray(ours.detach()), theirs.detach().numpy())
    # as an input value of a program, a tensor's values are taken (fresh leaves are bound)
    assert float(gradcli.program("y = sum(x**2)").eval(x=leaf).values["y"]) == 5.0


def test_the_examples_of_the_docstrings_hold():
    import doctest

    import gradcli.api

    assert doctest.testmod(gradcli.api).failed == 0


def test_the_api_page_is_made_from_the_docstrings():
    sys.path.insert(0, str(REPO / "docs"))
    try:
        from write_api import PAGE, page
    finally:
        sys.path.pop(0)
    assert PAGE.read_text() == page(), "run: python docs/write_api.py"


def _builds_wheels_here() -> bool:
    """Whether this environment's setuptools builds a wheel by itself (70.1 and later do;
    before, the ``wheel`` package must be there)."""
    import importlib.util

    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def test_the_built_wheel_ships_the_type_hints(tmp_path):
    """``py.typed`` (PEP 561) is in the wheel, beside the modules it vouches for."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(
        REPO / "gradcli", source / "gradcli", ignore=shutil.ignore_patterns("__pycache__")
    )
    build = ["wheel", "--no-deps", "-q", "--wheel-dir", tmp_path / "wheel"]
    if _builds_wheels_here():  # else pip fetches a setuptools that does
        build.append("--no-build-isolation")
    done = subprocess.run(
        [sys.executable, "-m", "pip", *map(str, build), str(source)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "wheel").glob("gradcli-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "gradcli/py.typed" in names
    assert "gradcli/api.py" in names and "gradcli/engine/tensor.py" in names
