"""explain's cases (test_explain's CASES) of repeat, tile, pad, einsum and the other
operations of gradcli/ops/arrays/repeating.py and einsum.py, and clamp_min/clamp_max."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

M = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]  # 2 x 3
K = [[1.0, 2.0], [-1.0, 0.5], [0.3, -2.0]]  # 3 x 2
X = [0.5, -1.2, 2.0, 0.3]


def _case(text: str, inputs: dict[str, Any], function: Any) -> tuple[str, dict[str, Any], Any]:
    return text, inputs, lambda t: function(*t.values())


def _dropped(n: int) -> Any:
    """The mask explain draws: --seed 0, a vector of n."""
    from gradcli.ops.nn.dropout import dropout_mask

    return torch.from_numpy(dropout_mask((n,), 0.5, 0) * 2.0)


CASES = {
    "unflatten": _case("unflatten(m, 1, (3, 1))", {"m": M}, lambda m: m.unflatten(1, (3, 1))),
    "expand": _case("x.expand(2, 4)", {"x": X}, lambda x: x.expand(2, 4)),
    "expand_as": _case(
        "expand_as(v, m)", {"v": [0.5, -1.0, 2.0], "m": M}, lambda v, m: v.expand_as(m)
    ),
    "repeat": _case("m.repeat(2, 1)", {"m": M}, lambda m: m.repeat(2, 1)),
    "tile": _case("tile(x, (2,))", {"x": X}, lambda x: torch.tile(x, (2,))),
    "repeat_interleave": _case(
        "repeat_interleave(m, 2, 1)", {"m": M}, lambda m: torch.repeat_interleave(m, 2, 1)
    ),
    "pad": _case(
        "pad(m, (1, 2), mode='reflect')", {"m": M}, lambda m: F.pad(m, (1, 2), mode="reflect")
    ),
    "einsum": _case(
        "einsum('ij,jk->ik', m, k)", {"m": M, "k": K}, lambda m, k: torch.einsum("ij,jk->ik", m, k)
    ),
    "clamp_min": _case("clamp_min(x, w)", {"x": X, "w": [0.0, 0.0, 3.0, 0.0]}, torch.clamp_min),
    "dropout": _case("dropout(x, 0.5)", {"x": X}, lambda x: x * _dropped(len(X))),
    "matrix_power": _case(
        "matrix_power(s, 2)",
        {"s": [[2.0, 1.0], [0.5, 3.0]]},
        lambda s: torch.linalg.matrix_power(s, 2),
    ),
    "clamp_max": _case("clamp_max(x, 0.5)", {"x": X}, lambda x: torch.clamp_max(x, 0.5)),
}
FIXED = {"expand_as": {"m"}}  # only its shape is read
