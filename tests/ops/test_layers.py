"""Programs using the layers give PyTorch's values and gradients: a small CNN (conv2d -> relu ->
max_pool2d -> flatten -> linear -> cross_entropy), normalization and attention; operands left
out with None (linear's bias), through the parse cache too; clear errors for shapes that do
not fit."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(12)
X = RNG.standard_normal((2, 1, 4, 4)).round(3).tolist()
K = RNG.standard_normal((2, 1, 3, 3)).round(3).tolist()
KB = [0.1, -0.2]
W = RNG.standard_normal((3, 8)).round(3).tolist()
B = [0.05, 0.0, -0.1]
T = [2.0, 0.0]

CNN = (
    "h = relu(conv2d(x, k, kb, padding=1))\n"
    "p = F.max_pool2d(h, 2)\n"
    "z = linear(reshape(p, 2, -1), W, b)\n"
    "y = cross_entropy(z, t)\n"
)


def _t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def _inputs(**values) -> list[str]:
    args = []
    for name, value in values.items():
        args += ["-i", f"{name}={value}"]
    return args


def test_a_small_cnn_gives_torchs_loss_and_gradients(cli_json):
    result = cli_json(
        "grad", "-e", CNN, *_inputs(x=X, k=K, kb=KB, W=W, b=B, t=T), "--wrt", "x,k,kb,W,b"
    )
    x, k, kb, w, b = (_t(v) for v in (X, K, KB, W, B))
    h = F.relu(F.conv2d(x, k, kb, padding=1))
    z = F.linear(torch.flatten(F.max_pool2d(h, 2), 1), w, b)
    loss = F.cross_entropy(z, torch.tensor([2, 0]))
    loss.backward()
    assert result["values"]["y"] == pytest.approx(loss.item(), rel=1e-12)
    for name, leaf in zip(["x", "k", "kb", "W", "b"], [x, k, kb, w, b]):
        np.testing.assert_allclose(result["grads"][name], leaf.grad.numpy(), rtol=1e-10, atol=1e-12)


# a setting per spatial dim (issue 30): the math language takes the tuples torch's calls take
PER_DIM = (
    "h = conv2d(x, k, kb, stride=(2, 1), padding=(1, 2), dilation=(1, 2))\n"
    "u = conv_transpose2d(h, reshape(k, 2, 1, 3, 3), stride=(2, 1), output_padding=(1, 0))\n"
    "p = max_pool2d(u, (3, 2), stride=(1, 2), padding=(1, 0))\n"
    "y = sum(avg_pool2d(p, kernel_size=(2, 1), stride=[1, 2]) ** 2)\n"
)


def test_settings_per_dim_give_torchs_values_and_gradients(cli_json):
    result = cli_json("grad", "-e", PER_DIM, *_inputs(x=X, k=K, kb=KB), "--wrt", "x,k,kb")
    x, k, kb = (_t(v) for v in (X, K, KB))
    h = F.conv2d(x, k, kb, stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    u = F.conv_transpose2d(h, k.reshape(2, 1, 3, 3), stride=(2, 1), output_padding=(1, 0))
    p = F.max_pool2d(u, (3, 2), stride=(1, 2), padding=(1, 0))
    y = (F.avg_pool2d(p, kernel_size=(2, 1), stride=[1, 2]) ** 2).sum()
    y.backward()
    assert result["values"]["y"] == pytest.approx(y.item(), rel=1e-12)
    for name, leaf in zip(["x", "k", "kb"], [x, k, kb]):
        np.testing.assert_allclose(result["grads"][name], leaf.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_the_cnn_checks_against_finite_differences(cli):
    result = cli("check", "-e", CNN, *_inputs(x=X, k=K, kb=KB, W=W, b=B, t=T), "--wrt", "k,W")
    assert result.exit_code == 0, result.stderr
    assert "agree" in result.stdout


@pytest.mark.parametrize(
    "program",
    [
        "y = sum(linear(x, W) ** 2)",
        "y = sum(linear(x, W, None) ** 2)",
        "y = sum(F.linear(x, W, bias=None) ** 2)",
    ],
)
def test_a_bias_left_out_is_none(cli_json, program, tmp_path):
    x, w = [[1.0, 2.0], [0.5, -1.0]], [[0.3, -0.2], [1.0, 0.5], [0.0, 2.0]]
    tx, tw = _t(x), _t(w)
    expected = (F.linear(tx, tw) ** 2).sum()
    expected.backward()
    env = {"GRADCLI_CACHE_DIR": str(tmp_path)}
    for _ in range(2):  # parsed, then read back from the parse cache
        result = cli_json_env(cli_json, env, "grad", "-e", program, *_inputs(x=x, W=w))
        assert result["values"]["y"] == pytest.approx(expected.item(), rel=1e-12)
        np.testing.assert_allclose(result["grads"]["x"], tx.grad.numpy(), rtol=1e-12)
    assert list(tmp_path.iterdir()), "the program was cached"


def cli_json_env(cli_json, env, *args):
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        return cli_json(*args)


def test_norms_and_attention_with_operands_between_options(cli_json):
    z = RNG.standard_normal((2, 2, 3)).round(3).tolist()
    g = [0.5, 2.0]
    program = (
        "a = layer_norm(z, 3, None, c)\n"
        "n = group_norm(z, 2, g, eps=0.001)\n"
        "m = batch_norm(z, rm, rv, g, training=True)\n"
        "q = scaled_dot_product_attention(a, a, n, is_causal=True)\n"
        "y = sum(q * m)"
    )
    values = {"z": z, "c": [0.1, 0.2, 0.3], "g": g, "rm": [0.0, 1.0], "rv": [1.0, 2.0]}
    result = cli_json("grad", "-e", program, *_inputs(**values), "--wrt", "z,c,g")
    tz, tc, tg = _t(z), _t(values["c"]), _t(g)
    a = F.layer_norm(tz, (3,), None, tc)
    n = F.group_norm(tz, 2, tg, eps=0.001)
    m = F.batch_norm(
        tz, torch.zeros(2).double(), torch.tensor([1.0, 2.0]).double(), tg, training=True
    )
    y = (F.scaled_dot_product_attention(a, a, n, is_causal=True) * m).sum()
    y.backward()
    assert result["values"]["y"] == pytest.approx(y.item(), rel=1e-10)
    for name, leaf in (("z", tz), ("c", tc), ("g", tg)):
        np.testing.assert_allclose(result["grads"][name], leaf.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_explain_writes_a_left_out_operand_as_program_text(cli):
    result = cli("explain", "-e", "y = sum(layer_norm(x, 2, None, b))", "--x", "[[1,2],[3,5]]",
                 "-i", "b=[1,0]")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "layer_norm(x, normalized_shape=2, bias=b)" in result.stdout


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (  # torch's words, as gradcli run raises them
            "y = conv2d(x, k)",
            "Given groups=1, weight of size [2, 3, 1, 1], expected input[1, 2, 2, 2] to have 3 "
            "channels, but got 2 channels instead",
        ),
        ("y = linear(x, k)", "linear: input's last dim must match weight"),
        ("y = embedding(x, k)", "embedding: weight must be 2-D"),
        ("y = batch_norm(x, k, k)", "running_mean should contain 2 elements not 6"),
        (
            "y = max_pool2d(x, 2, padding=2)",
            "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 "
            "and dilation=1",
        ),
        ("y = layer_norm(x, 3)", "normalized_shape [3] must be the input's last dims"),
    ],
)
def test_shapes_that_do_not_fit_are_clear_errors(cli, program, message):
    inputs = ["-i", "x=ones(1, 2, 2, 2)"] + (["-i", "k=ones(2, 3, 1, 1)"] if "k" in program else [])
    result = cli("eval", "-e", program, *inputs)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_running_statistics_get_no_gradient(cli_json):
    result = cli_json(
        "grad", "-e", "y = sum(batch_norm(x, m, v) * x)", "--x", "[[1, 2], [3, 4]]",
        "-i", "m=[0.5, 0]", "-i", "v=[1, 2]",
    )  # fmt: skip
    x = _t([[1.0, 2.0], [3.0, 4.0]])
    y = F.batch_norm(x, torch.tensor([0.5, 0.0]).double(), torch.tensor([1.0, 2.0]).double()) * x
    y.sum().backward()
    np.testing.assert_allclose(result["grads"]["x"], x.grad.numpy(), rtol=1e-12)
    assert result["grads"]["m"] is None  # no gradient reaches it, as torch leaves .grad None
