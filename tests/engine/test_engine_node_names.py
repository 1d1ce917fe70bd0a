"""Every method, property and alias of the op table names its node as torch 2.13 records it
(``type(y.grad_fn).__name__``): one row per spelling, since torch names a node by the spelling
a call used (``x.t()`` is ``TBackward0``, ``x.T`` ``PermuteBackward0``, ``x.mT``
``TransposeBackward0``), not by the operation it computes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcli as gc
from gradcli.ops.table import OPS

torch = pytest.importorskip("torch")

# x and y: 3x3 matrices of distinct values in (0.1, 0.9), requiring grad; values do not matter
# to a node's name, so no spelling needs its own domain
_X = np.arange(1.0, 10.0).reshape(3, 3) / 10.0
_Y = np.arange(9.0, 0.0, -1.0).reshape(3, 3) / 10.0 + 0.05

# The methods that take y as their one argument besides the tensor
WITH_Y = (
    "add sub mul div maximum minimum atan2 arctan2 hypot logaddexp logaddexp2 copysign xlogy "
    "remainder fmod floor_divide heaviside matmul mm inner kron eq ne lt le gt ge isclose "
    "logical_and logical_or logical_xor divide true_divide multiply subtract greater "
    "greater_equal less less_equal not_equal"
).split()
# ... that take a dim (0) as their one argument
WITH_DIM = "cummax cummin cumsum cumprod logcumsumexp softmax log_softmax logsumexp amax amin"
_INDEX = [[0, 1], [1, 2], [2, 0]]
_MASK = [[True, False, True]] * 3

# A method's arguments besides the tensor, given the module (gradcli's engine or torch) and y;
# a method not listed takes none
ARGS: dict[str, Callable[[Any, Any], tuple[Any, ...]]] = {
    **{name: (lambda m, y: (y,)) for name in WITH_Y},
    **{name: (lambda m, y: (0,)) for name in WITH_DIM.split()},
    **{name: (lambda m, y: (y > 0.5,)) for name in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "pow": lambda m, y: (2.0,),
    "lerp": lambda m, y: (y, 0.5),
    "clamp": lambda m, y: (0.2, 0.6),
    "clip": lambda m, y: (0.2, 0.6),
    "clamp_min": lambda m, y: (0.2,),
    "clamp_max": lambda m, y: (0.6,),
    "masked_fill": lambda m, y: (m.tensor(_MASK), 0.0),
    "masked_select": lambda m, y: (m.tensor(_MASK),),
    "expand": lambda m, y: (2, 3, 3),
    "expand_as": lambda m, y: (m.ones(2, 3, 3),),
    "reshape": lambda m, y: (9,),
    "view": lambda m, y: (9,),
    "transpose": lambda m, y: (0, 1),
    "permute": lambda m, y: (1, 0),
    **{name: (lambda m, y: (0, 1)) for name in ("movedim", "moveaxis", "swapaxes", "swapdims")},
    "unsqueeze": lambda m, y: (0,),
    "unflatten": lambda m, y: (1, (3, 1)),
    "narrow": lambda m, y: (0, 1, 2),
    "repeat": lambda m, y: (2, 1),
    "tile": lambda m, y: ((2, 1),),
    "repeat_interleave": lambda m, y: (2,),
    "roll": lambda m, y: (1, 0),
    "flip": lambda m, y: ((0,),),
    "split": lambda m, y: (2,),
    "chunk": lambda m, y: (2,),
    "gather": lambda m, y: (1, m.tensor(_INDEX)),
    "take_along_dim": lambda m, y: (m.tensor(_INDEX), 1),
    "index_select": lambda m, y: (0, m.tensor([0, 2])),
    "scatter": lambda m, y: (1, m.tensor(_INDEX), y[:, :2]),
    "scatter_add": lambda m, y: (1, m.tensor(_INDEX), y[:, :2]),
    "index_add": lambda m, y: (0, m.tensor([0, 2]), y[:2]),
    "mv": lambda m, y: (y[0],),
    "dot": lambda m, y: (y[0],),
    "outer": lambda m, y: (y[0],),
    "ger": lambda m, y: (y[0],),
    "bmm": lambda m, y: (y.unsqueeze(0),),
    "cross": lambda m, y: (y, 1),
    "matrix_power": lambda m, y: (2,),
    "topk": lambda m, y: (2,),
    "kthvalue": lambda m, y: (2,),
    "to": lambda m, y: (m.float32,),
}
# spellings whose operand is not x: a batch of matrices, a vector, boolean or complex values
OPERANDS: dict[str, Callable[[Any], Any]] = {
    "bmm": lambda x: x.unsqueeze(0),
    **{f"bitwise_{name}": (lambda x: x > 0.5) for name in ("and", "or", "xor", "not")},
    "diag_embed": lambda x: x[0],
    "dot": lambda x: x[0],
    "outer": lambda x: x[0],
    "ger": lambda x: x[0],
    "imag": lambda x: x * (1 + 1j),
    "real": lambda x: x * (1 + 1j),
}
PROPERTIES = {"T", "mT", "real", "imag"}


def _spellings() -> list[str]:
    found = set()
    for op in OPS.values():
        if op.call is not None:
            found.update(op.methods)
            if "property" in op.extra:
                found.add(op.extra["property"])
    return sorted(found)


# the aliases of the table's entries, as torch spells them
ALIASES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "clip": lambda m, x, y: m.clip(x, 0.2, 0.6),
    "arctan2": lambda m, x, y: m.arctan2(x, y),
    **{
        name: (lambda m, x, y, name=name: getattr(m, name)(x))
        for name in ("absolute", "arccos", "arcsin", "arctan", "arcsinh", "arctanh")
        + ("negative", "fix")
    },
    "arccosh": lambda m, x, y: m.arccosh(x + 1),
    **{
        name: (lambda m, x, y, name=name: getattr(m, name)(x, y))
        for name in ("divide", "true_divide", "multiply", "subtract", "greater")
        + ("greater_equal", "less", "less_equal", "not_equal")
    },
    **{
        name: (lambda m, x, y, name=name: getattr(m, name)([x, y]))
        for name in ("concat", "concatenate", "row_stack")
    },
    **{
        name: (lambda m, x, y, name=name: getattr(m, name)(x, 0, 1))
        for name in ("moveaxis", "swapaxes", "swapdims")
    },
    "ger": lambda m, x, y: m.ger(x[0], y[0]),
    **{
        name: (lambda m, x, y, name=name: getattr(m if m is gc else m.special, name)(x))
        for name in ("expit", "psi", "gammaln")
    },
    "bce": lambda m, x, y: (
        m.bce(x, y) if m is gc else torch.nn.functional.binary_cross_entropy(x, y)
    ),
    "bce_with_logits": lambda m, x, y: (
        m.bce_with_logits(x, y)
        if m is gc
        else torch.nn.functional.binary_cross_entropy_with_logits(x, y)
    ),
}


def _name(result: Any) -> str | None:
    """The node's name of a call's result (its first tensor where it gives several)."""
    if isinstance(result, (tuple, list)):
        result = result[0]
    node = result.grad_fn
    if node is None:
        return None
    return type(node).__name__ if isinstance(result, torch.Tensor) else node.name()


def _call(m: Any, spelling: str) -> Any:
    x, y = (m.tensor(values, dtype=m.float64, requires_grad=True) for values in (_X, _Y))
    x = OPERANDS.get(spelling, lambda t: t)(x)
    if spelling in PROPERTIES:
        return getattr(x, spelling)
    return getattr(x, spelling)(*ARGS.get(spelling, lambda m, y: ())(m, y))


@pytest.mark.filterwarnings("ignore:invalid value")  # acosh of values below 1: names only
@pytest.mark.parametrize("spelling", _spellings())
def test_a_method_names_its_node_as_torch_does(spelling):
    assert _name(_call(gc, spelling)) == _name(_call(torch, spelling))


# calls that leave their input as it is, where torch still makes a view and names its node
UNCHANGED: dict[str, Callable[[Any], Any]] = {
    "reshape to its shape": lambda x: x.reshape(3, 3),
    "view as its shape": lambda x: x.view(3, 3),
    "expand to its shape": lambda x: x.expand(3, 3),
    "squeeze of no dim of size 1": lambda x: x.squeeze(),
    "squeeze of a dim not of size 1": lambda x: x.squeeze(0),
    "unflatten into one dim": lambda x: x.unflatten(0, (3,)),
    "t of a vector": lambda x: x[0].t(),
    "T of a vector": lambda x: x[0].T,
    "flatten of a vector": lambda x: x[0].flatten(),
    "to its own dtype": lambda x: x.to(x.dtype),
}


@pytest.mark.parametrize("call", list(UNCHANGED))
def test_a_call_that_changes_nothing_names_its_node_as_torch_does(call):
    x = gc.tensor(_X, requires_grad=True)
    tx = torch.tensor(_X, requires_grad=True)
    assert _name(UNCHANGED[call](x)) == _name(UNCHANGED[call](tx))


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_an_alias_names_its_node_as_torch_does(alias):
    values = (_X, _Y)
    x, y = (gc.tensor(v, requires_grad=True) for v in values)
    tx, ty = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values)
    assert _name(ALIASES[alias](gc, x, y)) == _name(ALIASES[alias](torch, tx, ty))


def test_every_alias_is_in_the_table():
    assert set(ALIASES) == {alias for op in OPS.values() for alias in op.aliases}


# a number beside a tensor: torch's Scalar overload only through the reflected operator (2 - x
# is rsub(x, 2), 2 / x is x.reciprocal() * 2), a function's number is wrapped as a tensor
NUMBERS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "2 - x": lambda m, x, y: 2 - x,
    "2 / x": lambda m, x, y: 2 / x,
    "2.5 - x": lambda m, x, y: 2.5 - x,
    "sub(2, x)": lambda m, x, y: m.sub(2, x),
    "div(2, x)": lambda m, x, y: m.div(2, x),
    "x - 2": lambda m, x, y: x - 2,
    "x / 2": lambda m, x, y: x / 2,
    "rsub(x, 2)": lambda m, x, y: m.rsub(x, 2),
    "rsub(x, 2, alpha=-1)": lambda m, x, y: m.rsub(x, 2, alpha=-1),
    "rsub(x, y)": lambda m, x, y: m.rsub(x, y),
    "y - x": lambda m, x, y: y - x,
}


@pytest.mark.parametrize("call", list(NUMBERS))
def test_a_number_operand_names_the_node_of_torchs_overload(call):
    x, y = (gc.tensor(v, requires_grad=True) for v in (_X, _Y))
    tx, ty = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (_X, _Y))
    ours, theirs = NUMBERS[call](gc, x, y), NUMBERS[call](torch, tx, ty)
    assert _name(ours) == _name(theirs)
    assert np.array_equal(ours.data, theirs.detach().numpy())  # 2 / x: torch's bits
