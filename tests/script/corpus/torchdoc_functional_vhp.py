# Source: pytorch/pytorch, torch/autograd/functional.py as shipped in torch 2.13.0, the docstring of torch.autograd.functional.vhp
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `from torch.autograd.functional import vhp` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
from torch.autograd.functional import vhp
torch.manual_seed(0)
# xdoctest: +REQUIRES(env:TORCH_DOCTEST_AUTOGRAD)
def pow_reducer(x):
    return x.pow(3).sum()
inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
# xdoctest: +IGNORE_WANT("non-deterministic")
vhp(pow_reducer, inputs, v)
vhp(pow_reducer, inputs, v, create_graph=True)
def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()
inputs = (torch.rand(2), torch.rand(2))
v = (torch.zeros(2), torch.ones(2))
vhp(pow_adder_reducer, inputs, v)
