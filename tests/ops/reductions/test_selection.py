"""Selections and the operations with several results (gradcli/ops/reductions/selection.py) against
torch: the indices of every row of ``engine_optable.INDICES`` (int64, no gradient, batched
replay), ties and nan as torch treats them, and the gradients of max(x) and median(x)."""

from __future__ import annotations

import numpy as np
import pytest
from engine_checks import FEW
from engine_optable import INDICES
from hypothesis import given
from hypothesis import strategies as st

import gradcli as gc
from gradcli.engine.compile import run_batched, trace
from gradcli.ops.reductions.selection import results

torch = pytest.importorskip("torch")

ROWS = [pytest.param(row, id=row.name) for row in INDICES]


def _torch(case, xs):
    with torch.no_grad():
        return case.torch_fn()(*[torch.tensor(x) for x in xs])


@pytest.mark.parametrize("row", ROWS)
@FEW
@given(data=st.data())
def test_indices_match_torch(row, data):
    case = data.draw(row.cases())
    got = case.fn(*[gc.tensor(x) for x in case.inputs])
    expected = _torch(case, case.inputs)
    assert got.dtype == np.int64 and expected.dtype == torch.int64
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("row", ROWS)
@FEW
@given(data=st.data())
def test_indices_carry_no_gradient(row, data):
    case = data.draw(row.cases())
    xs = [gc.tensor(x, requires_grad=True) for x in case.inputs]
    out = case.fn(*xs)
    assert not out.requires_grad and out.grad_fn is None


@pytest.mark.parametrize("row", ROWS)
@FEW
@given(data=st.data())
def test_batched_replay_of_indices_equals_each_point(row, data):
    case = data.draw(row.cases())
    rng = np.random.default_rng(case.seed)
    points = [[rng.permutation(x.reshape(-1)).reshape(x.shape) for x in case.inputs]]
    points += [[x[::-1].copy() if x.ndim else x for x in case.inputs], case.inputs]
    tape = trace(lambda *xs: [case.fn(*xs)], *points[0])
    stacked = [np.stack([p[i] for p in points]) for i in range(len(points[0]))]
    (batched,) = run_batched(tape, stacked, [True] * len(stacked))
    for k, point in enumerate(points):
        eager = case.fn(*[gc.tensor(x) for x in point]).numpy()
        np.testing.assert_array_equal(batched[k], eager)


TIES = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 1.0, 1.0, 0.0], [0.0, -1.0, 0.0, -1.0, 5.0]])
NANS = np.array([[1.0, np.nan, 3.0, np.nan], [np.inf, 2.0, -np.inf, 2.0]])


@pytest.mark.parametrize("values", [TIES, NANS], ids=["ties", "nan"])
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("max", {"dim": 1}),
        ("min", {"dim": 1}),
        ("max", {"dim": 0, "keepdim": True}),
        ("sort", {"dim": 1}),
        ("sort", {"dim": 1, "descending": True}),
        ("sort", {"dim": 0, "descending": True, "stable": True}),
        ("cummax", {"dim": 1}),
        ("cummin", {"dim": 1}),
        ("cummax", {"dim": 0}),
    ],
)
def test_ties_and_nan_give_torch_s_values_and_indices(values, name, params):
    """Where torch's choice among ties is deterministic (the first of max/min, a stable sort,
    the latest of a running extreme), gradcli's is the same; nan as torch places it."""
    op = gc.OPS[name]
    got = results(op, op.arranged([gc.tensor(values)], _options(op, params)))
    expected = getattr(torch, name)(torch.tensor(values), **params)
    for mine, theirs in zip(got, expected):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("values", [TIES, NANS], ids=["ties", "nan"])
def test_argmax_takes_the_first_of_ties_and_of_nans(name, values):
    for dim in (None, 0, 1):
        got = getattr(gc, name)(gc.tensor(values), dim)
        np.testing.assert_array_equal(got.numpy(), getattr(torch, name)(torch.tensor(values), dim))


def _options(op, params):
    return [params.get(p.name, p.default) for p in op.options if p.kind != "output"]


