"""The snapshots' numbers at full precision, against torch.

A snapshot keeps 12 significant digits of a number (``snapshot_numbers``), so each snapshot
test's command is also run with ``--format json`` and its document handed to
``check_document``, which computes every number in it again: each sample program is written
here once more in torch (float64), and each command's arithmetic is torch's (autograd,
``torch.func.jvp``, the functional Hessian, central differences of torch's function). Only the
inputs come from gradcli: a sample's declared values (its ``randn`` is gradcli's generator) and
the text of ``--v`` or ``--t``, which are data, not results.

Importing this module needs torch; the ``torch_oracle`` fixture skips a test without it.
"""

from __future__ import annotations

import re

import numpy as np
import torch
import torch.nn.functional as F

from gradcli.commands.compute import bind
from gradcli.lang import load_program
from gradcli.lang.values import parse_value

RTOL, ATOL = 1e-10, 1e-12


def _example_2(x):
    y0, y1, y2 = x[0] ** 2, x[0] ** 2 + 5 * x[1] ** 2, 3 * x[1]
    return {"y0": y0, "y1": y1, "y2": y2, "y": torch.stack([y0, y1, y2])}


def _network(x, y, W, b):
    z = x @ W + b
    return {"z": z, "loss": F.binary_cross_entropy_with_logits(z, y)}


