"""``torch.autograd`` for gradcli's tensors: ``grad`` and ``backward``, and the modules
``functional`` (vjp, jvp, jacobian, hessian, vhp, hvp) and ``forward_ad`` (dual_level,
make_dual, unpack_dual), named and shaped as torch's."""

from ..engine.tensor import backward, grad
from . import forward_ad, functional

__all__ = ["backward", "forward_ad", "functional", "grad"]
