"""torch.nn's loss modules: each the engine's loss function with its settings kept
(``reduction``, a class ``weight``, ``ignore_index``, ...), printed as torch prints them
(``MSELoss()``)."""

from __future__ import annotations

from typing import Any

from ..engine import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ..engine.tensor import Tensor
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
    reductions: tuple[str, ...] = _REDUCTIONS

    def __init__(
        self, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        self.reduction = _reduction(size_average, reduce, reduction)
        if self.reduction not in self.reductions:
            raise ValueError(f"{self.reduction} is not a valid value for reduction")


class MSELoss(_Loss):
    """The mean (or sum) of squared differences."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return mse_loss(input, target, reduction=self.reduction)  # type: ignore[no-any-return]


class L1Loss(_Loss):
    """The mean (or sum) of absolute differences."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(input, target, reduction=self.reduction)  # type: ignore[no-any-return]


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

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nll_loss(  # type: ignore[no-any-return]
            input,
            target,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            weight=self.weight,
        )


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax then the negative log-likelihood (targets: classes or probabilities)."""

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

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return cross_entropy(  # type: ignore[no-any-return]
            input,
            target,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            weight=self.weight,
        )


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(  # type: ignore[no-any-return]
            input, target, reduction=self.reduction, weight=self.weight
        )


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits (sigmoid inside, computed stably)."""

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

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(  # type: ignore[no-any-return]
            input,
            target,
            reduction=self.reduction,
            weight=self.weight,
            pos_weight=self.pos_weight,
        )


class HuberLoss(_Loss):
    """Squared below ``delta``, linear above (scaled by delta)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(  # type: ignore[no-any-return]
            input, target, reduction=self.reduction, delta=self.delta
        )


class SmoothL1Loss(_Loss):
    """Squared (halved, over beta) below ``beta``, absolute minus beta/2 above."""

    def __init__(
        self,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(  # type: ignore[no-any-return]
            input, target, reduction=self.reduction, beta=self.beta
        )


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence of the target from the input (log-probabilities)."""

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

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(  # type: ignore[no-any-return]
            input, target, reduction=self.reduction, log_target=self.log_target
        )
