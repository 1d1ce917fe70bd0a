"""Several outputs in one call (``--of y,z``), against torch 2.13.

grad is ``torch.autograd.backward([f, g], grad_tensors)``, vjp ``torch.autograd.grad([y, z],
inputs, grad_outputs=[vy, vz])`` (the sums of the outputs' gradients); jacobian, jvp, hessian
and hvp answer each output as ``torch.func`` does for a function returning the tuple. With one
name --of prints what it always did; the errors say what was wrong and exit 2.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from command_fixtures import strict_json, tidy_csv

import gradcli
from gradcli.base.errors import GradcliError
from gradcli.results import Several

torch = pytest.importorskip("torch")

# two inputs, an intermediate shared by the outputs; y and z are vectors, f and g scalars
PROGRAM = "h = tanh(x) * w; y = h**2; z = exp(h[:2]) * x[0]; f = sum(y); g = sum(z) * w[2]"
X, W = [0.3, -0.7, 1.1], [1.5, 0.4, -0.9]
VALUES = ["-e", PROGRAM, "--x", "0.3,-0.7,1.1", "-i", "w=1.5,0.4,-0.9"]
VY, VZ = [1.0, -2.0, 0.5], [3.0, 0.25]


def _program(x, w):
    h = torch.tanh(x) * w
    y = h**2
    z = torch.exp(h[:2]) * x[0]
    return {"h": h, "y": y, "z": z, "f": y.sum(), "g": z.sum() * w[2]}


def _leaves():
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    return x, w


def _tensor(values):
    return torch.tensor(values, dtype=torch.float64)


def _close(got, want) -> None:
    np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-10, atol=1e-12)


def _run(cli, *args):
    done = cli(*args, "--format", "json")
    assert done.exit_code == 0, done.stderr
    return strict_json(done.stdout)


# -- grad and vjp: the sum of the outputs' gradients --------------------------------------------


def test_grad_of_two_scalars_is_torch_backward_of_both(cli):
    document = _run(cli, "grad", *VALUES, "--of", "f,g")
    x, w = _leaves()
    out = _program(x, w)
    torch.autograd.backward([out["f"], out["g"]])
    assert document["output"] == ["f", "g"]
    _close(document["values"]["f"], out["f"].item())
    _close(document["values"]["g"], out["g"].item())
    _close(document["grads"]["x"], x.grad.numpy())
    _close(document["grads"]["w"], w.grad.numpy())


@pytest.mark.parametrize(
    "vectors",
    [["y=1,-2,0.5", "z=3,0.25"], ["z=3,0.25", "y=1,-2,0.5"], ["1,-2,0.5", "3,0.25"]],
    ids=["named", "named-in-another-order", "in-of-order"],
)
def test_grad_of_two_vectors_takes_one_grad_tensor_each(cli, vectors):
    args = [arg for v in vectors for arg in ("--v", v)]
    document = _run(cli, "grad", *VALUES, "--of", "y,z", *args)
    x, w = _leaves()
    out = _program(x, w)
    torch.autograd.backward([out["y"], out["z"]], grad_tensors=[_tensor(VY), _tensor(VZ)])
    _close(document["grads"]["x"], x.grad.numpy())
    _close(document["grads"]["w"], w.grad.numpy())
    _close(document["values"]["y"], out["y"].detach().numpy())


def test_grad_shows_the_summed_grad_of_an_intermediate_and_repeats(cli):
    document = _run(cli, "grad", *VALUES, "--of", "f,g", "--retain-grad", "h", "--repeat", "2")
    x, w = _leaves()
    out = _program(x, w)
    out["h"].retain_grad()
    for _ in range(2):
        torch.autograd.backward([out["f"], out["g"]], retain_graph=True)
    _close(document["grads"]["h"], out["h"].grad.numpy())
    _close(document["grads"]["x"], x.grad.numpy())


def test_grad_of_a_vector_without_its_vector_is_torchs_error_naming_it(cli):
    x, w = _leaves()
    out = _program(x, w)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        torch.autograd.backward([out["f"], out["y"]])
    done = cli("grad", *VALUES, "--of", "f,y")
    assert done.exit_code == 2
    assert "grad can be implicitly created only for scalar outputs: y has shape (3,)" in (
        done.stderr
    )
    assert "--v y=" in done.stderr and "Traceback" not in done.stderr


def test_vjp_is_torch_autograd_grad_with_grad_outputs(cli):
    document = _run(cli, "vjp", *VALUES, "--of", "y,z", "--v", "y=1,-2,0.5", "--v", "z=3,0.25")
    x, w = _leaves()
    out = _program(x, w)
    gx, gw = torch.autograd.grad(
        [out["y"], out["z"]], [x, w], grad_outputs=[_tensor(VY), _tensor(VZ)]
    )
    assert document["output"] == ["y", "z"]
    _close(document["grads"]["x"], gx.numpy())
    _close(document["grads"]["w"], gw.numpy())


def test_vjp_to_an_intermediate_node_and_of_scalars_without_v(cli):
    to_h = _run(
        cli, "vjp", *VALUES, "--of", "y,z", "--v", "1,-2,0.5", "--v", "3,0.25", "--wrt", "h"
    )
    scalars = _run(cli, "vjp", *VALUES, "--of", "f,g")
    x, w = _leaves()
    out = _program(x, w)
    (gh,) = torch.autograd.grad(
        [out["y"], out["z"]], out["h"], grad_outputs=[_tensor(VY), _tensor(VZ)], retain_graph=True
    )
    gx, gw = torch.autograd.grad([out["f"], out["g"]], [x, w])
    _close(to_h["grads"]["h"], gh.numpy())
    _close(scalars["grads"]["x"], gx.numpy())
    _close(scalars["grads"]["w"], gw.numpy())


# -- jacobian, jvp, hessian, hvp, check: one answer per output ---------------------------------


def _tuple_function(x, w):
    out = _program(x, w)
    return out["y"], out["z"]


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_jacobian_is_jacrev_of_the_tuple(cli, mode):
    document = _run(cli, "jacobian", *VALUES, "--of", "y,z", "--mode", mode)
    (dy_dx, dy_dw), (dz_dx, dz_dw) = torch.func.jacrev(_tuple_function, argnums=(0, 1))(
        _tensor(X), _tensor(W)
    )
    assert document["output"] == ["y", "z"]
    assert set(document["jacobian"]) == {"y", "z"} == set(document["mode"])
    _close(document["jacobian"]["y"]["x"], dy_dx.numpy())
    _close(document["jacobian"]["y"]["w"], dy_dw.numpy())
    _close(document["jacobian"]["z"]["x"], dz_dx.numpy())
    _close(document["jacobian"]["z"]["w"], dz_dw.numpy())


def test_jacobian_transposed_and_written_to_npz(cli, tmp_path):
    document = _run(cli, "jacobian", *VALUES, "--of", "z,y", "--wrt", "w", "--transpose")
    (dy_dw, dz_dw) = torch.func.jacrev(_tuple_function, argnums=1)(_tensor(X), _tensor(W))
    assert list(document["jacobian"]) == ["z", "y"]  # in --of's order
    assert document["layout"] == {"z": "input.shape + output.shape"} | {
        "y": "input.shape + output.shape"
    }
    _close(document["jacobian"]["z"]["w"], dz_dw.numpy().T)
    out = tmp_path / "J.npz"
    done = cli("jacobian", *VALUES, "--of", "y,z", "--out", out)
    assert done.exit_code == 0, done.stderr
    written = np.load(out)
    assert set(written) == {"y.x", "y.w", "z.x", "z.w"}
    _close(written["z.w"], dz_dw.numpy())
    _close(written["y.w"], dy_dw.numpy())


def test_jacobian_formulas_of_each_output(cli):
    document = _run(cli, "jacobian", "-e", "y = x**2; z = x[0]*x[1]", "--x", "1,2", "--of", "y,z")
    symbolic = _run(
        cli, "jacobian", "-e", "y = x**2; z = x[0]*x[1]", "--x", "1,2", "--of", "y,z", "--symbolic"
    )["symbolic"]
    assert symbolic["y"]["x"] == [["2*x_0", "0"], ["0", "2*x_1"]]
    assert symbolic["z"]["x"] == ["x_1", "x_0"]
    _close(document["jacobian"]["z"]["x"], [2.0, 1.0])


def test_jvp_is_torch_func_jvp_of_the_tuple(cli):
    document = _run(cli, "jvp", *VALUES, "--of", "y,z", "--t", "x=1,0,2", "--t", "w=0,-1,0.5")
    tangents = (_tensor([1, 0, 2]), _tensor([0, -1, 0.5]))
    values, (ty, tz) = torch.func.jvp(_tuple_function, (_tensor(X), _tensor(W)), tangents)
    assert document["output"] == ["y", "z"]
    _close(document["jvp"]["y"], ty.numpy())
    _close(document["jvp"]["z"], tz.numpy())
    _close(document["values"]["z"], values[1].numpy())


def test_hessian_and_hvp_of_each_scalar_output(cli):
    hessians = _run(cli, "hessian", *VALUES, "--of", "f,g", "--wrt", "x")
    products = _run(cli, "hvp", *VALUES, "--of", "f,g", "--v", "x=1,0.5,-1", "--v", "w=0,2,1")
    v = (_tensor([1, 0.5, -1]), _tensor([0, 2, 1]))
    for name in ("f", "g"):

        def output(x, w, name=name):
            return _program(x, w)[name]

        want = torch.func.hessian(output, argnums=0)(_tensor(X), _tensor(W))
        _close(hessians["hessian"][name]["x,x"], want.numpy())
        _, (hx, hw) = torch.autograd.functional.hvp(output, (_tensor(X), _tensor(W)), v)
        _close(products["hvp"][name]["x"], hx.numpy())
        _close(products["hvp"][name]["w"], hw.numpy())


def test_check_answers_each_output_and_fails_when_one_disagrees(cli):
    agreeing = _run(cli, "check", *VALUES, "--of", "y,z")
    assert agreeing["agree"] is True and set(agreeing["check"]) == {"y", "z"}
    (dy_dx, _), (dz_dx, _) = torch.func.jacrev(_tuple_function, argnums=(0, 1))(
        _tensor(X), _tensor(W)
    )
    _close(agreeing["check"]["y"]["reverse"]["x"], dy_dx.numpy())
    _close(agreeing["check"]["z"]["forward"]["x"], dz_dx.numpy())
    # relu's kink at 0: finite differences see 1.5 (see samples/check_kink.gc)
    kink = ["-e", "y = relu(x) * 3; z = x**2", "--x", "0,1,-2", "--of", "z,y"]
    done = cli("check", *kink, "--format", "json")
    assert done.exit_code == 1
    document = strict_json(done.stdout)
    assert document["agree"] is False
    assert document["worst"] == [
        "finite differences differs from reverse mode at dy/dx[0,0]: 1.5 vs 0.0"
    ]
    assert cli("check", *kink).stdout.count("all methods agree") == 1


# -- what is printed --------------------------------------------------------------------------


def test_a_table_has_a_section_per_output(cli):
    done = cli("jvp", *VALUES, "--of", "y,z", "--t", "x=1,0,0")
    assert done.exit_code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "── y ──" and "── z ──" in lines
    heading = lines.index("── z ──")
    assert any(line.startswith("J t for y ") for line in lines[:heading])
    assert any(line.startswith("J t for z ") for line in lines[heading:])


@pytest.mark.parametrize(
    "args",
    [
        ["hvp", "--of", "f,g", "--v", "x=1,0,0", "--v", "w=0,1,0"],
        ["jacobian", "--of", "y,z"],
        ["grad", "--of", "f,g"],
    ],
    ids=lambda args: args[0],
)
def test_csv_holds_every_array_of_the_json_under_a_label_of_its_own(cli, args):
    command, *options = args
    document = _run(cli, command, *VALUES, *options)
    done = cli(command, *VALUES, *options, "--format", "csv")
    assert done.exit_code == 0, done.stderr
    arrays = tidy_csv(done.stdout)
    for name in document["output"]:
        _close(arrays[f"values.{name}"], document["values"][name])
    if command == "hvp":  # H v for x of each output, told apart as in the JSON
        _close(arrays["hvp.g.x"], document["hvp"]["g"]["x"])
    if command == "jacobian":
        _close(arrays["jacobian.z.w"], document["jacobian"]["z"]["w"])
    if command == "grad":
        _close(arrays["grads.x"], document["grads"]["x"])


@pytest.mark.parametrize(
    "args",
    [
        ["grad"],
        ["grad", "--v", "1,1,1", "--of", "y"],
        ["vjp", "--v", "1,1,1", "--of", "y"],
        ["jacobian", "--of", "y"],
        ["jvp", "--t", "1,0,0", "--of", "z"],
        ["hessian", "--of", "g"],
        ["hvp", "--v", "x=1,0,0", "--v", "w=0,1,0", "--of", "f"],
        ["check", "--of", "z"],
    ],
    ids=lambda args: "-".join(args[:1] + args[-1:]),
)
def test_one_name_prints_what_it_always_did(cli, args):
    """--of y, and a name given with its vector (--v y=...), print as before: the output a
    string in JSON, no section headings in tables."""
    command, *options = args
    for fmt in ("json", "table"):
        done = cli(command, *VALUES, *options, "--format", fmt)
        assert done.exit_code == 0, done.stderr
        assert not [line for line in done.stdout.splitlines() if line.startswith("── ")]
        if fmt == "json":
            document = strict_json(done.stdout)
            assert isinstance(document["output"], str)
            assert list(document["values"]) == [document["output"]]
    if "--v" in options and command in ("grad", "vjp"):
        name = options[options.index("--of") + 1]
        named = cli(command, *VALUES, "--of", name, "--v", f"{name}=1,1,1", "--format", "json")
        assert named.stdout == cli(command, *VALUES, *options, "--format", "json").stdout


@pytest.mark.parametrize("command", ["grad", "vjp", "jacobian", "hessian", "check"])
def test_of_the_default_output_is_the_default(cli, command):
    """g is the program's last statement: --of g takes the very path of no --of."""
    for fmt in ("json", "table", "csv"):
        default = cli(command, *VALUES, "--format", fmt)
        named = cli(command, *VALUES, "--of", "g", "--format", fmt)
        assert default.exit_code == named.exit_code == 0, named.stderr
        assert named.stdout == default.stdout and named.stderr == default.stderr


