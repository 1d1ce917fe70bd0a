# Source: https://github.com/pytorch/tutorials/blob/4a7bbb95617c3205bf25a5b37e262d577eb82847/intermediate_source/autograd_saved_tensors_hooks_tutorial.py, "Returning a tuple" and the first cell of "Saving tensors to CPU" (which uses the tuple cell's pack and unpack)
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - added `import torch` at the top
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - the two cells joined
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
# Returning some tensor and a function how to unpack it
# Quite unlikely to be useful in its current form

def pack(x):
    delta = torch.randn(*x.size())
    return x - delta, lambda x: x + delta

def unpack(packed):
    x, f = packed
    return f(x)


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()

assert(torch.allclose(x.grad, 2 * x))

def pack_hook(x):
    return (x.device, x.cpu())

def unpack_hook(packed):
    device, tensor = packed
    return tensor.to(device)

x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()

torch.allclose(x.grad, (2 * x))