def _rosenbrock(x):
    return {"f": (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2}


def _first_example(x):
    y = x + 2
    z = y * y * 3
    return {"y": y, "z": z, "out": z.mean()}


def _matrix_expression(A, x):
    return {"f": x @ A @ x / 2 + torch.tanh(A @ x).sum()}


def _log(x):
    return {"y": torch.log(x)}


# sample -> (the program in torch, its inputs that require grad)
PROGRAMS = {
    "check_kink": (lambda x: {"y": torch.relu(x) * 3}, {"x"}),
    "explain_log": (_log, {"x"}),
    "first_example": (_first_example, {"x"}),
    "forward_mode": (_example_2, set()),
    "graph_network": (_network, {"W", "b"}),
    "heatmap_softmax": (lambda x: {"y": torch.softmax(x, dim=0)}, {"x"}),
    "hvp_rosenbrock": (_rosenbrock, {"x"}),
    "log_general_case": (_log, {"x"}),
    "matrix_expression": (_matrix_expression, {"x"}),
    "neural_network": (_network, {"W", "b"}),
    "plot_tanh": (lambda x: {"y": torch.tanh(x)}, {"x"}),
    "rosenbrock": (_rosenbrock, {"x"}),
    "rosenbrock_hessian": (_rosenbrock, {"x"}),
    "softmax_cross_entropy": (
        lambda logits, target: {"loss": F.cross_entropy(logits, target.long())},
        {"logits"},
    ),
    "vjp_example1": (lambda x: {"y": x + 2}, {"x"}),
    "vjp_example2": (_example_2, {"x"}),
}

_VALUED = {"-f", "--v", "--t", "--show", "--x-range", "--format", "--points"}
_FLAGS = {"--transpose", "--heatmap", "--symbolic"}


def _options(args: list[str]) -> tuple[str, dict[str, str | bool]]:
    """The command and its options; an option the oracle does not know fails the test."""
    options: dict[str, str | bool] = {}
    words = iter(args[1:])
    for word in words:
        if word in _FLAGS:
            options[word] = True
        else:
            assert word in _VALUED, f"the torch oracle does not know {word!r}: teach it"
            options[word] = next(words)
    return args[0], options


def _tensor(array) -> torch.Tensor:
    return torch.tensor(np.asarray(array, dtype=float), dtype=torch.float64)


def _close(actual, expected, what: str, rtol: float = RTOL, atol: float = ATOL) -> None:
    expected = expected.detach().numpy() if isinstance(expected, torch.Tensor) else expected
    actual = np.asarray(actual, dtype=float)  # "nan", "inf", "-inf" read as numbers
    assert actual.shape == np.shape(expected), f"{what}: shape {actual.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


class _Sample:
    """One sample's inputs (as gradcli declares them) and its program in torch."""

    def __init__(self, path: str):
        stem = re.fullmatch(r"samples/(\w+)\.gc", path).group(1)
        self.function, self.wrt = PROGRAMS[stem]
        with open(path) as file:
            arrays = bind(load_program(file.read(), use_cache=False), {}).arrays
        self.inputs = {name: _tensor(array) for name, array in arrays.items()}

    def run(self, **changed) -> dict[str, torch.Tensor]:
        """Every named value, inputs first; ``changed`` replaces some inputs."""
        inputs = {**self.inputs, **changed}
        return {**inputs, **self.function(**inputs)}

    def leaves(self) -> dict[str, torch.Tensor]:
        """Fresh copies of the inputs, the ones in ``wrt`` requiring grad."""
        return {n: t.clone().requires_grad_(n in self.wrt) for n, t in self.inputs.items()}

    def of(self, output: str, name: str):
        """The output as a function of the input ``name``, the other inputs fixed."""
        return lambda value: self.run(**{name: value})[output]

    def jacobian(self, output: str, name: str) -> torch.Tensor:
        return torch.autograd.functional.jacobian(self.of(output, name), self.inputs[name])

    def finite_differences(self, output: str, name: str) -> np.ndarray:
        """Central differences of the torch function, with check's step eps^(1/3) max(1, |x|)."""
        point = self.inputs[name].numpy()
        function = self.of(output, name)
        columns = []
        for k in range(point.size):
            h = np.finfo(float).eps ** (1 / 3) * max(1.0, abs(float(point.flat[k])))
            plus, minus = point.copy(), point.copy()
            plus.flat[k] += h
            minus.flat[k] -= h
            columns.append((function(_tensor(plus)) - function(_tensor(minus))).numpy() / (2 * h))
        shape = tuple(self.run()[output].shape) + point.shape
        return np.stack(columns, axis=-1).reshape(shape)


def _vector(options, option: str, name: str, default=None) -> torch.Tensor:
    """The value of ``--v`` or ``--t`` as gradcli reads it (``name`` seeds ``rand``)."""
    text = options.get(option)
    if text is None:
        return default
    assert "=" not in text, f"the torch oracle does not know {option} NAME=VALUE: teach it"
    return _tensor(parse_value(text, name, 0))


# The keys of a command's document that hold numbers; check_document checks each.
CHECKED = {
    "eval": {"values"},
    "grad": {"values", "grads", "symbolic"},
    "vjp": {"values", "grads", "symbolic"},
    "explain": {"values", "grads", "explain"},
    "jacobian": {"values", "jacobian", "symbolic"},
    "jvp": {"values", "jvp"},
    "hessian": {"values", "hessian"},
    "hvp": {"values", "hvp"},
    "check": {"values", "check", "worst"},
    "plot": {"plot"},
    "graph": {"graph"},
}
TEXT = {"command", "output", "layout", "mode", "mode_reason", "agree", "warnings"}


def check_document(args: list[str], document: dict) -> None:
    """Every number of ``document``, the JSON of ``gradcli ARGS``, against torch."""
    command, options = _options(args)
    assert set(document) <= CHECKED[command] | TEXT, "a key the torch oracle does not check"
    sample = _Sample(options["-f"])
    named, output = sample.run(), document["output"]
    out = named[output]
    wrt = [n for n in sample.inputs if n in sample.wrt]
    if "values" in document:
        expected = named if command == "eval" else {output: out}
        assert set(document["values"]) == set(expected), "values"
        for name, value in document["values"].items():
            _close(value, expected[name], f"values {name}")
    v = _vector(options, "--v", "v", torch.ones_like(out))
    if "grads" in document:
        shown = options["--show"].split(",") if "--show" in options else []
        _check_grads(sample, command, shown, document["grads"], output, v)
    if "explain" in document:
        _check_explain(sample, document["explain"], output, v)
    if "jacobian" in document:
        assert list(document["jacobian"]) == wrt
        for name in wrt:
            jacobian = sample.jacobian(output, name)
            if "--transpose" in options:
                k = out.ndim
                jacobian = jacobian.permute(*range(k, jacobian.ndim), *range(k))
            _close(document["jacobian"][name], jacobian, f"jacobian {name}")
    if "symbolic" in document:
        _check_formulas(sample, document)
    if "jvp" in document:
        t = _vector(options, "--t", "--t x")
        _, jt = torch.func.jvp(sample.of(output, "x"), (sample.inputs["x"],), (t,))
        assert list(document["jvp"]) == [output]
        _close(document["jvp"][output], jt, "jvp")
    if "hessian" in document:
        blocks = torch.autograd.functional.hessian(
            lambda *xs: sample.run(**dict(zip(wrt, xs)))[output],
            tuple(sample.inputs[n] for n in wrt),
        )
        pairs = {f"{a},{b}": blocks[i][j] for i, a in enumerate(wrt) for j, b in enumerate(wrt)}
        assert set(document["hessian"]) == set(pairs)
        for pair, value in document["hessian"].items():
            _close(value, pairs[pair], f"hessian {pair}")
    if "hvp" in document:
        (name,) = wrt
        _, hv = torch.autograd.functional.hvp(sample.of(output, name), sample.inputs[name], v)
        assert list(document["hvp"]) == [name]
        _close(document["hvp"][name], hv, "hvp")
    if "check" in document:
        _check_check(sample, document, output, wrt)
    if "plot" in document:
        _check_plot(sample, document["plot"], options, output, wrt)
    for node in document.get("graph", []):
        if node["name"] is not None:
            assert node["shape"] == list(named[node["name"]].shape), node


def _check_grads(sample, command: str, shown: list[str], document: dict, output: str, v) -> None:
    """grad: ``.grad`` of every input and shown name, None off the leaves that require grad;
    vjp and explain: J^T v for each leaf that requires grad. By torch's autograd."""
    leaves = sample.leaves()
    named = {**leaves, **sample.function(**leaves)}
    names = [*leaves, *shown] if command == "grad" else sample.wrt
    assert set(document) == set(names), "grads"
    wanted = [n for n in leaves if n in sample.wrt]
    grads = dict(zip(wanted, torch.autograd.grad(named[output], [leaves[n] for n in wanted], v)))
    for name, value in document.items():
        if name in grads:
            _close(value, grads[name], f"grads {name}")
        else:
            assert value is None, f"grads {name} should be None"


def _evaluated(sample, formulas) -> np.ndarray:
    """Formulas of the inputs' elements (``x_0``, ``x_1``, ...) evaluated by sympy at the inputs."""
    import sympy as sp

    point = {
        f"{name}_{k}": value
        for name, tensor in sample.inputs.items()
        for k, value in enumerate(tensor.reshape(-1).tolist())
    }
    formulas = np.asarray(formulas, dtype=object)
    return np.array([float(sp.sympify(f).subs(point)) for f in formulas.flat]).reshape(
        formulas.shape
    )


def _check_formulas(sample, document: dict) -> None:
    """--symbolic: each formula, evaluated at the inputs, is the number beside it."""
    numeric = document["jacobian"] if "jacobian" in document else document["grads"]
    for name, formulas in document["symbolic"].items():
        _close(_evaluated(sample, formulas), np.asarray(numeric[name]), f"symbolic {name}")


def _check_explain(sample, explain: dict, output: str, v) -> None:
    """Each statement's value, each named node's incoming gradient and what it passes on to
    named nodes, v and J^T v. Steps inside a statement (``x @ W`` of ``z = x @ W + b``) have
    no name in torch's program; their local derivatives are checked in test_explain."""
    leaves = sample.leaves()
    named = {**leaves, **sample.function(**leaves)}

    def close(value, expected, what: str) -> None:
        expected = expected.detach().numpy().reshape(-1)
        _close(np.asarray(value, dtype=float).reshape(-1), expected, what)

    for row in explain["forward"]:
        name = row["statement"].split(" = ")[0]
        close(row["value"], named[name], f"explain value of {name}")
    checked = 0
    for row in explain["backward"]:
        if row["node"] not in named:
            continue
        node = named[row["node"]]
        (incoming,) = torch.autograd.grad(named[output], node, v, retain_graph=True)
        close(row["incoming"], incoming, f"explain incoming of {row['node']}")
        for passed in row["passes_on"]:
            if passed["to"] not in named:
                continue
            target = named[passed["to"]]
            (gradient,) = torch.autograd.grad(node, target, incoming, retain_graph=True)
            close(passed["gradient"], gradient, f"explain {row['node']} to {passed['to']}")
        checked += 1
    assert checked, "no node of the backward pass was checked"
    if "v" in explain:
        close(explain["v"], v, "explain v")
    for name, rows in explain.get("jacobian_t", {}).items():
        jacobian = sample.jacobian(output, name).reshape(named[output].numel(), -1)
        _close(_evaluated(sample, rows), jacobian.T, f"explain jacobian_t {name}")
    for name, value in explain.get("jt_v", {}).items():
        (gradient,) = torch.autograd.grad(named[output], leaves[name], v, retain_graph=True)
        close(value, gradient, f"explain jt_v {name}")


WORST = re.compile(
    r"(.+) differs from reverse mode at d\w+/d(\w+)(?:\[([\d,]+)\])?: (\S+) vs (\S+)"
)


def _check_check(sample, document: dict, output: str, wrt: list[str]) -> None:
    """Reverse, forward and symbolic against torch's Jacobian; finite differences against
    torch's; each disagreement's two numbers against the same."""
    expected = {}
    for method in document["check"]:
        assert method in ("reverse", "forward", "finite differences", "symbolic"), method
        assert list(document["check"][method]) == wrt, method
        expected[method] = {
            name: sample.finite_differences(output, name)
            if method == "finite differences"
            else sample.jacobian(output, name).numpy()
            for name in wrt
        }
        for name, value in document["check"][method].items():
            tolerance = {"rtol": 1e-8, "atol": 1e-8} if method == "finite differences" else {}
            _close(value, expected[method][name], f"check {method} {name}", **tolerance)
    for line in document["worst"]:
        match = WORST.fullmatch(line)
        assert match, f"the torch oracle cannot read {line!r}"
        method, name, index, value, reference = match.groups()
        at = tuple(int(i) for i in index.split(",")) if index else ()
        _close(float(value), expected[method][name][at], line, rtol=1e-8, atol=1e-8)
        _close(float(reference), expected["reverse"][name][at], line)


def _check_plot(sample, plot: dict, options, output: str, wrt: list[str]) -> None:
    """The axis, the output along it and its derivative (torch's autograd at each point)."""
    (name,) = wrt
    low, high = (float(b) for b in options.get("--x-range", "-3:3").split(":"))
    axis = np.linspace(low, high, int(options.get("--points", 101)))
    values, slopes = [], []
    for s in axis:
        point = torch.tensor(s, dtype=torch.float64, requires_grad=True)
        value = sample.run(**{name: point})[output]
        values.append(value.item())
        slopes.append(torch.autograd.grad(value, point)[0].item())
    assert list(plot) == [name, output, f"d{output}/d{name}"]
    _close(plot[name], axis, "plot axis")
    _close(plot[output], np.array(values), "plot values")
    _close(plot[f"d{output}/d{name}"], np.array(slopes), "plot slopes")
