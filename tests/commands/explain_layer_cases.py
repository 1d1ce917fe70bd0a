"""explain's cases (test_explain's CASES) of the layers: a program's right-hand side, its
inputs, and the same in torch; FIXED names the inputs not differentiated (indices, running
statistics)."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

IMAGE = [[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.3, 0.9, -0.2]]]]  # (1, 1, 3, 3)
KERNEL = [[[[1.0, -0.5], [0.25, 2.0]]], [[[0.3, 0.1], [-1.0, 0.6]]]]  # (2, 1, 2, 2)
SIGNAL = [[[0.5, -1.0, 2.0, 0.3]]]  # (1, 1, 4)
VOLUME = [[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], [[0.3, 0.9, -0.2], [1.1, -0.4, 0.7]]]]]
TAPS = [[[[[1.0, -0.5]]]]]  # a (1, 1, 1, 1, 2) kernel over VOLUME (1, 1, 2, 2, 3)
M = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]  # 2 x 3
W = [[1.0, 0.3, -0.5], [0.2, -1.5, 0.8]]  # 2 x 3
K = [[1.0, 2.0], [-1.0, 0.5]]  # 2 x 2
G = [[[0.5, -1.0], [2.0, 0.3]], [[1.5, 0.2], [-0.7, 0.4]]]  # (2, 2, 2)


def _case(text: str, inputs: dict[str, Any], function: Any) -> tuple[str, dict[str, Any], Any]:
    return text, inputs, lambda t: function(*t.values())


CASES = {
    "linear": _case("linear(m, w, b)", {"m": M, "w": W, "b": [0.1, -0.2]}, F.linear),
    "conv2d": _case("conv2d(x, k, padding=1)", {"x": IMAGE, "k": KERNEL},
                    lambda x, k: F.conv2d(x, k, padding=1)),
    "conv1d": _case("conv1d(s, k, b, stride=2)", {"s": SIGNAL, "k": [[[1.0, -0.5]]], "b": [0.3]},
                    lambda s, k, b: F.conv1d(s, k, b, stride=2)),
    "conv_transpose2d": _case("conv_transpose2d(x, k, stride=2)", {"x": IMAGE, "k": [KERNEL[0]]},
                              lambda x, k: F.conv_transpose2d(x, k, stride=2)),
    "conv3d": _case("conv3d(v, k, stride=(1, 2, 1))", {"v": VOLUME, "k": TAPS},
                    lambda v, k: F.conv3d(v, k, stride=(1, 2, 1))),
    "conv_transpose1d": _case("conv_transpose1d(s, k, stride=2)",
                              {"s": SIGNAL, "k": [[[1.0, -0.5]]]},
                              lambda s, k: F.conv_transpose1d(s, k, stride=2)),
    "conv_transpose3d": _case("conv_transpose3d(v, k, stride=(2, 1, 1))",
                              {"v": VOLUME, "k": TAPS},
                              lambda v, k: F.conv_transpose3d(v, k, stride=(2, 1, 1))),
    "max_pool1d": _case("max_pool1d(s, 2, stride=1)", {"s": SIGNAL},
                        lambda s: F.max_pool1d(s, 2, stride=1)),
    "max_pool3d": _case("max_pool3d(v, (1, 2, 2), stride=1)", {"v": VOLUME},
                        lambda v: F.max_pool3d(v, (1, 2, 2), stride=1)),
    "avg_pool1d": _case("avg_pool1d(s, 2, padding=1)", {"s": SIGNAL},
                        lambda s: F.avg_pool1d(s, 2, padding=1)),
    "avg_pool3d": _case("avg_pool3d(v, (1, 2, 2), stride=(1, 1, 2))", {"v": VOLUME},
                        lambda v: F.avg_pool3d(v, (1, 2, 2), stride=(1, 1, 2))),
    "max_pool2d": _case("max_pool2d(x, 2, stride=1)", {"x": IMAGE},
                        lambda x: F.max_pool2d(x, 2, stride=1)),
    "avg_pool2d": _case("avg_pool2d(x, 2, padding=1, count_include_pad=False)", {"x": IMAGE},
                        lambda x: F.avg_pool2d(x, 2, padding=1, count_include_pad=False)),
    "layer_norm": _case("layer_norm(m, 3, w, None)", {"m": M, "w": [1.0, 0.5, 2.0]},
                        lambda m, w: F.layer_norm(m, (3,), w)),
    "group_norm": _case("group_norm(g, 2, c, b)", {"g": G, "c": [2.0, 1.0], "b": [0.5, -0.5]},
                        lambda g, c, b: F.group_norm(g, 2, c, b)),
    "batch_norm": _case("batch_norm(m, r, v, training=True)",
                        {"m": M, "r": [0.0, 1.0, 2.0], "v": [1.0, 1.0, 2.0]},
                        lambda m, r, v: F.batch_norm(m, r, v, training=True)),
    "embedding": _case("embedding(i, w)", {"i": [1.0, 0.0, 1.0], "w": W},
                       lambda i, w: F.embedding(i.long(), w)),
    "scaled_dot_product_attention": _case(
        "scaled_dot_product_attention(m, w, v, is_causal=True)", {"m": M, "w": W, "v": K},
        lambda m, w, v: F.scaled_dot_product_attention(m, w, v, is_causal=True),
    ),
}  # fmt: skip
FIXED = {"batch_norm": {"r", "v"}, "embedding": {"i"}}
