"""Bad input: operands whose shapes do not fit raise gc.ShapeError naming the op and shapes;
every refusal is a class of gc.EngineError that is also the builtin exception torch raises."""

from __future__ import annotations

import re

import pytest

import gradcli as gc


def _shapes_pattern(*shapes) -> str:
    return ".*".join(re.escape(str(s)) for s in shapes)


@pytest.mark.parametrize(
    ("name", "call", "shapes"),
    [
        ("add", lambda a, b: gc.add(a, b), [(2, 3), (4,)]),
        ("add", lambda a, b: a + b, [(2, 3), (4,)]),
        ("sub", lambda a, b: a - b, [(2, 3), (3, 2)]),
        ("mul", lambda a, b: a * b, [(5,), (4,)]),
        ("div", lambda a, b: a / b, [(2, 3), (2,)]),
        ("pow", lambda a, b: a**b, [(2, 3), (4,)]),
        ("maximum", gc.maximum, [(2, 3), (4,)]),
        ("minimum", gc.minimum, [(2, 3), (4,)]),
        ("matmul", lambda a, b: gc.matmul(a, b), [(2, 3), (4, 5)]),
        ("matmul", lambda a, b: a @ b, [(3,), (4,)]),
        ("matmul", lambda a, b: a @ b, [(2, 2, 3), (3, 2, 4)]),
        ("matmul", lambda a, b: a @ b, [(), (3,)]),
        ("cat", lambda a, b: gc.cat([a, b]), [(2, 3), (2, 4)]),
        ("stack", lambda a, b: gc.stack([a, b]), [(2,), (3,)]),
        ("mse_loss", gc.mse_loss, [(2, 3), (3,)]),
        ("binary_cross_entropy_with_logits", gc.binary_cross_entropy_with_logits, [(2,), (3,)]),
    ],
)
def test_incompatible_shapes_raise_shape_error(name, call, shapes):
    operands = [gc.ones(*s, requires_grad=True) for s in shapes]
    with pytest.raises(gc.ShapeError) as info:
        call(*operands)
    message = str(info.value)
    assert name in message
    assert re.search(_shapes_pattern(*shapes), message), message


def test_shape_error_is_a_value_error():
    assert issubclass(gc.ShapeError, ValueError)


def test_where_with_incompatible_shapes():
    with pytest.raises(gc.ShapeError, match="where"):
        gc.where(gc.tensor([True, False]), gc.ones(3), gc.ones(2))


@pytest.mark.parametrize(
    "call",
    [
        lambda: gc.sum(gc.ones(2, 3), dim=2),
        lambda: gc.mean(gc.ones(2, 3), dim=-3),
        lambda: gc.softmax(gc.ones(2, 3), dim=5),
        lambda: gc.transpose(gc.ones(2, 3), 0, 2),
        lambda: gc.transpose(gc.ones(()), 0, 1),
    ],
)
def test_dims_out_of_range_raise_shape_error(call):
    with pytest.raises(gc.ShapeError, match="out of range"):
        call()


def test_reshape_to_a_different_size():
    with pytest.raises(gc.ShapeError, match=r"reshape.*\(2, 3\)"):
        gc.reshape(gc.ones(2, 3), 4)


def test_expand_to_an_incompatible_shape():
    with pytest.raises(gc.ShapeError, match=r"expand.*\(2, 3\)"):
        gc.expand(gc.ones(2, 3), (4, 3))


def test_index_out_of_range():
    with pytest.raises(gc.ShapeError, match=r"getitem.*\(3,\)"):
        gc.ones(3)[5]


def test_cat_of_0d_tensors():
    with pytest.raises(gc.ShapeError, match="cat"):
        gc.cat([gc.tensor(1.0), gc.tensor(2.0)])


def test_softmax_of_a_matrix_needs_a_dim():
    with pytest.raises(gc.ShapeError, match="dim"):
        gc.softmax(gc.ones(2, 3))


