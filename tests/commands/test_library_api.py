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
from gradcli.base.errors import GradcliError
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
    """Whether this environment's setuptools builds gradcli's wheel by itself: 77 and later
    read the license as pyproject.toml writes it (an SPDX expression) and need no ``wheel``."""
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77


def test_the_built_wheel_ships_the_type_hints_and_the_license(tmp_path):
    """``py.typed`` (PEP 561) is in the wheel, beside the modules it vouches for, and so is
    the license; its description is PyPI's short page."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "docs").mkdir()
    for name in ("pyproject.toml", "LICENSE", "docs/pypi.md"):
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
    info = f"gradcli-{gradcli.__version__}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    assert metadata.endswith((REPO / "docs" / "pypi.md").read_text())


# the new methods: (command, program, the method's keyword arguments, the same as options)
MORE_CASES = [
    ("derivative", "f = sin(x) * exp(x)", {"x": 1, "order": 5}, ["--x", "1", "--order", "5"]),
    (
        "derivative",
        "f = x**3 * z**2",
        {"x": 2, "z": 3, "order": 3, "wrt": "x,x,z"},
        ["--x", "2", "-i", "z=3", "--order", "3", "--wrt", "x,x,z"],
    ),
    (
        "derivative",
        "f = exp(x)",
        {"x": 0, "order": 6, "taylor": True},
        ["--x", "0", "--order", "6", "--taylor"],
    ),
    (
        "uncertainty",
        "y = x0 * x1; z = x0 + x1",
        {"x": "1,2±0.1,0.2"},
        ["--x", "1,2±0.1,0.2"],
    ),
    (
        "uncertainty",
        "f = sin(a) * b",
        {"a": 0.5, "b": 2, "sd": {"a": 0.01, "b": 0.1}, "second_order": True},
        ["-i", "a=0.5+-0.01", "-i", "b=2+-0.1", "--second-order"],
    ),
    (
        "uncertainty",
        "y = x0 * x1",
        {"x": [1, 2], "cov": [[0.01, 0.005], [0.005, 0.04]]},
        ["--x", "1,2", "--cov", "[[0.01,0.005],[0.005,0.04]]"],
    ),
    ("jacobian", "y = x**2", {"x": [1, 2, 3], "sparse": True}, ["--x", "1,2,3", "--sparse"]),
    (
        "jacobian",
        "y = x**2",
        {"x": [1, 2, 3], "mode": "forward"},
        ["--x", "1,2,3", "--mode", "forward"],
    ),
    ("grad", "f = x0**2 * log(x1)", {"x": "1/3,2", "exact": True}, ["--x", "1/3,2", "--exact"]),
    ("grad", "f = sin(x)**2", {"x": 0.1, "exact": True}, ["--x", "0.1", "--exact"]),
    ("eval", "y = sqrt(x) / 2", {"x": 2, "exact": True}, ["--x", "2", "--exact"]),
    (
        "jacobian",
        "y = exp(x) / sum(exp(x))",
        {"x": "0,log(2)", "exact": True},
        ["--x", "0,log(2)", "--exact"],
    ),
    ("hessian", "f = x0**3 * x1", {"x": "1/2,3", "exact": True}, ["--x", "1/2,3", "--exact"]),
    # sympy has no exact form of erfinv's derivative at 0.3: floats, saying why, as the CLI
    ("grad", "f = erfinv(x) * x", {"x": 0.3, "exact": True}, ["--x", "0.3", "--exact"]),
]


@pytest.mark.parametrize(("command", "source", "options", "flags"), MORE_CASES)
def test_the_new_methods_return_what_the_commands_render(cli, command, source, options, flags):
    """derivative, uncertainty, jacobian's sparse and mode, exact=True: the result rendered
    is the command's output to the character (the warnings too, which stderr holds)."""
    result = getattr(gradcli.program(source), command)(**options)
    for fmt in ("json", "table"):
        done = cli(command, "-e", source, *flags, "--format", fmt)
        assert done.exit_code == 0, done.stderr
        assert gradcli.text(result, fmt) == done.stdout
    for warning in result.warnings:
        assert warning in done.stderr.replace("\n", " ") or warning[:40] in done.stderr


def test_derivative_agrees_with_sympy():
    sp = pytest.importorskip("sympy")
    x, z = sp.symbols("x z")
    f = x**3 * z**2 * sp.sin(x)
    result = gradcli.program("f = x**3 * z**2 * sin(x)").derivative(
        x=0.7, z=1.3, wrt=["x", "z", "x", "x"]
    )
    expected, current = [], f
    for name in (x, z, x, x):
        current = sp.diff(current, name)
        expected.append(float(current.subs({x: 0.7, z: 1.3})))
    np.testing.assert_allclose(result.derivatives, expected, rtol=1e-10)


