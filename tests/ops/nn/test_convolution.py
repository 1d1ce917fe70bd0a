"""Convolution and pooling with a setting per spatial dim (kernel_size, stride, padding,
dilation, output_padding as tuples, as torch takes them; issue 30): the gradients against
central finite differences (no torch needed), values and gradients against torch, and bad
settings refused in torch's words."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli.engine.gradcheck import gradcheck

# name: (the call, the shapes of its differentiable operands)
CASES = {
    "conv2d": (
        lambda x, w, b, F: F.conv2d(x, w, b, stride=(2, 1), padding=(2, 1), dilation=(2, 1)),
        [(2, 2, 7, 6), (3, 2, 3, 2), (3,)],
    ),
    "conv2d groups": (
        lambda x, w, F: F.conv2d(x, w, stride=(1, 3), padding=(0, 1), groups=2),
        [(1, 4, 4, 7), (2, 2, 2, 3)],
    ),
    "conv2d same": (
        lambda x, w, F: F.conv2d(x, w, padding="same", dilation=(2, 1)),
        [(1, 2, 5, 4), (2, 2, 2, 4)],
    ),
    "conv2d valid unbatched": (
        lambda x, w, F: F.conv2d(x, w, padding="valid", stride=[1, 2]),
        [(2, 4, 5), (1, 2, 2, 3)],
    ),
    "conv1d": (
        lambda x, w, F: F.conv1d(x, w, stride=(2,), padding=[1], dilation=2),
        [(2, 2, 8), (3, 2, 3)],
    ),
    "conv3d": (
        lambda x, w, F: F.conv3d(x, w, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2)),
        [(1, 2, 3, 5, 4), (2, 2, 2, 3, 2)],
    ),
    "conv_transpose2d": (
        lambda x, w, b, F: F.conv_transpose2d(
            x, w, b, stride=(2, 1), padding=(1, 2), output_padding=(1, 0), dilation=(1, 2)
        ),
        [(2, 2, 3, 4), (2, 3, 3, 4), (3,)],
    ),
    "conv_transpose2d groups": (
        lambda x, w, F: F.conv_transpose2d(x, w, stride=(1, 3), output_padding=(0, 2), groups=2),
        [(1, 4, 3, 2), (4, 1, 2, 3)],
    ),
    "conv_transpose1d": (
        lambda x, w, F: F.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1, dilation=2),
        [(2, 2, 4), (2, 3, 3)],
    ),
    "conv_transpose3d": (
        lambda x, w, b, F: F.conv_transpose3d(
            x, w, b, stride=(1, 2, 1), padding=(0, 1, 1), output_padding=(0, 1, 0)
        ),
        [(1, 2, 2, 3, 3), (2, 2, 2, 3, 2), (2,)],
    ),
    "max_pool1d": (
        lambda x, F: F.max_pool1d(x, 3, stride=(2,), padding=[1], ceil_mode=True),
        [(2, 2, 8)],
    ),
    "max_pool3d": (
        lambda x, F: F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0)),
        [(1, 2, 3, 5, 4)],
    ),
    "avg_pool1d unbatched": (
        lambda x, F: F.avg_pool1d(x, (3,), stride=2, padding=1, count_include_pad=False),
        [(2, 7)],
    ),
    "avg_pool3d": (
        lambda x, F: F.avg_pool3d(
            x, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), ceil_mode=True
        ),
        [(1, 2, 3, 5, 4)],
    ),
    "max_pool2d": (
        lambda x, F: F.max_pool2d(x, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
        [(2, 2, 7, 6)],
    ),
    "max_pool2d ceil": (
        lambda x, F: F.max_pool2d(x, (3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True),
        [(1, 2, 6, 7)],
    ),
    "avg_pool2d": (
        lambda x, F: F.avg_pool2d(x, (3, 2), stride=(2, 1)),
        [(2, 2, 7, 5)],
    ),
    "avg_pool2d ceil without the padding": (
        lambda x, F: F.avg_pool2d(
            x, (3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True, count_include_pad=False
        ),
        [(1, 2, 6, 7)],
    ),
    "avg_pool2d padding unbatched": (
        lambda x, F: F.avg_pool2d(x, [3, 4], stride=(1, 2), padding=(1, 2)),
        [(2, 5, 6)],
    ),
}


def _values(shapes, seed=0):
    rng = np.random.default_rng(seed)
    # distinct values, so that no window of max_pool2d holds a tie
    return [rng.permutation(np.prod(s)).reshape(s) / np.prod(s) - 0.5 for s in shapes]


@pytest.mark.parametrize("name", CASES)
def test_gradients_agree_with_central_differences(name):
    call, shapes = CASES[name]
    inputs = tuple(gc.tensor(v, requires_grad=True) for v in _values(shapes))
    assert gradcheck(lambda *xs: call(*xs, gc), inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.filterwarnings("ignore:Using padding='same'")  # torch's note on its own copy
@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_are_torchs(name):
    torch = pytest.importorskip("torch")
    call, shapes = CASES[name]
    values = _values(shapes)
    ours = [gc.tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    out, expected = call(*ours, gc), call(*theirs, torch.nn.functional)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    cotangent = np.random.default_rng(1).standard_normal(out.shape)
    (out * gc.tensor(cotangent)).sum().backward()
    (expected * torch.tensor(cotangent)).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


X, W, WT = (1, 2, 5, 5), (4, 2, 3, 3), (2, 3, 3, 3)
# (the call, its operands' shapes, torch's words)
REFUSED = [
    (lambda x, w, F: F.conv2d(x, w, stride=-1), (X, W), "non-positive stride is not supported"),
    (lambda x, w, F: F.conv2d(x, w, stride=(1, 0)), (X, W), "non-positive stride is not supported"),
    (
        lambda x, w, F: F.conv2d(x, w, stride=(1, 1, 1)),
        (X, W),
        "expected stride to be a single integer value or a list of 2 values to match the "
        "convolution dimensions, but got stride=[1, 1, 1]",
    ),
    (
        lambda x, w, F: F.conv2d(x, w, padding=(1, 1, 1)),
        (X, W),
        "expected padding to be a single integer value or a list of 2 values to match the "
        "convolution dimensions, but got padding=[1, 1, 1]",
    ),
    (lambda x, w, F: F.conv2d(x, w, padding=(0, -1)), (X, W), "negative padding is not supported"),
    (
        lambda x, w, F: F.conv2d(x, w, dilation=0),
        (X, W),
        "dilation should be greater than zero, but got [0, 0]",
    ),
    (
        lambda x, w, F: F.conv2d(x, w, padding=(1, 1)),
        (X, (4, 2, 7, 8)),
        "Calculated padded input size per channel: (7 x 7). Kernel size: (7 x 8). Kernel size "
        "can't be greater than actual input size",
    ),
    (
        lambda x, w, F: F.conv2d(x, w, dilation=(3, 1)),
        (X, W),
        "Calculated padded input size per channel: (5 x 5). Kernel size: (7 x 3). Kernel size "
        "can't be greater than actual input size",
    ),
    (
        lambda x, w, F: F.conv1d(x, w, stride=(1, 1)),
        ((1, 2, 5), (3, 2, 2)),
        "expected stride to be a single integer value or a list of 1 values to match the "
        "convolution dimensions, but got stride=[1, 1]",
    ),
    (
        lambda x, w, F: F.conv2d(x, w, padding="same", stride=2),
        (X, W),
        "padding='same' is not supported for strided convolutions",
    ),
    (
        lambda x, w, F: F.conv2d(x, w),
        ((1, 3, 5, 5), W),
        "Given groups=1, weight of size [4, 2, 3, 3], expected input[1, 3, 5, 5] to have 2 "
        "channels, but got 3 channels instead",
    ),
    (
        lambda x, w, F: F.conv2d(x, w),
        ((2, 5), W),
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 5]",
    ),
    (
        lambda x, w, F: F.conv2d(x, w),
        (X, (4, 2, 0, 2)),
        "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 2",
    ),
    (
        lambda x, w, F: F.conv_transpose2d(x, w, stride=(2, 1), output_padding=(1, 1)),
        (X, WT),
        "output padding must be smaller than either stride or dilation, but got "
        "output_padding_height: 1 output_padding_width: 1 stride_height: 2 stride_width: 1 "
        "dilation_height: 1 dilation_width: 1",
    ),
    (
        lambda x, w, F: F.conv_transpose2d(x, w, padding=4),
        (X, WT),
        "Given input size per channel: (5 x 5). Calculated output size per channel: (-1 x -1). "
        "Output size is too small",
    ),
    (
        lambda x, F: F.max_pool2d(x, 2, stride=-1),
        (X,),
        "stride should be greater than zero, but got dH: -1 dW: -1",
    ),
    (lambda x, F: F.max_pool2d(x, 2, stride=(1, 0)), (X,), "stride should not be zero"),
    (
        lambda x, F: F.max_pool2d(x, (2, 2, 2)),
        (X,),
        "max_pool2d: kernel_size must either be a single int, or a tuple of two ints",
    ),
    (
        lambda x, F: F.max_pool2d(x, 2, stride=(1, 1, 1)),
        (X,),
        "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints",
    ),
    (
        lambda x, F: F.max_pool2d(x, 2, dilation=(1, 1, 1)),
        (X,),
        "max_pool2d: dilation must be either a single int, or a tuple of two ints",
    ),
    (
        lambda x, F: F.max_pool2d(x, (2, -1)),
        (X,),
        "kernel size should be greater than zero, but got kH: 2 kW: -1",
    ),
    (
        lambda x, F: F.max_pool2d(x, (2, 4), padding=(1, 3)),
        (X,),
        "pad should be at most half of effective kernel size, but got pad=3, kernel_size=4 and "
        "dilation=1",
    ),
    (
        lambda x, F: F.max_pool2d(x, 2, padding=-1),
        (X,),
        "pad must be non-negative, but got pad: -1",
    ),
    (
        lambda x, F: F.max_pool2d(x, (6, 2)),
        (X,),
        "Given input size: (2x5x5). Calculated output size: (2x0x2). Output size is too small",
    ),
    (
        lambda x, F: F.avg_pool2d(x, 2, padding=(1, 1, 1)),
        (X,),
        "avg_pool2d: padding must either be a single int, or a tuple of two ints",
    ),
    (
        lambda x, F: F.max_pool1d(x, (2, 2)),
        ((1, 2, 6),),
        "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got "
        "size 2",
    ),
    (
        lambda x, F: F.max_pool1d(x, 2, padding=2),
        ((1, 2, 6),),
        "max_pool1d() padding should be at most half of kernel size, but got padding=2 and "
        "kernel_size=2",
    ),
    (lambda x, F: F.max_pool1d(x, 7), ((1, 2, 6),), "max_pool1d() Invalid computed output size: 0"),
    (
        lambda x, F: F.avg_pool1d(x, 2, stride=(1, 1)),
        ((1, 2, 6),),
        "avg_pool1d() argument 'stride' should contain one int (got 2)",
    ),
    (
        lambda x, F: F.avg_pool1d(x, 2, stride=-1),
        ((1, 2, 6),),
        "stride should be greater than zero, but got dH: 1 dW: -1",
    ),
    (
        lambda x, F: F.max_pool3d(x, 2, dilation=0),
        ((1, 2, 4, 5, 6),),
        "dilation should be greater than zero, but got dilationT: 0 dilationH: 0 dilationW: 0",
    ),
    (
        lambda x, F: F.avg_pool3d(x, 2, stride=(1, 1)),
        ((1, 2, 4, 5, 6),),
        "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints",
    ),
    (
        lambda x, F: F.avg_pool3d(x, (5, 2, 2)),
        ((1, 2, 4, 5, 6),),
        "input image (T: 4 H: 5 W: 6) smaller than kernel size (kT: 5 kH: 2 kW: 2)",
    ),
    (
        lambda x, w, F: F.conv_transpose3d(x, w, padding=(3, 0, 0)),
        ((1, 2, 4, 5, 6), (2, 3, 2, 2, 2)),
        "Given input size per channel: (4 x 5 x 6). Calculated output size per channel: "
        "(-1 x 6 x 7). Output size is too small",
    ),
    (
        lambda x, F: F.avg_pool2d(x, (6, 2)),
        (X,),
        "Given input size: (2x5x5). Calculated output size: (2x0x2). Output size is too small",
    ),
]


@pytest.mark.parametrize(("call", "shapes", "message"), REFUSED)
def test_bad_settings_are_refused_in_torchs_words(call, shapes, message):
    operands = [gc.ones(*s) for s in shapes]
    with pytest.raises(gc.ShapeError) as refused:
        call(*operands, gc)
    assert str(refused.value) == message


@pytest.mark.parametrize(("call", "shapes", "message"), REFUSED)
def test_the_words_are_torchs_own(call, shapes, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as refused:
        call(*(torch.ones(*s) for s in shapes), torch.nn.functional)
    assert str(refused.value) == message
