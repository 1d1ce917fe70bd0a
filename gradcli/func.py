"""``torch.func`` for gradcli's tensors: ``from gradcli.func import grad, jacrev, vmap``.

The transforms take any Python function of engine tensors and nest as torch's do
(``jacrev(jacrev(f))``, ``vmap(grad(f))``); they live in the engine (``engine/func.py``,
``engine/vmap.py``); ``functional_call`` calls a module with other parameters
(``nn/stateless.py``).
"""

from .engine.func import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from .engine.vmap import vmap
from .nn.stateless import functional_call

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "vjp",
    "vmap",
]
