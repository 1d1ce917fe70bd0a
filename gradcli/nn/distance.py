"""torch.nn's distance modules: ``PairwiseDistance`` (the p-norm of x1 - x2 + eps) and
``CosineSimilarity`` (along ``dim``)."""

from __future__ import annotations

from ..engine.tensor import Tensor
from ..ops.library import cosine_similarity, pairwise_distance
from .module import Module


class PairwiseDistance(Module):
    """The p-norm distance of rows: ``||x1 - x2 + eps||_p`` along the last dimension."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)  # type: ignore[no-any-return]


class CosineSimilarity(Module):
    """The cosine of the angle between x1 and x2 along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)  # type: ignore[no-any-return]
