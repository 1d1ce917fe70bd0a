# Source: https://github.com/pytorch/tutorials/blob/4a7bbb95617c3205bf25a5b37e262d577eb82847/intermediate_source/autograd_saved_tensors_hooks_tutorial.py, section "Saved tensors", first two cells
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch

torch.manual_seed(0)
a = torch.randn(5, requires_grad=True)
b = torch.ones(5, requires_grad=True)
y = a * b

print(y.grad_fn._saved_self)
print(y.grad_fn._saved_other)

def f(x):
    return x * x

x = torch.randn(5, requires_grad=True)
y = f(f(f(x)))
