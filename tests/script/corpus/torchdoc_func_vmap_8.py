# Source: pytorch/pytorch, torch/_functorch/apis.py as shipped in torch 2.13.0, the docstring of torch.func.vmap, example 8 of 9
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
f = lambda x: x**2
x = torch.randn(2, 5)
batched_pow = torch.vmap(f, out_dims=1)
batched_pow(x)  # [5, 2]
