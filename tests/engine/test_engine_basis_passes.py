"""A Jacobian's passes, one per basis vector, traced once and replayed (engine/basis_passes.py):
the same bits as a pass on the engine for every vector, and the engine's passes wherever the
replay would not be the engine's (a custom Function's Python backward, a graph being built)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli import func
from gradcli.autograd import Function
from gradcli.autograd import functional as af
from gradcli.engine import basis_passes, compile
from gradcli.ops import table
from gradcli.ops.numerics import summation


def _layer(weight, bias, x):
    return gc.tanh(gc.linear(x, weight, bias)) * x[:3].sum()


def _point(seed: int = 0):
    rng = np.random.default_rng(seed)
    weight = gc.Tensor(rng.standard_normal((5, 16)).astype(np.float32))
    bias = gc.Tensor(rng.standard_normal(5).astype(np.float32))
    x = gc.Tensor(rng.standard_normal(16).astype(np.float32))
    return weight, bias, x


JACOBIANS = {
    "jacrev": lambda w, b, x: func.jacrev(_layer, argnums=(0, 2))(w, b, x),
    "jacfwd": lambda w, b, x: func.jacfwd(_layer, argnums=2)(w, b, x),
    "hessian": lambda w, b, x: func.hessian(_layer, argnums=2)(w, b, x),
    "jacfwd_jacfwd": lambda w, b, x: func.jacfwd(func.jacfwd(_layer, argnums=2), argnums=2)(
        w, b, x
    ),
    "vmap_jacrev": lambda w, b, x: func.vmap(
        func.jacrev(_layer, argnums=2), in_dims=(None, None, 0)
    )(w, b, gc.stack([x, x * 2, x - 1])),
    "functional_jacobian": lambda w, b, x: af.jacobian(lambda x: _layer(w, b, x), x),
    "functional_hessian": lambda w, b, x: af.hessian(lambda x: _layer(w, b, x).sum(), x),
}


def _arrays(value) -> list[np.ndarray]:
    if isinstance(value, gc.Tensor):
        return [value.data]
    return [a for v in value for a in _arrays(v)]


def _bits(arrays: list[np.ndarray]) -> list[bytes]:
    return [a.dtype.str.encode() + str(a.shape).encode() + a.tobytes() for a in arrays]


@pytest.mark.parametrize("name", sorted(JACOBIANS))
def test_the_replayed_passes_are_the_engines_to_the_bit(name, monkeypatch):
    replays = []
    real_run = compile.Tape.run

    def counted(self, *arrays):
        replays.append(1)
        return real_run(self, *arrays)

    with summation.torch_order(), gc.default_dtype(np.float32):
        monkeypatch.setattr(compile.Tape, "run", counted)
        replayed = _arrays(JACOBIANS[name](*_point()))
        monkeypatch.setattr(basis_passes, "_replayable", lambda through: False)
        on_the_engine = _arrays(JACOBIANS[name](*_point()))
    assert replays, "no pass was replayed"
    assert _bits(replayed) == _bits(on_the_engine)


@pytest.mark.parametrize("name", ["hessian", "jacfwd_jacfwd", "functional_jacobian"])
def test_the_passes_replayed_together_are_each_passs_own_to_the_bit(name, monkeypatch):
    together = []
    real_run_batched = basis_passes.run_batched

    def counted(tape, arrays, batched, each_alone=False):
        together.append(each_alone)
        return real_run_batched(tape, arrays, batched, each_alone)

    with summation.torch_order(), gc.default_dtype(np.float32):
        monkeypatch.setattr(basis_passes, "run_batched", counted)
        monkeypatch.setattr(basis_passes, "CHUNK_ELEMENTS", 64)  # several chunks
        found = _arrays(JACOBIANS[name](*_point()))
        monkeypatch.setattr(basis_passes, "_together", lambda *args: None)
        one_by_one = _arrays(JACOBIANS[name](*_point()))
    assert together and all(together), "no passes were replayed together"
    assert _bits(found) == _bits(one_by_one)


def test_passes_with_a_step_of_no_rule_for_each_point_are_replayed_one_by_one(monkeypatch):
    monkeypatch.setattr(table, "PER_POINT", {})
    monkeypatch.setattr(compile, "PER_POINT", {})
    with summation.torch_order(), gc.default_dtype(np.float32):
        found = _arrays(JACOBIANS["hessian"](*_point()))
        monkeypatch.setattr(basis_passes, "_replayable", lambda through: False)
        on_the_engine = _arrays(JACOBIANS["hessian"](*_point()))
    assert _bits(found) == _bits(on_the_engine)


class _Cube(Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        _Cube.calls += 1
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


def test_a_custom_function_takes_a_pass_on_the_engine_per_row():
    _Cube.calls = 0
    x = gc.Tensor(np.arange(1.0, 7.0))
    jacobian = func.jacrev(lambda x: _Cube.apply(x).sin())(x)
    assert _Cube.calls == 6  # its backward, the script's Python, ran for every row
    expected = np.diag(np.cos(x.data**3) * 3 * x.data**2)
    np.testing.assert_allclose(jacobian.data, expected, rtol=1e-12)


def test_a_graph_being_built_is_not_replayed(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("a pass that builds a graph was traced")

    monkeypatch.setattr(basis_passes, "trace_on", refused)
    x = gc.Tensor(np.linspace(0.5, 2.0, 5), requires_grad=True)
    jacobian = af.jacobian(lambda x: x.exp() * x, x, create_graph=True)
    assert jacobian.requires_grad
    np.testing.assert_allclose(jacobian.data, np.diag(np.exp(x.data) * (1 + x.data)), rtol=1e-12)


@pytest.mark.parametrize("replayed", ["refused", "other numbers"])
def test_a_replay_that_is_not_the_engines_leaves_the_passes_to_the_engine(replayed, monkeypatch):
    def run(self, *arrays):
        if replayed == "refused":
            raise ValueError("operands could not be broadcast together")
        return [np.zeros(self.shapes[slot], self.dtypes[slot]) for slot in self.outputs]

    def run_batched(tape, arrays, batched, each_alone=False):
        if replayed == "refused":
            raise ValueError("operands could not be broadcast together")
        return [
            np.zeros((len(arrays[0]), *tape.shapes[slot]), tape.dtypes[slot])
            for slot in tape.outputs
        ]

    weight, bias, x = _point()
    with summation.torch_order(), gc.default_dtype(np.float32):
        expected = _arrays(func.jacfwd(_layer, argnums=2)(weight, bias, x))
        monkeypatch.setattr(compile.Tape, "run", run)
        monkeypatch.setattr(basis_passes, "run_batched", run_batched)
        found = _arrays(func.jacfwd(_layer, argnums=2)(weight, bias, x))
    assert _bits(found) == _bits(expected)
