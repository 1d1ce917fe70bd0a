"""The reverse pass's rules on arrays (``Op.vjp_arrays``): where a pass builds no graph and
every value is float64, an entry that has one computes its inputs' cotangents on numpy arrays
without tensors or nodes between (``ops/rules/array_rules.py``). Each must give, bit for bit, what
its ``vjp`` gives through ``apply`` (taken here by a pass that builds the graph, which never
uses them), at special values too, and decline a broadcast operand."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli.base import bounds
from gradcli.base.engine_errors import SizeError
from gradcli.engine import tensor as tensor_module
from gradcli.ops.rules import array_rules
from gradcli.ops.table import OPS

# every entry with a rule on arrays, with values in its domain (and at its edges)
_SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-300, 1e300, np.inf, -np.inf, np.nan]
UNARY = {
    "sin": _SPECIAL,
    "cos": _SPECIAL,
    "exp": [*_SPECIAL, 700.0, 710.0, -745.0],
    "tanh": [*_SPECIAL, 20.0, -20.0],
    "sigmoid": [*_SPECIAL, 40.0, -40.0],
    "log": [*_SPECIAL, 1e-320],
    "relu": _SPECIAL,
    "neg": _SPECIAL,
}
BINARY = ("add", "sub", "mul", "div")
SUMMED = ("add", "sub")  # whose rules on arrays sum a broadcast operand's cotangent back
_CALL = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


def test_the_entries_with_rules_on_arrays_are_those_checked_here():
    having = {name for name, op in OPS.items() if op.vjp_arrays is not None}
    others = {"matmul", "sum", "log_softmax", "getitem", "class_nll"}
    assert having == set(UNARY) | set(BINARY) | others
    any_shape = {name for name, op in OPS.items() if op.vjp_arrays_any_shape is not None}
    assert any_shape == set(SUMMED) | {"matmul"}


def _values(extra, size=40, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.standard_normal(size) * 3, np.asarray(extra, dtype=np.float64)])


def _gradients(f, arrays, seed, constant=None):
    """The gradients of f(*inputs) (times ``seed``, the cotangent given) by both passes:
    without a graph (where the rules on arrays run) and building one (where ``vjp`` runs);
    with ``constant``, f's second operand is that tensor, which needs no gradient."""
    found = []
    for create_graph in (False, True):
        inputs = [gc.tensor(a, requires_grad=True) for a in arrays]
        operands = inputs if constant is None else [*inputs, constant]
        f(*operands).backward(gc.tensor(seed), create_graph=create_graph)
        found.append([t.grad.numpy() for t in inputs])
    return found


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.fixture
def counted(monkeypatch):
    """The calls of each entry's rule on arrays that gave the cotangents, by name (add's and
    sub's called where the pass would pass the cotangent on: ``test_a_cotangent_passed_on``)."""
    calls = {}
    for name, op in OPS.items():
        monkeypatch.setattr(op, "vjp_arrays_passes", False)
        for field in ("vjp_arrays", "vjp_arrays_any_shape"):
            given = getattr(op, field)
            if given is None:
                continue

            def rule(*args, _rule=given, _name=name, **params):
                found = _rule(*args, **params)
                if found is not None:
                    calls[_name] = calls.get(_name, 0) + 1
                return found

            monkeypatch.setattr(op, field, rule)
    return calls


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [None, ()])
def test_a_unary_rule_on_arrays_gives_vjps_bits(name, shape, counted):
    x = _values(UNARY[name])
    xs = [x] if shape is None else [np.float64(v).reshape(()) for v in x[::7]]
    for value in xs:
        seed = np.resize(np.array([0.75, -1.5, -0.0, np.inf, np.nan, 1e-310]), value.shape)
        fast, slow = _gradients(getattr(gc, name), [value], seed)
        _same_bits(fast[0], slow[0])
    assert counted.get(name, 0) == len(xs)  # each pass without a graph took the array rule


@pytest.mark.parametrize("shape", [(-1,), (-1, 64)])
def test_relus_rule_on_many_elements_keeps_vjps_bits_by_a_mask(shape, counted):
    """From ``MASKED`` elements relu's rule ands g's bits with a mask: the same bits as
    where's, -0.0, inf and nan kept where the output is positive, +0.0 elsewhere."""
    x = _values(UNARY["relu"], size=array_rules.MASKED - 9 + 64 * 5).reshape(shape)
    assert x.size >= array_rules.MASKED
    seed = np.resize(np.array([0.75, -1.5, -0.0, np.inf, np.nan, 1e-310, -np.inf]), x.shape)
    fast, slow = _gradients(gc.relu, [x], seed)
    _same_bits(fast[0], slow[0])
    assert counted.get("relu", 0) == 1


