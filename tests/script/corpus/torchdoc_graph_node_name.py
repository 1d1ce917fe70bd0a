# Source: pytorch/pytorch, torch/autograd/graph.py as shipped in torch 2.13.0, the docstring of torch.autograd.graph.Node.name
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
a = torch.tensor([0., 0., 0.], requires_grad=True)
b = a.clone()
assert isinstance(b.grad_fn, torch.autograd.graph.Node)
print(b.grad_fn.name())