def test_no_gradient_is_recorded_for_a_failed_op():
    x = gc.ones(2, 3, requires_grad=True)
    with pytest.raises(gc.ShapeError):
        x + gc.ones(4)
    (x * 2).sum().backward()
    assert x.grad.shape == (2, 3)


def test_non_float_tensors_cannot_require_grad():
    with pytest.raises(TypeError, match="floating"):
        gc.tensor([1, 2], dtype="int64", requires_grad=True)


def test_bce_rejects_probabilities_outside_0_1():
    with pytest.raises(ValueError, match="between 0 and 1"):
        gc.binary_cross_entropy(gc.tensor([1.5]), gc.tensor([1.0]))


def test_cross_entropy_rejects_bad_targets():
    with pytest.raises(IndexError, match="class indices"):
        gc.cross_entropy(gc.ones(2, 3), gc.tensor([0, 3]))
    with pytest.raises(gc.ShapeError, match="cross_entropy"):
        gc.cross_entropy(gc.ones(2, 3), gc.tensor([0, 1, 2]))


def _backward_twice():
    x = gc.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _unused_input():
    x, w = gc.ones(2, requires_grad=True), gc.ones(2, requires_grad=True)
    gc.grad((x * 2).sum(), [x, w])


@pytest.mark.parametrize(
    ("call", "kind", "builtin", "message"),
    [
        (lambda: gc.ones(2) + gc.ones(3), gc.ShapeError, ValueError, "add"),
        (lambda: gc.stack([]), gc.ShapeError, ValueError, "non-empty list"),
        (lambda: gc.jvp(gc.sin, gc.ones(2), (gc.ones(2), gc.ones(2))), gc.ShapeError, ValueError,
         "expected 1 tensors, got 2"),
        (lambda: gc.binary_cross_entropy(gc.tensor([1.5]), gc.tensor([1.0])), gc.DomainError,
         ValueError, "between 0 and 1"),
        (lambda: gc.clamp(gc.ones(2)), gc.DomainError, ValueError, "at least one of min"),
        (lambda: gc.arange(0, 1, 0), gc.DomainError, ValueError, "step must not be zero"),
        (lambda: gc.mse_loss(gc.ones(2), gc.ones(2), "bogus"), gc.DomainError, ValueError,
         "reduction must be one of"),
        (lambda: gc.ones(-1), gc.DomainError, ValueError, "non-negative whole numbers"),
        (lambda: gc.cross_entropy(gc.ones(2, 3), gc.tensor([0, 3])), gc.IndexDomainError,
         IndexError, "class indices must be in [0, 2]"),
        (lambda: gc.ones(3)[gc.tensor([0.5])], gc.IndexDomainError, IndexError, "whole numbers"),
        (_backward_twice, gc.GradError, RuntimeError, "second time"),
        (_unused_input, gc.GradError, RuntimeError, "allow_unused"),
        (lambda: (gc.ones(2, requires_grad=True) * 2).requires_grad_(), gc.GradError,
         RuntimeError, "leaf tensors"),
        (lambda: (gc.ones(2, requires_grad=True) * 2).backward(), gc.ScalarOutputError,
         RuntimeError, "implicitly created only for scalar outputs"),
        (lambda: gc.hessian(gc.sin, gc.ones(2)), gc.ScalarOutputError, RuntimeError,
         "scalar output"),
        (lambda: gc.tensor([1, 2], dtype="int64", requires_grad=True), gc.DtypeError, TypeError,
         "floating"),
        (lambda: gc.zeros(2, dtype="uint16"), gc.DtypeError, TypeError, "unsupported dtype"),
    ],
)  # fmt: skip
def test_each_refusal_has_its_kind_and_torchs_builtin(call, kind, builtin, message):
    with pytest.raises(kind, match=re.escape(message)) as info:
        call()
    assert isinstance(info.value, gc.EngineError) and isinstance(info.value, builtin)