def test_relus_rule_into_its_output_keeps_vjps_bits(monkeypatch):
    """Where the pass alone holds relu's output, its rule writes into that array: the bits
    of where's, -0.0, inf and nan kept where the output is positive, +0.0 elsewhere."""
    monkeypatch.setattr(tensor_module, "REUSED", 0)  # (large arrays alone, else)
    into = []
    rule = OPS["relu"].vjp_arrays_into
    monkeypatch.setattr(OPS["relu"], "vjp_arrays_into", lambda *args: into.append(1) or rule(*args))
    x = _values(UNARY["relu"], size=array_rules.MASKED - 9 + 64 * 5).reshape(-1, 64)
    seed = np.resize(np.array([0.75, -1.5, -0.0, np.inf, np.nan, 1e-310, -np.inf]), x.shape)
    fast, slow = _gradients(lambda x: gc.relu(x) * 2.0, [x], seed)  # (an output the pass holds)
    _same_bits(fast[0], slow[0])
    assert into == [1]


@pytest.mark.parametrize("name", BINARY)
def test_a_binary_rule_on_arrays_gives_vjps_bits_and_declines_a_broadcast(name, counted):
    a = _values([1.0, -0.0, np.inf, np.nan, 1e-300, 0.0, 2.0, -np.inf, 3.0])
    b = _values([0.0, 1.0, np.inf, 2.0, 1e300, -0.0, np.nan, 4.0, -np.inf], seed=1)
    seed = np.linspace(-2, 2, a.size)
    fast, slow = _gradients(_CALL[name], [a, b], seed)
    for got, want in zip(fast, slow):
        _same_bits(got, want)
    assert counted[name] == 1
    fast, slow = _gradients(_CALL[name], [a, b[:1]], seed)  # b broadcast
    for got, want in zip(fast, slow):
        _same_bits(got, want)
    summed = name in SUMMED  # else declined: vjp sums it back
    assert counted[name] == (2 if summed else 1)
    fast, slow = _gradients(_CALL[name], [a], seed, constant=gc.tensor(b))  # a's alone
    _same_bits(fast[0], slow[0])
    assert counted[name] == (3 if summed else 2)


def _with_numbers(name):
    """The passes of entry ``name`` of a tensor of every shape (empty and 0-d too) and a number,
    each with the bits of vjp's; their count."""
    runs = 0
    for shape in [(), (0,), (7,), (3, 4)]:
        x = np.resize(_values([1.0, -0.0, np.inf, np.nan, 1e-300]), shape)
        seed = np.resize(np.array([0.75, -1.5, -0.0, np.inf, np.nan, 1e-310]), shape)
        for number in (1.01, 3, 0, -0.0, np.inf, np.nan, 1e300):
            fast, slow = _gradients(lambda t, number=number: _CALL[name](t, number), [x], seed)
            _same_bits(fast[0], slow[0])
            runs += 1
    return runs


@pytest.mark.parametrize("name", BINARY)
def test_a_binary_rule_with_a_number_gives_vjps_bits(name, counted):
    """A tensor and a number (x * 1.01: the result has the tensor's shape, which the pass does
    not test there) of every shape, empty and 0-d too; then a tensor that needs no gradient
    broadcast against a column, which the pass tests: the rule declines it or sums it back."""
    runs = _with_numbers(name)
    assert counted[name] == runs
    column = _values([2.0, -0.0])[:6].reshape(6, 1)
    seed = np.linspace(-2, 2, 24).reshape(6, 4)
    fast, slow = _gradients(_CALL[name], [column], seed, constant=gc.tensor(np.ones(4) * 1.5))
    _same_bits(fast[0], slow[0])
    assert counted[name] == runs + (name in SUMMED)


@pytest.mark.parametrize("name", SUMMED)
def test_a_cotangent_passed_on_for_a_number_has_the_rules_bits(name, monkeypatch):
    """x + 0.1, x - 0.1: the pass without a graph gives x the cotangent itself, as add's and
    sub's rules do, without calling them (``Op.vjp_arrays_passes``); with a tensor operand
    (or a graph built) the rule, or vjp, runs."""
    assert OPS[name].vjp_arrays_passes

    def refused(*args, **params):
        raise AssertionError("the rule ran for a number")

    monkeypatch.setattr(OPS[name], "vjp_arrays", refused)
    assert _with_numbers(name) == 28
    x, seed = _values([]), np.linspace(-2, 2, 40)
    with pytest.raises(AssertionError, match="the rule ran"):
        _gradients(_CALL[name], [x], seed, constant=gc.tensor(np.ones(x.shape)))


