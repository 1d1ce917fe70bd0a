# Source: https://github.com/pytorch/tutorials/blob/199e9530f4b72f57ba2dc222e1fd18db3efc49ed/beginner_source/introyt/autogradyt_tutorial.py, "The Fundamentals of Autograd" (Introduction to PyTorch on YouTube), section "Advanced Topic: More Autograd Detail and the High-Level API"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - only the tutorial's `import torch` kept (matplotlib and math serve the other sections)
#   - added `torch.manual_seed(0)` after the import, before the random draws
import torch

torch.manual_seed(0)

x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)


v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float) # stand-in for gradients
y.backward(v)

print(x.grad)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y

inputs = (torch.rand(1), torch.rand(1)) # arguments for the function
print(inputs)
torch.autograd.functional.jacobian(exp_adder, inputs)


inputs = (torch.rand(3), torch.rand(3)) # arguments for the function
print(inputs)
torch.autograd.functional.jacobian(exp_adder, inputs)


def do_some_doubling(x):
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    return y

inputs = torch.randn(3)
my_gradients = torch.tensor([0.1, 1.0, 0.0001])
torch.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients)
