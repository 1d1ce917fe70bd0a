# Source: https://github.com/pytorch/tutorials/blob/05f04cb4463d507cc90f891db82d8c2685e14b53/beginner_source/blitz/autograd_tutorial.py, "Autograd: automatic differentiation" (60 Minute Blitz, older version), from "You can do many crazy things with autograd!" to the end
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - added `import torch` at the top
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)

print(x.grad)

print(x.requires_grad)
print((x ** 2).requires_grad)

with torch.no_grad():
	print((x ** 2).requires_grad)
