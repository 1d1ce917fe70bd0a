"""``torch.nn.functional``: the engine's layer, activation and loss functions under torch's
names, and ``dropout`` drawing torch's mask from the generator in force."""

from __future__ import annotations

import numpy as np

# the engine's functions that torch.nn.functional has, under its names
from ..engine import avg_pool2d as avg_pool2d
from ..engine import batch_norm as _batch_norm
from ..engine import binary_cross_entropy as binary_cross_entropy
from ..engine import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from ..engine import celu as celu
from ..engine import conv1d as conv1d
from ..engine import conv2d as conv2d
from ..engine import conv_transpose2d as conv_transpose2d
from ..engine import cosine_embedding_loss as cosine_embedding_loss
from ..engine import cosine_similarity as cosine_similarity
from ..engine import cross_entropy as cross_entropy
from ..engine import elu as elu
from ..engine import embedding as embedding
from ..engine import gaussian_nll_loss as gaussian_nll_loss
from ..engine import gelu as gelu
from ..engine import glu as glu
from ..engine import group_norm as group_norm
from ..engine import hardsigmoid as hardsigmoid
from ..engine import hardswish as hardswish
from ..engine import hardtanh as hardtanh
from ..engine import hinge_embedding_loss as hinge_embedding_loss
from ..engine import huber_loss as huber_loss
from ..engine import kl_div as kl_div
from ..engine import l1_loss as l1_loss
from ..engine import layer_norm as layer_norm
from ..engine import leaky_relu as leaky_relu
from ..engine import linear as linear
from ..engine import log_softmax as log_softmax
from ..engine import logsigmoid as logsigmoid
from ..engine import margin_ranking_loss as margin_ranking_loss
from ..engine import max_pool2d as max_pool2d
from ..engine import mish as mish
from ..engine import mse_loss as mse_loss
from ..engine import nll_loss as nll_loss
from ..engine import normalize as normalize
from ..engine import one_hot as one_hot
from ..engine import pad as pad
from ..engine import pairwise_distance as pairwise_distance
from ..engine import poisson_nll_loss as poisson_nll_loss
from ..engine import relu as relu
from ..engine import relu6 as relu6
from ..engine import scaled_dot_product_attention as scaled_dot_product_attention
from ..engine import selu as selu
from ..engine import sigmoid as sigmoid
from ..engine import silu as silu
from ..engine import smooth_l1_loss as smooth_l1_loss
from ..engine import soft_margin_loss as soft_margin_loss
from ..engine import softmax as softmax
from ..engine import softmin as softmin
from ..engine import softplus as softplus
from ..engine import softsign as softsign
from ..engine import tanh as tanh
from ..engine import triplet_margin_loss as triplet_margin_loss
from ..engine.layers import update_running_statistics
from ..engine.tensor import Tensor
from ..engine.torch_random import in_force, samplers

_PLUMBING = {"annotations", "np", "Tensor", "in_force", "samplers", "update_running_statistics"}


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """torch's ``F.dropout``: in training, torch's mask from the generator in force."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.dtype not in (np.float32, np.float64):
        return input
    return input * Tensor(samplers.dropout_mask(in_force(), input.shape, float(p), input.dtype))


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """torch's ``F.batch_norm``: the engine's, and in training the running statistics given
    updated in place, as torch does."""
    out = _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if training and running_mean is not None and running_var is not None:
        update_running_statistics(input, running_mean, running_var, momentum)
    return out


# every public name: the engine's functions above, dropout and batch_norm
__all__ = sorted(name for name in dir() if not name.startswith("_") and name not in _PLUMBING)