# -- errors ---------------------------------------------------------------------------------


ERRORS = [
    (["grad", "--of", "f,nope"], "--of names 'nope', which the program does not define", "x, w"),
    (["vjp", "--of", "y,zz"], "--of names 'zz'", "did you mean 'z'? (names are: x, w, h, y, z"),
    (["grad", "--of", "f,g,f"], "--of names 'f' twice", "--of f,g"),
    (["jacobian", "--of", "y,y"], "--of names 'y' twice", "--of y"),
    (["vjp", "--of", "y,z", "--v", "1,1,1"], "--v gives 1 vector, but --of names 2", "--v z="),
    (
        ["vjp", "--of", "y,z", "--v", "1,1,1", "--v", "1,1", "--v", "1"],
        "--v gives 3 vectors, but --of names 2 outputs (y, z)",
        "one vector per output",
    ),
    (["vjp", "--of", "y,z", "--v", "y=1,1,1"], "no --v for the output z", "--v z=VALUE"),
    (
        ["vjp", "--of", "y,z", "--v", "y=1,1,1", "--v", "q=1"],
        "--v gives a vector for 'q', which is not an output of --of",
        "the outputs are: y, z",
    ),
    (["vjp", "--of", "y,z", "--v", "y=1,1,1", "--v", "y=1"], "--v gives 'y' twice", "one vector"),
    (["grad", "--of", "y,z", "--v", "y=1,1,1", "--v", "1,1"], "every vector as NAME=VALUE", "e.g."),
    (["vjp", "--of", "y,z", "--v", "1,1", "--v", "1,1"], "--v y has shape (2,)", "(3,)"),
    (["vjp", "--of", "y,z"], "the output y has shape (3,): vjp needs the vector v", "--v y="),
    (["grad", "--of", "f,g", "--symbolic"], "--symbolic takes one output", "--of f, then --of g"),
    (["grad", "--of", "f,g", "--exact"], "--exact takes one output", "--of f, then --of g"),
    (["jvp", "--of", "y,z", "--batch", "-"], "--batch takes one output", "--of y, then --of z"),
    (["jacobian", "--of", "y,z", "--out", "J.npy"], "a Jacobian for each of the outputs", "J.npz"),
    (["eval", "--of", "y,z"], "eval takes one output, and --of names 2 (y, z)", "grad, vjp"),
    (["graph", "--of", "f,g"], "graph takes one output", "--of f"),
    (["hessian", "--of", "f,y"], "hessian needs a scalar output, but y has shape (3,)", "sum(y)"),
]


