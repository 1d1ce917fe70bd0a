# Source: https://github.com/pytorch/tutorials/blob/1532c0de875b79f541371438d8d1d08be18f87de/beginner_source/basics/autogradqs_tutorial.py, sections "Tensors, Functions and Computational graph" and "Computing Gradients"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch

torch.manual_seed(0)
x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")

loss.backward()
print(w.grad)
print(b.grad)
