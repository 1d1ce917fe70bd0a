"""The commands beyond PyTorch: jvp, hessian, hvp, check, graph, explain, plot, --symbolic,
--heatmap, non-finite warnings, batch mode, Jacobian modes; values checked against torch and
sympy, renderings against snapshots."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest
import sympy as sp

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
ROSENBROCK = "f = (1 - x0)**2 + 100*(x1 - x0**2)**2"


def test_jvp_matches_torch(cli_json):
    torch = pytest.importorskip("torch")
    program = "y = tanh(W @ x) * sum(x**2)"
    x, t = [0.5, -1.0, 2.0], [1.0, 0.5, -0.25]
    w = [[0.1, 0.2, 0.3], [-0.4, 0.5, 0.6]]
    doc = cli_json("jvp", "-e", program, "--x", str(x), "-i", f"W={w}", "--t", str(t))
    W = torch.tensor(w, dtype=torch.float64)

    def f(xx):
        return torch.tanh(W @ xx) * (xx**2).sum()

    _, expected = torch.func.jvp(
        f, (torch.tensor(x, dtype=torch.float64),), (torch.tensor(t, dtype=torch.float64),)
    )
    np.testing.assert_allclose(doc["jvp"]["y"], expected.numpy(), rtol=1e-10)


def test_jvp_tangent_for_a_named_input_others_zero(cli_json):
    doc = cli_json("jvp", "-e", "y = x * w", "--x", "1,2", "-i", "w=3,4", "--t", "w=1,0")
    assert doc["jvp"]["y"] == [1.0, 0.0]


def test_hessian_and_hvp_match_torch(cli_json):
    torch = pytest.importorskip("torch")
    x = [-1.2, 1.0]
    hessian = cli_json("hessian", "-e", ROSENBROCK, "--x", "-1.2,1")["hessian"]["x,x"]

    def f(xx):
        return (1 - xx[0]) ** 2 + 100 * (xx[1] - xx[0] ** 2) ** 2

    expected = torch.autograd.functional.hessian(f, torch.tensor(x, dtype=torch.float64))
    np.testing.assert_allclose(hessian, expected.numpy(), rtol=1e-10)
    assert hessian == [[1330.0, 480.0], [480.0, 200.0]]
    product = cli_json("hvp", "-e", ROSENBROCK, "--x", "-1.2,1", "--v", "0.5,-2")["hvp"]["x"]
    _, expected_hvp = torch.autograd.functional.hvp(
        f, torch.tensor(x, dtype=torch.float64), torch.tensor([0.5, -2.0], dtype=torch.float64)
    )
    np.testing.assert_allclose(product, expected_hvp.numpy(), rtol=1e-10)


def test_hessian_of_several_inputs_has_every_pair(cli_json):
    doc = cli_json("hessian", "-e", "f = sum(x * x * w)", "--x", "1,2", "-i", "w=3,4")
    assert set(doc["hessian"]) == {"x,x", "x,w", "w,x", "w,w"}
    assert doc["hessian"]["x,w"] == [[2.0, 0.0], [0.0, 4.0]]


def test_hessian_needs_a_scalar_output(cli):
    result = cli("hessian", "-e", "y = x * x", "--x", "1,2")
    assert result.exit_code == 2
    assert "hessian needs a scalar output" in result.stderr


def test_check_agrees_on_example_2(cli):
    result = cli("check", "-e", EXAMPLE2, "--x", "1,2", "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["agree"] is True
    assert set(doc["check"]) == {"reverse", "forward", "finite differences", "symbolic"}
    assert doc["check"]["symbolic"]["x"] == [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]]


def test_check_fails_at_a_kink_and_names_the_entry(cli, parse_json):
    result = cli("check", "-f", "samples/check_kink.gc")
    assert result.exit_code == 1
    assert "DISAGREE" in result.stdout
    line = "finite differences differs from reverse mode at dy/dx[0,0]: 1.5 vs 0\n"
    assert line in result.stdout, "the table writes the numbers in --precision digits"
    # 3 h / 2 h: 1.5 give or take the last bit, which depends on the step h = eps^(1/3); JSON
    # holds every digit
    (worst,) = parse_json(cli("check", "-f", "samples/check_kink.gc", "--format", "json").stdout)[
        "worst"
    ]
    found = re.fullmatch(r".* at dy/dx\[0,0\]: (\S+) vs 0\.0", worst)
    assert found and float(found.group(1)) == pytest.approx(1.5, rel=1e-15)


def test_check_writes_a_difference_in_as_many_digits_as_tell_the_numbers_apart(cli, parse_json):
    """--precision digits, or more where two numbers that differ would read the same."""
    args = ["check", "-e", "y = x**3", "--x", "1.00001", "--rtol", "0", "--atol", "1e-12"]
    document = parse_json(cli(*args, "--format", "json").stdout)
    exact = [float(n) for n in re.search(r": (\S+) vs (\S+)$", document["worst"][0]).groups()]
    assert exact[0] != exact[1] and exact[0] == pytest.approx(exact[1], rel=1e-9)
    for digits in ("2", "4"):
        result = cli(*args, "--precision", digits)
        assert result.exit_code == 1
        (line,) = [line for line in result.stdout.splitlines() if "differs from" in line]
        shown = re.search(r": (\S+) vs (\S+)$", line).groups()
        assert shown[0] != shown[1], line
        for text, number in zip(shown, exact):
            assert float(text) == pytest.approx(number, rel=1e-9), line


@pytest.mark.parametrize(
    "program, x, line",
    [
        ("y = sqrt(x)", "0", "symbolic differs from reverse mode at dy/dx: nan vs inf"),
        ("y = log(x)", "-1", "finite differences differs from reverse mode at dy/dx: nan vs -1"),
        ("y = mean(x)", "zeros(0)", None),
    ],
)
def test_check_at_a_singular_or_empty_point_reports_instead_of_crashing(cli, program, x, line):
    result = cli("check", "-e", program, "--x", x)
    if line is None:
        assert result.exit_code == 0 and "all methods agree" in result.stdout
    else:
        assert result.exit_code == 1, result.stderr
        assert "the methods DISAGREE" in result.stdout and line in result.stdout


def test_check_tolerances_are_options(cli):
    loose = cli("check", "-f", "samples/check_kink.gc", "--atol", "2")
    assert loose.exit_code == 0


def test_graph_json_lists_nodes_with_torch_names(cli_json):
    nodes = cli_json("graph", "-f", "samples/neural_network.gc")["graph"]
    by_name = {n["name"]: n for n in nodes if n["name"]}
    # the loss's node is torch's loss.grad_fn (the mean of the elements' losses is in it)
    assert nodes[0]["name"] == "loss"
    assert nodes[0]["grad_fn"] == "BinaryCrossEntropyWithLogitsBackward0"
    assert by_name["z"]["grad_fn"] == "AddBackward0"
    assert by_name["W"]["is_leaf"] and by_name["W"]["requires_grad"]
    assert by_name["x"]["is_leaf"] and not by_name["x"]["requires_grad"]


def test_graph_shows_the_values_of_constants(cli, cli_json):
    args = ("graph", "-e", "y = x*3 + 2", "--x", "1,2")
    constants = [n for n in cli_json(*args)["graph"] if n["op"] == "constant"]
    assert sorted(n["value"] for n in constants) == [2.0, 3.0]
    assert all(n["value"] is None for n in cli_json(*args)["graph"] if n["op"] != "constant")
    tree = cli(*args).stdout
    assert "constant 3  shape ()" in tree and "constant 2  shape ()" in tree
    dot = cli(*args, "--format", "dot").stdout
    assert 'label="constant 3\\n()"' in dot and 'label="constant 2\\n()"' in dot
    rounded = cli("graph", "-e", "y = x*3.14159", "--x", "1", "--precision", "2").stdout
    assert "constant 3.1  shape ()" in rounded


def test_graph_dot_is_graphviz_text(cli):
    result = cli("graph", "-f", "samples/neural_network.gc", "--format", "dot")
    assert result.exit_code == 0
    assert result.stdout.startswith("digraph gradcli {")
    assert result.stdout.count("->") == 7


def test_explain_example_2_shows_the_post_s_jt_v(cli_json):
    details = cli_json("explain", "-e", EXAMPLE2, "--x", "1,2", "--v", "1,1,1")["explain"]
    assert details["jacobian_t"]["x"] == [["2*x_0", "2*x_0", "0"], ["0", "10*x_1", "3"]]
    assert details["jt_v"]["x"] == [4.0, 23.0]
    assert [row["node"] for row in details["backward"]] == ["y2", "y1", "y0"]


def test_explain_says_an_elementwise_jacobian_is_diagonal(cli_json):
    doc = cli_json("explain", "-f", "samples/explain_log.gc", "--v", "[[3,2,0],[4,0,1]]")
    (note,) = doc["explain"]["notes"]
    assert "diagonal" in note and "1/x" in note
    assert doc["grads"]["x"] == [[3.0, 1.0, 0.0], [1.0, 0.0, 1 / 6]]


def test_symbolic_gradient_equals_sympy(cli_json):
    doc = cli_json("grad", "-e", ROSENBROCK, "--x", "-1.2,1", "--symbolic")
    x0, x1 = sp.symbols("x_0 x_1", real=True)
    f = (1 - x0) ** 2 + 100 * (x1 - x0**2) ** 2
    for formula, symbol in zip(doc["symbolic"]["x"], (x0, x1)):
        parsed = sp.sympify(formula, locals={"x_0": x0, "x_1": x1})
        assert sp.simplify(parsed - sp.diff(f, symbol)) == 0


def test_symbolic_says_why_not(cli):
    result = cli("grad", "-f", "samples/neural_network.gc", "--symbolic")
    assert result.exit_code == 0
    assert "no symbolic form: the inputs have 90 elements" in result.stderr


def test_heatmap_without_colour_shows_signs_and_blank_zeros(cli):
    result = cli("jacobian", "-e", "y = x[0:3] * x[1:4]", "--x", "1,2,3,-4", "--heatmap")
    assert result.exit_code == 0
    row = next(line for line in result.stdout.splitlines() if line.startswith("│ y[2]"))
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells == ["y[2]", "", "", "-████", "+███"]


def test_plot_csv_holds_the_function_and_its_derivative(cli):
    result = cli("plot", "-e", "y = tanh(x)", "--x", "0", "--x-range", "-1:1", "--points", "5",
                 "--format", "csv")  # fmt: skip
    assert result.exit_code == 0
    header, *rows = result.stdout.strip().splitlines()
    assert header == "x,y,dy/dx"
    table = np.array([[float(c) for c in r.split(",")] for r in rows])
    np.testing.assert_allclose(table[:, 1], np.tanh(table[:, 0]), rtol=1e-15)
    np.testing.assert_allclose(table[:, 2], 1 - np.tanh(table[:, 0]) ** 2, rtol=1e-15)


def test_plot_draws_a_chart(cli):
    result = cli("plot", "-f", "samples/plot_tanh.gc")
    assert result.exit_code == 0
    assert "* y   o dy/dx" in result.stdout
    assert result.stdout.count("*") > 40


def test_plot_image_without_matplotlib_says_how_to_install(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    result = cli("plot", "-f", "samples/plot_tanh.gc", "--out", tmp_path / "p.png")
    assert result.exit_code == 2
    assert "pip install 'gradcli[plot]'" in result.stderr
    assert not (tmp_path / "p.png").exists()


def test_plot_writes_the_same_image_every_run(cli, tmp_path):
    pytest.importorskip("matplotlib")  # in the test extra, so CI runs this
    for name in ("a.png", "b.png", "a.svg", "b.svg"):
        result = cli("plot", "-f", "samples/plot_tanh.gc", "--out", tmp_path / name)
        assert result.exit_code == 0 and f"wrote {tmp_path / name}" in result.stderr
    assert (tmp_path / "a.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert (tmp_path / "a.svg").read_text().count("<path") > 2
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    result = cli("plot", "-f", "samples/plot_tanh.gc", "--out", tmp_path / "p.gif")
    assert result.exit_code == 2 and "ending in .png or .svg" in result.stderr


def test_non_finite_values_are_reported_and_strict_fails(cli):
    result = cli("grad", "-e", "y = sqrt(x); out = sum(y)", "--x", "0,1", "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["grads"]["x"] == [None, 0.5]  # JSON has no infinity: null (the warning says)
    assert "the derivative of sqrt at 0 is infinite" in doc["warnings"][0]
    strict = cli("grad", "-e", "y = sqrt(x); out = sum(y)", "--x", "0,1", "--strict")
    assert strict.exit_code == 1
    assert "x.grad" in strict.stdout  # the values are still printed


SQRT_TANGENT = (
    "statement 1 (line 1) `y = sqrt(x)`: the forward-mode derivative of sqrt gave a "
    "non-finite tangent (the derivative of sqrt at 0 is infinite)"
)


@pytest.mark.parametrize(
    "name, at_zero, away",
    [
        ("jvp", ["--x", "0", "--t", "1"], ["--x", "1", "--t", "1"]),
        ("jacobian", ["--x", "0,1", "--mode", "forward"], ["--x", "2,1", "--mode", "forward"]),
        ("plot", ["--x-range", "0:1"], ["--x-range", "1:2"]),
    ],
)
def test_forward_mode_non_finite_tangents_are_reported_and_strict_fails(cli, name, at_zero, away):
    result = cli(name, "-e", "y = sqrt(x)", *at_zero)
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert warnings == [f"warning: {SQRT_TANGENT}"]
    assert cli(name, "-e", "y = sqrt(x)", *at_zero, "--strict").exit_code == 1
    finite = cli(name, "-e", "y = sqrt(x)", *away, "--strict")
    assert finite.exit_code == 0 and "warning" not in finite.stderr


def test_batch_of_a_0d_softmax(cli):
    result = cli("eval", "-e", "y = softmax(x) + log_softmax(x)", "--x", "2", "--batch", "-",
                 input="1\n2\n3\n")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["values"]["y"] for line in lines] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("fmt", ["table", "dot", "json"])
def test_graph_warns_and_strict_fails_as_the_other_commands_do(cli, fmt):
    args = ["graph", "-e", "y = log(x)", "--x", "0", "--format", fmt]
    loose = cli(*args)
    assert loose.exit_code == 0 and "log gave -inf" in loose.stderr
    strict = cli(*args, "--strict")
    assert strict.exit_code == 1 and "(--strict)" in strict.stderr
    assert strict.stdout == loose.stdout, "the graph is still printed"


def test_plot_image_warns_and_strict_fails_as_the_chart_does(cli, tmp_path):
    pytest.importorskip("matplotlib")
    args = ["plot", "-e", "y = log(x)", "--x-range", "-1:1", "--points", "5"]
    image = cli(*args, "--out", tmp_path / "p.svg")
    chart = cli(*args)
    warnings = [line for line in chart.stderr.splitlines() if line.startswith("warning")]
    assert warnings and image.stderr.splitlines()[: len(warnings)] == warnings
    assert image.exit_code == 0 and f"wrote {tmp_path / 'p.svg'}" in image.stderr
    strict = cli(*args, "--out", tmp_path / "q.svg", "--strict")
    assert strict.exit_code == 1 and (tmp_path / "q.svg").exists()


def test_forward_non_finite_names_the_first_statement_only(cli):
    result = cli("eval", "-e", "y = log(x); z = y * 2; w = y * 0", "--x", "0,1")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert len(warnings) == 2
    assert "`y = log(x)`: log gave -inf (log of a non-positive number)" in warnings[0]
    assert "`w = y * 0`: mul gave nan (0 * inf)" in warnings[1]


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_jacobian_modes_agree(cli_json, mode):
    doc = cli_json("jacobian", "-e", EXAMPLE2, "--x", "1,2", "--mode", mode)
    assert doc["jacobian"]["x"] == [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]]
    assert doc["mode"].startswith("forward" if mode in ("forward", "auto") else "reverse")


def test_batch_from_npy_matches_single_runs(cli, cli_json, tmp_path):
    points = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])
    np.save(tmp_path / "p.npy", points)
    result = cli(
        "vjp", "-e", EXAMPLE2, "--x", "1,2", "--v", "1,1,1", "--batch", f"@{tmp_path}/p.npy"
    )
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    for point, line in zip(points, lines):
        single = cli_json("vjp", "-e", EXAMPLE2, "--x", ",".join(map(str, point)), "--v", "1,1,1")
        assert line["grads"] == single["grads"] and line["values"] == single["values"]


def test_batch_from_stdin_json_lines_and_npz_out(cli, tmp_path):
    out = tmp_path / "r.npz"
    result = cli("grad", "-e", ROSENBROCK, "--x", "0,0", "--batch", "-", "--out", out,
                 input="[1, 2]\n[-1.2, 1]\n")  # fmt: skip
    assert result.exit_code == 0
    with np.load(out) as arrays:
        np.testing.assert_allclose(arrays["grads.x"], [[-400.0, 200.0], [-215.6, -88.0]])
        np.testing.assert_allclose(arrays["values.f"], [100.0, 24.2])


def test_batch_rejects_points_of_the_wrong_shape(cli, tmp_path):
    np.save(tmp_path / "p.npy", np.ones((4, 3)))
    result = cli(
        "vjp", "-e", EXAMPLE2, "--x", "1,2", "--v", "1,1,1", "--batch", f"@{tmp_path}/p.npy"
    )
    assert result.exit_code == 2
    assert "the points of x have shape (3,), but x has shape (2,)" in result.stderr


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


def test_an_overflow_is_named_an_overflow(cli):
    """issue 27: ``x * 1e308 * 10`` said "mul gave inf (0 * inf)"; an infinity from finite
    operands is an overflow, a NaN from mul is 0 * inf."""
    result = cli("eval", "-e", "y = x * 1e308 * 10; z = y * 0", "--x", "1,2")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert "`y = x * 1e308 * 10`: mul gave inf (overflow)" in warnings[0]
    assert "`z = y * 0`: mul gave nan (0 * inf)" in warnings[1]


def test_an_imaginary_literal_beyond_float64_is_python_s_complex_0_inf(cli):
    """issue 27: ``x * 1e400j`` exited 70; Python reads 1e400j as complex(0, inf), so torch
    gives nan+infj (the real part 1 * 0 - 0 * inf)."""
    result = cli(
        "eval", "-e", "y = x * 1e400j", "--x", "1,2", "--format", "json", "--nonfinite", "string"
    )
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["values"]["y"] == [["nan", "inf"], ["nan", "inf"]]
    assert any("1e400j is beyond float64's range" in w for w in out["warnings"])
    assert any("mul gave nan (0 * inf)" in w for w in out["warnings"])
