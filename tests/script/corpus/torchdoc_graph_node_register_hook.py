# Source: pytorch/pytorch, torch/autograd/graph.py as shipped in torch 2.13.0, the docstring of torch.autograd.graph.Node.register_hook
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
a = torch.tensor([0., 0., 0.], requires_grad=True)
b = a.clone()
assert isinstance(b.grad_fn, torch.autograd.graph.Node)
handle = b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))
b.sum().backward(retain_graph=True)
print(a.grad)
handle.remove() # Removes the hook
a.grad = None
b.sum().backward(retain_graph=True)
print(a.grad)
