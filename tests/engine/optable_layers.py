"""Shape and parameter strategies, and the calls on both sides, for the test-table rows of the
layers (``gradcli/ops/nn/layers.py``, ``convolution.py``): small shapes (N <= 2, C <= 2,
H, W <= 4), so that the sweep's finite differences and Hessians stay cheap.

A row's differentiable inputs are positional; the operands a layer may leave out (a bias, a
norm's weight) are present or not as ``form`` says, and the same call is made in gradcli and
torch (``call``).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from hypothesis import strategies as st

import gradcli as gc

Spec = tuple[tuple[tuple[int, ...], ...], dict[str, Any]]


def _torch() -> Any:
    return importlib.import_module("torch")


def _functional(name: str, torch: bool) -> Any:
    return getattr(_torch().nn.functional, name) if torch else getattr(gc, name)


def _batch() -> st.SearchStrategy[tuple[int, ...]]:
    """No batch dim (torch's unbatched form), or N of 1 or 2."""
    return st.sampled_from([(), (1,), (2,)])


@st.composite
def linear_spec(draw: Any) -> Spec:
    """input (*batch, in), weight (out, in), and a bias (out) or not."""
    size, out = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    x = (*draw(st.sampled_from([(), (2,), (2, 1)])), size)
    shapes = (x, (out, size), (out,)) if draw(st.booleans()) else (x, (out, size))
    return shapes, {}


# -- convolutions -----------------------------------------------------------------------------


def _setting(draw: Any, values: list[int]) -> Any:
    """A window's setting as a script writes it: one int where the dims agree (sometimes),
    else a tuple of one per dim."""
    if len(set(values)) == 1 and draw(st.booleans()):
        return values[0]
    return tuple(values)


@st.composite
def conv_spec(draw: Any, rank: int = 2, transposed: bool = False) -> Spec:
    """input (N, C, *spatial), weight, and a bias or not; stride, padding, dilation (and
    output_padding), each an int or one per spatial dim; groups."""
    groups = draw(st.sampled_from([1, 2]))
    c_in, c_out = (groups * draw(st.integers(1, 2 // groups)) for _ in range(2))
    kernel, stride, dilation, padding, output_padding, spatial = [], [], [], [], [], []
    for _ in range(rank):
        k, s, d = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
        p = draw(st.integers(0, 1))
        reach = d * (k - 1) + 1
        size = draw(st.integers(max(reach - 2 * p, 1), 4 if rank == 1 else 3))
        op = draw(st.integers(0, max(s, d) - 1)) if transposed else 0
        if transposed and (size - 1) * s + reach + op <= 2 * p:
            p = 0
        for values, value in zip(
            (kernel, stride, dilation, padding, output_padding, spatial), (k, s, d, p, op, size)
        ):
            values.append(value)
    params: dict[str, Any] = {
        "stride": _setting(draw, stride),
        "padding": _setting(draw, padding),
        "dilation": _setting(draw, dilation),
        "groups": groups,
    }
    if transposed:
        params["output_padding"] = _setting(draw, output_padding)
        weight = (c_in, c_out // groups, *kernel)
    else:
        weight = (c_out, c_in // groups, *kernel)
    x = (*draw(_batch()), c_in, *spatial)
    shapes = (x, weight, (c_out,)) if draw(st.booleans()) else (x, weight)
    return shapes, params


def conv(name: str, torch: bool = False) -> Any:
    def call(*xs: Any, **params: Any) -> Any:
        return _functional(name, torch)(*xs, **params)

    return call


# -- pooling ----------------------------------------------------------------------------------


@st.composite
def pool_spec(draw: Any, rank: int = 2, average: bool = False) -> Spec:
    """input (N, C, *spatial); kernel_size, stride (or None), padding (and dilation), each an
    int or one per dim; ceil_mode (and count_include_pad)."""
    kernel, stride, padding, dilation, spatial = [], [], [], [], []
    for _ in range(rank):
        k = draw(st.integers(1, 3))
        d = 1 if average else draw(st.integers(1, 2 if k <= 2 else 1))
        p = 0 if d > 1 else draw(st.integers(0, k // 2))  # else a window may be padding alone
        reach = d * (k - 1) + 1
        # avg_pool3d refuses an input smaller than its kernel, padding aside, as torch's
        least = max(reach - 2 * p, 1, k if average and rank == 3 else 1)
        spatial.append(draw(st.integers(least, 3 if rank == 3 else 4)))
        kernel.append(k)
        stride.append(draw(st.integers(1, 2)))
        padding.append(p)
        dilation.append(d)
    params: dict[str, Any] = {
        "kernel_size": _setting(draw, kernel),
        "stride": None if draw(st.booleans()) else _setting(draw, stride),
        "padding": _setting(draw, padding),
        # the output size rounded up: the last windows reach past the (padded) input
        "ceil_mode": draw(st.booleans()),
    }
    if average:
        params["count_include_pad"] = draw(st.booleans())
    else:
        params["dilation"] = _setting(draw, dilation)
    return ((*draw(_batch()), draw(st.integers(1, 2)), *spatial),), params


# -- normalization ----------------------------------------------------------------------------

FORMS = st.sampled_from(["none", "weight", "bias", "both"])


def _affine(x: tuple[int, ...], shape: tuple[int, ...], form: str) -> tuple[tuple[int, ...], ...]:
    """The input's shape, then weight's and bias's where the form has them."""
    return (x,) + (shape,) * ((form in ("weight", "both")) + (form in ("bias", "both")))


def _split(rest: tuple[Any, ...], form: str, torch: bool = False) -> tuple[Any, Any]:
    """(weight, bias) of a row's inputs after the input, as its form places them.

    torch 2.13's double backward of its norms fails with a bias and no weight ("Expected a
    proper Tensor but got None" once the bias's gradient is differentiated again): its side
    of the row is given a weight of ones there, the same function.
    """
    found = list(rest)
    weight = found.pop(0) if form in ("weight", "both") else None
    bias = found.pop(0) if form in ("bias", "both") else None
    if torch and weight is None and bias is not None:
        weight = _torch().ones_like(bias)
    return weight, bias


@st.composite
def layer_norm_spec(draw: Any) -> Spec:
    size = draw(st.integers(2, 3))
    x = (*draw(st.sampled_from([(), (2,), (2, 2)])), size)
    form = draw(FORMS)
    return _affine(x, (size,), form), {"normalized_shape": size, "form": form}


def layer_norm(torch: bool = False) -> Any:
    def call(x: Any, *rest: Any, normalized_shape: int, form: str) -> Any:
        weight, bias = _split(rest, form, torch)
        shape = (normalized_shape,) if torch else normalized_shape
        return _functional("layer_norm", torch)(x, shape, weight, bias)

    return call


@st.composite
def group_norm_spec(draw: Any) -> Spec:
    groups, channels = draw(st.sampled_from([(1, 1), (1, 2), (2, 2)]))
    x = (draw(st.integers(1, 2)), channels, *draw(st.sampled_from([(2,), (3,), (2, 2)])))
    form = draw(FORMS)
    return _affine(x, (channels,), form), {"num_groups": groups, "form": form}


def group_norm(torch: bool = False) -> Any:
    def call(x: Any, *rest: Any, num_groups: int, form: str) -> Any:
        weight, bias = _split(rest, form, torch)
        return _functional("group_norm", torch)(x, num_groups, weight, bias)

    return call


@st.composite
def batch_norm_spec(draw: Any) -> Spec:
    channels = draw(st.integers(1, 2))
    x = (draw(st.integers(1, 2)), channels, *draw(st.sampled_from([(), (2,), (2, 2)])))
    training = draw(st.booleans()) and int(np.prod(x)) // channels > 1
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    form = draw(FORMS)
    params = {
        "running_mean": rng.uniform(-1.0, 1.0, channels),
        "running_var": rng.uniform(0.5, 2.0, channels),
        "training": training,
        "form": form,
    }
    return _affine(x, (channels,), form), params


def batch_norm(torch: bool = False) -> Any:
    def call(
        x: Any, *rest: Any, running_mean: Any, running_var: Any, training: bool, form: str
    ) -> Any:
        weight, bias = _split(rest, form, torch)
        if torch:  # copies: torch updates them in place when training
            stats = [_torch().tensor(s, dtype=x.dtype) for s in (running_mean, running_var)]
        else:
            stats = [gc.tensor(s, dtype=x.dtype) for s in (running_mean, running_var)]
        return _functional("batch_norm", torch)(x, *stats, weight, bias, training=training)

    return call


# -- embedding, attention ---------------------------------------------------------------------


@st.composite
def embedding_spec(draw: Any) -> Spec:
    rows, dims = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    shape = draw(st.sampled_from([(), (3,), (2, 2)]))
    indices = np.asarray(draw(st.lists(st.integers(0, rows - 1), min_size=4, max_size=4)))
    indices = indices[: int(np.prod(shape))].reshape(shape).astype(np.float64)
    # padding_idx's row gets no gradient (torch's convention, which finite differences cannot
    # see): here only a row that no index picks; tests/engine/test_engine_layers.py picks it
    unused = sorted(set(range(rows)) - set(indices.reshape(-1).astype(int).tolist()))
    padding = draw(st.sampled_from([None, *unused, *[u - rows for u in unused]]))
    return ((rows, dims),), {"indices": indices, "padding_idx": padding}


def embedding(torch: bool = False) -> Any:
    def call(weight: Any, indices: Any, padding_idx: int | None) -> Any:
        if torch:
            found = _torch().from_numpy(indices).long()
            return _torch().nn.functional.embedding(found, weight, padding_idx)
        return gc.embedding(gc.tensor(indices), weight, padding_idx)

    return call


@st.composite
def attention_spec(draw: Any) -> Spec:
    batch = draw(st.sampled_from([(), (2,)]))
    length, source = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    embed, out = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    shapes = ((*batch, length, embed), (*batch, source, embed), (*batch, source, out))
    params = {"is_causal": draw(st.booleans()), "scale": draw(st.sampled_from([None, 0.7]))}
    if draw(st.booleans()):  # a float attn_mask, added to the scores: an input of its own
        shapes = (*shapes, draw(st.sampled_from([(length, source), (source,)])))
        params["is_causal"] = False  # torch refuses the two together
    return shapes, params