@pytest.mark.parametrize("name", SUMMED)
def test_adds_and_subs_rules_sum_a_bias_back_with_vjps_bits(name, counted):
    """A bias of each shape broadcast against rows (a row, a column, a number), either side."""
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((6, 5)) * 1e3
    rows[0, :3] = [np.inf, -0.0, 1e-300]
    seed = rng.standard_normal((6, 5))
    for bias in (rng.standard_normal(5), rng.standard_normal((6, 1)), np.float64(1.5)):
        for operands in ([rows, bias], [np.asarray(bias), rows]):
            fast, slow = _gradients(_CALL[name], operands, seed)
            for got, want in zip(fast, slow):
                _same_bits(got, want)
    assert counted[name] == 6


def test_matmuls_rule_on_arrays_gives_vjps_bits_and_declines_other_than_matrices(counted):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((7, 5)), rng.standard_normal((5, 3))
    a[0, :3] = [np.inf, -0.0, np.nan]
    for operands, seed in (
        ([a, b], rng.standard_normal((7, 3))),
        ([a[:5], b[:, :1].repeat(5, 1)], rng.standard_normal((5, 5))),  # squares: g's shape
        ([a.T, a], rng.standard_normal((5, 5))),  # a transposed operand
    ):
        fast, slow = _gradients(gc.matmul, operands, seed)
        for got, want in zip(fast, slow):
            _same_bits(got, want)
    seed = rng.standard_normal((7, 3))
    fast, slow = _gradients(lambda w, x: gc.matmul(x, w), [b], seed, constant=gc.tensor(a))
    _same_bits(fast[0], slow[0])  # the weight's alone (x @ W, x a constant)
    assert counted["matmul"] == 4
    for operands, seed in (
        ([a, b[:, 0]], rng.standard_normal(7)),  # a vector
        ([np.stack([a, a]), b], rng.standard_normal((2, 7, 3))),  # a batch of matrices
    ):
        fast, slow = _gradients(gc.matmul, operands, seed)
        for got, want in zip(fast, slow):
            _same_bits(got, want)
    assert counted["matmul"] == 4  # declined: vjp's reshapes and sums


def test_getitems_rule_on_arrays_gives_vjps_bits_and_declines_past_the_room(counted):
    """getitem's scatter: basic indices, repeated advanced ones (which add up), a class-index
    loss's pick; past the room (of x's size, not g's) it declines and vjp refuses it."""
    x = _values([1.0, -0.0, np.inf, np.nan, 1e-300]).reshape(5, 9)
    rows, picks = np.arange(5), np.array([0, 8, 8, 3, 0])
    for index in ((slice(1, 4), 2), (np.array([0, 0, 4, 1]),), (rows, picks), (..., None)):
        want = x[index]
        seed = np.resize(np.array([0.75, -1.5, -0.0, np.inf, np.nan, 1e-310]), want.shape)
        fast, slow = _gradients(lambda t, index=index: gc.getitem(t, index), [x], seed)
        _same_bits(fast[0], slow[0])
    assert counted["getitem"] == 4
    t = gc.tensor(x, requires_grad=True)
    picked = gc.getitem(t, (rows, picks))
    seed = gc.tensor(np.ones(5))
    with bounds.using(bounds.Limits(max_elements=20)), pytest.raises(SizeError):
        picked.backward(seed)  # g's 5 elements fit, x's 45 do not
    assert counted["getitem"] == 4


def test_class_nlls_rule_on_arrays_gives_vjps_bits_and_declines_past_the_room(counted):
    """nll_loss of class indices as one node (a mean or sum, every target kept): of a vector,
    rows and rows with a trailing dim, a count whose reciprocal is inexact (7, 3) too."""
    rng = np.random.default_rng(4)
    cases = [((4,), np.array(2)), ((7, 4), rng.integers(0, 4, 7)), ((3, 4, 2), np.zeros((3, 2)))]
    for shape, target in cases:
        x = rng.standard_normal(shape)
        x.flat[:3] = [np.inf, -0.0, 1e-300]
        for reduction in ("mean", "sum"):
            for seed in (1.5, -0.0, np.inf):
                loss = lambda t, target=target, reduction=reduction: gc.nll_loss(  # noqa: E731
                    t, gc.tensor(target), reduction=reduction
                )
                fast, slow = _gradients(loss, [x], np.float64(seed))
                _same_bits(fast[0], slow[0])
    assert counted["class_nll"] == 18
    t = gc.tensor(rng.standard_normal((7, 4)), requires_grad=True)
    loss = gc.nll_loss(t, gc.tensor(cases[1][1]))
    with bounds.using(bounds.Limits(max_elements=20)), pytest.raises(SizeError):
        loss.backward()  # g's one element fits, x's 28 do not
    assert counted["class_nll"] == 18


