# Source: pytorch/pytorch, torch/autograd/graph.py as shipped in torch 2.13.0, the docstring of torch.autograd.graph.register_multi_grad_hook
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch

torch.manual_seed(0)
a = torch.rand(2, 3, requires_grad=True)
b = torch.rand(2, 3, requires_grad=True)
c = a * b
d = a * b

def fn(grads):
    print([g is not None for g in grads])

torch.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)

c.sum().backward(retain_graph=True)
c.sum().backward(inputs=(a,), retain_graph=True)
