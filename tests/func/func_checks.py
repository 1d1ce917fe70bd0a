"""What the function-transform tests share: seeded points, and the comparison of a result of
gradcli's transforms with torch's (structure exactly, dtypes, whether each tensor requires
grad, values to a tolerance)."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradcli as gc
from gradcli.base.torch_text import dtype_repr


def points(*shapes: tuple[int, ...], seed: int = 0, dtype: Any = np.float64) -> list[np.ndarray]:
    """Seeded arrays of these shapes, away from zero (so that log and division are defined)."""
    rng = np.random.default_rng(seed)
    return [
        (rng.uniform(0.3, 1.5, size=s) * rng.choice([-1, 1], size=s)).astype(dtype) for s in shapes
    ]


def same(ours: Any, theirs: Any, rtol: float = 1e-9, atol: float = 1e-12, where: str = "") -> None:
    """Assert that ``ours`` (gradcli tensors in tuples, lists, dicts) is ``theirs`` (torch's):
    the same nesting and container types, each tensor of the same shape, dtype and
    requires_grad, its values within the tolerance."""
    import torch

    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, gc.Tensor), f"{where}: {type(ours)} for a tensor"
        assert ours.shape == tuple(theirs.shape), f"{where}: shape {ours.shape} != {theirs.shape}"
        assert dtype_repr(ours.dtype) == str(theirs.dtype), f"{where}: dtype {ours.dtype}"
        assert ours.requires_grad == theirs.requires_grad, f"{where}: requires_grad"
        np.testing.assert_allclose(
            ours.data, theirs.detach().numpy(), rtol=rtol, atol=atol, err_msg=where
        )
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) or (
            isinstance(ours, tuple) and isinstance(theirs, tuple)
        ), f"{where}: {type(ours).__name__} for a {type(theirs).__name__}"
        assert len(ours) == len(theirs), f"{where}: length {len(ours)} != {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            same(a, b, rtol, atol, f"{where}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), f"{where}: keys"
        for key in theirs:
            same(ours[key], theirs[key], rtol, atol, f"{where}[{key!r}]")
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def both(arrays: list[np.ndarray], requires_grad: bool = False) -> tuple[list, list]:
    """The arrays as gradcli tensors and as torch tensors."""
    import torch

    ours = [gc.tensor(a, requires_grad=requires_grad) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    return ours, theirs


def same_error(call_ours: Any, call_theirs: Any) -> str:
    """Both calls raise; ours is an instance of the builtin class torch raised (and named as
    torch's own class, where it raised one), with the same text. Gives the text."""
    try:
        call_theirs()
    except Exception as exc:  # noqa: BLE001 - whatever torch raises is the oracle
        expected = exc
    else:
        raise AssertionError("torch did not raise")
    try:
        call_ours()
    except Exception as exc:  # noqa: BLE001
        got = exc
    else:
        raise AssertionError(f"gradcli did not raise; torch raised {expected!r}")
    builtin = next(k for k in type(expected).__mro__ if k.__module__ == "builtins")
    assert isinstance(got, builtin), f"{type(got).__mro__} for {type(expected)}"
    if builtin is not type(expected):  # torch's own class (GradcheckError): the same name
        assert type(got).__name__ == type(expected).__name__
    assert str(got) == str(expected)
    return str(got)
