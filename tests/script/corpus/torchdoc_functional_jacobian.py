# Source: pytorch/pytorch, torch/autograd/functional.py as shipped in torch 2.13.0, the docstring of torch.autograd.functional.jacobian
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `from torch.autograd.functional import jacobian` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
from torch.autograd.functional import jacobian
torch.manual_seed(0)
# xdoctest: +REQUIRES(env:TORCH_DOCTEST_AUTOGRAD)
def exp_reducer(x):
    return x.exp().sum(dim=1)
inputs = torch.rand(2, 2)
# xdoctest: +IGNORE_WANT("non-deterministic")
jacobian(exp_reducer, inputs)
jacobian(exp_reducer, inputs, create_graph=True)
def exp_adder(x, y):
    return 2 * x.exp() + 3 * y
inputs = (torch.rand(2), torch.rand(2))
jacobian(exp_adder, inputs)
def linear_model(x):
    W = torch.tensor([[2.0, -1.0], [0.0, 1.0]])
    b = torch.tensor([1.0, 0.5])
    return x @ W.T + b
x = torch.randn(4, 2, requires_grad=True)
jac = jacobian(linear_model, x, vectorize=True)
jac.shape