def test_uncertainty_agrees_with_monte_carlo():
    """y = x0 * x1 around (1, 2) with small spreads: first order is the sample's spread."""
    rng = np.random.default_rng(7)
    samples = rng.normal([1.0, 2.0], [0.01, 0.02], size=(200_000, 2))
    result = gradcli.program("y = x0 * x1").uncertainty(x=[1, 2], sd={"x": [0.01, 0.02]})
    spread = np.std(samples[:, 0] * samples[:, 1])
    np.testing.assert_allclose(result.deviations["y"], spread, rtol=0.01)


def test_export_is_the_commands_script_and_runs(cli, tmp_path):
    torch = pytest.importorskip("torch")  # noqa: F841 - the script imports it
    source = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
    script = gradcli.program(source).export(x=[1, 2])
    assert script == cli("export", "-e", source, "--x", "1,2").stdout
    path = tmp_path / "y.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    jacobian = gradcli.program(source).jacobian(x=[1, 2]).jacobians["x"]
    np.testing.assert_allclose(np.asarray(document["jacobian"]["x"]), jacobian, rtol=1e-12)


@pytest.mark.parametrize(
    ("command", "options", "flags"),
    [
        ("eval", {}, []),
        ("grad", {}, []),
        ("grad", {"v": 2.0}, ["--v", "2"]),
        ("vjp", {"wrt": ["w"]}, ["--wrt", "w"]),
    ],
)
def test_batch_stacks_what_the_command_streams(cli, tmp_path, command, options, flags):
    """``batch=`` holds every point's result, stacked: the JSON lines of ``--batch``, and the
    method's own result at each point."""
    source = "f = sum(w * x**2)"
    points = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
    np.save(tmp_path / "points.npy", points)
    program = gradcli.program(source)
    for batch in (points, points.tolist(), {"x": points}, f"@{tmp_path / 'points.npy'}"):
        result = getattr(program, command)(batch=batch, w=[2, 3], **options)
        assert result.first == 0 and result.values["f"].shape == (3,)
        args = [command, "-e", source, "-i", "w=2,3", "--batch", f"@{tmp_path / 'points.npy'}"]
        done = cli(*args, *flags)
        assert done.exit_code == 0, done.stderr
        assert gradcli.text(result, "json") == done.stdout
    for i, point in enumerate(points):
        one = program.grad(x=point, w=[2, 3], v=options.get("v"))
        assert result.values["f"][i] == pytest.approx(float(one.value))
        if command == "grad":
            np.testing.assert_allclose(result.grads["x"][i], one.grads["x"])


def test_batch_and_exact_refuse_what_they_do_not_take():
    program = gradcli.program("f = sum(x**2)")
    with pytest.raises(GradcliError, match="exact=True does not take batch"):
        program.grad(batch=[[1, 2]], exact=True)
    with pytest.raises(GradcliError, match="no points for x"):
        program.grad(batch=np.zeros((0, 2)))
    with pytest.raises(GradcliError, match="mode='fast' is not one of"):
        program.jacobian(x=[1, 2], mode="fast")
    with pytest.raises(GradcliError, match="order must be at least 1"):
        program.derivative(x=1, order=0)


def test_an_unknown_keyword_argument_is_a_type_error_naming_it():
    """``vv`` for ``v``: not bound as an input, but refused, naming the argument, the method's
    parameters and the program's inputs; a TypeError as Python's own, and a GradcliError."""
    from gradcli.base.errors import ArgumentError

    program = gradcli.program("y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1")
    calls = [
        (lambda: program.vjp(x=[1, 2], vv=[1, 1, 1]), "vjp", "vv", "'v'"),
        (lambda: program.grad(x=[1, 2], of="y2", sho=["y1"]), "grad", "sho", "'show'"),
        (lambda: program.derivative(x=[1, 2], ordr=2), "derivative", "ordr", "'order'"),
        (lambda: program.eval(x=[1, 2], z=3), "eval", "z", None),
        (lambda: program.export(x=[1, 2], too="jax"), "export", "too", "'to'"),
    ]
    for call, command, name, guess in calls:
        with pytest.raises(TypeError) as caught:
            call()
        error = caught.value
        assert isinstance(error, ArgumentError) and isinstance(error, GradcliError)
        message = str(error)
        assert message.startswith(f"{command}() got an unexpected keyword argument {name!r}")
        assert "nor an input of the program (x)" in message
        assert (guess is None) == ("did you mean" not in message)
        if guess:
            assert f"did you mean {guess}?" in message
    # an input named like nothing the method takes is still an input
    assert float(gradcli.program("y = sum(vv * 2)").eval(vv=[1, 2]).values["y"]) == 6.0
