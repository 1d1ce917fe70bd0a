"""Differential test: random programs through ``gradcli grad --format json`` against PyTorch.

Hypothesis draws expression trees over a vector input ``x`` (also used as ``x0`` in the seed's
indexed style and as ``x[i]``) and a scalar input ``w``. Each tree is written out twice, as
gradcli program text (with the fewest parentheses Python's precedence allows, so the parser's
precedence and associativity are exercised) and as the same computation in torch (float64).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

N = 3  # elements of x

# precedence of the text forms, loosest first
SUM, PRODUCT, UNARY, POWER, ATOM = range(5)

UNARY_FUNCTIONS = ("exp", "sin", "tanh", "sigmoid", "log1pxx", "neg", "square")
BINARY_OPERATORS = ("+", "-", "*", "/")

leaves = st.one_of(
    st.just(("x",)),
    st.just(("w",)),
    st.just(("x0",)),
    st.builds(lambda i: ("xi", i), st.integers(-N, N - 1)),
    st.builds(
        lambda c: ("const", c),
        st.sampled_from([0.5, 2.0, 3.0, -1.5, 0.25, 1e-3, 1.0, -2.0, 10.0, 7.0, 1.5e2]),
    ),
)


def _extend(children):
    return st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(UNARY_FUNCTIONS), children),
        st.tuples(st.just("binary"), st.sampled_from(BINARY_OPERATORS), children, children),
        st.tuples(st.just("reduce"), st.sampled_from(("sum", "mean")), children),
    )


def expressions(names: tuple[str, ...] = ()):
    """Trees over x, w, constants and the names assigned so far."""
    base = leaves if not names else st.one_of(leaves, st.sampled_from([("ref", n) for n in names]))
    return st.recursive(base, _extend, max_leaves=12)


# -- gradcli text ------------------------------------------------------------------------------


def text(node, names=()) -> tuple[str, int]:
    """(program text, its precedence)."""
    kind = node[0]
    if kind in ("x", "w", "x0"):
        return kind, ATOM
    if kind == "ref":
        return node[1], ATOM
    if kind == "xi":
        return f"x[{node[1]}]", ATOM
    if kind == "const":
        value = node[1]
        return (repr(value), UNARY) if value < 0 else (repr(value), ATOM)
    if kind == "reduce":
        return f"{node[1]}({text(node[2])[0]})", ATOM
    if kind == "unary":
        function, (inner, level) = node[1], text(node[2])
        if function == "neg":
            return f"-{inner if level >= UNARY else f'({inner})'}", UNARY
        if function == "square":
            return f"{inner if level > POWER else f'({inner})'}**2", POWER
        if function == "log1pxx":
            left, right = _wrap(inner, level, PRODUCT), _wrap(inner, level, PRODUCT + 1)
            return f"log(1 + {left}*{right})", ATOM
        return f"{function}({inner})", ATOM
    op, (left, left_level), (right, right_level) = node[1], text(node[2]), text(node[3])
    level = SUM if op in "+-" else PRODUCT
    # left-associative: the right operand needs parentheses at equal precedence
    return f"{_wrap(left, left_level, level)} {op} {_wrap(right, right_level, level + 1)}", level


def _wrap(inner: str, level: int, needed: int) -> str:
    return inner if level >= needed else f"({inner})"


# -- the same in torch -------------------------------------------------------------------------


class Torch:
    def __init__(self, x, w, env):
        self.x, self.w, self.env = x, w, env
        self.smallest_denominator = math.inf

    def __call__(self, node):
        kind = node[0]
        if kind == "x":
            return self.x
        if kind == "w":
            return self.w
        if kind == "x0":
            return self.x[0]
        if kind == "xi":
            return self.x[node[1]]
        if kind == "ref":
            return self.env[node[1]]
        if kind == "const":
            return torch.tensor(node[1], dtype=torch.float64)
        if kind == "reduce":
            inner = self(node[2])
            return inner.sum() if node[1] == "sum" else inner.mean()
        if kind == "unary":
            inner = self(node[2])
            return {
                "exp": torch.exp,
                "sin": torch.sin,
                "tanh": torch.tanh,
                "sigmoid": torch.sigmoid,
                "log1pxx": lambda t: torch.log(1 + t * t),
                "neg": torch.neg,
                "square": lambda t: t**2,
            }[node[1]](inner)
        left, right = self(node[2]), self(node[3])
        if node[1] == "/":
            self.smallest_denominator = min(
                self.smallest_denominator, float(right.detach().abs().min())
            )
        return {"+": torch.add, "-": torch.sub, "*": torch.mul, "/": torch.div}[node[1]](
            left, right
        )


def uses(node, name: str) -> bool:
    if node[0] == name or (name == "x" and node[0] in ("x0", "xi")):
        return True
    return any(isinstance(child, tuple) and uses(child, name) for child in node[1:])


@st.composite
def programs(draw):
    """Up to three statements ``p = ...; q = ...; out = sum(...)``, each may use the earlier."""
    statements = []
    names: tuple[str, ...] = ()
    for target in ("p", "q")[: draw(st.integers(0, 2))]:
        statements.append((target, draw(expressions(names))))
        names += (target,)
    final = draw(expressions(names))
    statements.append(("out", ("reduce", draw(st.sampled_from(("sum", "mean"))), final)))
    return statements


numbers = st.floats(-2, 2, allow_nan=False, allow_infinity=False).map(lambda v: round(v, 6))


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(program=programs(), xs=st.lists(numbers, min_size=N, max_size=N), w=numbers)
def test_random_programs_match_torch(cli, parse_json, program, xs, w):
    assume(compare_with_torch(cli, parse_json, program, xs, w))


def random_tree(rng: np.random.Generator, depth: int, names: tuple[str, ...]):
    """A seeded generator of larger trees than hypothesis tends to draw."""
    if depth == 0 or rng.random() < 0.15:
        choice = rng.integers(6 if names else 5)
        if choice == 5:
            return ("ref", names[rng.integers(len(names))])
        if choice == 3:
            return ("xi", int(rng.integers(-N, N)))
        if choice == 4:
            return ("const", float(rng.choice([0.5, 2.0, -1.5, 3.0, 0.25, -0.75])))
        return (("x",), ("w",), ("x0",))[choice]
    kind = rng.random()
    if kind < 0.45:
        return ("unary", str(rng.choice(UNARY_FUNCTIONS)), random_tree(rng, depth - 1, names))
    if kind < 0.92:
        return (
            "binary",
            str(rng.choice(BINARY_OPERATORS)),
            random_tree(rng, depth - 1, names),
            random_tree(rng, depth - 1, names),
        )
    return ("reduce", str(rng.choice(["sum", "mean"])), random_tree(rng, depth - 1, names))


@pytest.mark.parametrize("seed", range(40))
def test_seeded_random_programs_match_torch(cli, parse_json, seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):  # draw until a program is well-conditioned at its point
        names: tuple[str, ...] = ()
        program = []
        for target in ("p", "q")[: rng.integers(3)]:
            program.append((target, random_tree(rng, 4, names)))
            names += (target,)
        final = random_tree(rng, 5, names)
        program.append(("out", ("reduce", str(rng.choice(["sum", "mean"])), final)))
        xs = [round(float(v), 6) for v in rng.uniform(-2, 2, N)]
        w = round(float(rng.uniform(-2, 2)), 6)
        if compare_with_torch(cli, parse_json, program, xs, w):
            return
    pytest.fail("no well-conditioned program in 50 draws")


def compare_with_torch(cli, parse_json, program, xs, w) -> bool:
    """Run ``program`` in torch and through the CLI and compare; False if ill-conditioned."""
    x_t = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    w_t = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    env = {}
    evaluate = Torch(x_t, w_t, env)
    for target, tree in program:
        env[target] = evaluate(tree)
    out = env["out"]
    value = float(out.detach())
    if not (evaluate.smallest_denominator > 0.1 and math.isfinite(value) and abs(value) < 1e8):
        return False
    if not out.requires_grad:
        return False
    used = [name for name in ("x", "w") if any(uses(tree, name) for _, tree in program)]
    out.backward()
    leaves = {"x": x_t, "w": w_t}
    # an input used only by statements the output does not depend on gets no gradient: None
    expected = {
        name: None if leaves[name].grad is None else leaves[name].grad.numpy() for name in used
    }
    known = [g for g in expected.values() if g is not None]
    if not all(np.isfinite(g).all() and np.abs(g).max() < 1e8 for g in known):
        return False

    source = "\n".join(f"{target} = {text(tree)[0]}" for target, tree in program)
    args = ["grad", "-e", source, "--format", "json"]
    if "x" in used:
        args += ["--x", ",".join(repr(v) for v in xs)]
    if "w" in used:
        args += ["-i", f"w={w!r}"]
    result = cli(*args)
    assert result.exit_code == 0, f"{source}\n{result.stderr}"
    document = parse_json(result.stdout)

    scale = max([1.0, abs(value)] + [float(np.abs(g).max()) for g in known])
    tolerance = {"rtol": 1e-10, "atol": 1e-12 * scale}
    np.testing.assert_allclose(document["values"]["out"], value, **tolerance, err_msg=source)
    assert set(document["grads"]) == set(expected), source
    for name, gradient in expected.items():
        if gradient is None:
            assert document["grads"][name] is None, source
            continue
        np.testing.assert_allclose(
            document["grads"][name], gradient, **tolerance, err_msg=f"d out/d {name} of\n{source}"
        )
    return True


@pytest.mark.parametrize(
    "tree, expected",
    [
        (("binary", "-", ("x",), ("binary", "-", ("w",), ("x0",))), "x - (w - x0)"),
        (("binary", "/", ("binary", "/", ("x",), ("w",)), ("x0",)), "x / w / x0"),
        (("unary", "square", ("unary", "neg", ("x",))), "(-x)**2"),
        (("unary", "neg", ("unary", "square", ("x",))), "-x**2"),
        (("binary", "*", ("x",), ("const", -1.5)), "x * -1.5"),
        (("unary", "log1pxx", ("binary", "+", ("x",), ("w",))), "log(1 + (x + w)*(x + w))"),
    ],
)
def test_the_text_writer_uses_python_precedence(tree, expected):
    """The generator's own check: its text means what its tree means."""
    assert text(tree)[0] == expected
