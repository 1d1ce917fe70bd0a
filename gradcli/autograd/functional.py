"""``torch.autograd.functional`` for gradcli's tensors (``engine/autograd_functional.py``):
``from gradcli.autograd.functional import jacobian``."""

from ..engine.autograd_functional import hessian, hvp, jacobian, jvp, vhp, vjp

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
