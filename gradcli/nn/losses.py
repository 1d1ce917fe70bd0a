"""torch.nn's loss modules: each the engine's loss function with its settings kept
(``reduction``, a class ``weight``, ``ignore_index``, ...), printed as torch prints them
(``MSELoss()``)."""

from __future__ import annotations

from typing import Any

from ..engine.tensor import Tensor
from ..ops.library import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from .module import Module

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """torch's legacy ``size_average``/``reduce`` arguments, else ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


class _Loss(Module):
    """A loss: ``function`` of the operands, with ``reduction`` and the attributes named in
    ``settings`` as its keyword arguments."""

    reductions: tuple[str, ...] = _REDUCTIONS
    settings: tuple[str, ...] = ()

    @staticmethod
    def function(*operands: Any, **settings: Any) -> Tensor:
        raise NotImplementedError

    def forward(self, *operands: Tensor) -> Tensor:
        given = {name: getattr(self, name) for name in self.settings}
        return self.function(*operands, reduction=self.reduction, **given)

    def __init__(
        self, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        self.reduction = _reduction(size_average, reduce, reduction)
        if self.reduction not in self.reductions:
            raise ValueError(f"{self.reduction} is not a valid value for reduction")


class MSELoss(_Loss):
    """The mean (or sum) of squared differences."""

    function = staticmethod(mse_loss)


class L1Loss(_Loss):
    """The mean (or sum) of absolute differences."""

    function = staticmethod(l1_loss)


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class NLLLoss(_WeightedLoss):
    """The negative log-likelihood of the target classes, given log-probabilities."""

    function = staticmethod(nll_loss)
    settings = ("ignore_index", "weight")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax then the negative log-likelihood (targets: classes or probabilities)."""

    function = staticmethod(cross_entropy)
    settings = ("ignore_index", "label_smoothing", "weight")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities."""

    function = staticmethod(binary_cross_entropy)
    settings = ("weight",)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits (sigmoid inside, computed stably)."""

    function = staticmethod(binary_cross_entropy_with_logits)
    settings = ("weight", "pos_weight")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)


class HuberLoss(_Loss):
    """Squared below ``delta``, linear above (scaled by delta)."""

    function = staticmethod(huber_loss)
    settings = ("delta",)

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta


class SmoothL1Loss(_Loss):
    """Squared (halved, over beta) below ``beta``, absolute minus beta/2 above."""

    function = staticmethod(smooth_l1_loss)
    settings = ("beta",)

    def __init__(
        self,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence of the target from the input (log-probabilities)."""

    function = staticmethod(kl_div)
    settings = ("log_target",)

    reductions = ("none", "mean", "sum", "batchmean")

    def __init__(
        self,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target


class _MarginLoss(_Loss):
    """A loss with a ``margin`` before torch's legacy arguments."""

    def __init__(
        self,
        margin: float = 0.0,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos(x1, x2) for similar pairs (target 1), max(0, cos - margin) for others (-1)."""

    function = staticmethod(cosine_embedding_loss)
    settings = ("margin",)


class MarginRankingLoss(_MarginLoss):
    """max(0, -target * (x1 - x2) + margin)."""

    function = staticmethod(margin_ranking_loss)
    settings = ("margin",)


class HingeEmbeddingLoss(_MarginLoss):
    """x where the target is 1, max(0, margin - x) where it is -1."""

    function = staticmethod(hinge_embedding_loss)
    settings = ("margin",)

    def __init__(
        self,
        margin: float = 1.0,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * x))."""

    function = staticmethod(soft_margin_loss)


class TripletMarginLoss(_Loss):
    """max(d(anchor, positive) - d(anchor, negative) + margin, 0), d the p-norm distance."""

    function = staticmethod(triplet_margin_loss)
    settings = ("margin", "p", "eps", "swap")

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap


class PoissonNLLLoss(_Loss):
    """The negative log-likelihood of a Poisson target (input its log-rate by default)."""

    function = staticmethod(poisson_nll_loss)
    settings = ("log_input", "full", "eps")

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: Any = None,
        eps: float = 1e-8,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps


class GaussianNLLLoss(_Loss):
    """The negative log-likelihood of a Gaussian target with the given variance."""

    function = staticmethod(gaussian_nll_loss)
    settings = ("full", "eps")

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full = full
        self.eps = eps
