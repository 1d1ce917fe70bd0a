"""gradcli's autograd engine: numpy tensors with PyTorch's autograd semantics.

The Tensor, its graph and the reverse pass (``tensor.py``), forward mode, compiled passes,
the function transforms (``func.py``, ``vmap.py``, ``autograd_functional.py``), custom
functions, graph hooks, gradcheck and torch's random numbers (``torch_random/``). The
operations themselves are declared in ``gradcli/ops``, whose modules import the engine; the
library namespace that joins both is ``gradcli.ops.library`` (what ``import gradcli`` gives).
"""
