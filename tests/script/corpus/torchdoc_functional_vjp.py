# Source: pytorch/pytorch, torch/autograd/functional.py as shipped in torch 2.13.0, the docstring of torch.autograd.functional.vjp
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `from torch.autograd.functional import vjp` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
from torch.autograd.functional import vjp
torch.manual_seed(0)
# xdoctest: +REQUIRES(env:TORCH_DOCTEST_AUTOGRAD)
def exp_reducer(x):
    return x.exp().sum(dim=1)
inputs = torch.rand(4, 4)
v = torch.ones(4)
# xdoctest: +IGNORE_WANT("non-deterministic")
vjp(exp_reducer, inputs, v)
vjp(exp_reducer, inputs, v, create_graph=True)
def adder(x, y):
    return 2 * x + 3 * y
inputs = (torch.rand(2), torch.rand(2))
v = torch.ones(2)
vjp(adder, inputs, v)
