# Source: https://github.com/pytorch/tutorials/blob/4a7bbb95617c3205bf25a5b37e262d577eb82847/intermediate_source/autograd_saved_tensors_hooks_tutorial.py, section "Some unconventional examples", "Returning and int"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - added `import torch` at the top
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
# Returning the index of a Python list
# Relatively harmless but with debatable usefulness

storage = []

def pack(x):
    storage.append(x)
    return len(storage) - 1

def unpack(x):
    return storage[x]

x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()

assert(x.grad.equal(2 * x))