@pytest.mark.parametrize("name", ["max", "min", "median"])
def test_the_extreme_or_median_of_all_elements_shares_the_gradient_among_ties(name):
    x = gc.tensor(TIES, requires_grad=True)
    tx = torch.tensor(TIES, requires_grad=True)
    getattr(gc, name)(x).backward()
    getattr(torch, name)(tx).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_along_dim_the_gradient_goes_to_the_index_returned():
    x = gc.tensor(TIES, requires_grad=True)
    tx = torch.tensor(TIES, requires_grad=True)
    (gc.max(x, 1).values * gc.tensor([1.0, 2.0, 3.0])).sum().backward()
    (torch.max(tx, 1).values * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_the_lower_median_of_an_even_count_and_a_nan():
    for values in ([1.0, 2.0, 3.0, 4.0], [4.0, np.nan, 1.0], [[3.0, 1.0], [2.0, np.nan]]):
        got, expected = gc.median(gc.tensor(values)), torch.median(torch.tensor(values))
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
        if np.ndim(values) == 2:
            for k in (0, 1):
                mine = gc.median(gc.tensor(values), 1, output=(k, 0))
                theirs = torch.median(torch.tensor(values), 1)[k]
                np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_split_chunk_and_unbind_give_as_many_pieces_as_torch():
    x = np.arange(12.0).reshape(3, 4)
    for name, args in [
        ("split", (3, 1)),
        ("split", ([1, 3], 1)),
        ("split", (2,)),
        ("chunk", (3, 1)),
        ("chunk", (2, 0)),
        ("unbind", (1,)),
    ]:
        got = results(gc.OPS[name], [gc.tensor(x), *args])
        expected = getattr(torch, name)(torch.tensor(x), *args)
        assert len(got) == len(expected), (name, args)
        for mine, theirs in zip(got, expected):
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda x: gc.max(gc.tensor(np.zeros((2, 0))), 1), "non-zero size"),
        (lambda x: gc.topk(x, 4), r"k \(4\) out of range"),
        (lambda x: gc.kthvalue(x, 0), r"k \(0\) out of range"),
        (lambda x: gc.split(x, [1, 1]), "sum exactly to 3"),
        (lambda x: gc.chunk(x, 0), "greater than 0"),
        (lambda x: gc.split(x, 1, output=(0, 2)), "too many values to unpack"),
        (lambda x: gc.unbind(gc.tensor(1.0)), "0-d tensor"),
    ],
)
def test_bad_arguments_are_refused_as_torch_refuses_them(call, message):
    with pytest.raises(gc.EngineError, match=message):
        call(gc.tensor([1.0, 2.0, 3.0]))


