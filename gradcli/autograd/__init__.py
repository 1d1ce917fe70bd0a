"""``torch.autograd`` for gradcli's tensors: ``grad``, ``backward``, ``gradcheck`` and
``gradgradcheck``, custom functions (``Function``, ``once_differentiable``), and the modules
``functional`` (vjp, jvp, jacobian, hessian, vhp, hvp) and ``forward_ad`` (dual_level,
make_dual, unpack_dual), named and shaped as torch's."""

from ..base.engine_errors import GradcheckError
from ..engine.custom_function import Function, once_differentiable
from ..engine.gradcheck import gradcheck, gradgradcheck
from ..engine.tensor import backward, grad
from . import forward_ad, functional

__all__ = [
    "Function",
    "GradcheckError",
    "backward",
    "forward_ad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "once_differentiable",
]
