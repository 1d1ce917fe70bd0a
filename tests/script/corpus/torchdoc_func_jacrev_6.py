# Source: pytorch/pytorch, torch/_functorch/eager_transforms.py as shipped in torch 2.13.0, the docstring of torch.func.jacrev, example 6 of 8
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
from torch.func import jacrev
def f(x, y):
  return x + y ** 2

x, y = torch.randn(5), torch.randn(5)
jacobian = jacrev(f, argnums=(0, 1))(x, y)
expectedX = torch.diag(torch.ones_like(x))
expectedY = torch.diag(2 * y)
assert torch.allclose(jacobian[0], expectedX)
assert torch.allclose(jacobian[1], expectedY)
