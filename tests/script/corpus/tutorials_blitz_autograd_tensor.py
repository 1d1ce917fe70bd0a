# Source: https://github.com/pytorch/tutorials/blob/05f04cb4463d507cc90f891db82d8c2685e14b53/beginner_source/blitz/autograd_tutorial.py, "Autograd: automatic differentiation" (60 Minute Blitz, older version), sections Tensor and Gradients up to `print(x.grad)`
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch

torch.manual_seed(0)
x = torch.ones(2, 2, requires_grad=True)
print(x)

y = x + 2
print(y)

print(y.grad_fn)

z = y * y * 3
out = z.mean()

print(z, out)

a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)

out.backward()

print(x.grad)
