# Source: pytorch/pytorch, torch/autograd/graph.py as shipped in torch 2.13.0, the docstring of torch.autograd.graph.Node.register_prehook
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
a = torch.tensor([0., 0., 0.], requires_grad=True)
b = a.clone()
assert isinstance(b.grad_fn, torch.autograd.graph.Node)
handle = b.grad_fn.register_prehook(lambda gI: (gI[0] * 2,))
b.sum().backward(retain_graph=True)
print(a.grad)
handle.remove()
a.grad = None
b.sum().backward(retain_graph=True)
print(a.grad)
