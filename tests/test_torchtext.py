"""gradcli.base.torch_text prints what PyTorch 2.13 prints, character for character.

Two kinds of test:

- fixed examples, torch's text written out, that run without torch (the seed post's
  ``x.grad``, each rule of the layout: integer and scientific mode, widths, nan and inf,
  negative zero, row wrapping, summarization, nested slices, empty tensors, the suffixes and
  where they break, the print options);
- a sweep against real torch (skipped without it): random shapes from 0-d to 4-d, zero-size
  and up to 2000 elements, values mixing magnitudes (tiny, huge, whole, nan, inf, -0.0) in
  float16/32/64, the integer dtypes and bool, with and without ``requires_grad`` or a
  ``grad_fn``, under default and random print options and default dtypes, each compared with
  torch's ``repr`` (and ``.tolist()``, ``.item()``, ``.shape``, ``.dtype``, ``format``).
  The default run is 300 derandomized cases; ``pytest -m fuzz tests/test_torchtext.py``
  runs ``GRADCLI_FUZZ_EXAMPLES`` of them (default 10,000).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradcli.base import torch_text as tt

f32, f64 = np.float32, np.float64


def _arange(n: int, dtype: Any = f32) -> np.ndarray:
    return np.arange(n, dtype=dtype)


# ----------------------------------------------------------------------------------------
# Fixed examples: torch 2.13's text for each case, written out.

# (label, values, keyword arguments of tensor_repr, torch's text)
FIXED: list[tuple[str, np.ndarray, dict[str, Any], str]] = [
    (
        "the seed post's x.grad",
        np.full((2, 2), 4.5, f32),
        {},
        "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])",
    ),
    (
        "a leaf",
        np.array([1.0, 2.0], f32),
        {"requires_grad": True},
        "tensor([1., 2.], requires_grad=True)",
    ),
    (
        "the seed post's y",
        np.array([1.0, 21.0, 6.0], f32),
        {"grad_fn": "CopySlices"},
        "tensor([ 1., 21.,  6.], grad_fn=<CopySlices>)",
    ),
    (
        "the seed post's matrix-Jacobian product",
        np.array([[3, 2, 0], [4, 0, 1]], f32) / np.array([[1, 2, 3], [4, 5, 6]], f32),
        {},
        "tensor([[3.0000, 1.0000, 0.0000],\n        [1.0000, 0.0000, 0.1667]])",
    ),
    ("integer mode", np.array([1, 2, -3], f32), {}, "tensor([ 1.,  2., -3.])"),
    (
        "scientific: smallest below 1e-4",
        np.array([1e-5, 1, 1000], f32),
        {},
        "tensor([1.0000e-05, 1.0000e+00, 1.0000e+03])",
    ),
    (
        "scientific: ratio above 1000",
        np.array([0.001, 2], f32),
        {},
        "tensor([1.0000e-03, 2.0000e+00])",
    ),
    (
        "scientific: largest above 1e8",
        np.array([1e9, 2e9], f32),
        {},
        "tensor([1.0000e+09, 2.0000e+09])",
    ),
    (
        "nan and inf are not measured",
        np.array([np.nan, np.inf, -np.inf, 1.5], f32),
        {},
        "tensor([   nan,    inf,   -inf, 1.5000])",
    ),
    (
        "nan and inf in integer mode",
        np.array([np.nan, np.inf, -0.0, 2], f32),
        {},
        "tensor([nan, inf, -0., 2.])",
    ),
    ("negative zero", np.array([-0.0, 0.25], f32), {}, "tensor([-0.0000, 0.2500])"),
    ("0-d nan", np.array(np.nan, f32), {}, "tensor(nan)"),
    ("0-d zero", np.array(0.0, f32), {}, "tensor(0.)"),
    ("0-d", np.array(0.1, f32), {}, "tensor(0.1000)"),
    ("0-d float64", np.array(3.25, f64), {}, "tensor(3.2500, dtype=torch.float64)"),
    (
        "rows wrap at 80 columns",
        _arange(20) / f32(3),
        {},
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
        "        6.0000, 6.3333])",
    ),
    (
        "summarized vector",
        _arange(2000),
        {},
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03])",
    ),
    (
        "summarized matrix",
        (_arange(2000) / f32(7)).reshape(40, 50),
        {},
        "tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 6.7143e+00, 6.8571e+00,\n"
        "         7.0000e+00],\n"
        "        [7.1429e+00, 7.2857e+00, 7.4286e+00,  ..., 1.3857e+01, 1.4000e+01,\n"
        "         1.4143e+01],\n"
        "        [1.4286e+01, 1.4429e+01, 1.4571e+01,  ..., 2.1000e+01, 2.1143e+01,\n"
        "         2.1286e+01],\n"
        "        ...,\n"
        "        [2.6429e+02, 2.6443e+02, 2.6457e+02,  ..., 2.7100e+02, 2.7114e+02,\n"
        "         2.7129e+02],\n"
        "        [2.7143e+02, 2.7157e+02, 2.7171e+02,  ..., 2.7814e+02, 2.7829e+02,\n"
        "         2.7843e+02],\n"
        "        [2.7857e+02, 2.7871e+02, 2.7886e+02,  ..., 2.8529e+02, 2.8543e+02,\n"
        "         2.8557e+02]])",
    ),
    (
        "3-d: a blank line between matrices",
        np.arange(12).reshape(2, 2, 3),
        {},
        "tensor([[[ 0,  1,  2],\n"
        "         [ 3,  4,  5]],\n"
        "\n"
        "        [[ 6,  7,  8],\n"
        "         [ 9, 10, 11]]])",
    ),
    (
        "4-d: two blank lines between 3-d slices",
        (_arange(16) / f32(4)).reshape(2, 2, 2, 2),
        {},
        "tensor([[[[0.0000, 0.2500],\n"
        "          [0.5000, 0.7500]],\n"
        "\n"
        "         [[1.0000, 1.2500],\n"
        "          [1.5000, 1.7500]]],\n"
        "\n"
        "\n"
        "        [[[2.0000, 2.2500],\n"
        "          [2.5000, 2.7500]],\n"
        "\n"
        "         [[3.0000, 3.2500],\n"
        "          [3.5000, 3.7500]]]])",
    ),
    ("int32", np.array([1, -20], np.int32), {}, "tensor([  1, -20], dtype=torch.int32)"),
    ("int64", np.array([[1, 200], [-3, 4]]), {}, "tensor([[  1, 200],\n        [ -3,   4]])"),
    ("bool", np.array([True, False]), {}, "tensor([ True, False])"),
    ("empty", np.zeros(0, f32), {}, "tensor([])"),
    ("empty matrix", np.zeros((0, 3), f32), {}, "tensor([], size=(0, 3))"),
    ("empty int64", np.zeros(0, np.int64), {}, "tensor([], dtype=torch.int64)"),
    (
        "empty 3-d float64",
        np.zeros((2, 0, 1), f64),
        {},
        "tensor([], size=(2, 0, 1), dtype=torch.float64)",
    ),
    (
        "dtype before requires_grad",
        np.array([1.5, 2], f64),
        {"requires_grad": True},
        "tensor([1.5000, 2.0000], dtype=torch.float64, requires_grad=True)",
    ),
    (
        "suffixes that do not fit go on a line of their own",
        (_arange(9) / f32(7)).astype(f64) * 2,
        {"grad_fn": "MulBackward0"},
        "tensor([0.0000, 0.2857, 0.5714, 0.8571, 1.1429, 1.4286, 1.7143, 2.0000, 2.2857],\n"
        "       dtype=torch.float64, grad_fn=<MulBackward0>)",
    ),
    (
        "a suffix after a wrapped row",
        _arange(10) / f32(3),
        {"grad_fn": "DivBackward0", "requires_grad": True},
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000], grad_fn=<DivBackward0>)",
    ),
    (
        "precision 2",
        np.array([1.12345, 2], f32),
        {"options": tt.PrintOptions(precision=2)},
        "tensor([1.12, 2.00])",
    ),
    (
        "sci_mode off",
        np.array([1e-5, 1, 1000], f32),
        {"options": tt.PrintOptions(sci_mode=False)},
        "tensor([   0.0000,    1.0000, 1000.0000])",
    ),
    (
        "sci_mode on",
        np.array([1, 2], f32),
        {"options": tt.PrintOptions(sci_mode=True)},
        "tensor([1.0000e+00, 2.0000e+00])",
    ),
    (
        "threshold 5",
        np.arange(10),
        {"options": tt.PrintOptions(threshold=5)},
        "tensor([0, 1, 2,  ..., 7, 8, 9])",
    ),
    (
        "edgeitems 0",
        _arange(10).reshape(2, 5),
        {"options": tt.PrintOptions(threshold=5, edgeitems=0)},
        "tensor([...], size=(2, 5))",
    ),
    (
        "linewidth 30",
        _arange(10) / f32(3),
        {"options": tt.PrintOptions(linewidth=30)},
        "tensor([0.0000, 0.3333,\n        0.6667, 1.0000,\n        1.3333, 1.6667,\n"
        "        2.0000, 2.3333,\n        2.6667, 3.0000])",
    ),
    (
        "profile short",
        np.array([1.12345, 2], f32),
        {"options": tt.set_printoptions(profile="short")},
        "tensor([1.12, 2.00])",
    ),
    ("default dtype float64", np.array([1.5]), {"default_dtype": f64}, "tensor([1.5000])"),
    (
        "complex64, whole parts",
        np.array([1 + 2j, 3 - 1j], np.complex64),
        {"requires_grad": True},
        "tensor([1.+2.j, 3.-1.j], requires_grad=True)",
    ),
    (
        "complex64, each part its own mode",
        np.array([1.5 + 2j, -3e-5j], np.complex64),
        {},
        "tensor([1.5000+2.0000e+00j, -0.0000-3.0000e-05j])",
    ),
    ("complex128", np.array([1 + 1j]), {}, "tensor([1.+1.j], dtype=torch.complex128)"),
    ("complex128 under float64", np.array([1 + 1j]), {"default_dtype": f64}, "tensor([1.+1.j])"),
    (
        "float32 under default dtype float64",
        np.array([1.5], f32),
        {"default_dtype": f64},
        "tensor([1.5000], dtype=torch.float32)",
    ),
]


@pytest.mark.parametrize(
    ("values", "kwargs", "text"), [c[1:] for c in FIXED], ids=[c[0] for c in FIXED]
)
def test_tensor_text_as_torch_writes_it(values, kwargs, text):
    assert tt.tensor_repr(values, **kwargs) == text


def test_python_values_as_torch_gives_them():
    assert tt.item_text(np.array(0.3, f32)) == "0.30000001192092896"
    assert tt.item_text(np.array(0.3, f64)) == "0.3"
    assert tt.item_text(np.array([7])) == "7"
    assert tt.item_text(np.array(True)) == "True"
    assert tt.item(np.array([[2.5]], f32)) == 2.5
    assert tt.tolist_text(np.array([[0.1, 2], [3, np.nan]], f32)) == (
        "[[0.10000000149011612, 2.0], [3.0, nan]]"
    )
    assert tt.tolist_text(np.array(2)) == "2"
    assert tt.tolist_text(np.array([True])) == "[True]"
    assert tt.tolist(np.zeros((2, 0), f32)) == [[], []]


def test_sizes_and_dtypes_as_torch_names_them():
    assert tt.size_repr((2, 3)) == "torch.Size([2, 3])"
    assert tt.size_repr(()) == "torch.Size([])"
    assert tt.size_repr(np.zeros(0).shape) == "torch.Size([0])"
    assert tt.dtype_repr(f32) == "torch.float32"
    assert tt.dtype_repr(np.int64) == "torch.int64"
    assert tt.dtype_repr(np.bool_) == "torch.bool"


def test_format_as_an_f_string_does():
    assert tt.tensor_format(np.array(2.5, f32), ".3f") == "2.500"
    assert tt.tensor_format(np.array(7), ">4") == "   7"
    assert tt.tensor_format(np.array([1, 2], f32), "") == "tensor([1., 2.])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        tt.tensor_format(np.array([1, 2], f32), ".2f")


def test_set_printoptions_follows_torch():
    short = tt.set_printoptions(profile="short")
    assert (short.precision, short.edgeitems, short.threshold) == (2, 2, 1000)
    full = tt.set_printoptions(short, profile="full", precision=6)
    assert (full.precision, full.threshold, full.edgeitems) == (6, float("inf"), 3)
    sci = tt.set_printoptions(sci_mode=True)
    assert sci.sci_mode is True
    # a call without sci_mode resets it, as torch's does
    assert tt.set_printoptions(sci, linewidth=120) == tt.PrintOptions(linewidth=120)
    # an unknown profile changes nothing, as in torch
    assert tt.set_printoptions(short, profile="wide") == short


def test_bad_input_gets_a_clear_error():
    with pytest.raises(ValueError, match="precision must be at least 0, got -1"):
        tt.PrintOptions(precision=-1)
    with pytest.raises(TypeError, match="edgeitems must be an integer"):
        tt.PrintOptions(edgeitems=2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sci_mode must be True, False or None"):
        tt.PrintOptions(sci_mode=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="no torch dtype for numpy dtype complex256"):
        tt.tensor_repr(np.array([1j], np.clongdouble))
    with pytest.raises(TypeError, match="default dtype must be a floating dtype"):
        tt.tensor_repr(np.array([1.0]), default_dtype=np.int64)
    with pytest.raises(ValueError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        tt.item(np.array([1.0, 2.0], f32))


# ----------------------------------------------------------------------------------------
# The sweep against torch

DTYPES = (
    [f32] * 5
    + [f64] * 2
    + [np.int64] * 2
    + [np.bool_] * 2
    + [np.float16]
    + [
        np.int32,
        np.int16,
        np.int8,
        np.uint8,
    ]
)
FLOAT_KINDS = ("unit", "whole", "tiny", "huge", "nan", "inf", "zero")
# How a tensor gets its grad_fn in torch, keeping its values: the node's name is torch's.
GRAD_FNS: dict[str, Callable[[Any], Any]] = {
    "mul": lambda t: t * 1,
    "clone": lambda t: t.clone(),
    "view": lambda t: t.view(t.shape),
}
SPECS = ("", ".2f", ".3e", ">12", "g")


@dataclass(frozen=True)
class Case:
    values: np.ndarray
    requires_grad: bool
    grad_fn: str | None  # a key of GRAD_FNS
    options: tt.PrintOptions
    default_dtype: type
    spec: str

    def __repr__(self) -> str:  # what hypothesis prints for a failing case
        with np.printoptions(threshold=50):
            values = repr(self.values)
        return (
            f"Case({values}, requires_grad={self.requires_grad}, grad_fn={self.grad_fn}, "
            f"{self.options}, default_dtype={self.default_dtype.__name__}, spec={self.spec!r})"
        )


@st.composite
def shapes(draw: st.DrawFn) -> tuple[int, ...]:
    """0 to 4 dimensions, some of them 0, up to 2000 elements (most tensors small, some large
    enough to be summarized)."""
    ndim = draw(st.integers(0, 4))
    large = draw(st.booleans())
    budget, dims = 2000, []
    for _ in range(ndim):
        n = draw(st.integers(0, budget if large else min(budget, 7)))
        dims.append(n)
        budget //= max(n, 1)
    return tuple(dims)


def _float_values(rng: np.random.Generator, size: int, kinds: list[str], scale: int) -> np.ndarray:
    sign = rng.choice([-1.0, 1.0], size)
    pools = {
        "unit": rng.uniform(-1, 1, size) * 10.0**scale,
        "whole": rng.integers(-(10 ** max(scale, 0)), 10 ** max(scale, 0) + 1, size) * 1.0,
        "tiny": sign * 10.0 ** rng.uniform(-12, -4, size),
        "huge": sign * 10.0 ** rng.uniform(8, 30, size),
        "nan": np.full(size, np.nan),
        "inf": sign * np.inf,
        "zero": sign * 0.0,
    }
    chosen = rng.integers(len(kinds), size=size)
    return np.choose(chosen, [pools[kind] for kind in kinds]) if size else np.zeros(0)


@st.composite
def options(draw: st.DrawFn) -> tt.PrintOptions:
    if draw(st.integers(0, 3)):
        return tt.DEFAULT_OPTIONS
    return tt.PrintOptions(
        precision=draw(st.integers(0, 8)),
        threshold=draw(st.sampled_from([0, 5, 50, 1000, float("inf")])),
        edgeitems=draw(st.integers(0, 4)),
        linewidth=draw(st.integers(10, 120)),
        sci_mode=draw(st.sampled_from([None, True, False])),
    )


@st.composite
def cases(draw: st.DrawFn) -> Case:
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(shapes())
    size = int(np.prod(shape))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    floating = dtype.kind == "f"
    if floating:
        kinds = draw(st.lists(st.sampled_from(FLOAT_KINDS), min_size=1, max_size=4, unique=True))
        raw = _float_values(rng, size, kinds, draw(st.integers(-6, 10)))
        with np.errstate(over="ignore"):
            values = raw.astype(dtype)
    elif dtype.kind == "b":
        values = rng.random(size) < draw(st.floats(0, 1))
    else:
        info = np.iinfo(dtype)
        bound = draw(st.sampled_from([1, 10, 1000, 10**6, 10**12, 2**62]))
        low, high = max(info.min, -bound), min(info.max, bound)
        values = rng.integers(low, high, size, endpoint=True, dtype=dtype)
    return Case(
        values=values.astype(dtype).reshape(shape),
        requires_grad=floating and draw(st.booleans()),
        grad_fn=draw(st.sampled_from([None, *GRAD_FNS])) if floating else None,
        options=draw(options()),
        default_dtype=draw(st.sampled_from([f32, f32, f32, f64])),
        spec=draw(st.sampled_from(SPECS)) if shape == () else "",
    )


@contextlib.contextmanager
def _torch_printing(torch: Any, case: Case) -> Iterator[None]:
    """torch's print options and default dtype set as the case says, restored after."""
    o = case.options
    torch.set_printoptions(
        precision=o.precision,
        threshold=o.threshold,
        edgeitems=o.edgeitems,
        linewidth=o.linewidth,
        sci_mode=o.sci_mode,
    )
    torch.set_default_dtype(torch.float64 if case.default_dtype is f64 else torch.float32)
    try:
        yield
    finally:
        torch.set_printoptions(profile="default")
        torch.set_default_dtype(torch.float32)


