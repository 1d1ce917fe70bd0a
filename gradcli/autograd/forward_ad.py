"""``torch.autograd.forward_ad`` for gradcli's tensors (``engine/forward_ad.py``):
``import gradcli.autograd.forward_ad as fwAD``."""

from ..engine.forward_ad import (
    UnpackedDualTensor,
    dual_level,
    enter_dual_level,
    exit_dual_level,
    make_dual,
    unpack_dual,
)

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]
