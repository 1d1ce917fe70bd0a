"""torch's whole signature of the operations gradcli has, as real code calls them: the
parameters and forms beyond the common ones (``dtype=`` of a reduction, ``rounding_mode``,
a tensor unpacked along its first dimension, ...), each checked against torch 2.13 and, where
differentiable, against finite differences through the engine's rules."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc

torch = pytest.importorskip("torch")

_X = np.array([[1.2, -2.3, 0.4], [3.1, 0.7, -1.6]])


def _pair(values=_X, requires_grad=True):
    return (
        gc.tensor(values, requires_grad=requires_grad),
        torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad),
    )


def _same(got, expected) -> None:
    assert got.dtype == expected.detach().numpy().dtype
    np.testing.assert_allclose(
        got.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-6
    )


def test_iterating_a_tensor_gives_its_rows_as_torch_does():
    x, tx = _pair()
    rows, trows = list(x), list(tx)
    assert len(rows) == len(trows) == 2
    for row, trow in zip(rows, trows):
        _same(row, trow)
        assert row.grad_fn.name() == type(trow.grad_fn).__name__ == "UnbindBackward0"
    a, b = x
    ta, tb = tx
    (a * 2 + b * b).sum().backward()
    (ta * 2 + tb * tb).sum().backward()
    _same(x.grad, tx.grad)


def test_iterating_a_0d_tensor_is_torchs_type_error():
    with pytest.raises(TypeError) as expected:
        iter(torch.tensor(1.0))
    with pytest.raises(TypeError) as got:
        iter(gc.tensor(1.0))
    assert str(got.value) == str(expected.value)


# -- dtype= of the reductions, scans and softmaxes: the input cast to it first ----------------

TYPED = {
    "sum": lambda m, x, dtype: x.sum(dtype=dtype),
    "sum along a dim": lambda m, x, dtype: m.sum(x, 1, dtype=dtype),
    "mean": lambda m, x, dtype: x.mean(0, dtype=dtype),
    "prod": lambda m, x, dtype: x.prod(1, dtype=dtype),
    "cumsum": lambda m, x, dtype: x.cumsum(1, dtype=dtype),
    "cumprod": lambda m, x, dtype: m.cumprod(x, 0, dtype=dtype),
    "softmax": lambda m, x, dtype: x.softmax(1, dtype=dtype),
    "log_softmax": lambda m, x, dtype: m.log_softmax(x, 0, dtype=dtype),
}


@pytest.mark.parametrize("call", list(TYPED))
def test_dtype_computes_in_that_dtype_as_torch_does(call):
    x, tx = _pair()
    y, ty = TYPED[call](gc, x, gc.float32), TYPED[call](torch, tx, torch.float32)
    _same(y, ty)
    assert y.grad_fn.name() == type(ty.grad_fn).__name__
    y.backward(gc.ones(tuple(y.shape), dtype=gc.float32))
    ty.backward(torch.ones_like(ty))
    _same(x.grad, tx.grad)  # the gradient comes back in the input's dtype


def test_dtype_makes_integers_floating_as_torch_does():
    values = np.array([[1, 2], [3, 4]])
    x, tx = gc.tensor(values).to("int64"), torch.tensor(values)
    _same(gc.mean(x, dtype=gc.float64), torch.mean(tx, dtype=torch.float64))
    _same(x.sum(0, dtype=gc.float32), tx.sum(0, dtype=torch.float32))
    _same(x.cumsum(0, dtype=gc.float64), tx.cumsum(0, dtype=torch.float64))


# -- div's rounding_mode: the quotient rounded, derivative 0 ----------------------------------


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounds_as_torch_does(mode):
    x, tx = _pair()
    other = np.array([2.0, -0.3, 0.7])
    y = gc.div(x, gc.tensor(other), rounding_mode=mode)
    ty = torch.div(tx, torch.tensor(other), rounding_mode=mode)
    _same(y, ty)
    assert y.grad_fn.name() == type(ty.grad_fn).__name__ == "DivBackward2"
    (y * x).sum().backward()
    (ty * tx).sum().backward()
    _same(x.grad, tx.grad)
    _same(x.div(3, rounding_mode=mode), tx.div(3, rounding_mode=mode))
    whole, by = np.array([5, -7, 7, -5, 6]), np.array([2, 2, -2, -2, 3])
    _same(
        gc.div(gc.tensor(whole).to("int64"), gc.tensor(by).to("int64"), rounding_mode=mode),
        torch.div(torch.tensor(whole), torch.tensor(by), rounding_mode=mode),
    )


def test_div_floor_corrects_a_quotient_rounded_up_as_torch_does():
    """1 / 0.1 is 10 in floating point, but 0.1 is a little over a tenth: the floor is 9."""
    _same(
        gc.div(gc.tensor(1.0), 0.1, rounding_mode="floor"),
        torch.div(torch.tensor(1.0, dtype=torch.float64), 0.1, rounding_mode="floor"),
    )


def test_div_refuses_another_rounding_mode_in_torchs_words():
    with pytest.raises(RuntimeError) as expected:
        torch.div(torch.ones(2), 2, rounding_mode="round")
    with pytest.raises(gc.DomainError) as got:
        gc.div(gc.ones(2), 2, rounding_mode="round")
    assert str(got.value) == str(expected.value)


# -- zeros_like, ones_like, full_like: operations a program computes -------------------------

LIKES = {
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "ones_like int64": lambda m, x: m.ones_like(x, dtype=m.int64),
    "full_like": lambda m, x: m.full_like(x, 2.5),
    "full_like of integers": lambda m, x: m.full_like(x.to(m.int64), 2.5),
    "full_like float32": lambda m, x: m.full_like(x, -1, dtype=m.float32),
}


@pytest.mark.parametrize("call", list(LIKES))
def test_a_tensor_shaped_as_another_is_torchs(call):
    x, tx = _pair()
    y, ty = LIKES[call](gc, x), LIKES[call](torch, tx)
    _same(y, ty)
    assert not y.requires_grad and y.grad_fn is None and ty.grad_fn is None


# -- a 0-d tensor takes dim 0 and -1, as torch's ---------------------------------------------

ALONG_A_DIM = {
    "sum": lambda m, x, d: x.sum(d),
    "sum keepdim": lambda m, x, d: x.sum(d, keepdim=True),
    "sum of a tuple": lambda m, x, d: x.sum(dim=(d,)),
    "mean": lambda m, x, d: x.mean(d),
    "prod": lambda m, x, d: x.prod(d),
    "amax": lambda m, x, d: x.amax(d),
    "logsumexp": lambda m, x, d: x.logsumexp(d),
    "norm": lambda m, x, d: x.norm(dim=d),
    "softmax": lambda m, x, d: x.softmax(d),
    "log_softmax": lambda m, x, d: x.log_softmax(d),
    "cumsum": lambda m, x, d: x.cumsum(d),
    "cumprod": lambda m, x, d: x.cumprod(d),
    "logcumsumexp": lambda m, x, d: x.logcumsumexp(d),
    "max": lambda m, x, d: x.max(d)[0],
    "argmin": lambda m, x, d: x.argmin(d),
    "sort": lambda m, x, d: x.sort(d)[0],
    "topk": lambda m, x, d: x.topk(1, d)[0],
    "kthvalue": lambda m, x, d: x.kthvalue(1, d)[0],
    "median": lambda m, x, d: x.median(d)[0],
    "cummax": lambda m, x, d: x.cummax(d)[0],
    "unsqueeze": lambda m, x, d: x.unsqueeze(d),
    "squeeze": lambda m, x, d: x.squeeze(d),
    "flatten": lambda m, x, d: x.flatten(d),
    "flip": lambda m, x, d: x.flip(d),
    "gather": lambda m, x, d: x.gather(d, m.tensor(0)),
    "index_select": lambda m, x, d: x.index_select(d, m.tensor([0])),
    "transpose": lambda m, x, d: x.transpose(0, d),
    "movedim": lambda m, x, d: x.movedim(0, d),
    "stack": lambda m, x, d: m.stack([x, x * 2], d),
    "scatter": lambda m, x, d: x.scatter(d, m.tensor(0), x * 2),
    "index_add": lambda m, x, d: x.index_add(d, m.tensor([0]), x * 2),
    "reshape": lambda m, x, d: x.reshape(d if d == -1 else 1),
    "index by None and the dim": lambda m, x, d: x[None][d],
}


# ... and where torch refuses a dim of a 0-d tensor, so does gradcli
REFUSED_ALONG_A_DIM = {
    "roll": lambda m, x, d: x.roll(1, d),
    "narrow": lambda m, x, d: x.narrow(d, 0, 1),
    "split": lambda m, x, d: x.split(1, d),
    "repeat_interleave": lambda m, x, d: x.repeat_interleave(2, d),
}


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("call", list(REFUSED_ALONG_A_DIM))
def test_a_0d_tensor_is_refused_where_torch_refuses_it(call, dim):
    x, tx = _pair(np.array(1.5))
    with pytest.raises((RuntimeError, IndexError)):
        REFUSED_ALONG_A_DIM[call](torch, tx, dim)
    with pytest.raises(gc.ShapeError):
        REFUSED_ALONG_A_DIM[call](gc, x, dim)


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("call", list(ALONG_A_DIM))
def test_a_0d_tensor_takes_dim_0_and_minus_1_as_torch_does(call, dim):
    x, tx = _pair(np.array(1.5))
    y, ty = ALONG_A_DIM[call](gc, x, dim), ALONG_A_DIM[call](torch, tx, dim)
    _same(y, ty)
    if ty.requires_grad:
        y.sum().backward()
        ty.sum().backward()
        _same(x.grad, tx.grad)


# -- scaled_dot_product_attention's attn_mask ---------------------------------------------------


@pytest.mark.parametrize("seen", ["some keys", "no key for a query", "broadcast over queries"])
def test_a_boolean_attention_mask_is_torchs(seen):
    rng = np.random.default_rng(5)
    values = [rng.standard_normal(shape) for shape in ((2, 3, 2), (2, 4, 2), (2, 4, 3))]
    mask = rng.random((3, 4)) > 0.4
    mask[:, 0] = True
    if seen == "no key for a query":
        mask[1] = False  # torch's safe softmax: that query's output (and gradient) is 0
    elif seen == "broadcast over queries":
        mask = mask[0]
    xs = [gc.tensor(v, requires_grad=True) for v in values]
    txs = [torch.tensor(v, requires_grad=True) for v in values]
    y = gc.scaled_dot_product_attention(*xs, attn_mask=gc.tensor(mask))
    ty = torch.nn.functional.scaled_dot_product_attention(*txs, attn_mask=torch.tensor(mask))
    _same(y, ty)
    cotangent = rng.standard_normal(y.shape)
    grads = gc.grad(y, xs, gc.tensor(cotangent))
    expected = torch.autograd.grad(ty, txs, torch.tensor(cotangent))
    for got, want in zip(grads, expected):
        _same(got, want)


def test_an_attention_mask_with_is_causal_is_refused_in_torchs_words():
    q = np.ones((2, 2))
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.scaled_dot_product_attention(
            *(torch.tensor(q),) * 3, attn_mask=torch.ones(2, 2, dtype=torch.bool), is_causal=True
        )
    with pytest.raises(gc.DomainError) as got:
        gc.scaled_dot_product_attention(
            *(gc.tensor(q),) * 3, attn_mask=gc.tensor(q) > 0, is_causal=True
        )
    assert str(got.value) == str(expected.value)


# -- indexing and reshaping as torch takes them --------------------------------------------------

SHAPED = {
    "x[..., None, 1]": lambda m, x: x[..., None, 1],
    "x[1, ..., 2]": lambda m, x: x[1, ..., 2],
    "x[[0, 1], [1, 2]]": lambda m, x: x[[0, 1], [1, 2]],
    "x[:, [0, 2]]": lambda m, x: x[:, [0, 2]],
    "x[x > 5]": lambda m, x: x[x > 5],
    "x[0][1][2]": lambda m, x: x[0][1][2],
    "x[:, 1:10]": lambda m, x: x[:, 1:10],
    "x[..., ::2]": lambda m, x: x[..., ::2],
    "x[1, [0, 2], 1:3]": lambda m, x: x[1, [0, 2], 1:3],
    "x[[0], :, [1]]": lambda m, x: x[[0], :, [1]],
    "x[a 0-d integer tensor]": lambda m, x: x[m.tensor(1)],
    "x[a 0-d integer tensor, 2]": lambda m, x: x[m.tensor(1), 2],
    "x[True]": lambda m, x: x[True],
    "x[False]": lambda m, x: x[False],
    "reshape(-1, 4)": lambda m, x: x.reshape(-1, 4),
    "reshape((4, -1))": lambda m, x: x.reshape((4, -1)),
    "reshape([2, 12])": lambda m, x: x.reshape([2, 12]),
    "view(2, -1, 2)": lambda m, x: x.view(2, -1, 2),
    "view(x.size())": lambda m, x: x.view(x.size()),
    "reshape(*x.shape)": lambda m, x: x.reshape(*x.shape),
    "reshape(x.shape[0], -1)": lambda m, x: x.reshape(x.shape[0], -1),
    "view(-1)[3]": lambda m, x: x.view(-1)[3],
}


@pytest.mark.parametrize("call", list(SHAPED))
def test_indexing_and_reshaping_as_torch_takes_them(call):
    x, tx = _pair(np.arange(24.0).reshape(2, 3, 4))
    y, ty = SHAPED[call](gc, x), SHAPED[call](torch, tx)
    _same(y, ty)
    assert y.grad_fn.name() == type(ty.grad_fn).__name__
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    _same(x.grad, tx.grad)


# the same parameters in gradcli's programs (gradcli eval/grad -e), each against torch
PROGRAMS = {
    "y = sum(x * x, dtype=torch.float32)": lambda x: torch.sum(x * x, dtype=torch.float32),
    "y = x.softmax(1, dtype=torch.float64)[0, 1]": lambda x: x.softmax(1, dtype=torch.float64)[
        0, 1
    ],
    "y = mean(x, 0, dtype=None).sum()": lambda x: torch.mean(x, 0, dtype=None).sum(),
    "y = (div(x, 2, rounding_mode='floor') * x).sum()": lambda x: (
        torch.div(x, 2, rounding_mode="floor") * x
    ).sum(),
    "z = torch.full_like(x, 3.0); y = (x * z + zeros_like(x)).sum()": lambda x: (
        x * torch.full_like(x, 3.0) + torch.zeros_like(x)
    ).sum(),
    "y = max_pool2d(x.reshape(1, 2, 3), 2, ceil_mode=True).sum()": lambda x: (
        torch.nn.functional.max_pool2d(x.reshape(1, 2, 3), 2, ceil_mode=True).sum()
    ),
    "y = F.avg_pool2d(x.reshape(1, 2, 3), 2, 1, 1, True, False).sum()": lambda x: (
        torch.nn.functional.avg_pool2d(x.reshape(1, 2, 3), 2, 1, 1, True, False).sum()
    ),
    "y = F.scaled_dot_product_attention(x, x, x, attn_mask=x[:, :2] > 0).sum()": lambda x: (
        torch.nn.functional.scaled_dot_product_attention(x, x, x, attn_mask=x[:, :2] > 0).sum()
    ),
    "y = (torch.add(x, x * x, alpha=2) + x.sub(1, alpha=3)).sum()": lambda x: (
        torch.add(x, x * x, alpha=2) + x.sub(1, alpha=3)
    ).sum(),
    "y = F.softmin(x, 1, dtype=torch.float32)[0, 0]": lambda x: torch.nn.functional.softmin(
        x, 1, dtype=torch.float32
    )[0, 0],
    "y = (x * torch.ones_like(x, dtype=torch.float64)).prod()": lambda x: (
        x * torch.ones_like(x, dtype=torch.float64)
    ).prod(),
    "y = (x.div(0.7, rounding_mode='trunc') + x).sum()": lambda x: (
        x.div(0.7, rounding_mode="trunc") + x
    ).sum(),
    "y = x.cumsum(1, dtype=float64).prod(dtype=torch.float64)": lambda x: x.cumsum(
        1, dtype=torch.float64
    ).prod(dtype=torch.float64),
}


@pytest.mark.parametrize("source", list(PROGRAMS))
def test_a_program_passes_the_parameter_as_torch_code_does(source):
    result = gc.program(source).grad(x=_X)
    tx = torch.tensor(_X, requires_grad=True)
    ty = PROGRAMS[source](tx)
    ty.backward()
    np.testing.assert_allclose(result.value, ty.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(result.grads["x"], tx.grad.numpy(), rtol=1e-6, atol=1e-7)
