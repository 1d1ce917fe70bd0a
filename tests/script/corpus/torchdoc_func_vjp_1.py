# Source: pytorch/pytorch, torch/_functorch/eager_transforms.py as shipped in torch 2.13.0, the docstring of torch.func.vjp, example 1 of 7
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
x = torch.randn([5])
f = lambda x: x.sin().sum()
(_, vjpfunc) = torch.func.vjp(f, x)
grad = vjpfunc(torch.tensor(1.0))[0]
assert torch.allclose(grad, torch.func.grad(f)(x))
