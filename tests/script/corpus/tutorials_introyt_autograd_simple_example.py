# Source: https://github.com/pytorch/tutorials/blob/199e9530f4b72f57ba2dc222e1fd18db3efc49ed/beginner_source/introyt/autogradyt_tutorial.py, "The Fundamentals of Autograd" (Introduction to PyTorch on YouTube), section "A Simple Example"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - the matplotlib imports and the two `plt.plot(...)` calls removed (plots)
# %matplotlib inline

import torch

import math


a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
print(a)


b = torch.sin(a)


print(b)


c = 2 * b
print(c)

d = c + 1
print(d)


out = d.sum()
print(out)


print('d:')
print(d.grad_fn)
print(d.grad_fn.next_functions)
print(d.grad_fn.next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions)
print('\nc:')
print(c.grad_fn)
print('\nb:')
print(b.grad_fn)
print('\na:')
print(a.grad_fn)


out.backward()
print(a.grad)
