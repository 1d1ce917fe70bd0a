"""The audit of issue 12: every operation its items 1-10 name is callable in the language, as a
function ``gradcli functions`` lists (by its name or a PyTorch alias), or as the operator,
tensor method or property it names; so the list can never silently lose one."""

from __future__ import annotations

import pytest

from gradcli.lang.functions import METHODS, OPERATORS, PROPERTIES, lookup

torch = pytest.importorskip("torch")

# The functions of each item, as the issue names them (torch.linalg's without the prefix).
FUNCTIONS = {
    "1 comparisons and masks": "eq ne lt le gt ge logical_and logical_or logical_not logical_xor "
    "isnan isinf isfinite isclose any all where masked_fill masked_select nonzero clamp sign "
    "heaviside",
    "3 indexing": "gather scatter scatter_add index_select index_add take_along_dim one_hot",
    "4 element-wise": "log2 log10 exp2 square rsqrt atan2 arctan2 hypot floor ceil round trunc "
    "frac remainder fmod floor_divide div erfc erfinv lgamma digamma logit xlogy sinc deg2rad "
    "rad2deg asinh acosh atanh logaddexp logaddexp2 copysign lerp nan_to_num cbrt",
    "5 reductions and scans": "max min argmax argmin var std var_mean std_mean cumsum cumprod "
    "cummax cummin logcumsumexp sort argsort topk kthvalue median mode",
    "6 shape": "permute movedim flip fliplr flipud roll repeat tile repeat_interleave expand "
    "expand_as split chunk unbind narrow triu tril diag diagonal diag_embed pad atleast_1d "
    "atleast_2d atleast_3d hstack vstack column_stack meshgrid flatten unflatten",
    "7 linear algebra": "trace outer inner kron cross tensordot einsum bmm mm mv det slogdet inv "
    "solve cholesky eigh svd qr norm vector_norm matrix_norm svdvals eigvalsh pinv",
    "8 activations": "gelu silu elu celu selu leaky_relu relu6 hardtanh hardsigmoid hardswish "
    "mish softsign logsigmoid softmin glu softplus",
    "9 losses": "l1_loss smooth_l1_loss huber_loss nll_loss kl_div poisson_nll_loss "
    "gaussian_nll_loss cosine_similarity pairwise_distance cosine_embedding_loss "
    "margin_ranking_loss hinge_embedding_loss triplet_margin_loss binary_cross_entropy "
    "binary_cross_entropy_with_logits cross_entropy",
    "10 layers": "linear conv1d conv2d conv_transpose2d max_pool2d avg_pool2d layer_norm "
    "batch_norm group_norm dropout scaled_dot_product_attention embedding",
}
# item 1's operators on booleans, item 4's % and //, item 2's dtype methods, item 6's forms
OPERATOR_FORMS = ("==", "!=", "<", "<=", ">", ">=", "&", "|", "~", "^", "%", "//")
METHOD_FORMS = ("float", "long", "double", "int", "bool", "to", "view", "flatten", "unflatten")
PROPERTY_FORMS = ("T", "mT")

NAMES = [(item, name) for item, names in FUNCTIONS.items() for name in names.split()]


@pytest.mark.parametrize(("item", "name"), NAMES, ids=[name for _, name in NAMES])
def test_every_function_of_the_issue_is_in_the_language(item, name, cli_json):
    assert lookup(name) is not None, f"item {item}: {name} is not a function of the language"


def test_gradcli_functions_lists_every_function_of_the_issue(cli_json):
    listed = cli_json("functions")["functions"]
    known = {entry["name"] for entry in listed}
    missing = {name for _, name in NAMES if lookup(name) is None or lookup(name).name not in known}
    assert not missing, f"gradcli functions does not list {sorted(missing)}"


@pytest.mark.parametrize("operator", OPERATOR_FORMS)
def test_every_operator_of_the_issue_is_in_the_language(operator):
    assert operator in OPERATORS


@pytest.mark.parametrize("method", METHOD_FORMS)
def test_every_method_of_the_issue_is_in_the_language(method):
    assert method in METHODS
    assert hasattr(torch.Tensor, method)


@pytest.mark.parametrize("name", PROPERTY_FORMS)
def test_every_property_of_the_issue_is_in_the_language(name):
    assert name in PROPERTIES


def test_the_operator_method_and_property_forms_run_as_torchs(cli_json):
    source = (
        "b = (x > 2) & ~(x == 3) | (x < 0) ^ (x != 1); "
        "y = (x % 2) + x // 2 + x.T.float() + x.mT + x.view(2, 2) + x.long() + b "
        "+ x.to(torch.float64) + x.flatten().unflatten(0, (2, 2)) + (x >= 1) + (x <= 4)"
    )
    document = cli_json("eval", "-e", source, "--x", "[[1,2],[3,4]]")
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    b = (x > 2) & ~(x == 3) | (x < 0) ^ (x != 1)
    expected = (
        (x % 2) + x // 2 + x.T.float() + x.mT + x.view(2, 2) + x.long() + b
        + x.to(torch.float64) + x.flatten().unflatten(0, (2, 2)) + (x >= 1) + (x <= 4)
    )  # fmt: skip
    assert document["values"]["y"] == expected.tolist()
