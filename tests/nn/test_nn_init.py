"""gradcli.nn.init against torch 2.13: each initializer fills the tensor in place with
torch's numbers (the random ones drawn from the generator in force after ``manual_seed``,
or from the generator given), bit for bit in both float dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.ops.library as E
from gradcli import nn
from gradcli.base.engine_errors import DomainError
from gradcli.engine.torch_random import Generator

# (initializer, keyword arguments)
INITIALIZERS = [
    ("uniform_", {}),
    ("uniform_", {"a": -0.3, "b": 2.0}),
    ("normal_", {}),
    ("normal_", {"mean": 1.0, "std": 0.2}),
    ("constant_", {"val": 0.25}),
    ("zeros_", {}),
    ("ones_", {}),
    ("eye_", {}),
    ("xavier_uniform_", {}),
    ("xavier_uniform_", {"gain": 2.0}),
    ("xavier_normal_", {"gain": 0.5}),
    ("kaiming_uniform_", {}),
    ("kaiming_uniform_", {"a": 5**0.5}),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {"nonlinearity": "tanh"}),
]


CASES = [
    (name, kwargs, shape)
    for name, kwargs in INITIALIZERS
    for shape in [(4, 3), (20, 7), (2, 3, 5)]
    if name != "eye_" or len(shape) == 2  # eye_ fills matrices only
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kwargs", "shape"), CASES)
def test_initializer_is_torchs(name, kwargs, shape, dtype):
    torch = pytest.importorskip("torch")
    ours = E.zeros(*shape, dtype=dtype)
    theirs = torch.zeros(*shape, dtype=getattr(torch, dtype))
    E.manual_seed(7)
    torch.manual_seed(7)
    assert getattr(nn.init, name)(ours, **kwargs) is ours
    getattr(torch.nn.init, name)(theirs, **kwargs)
    assert np.array_equal(ours.data, theirs.numpy())
    # the next draw continues from where torch's does
    assert np.array_equal(E.rand(3, dtype=dtype).data, torch.rand(3, dtype=theirs.dtype).numpy())


def test_a_generator_given_is_drawn_from():
    torch = pytest.importorskip("torch")
    ours = E.zeros(5, dtype="float32")
    theirs = torch.zeros(5)
    nn.init.normal_(ours, generator=Generator().manual_seed(3))
    torch.nn.init.normal_(theirs, generator=torch.Generator().manual_seed(3))
    assert np.array_equal(ours.data, theirs.numpy())


def test_initializers_fill_in_place_and_refuse_as_torch():
    weight = nn.Parameter(E.zeros(2, 3, dtype="float32"))
    view = weight.detach()
    nn.init.constant_(weight, 0.5)
    assert view.data.tolist() == [[0.5] * 3] * 2
    assert nn.init.calculate_gain("leaky_relu", 0.2) == (2.0 / (1 + 0.2**2)) ** 0.5
    E.manual_seed(0)
    nn.init.uniform_(weight)
    # torch 2.13: torch.manual_seed(0); torch.rand(2, 3)
    assert weight.data[0].tolist() == [0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
    with pytest.raises(DomainError, match="Fan in and fan out can not be computed"):
        nn.init.xavier_uniform_(E.zeros(3, dtype="float32"))
    with pytest.raises(DomainError, match="Unsupported nonlinearity"):
        nn.init.kaiming_normal_(E.zeros(2, 2), nonlinearity="cubic")
