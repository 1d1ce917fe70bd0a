"""``torch.nn.functional``: the engine's layer, activation and loss functions under torch's
names, and ``dropout`` drawing torch's mask from the generator in force."""

from __future__ import annotations

import numpy as np

from ..engine.tensor import Tensor
from ..engine.torch_random import in_force, samplers

# the engine's functions that torch.nn.functional has, under its names
from ..ops.library import avg_pool2d as avg_pool2d
from ..ops.library import batch_norm as _batch_norm
from ..ops.library import binary_cross_entropy as binary_cross_entropy
from ..ops.library import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from ..ops.library import celu as celu
from ..ops.library import conv1d as conv1d
from ..ops.library import conv2d as conv2d
from ..ops.library import conv_transpose2d as conv_transpose2d
from ..ops.library import cosine_embedding_loss as cosine_embedding_loss
from ..ops.library import cosine_similarity as cosine_similarity
from ..ops.library import cross_entropy as cross_entropy
from ..ops.library import elu as elu
from ..ops.library import embedding as embedding
from ..ops.library import gaussian_nll_loss as gaussian_nll_loss
from ..ops.library import gelu as gelu
from ..ops.library import glu as glu
from ..ops.library import group_norm as group_norm
from ..ops.library import hardsigmoid as hardsigmoid
from ..ops.library import hardswish as hardswish
from ..ops.library import hardtanh as hardtanh
from ..ops.library import hinge_embedding_loss as hinge_embedding_loss
from ..ops.library import huber_loss as huber_loss
from ..ops.library import kl_div as kl_div
from ..ops.library import l1_loss as l1_loss
from ..ops.library import layer_norm as layer_norm
from ..ops.library import leaky_relu as leaky_relu
from ..ops.library import linear as linear
from ..ops.library import log_softmax as log_softmax
from ..ops.library import logsigmoid as logsigmoid
from ..ops.library import margin_ranking_loss as margin_ranking_loss
from ..ops.library import max_pool2d as max_pool2d
from ..ops.library import mish as mish
from ..ops.library import mse_loss as mse_loss
from ..ops.library import nll_loss as nll_loss
from ..ops.library import normalize as normalize
from ..ops.library import one_hot as one_hot
from ..ops.library import pad as pad
from ..ops.library import pairwise_distance as pairwise_distance
from ..ops.library import poisson_nll_loss as poisson_nll_loss
from ..ops.library import relu as relu
from ..ops.library import relu6 as relu6
from ..ops.library import scaled_dot_product_attention as scaled_dot_product_attention
from ..ops.library import selu as selu
from ..ops.library import sigmoid as sigmoid
from ..ops.library import silu as silu
from ..ops.library import smooth_l1_loss as smooth_l1_loss
from ..ops.library import soft_margin_loss as soft_margin_loss
from ..ops.library import softmax as softmax
from ..ops.library import softmin as softmin
from ..ops.library import softplus as softplus
from ..ops.library import softsign as softsign
from ..ops.library import tanh as tanh
from ..ops.library import triplet_margin_loss as triplet_margin_loss
from ..ops.nn.layers import update_running_statistics

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
