# Source: pytorch/pytorch, torch/_functorch/eager_transforms.py as shipped in torch 2.13.0, the docstring of torch.func.vjp, example 5 of 7
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
x = torch.randn([5])
def f(x, scale=4.):
  return x * scale

(_, vjpfunc) = torch.func.vjp(f, x)
vjps = vjpfunc(torch.ones_like(x))
assert torch.allclose(vjps[0], torch.full(x.shape, 4.0))
