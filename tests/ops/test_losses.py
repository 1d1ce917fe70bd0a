"""Programs using the losses, statistics and scans give PyTorch's values and gradients, and
``explain`` and ``check`` know them."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

Z = [[1.0, 2.0, 3.0], [0.0, -1.0, 2.0]]
B = [[1.0, 0.0, 1.0], [2.0, 2.0, 2.0]]
C = [[0.0, 1.0, 0.0], [1.0, 1.0, 3.0]]
M = [[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]]  # labels +-1


def _t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


PROGRAMS = {
    "statistics and scans": (
        "y = sum(var(z, 1)) + std(z, correction=0) + var(z, unbiased=False) "
        "+ sum(cumprod(z, 1)) + sum(cumsum(z, 0) * logcumsumexp(z, 1))",
        {"z": Z},
        lambda z: (
            z.var(1).sum()
            + z.std(correction=0)
            + z.var(unbiased=False)
            + z.cumprod(1).sum()
            + (z.cumsum(0) * z.logcumsumexp(1)).sum()
        ),
    ),
    "class-index losses": (
        "y = cross_entropy(z, t, label_smoothing=0.1) + nll_loss(log_softmax(z, 1), t, "
        "ignore_index=0, reduction='sum') + kl_div(log_softmax(z, 1), softmax(b, 1), "
        "reduction='batchmean')",
        {"z": Z, "t": [2.0, 0.0], "b": B},
        lambda z, b: (
            F.cross_entropy(z, torch.tensor([2, 0]), label_smoothing=0.1)
            + F.nll_loss(F.log_softmax(z, 1), torch.tensor([2, 0]), ignore_index=0, reduction="sum")
            + F.kl_div(F.log_softmax(z, 1), F.softmax(b, 1), reduction="batchmean")
        ),
    ),
    "distances and margins": (
        "y = triplet_margin_loss(z, b, c, swap=True) + sum(cosine_similarity(z, b)) "
        "+ sum(pairwise_distance(z, c, p=3)) + cosine_embedding_loss(z, b, s, margin=0.1) "
        "+ margin_ranking_loss(z, c, m) + hinge_embedding_loss(z, m)",
        {"z": Z, "b": B, "c": C, "s": [1.0, -1.0], "m": M},
        lambda z, b, c: (
            F.triplet_margin_loss(z, b, c, swap=True)
            + F.cosine_similarity(z, b).sum()
            + F.pairwise_distance(z, c, p=3).sum()
            + F.cosine_embedding_loss(z, b, _t([1.0, -1.0]), margin=0.1)
            + F.margin_ranking_loss(z, c, _t(M))
            + F.hinge_embedding_loss(z, _t(M))
        ),
    ),
    "element-wise losses": (
        "y = l1_loss(z, b) + smooth_l1_loss(z, b, beta=0.5) + huber_loss(z, c, delta=2) "
        "+ soft_margin_loss(z, b) + poisson_nll_loss(z, exp(b), full=True) "
        "+ gaussian_nll_loss(z, b, exp(c), full=True)",
        {"z": Z, "b": B, "c": C},
        lambda z, b, c: (
            F.l1_loss(z, b)
            + F.smooth_l1_loss(z, b, beta=0.5)
            + F.huber_loss(z, c, delta=2.0)
            + F.soft_margin_loss(z, b.detach())  # torch does not differentiate its target
            + F.poisson_nll_loss(z, b.exp(), full=True)
            + F.gaussian_nll_loss(z, b, c.exp(), full=True)
        ),
    ),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_gives_torchs_value_and_gradients(cli_json, name):
    source, inputs, reference = PROGRAMS[name]
    args = [arg for key, value in inputs.items() for arg in ("-i", f"{key}={value}")]
    wrt = [key for key in inputs if key not in ("t", "s", "m")]
    document = cli_json("grad", "-e", source, *args, "--wrt", ",".join(wrt))
    leaves = {key: _t(inputs[key]).requires_grad_() for key in wrt}
    expected = reference(*leaves.values())
    expected.backward()
    np.testing.assert_allclose(document["values"]["y"], expected.item(), rtol=1e-12)
    for key, leaf in leaves.items():
        np.testing.assert_allclose(document["grads"][key], leaf.grad.numpy(), rtol=1e-10)


def test_check_agrees_on_var_and_cumprod(cli):
    result = cli("check", "-e", "y = cumprod(x, 0) * var(x)", "--x", "0.5,-1,2")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "all methods agree" in result.stdout


def test_explain_shows_a_scans_jacobian_blocks(cli_json):
    document = cli_json("explain", "-e", "y = sum(cumsum(x, 0))", "--x", "1,2,3")
    text = str(document)
    assert "1 where j <= i, else 0" in text


def test_kl_div_takes_batchmean_and_refuses_other_words(cli):
    ok = cli("eval", "-e", "y = kl_div(x, x, reduction='batchmean')", "--x", "0.5,0.25")
    assert ok.exit_code == 0, ok.stderr
    bad = cli("eval", "-e", "y = kl_div(x, x, reduction='batch')", "--x", "0.5,0.25")
    assert bad.exit_code == 2
    assert "'mean', 'batchmean', 'sum' or 'none'" in bad.stderr


def test_cross_entropy_of_probabilities_is_torchs_sum_over_everything():
    """torch's order for probability targets: -(log_probs * t).sum() / rows, not the mean of
    per-row sums: the two differ in float32's last bits (the docstring's own example, seed
    283), and the nodes are torch's (DivBackward1; an empty batch's nan from NegBackward0)."""
    from gradcli.ops import library as gc
    from gradcli.ops.numerics import summation

    torch.manual_seed(283)
    x, t = torch.randn(3, 5), torch.randn(3, 5).softmax(dim=1)
    x_values, t_values = x.numpy(), t.numpy()
    with summation.torch_order():
        for reduction in ("mean", "sum"):
            ours = gc.cross_entropy(
                gc.Tensor(x_values, requires_grad=True), gc.Tensor(t_values), reduction=reduction
            )
            theirs = F.cross_entropy(x.clone().requires_grad_(), t, reduction=reduction)
            assert ours.data.item() == theirs.item()
            assert ours.grad_fn.name() == theirs.grad_fn.name()
    empty = gc.cross_entropy(
        gc.Tensor(np.zeros((0, 3), np.float32), requires_grad=True),
        gc.Tensor(np.zeros((0, 3), np.float32)),
    )
    assert np.isnan(empty.data) and empty.grad_fn.name() == "NegBackward0"