def _agrees_with_torch(case: Case) -> None:
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(case.values.copy())
    grad_fn_name = None
    if case.requires_grad or case.grad_fn is not None:
        t.requires_grad_()
    if case.grad_fn is not None:
        t = GRAD_FNS[case.grad_fn](t)
        grad_fn_name = type(t.grad_fn).__name__
    with _torch_printing(torch, case):
        expected = repr(t)
        expected_format = format(t, case.spec)
    ours = dict(
        requires_grad=case.requires_grad,
        grad_fn=grad_fn_name,
        options=case.options,
        default_dtype=case.default_dtype,
    )
    assert tt.tensor_repr(case.values, **ours) == expected
    assert tt.tensor_format(case.values, case.spec, **ours) == expected_format
    detached = t.detach()
    assert tt.tolist_text(case.values) == repr(detached.tolist())
    assert tt.size_repr(case.values.shape) == repr(t.shape)
    assert tt.dtype_repr(case.values.dtype) == repr(t.dtype)
    if case.values.size == 1:
        assert tt.item_text(case.values) == repr(detached.item())


SWEEP = settings(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LONG_EXAMPLES = int(os.environ.get("GRADCLI_FUZZ_EXAMPLES", "10000"))


@pytest.mark.torch
@settings(SWEEP, max_examples=300)
@given(cases())
def test_sweep_agrees_with_torch(case):
    _agrees_with_torch(case)


@pytest.mark.torch
@pytest.mark.fuzz
@settings(SWEEP, max_examples=LONG_EXAMPLES)
@given(cases())
def test_long_sweep_agrees_with_torch(case):
    _agrees_with_torch(case)


def test_complex_tensors_as_torch_prints_them():
    """A fixed-seed sample of complex tensors (mixed magnitudes, whole parts, zeros, nan,
    long ones that wrap and summarize) against torch's own repr."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    for case in range(40):
        shape = tuple(rng.integers(1, 5, size=rng.integers(0, 4)))
        if case % 10 == 9:
            shape = (1200,)  # summarized
        scale = 10.0 ** rng.integers(-6, 7, size=2)
        real = rng.normal(size=shape) * scale[0]
        imag = rng.normal(size=shape) * scale[1]
        if case % 3 == 0:
            real, imag = np.round(real), np.round(imag)
        values = np.asarray(real + 1j * imag, np.complex64 if case % 2 else np.complex128)
        if case % 7 == 0 and values.size:
            values.reshape(-1)[0] = complex(np.nan, 1)
        expected = repr(torch.from_numpy(values.copy()))
        assert tt.tensor_repr(values) == expected, (case, values)
