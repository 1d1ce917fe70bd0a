"""How an operation is written in the code ``gradcli export`` writes.

PyTorch: an entry is ``torch.NAME`` unless it is listed here, under the module that holds
it (``torch.nn.functional``, imported as ``F``, and ``torch.linalg``), or written as a
tensor method. An entry that takes its sizes one by one (``reshape(x, 2, 3)``) is written as
its method, which takes them so (``torch.reshape`` takes a tuple); the entries PyTorch has
only as methods are listed. ``tests/commands/test_export.py`` holds every entry to its
spelling: each names a callable of torch 2.13.

NumPy, JAX, sympy and LaTeX are written from the formulas of the entries' ``symbolic`` rules
(``gradcli/commands/export.py``): an entry without one cannot be written there, and says why.
"""

from __future__ import annotations

from .table import SIZES, Op

# what ``gradcli export --to`` writes
TARGETS = ("torch", "numpy", "jax", "sympy", "latex")
# the names each script gives its modules and its own values (the loop variables of the sympy
# script's comprehensions as well, which read the lists of symbols): a value of the program
# with one of these names, or with a name of Python's, takes another in the script
_CODE = frozenset({"json", "program", "math", "scipy", "_inputs", "_value"})
RESERVED = {
    "torch": _CODE | {"torch", "F", "_jacobians"},
    "numpy": _CODE | {"numpy"},
    "jax": _CODE | {"jax"},
    "sympy": frozenset(
        {"json", "numpy", "sympy", "symbols", "names", "output", "point", "at_point", "shape"}
        | {"value", "jacobian", "derivatives", "text", "expression", "f", "s", "d", "row"}
    ),
}
# torch.nn.functional's functions: here rather than torch.NAME, where PyTorch has another
# function of the same name (torch.dropout's third argument is train; torch.kl_div's
# reduction an integer)
FUNCTIONAL = frozenset(
    {
        "binary_cross_entropy_with_logits",
        "binary_cross_entropy",
        "relu",
        "softmax",
        "log_softmax",
        "mse_loss",
        "dropout",
        "one_hot",
        "linear",
        "conv2d",
        "conv1d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "max_pool1d",
        "max_pool2d",
        "max_pool3d",
        "avg_pool1d",
        "avg_pool2d",
        "avg_pool3d",
        "layer_norm",
        "group_norm",
        "batch_norm",
        "embedding",
        "scaled_dot_product_attention",
        "gelu",
        "silu",
        "elu",
        "celu",
        "selu",
        "leaky_relu",
        "hardtanh",
        "relu6",
        "hardsigmoid",
        "hardswish",
        "mish",
        "softsign",
        "logsigmoid",
        "softplus",
        "softmin",
        "glu",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "kl_div",
        "poisson_nll_loss",
        "soft_margin_loss",
        "gaussian_nll_loss",
        "cosine_similarity",
        "normalize",
        "pairwise_distance",
        "margin_ranking_loss",
        "hinge_embedding_loss",
        "cosine_embedding_loss",
        "triplet_margin_loss",
        "nll_loss",
        "cross_entropy",
        "pad",
    }
)
# torch.linalg's: the entries are its functions (torch.svd and torch.qr are other ones)
LINALG = frozenset(
    {
        "det",
        "inv",
        "solve",
        "cholesky",
        "vector_norm",
        "matrix_norm",
        "slogdet",
        "eigh",
        "qr",
        "svd",
        "matrix_power",
        "svdvals",
        "eigvalsh",
        "pinv",
    }
)
# operations whose value is drawn at random: torch draws other numbers than gradcli
RANDOM = frozenset({"dropout"})
# entries whose call without any of its options torch writes as another function: x.T and
# x.t() are torch.t (torch.transpose needs both dims)
WITHOUT_OPTIONS = {"transpose": "torch.t"}
# what PyTorch 2.13 does not have, written out ({0}: the operand, as an atom)
WRITTEN_OUT = {"cbrt": "{0}.sign() * {0}.abs() ** (1 / 3)"}
# what PyTorch has only as a tensor method
METHODS_ONLY = frozenset({"expand", "expand_as", "repeat", "to"})


def torch_method(op: Op) -> str | None:
    """The method an entry is written as (``x.reshape(2, 3)``), or None for a function."""
    if op.name in METHODS_ONLY or any(p.kind == SIZES for p in op.params):
        return op.methods[0] if op.methods else op.name
    return None


def torch_function(op: Op) -> str:
    """``torch.sin``, ``F.relu``, ``torch.linalg.svd``: the function an entry is written as."""
    if op.name in FUNCTIONAL:
        return f"F.{op.name}"
    if op.name in LINALG:
        return f"torch.linalg.{op.name}"
    return f"torch.{op.name}"
