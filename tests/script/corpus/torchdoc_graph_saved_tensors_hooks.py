# Source: pytorch/pytorch, torch/autograd/graph.py as shipped in torch 2.13.0, the docstring of torch.autograd.graph.saved_tensors_hooks
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
# xdoctest: +REQUIRES(env:TORCH_DOCTEST_AUTOGRAD)
def pack_hook(x):
    print("Packing", x)
    return x.detach()

def unpack_hook(x):
    print("Unpacking", x)
    return x

a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
y.sum().backward()