def test_the_rules_on_arrays_stay_off_where_values_are_not_float64_or_a_graph_is_built(counted):
    x = gc.tensor(np.linspace(-1, 1, 5), dtype=np.float32, requires_grad=True)
    assert x.dtype == np.float32
    gc.sin(x * x).sum().backward()
    assert not counted
    y = gc.tensor(np.linspace(-1, 1, 5), requires_grad=True)
    (g,) = gc.grad(gc.sin(y).sum(), [y], create_graph=True)
    assert not counted
    g.sum().backward()  # the second pass builds no graph: the rules on arrays run
    assert counted == {"sum": 1, "mul": 1, "cos": 1}  # g is the seed times cos(y)
    np.testing.assert_allclose(y.grad.numpy(), -np.sin(np.linspace(-1, 1, 5)))


def test_a_chain_keeps_torchs_gradient():
    torch = pytest.importorskip("torch")
    h0 = np.random.default_rng(0).standard_normal(4)
    x = gc.tensor(h0, requires_grad=True)
    tx = torch.tensor(h0, requires_grad=True)
    h, th = x, tx
    for _ in range(50):
        h = gc.tanh(gc.sin(h) * 1.01 + 0.1) / 1.5
        th = torch.tanh(torch.sin(th) * 1.01 + 0.1) / 1.5
    h.sum().backward()
    th.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_relus_rule_into_its_output_gives_vjps_bits_where_the_pass_alone_holds_it(monkeypatch):
    op = OPS["relu"]
    calls = []

    def into(*args, _rule=op.vjp_arrays_into):
        calls.append(1)
        return _rule(*args)

    monkeypatch.setattr(op, "vjp_arrays_into", into)
    monkeypatch.setattr(tensor_module, "REUSED", 0)  # (large arrays alone, else)
    x = _values(UNARY["relu"])
    seed = np.resize(np.array([0.75, -1.5, -0.0, np.inf, np.nan, 1e-310]), x.shape)
    fast, slow = _gradients(lambda t: gc.relu(t) * 1.0, [x], seed)  # relu's output: the graph's
    _same_bits(fast[0], slow[0])
    assert len(calls) == 1
    t = gc.tensor(x, requires_grad=True)
    h = gc.relu(t)
    before = h.detach().numpy().copy()
    (h * 1.0).backward(gc.tensor(seed))  # h held by a name: its array is not written
    assert len(calls) == 1
    _same_bits(h.detach().numpy(), before)
    _same_bits(t.grad.numpy(), slow[0])


def test_the_rules_on_arrays_of_sum_and_log_softmax_take_their_dims_with_vjps_bits(counted):
    """Rules of nodes with parameters (the dims): the same bits as vjp's, each dim, kept or
    not, special values and all."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 4, 3)) * 20
    x[0, 0] = [np.inf, -np.inf, 1e-300]
    x[1, 1] = [np.nan, -0.0, 710.0]
    calls = 0
    for dim in (0, 1, 2, -1, (0, 2), None):
        for keepdim in (False, True):
            seed = np.asarray(rng.standard_normal(np.sum(x, axis=dim, keepdims=keepdim).shape))
            fast, slow = _gradients(lambda t, d=dim, k=keepdim: gc.sum(t, d, k), [x], seed)
            _same_bits(fast[0], slow[0])
            calls += 1
    for dim in (0, 1, 2, -1):
        seed = rng.standard_normal(x.shape)
        seed[0, 0, 0] = np.nan
        fast, slow = _gradients(lambda t, d=dim: gc.log_softmax(t, d), [x], seed)
        _same_bits(fast[0], slow[0])
    assert counted == {"sum": calls, "log_softmax": 4}


def test_cross_entropys_gradient_keeps_its_bits():
    """cross_entropy with class indices (its log_softmax, picked entries, negation, sum and
    division) by the rules on arrays and by vjp: the same bits, with an ignored target too."""
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((64, 10)) * 4
    for labels in (
        gc.tensor(rng.integers(0, 10, 64)),
        gc.tensor(np.where(np.arange(64) % 7, rng.integers(0, 10, 64), -100)),
    ):
        fast, slow = _gradients(lambda z, y=labels: gc.cross_entropy(z, y), [logits], 1.0)
        _same_bits(fast[0], slow[0])