def test_nanmedian_ignores_nan_and_shares_the_gradient_of_all_elements():
    values = np.array([[np.nan, 2.0, 1.0, np.nan, 3.0], [4.0, np.nan, 1.0, 1.0, 2.0]])
    for k in (0, 1):
        mine = gc.nanmedian(gc.tensor(values), 1, output=(k, 0))
        np.testing.assert_array_equal(mine.numpy(), torch.nanmedian(torch.tensor(values), 1)[k])
    x = gc.tensor(values, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True)
    gc.nanmedian(x).backward()
    torch.nanmedian(tx).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def _tied(seed: int, shape: tuple[int, ...], nan: bool) -> np.ndarray:
    """Few distinct values (so many ties, in many places), sometimes with nans."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 1 + seed % 4, shape).astype(np.float64)
    if nan:
        values[rng.random(shape) < 0.2] = np.nan
    return values


# rows of up to 16 (the standard library's sorts are insertion sorts there), longer rows (its
# introsort's partitions), a row long enough for topk's partial sort (k * 64 <= n)
TIED_SHAPES = [(7,), (4, 5), (3, 17), (40,), (2, 3, 21), (130,)]


@pytest.mark.parametrize("shape", TIED_SHAPES, ids=str)
@pytest.mark.parametrize("nan", [False, True], ids=["ties", "ties-nan"])
def test_ties_pick_torchs_index_and_send_the_gradient_there(shape, nan):
    """topk, kthvalue, mode, sort (stable=False), median and max/min along a dim pick, among
    equal values, the index torch 2.13's CPU kernels pick, and the gradient goes to it: checked
    against torch on tie-heavy inputs, every dim, several k."""
    for seed in range(6):
        values = _tied(seed, shape, nan)
        for dim in range(len(shape)):
            n = shape[dim]
            calls = [
                ("max", (dim,), {}),
                ("min", (dim, True), {}),
                ("median", (dim,), {}),
                ("nanmedian", (dim,), {}),
                ("mode", (dim,), {}),
                ("mode", (dim, True), {}),
                ("sort", (dim,), {}),
                ("sort", (dim, True), {}),
                ("sort", (), {"dim": dim, "stable": True}),
            ]
            for k in sorted({1, 2, (n + 1) // 2, n}):
                calls += [
                    ("kthvalue", (k, dim), {}),
                    ("topk", (k, dim), {}),
                    ("topk", (k, dim, False), {}),
                    ("topk", (k, dim, True, False), {}),
                ]
            for name, args, kwargs in calls:
                _same_choice_as_torch(name, values, args, kwargs)


def _same_choice_as_torch(name: str, values: np.ndarray, args: tuple, kwargs: dict) -> None:
    theirs_x = torch.tensor(values, requires_grad=True)
    theirs = getattr(torch, name)(theirs_x, *args, **kwargs)
    cotangent = np.arange(1.0, 1.0 + theirs.values.numel()).reshape(theirs.values.shape)
    theirs.values.backward(torch.tensor(cotangent))
    mine_x = gc.tensor(values, requires_grad=True)
    where = f"{name}{args}{kwargs} of {values.tolist()}"
    mine = [getattr(gc, name)(mine_x, *args, **kwargs, output=(k, 0)) for k in range(2)]
    np.testing.assert_array_equal(mine[1].numpy(), theirs.indices.numpy(), err_msg=where)
    np.testing.assert_array_equal(mine[0].numpy(), theirs.values.detach().numpy(), err_msg=where)
    mine[0].backward(gc.tensor(cotangent))
    np.testing.assert_array_equal(mine_x.grad.numpy(), theirs_x.grad.numpy(), err_msg=where)


def test_mode_is_the_smallest_most_frequent_value_at_torchs_index():
    values = np.array([[2.0, 1.0, 2.0, 1.0, 3.0], [5.0, 4.0, 3.0, 2.0, 1.0], [np.nan] * 5])
    expected = torch.mode(torch.tensor(values), 1)
    got = [gc.mode(gc.tensor(values), 1, output=(k, 0)).numpy() for k in range(2)]
    np.testing.assert_array_equal(got[0], expected.values.numpy())  # nan where all are nan
    np.testing.assert_array_equal(got[1], expected.indices.numpy())
    assert got[0][:2].tolist() == [1.0, 1.0] and got[1][:2].tolist() == [3, 4]


_X = [[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]]
# the library's calls of operations with several results, as torch's: (gradcli, torch)
LIBRARY_CALLS = {
    "max along dim": lambda m, x: m.max(x, 1),
    "min keepdim": lambda m, x: m.min(x, 0, keepdim=True),
    "max of all": lambda m, x: m.max(x),
    "max of two": lambda m, x: m.max(x, x * 0 + 3),
    "median along dim": lambda m, x: m.median(x, 1),
    "mode": lambda m, x: m.mode(x, 1),
    "sort": lambda m, x: m.sort(x, 1, descending=True),
    "topk": lambda m, x: m.topk(x, 2),
    "kthvalue": lambda m, x: m.kthvalue(x, 2, 1),
    "cummax": lambda m, x: m.cummax(x, 1),
    "var_mean": lambda m, x: m.var_mean(x, 1),
    "split": lambda m, x: m.split(x, 1, 1),
    "chunk method": lambda m, x: x.chunk(2, 1),
    "unbind": lambda m, x: m.unbind(x),
    "max method": lambda m, x: x.max(dim=0),
    "slogdet": lambda m, x: m.slogdet(x[:, :2]),
    "meshgrid": lambda m, x: m.meshgrid(x[0], x[1, :2], indexing="xy"),
}


@pytest.mark.parametrize("name", list(LIBRARY_CALLS))
def test_the_library_returns_every_result_as_torch_does(name):
    """``values, indices = gc.max(x, 1)``: a tuple, or a named tuple with torch's fields."""
    got = LIBRARY_CALLS[name](gc, gc.tensor(_X))
    expected = LIBRARY_CALLS[name](torch, torch.tensor(_X, dtype=torch.float64))
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, gc.Tensor)
        np.testing.assert_allclose(got.data, expected.numpy())
        return
    assert isinstance(got, tuple) and len(got) == len(expected)
    named = type(expected) is not tuple  # torch.return_types: fields by name
    assert hasattr(got, "_fields") == named
    for field in getattr(got, "_fields", ()):
        np.testing.assert_allclose(getattr(got, field).data, getattr(expected, field).numpy())
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a.data, b.numpy())
