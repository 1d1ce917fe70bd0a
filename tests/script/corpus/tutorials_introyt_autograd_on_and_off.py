# Source: https://github.com/pytorch/tutorials/blob/199e9530f4b72f57ba2dc222e1fd18db3efc49ed/beginner_source/introyt/autogradyt_tutorial.py, "The Fundamentals of Autograd" (Introduction to PyTorch on YouTube), section "Turning Autograd Off and On" (to the end of its `detach()` cell)
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - only the tutorial's `import torch` kept (matplotlib and math serve the other sections)
#   - added `torch.manual_seed(0)` after the import, before the random draws
import torch

torch.manual_seed(0)

a = torch.ones(2, 3, requires_grad=True)
print(a)

b1 = 2 * a
print(b1)

a.requires_grad = False
b2 = 2 * a
print(b2)


a = torch.ones(2, 3, requires_grad=True) * 2
b = torch.ones(2, 3, requires_grad=True) * 3

c1 = a + b
print(c1)

with torch.no_grad():
    c2 = a + b

print(c2)

c3 = a * b
print(c3)


def add_tensors1(x, y):
    return x + y

@torch.no_grad()
def add_tensors2(x, y):
    return x + y


a = torch.ones(2, 3, requires_grad=True) * 2
b = torch.ones(2, 3, requires_grad=True) * 3

c1 = add_tensors1(a, b)
print(c1)

c2 = add_tensors2(a, b)
print(c2)


x = torch.rand(5, requires_grad=True)
y = x.detach()

print(x)
print(y)
