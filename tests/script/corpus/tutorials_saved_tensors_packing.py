# Source: https://github.com/pytorch/tutorials/blob/4a7bbb95617c3205bf25a5b37e262d577eb82847/intermediate_source/autograd_saved_tensors_hooks_tutorial.py, section "The concept of packing / unpacking"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - added `import torch` at the top
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
a = torch.randn(5, requires_grad=True)
b = torch.ones(5, requires_grad=True)
y = a * b

print(y.grad_fn._saved_self is a)   # True
print(y.grad_fn._saved_other is b)  # True

a = torch.randn(5, requires_grad=True)
y = torch.exp(a)
print(y.grad_fn._saved_result.equal(y))  # True
print(y.grad_fn._saved_result is y)      # False