@pytest.mark.parametrize(("args", "message", "hint"), ERRORS, ids=lambda a: str(a)[:40])
def test_bad_several_outputs_are_refused_with_exit_2(cli, args, message, hint):
    command, *options = args
    done = cli(command, *VALUES, *options, input="[0.3, -0.7, 1.1]\n")
    assert done.exit_code == 2, done.stdout
    assert message in done.stderr
    assert hint in done.stderr.split("hint:", 1)[1]
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_the_help_says_how_to_give_several_outputs(cli):
    for command in ("grad", "vjp"):
        text = cli(command, "--help", env={"COLUMNS": "200"}).stdout  # one line a row
        assert "--of f,g" in text or "--of y,z" in text
        assert "--v y=VALUE" in " ".join(text.split())


# -- the library ------------------------------------------------------------------------------


def test_the_library_takes_several_outputs_as_the_command_line_does(cli):
    p = gradcli.program(PROGRAM)
    named = p.vjp(x=X, w=W, of="y,z", v={"y": VY, "z": VZ})
    listed = p.vjp(x=X, w=W, of=["y", "z"], v=[VY, VZ])
    line = cli("vjp", *VALUES, "--of", "y,z", "--v", "y=1,-2,0.5", "--v", "z=3,0.25")
    assert gradcli.text(named, "table") == gradcli.text(listed, "table") == line.stdout
    assert list(named.outputs) == ["y", "z"] and named.output == "y,z"
    jacobians = p.jacobian(x=X, w=W, of=("y", "z"))
    assert isinstance(jacobians, Several)
    assert [part.output for part in jacobians.parts] == ["y", "z"]
    shown = json.loads(gradcli.text(jacobians, "json"))
    assert shown == strict_json(cli("jacobian", *VALUES, "--of", "y,z", "--format", "json").stdout)
    grads = p.grad(x=X, w=W, of="f,g").grads
    x, w = _leaves()
    out = _program(x, w)
    torch.autograd.backward([out["f"], out["g"]])
    _close(grads["w"], w.grad.numpy())
    with pytest.raises(GradcliError, match="batch takes one output"):
        p.grad(batch={"x": [X, X]}, w=W, of="f,g")
    with pytest.raises(GradcliError, match="--v gives 1 vector, but --of names 2"):
        p.vjp(x=X, w=W, of="y,z", v=[VY])


def test_uncertainty_refuses_an_output_named_twice_too(cli):
    program = ["-e", "y = x0 * x1; z = x0 + x1", "--x", "1,2±0.1,0.2"]
    done = cli("uncertainty", *program, "--of", "z,y,z")
    assert done.exit_code == 2
    assert "--of names 'z' twice" in done.stderr and "--of z,y" in done.stderr


def test_the_repl_takes_several_outputs_as_the_command_line_does(cli):
    lines = [":format json", PROGRAM, ":set x 0.3,-0.7,1.1", ":set w 1.5,0.4,-0.9"]
    commands = [
        (":grad f,g", ["grad", "--of", "f,g"]),
        (
            ":vjp y,z y=1,-2,0.5 z=3,0.25",
            ["vjp", "--of", "y,z", "--v", "y=1,-2,0.5", "--v", "z=3,0.25"],
        ),
        (":jacobian y,z", ["jacobian", "--of", "y,z"]),
    ]
    done = cli("repl", input="\n".join([*lines, *(line for line, _ in commands)]) + "\n")
    assert done.exit_code == 0, done.stderr
    documents = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    for (line, args), document in zip(commands, documents[-len(commands) :], strict=True):
        assert document == _run(cli, *args[:1], *VALUES, *args[1:]), line
